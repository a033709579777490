"""What selection reads of a runtime, and the per-Inputs index of candidate runtimes."""
from __future__ import annotations

import weakref
from dataclasses import dataclass, field

from ..load import Inputs, Obj
from .facts import RuntimeFacts, _runtime_facts


@dataclass
class _Index:
    namespaced: dict[str, list[RuntimeFacts]]     # namespace -> ServingRuntimes, by name
    cluster: list[RuntimeFacts]                   # ClusterServingRuntimes, by name
    by_key: dict[tuple, list[RuntimeFacts]]       # (format, framework, arch, quant) -> runtimes able to qualify
    by_obj: dict[int, RuntimeFacts]
    fingerprint: tuple
    listed_classes: frozenset = frozenset()           # every class some runtime lists
    evaluations: dict = field(default_factory=dict)   # (namespace, id(model), Request) -> full Evaluation
    selections: dict = field(default_factory=dict)    # (namespace, id(model), Request) -> Evaluation of candidates
    verdicts: dict = field(default_factory=dict)      # (id(cluster runtime facts), id(model), Request) -> Verdict
    judged: int = 0                                   # runtimes judged against a model (MAX_SELECTION_JUDGEMENTS)

    def facts_of(self, obj: Obj) -> RuntimeFacts:
        return self.by_obj.get(id(obj)) or _runtime_facts(obj, obj.spec)


_INDEXES: dict[int, tuple[weakref.ref, _Index]] = {}


def _fingerprint(inputs: Inputs) -> tuple:
    """Cheap enough to check on every call: a runtime added or removed (or new tables) rebuilds the index."""
    return (id(inputs.runtimes), len(inputs.runtimes), id(inputs.cluster_runtimes), len(inputs.cluster_runtimes))


def _index(inputs: Inputs) -> _Index:
    """The candidates of ``inputs``, built once per Inputs object (and rebuilt if its runtimes change)."""
    cached = _INDEXES.get(id(inputs))
    fingerprint = _fingerprint(inputs)
    if cached is not None and cached[0]() is inputs and cached[1].fingerprint == fingerprint:
        return cached[1]
    index = _build_index(inputs, fingerprint)
    key = id(inputs)
    _INDEXES[key] = (weakref.ref(inputs, lambda _ref: _INDEXES.pop(key, None)), index)
    return index


def _build_index(inputs: Inputs, fingerprint: tuple) -> _Index:
    namespaced: dict[str, list[RuntimeFacts]] = {}
    for (ns, _name), obj in sorted(inputs.runtimes.items()):
        namespaced.setdefault(ns, []).append(_runtime_facts(obj, obj.spec))
    cluster = [_runtime_facts(obj, obj.spec) for _name, obj in sorted(inputs.cluster_runtimes.items())]
    by_key: dict[tuple, list[RuntimeFacts]] = {}
    by_obj: dict[int, RuntimeFacts] = {}
    for facts in [f for group in namespaced.values() for f in group] + cluster:
        by_obj[id(facts.obj)] = facts
        if facts.disabled or not facts.has_auto:
            continue
        for key in dict.fromkeys(e.key for e in facts.entries):
            by_key.setdefault(key, []).append(facts)
    listed = frozenset(c for facts in by_obj.values() for c in facts.classes)
    return _Index(namespaced, cluster, by_key, by_obj, fingerprint, listed)
