"""Diffusers pipelines (``model_index.json``): OME's diffusion.go and GenericDiffusionModelConfig."""
from __future__ import annotations

import posixpath

from omerender.errors import OmeError
from ..jsonconf import Config
from .base import Model

MODEL_INDEX = "model_index.json"
_NAMED = {"scheduler": "scheduler", "text_encoder": "textEncoder", "tokenizer": "tokenizer",
          "transformer": "transformer", "unet": "transformer", "vae": "vae"}


def _string(values: dict, *keys: str) -> str:
    return next((values[k] for k in keys if isinstance(values.get(k), str) and values[k]), "")


def _component(raw) -> dict | None:
    if isinstance(raw, list):
        parts = [p for p in raw]
        if not parts or not all(isinstance(p, (str, type(None))) for p in parts):
            return None
        return {"type": parts[0] or ""} if len(parts) == 1 else {"library": parts[0] or "", "type": parts[1] or ""}
    if isinstance(raw, dict):
        kind, library = _string(raw, "_class_name", "class_name", "className", "type"), _string(raw, "_library",
                                                                                                 "library")
        return {"library": library, "type": kind} if kind or library else None
    return None


def pipeline(data: dict) -> dict:
    """The pipeline spec: class name, diffusers version, named and additional components."""
    spec = {"className": _string(data, "_class_name", "class_name", "className"),
            "diffusersVersion": _string(data, "_diffusers_version", "diffusers_version")}
    components, additional = {}, {}
    for key in sorted(data):
        component = None if key.startswith("_") else _component(data[key])
        if component is None:
            continue
        if key.lower() in _NAMED:
            components[key.lower()] = component
        else:
            additional[key] = component
    if not spec["className"] and not components and not additional:
        raise OmeError(f"{MODEL_INDEX}: no diffusion pipeline metadata (_class_name or components)")
    spec["components"], spec["additional"] = components, additional
    return spec


def load_diffusion(data: dict, source, base: str = "") -> Model:
    """``base``: the directory of model_index.json, which its components' directories are in."""
    spec = pipeline(data)
    encoder_path = posixpath.join(base, "text_encoder", "config.json")
    encoder = source.read_json_at(encoder_path)
    context = Config(encoder, encoder_path).int("max_position_embeddings") if encoder else 0
    model = Model("diffusers", spec["className"], max(context, 0), vision=True, diffusion=True,
                  basis="no estimate for diffusers pipelines")
    model.diffusers_version = spec["diffusersVersion"]
    model.extra["pipeline"] = spec
    return model


def component_dirs(spec: dict, has_dir) -> tuple[list[str], list[str]]:
    """Required (text_encoder, transformer or unet, vae) and optional (additional) component directories."""
    transformer = "transformer" if has_dir("transformer") or not has_dir("unet") else "unet"
    return ["text_encoder", transformer, "vae"], sorted(spec["additional"])
