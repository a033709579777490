"""The serving command's parallelism flags against the GPUs its pods get (omerender's own check; OME checks none).

SGLang (``python/sglang/srt/server_args.py``) and vLLM (``vllm/engine/arg_utils.py``) take the tensor-, pipeline- and
data-parallel sizes under these spellings: SGLang ``--tensor-parallel-size``/``--tp-size``,
``--pipeline-parallel-size``/``--pp-size``, ``--data-parallel-size``/``--dp-size`` (and ``--tp``, ``--pp``, ``--dp``,
which argparse takes as abbreviations of them, as SGLang's docs write them); vLLM the same long names and ``-tp``,
``-pp``, ``-dp``. Both parse with argparse: ``--flag N`` or ``--flag=N``, the last one given wins.

Each server uses tensor × pipeline GPUs per data-parallel replica, and each replica its own GPUs, across all the
nodes of a multi-node group; SGLang's ``--enable-dp-attention`` runs its data-parallel attention inside the
tensor-parallel GPUs, so ``--dp-size`` adds none. More than the pod (or the LeaderWorkerSet's pods together) holds and
the server fails at start: an error. Fewer: GPUs sit idle, a warning.

The flags are read from the runner as the pod runs it: after placeholders are filled, with ``$(VAR)`` expanded as the
kubelet expands it (:mod:`omerender.kube.envexpand`), and a shell script (``sh -c "..."``) split into words with its
``$VAR``/``${VAR}`` of an ``env`` value known here (not ``valueFrom``) expanded. A size that is still not a number is
not judged.
"""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from omerender.errors import OmeError, Report
from omerender.kube.envexpand import Env, container_env, expand_argument

TP = ("--tensor-parallel-size", "--tp-size", "--tp", "-tp")
PP = ("--pipeline-parallel-size", "--pp-size", "--pp", "-pp")
DP = ("--data-parallel-size", "--dp-size", "--dp", "-dp")
DP_ATTENTION = "--enable-dp-attention"
SHELLS = frozenset({"sh", "bash", "dash", "ash", "zsh", "ksh"})
_SHELL_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")
_SPACE = re.compile(r"\s")
_SHELL_QUOTING = re.compile(r"[\"'\\]")
MAX_SIZE_DIGITS = 6   # a size of a million GPUs is already no count a pod can hold


@dataclass(frozen=True)
class Flag:
    written: str      # as the command has it: "--tp-size 8"
    size: int | None  # None when not a number


def check(path: str, container: dict, gpus: int, pods: int, report: Report, cause: str = "") -> None:
    """``container`` (the runner, placeholders filled) of ``path`` (``engine``, ``decoder.leader``...) gets ``gpus``
    per pod in a group of ``pods`` pods (``cause``: why, when an accelerator class changed the runtime's count).
    An OmeError when its flags need more GPUs, a warning when fewer."""
    if gpus <= 0:
        return   # no accelerator counted: the cluster's device may be another, nothing to compare
    words = container_words(container)
    found = [(_last(words, aliases), dimension) for aliases, dimension in ((TP, "tp"), (PP, "pp"), (DP, "dp"))]
    flags = {dimension: flag for flag, dimension in found if flag is not None}
    if not flags or any(flag.size is None for flag in flags.values()):
        return
    shared = "dp" in flags and DP_ATTENTION in words
    need = 1
    for dimension, flag in flags.items():
        need *= 1 if dimension == "dp" and shared else flag.size
    has = gpus * pods
    if need == has:
        return
    named = " × ".join(flag.written for dimension, flag in flags.items() if not (dimension == "dp" and shared))
    if shared:
        named += f" ({flags['dp'].written} with {DP_ATTENTION} shares the tensor-parallel GPUs)"
    there = (f"the LeaderWorkerSet's {pods} pods hold {has} ({gpus} per pod × {pods} pods)" if pods > 1
             else f"the pod holds {has}")
    who = f"{path} runner {container.get('name')}"
    there += f" ({cause})" if cause else ""
    if need > has:
        raise OmeError(f"{who}: {named} need {need} GPUs and {there}: the server fails at start; lower the flags to "
                       f"{has} GPUs in all, or give the pods more GPUs", field=f"spec.{path}.runner")
    report.warn(f"{who}: {named} use {need} GPUs and {there}: {has - need} sit idle; raise the flags to {has} GPUs in "
                f"all, or give the pods fewer GPUs", field=f"spec.{path}.runner", code="parallelism-gpu-mismatch")


def container_words(container: dict) -> list[str]:
    """The words of ``command`` then ``args`` as the server's argv sees them (see the module)."""
    env = container_env(container)
    items = [str(item) for part in ("command", "args")
             for item in (container.get(part) if isinstance(container.get(part), list) else [])]
    shell = bool(items) and items[0].rsplit("/", 1)[-1] in SHELLS
    words: list[str] = []
    for index, item in enumerate(items):
        if "$" in item:
            item = expand_argument(item, env)
        if shell and index > 0 and items[index - 1] == "-c":
            words.extend(_split(_shell_expand(item, env)))
        elif _SPACE.search(item):
            words.extend(_split(item))
        else:
            words.append(item)   # one argv element, one word (most items)
    return words


def _shell_expand(text: str, env: Env) -> str:
    def value(match) -> str:
        found = env.get(match.group(1) or match.group(2))
        return match.group() if found is None else found
    return _SHELL_VAR.sub(value, text) if "$" in text else text


def _split(text: str) -> list[str]:
    text = text.replace("\\\n", " ")
    if not _SHELL_QUOTING.search(text):
        return text.split() or [text]   # no quotes or escapes: the shell's words are the whitespace's
    try:
        return shlex.split(text)
    except ValueError:   # an unbalanced quote: the words as whitespace separates them
        return text.split()


def _last(words: list[str], aliases: tuple[str, ...]) -> Flag | None:
    """The last of ``aliases`` in ``words``, ``--flag N`` or ``--flag=N`` (argparse: the last one wins)."""
    found = None
    for index, word in enumerate(words):
        flag, eq, value = word.partition("=")
        if flag not in aliases:
            continue
        if not eq:
            value = words[index + 1] if index + 1 < len(words) else ""
        written = f"{flag}={value}" if eq else f"{flag} {value}".rstrip()
        number = value.isascii() and value.isdigit() and len(value) <= MAX_SIZE_DIGITS
        found = Flag(written, int(value) if number else None)
    return found
