"""Check 4: a runtime's supportedModelFormats entries against the model (selection.md §3.3, §3.4, §6.4)."""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

from ..errors import ObjRef
from ..load import Obj
from .fields import _str, _weight
from .sizes import parse_size
from .validation import _validate_model_strings
from .versions import versions_match

if TYPE_CHECKING:
    from .runtimes import RuntimeFacts

PIPELINE_COMPONENTS = ("scheduler", "textEncoder", "tokenizer", "transformer", "vae")


def entry_matches(entry: dict, model_spec: dict) -> str | None:
    """None when the entry matches the model (§3.3), else the per-entry reason of §6.4."""
    return _entry_reason(_entry(0, entry), _model(model_spec))


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
