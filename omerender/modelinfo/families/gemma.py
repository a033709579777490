"""Gemma 1, 2 and 3 text (``gemma``, ``gemma2``, ``gemma3_text``) and Gemma 3 multimodal: OME's gemma.go, gemma3.go."""
from __future__ import annotations

from omerender.errors import OmeError
from ..jsonconf import INT64_MAX, Config
from ..params import model_params, text_params
from .base import Model, shape_basis

_SIZES = {(2048, 18): 2_000_000_000, (2304, 26): 2_600_000_000, (3072, 28): 7_000_000_000,
          (3584, 42): 9_000_000_000}


def load_gemma(c: Config, source) -> Model:
    c.positive("Gemma", "hidden_size", "num_hidden_layers", "num_attention_heads", "vocab_size")
    shape = (c.int("hidden_size"), c.int("num_hidden_layers"))
    estimate = _SIZES.get(shape) or model_params(*shape, c.int("intermediate_size"), c.int("vocab_size"))
    return Model(c.str("model_type"), c.architecture(), c.int("max_position_embeddings"), estimate=estimate,
                 basis=shape_basis(c, "hidden_size", "num_hidden_layers"))


def load_gemma3(c: Config, source) -> Model:
    text, vision = c.sub("text_config"), c.sub("vision_config")
    if (text.int("hidden_size"), text.int("num_hidden_layers")) == (5376, 62):
        estimate = 32_000_000_000
    else:
        estimate = sum(text_params(t.int("hidden_size"), t.int("num_hidden_layers"), t.int("intermediate_size"))
                       for t in (text, vision))
    return Model(c.str("model_type"), c.architecture(), _gemma3_context(text), vision=True, estimate=estimate,
                 basis=shape_basis(text, "hidden_size", "num_hidden_layers"))


def _gemma3_context(text: Config) -> int:
    """OME reads Gemma 3's context from its sliding window (scaled by rope_scaling.factor), else 8192."""
    window = text.int("sliding_window")
    factor = text.sub("rope_scaling").float("factor") if text.has("rope_scaling") else 0.0
    if factor > 0 and window > 0:
        if not window * factor <= INT64_MAX:
            raise OmeError(f"{text.where}: sliding_window {window} times rope_scaling.factor {factor!r} is past the "
                           "largest context OME can hold (an int64)")
        return int(window * factor)
    return window if window > 0 else 8192


LOADERS = {"gemma": load_gemma, "gemma2": load_gemma, "gemma3_text": load_gemma, "gemma3": load_gemma3}
