"""The runtime-webhook checks that bear on selection (api.md §7.1 row 7) and the model's string fields
(selection.md §1.3)."""
from __future__ import annotations

from omerender.errors import OmeError
from ..load import Obj
from .fields import _require_string, _type_error

FORMAT_REQUIRED = "invalid model specification: modelFormat.name: model format name is required"
# The fields of a model that selection reads and OME's model agent records once it has read the model's files
# (docs: concepts/models/base-model.md, "Model metadata"); a catalog model lacks them until the agent has run.
AGENT_FIELDS = ("modelFormat", "modelFramework", "modelArchitecture", "modelParameterSize")


def format_required(model: Obj, prefix: str = "", user: Obj | None = None) -> OmeError:
    """OME's error for a model without a format, placed at the model's ``spec.modelFormat.name`` and naming the
    fix: ``omerender model-info --update`` fills what OME's agent would; ``user``: the InferenceService."""
    unset = [f for f in AGENT_FIELDS if f != "modelFormat" and not model.spec.get(f)]
    also = f" (and {', '.join(unset)}, also unset here)" if unset else ""
    file = model.file if model.file and not model.file.startswith("<") else "<model file>"
    used = f" (used by InferenceService {user.namespace}/{user.name})" if user is not None else ""
    return model.error(f"{prefix}{FORMAT_REQUIRED}; OME's model agent records modelFormat{also} once it has read "
                       f"the model's files: run omerender model-info --update {file} to fill them now{used}",
                       "spec.modelFormat.name")


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
