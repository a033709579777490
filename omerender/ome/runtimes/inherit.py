"""Runtime inheritance through ``ome.io/inherit-from`` (inheritance-and-pinning.md Part A).

:class:`Chains` resolves each runtime's chain (§2, §3) and folds the specs from the root
down with the shared merge engine (§4). Chain errors are :class:`OmeError` texts without
an object prefix: :func:`validate_runtime_chain` locates them on the runtime, and the
selection module wraps them into E-I6 for an InferenceService.
"""
from __future__ import annotations

from typing import Callable

from omerender.errors import OmeError, Report
from omerender.yamlio.data import copy_data
from ..load import Inputs, Obj
from .merge import overlay
from .presets import preset_spec

INHERIT_FROM = "ome.io/inherit-from"
RUNTIME_PROFILE = "ome.io/runtime-profile"
MAX_DEPTH = 5
# validateProfileMarker (OME v1.3 webhook) compares with != "true" (ome.flags warns of other values).
FLAGS = {RUNTIME_PROFILE: "this runtime is no profile to OME, which does not require spec.disabled: true of it"}
PROFILE_TEXT = 'runtimes carrying ome.io/runtime-profile="true" must also set spec.disabled: true'
INHERIT_FIELD = f"metadata.annotations.{INHERIT_FROM}"


def rt_ref(rt: Obj) -> str:
    """``ClusterServingRuntime/<name>`` or ``ServingRuntime/<namespace>/<name>`` (§0)."""
    if rt.kind == "ClusterServingRuntime":
        return f"ClusterServingRuntime/{rt.name}"
    return f"ServingRuntime/{rt.namespace}/{rt.name}"


def parent_name(rt: Obj) -> str:
    """The ``ome.io/inherit-from`` value; empty means no parent (§1)."""
    annotations = rt.metadata.get("annotations") or {}
    return annotations.get(INHERIT_FROM) or ""


def is_profile(rt: Obj) -> bool:
    annotations = rt.metadata.get("annotations") or {}
    return annotations.get(RUNTIME_PROFILE) == "true"


def go_list(names: list[str]) -> str:
    return "[" + " ".join(names) + "]"


class ChainError(OmeError):
    """A broken chain: the text of E-I1/E-I2/E-I3, and the runtimes reached before the break."""

    def __init__(self, text: str, reached: list[Obj]):
        super().__init__(text, field=INHERIT_FIELD)
        self.reached = reached


class Chains:
    """Chains and merged specs of one :class:`Inputs`, computed once per runtime.

    ``own_spec(rt)`` gives a runtime's own spec after admission-time filling (such as the
    ``ome.io/engine: sglang-pd`` preset), applied per runtime before merging (§1); by
    default the spec as written.
    """

    def __init__(self, inputs: Inputs, report: Report,
                 own_spec: Callable[[Obj], dict] | None = None):
        self.inputs = inputs
        self.report = report
        self.own_spec = own_spec or preset_spec
        self._chains: dict[int, list[Obj] | ChainError] = {}
        self._merged: dict[int, dict] = {}
        # lock.py: hash and size of a runtime's rendering spec, and each selection shared by InferenceServices
        self.spec_facts: dict[tuple, object] = {}

    def chain(self, runtime: Obj) -> list[Obj]:
        """The chain leaf (``runtime``) first. Raises :class:`ChainError` (E-I1 to E-I3)."""
        key = id(runtime)
        if key not in self._chains:
            try:
                self._chains[key] = self._walk(runtime)
            except ChainError as err:
                self._chains[key] = err
        found = self._chains[key]
        if isinstance(found, ChainError):
            raise ChainError(found.text, list(found.reached))
        return list(found)

    def reached(self, runtime: Obj) -> list[Obj]:
        """The chain, leaf first, as far as it resolves (the whole chain when it is intact)."""
        try:
            return self.chain(runtime)
        except ChainError as err:
            return err.reached

    def merged_spec(self, runtime: Obj) -> dict:
        """The root-to-leaf fold of the chain's specs (§4), a fresh copy. Raises ChainError."""
        return copy_data(self.merged_view(runtime))

    def merged_view(self, runtime: Obj) -> dict:
        """:meth:`merged_spec` itself, shared: for readers only (a runtime without a parent: its own spec)."""
        key = id(runtime)
        if key not in self._merged:
            chain = self.chain(runtime)
            merged = self.own_spec(chain[-1])  # overlay copies what it keeps; readers only read the rest
            for rt in reversed(chain[:-1]):
                merged = overlay(merged, self.own_spec(rt), keep_new_empty=False)
            self._merged[key] = merged
        return self._merged[key]

    def parent_of(self, head: Obj, rt: Obj, name: str) -> Obj | None:
        """Where a parent name in ``head``'s chain resolves (§2): the head's kind decides."""
        if head.kind == "ClusterServingRuntime":
            return self.inputs.cluster_runtimes.get(name)
        namespaced = self.inputs.runtimes.get((head.namespace, name))
        return namespaced if namespaced is not None else self.inputs.cluster_runtimes.get(name)

    def _walk(self, head: Obj) -> list[Obj]:
        chain = [head]
        current = head
        while parent := parent_name(current):
            names = [rt.name for rt in chain]
            found = self.parent_of(head, current, parent)
            if found is None:
                raise ChainError(f'inherit-from parent "{parent}" not found (chain so far: {go_list(names)})', chain)
            if parent in names:
                raise ChainError(f"inheritance cycle detected: {go_list(names + [parent])}", chain)
            if len(chain) == MAX_DEPTH:
                raise ChainError(f"inheritance chain exceeds max depth {MAX_DEPTH}: {go_list(names + [parent])}",
                                 chain)
            self._warn_shadowing(head, current, found)
            chain.append(found)
            current = found
        return chain

    def _warn_shadowing(self, head: Obj, rt: Obj, parent: Obj) -> None:
        """W-I1: a cluster ancestor sees another parent in a ServingRuntime head's chain."""
        if rt.kind != "ClusterServingRuntime" or parent.kind != "ServingRuntime":
            return
        if parent.name not in self.inputs.cluster_runtimes:
            return
        self.report.warn(f"in the chain of {rt_ref(head)}, {rt_ref(rt)} inherits from {rt_ref(parent)}, "
                         f"which shadows ClusterServingRuntime/{parent.name}", head.ref, file=head.file,
                         code="inherit-shadowed-parent")


def validate_runtime_chain(rt: Obj, chains: Chains) -> None:
    """api.md §7.1 rows 1-4 with ``rt`` as head: E-I1/E-I2/E-I3, then E-I4, located on ``rt``."""
    try:
        chains.chain(rt)
    except ChainError as err:
        raise OmeError(err.text, rt.ref, rt.file, INHERIT_FIELD) from None
    if is_profile(rt) and chains.own_spec(rt).get("disabled") is not True:
        raise rt.error(PROFILE_TEXT, "spec.disabled")


def check_runner_names(rt: Obj, spec: dict | None = None) -> None:
    """E-I5: every runner a runtime declares has a ``name`` (schema, §4 "Runner names").

    ``spec`` is the runtime's own spec as admission stores it (after its ``ome.io/engine`` preset).
    """
    spec = rt.spec if spec is None else spec
    for component in ("engineConfig", "decoderConfig", "routerConfig"):
        config = spec.get(component)
        if not isinstance(config, dict):
            continue
        for path, holder in ((f"spec.{component}", config),
                             (f"spec.{component}.leader", config.get("leader")),
                             (f"spec.{component}.worker", config.get("worker"))):
            runner = holder.get("runner") if isinstance(holder, dict) else None
            if isinstance(runner, dict) and not runner.get("name"):
                raise rt.error(f"{path}.runner.name: Required value", f"{path}.runner.name")


def warn_auto_selected(rt: Obj, report: Report) -> None:
    """W-I2: an auto-selected runtime is rendered from its own spec, without its parent (§5)."""
    parent = parent_name(rt)
    if parent:
        report.warn(f"runtime {rt_ref(rt)} was auto-selected, so it is rendered from its own spec; its "
                    f'ome.io/inherit-from parent "{parent}" is not applied', code="auto-selected-inherit-ignored")
