"""What a family loader reads from a config: OME's HuggingFaceModel interface, minus the safetensors count."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..jsonconf import Config


@dataclass
class Model:
    model_type: str
    architecture: str
    context_length: int
    quant_method: str = ""
    vision: bool = False
    embedding: bool = False
    # OME's fallback when the safetensors headers cannot be read: (count, how it was obtained).
    estimate: int = 0
    basis: str = ""
    transformers_version: str = ""
    diffusers_version: str = ""
    diffusion: bool = False
    extra: dict = field(default_factory=dict)


Loader = Callable[[Config, "object"], Model]


def shape_basis(config: Config, *keys: str) -> str:
    return "OME's estimate from " + ", ".join(f"{k} {config.int(k)}" for k in keys)
