"""Llama 1–3 (``llama``), Llama 3.2 Vision (``mllama``), Llama 4 (``llama4``): OME's llama.go, mllama.go, llama4.go."""
from __future__ import annotations

from ..jsonconf import Config
from ..params import text_params
from .base import Model, shape_basis

_LLAMA_SIZES = {(8192, 80): 70_000_000_000, (8192, 82): 70_000_000_000, (16384, 126): 405_000_000_000,
                (3072, 28): 3_000_000_000, (2048, 16): 1_000_000_000}


def load_llama(c: Config, source) -> Model:
    c.positive("Llama", "hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
               "vocab_size", "max_position_embeddings")
    if c.int("num_key_value_heads") > c.int("num_attention_heads"):
        raise c.invalid("Llama", "num_key_value_heads cannot be greater than num_attention_heads")
    hidden, layers = c.int("hidden_size"), c.int("num_hidden_layers")
    estimate = _LLAMA_SIZES.get((hidden, layers)) or _llama_architecture(hidden, layers, c.int("intermediate_size"))
    return Model(c.str("model_type"), c.architecture("LlamaForCausalLM"), c.int("max_position_embeddings"),
                 quant_method=c.quant_method(), estimate=estimate,
                 basis=shape_basis(c, "hidden_size", "num_hidden_layers"))


def _llama_architecture(hidden: int, layers: int, intermediate: int) -> int:
    """OME's estimateParamsFromArchitecture, rounded down to whole billions as OME does."""
    intermediate = intermediate or hidden * 8 // 3
    count = (hidden * 32000 + layers * (3 * hidden * hidden + hidden)
             + layers * (hidden * intermediate * 2 + hidden + intermediate) + layers * 2 * hidden)
    return count // 1_000_000_000 * 1_000_000_000


def load_mllama(c: Config, source) -> Model:
    text, vision = c.sub("text_config"), c.sub("vision_config")
    shape = (text.int("num_hidden_layers"), text.int("hidden_size"))
    estimate = {(40, 4096): 11_000_000_000, (100, 8192): 90_000_000_000}.get(shape) or (
        _tower(text) + _tower(vision))
    return Model(c.str("model_type"), c.architecture("MllamaForConditionalGeneration"),
                 text.int("max_position_embeddings"), vision=True, estimate=estimate,
                 basis=shape_basis(text, "hidden_size", "num_hidden_layers"))


def _tower(c: Config) -> int:
    return text_params(c.int("hidden_size"), c.int("num_hidden_layers"), c.int("intermediate_size"))


def load_llama4(c: Config, source) -> Model:
    text = c.sub("text_config")
    hidden, layers, experts = text.int("hidden_size"), text.int("num_hidden_layers"), text.int("num_local_experts")
    known = {128: 402_000_000_000, 16: 17_000_000_000}.get(experts) if (layers, hidden) == (48, 5120) else None
    if known:
        estimate = known
    elif experts > 1:
        inter = text.int("intermediate_size")
        estimate = hidden * hidden * 4 * layers + hidden * inter * 2 * layers * experts + hidden * experts * layers
    else:
        estimate = _tower(text)
    quant = c.sub("quantization_config").str("format") if c.has("quantization_config") else ""
    return Model(c.str("model_type"), c.architecture("Llama4ForConditionalGeneration"),
                 text.int("max_position_embeddings"), quant_method=quant, vision=c.has("vision_config"),
                 estimate=estimate, basis=shape_basis(text, "hidden_size", "num_hidden_layers", "num_local_experts"))


LOADERS = {"llama": load_llama, "mllama": load_mllama, "llama4": load_llama4}
