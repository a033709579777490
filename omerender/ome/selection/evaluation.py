"""Checks 1-7 for every candidate runtime (selection.md §3.1-§3.8), their ranking and tie-breaks (§3.9).

Shared by auto-selection and ``omerender explain``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from omerender.yamlio import limits
from ..budget import BudgetError
from ..load import Inputs, Obj
from .entries import _entry_pieces, _entry_reason, _format_reason
from .facts import ModelFacts, RuntimeFacts, _model_facts
from .request import Request, _classes_pass, _mode_reason
from .runtimes import _Index, _index
from .scoring import _runtime_score
from .sizes import _distance, _plain, _size_gap, _size_reason

NOT_AUTO = ("supports the model but has no supportedModelFormats[].autoSelect=true entry, so automatic selection "
            "skips it (pin it explicitly via spec.runtime.name instead)")
NOT_AUTO_MATCHING = ("matching format {fmt} is not autoSelect-enabled (a different supportedModelFormats entry on this "
                     "runtime has autoSelect=true, but not the one that matches this model)")
ZERO_SCORE = "auto-select score is 0"


@dataclass
class Verdict:
    runtime: Obj
    scope: str                 # "Namespaced" or "Cluster"
    compatible: bool
    score: int                 # §3.8, 0 when nothing scores
    priority: int | None       # explain: priority of the first matching entry
    weight: int | None         # explain: weight column
    reason: str | None         # first failed check (§6.4)
    check: int | None          # number of that check (1-7)
    distance: Decimal = Decimal(0)
    gap: Decimal = Decimal(0)  # how far a failed check 4 (mismatches) or 5 (size) missed, for the nearest runtimes
    auto_select: bool | None = None  # checks 6-7: the matching entry's autoSelect (None: unset)


@dataclass
class Evaluation:
    namespace: str
    model: Obj
    format: str
    verdicts: list[Verdict]    # compatible ones in rank order, then the rest (SRs first, by name)
    namespaced: int = 0        # runtimes checked, per scope
    cluster: int = 0
    tie_break: str | None = None
    warnings: list = field(default_factory=list)

    @property
    def winner(self) -> Verdict | None:
        return self.verdicts[0] if self.verdicts and self.verdicts[0].compatible else None


def evaluate(inputs: Inputs, namespace: str, model: Obj, request: Request | None = None) -> Evaluation:
    """Judge every ServingRuntime of ``namespace`` and every ClusterServingRuntime (§3.1-§3.9)."""
    index = _index(inputs)
    request = request or Request()
    key = (namespace, id(model), request)
    cached = index.evaluations.get(key)
    if cached is not None and cached.model is model:
        return cached
    facts = _model_facts(model)
    runtimes = index.namespaced.get(namespace, []) + index.cluster
    result = _judge(index, namespace, model, facts, request, runtimes, len(index.namespaced.get(namespace, [])),
                    len(index.cluster))
    index.evaluations[key] = result
    return result


def _fast_select(inputs: Inputs, namespace: str, model: Obj, facts: "ModelFacts", request: Request) -> Evaluation:
    """Judge only the runtimes with an entry that can match the model; the winner equals :func:`evaluate`'s.

    Once per model, namespace and request: InferenceServices that ask the same share the judgement."""
    index = _index(inputs)
    key = (namespace, id(model), request)
    cached = index.selections.get(key)
    if cached is not None and cached.model is model:
        return cached
    candidates = [rt for rt in index.by_key.get(facts.key, ())
                  if rt.obj.kind == "ClusterServingRuntime" or rt.obj.namespace == namespace]
    result = index.selections[key] = _judge(index, namespace, model, facts, request, candidates, 0, 0)
    return result


def _judge(index: _Index, namespace, model, facts, request, runtimes, namespaced, cluster) -> Evaluation:
    _charge(index, len(runtimes))
    warnings: list = []
    verdicts = [_verdict_of(index, rt, model, facts, request, warnings) for rt in runtimes]
    good = sorted((v for v in verdicts if v.compatible), key=_rank_key)
    bad = sorted((v for v in verdicts if not v.compatible), key=lambda v: (v.scope != "Namespaced", v.runtime.name))
    result = Evaluation(namespace, model, facts.fmt_name, good + bad, namespaced, cluster, warnings=warnings)
    result.tie_break = _tie_break(good, facts)
    return result


def _verdict_of(index: _Index, rt: "RuntimeFacts", model: Obj, facts: "ModelFacts", request: Request,
                warnings: list) -> Verdict:
    """:func:`_verdict`; a ClusterServingRuntime's is the same in every namespace, so it is judged once per model and
    request (and still charged to the judgements' limit each time) and its warnings said again."""
    if rt.scope != "Cluster":
        return _verdict(rt, facts, request, warnings)
    key = (id(rt), id(model), request)
    found = index.verdicts.get(key)
    if found is None or found[0] is not model:
        said: list = []
        found = index.verdicts[key] = (model, _verdict(rt, facts, request, said), said)
    warnings.extend([w for w in found[2] if w not in warnings])  # each once, as _verdict says them
    return found[1]


def _charge(index: _Index, runtimes: int) -> None:
    """Count the runtimes about to be judged against :data:`limits.MAX_SELECTION_JUDGEMENTS`."""
    index.judged += runtimes
    if index.judged > limits.MAX_SELECTION_JUDGEMENTS:
        raise BudgetError(f"automatic runtime selection has judged more than {limits.MAX_SELECTION_JUDGEMENTS:,} "
                          "runtimes against models in this input (each distinct model, namespace and requested "
                          "class or mode is judged against every runtime whose supportedModelFormats can match it); "
                          "name the runtime in spec.runtime.name, use fewer distinct models or runtimes, or render "
                          "fewer InferenceServices at a time", field="spec.model")


def _rank_key(v: Verdict):
    return (v.scope != "Namespaced", -v.score, v.distance, v.runtime.name)


def _tie_break(good: list[Verdict], model: "ModelFacts") -> str | None:
    """Why the first compatible runtime beat the second (§3.9), for explain."""
    if not good:
        return None
    if len(good) == 1:
        return "only compatible runtime"
    first, second = good[0], good[1]
    other = f"{second.runtime.name} ({second.scope})"
    if first.scope != second.scope:
        return f"ServingRuntimes in the namespace come before ClusterServingRuntimes ({other})"
    if first.score != second.score:
        return f"higher score: {first.score} over {second.score} of {other}"
    if model.size is not None and first.distance != second.distance:
        return (f"size range closer to the model size {model.size_text}: distance {_plain(first.distance)} "
                f"against {_plain(second.distance)} of {other}")
    return f"name order: {first.runtime.name} before {other}"


def _verdict(rt: "RuntimeFacts", model: "ModelFacts", request: Request, warnings: list) -> Verdict:
    def no(check: int, reason: str, gap: Decimal = Decimal(0)) -> Verdict:
        return Verdict(rt.obj, rt.scope, False, score, None, None, reason, check, gap=gap)

    score = _runtime_score(rt, model)
    if rt.disabled:
        return no(1, "runtime is disabled")
    if not _classes_pass(rt, request):
        return no(2, "runtime does not support the required accelerator class")
    mode_reason = _mode_reason(rt, request)
    if mode_reason:
        return no(3, mode_reason)
    fmt_reason = _format_reason(rt, model)
    if fmt_reason:
        return no(4, fmt_reason, Decimal(min((len(_entry_pieces(e, model)) for e in rt.entries), default=99)))
    size_reason = _size_reason(rt, model, warnings)
    if size_reason:
        return no(5, size_reason, _size_gap(rt, model, warnings))
    first = next(e for e in rt.entries if _entry_reason(e, model) is None)
    if not rt.has_auto or score <= 0:
        if not rt.has_auto:
            verdict = no(6, NOT_AUTO)
        else:
            verdict = no(7, NOT_AUTO_MATCHING.format(fmt=model.fmt_name) if first.auto is not True else ZERO_SCORE)
        verdict.auto_select = first.auto
        return verdict
    weight = sum(w * first.priority for w in (first.fmt_weight, first.fw_weight) if w > 0)
    return Verdict(rt.obj, rt.scope, True, score, first.priority, weight, None, None,
                   _distance(rt, model, warnings))
