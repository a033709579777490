"""Check 4: a runtime's supportedModelFormats entries against the model (selection.md §3.3, §3.4, §6.4)."""
from __future__ import annotations

from .facts import Entry, ModelFacts, RuntimeFacts, _entry, _model
from .versions import versions_match

PIPELINE_COMPONENTS = ("scheduler", "textEncoder", "tokenizer", "transformer", "vae")


def entry_matches(entry: dict, model_spec: dict) -> str | None:
    """None when the entry matches the model (§3.3), else the per-entry reason of §6.4."""
    return _entry_reason(_entry(0, entry), _model(model_spec))


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
