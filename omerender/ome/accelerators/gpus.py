"""Warnings on a runner's GPU count: more GPUs than its accelerator class has, and a tensor-parallel
flag that disagrees with the GPUs the runner gets (omerender's own checks; OME checks neither).

Both read the runner as rendered (after class resources and the class's argument overrides), so they
judge what the pod will run with.
"""
from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

from omerender.errors import Report
from omerender.kube.quantities import parse_quantity
from . import effects

GPU = "nvidia.com/gpu"
DP_ALIASES = ("--dp-size", "--dp", "--data-parallel-size")


def runner_gpus(runner: dict, names: tuple[str, ...] = (GPU,)) -> int:
    """The runner's accelerator count (render.md §7.1): the first of ``names`` (the cluster's acceleratorResources)
    it has, its limit else its request, rounded up; 0 when it has none (OME v1.3 GetGpuCountFromContainer)."""
    resources = runner.get("resources") or {}
    limits, requests = resources.get("limits") or {}, resources.get("requests") or {}
    # the runner names a few resources, the ConfigMap may list thousands: look its own up in their order
    order = _order(names)
    present = [name for name in (*limits, *requests)
               if name in order and (limits.get(name) is not None or requests.get(name) is not None)]
    if not present:
        return 0
    name = min(present, key=order.__getitem__)
    part, values = ("limits", limits) if limits.get(name) is not None else ("requests", requests)
    return math.ceil(parse_quantity(values[name], f"resources.{part}.{name}"))


@lru_cache(maxsize=16)
def _order(names: tuple[str, ...]) -> dict[str, int]:
    """Each name's place in ``names`` (the first place of a repeated one)."""
    order: dict[str, int] = {}
    for i, name in enumerate(names):
        order.setdefault(name, i)
    return order


def class_gpus(cls) -> int | None:
    """The class's ``nvidia.com/gpu`` resource quantity (default 1), None when the class has none."""
    for entry in (cls.spec.get("resources") or []) if cls is not None else []:
        if isinstance(entry, dict) and entry.get("name") == GPU:
            quantity = entry.get("quantity")
            return math.ceil(Fraction(1) if quantity is None else
                             parse_quantity(quantity, "spec.resources[].quantity", cls))
    return None


def check_runner(path: str, runner: dict, cls, pods: int, report: Report) -> None:
    """Warn about ``runner`` of ``path`` (``engine``, ``decoder.leader``...), whose pods form ``pods`` nodes."""
    gpus = runner_gpus(runner)
    name = runner.get("name")
    limit = class_gpus(cls)
    if limit is not None and gpus > limit:
        report.warn(f"{path} runner {name}: asks for {gpus} {GPU}, more than the {limit} of accelerator class "
                    f"{cls.name}; no node of that class can run the pod (lower the runner's resources or choose a "
                    "larger class)", code="gpus-exceed-class")
    if gpus > 0:
        _check_parallel_flags(path, name, runner, gpus, pods, report)


def _check_parallel_flags(path: str, name, runner: dict, gpus: int, pods: int, report: Report) -> None:
    words = _words(runner)
    tp = _flag_value(words, effects.TP_ALIASES)
    # A data-parallel flag means different things to SGLang (inside TP with DP attention) and vLLM (times TP).
    if tp is None or _flag_value(words, DP_ALIASES) is not None:
        return
    pp = _flag_value(words, effects.PP_ALIASES)
    (tp_flag, tp_size), pp_size = tp, (pp[1] if pp is not None else 1)
    if tp_size is None or pp_size is None or tp_size * pp_size == gpus * pods:
        return
    asked = f"{tp_flag} {tp_size}" + (f" × {pp[0]} {pp_size}" if pp is not None else "")
    has = f"{gpus} {GPU} per pod × {pods} pods" if pods > 1 else f"{gpus} {GPU}"
    report.warn(f"{path} runner {name}: {asked} does not match the {gpus * pods} GPUs it gets ({has}); set the flag to "
                f"{gpus * pods // pp_size if (gpus * pods) % pp_size == 0 else gpus * pods} or change the GPU count",
                code="parallelism-gpu-mismatch")


def _words(runner: dict) -> list[str]:
    """Every whitespace-separated word of ``command`` and ``args`` (multi-line strings with ``\\`` too)."""
    words: list[str] = []
    for part in ("command", "args"):
        items = runner.get(part)
        for item in items if isinstance(items, list) else []:
            words.extend(word for word in str(item).replace("\\\n", " ").split() if word != "\\")
    return words


def _flag_value(words: list[str], aliases: tuple[str, ...]) -> tuple[str, int | None] | None:
    """(flag, value) of the last alias found in ``--flag N`` or ``--flag=N`` form; value None when not a number
    (``$(PARALLELISM_SIZE)``, say); None when no alias is present."""
    found = None
    for index, word in enumerate(words):
        flag, eq, value = word.partition("=")
        if flag not in aliases:
            continue
        if not eq:
            value = words[index + 1] if index + 1 < len(words) else ""
        found = (flag, int(value) if value.isascii() and value.isdigit() and len(value) < 7 else None)
    return found
