"""The BaseModel spec fields OME's model agent derives from a model's files (extractModelMetadataFromHF)."""
from __future__ import annotations

import math
import posixpath

from omerender.errors import OmeError, Report
from .capabilities import capabilities
from .families import loader_for
from .families.diffusion import component_dirs, load_diffusion
from .jsonconf import Config
from .params import format_param_count
from .safetensors import count_dir
from .sources import Source

# The fields written, in the order --update appends them.
FIELDS = ("modelType", "modelArchitecture", "modelFormat", "modelFramework", "modelParameterSize", "maxTokens",
          "modelCapabilities", "quantization")


GI = 2 ** 30


def weights_quantity(total_bytes: int) -> str | None:
    """The size a weights volume needs for ``total_bytes`` of safetensors files: plus 10% for the configs,
    tokenizer and filesystem, rounded up to whole Gi (None when no size is known)."""
    if total_bytes <= 0:
        return None
    return f"{max(1, math.ceil(total_bytes * 11 / 10 / GI))}Gi"


def describe(source: Source, report: Report) -> tuple[dict, str | None]:
    """The spec fields for the model in ``source`` and the size of its weights (:func:`weights_quantity`)."""
    config_path, walked = source.find_config()
    if config_path is None:
        raise OmeError(f"{source.label}: no model_index.json or config.json in it or any directory below it")
    if walked:
        _say_walked(source, config_path, report)
    data = source.read_json_at(config_path)
    directory = posixpath.dirname(config_path)
    if posixpath.basename(config_path) == "model_index.json" and not data.get("model_type"):
        model = load_diffusion(data, source, directory)
        count, why, total = _diffusion_count(source, model.extra["pipeline"], directory)
    else:
        config = Config(data, config_path)
        if not config.str("model_type"):
            raise OmeError(f"{source.label}/{config_path}: model_type is missing or empty")
        model = loader_for(config.str("model_type"))(config, source)
        model.transformers_version = model.transformers_version or config.str("transformers_version")
        count, why, total = count_dir(source, directory)
    fields = _fields(model, _size(model, count, why, source, report))
    if model.model_type == "mistral" and "forcausallm" in model.architecture.lower():
        report.warn(f"modelCapabilities EMBEDDING is what OME's model agent records for every model_type mistral "
                    f"model (its Mistral loader reports all of them as embedding models), {model.architecture} "
                    "included; set spec.modelCapabilities by hand if this is a chat model", code="mistral-embedding")
    return fields, weights_quantity(total)


def _say_walked(source: Source, config_path: str, report: Report) -> None:
    passed = source.first_existing("config.json")
    if passed:  # only a model_index.json is looked for before them
        report.warn(f"read {config_path}, not {passed}: OME's model agent looks for a "
                    "model_index.json anywhere below the model directory before any config.json; move it out of "
                    "the model directory if it is not this model's", code="model-index-preferred")
    else:
        report.info(f"read {config_path}, found as OME's model agent finds it: by walking the model directory "
                    "(the last one its walk finds)", code="config-found-by-walk")


def _size(model, count, why, source: Source, report: Report) -> str | None:
    if count is not None:
        return format_param_count(count)
    if model.estimate > 0:
        size = format_param_count(model.estimate)
        report.warn(f"modelParameterSize {size} is {model.basis} ({why}); the exact count needs the model's "
                    "*.safetensors files in SOURCE", code="model-size-estimated")
        return size
    report.warn(f"modelParameterSize left out: {why}, and OME has no estimate for model_type {model.model_type}; "
                "point SOURCE at the model's *.safetensors files or set it by hand", code="model-size-unknown")
    return None


def _diffusion_count(source: Source, pipeline: dict, base: str) -> tuple[int | None, str, int]:
    required, optional = component_dirs(pipeline, lambda d: source.is_dir(posixpath.join(base, d)))
    total = size = 0
    for component in required + optional:
        directory = posixpath.join(base, component)
        if not source.exists(posixpath.join(directory, "config.json")):
            if component in required:
                return None, f"no {directory}/config.json", 0
            continue
        count, why, files = count_dir(source, directory)
        if count is None:
            if component in required:
                return None, why, 0
            continue
        total, size = total + count, size + files
    return total, "", size


def _fields(model, size: str | None) -> dict:
    if model.diffusion:
        version = model.diffusers_version
        fmt = {"name": "diffusers", "version": version}
        framework = {"name": "diffusers", "version": version}
    else:
        fmt = {"name": "safetensors", "version": "1.0.0"}
        framework = {"name": "transformers"}
        if model.transformers_version:
            framework["version"] = model.transformers_version
    fields = {"modelType": model.model_type, "modelArchitecture": model.architecture, "modelFormat": fmt,
              "modelFramework": framework, "modelParameterSize": size, "maxTokens": model.context_length,
              "modelCapabilities": capabilities(model.architecture, model.model_type, model.vision, model.embedding,
                                                model.diffusion),
              "quantization": _quantization(model.quant_method)}
    return {key: value for key, value in fields.items() if value not in (None, "", 0)}


def _quantization(method: str) -> str | None:
    method = method.lower()
    if "int4" in method:
        return "int4"
    if "fp8" in method:
        return "fp8"
    return None
