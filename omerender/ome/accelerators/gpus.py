"""A runner's GPU count, and a warning when it asks for more GPUs than its accelerator class has (omerender's own
check; OME checks none). It reads the runner as rendered (after class resources and the class's argument
overrides), so it judges what the pod will run with; the parallelism flags are checked against the same count by
:mod:`omerender.ome.workloads.parallel_flags`.
"""
from __future__ import annotations

import math
from functools import lru_cache

from omerender.errors import Report
from omerender.kube.quantities import parse_quantity

GPU = "nvidia.com/gpu"


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
    return _count(values[name], f"resources.{part}.{name}")


def _count(value, path: str, owner=None) -> int:
    """The quantity ``value`` (at ``path`` of ``owner``, for its error) rounded up."""
    if isinstance(value, (str, int)) and not isinstance(value, bool) and len(_COUNTS) < MAX_COUNTS:
        count = _COUNTS.get(value)
        if count is None:   # a valid quantity is kept: a fleet's runners and classes repeat a few ("8", 4)
            count = _COUNTS[value] = math.ceil(parse_quantity(value, path, owner))
        return count
    return math.ceil(parse_quantity(value, path, owner))


MAX_COUNTS = 1024
_COUNTS: dict = {}   # a quantity as written (a str or an int, "8" and 8 apart) -> its count, rounded up


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
            return 1 if quantity is None else _count(quantity, "spec.resources[].quantity", cls)
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
