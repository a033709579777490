"""Model and runtime resolution, runtime auto-selection (spec: selection.md).

:func:`resolve` walks selection.md §2.4 for one InferenceService. :func:`evaluate`
judges every candidate runtime (checks 1-7 of §3.2) and ranks the qualifying ones
(§3.9); ``resolve`` and ``omerender explain`` share it. Candidates are indexed per
:class:`~omerender.load.Inputs` by (format, framework, architecture, quantization),
so a successful selection only looks at runtimes that can match the model.
"""
from __future__ import annotations

import re
import weakref
from dataclasses import dataclass, field
from decimal import Decimal
from functools import lru_cache
from typing import Callable, Iterable

from .errors import ObjRef, OmeError, Report, type_name
from .load import Inputs, Obj
from .suggest import did_you_mean

MODE_KEY = "ome.io/deploymentMode"
CLASS_ANNOTATION = "ome.io/accelerator-class"
MODES = ("RawDeployment", "OMENative", "MultiNode", "VirtualDeployment")
FORMAT_REQUIRED = "invalid model specification: modelFormat.name: model format name is required"
ADMISSION_PREFIX = "no supporting runtime found for model {model} and engine does not have complete runner configuration: "
PIPELINE_COMPONENTS = ("scheduler", "textEncoder", "tokenizer", "transformer", "vae")
SCOPES = {"ServingRuntime": "Namespaced", "ClusterServingRuntime": "Cluster"}
NOT_AUTO = ("supports the model but has no supportedModelFormats[].autoSelect=true entry, so automatic selection "
            "skips it (pin it explicitly via spec.runtime.name instead)")
NOT_AUTO_MATCHING = ("matching format {fmt} is not autoSelect-enabled (a different supportedModelFormats entry on this "
                     "runtime has autoSelect=true, but not the one that matches this model)")
ZERO_SCORE = "auto-select score is 0"


# ---------------------------------------------------------------- public interface

@dataclass
class Resolution:
    model: Obj | None          # the BaseModel/ClusterBaseModel, None for runtime-only
    runtime: Obj               # the runtime object (named or chosen)
    auto_selected: bool
    entry: dict | None         # §3.11: the entry whose acceleratorConfig applies


def parse_size(text) -> Decimal | None:
    """§1.4: a parameter count; None when absent, 0 when it does not parse."""
    if text is None:
        return None
    return _size_or_none(text) or Decimal(0)


def entry_matches(entry: dict, model_spec: dict) -> str | None:
    """None when the entry matches the model (§3.3), else the per-entry reason of §6.4."""
    return _entry_reason(_entry(0, entry), _model(model_spec))


def validate_runtime(rt: Obj) -> None:
    """The runtime-webhook checks that bear on selection (api.md §7.1 row 7, selection.md §3.3, §3.8)."""
    spec = rt.spec
    entries = spec.get("supportedModelFormats")
    if entries is None:
        entries = []
    if not isinstance(entries, list):
        raise OmeError(_type_error("spec.supportedModelFormats", entries, "array"), field="spec.supportedModelFormats")
    for index, entry in enumerate(entries):
        _validate_entry(f"spec.supportedModelFormats[{index}]", entry)
    _validate_size_range(spec.get("modelSizeRange"))
    if spec.get("disabled") is not True:
        _check_priorities(rt, entries)


def find_runtime(inputs: Inputs, namespace: str, name: str, kind: str | None) -> Obj | None:
    """§2.3: ``kind`` ClusterServingRuntime (default) looks at cluster scope, then the namespace."""
    namespaced = inputs.runtimes.get((namespace, name))
    if kind == "ServingRuntime":
        return namespaced
    return inputs.cluster_runtimes.get(name) or namespaced


def resolve(isvc: Obj, inputs: Inputs, report: Report,
            merged_spec: Callable[[Obj], dict] = lambda rt: rt.spec) -> Resolution:
    """selection.md §2.4 for one InferenceService. Raises OmeError; warnings go to ``report``."""
    spec = isvc.spec
    model_ref = _mapping(spec, "model", "spec.model")
    runtime_ref = _mapping(spec, "runtime", "spec.runtime")
    runtime_name = _string(runtime_ref, "name", "spec.runtime.name") if runtime_ref is not None else None
    if model_ref is None and not runtime_name:
        raise OmeError("at least one of spec.model or spec.runtime must be set")
    model = _lookup_model(isvc, inputs, report, model_ref) if model_ref is not None else None
    if runtime_name:
        return _named(isvc, inputs, report, merged_spec, model, runtime_ref, runtime_name)
    return _auto(isvc, inputs, report, model)


# ---------------------------------------------------------------- §2.2 model lookup

def _lookup_model(isvc: Obj, inputs: Inputs, report: Report, model_ref: dict) -> Obj:
    name = _string(model_ref, "name", "spec.model.name")
    if not name:
        raise OmeError("spec.model.name: Required value", field="spec.model.name")
    kind = _string(model_ref, "kind", "spec.model.kind") or "ClusterBaseModel"
    if kind not in ("BaseModel", "ClusterBaseModel"):
        raise OmeError(f'spec.model.kind: Unsupported value: "{kind}": supported values: "BaseModel", '
                       '"ClusterBaseModel"', field="spec.model.kind")
    ns = isvc.namespace
    namespaced, cluster = inputs.models.get((ns, name)), inputs.cluster_models.get(name)
    if namespaced is None and cluster is None:
        raise OmeError(f'referenced model "{name}" not found in namespace "{ns}": ensure a BaseModel exists in this '
                       'namespace or a ClusterBaseModel exists cluster-wide with this name'
                       + did_you_mean(name, lambda: _model_names(inputs, ns), len(inputs.models) +
                                      len(inputs.cluster_models), inputs), field="spec.model.name")
    if kind == "BaseModel" and namespaced is None:
        raise OmeError(f'Failed to get referenced BaseModel "{name}" in namespace "{ns}": only a ClusterBaseModel of '
                       'that name exists; remove spec.model.kind or set it to ClusterBaseModel')
    if kind == "ClusterBaseModel" and cluster is None:
        raise OmeError(f'Failed to get referenced ClusterBaseModel "{name}": only a BaseModel of that name exists in '
                       f'namespace "{ns}"; set spec.model.kind: BaseModel')
    if kind == "ClusterBaseModel" and namespaced is not None:
        report.warn(f"BaseModel {ns}/{name} shadows ClusterBaseModel {name}; OME serves the BaseModel")
    model = namespaced if namespaced is not None else cluster
    if model.spec.get("disabled") is True:
        raise OmeError(f"model {name} is disabled")
    if model.spec.get("distribution") == "Sharded":
        raise OmeError(f"model {name} uses distribution Sharded: no model cache provider is configured for "
                       "sharded model loading")
    return model


def _model_names(inputs: Inputs, namespace: str) -> list[str]:
    return [n for (ns, n) in inputs.models if ns == namespace] + list(inputs.cluster_models)


def _runtime_names(inputs: Inputs, namespace: str, kind: str) -> list[str]:
    names = [n for (ns, n) in inputs.runtimes if ns == namespace]
    return names if kind == "ServingRuntime" else names + list(inputs.cluster_runtimes)


# ---------------------------------------------------------------- §2.3 / §4 named runtime

def _named(isvc, inputs, report, merged_spec, model, runtime_ref, name) -> Resolution:
    model_name = isvc.spec["model"]["name"] if model is not None else None

    def fail(text: str) -> OmeError:
        if model is None:
            return OmeError(text)
        return OmeError(f"runtime {name} does not support model {model_name}: {text}")

    facts = _model_facts(model) if model is not None else None
    if facts is not None and not facts.fmt_name:
        raise fail(FORMAT_REQUIRED)
    kind = _string(runtime_ref, "kind", "spec.runtime.kind") or "ClusterServingRuntime"
    if kind not in ("ClusterServingRuntime", "ServingRuntime"):
        raise OmeError(f'spec.runtime.kind: Unsupported value: "{kind}": supported values: '
                       '"ClusterServingRuntime", "ServingRuntime"', field="spec.runtime.kind")
    runtime = find_runtime(inputs, isvc.namespace, name, kind)
    if runtime is None:
        hint = did_you_mean(name, lambda: _runtime_names(inputs, isvc.namespace, kind),
                            len(inputs.runtimes) + len(inputs.cluster_runtimes), inputs)
        if kind == "ServingRuntime":
            raise fail(f"ServingRuntime {name} not found in namespace {isvc.namespace}{hint}")
        raise fail(f"runtime {name} not found in namespace {isvc.namespace} or at cluster scope{hint}")
    try:
        spec = merged_spec(runtime)
    except OmeError as err:
        raise fail(err.text) from None
    if spec.get("disabled") is True:
        scope = "cluster-scoped" if runtime.kind == "ClusterServingRuntime" else "namespace-scoped"
        raise fail(f"{scope} runtime {name} is disabled")
    if model is None:
        return Resolution(None, runtime, False, None)
    rt_facts = _runtime_facts(runtime, spec)
    warnings: list = []
    detail = _named_detail(rt_facts, facts, _request(isvc), warnings)
    _replay(report, warnings)
    if detail is not None:
        report.warn(f'runtime "{name}" does not declare support for model "{model_name}" ({detail}); '
                    'proceeding because the runtime was named explicitly' + unknown_class_note(isvc, inputs))
    return Resolution(model, runtime, False, _accelerator_entry(rt_facts, facts, auto_only=False))


def _named_detail(rt: "RuntimeFacts", model: "ModelFacts", request: "Request", warnings: list) -> str | None:
    """§4: checks 2-5 on the merged spec; the ``<detail>`` of the warning, None when all pass."""
    name = rt.obj.name
    if not _classes_pass(rt, request):
        return f"runtime {name} does not support model : runtime does not support the required accelerator class"
    mode_reason = _mode_reason(rt, request)
    if mode_reason:
        return f"runtime {name} does not support model : {mode_reason}"
    reason = _format_reason(rt, model) or _size_reason(rt, model, warnings)
    if reason:
        return f"runtime {name} does not support model {model.fmt_name}: {reason}"
    return None


# ---------------------------------------------------------------- §3 auto-selection

def _auto(isvc: Obj, inputs: Inputs, report: Report, model: Obj) -> Resolution:
    model_name = isvc.spec["model"]["name"]
    admission = _admission_checked(isvc)
    facts = _model_facts(model)
    if not facts.fmt_name:
        prefix = ADMISSION_PREFIX.format(model=model_name) if admission else \
            f"Failed to find runtime for model {model_name}: "
        raise OmeError(prefix + FORMAT_REQUIRED)
    request = _request(isvc)
    result = _fast_select(inputs, isvc.namespace, model, facts, request)
    if result.winner is None:
        result = evaluate(inputs, isvc.namespace, model, request)
    _replay(report, result.warnings)
    if result.winner is None:
        text = no_runtime_text(result, isvc.name) + unknown_class_note(isvc, inputs)
        raise OmeError(ADMISSION_PREFIX.format(model=model_name) + text if admission else text)
    runtime = result.winner.runtime
    if admission:
        report.warn(f"Runtime {runtime.name} will be auto-selected for model {model_name}")
    entry = _accelerator_entry(_index(inputs).facts_of(runtime), facts, auto_only=True)
    return Resolution(model, runtime, True, entry)


def _admission_checked(isvc: Obj) -> bool:
    """§3.10: OME's webhook checks selection when the engine exists and has no runner image of its own."""
    engine = isvc.spec.get("engine")
    if not isinstance(engine, dict):
        return False

    def image(part: dict | None) -> bool:
        runner = part.get("runner") if isinstance(part, dict) else None
        return isinstance(runner, dict) and bool(runner.get("image"))

    full_runner = image(engine) or (image(engine.get("leader")) and image(engine.get("worker")))
    return not full_runner


# ---------------------------------------------------------------- evaluation (shared with explain)

@dataclass(frozen=True)
class Request:
    """What the InferenceService asks of a runtime in checks 2 and 3 (empty for ``explain --model``)."""

    classes: tuple[str, ...] = ()
    engine_mode: str | None = None
    decoder_mode: str | None = None
    has_decoder: bool = False


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
    result = _judge(namespace, model, facts, request, runtimes, len(index.namespaced.get(namespace, [])),
                    len(index.cluster))
    index.evaluations[key] = result
    return result


def request_of(isvc: Obj) -> Request:
    """The classes and modes an InferenceService asks for (§3.6, §3.7)."""
    return _request(isvc)


NEAREST = 3


def no_runtime_text(result: Evaluation, isvc_name: str | None = None) -> str:
    """§3.10's core text for a failed selection.

    Up to :data:`NEAREST` excluded runtimes are listed as OME lists them. More would make one line of
    every runtime in a catalog, so the nearest few are named instead, closest first, with the
    ``explain`` command that shows the rest.
    """
    fmt = result.format
    text = f"no runtime found to support model {fmt} with format {fmt} in namespace {result.namespace}"
    total = result.namespaced + result.cluster
    if total:
        text += f". Checked {total} runtimes ({result.namespaced} namespace-scoped, {result.cluster} cluster-scoped)"
    excluded = [v for v in result.verdicts if v.check is not None and v.check <= 5]
    if len(excluded) > NEAREST:
        closest = sorted(excluded, key=_closeness)[:NEAREST]
        command = f"omerender explain --isvc {isvc_name} -n {result.namespace}" if isvc_name else \
            f"omerender explain --model {result.model.name} -n {result.namespace}"
        return (text + f". Nearest of {len(excluded)} excluded runtimes: " + _listed(closest)
                + f". Run `{command}` for every runtime and its reason")
    if excluded:
        text += ". Excluded runtimes: " + _listed(excluded)
    return text


def _listed(verdicts: list["Verdict"]) -> str:
    return "; ".join(f"{v.runtime.name} ({v.reason})" for v in verdicts)


def _closeness(v: "Verdict"):
    """A runtime that failed a later check came closer; within a check, fewer mismatches or a smaller size gap."""
    return (-v.check, v.gap, v.scope != "Namespaced", v.runtime.name)


def model_for_explain(inputs: Inputs, namespace: str, name: str) -> Obj | None:
    """explain's lookup (§5): BaseModel ``<ns>/name``, else ClusterBaseModel ``name``; the kind is ignored."""
    return inputs.models.get((namespace, name)) or inputs.cluster_models.get(name)


def _fast_select(inputs: Inputs, namespace: str, model: Obj, facts: "ModelFacts", request: Request) -> Evaluation:
    """Judge only the runtimes with an entry that can match the model; the winner equals :func:`evaluate`'s."""
    index = _index(inputs)
    candidates = [rt for rt in index.by_key.get(facts.key, ())
                  if rt.obj.kind == "ClusterServingRuntime" or rt.obj.namespace == namespace]
    result = _judge(namespace, model, facts, request, candidates, 0, 0)
    return result


def _judge(namespace, model, facts, request, runtimes, namespaced, cluster) -> Evaluation:
    warnings: list = []
    verdicts = [_verdict(rt, facts, request, warnings) for rt in runtimes]
    good = sorted((v for v in verdicts if v.compatible), key=_rank_key)
    bad = sorted((v for v in verdicts if not v.compatible), key=lambda v: (v.scope != "Namespaced", v.runtime.name))
    result = Evaluation(namespace, model, facts.fmt_name, good + bad, namespaced, cluster, warnings=warnings)
    result.tie_break = _tie_break(good, facts)
    return result


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
    if not rt.has_auto:
        return no(6, NOT_AUTO)
    if score <= 0:
        first = next(e for e in rt.entries if _entry_reason(e, model) is None)
        return no(7, NOT_AUTO_MATCHING.format(fmt=model.fmt_name) if first.auto is not True else ZERO_SCORE)
    first = next(e for e in rt.entries if _entry_reason(e, model) is None)
    weight = sum(w * first.priority for w in (first.fmt_weight, first.fw_weight) if w > 0)
    return Verdict(rt.obj, rt.scope, True, score, first.priority, weight, None, None,
                   _distance(rt, model, warnings))


# ---------------------------------------------------------------- checks 2, 3 (§3.6, §3.7)

def _request(isvc: Obj) -> Request:
    decoder = isvc.spec.get("decoder")
    classes = tuple(name for name, _path in _class_requests(isvc))  # "" stays: a class no runtime lists
    return Request(classes, _isvc_mode(isvc.spec, "engine"), _isvc_mode(isvc.spec, "decoder"),
                   isinstance(decoder, dict))


def _class_requests(isvc: Obj) -> list[tuple[str, str]]:
    """(class name, field path) of every class the InferenceService asks for, in check 2's order."""
    spec = isvc.spec
    annotations = isvc.metadata.get("annotations")
    holders = [(annotations, CLASS_ANNOTATION, f"metadata.annotations.{CLASS_ANNOTATION}"),
               (spec.get("acceleratorSelector"), "acceleratorClass", "spec.acceleratorSelector.acceleratorClass")]
    for component in ("engine", "decoder"):
        part = spec.get(component)
        holders.append((part.get("acceleratorOverride") if isinstance(part, dict) else None, "acceleratorClass",
                        f"spec.{component}.acceleratorOverride.acceleratorClass"))
    return [(str(holder[key]), path) for holder, key, path in holders
            if isinstance(holder, dict) and holder.get(key) is not None]


def unknown_class_note(isvc: Obj, inputs: Inputs) -> str:
    """A sentence naming each requested class that is neither an AcceleratorClass of the input nor listed by any
    runtime, with the nearest existing names; "" when there is none. Check 2 words such a typo as every
    runtime's failure, so the note says what is really wrong."""
    index = _index(inputs)
    notes = []
    for name, path in _class_requests(isvc):
        if not name or name in inputs.classes or name in index.listed_classes:
            continue
        known = lambda: list(inputs.classes) + list(index.listed_classes)  # noqa: E731
        hint = did_you_mean(name, known, len(inputs.classes) + len(index.listed_classes), inputs)
        notes.append(f'. Accelerator class "{name}" ({path}) does not exist: no AcceleratorClass of that name in the '
                     f'input and no runtime lists it in acceleratorRequirements.acceleratorClasses{hint}')
    return "".join(notes)


def _isvc_mode(spec: dict, component: str) -> str | None:
    part = spec.get(component)
    annotations = part.get("annotations") if isinstance(part, dict) else None
    if isinstance(annotations, dict) and MODE_KEY in annotations:
        return _mode(annotations[MODE_KEY])
    return _mode(spec.get("deploymentMode"))


def _mode(value) -> str | None:
    return value if value in MODES else None


def _classes_pass(rt: "RuntimeFacts", request: Request) -> bool:
    return all(c and c in rt.classes for c in request.classes)


def _mode_reason(rt: "RuntimeFacts", request: Request) -> str | None:
    pairs = [("engine", rt.engine_mode, request.engine_mode)]
    if request.has_decoder:
        pairs.append(("decoder", rt.decoder_mode, request.decoder_mode))
    for component, runtime_mode, wanted in pairs:
        if runtime_mode and wanted and runtime_mode != wanted:
            return (f"runtime {component} deployment mode {runtime_mode} does not match requested {component} "
                    f"deployment mode {wanted}")
    return None


# ---------------------------------------------------------------- check 4: entries (§3.3, §3.4, §6.4)

@dataclass(frozen=True)
class Entry:
    index: int
    raw: dict
    fmt_name: str | None
    fmt_version: str | None
    fmt_op: str
    fmt_weight: int
    fw_name: str | None
    fw_version: str | None
    fw_op: str
    fw_weight: int
    has_fw: bool
    arch: str | None
    quant: str | None
    pipeline: dict | None
    auto: bool | None
    priority: int

    @property
    def key(self):
        return (self.fmt_name, self.fw_name, self.arch, self.quant)


@dataclass(frozen=True)
class ModelFacts:
    fmt_name: str | None
    fmt_version: str | None
    fw_name: str | None
    fw_version: str | None
    has_fw: bool
    arch: str | None
    quant: str | None
    pipeline: dict | None
    size_text: str | None
    size: Decimal | None
    ref: ObjRef | None
    file: str | None

    @property
    def key(self):
        return (self.fmt_name, self.fw_name if self.has_fw else None, self.arch, self.quant)

    @property
    def label(self) -> str:
        parts = [f"mt:{self.fmt_name}"]
        parts += [p for p in (self.fmt_version, self.arch, self.quant) if p is not None]
        if self.has_fw:
            parts += [p for p in (self.fw_name, self.fw_version) if p is not None]
        return ":".join(parts)


def _entry(index: int, raw) -> Entry:
    raw = raw if isinstance(raw, dict) else {}
    fmt = raw.get("modelFormat") if isinstance(raw.get("modelFormat"), dict) else {}
    fw = raw.get("modelFramework") if isinstance(raw.get("modelFramework"), dict) else None
    pipeline = raw.get("diffusionPipeline")
    priority = raw.get("priority")
    return Entry(index, raw, _str(fmt.get("name")), _str(fmt.get("version")), _str(fmt.get("operator")) or "Equal",
                 _weight(fmt.get("weight")), _str((fw or {}).get("name")), _str((fw or {}).get("version")),
                 _str((fw or {}).get("operator")) or "Equal", _weight((fw or {}).get("weight")), fw is not None,
                 _str(raw.get("modelArchitecture")), _str(raw.get("quantization")),
                 pipeline if isinstance(pipeline, dict) else ({} if "diffusionPipeline" in raw and pipeline is not None
                                                               else None),
                 raw.get("autoSelect") if isinstance(raw.get("autoSelect"), bool) else None,
                 priority if isinstance(priority, int) and not isinstance(priority, bool) else 1)


def _model(spec: dict, ref: ObjRef | None = None, file: str | None = None) -> ModelFacts:
    fmt = spec.get("modelFormat") if isinstance(spec.get("modelFormat"), dict) else {}
    fw = spec.get("modelFramework") if isinstance(spec.get("modelFramework"), dict) else None
    pipeline = spec.get("diffusionPipeline")
    size_text = _str(spec.get("modelParameterSize"))
    return ModelFacts(_str(fmt.get("name")), _str(fmt.get("version")), _str((fw or {}).get("name")),
                      _str((fw or {}).get("version")), fw is not None, _str(spec.get("modelArchitecture")),
                      _str(spec.get("quantization")), pipeline if isinstance(pipeline, dict) else None,
                      size_text, parse_size(size_text), ref, file)


def _model_facts(model: Obj) -> ModelFacts:
    _validate_model_strings(model)
    return _model(model.spec, model.ref, model.file)


def _entry_reason(entry: Entry, model: ModelFacts) -> str | None:
    """None when the entry matches; else every applicable piece of §6.4 joined by ', '."""
    pieces = _entry_pieces(entry, model)
    return ", ".join(pieces) if pieces else None


def _entry_pieces(entry: Entry, model: ModelFacts) -> list[str]:
    """Every applicable piece of §6.4 (empty when the entry matches)."""
    pieces = []
    pipeline = _pipeline_reason(entry.pipeline, model.pipeline)
    if pipeline:
        pieces.append(pipeline)
    pieces += _one_sided("architecture", model.arch, entry.arch)
    pieces += _one_sided("quantization", model.quant, entry.quant)
    if entry.fmt_name != model.fmt_name:
        pieces.append(f"format name mismatch (model={model.fmt_name}, runtime={entry.fmt_name})")
    else:
        pieces += _version_pieces("format", model.fmt_version, entry.fmt_version, entry.fmt_op)
    if model.has_fw and entry.has_fw:
        if entry.fw_name != model.fw_name:
            pieces.append(f"framework name mismatch (model={model.fw_name}, runtime={entry.fw_name})")
        else:
            pieces += _version_pieces("framework", model.fw_version, entry.fw_version, entry.fw_op)
    elif entry.has_fw:
        pieces.append(f"model has no framework but runtime requires {entry.fw_name}")
    elif model.has_fw:
        pieces.append(f"model has framework {model.fw_name} but runtime has no framework requirement")
    return pieces


def _one_sided(what: str, model_value, entry_value) -> list[str]:
    if model_value is not None and entry_value is not None:
        if model_value != entry_value:
            return [f"{what} mismatch (model={model_value}, runtime={entry_value})"]
        return []
    if model_value is None and entry_value is not None:
        return [f"model has no {what} but runtime requires {entry_value}"]
    if model_value is not None:
        return [f"model has {what} {model_value} but runtime has no {what} requirement"]
    return []


def _version_pieces(what: str, model_version, entry_version, operator: str) -> list[str]:
    if model_version is not None and entry_version is not None:
        if not versions_match(entry_version, model_version, operator):
            return [f"{what} version mismatch (model={model_version}, runtime={entry_version})"]
        return []
    if model_version is None and entry_version is not None:
        return [f"model has no {what} version but runtime requires {entry_version}"]
    if model_version is not None:
        return [f"model has {what} version but runtime has no version requirement"]
    return []


def _pipeline_reason(entry_pipeline: dict | None, model_pipeline: dict | None) -> str | None:
    if entry_pipeline is None:
        return None
    if model_pipeline is None:
        return "diffusion pipeline required by runtime but not specified in model"
    wanted_class = entry_pipeline.get("className")
    if wanted_class is not None and wanted_class != model_pipeline.get("className"):
        have = model_pipeline.get("className")
        return f"pipeline class mismatch (model={'<nil>' if have is None else have}, runtime={wanted_class})"
    for name in PIPELINE_COMPONENTS:
        reason = _component_reason(name, model_pipeline.get(name), entry_pipeline.get(name))
        if reason:
            return reason
    wanted_extra = entry_pipeline.get("additionalComponents")
    if isinstance(wanted_extra, dict) and wanted_extra:
        have_extra = model_pipeline.get("additionalComponents")
        if not isinstance(have_extra, dict) or not have_extra:
            return "diffusion pipeline missing required additional components"
        for key in sorted(wanted_extra):
            if key not in have_extra:
                return f"diffusion component {key} missing in model"
            reason = _component_reason(key, have_extra[key] or {}, wanted_extra[key] or {})
            if reason:
                return reason
    return None


def _component_reason(name: str, model_part, entry_part) -> str | None:
    if not isinstance(entry_part, dict):
        return None
    if not isinstance(model_part, dict):
        return f"component {name} required by runtime but not specified in model"
    for attr in ("library", "type"):
        wanted = entry_part.get(attr) or ""
        have = model_part.get(attr) or ""
        if wanted and wanted != have:
            return f"{name} {attr} mismatch (model={have}, runtime={wanted})"
    return None


def _format_reason(rt: "RuntimeFacts", model: ModelFacts) -> str | None:
    """Check 4: None when an entry matches, else the reason of §6.4."""
    if not rt.entries:
        return f"model format '{model.label}' not in supported formats: no supported formats defined"
    reasons = []
    for entry in rt.entries:
        reason = _entry_reason(entry, model)
        if reason is None:
            return None
        reasons.append(reason)
    return f"model format '{model.label}' not in supported formats: " + "; ".join(reasons)


# ---------------------------------------------------------------- versions (§3.4)

_NUMBER = re.compile(r"0|[1-9][0-9]*")


@dataclass(frozen=True)
class Version:
    numbers: tuple[int, int, int]
    prefix: bool
    parts: int
    pre: tuple[str, ...]
    build: tuple[str, ...]
    dev: tuple[str, ...]

    @property
    def unofficial(self) -> bool:
        return bool(self.pre or self.build or self.dev)


@lru_cache(maxsize=4096)
def parse_version(text: str) -> Version | None:
    """§3.4's grammar; None when the text does not parse."""
    parts = text.split(".", 2)
    major = parts[0][1:] if parts[0].startswith("v") else parts[0]
    minor = parts[1] if len(parts) > 1 else "0"
    rest = parts[2] if len(parts) > 2 else "0"
    suffixes = {}
    for mark, name in (("+", "build"), ("-", "pre"), (".", "dev")):
        if mark in rest:
            rest, tail = rest.split(mark, 1)
            suffixes[name] = tuple(tail.split("."))
            if "" in suffixes[name]:
                return None
    if not all(_NUMBER.fullmatch(n) for n in (major, minor, rest)):
        return None
    return Version((int(major), int(minor), int(rest)), parts[0].startswith("v"), len(parts),
                   suffixes.get("pre", ()), suffixes.get("build", ()), suffixes.get("dev", ()))


def _compare(a: Version, b: Version) -> int:
    left = (a.numbers, a.pre, a.build, a.dev)
    right = (b.numbers, b.pre, b.build, b.dev)
    return (left > right) - (left < right)


def versions_match(entry_version: str, model_version: str, operator: str = "Equal") -> bool:
    """entry OP model (§3.4); the entry's version is the newest accepted for GreaterThan(OrEqual)."""
    entry, model = parse_version(entry_version), parse_version(model_version)
    if entry is None or model is None:
        return False
    if operator == "Equal" or entry.unofficial or model.unofficial:
        return _compare(entry, model) == 0
    if entry.parts != model.parts or entry.prefix != model.prefix:
        return False
    if operator == "GreaterThan":
        return _compare(entry, model) > 0
    if operator == "GreaterThanOrEqual":
        return _compare(entry, model) >= 0
    return _compare(entry, model) == 0


# ---------------------------------------------------------------- sizes (§1.4, §3.5)

_SIZE = re.compile(r"([0-9]+\.?[0-9]*|\.[0-9]+)([MBT]?)")
_SUFFIX = {"": Decimal(1), "M": Decimal(10) ** 6, "B": Decimal(10) ** 9, "T": Decimal(10) ** 12}


def _size_or_none(text) -> Decimal | None:
    """The value of a well-formed size string, None when it does not parse."""
    match = _SIZE.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        return None
    return Decimal(match.group(1)) * _SUFFIX[match.group(2)]


def _read_size(text: str, field_name: str, ref, file, warnings: list) -> Decimal:
    value = _size_or_none(text)
    if value is None:
        warning = (f'{field_name} "{text}" is not a valid parameter count; OME reads it as 0', ref, file)
        if warning not in warnings:
            warnings.append(warning)
        return Decimal(0)
    return value


def _bounds(rt: "RuntimeFacts", model: ModelFacts, warnings: list):
    """(size, min, max) when the size check applies (model sized, runtime with a range), else None."""
    if model.size_text is None or rt.size_range is None:
        return None
    size = _read_size(model.size_text, "spec.modelParameterSize", model.ref, model.file, warnings)
    low, high = (None if text is None else _read_size(text, f"spec.modelSizeRange.{name}", rt.obj.ref, rt.obj.file,
                                                      warnings)
                 for name, text in (("min", rt.size_range[0]), ("max", rt.size_range[1])))
    return size, low, high


def _size_reason(rt: "RuntimeFacts", model: ModelFacts, warnings: list) -> str | None:
    bounds = _bounds(rt, model, warnings)
    if bounds is None:
        return None
    size, low, high = bounds
    if (low is None or size >= low) and (high is None or size <= high):
        return None
    low_text = "(-inf" if rt.size_range[0] is None else f"[{rt.size_range[0]}"
    high_text = "inf)" if rt.size_range[1] is None else f"{rt.size_range[1]}]"
    return f"model size {model.size_text} is outside supported range {low_text}, {high_text}"


def _size_gap(rt: "RuntimeFacts", model: ModelFacts, warnings: list) -> Decimal:
    """How far the model size lies outside the runtime's range (0 inside it)."""
    size, low, high = _bounds(rt, model, warnings)
    if low is not None and size < low:
        return low - size
    return size - high if high is not None and size > high else Decimal(0)


def _distance(rt: "RuntimeFacts", model: ModelFacts, warnings: list) -> Decimal:
    bounds = _bounds(rt, model, warnings)
    if bounds is None:
        return Decimal(0)
    size, low, high = bounds
    return sum((abs(b - size) for b in (low, high) if b is not None), Decimal(0))


def _plain(value: Decimal) -> str:
    return format(value.normalize(), "f")


# ---------------------------------------------------------------- score (§3.8, §3.11)

def _entry_score(entry: Entry, model: ModelFacts, priority: int, honour_auto: bool = True) -> int | None:
    """None when the entry does not score: autoSelect false, or format/framework (versions included) differ."""
    if (honour_auto and entry.auto is False) or not model.has_fw or not entry.has_fw:
        return None
    if entry.fmt_name != model.fmt_name or entry.fw_name != model.fw_name:
        return None
    if _version_pieces("format", model.fmt_version, entry.fmt_version, entry.fmt_op):
        return None
    if _version_pieces("framework", model.fw_version, entry.fw_version, entry.fw_op):
        return None
    fmt_weight = 10 if entry.fmt_weight == 0 else entry.fmt_weight
    fw_weight = 5 if entry.fw_weight == 0 else entry.fw_weight
    return (fmt_weight + fw_weight) * priority


def _runtime_score(rt: "RuntimeFacts", model: ModelFacts) -> int:
    scores = [s for e in rt.entries if (s := _entry_score(e, model, e.priority)) is not None]
    return max([0] + scores)


def _accelerator_entry(rt: "RuntimeFacts", model: ModelFacts, auto_only: bool) -> dict | None:
    """§3.11: the first entry with the highest score (priority 1) above 0; a named runtime offers every entry."""
    best, best_score = None, 0
    for entry in rt.entries:
        if auto_only and entry.auto is not True:
            continue
        score = _entry_score(entry, model, 1, honour_auto=False)
        if score is not None and score > best_score:
            best, best_score = entry, score
    return best.raw if best is not None else None


# ---------------------------------------------------------------- runtime facts and the index

@dataclass
class RuntimeFacts:
    obj: Obj
    scope: str
    entries: list[Entry]
    disabled: bool
    classes: tuple[str, ...]
    engine_mode: str | None
    decoder_mode: str | None
    size_range: tuple[str | None, str | None] | None
    has_auto: bool


def _runtime_facts(obj: Obj, spec: dict) -> RuntimeFacts:
    raw_entries = spec.get("supportedModelFormats")
    entries = [_entry(i, e) for i, e in enumerate(raw_entries)] if isinstance(raw_entries, list) else []
    requirements = spec.get("acceleratorRequirements")
    classes = requirements.get("acceleratorClasses") if isinstance(requirements, dict) else None
    size_range = spec.get("modelSizeRange")
    return RuntimeFacts(
        obj, SCOPES[obj.kind], entries, spec.get("disabled") is True,
        tuple(c for c in classes if isinstance(c, str)) if isinstance(classes, list) else (),
        _config_mode(spec.get("engineConfig")), _config_mode(spec.get("decoderConfig")),
        (_size_text(size_range.get("min")), _size_text(size_range.get("max")))
        if isinstance(size_range, dict) else None,
        any(e.auto is True for e in entries))


def _config_mode(config) -> str | None:
    annotations = config.get("annotations") if isinstance(config, dict) else None
    return _mode(annotations.get(MODE_KEY)) if isinstance(annotations, dict) else None


def _size_text(value) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)


@dataclass
class _Index:
    namespaced: dict[str, list[RuntimeFacts]]     # namespace -> ServingRuntimes, by name
    cluster: list[RuntimeFacts]                   # ClusterServingRuntimes, by name
    by_key: dict[tuple, list[RuntimeFacts]]       # (format, framework, arch, quant) -> runtimes able to qualify
    by_obj: dict[int, RuntimeFacts]
    fingerprint: tuple
    listed_classes: frozenset = frozenset()           # every class some runtime lists
    evaluations: dict = field(default_factory=dict)   # (namespace, id(model), Request) -> full Evaluation

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


# ---------------------------------------------------------------- runtime validation (api.md §7.1)

def _validate_entry(path: str, entry) -> None:
    if not isinstance(entry, dict):
        raise OmeError(_type_error(path, entry, "object"), field=path)
    for part in ("modelFormat", "modelFramework"):
        value = entry.get(part)
        if value is None:
            raise OmeError(f"{path}.{part}: Required value", field=f"{path}.{part}")
        if not isinstance(value, dict):
            raise OmeError(_type_error(f"{path}.{part}", value, "object"), field=f"{path}.{part}")
        if value.get("name") is None:
            raise OmeError(f"{path}.{part}.name: Required value", field=f"{path}.{part}.name")
        for key in ("name", "version", "operator"):
            _require_string(value, key, f"{path}.{part}.{key}")
        weight = value.get("weight")
        if weight is not None and (isinstance(weight, bool) or not isinstance(weight, int)):
            raise OmeError(_type_error(f"{path}.{part}.weight", weight, "integer"), field=f"{path}.{part}.weight")
    for key in ("modelArchitecture", "quantization", "name"):
        _require_string(entry, key, f"{path}.{key}")
    auto = entry.get("autoSelect")
    if auto is not None and not isinstance(auto, bool):
        raise OmeError(_type_error(f"{path}.autoSelect", auto, "boolean"), field=f"{path}.autoSelect")
    priority = entry.get("priority")
    if priority is not None:
        if isinstance(priority, bool) or not isinstance(priority, int):
            raise OmeError(_type_error(f"{path}.priority", priority, "integer"), field=f"{path}.priority")
        if priority < 1:
            raise OmeError(f"{path}.priority: Invalid value: {priority}: should be greater than or equal to 1",
                           field=f"{path}.priority")


def _validate_size_range(size_range) -> None:
    if size_range is None:
        return
    if not isinstance(size_range, dict):
        raise OmeError(_type_error("spec.modelSizeRange", size_range, "object"), field="spec.modelSizeRange")
    for key in ("min", "max"):
        _require_string(size_range, key, f"spec.modelSizeRange.{key}")


def _check_priorities(rt: Obj, entries: list) -> None:
    """Row 7: autoSelect entries sharing a name (absent = "") that both set priority must agree."""
    seen: dict[str, int] = {}
    for entry in entries:
        if entry.get("autoSelect") is not True or entry.get("priority") is None:
            continue
        name = entry.get("name") or ""
        if name in seen and seen[name] != entry["priority"]:
            raise OmeError(f"different priorities assigned for the model format {name} under the "
                           f"{rt.kind.lower()} {rt.name}")
        seen.setdefault(name, entry["priority"])


def _validate_model_strings(model: Obj) -> None:
    """§1.3: a non-string where selection reads a string is an error on the model."""
    spec = model.spec
    for part in ("modelFormat", "modelFramework"):
        value = spec.get(part)
        if value is None:
            continue
        if not isinstance(value, dict):
            raise model.error(_type_error(f"spec.{part}", value, "object"), f"spec.{part}")
        if part == "modelFramework" and value.get("name") is None:
            raise model.error(f"spec.{part}.name: Required value", f"spec.{part}.name")
        for key in ("name", "version"):
            if value.get(key) is not None and not isinstance(value[key], str):
                raise model.error(_type_error(f"spec.{part}.{key}", value[key], "string"), f"spec.{part}.{key}")
    for key in ("modelArchitecture", "quantization", "modelParameterSize"):
        if spec.get(key) is not None and not isinstance(spec[key], str):
            raise model.error(_type_error(f"spec.{key}", spec[key], "string"), f"spec.{key}")
    pipeline = spec.get("diffusionPipeline")
    if pipeline is not None and not isinstance(pipeline, dict):
        raise model.error(_type_error("spec.diffusionPipeline", pipeline, "object"), "spec.diffusionPipeline")


# ---------------------------------------------------------------- small helpers

def _replay(report: Report, warnings: Iterable) -> None:
    for text, ref, file in warnings:
        report.warn(text, ref=ref, file=file)


def _mapping(spec: dict, key: str, path: str) -> dict | None:
    value = spec.get(key)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise OmeError(_type_error(path, value, "object"), field=path)
    return value


def _string(mapping: dict, key: str, path: str) -> str | None:
    value = mapping.get(key)
    if value is not None and not isinstance(value, str):
        raise OmeError(_type_error(path, value, "string"), field=path)
    return value


def _require_string(mapping: dict, key: str, path: str) -> None:
    value = mapping.get(key)
    if value is not None and not isinstance(value, str):
        raise OmeError(_type_error(path, value, "string"), field=path)


def _str(value) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)


def _weight(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 1


def _type_error(path: str, value, expected: str) -> str:
    return f'{path}: Invalid value: "{type_name(value)}": must be of type {expected}'
