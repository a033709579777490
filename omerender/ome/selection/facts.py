"""What selection reads of a model, a runtime and its supportedModelFormats entries (selection.md §1, §3.3):
the facts every check compares, each read once from the spec."""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from omerender.errors import ObjRef
from ..load import Obj
from ..runtimes.components import MODE_KEY
from ..shared import render_table
from .fields import _str, _weight, parse_size
from .validation import _validate_model_strings

SCOPES = {"ServingRuntime": "Namespaced", "ClusterServingRuntime": "Cluster"}
MODES = ("RawDeployment", "OMENative", "MultiNode", "VirtualDeployment")


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
    """Read once per model in a render (ome.shared); a model that fails its checks is read again each time, so
    each InferenceService gets the error."""
    table = render_table()
    found = table.get(("model facts", id(model)))
    if found is not None and found[0] is model:
        return found[1]
    _validate_model_strings(model)
    facts = _model(model.spec, model.ref, model.file)
    table[("model facts", id(model))] = (model, facts)
    return facts


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


def runtime_facts_of(obj: Obj, spec: dict) -> RuntimeFacts:
    """:func:`_runtime_facts`, once per runtime and spec in a render (ome.shared); both are kept with the facts, so
    a spec made for one call (a pinned snapshot) cannot pass for another that takes its place in memory."""
    table = render_table()
    found = table.get(("runtime facts", id(obj), id(spec)))
    if found is not None and found[0] is obj and found[1] is spec:
        return found[2]
    facts = _runtime_facts(obj, spec)
    table[("runtime facts", id(obj), id(spec))] = (obj, spec, facts)
    return facts


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
        (_str(size_range.get("min")), _str(size_range.get("max")))
        if isinstance(size_range, dict) else None,
        any(e.auto is True for e in entries))


def _config_mode(config) -> str | None:
    annotations = config.get("annotations") if isinstance(config, dict) else None
    return _mode(annotations.get(MODE_KEY)) if isinstance(annotations, dict) else None


def _mode(value) -> str | None:
    return value if value in MODES else None
