"""Accelerator classes: which one a component gets (spec: accelerators.md §2, §2.1-§2.6).

Everything here is a pure function on plain dicts (parsed YAML); inputs are never mutated. The render
pipeline calls, per InferenceService:

* :func:`validate_runtime_classes` once per runtime (E-A2, W-A4, W-A8, I-A4);
* :func:`choose_class` for the engine and the decoder, never the router (§2).

What the chosen class then does to runners and pods is :mod:`omerender.ome.accelerators.effects`.
"""
from __future__ import annotations

import json
import math
import weakref
from dataclasses import dataclass
from fractions import Fraction

from omerender.errors import OmeError, Report
from omerender.gorules.text import equal_fold, to_lower
from omerender.kube.quantities import parse_quantity
from omerender.suggest import did_you_mean
from omerender.yamlio.data import list_or_empty, map_or_empty
from ..load import Inputs, Obj

COMPONENTS = ("engine", "decoder")
LISTED = 10  # classes a message names one by one; a pool of thousands is summarised past them
POLICIES = ("BestFit", "Cheapest", "MostCapable", "FirstAvailable")
GIB = 2 ** 30
SELECTOR = "spec.acceleratorSelector"


@dataclass
class ClassChoice:
    """The class a component gets (``cls`` None = no class) and where it came from.

    ``where`` is the text I-A6 names: a field path such as ``spec.acceleratorSelector.acceleratorClass``,
    or ``policy <P> in <field path>``; empty when there is no class.
    """

    cls: Obj | None
    where: str = ""


# ---------------------------------------------------------------- small readers

def runtime_pool(runtime_spec: dict) -> list[str]:
    """The runtime's ``acceleratorRequirements.acceleratorClasses``, a repeated name once at its first position."""
    names = list_or_empty(map_or_empty(runtime_spec.get("acceleratorRequirements")).get("acceleratorClasses"))
    return list(dict.fromkeys(name for name in names if isinstance(name, str)))


def _integer_value(quantity: Fraction) -> int:
    """Quantity.Value(): the integer value, rounded up."""
    return math.ceil(quantity)


def _capabilities(cls: Obj) -> dict:
    return map_or_empty(cls.spec.get("capabilities"))


def _memory_bytes(cls: Obj) -> int | None:
    memory = _capabilities(cls).get("memoryGB")
    if memory is None:
        return None
    return _integer_value(parse_quantity(memory, "spec.capabilities.memoryGB", cls))


def _memory_gib(cls: Obj) -> float:
    """Memory in GiB, not rounded (scores); 0 when absent."""
    memory = _memory_bytes(cls)
    return memory / GIB if memory is not None else 0.0


def _bandwidth(cls: Obj) -> float:
    value = _capabilities(cls).get("memoryBandwidthGBps")
    if value is None:
        return 0.0
    return float(_integer_value(parse_quantity(value, "spec.capabilities.memoryBandwidthGBps", cls)))


_PRECISION_FIELDS = {"fp32": "fp32Tflops", "fp16": "fp16Tflops", "int8": "int8Tops", "fp8": "int8Tops",
                     "int4": "int4Tops"}


def _performance(cls: Obj) -> dict | None:
    perf = _capabilities(cls).get("performance")
    return perf if isinstance(perf, dict) else None


def _tflops(perf: dict | None, precision: str) -> int:
    """The figure for a precision (lowercased); 0 for an unknown precision or a missing figure."""
    if perf is None:
        return 0
    field = _PRECISION_FIELDS.get(to_lower(str(precision)))
    value = perf.get(field) if field else None
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


# ---------------------------------------------------------------- choosing a class (§2)

def choose_class(component: str, isvc: Obj, runtime_spec: dict, runtime_ref: str, inputs: Inputs,
                 report: Report) -> ClassChoice:
    """Pick the AcceleratorClass of one component (``engine`` or ``decoder``; accelerators.md §2).

    ``runtime_spec`` is the spec that renders the InferenceService (merged, pinned snapshot, or the
    auto-selected runtime's own spec); its ``acceleratorRequirements.acceleratorClasses`` is the pool.
    ``runtime_ref`` is ``ClusterServingRuntime/<name>`` or ``ServingRuntime/<ns>/<name>`` for messages.

    Always checked first: E-A3 for a policy outside the enum (ISVC-wide and this component's override;
    raised), W-A6 when this component's override carries ``constraints``. Then the first rule that
    applies wins: override class, ISVC-wide class, override policy, ISVC-wide policy (empty strings are
    unset). No rule: no class, no message. A rule but an empty pool: no class and I-A1, or for a class asked
    for by name a warning naming it (omerender decision: OME drops it silently). A class by name
    must exist in the input (else E-A1, raised) and skips constraints and the pool. A policy picks among
    the pool classes in the input (I-A3 for each missing one) that pass ``spec.acceleratorSelector``'s
    constraints (§2.4), by the scores of §2.5; none left gives I-A2. BestFit with two or more
    candidates and no ``spec.acceleratorSelector.constraints`` scores with empty constraints and warns
    W-A2. Every chosen class gets I-A6. W-A1 (a named class the runtime doesn't list) belongs to runtime
    selection and is not emitted here.
    """
    spec = isvc.spec
    selector = map_or_empty(spec.get("acceleratorSelector"))
    override = map_or_empty(map_or_empty(spec.get(component)).get("acceleratorOverride"))
    if not selector and not override:
        return ClassChoice(None)   # no rule, nothing to check or say (most InferenceServices)
    _check_policy(selector.get("policy"), f"{SELECTOR}.policy")
    _check_policy(override.get("policy"), f"spec.{component}.acceleratorOverride.policy")
    if override.get("constraints") is not None:
        report.warn(f"spec.{component}.acceleratorOverride.constraints has no effect; constraints are read only "
                    f"from {SELECTOR}.constraints", field=f"spec.{component}.acceleratorOverride.constraints",
                    code="override-constraints-ignored")
    rule = first_rule(component, override, selector)
    if rule is None:
        return ClassChoice(None)
    pool = runtime_pool(runtime_spec)
    kind, value, path = rule
    if not pool:
        _no_pool(component, kind, value, path, runtime_ref, report)
        return ClassChoice(None)
    if kind == "class":
        cls = inputs.classes.get(value)
        if cls is None:
            hint = did_you_mean(value, lambda: inputs.classes, len(inputs.classes), inputs)
            raise OmeError(f"Failed to get accelerator class for {component}: accelerator class {value} not "
                           f"found at cluster scope{hint}", field=path)
        return _chosen(component, cls, path, report)
    cls = _apply_policy(component, value, pool, selector, runtime_ref, inputs, report)
    return _chosen(component, cls, f"policy {value} in {path}", report) if cls else ClassChoice(None)


def _no_pool(component: str, kind: str, value: str, path: str, runtime_ref: str, report: Report) -> None:
    """I-A1; a class asked for by name is a warning that names it, since OME drops it without a word."""
    if kind == "class":
        report.warn(f"{component}: accelerator class {value} from {path} is not applied: runtime {runtime_ref} "
                    f"lists no acceleratorRequirements.acceleratorClasses, and OME applies a class only from that "
                    f"list (no node selector, no resources of the class); list {value} there", field=path,
                    code="accelerator-class-not-listed")
        return
    report.info(f"{component}: no accelerator class: runtime {runtime_ref} lists no "
                "acceleratorRequirements.acceleratorClasses", code="no-accelerator-class")


def _check_policy(policy, path: str) -> None:
    if policy is None or policy == "" or policy in POLICIES:
        return
    supported = ", ".join(f'"{p}"' for p in POLICIES)
    raise OmeError(f'{path}: Unsupported value: "{policy}": supported values: {supported}', field=path)


def first_rule(component: str, override: dict, selector: dict) -> tuple[str, str, str] | None:
    places = (("class", override.get("acceleratorClass"), f"spec.{component}.acceleratorOverride.acceleratorClass"),
              ("class", selector.get("acceleratorClass"), f"{SELECTOR}.acceleratorClass"),
              ("policy", override.get("policy"), f"spec.{component}.acceleratorOverride.policy"),
              ("policy", selector.get("policy"), f"{SELECTOR}.policy"))
    for kind, value, path in places:
        if value:
            return kind, value, path
    return None


def _chosen(component: str, cls: Obj, where: str, report: Report) -> ClassChoice:
    report.info(f"{component}: accelerator class {cls.name} from {where}", code="accelerator-class")
    return ClassChoice(cls, where)


@dataclass(frozen=True)
class _Outcome:
    """What a policy makes of a pool under some constraints: the same for every InferenceService that asks it."""

    chosen: Obj | None
    candidates: int
    missing: tuple[str, ...]    # pool classes not in the input, in pool order
    listed: str                 # I-A2's "name: reason; ..." when nothing is chosen


_OUTCOMES: dict[int, tuple[weakref.ref, dict]] = {}


def _outcomes(inputs: Inputs) -> dict:
    """The policy outcomes of ``inputs``: thousands of InferenceServices over one pool of thousands of classes
    would otherwise score every class once each."""
    found = _OUTCOMES.get(id(inputs))
    if found is None or found[0]() is not inputs:
        key = id(inputs)
        found = _OUTCOMES[key] = (weakref.ref(inputs, lambda _ref: _OUTCOMES.pop(key, None)), {})
    return found[1]


def _apply_policy(component: str, policy: str, pool: list[str], selector: dict, runtime_ref: str,
                  inputs: Inputs, report: Report) -> Obj | None:
    constraints = map_or_empty(selector.get("constraints"))
    key = (policy, tuple(pool), json.dumps(constraints, sort_keys=True, default=repr), len(inputs.classes))
    cache = _outcomes(inputs)
    outcome = cache.get(key)
    if outcome is None:
        outcome = cache[key] = _outcome(policy, pool, constraints, inputs)
    for name in outcome.missing[:LISTED]:
        report.info(f"{component}: accelerator class {name} listed by runtime {runtime_ref} is not in the "
                    f"input; policy {policy} skips it", code="accelerator-class-missing")
    if len(outcome.missing) > LISTED:
        report.info(f"{component}: {len(outcome.missing) - LISTED:,} more accelerator classes listed by runtime "
                    f"{runtime_ref} are not in the input; policy {policy} skips them", code="accelerator-class-missing")
    if outcome.chosen is None:
        report.info(f"{component}: no accelerator class: policy {policy} found no eligible class ({outcome.listed})",
                    code="no-accelerator-class")
        return None
    if policy == "BestFit" and outcome.candidates > 1 and selector.get("constraints") is None:
        report.warn(f"{component}: BestFit has {outcome.candidates} candidate classes but {SELECTOR}.constraints "
                    "is not set; OME does not reconcile this (known bug); omerender scored with empty "
                    f"constraints and chose {outcome.chosen.name}", code="bestfit-no-constraints")
    return outcome.chosen


def _outcome(policy: str, pool: list[str], constraints: dict, inputs: Inputs) -> _Outcome:
    reasons: dict[str, str] = {}
    candidates: list[Obj] = []
    missing: list[str] = []
    for name in pool:
        cls = inputs.classes.get(name)
        if cls is None:
            missing.append(name)
            reasons[name] = "not in the input"
            continue
        failure = constraint_failure(cls, constraints)
        if failure:
            reasons[name] = failure
        else:
            candidates.append(cls)
    chosen = _pick(policy, candidates, constraints, reasons)
    failed = [f"{name}: {reasons[name]}" for name in pool if name in reasons]
    more = f"; and {len(failed) - LISTED:,} more" if len(failed) > LISTED else ""
    return _Outcome(chosen, len(candidates), tuple(missing), "; ".join(failed[:LISTED]) + more)


def _pick(policy: str, candidates: list[Obj], constraints: dict, reasons: dict[str, str]) -> Obj | None:
    """The policy's winner among ``candidates`` (pool order); ties go to the earlier class."""
    if policy == "Cheapest":
        return cheapest(candidates, reasons)
    if not candidates:
        return None
    if policy == "FirstAvailable" or len(candidates) == 1:
        return candidates[0]
    if policy == "BestFit":
        scores = [best_fit_score(cls, constraints) for cls in candidates]
    else:
        scores = most_capable_scores(candidates, list_or_empty(constraints.get("preferredPrecisions")))
    return candidates[scores.index(max(scores))]


# ---------------------------------------------------------------- constraints (§2.4)

def constraint_failure(cls: Obj, constraints: dict) -> str:
    """The reason the class fails ``constraints`` (first failing check, §2.4 order), or ``""``."""
    caps = _capabilities(cls)
    if cls.name in list_or_empty(constraints.get("excludedClasses")):
        return "explicitly excluded"
    families = list_or_empty(constraints.get("architectureFamilies"))
    if families and not any(_family_matches(str(entry), cls) for entry in families):
        return f"architecture family {to_lower(str(cls.spec.get('family') or ''))} not in allowed list"
    low, high = constraints.get("minMemory"), constraints.get("maxMemory")
    if low is not None or high is not None:
        memory = _memory_bytes(cls)
        if memory is None:
            return "missing memory specification for memory check"
        gib = memory // GIB
        if low is not None and gib < low:
            return f"memory {gib}GB < required {low}GB"
        if high is not None and gib > high:
            return f"memory {gib}GB > max allowed {high}GB"
    features = {to_lower(str(f)) for f in list_or_empty(caps.get("features"))}
    for required in list_or_empty(constraints.get("requiredFeatures")):
        if to_lower(str(required)) not in features:
            return f"missing required feature: {required}"
    minimum = constraints.get("minArchitectureVersion")
    if minimum is not None:
        capability = caps.get("computeCapability") or ""
        if capability == "":
            return "missing compute capability for architecture version check"
        if str(capability) < str(minimum):  # a plain string comparison, as OME does: "10.0" < "9.0"
            return f"compute capability {capability} < required {minimum}"
    return ""


def _family_matches(entry: str, cls: Obj) -> bool:
    vendor = to_lower(str(cls.spec.get("vendor") or ""))
    family = to_lower(str(cls.spec.get("family") or ""))
    return equal_fold(entry, f"{vendor}-{family}" if "-" in entry else family)


# ---------------------------------------------------------------- policies (§2.5)

def best_fit_score(cls: Obj, constraints: dict) -> float:
    """0.70 * memory fit + 0.30 * compute score."""
    return 0.70 * _memory_fit(cls, constraints) + 0.30 * _compute_score(cls, constraints)


def _memory_fit(cls: Obj, constraints: dict) -> float:
    required = constraints.get("minMemory")
    if required is None:
        return 1.0
    memory = _memory_bytes(cls)
    if memory is None:
        return 0.0
    gib = memory / GIB
    if gib < required:
        return 0.0
    return 1.0 if gib == required else required / gib


def _compute_score(cls: Obj, constraints: dict) -> float:
    perf = _performance(cls)
    if perf is None:
        return 0.0
    required = constraints.get("minComputePerformanceTFLOPS") or 0
    precisions = [to_lower(str(p)) for p in list_or_empty(constraints.get("preferredPrecisions"))]
    if not precisions:
        return _tflops_score(max(_tflops(perf, p) for p in ("fp32", "fp16", "int8", "int4")), required)
    penalty = 1.0
    for precision in precisions:
        tflops = _tflops(perf, precision)
        if tflops > 0:
            return _tflops_score(tflops, required) * penalty
        penalty *= 0.5
    if "fp16" not in precisions:
        return _tflops_score(_tflops(perf, "fp16"), required) * penalty
    return 0.0


def _tflops_score(tflops: int, required: int) -> float:
    if tflops == 0:
        return 0.0
    if required == 0:
        return 1.0
    return min(tflops / required, 1.0)


def most_capable_scores(candidates: list[Obj], preferred: list) -> list[float]:
    """0.5 * memory + 0.3 * bandwidth + 0.2 * TFLOPS, each divided by its largest value among the candidates."""
    raw = [(_capability_tflops(cls, preferred), _memory_gib(cls), _bandwidth(cls)) for cls in candidates]
    tops = [max(values[i] for values in raw) for i in range(3)]

    def norm(value: float, top: float) -> float:
        return value / top if top > 0 else 0.0

    return [0.5 * norm(m, tops[1]) + 0.3 * norm(b, tops[2]) + 0.2 * norm(t, tops[0]) for t, m, b in raw]


def _capability_tflops(cls: Obj, preferred: list) -> float:
    perf = _performance(cls)
    precisions = [to_lower(str(p)) for p in preferred] or ["fp16"]
    for precision in precisions:  # the first precision, else the first later one with a figure; no penalty
        tflops = _tflops(perf, precision)
        if tflops > 0:
            return float(tflops)
    return 0.0


_TIERS = {"low": 1, "medium": 2, "high": 3}


def cheapest(candidates: list[Obj], reasons: dict[str, str]) -> Obj | None:
    """The cheapest candidate: hourly prices (spot first) beat per-million-token prices, which beat tiers.

    A candidate without a usable ``cost`` takes no part; its reason ``no cost`` goes into ``reasons``
    (a copy is not made: the caller's dict collects I-A2 reasons).
    """
    groups: list[list[tuple[Fraction, Obj]]] = [[], [], []]
    for cls in candidates:
        placed = _cost_group(cls)
        if placed is None:
            reasons[cls.name] = "no cost"
        else:
            groups[placed[0]].append((placed[1], cls))
    for group in groups:
        if group:
            best = group[0]
            for entry in group[1:]:
                if entry[0] < best[0]:
                    best = entry
            return best[1]
    return None


def _cost_group(cls: Obj) -> tuple[int, Fraction] | None:
    cost = cls.spec.get("cost")
    if not isinstance(cost, dict):
        return None
    for group, field in ((0, "spotPerHour"), (0, "perHour"), (1, "perMillionTokens")):
        if cost.get(field) is not None:
            return group, parse_quantity(cost[field], f"spec.cost.{field}", cls)
    tier = cost.get("tier")
    if tier:
        return 2, Fraction(_TIERS.get(to_lower(str(tier)), 2))
    return None


# ---------------------------------------------------------------- runtime checks (§2.1, §2.6, §4.2)

def validate_runtime_classes(rt: Obj, runtime_spec: dict, inputs: Inputs, report: Report,
                             pool_inherited_from: str | None = None) -> None:
    """Admission-style checks of a runtime's classes.

    * W-A8 for each of ``spec.engineConfig``/``spec.decoderConfig`` of the object as written that sets
      ``acceleratorOverride``.
    * I-A4, as a warning (issue 4: OME ignores a misspelt key silently), for each
      ``supportedModelFormats[i].acceleratorConfig`` key of ``runtime_spec`` (the spec that renders: merged
      or as written) that is not in ``runtime_spec``'s pool, in written order.
    * W-A4 for each missing class of ``runtime_spec``'s pool when the caller says the pool was inherited
      (``pool_inherited_from`` = the ref of the runtime it came from, printed as given).
    * E-A2 (raised) when the object as written is not ``disabled: true`` and its own pool names classes
      that are not in the input: missing names once each, in pool order, space-separated.
    """
    own = rt.spec
    for config in ("engineConfig", "decoderConfig"):
        if map_or_empty(own.get(config)).get("acceleratorOverride") is not None:
            report.warn(f"spec.{config}.acceleratorOverride has no effect in a runtime",
                        field=f"spec.{config}.acceleratorOverride", code="runtime-accelerator-override")
    pool = runtime_pool(runtime_spec)
    pooled = set(pool)
    for index, entry in enumerate(list_or_empty(runtime_spec.get("supportedModelFormats"))):
        for key in map_or_empty(map_or_empty(entry).get("acceleratorConfig")):
            if key not in pooled:
                report.warn(f'supportedModelFormats[{index}].acceleratorConfig key "{key}" names no class in '
                            "acceleratorRequirements.acceleratorClasses", code="accelerator-config-unknown-class")
    if pool_inherited_from is not None:
        for name in pool:
            if name not in inputs.classes:
                report.warn(f'accelerator class "{name}" inherited from {pool_inherited_from} in '
                            "acceleratorRequirements.acceleratorClasses is not in the input",
                            code="inherited-accelerator-class-missing")
    if own.get("disabled") is True:
        return
    missing = [name for name in runtime_pool(own) if name not in inputs.classes]
    if missing:
        raise OmeError("unknown accelerator classes referenced in AcceleratorRequirements: "
                       f"[{' '.join(missing)}]", field="spec.acceleratorRequirements.acceleratorClasses")
