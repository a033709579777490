"""One loader per model_type, as OME registers them; unknown types use the generic fallback."""
from __future__ import annotations

from . import bert, deepseek, gemma, gpt_oss, llama, llava, mistral, others, phi, qwen
from .generic import load_generic

LOADERS = {}
for _module in (bert, deepseek, gemma, gpt_oss, llama, llava, mistral, others, phi, qwen):
    LOADERS.update(_module.LOADERS)


def loader_for(model_type: str):
    return LOADERS.get(model_type, load_generic)
