"""GPT-OSS (``gpt_oss``): OME's gpt_oss.go."""
from __future__ import annotations

from ..jsonconf import Config
from .base import Model, shape_basis


def load_gpt_oss(c: Config, source) -> Model:
    c.positive("GPT-OSS", "hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
               "vocab_size", "max_position_embeddings", "num_local_experts")
    if c.int("num_experts_per_tok") <= 0 and c.int("experts_per_token") <= 0:
        raise c.invalid("GPT-OSS", "either num_experts_per_tok or experts_per_token must be positive")
    if c.int("num_key_value_heads") > c.int("num_attention_heads"):
        raise c.invalid("GPT-OSS", "num_key_value_heads cannot be greater than num_attention_heads")
    shape = (c.int("hidden_size"), c.int("num_hidden_layers"), c.int("num_local_experts"))
    estimate = {(2880, 24, 32): 20_000_000_000, (2880, 36, 128): 120_000_000_000}.get(shape) or _estimate(c)
    return Model(c.str("model_type"), c.architecture("GptOssForCausalLM"), c.int("max_position_embeddings"),
                 quant_method=c.quant_method(), estimate=estimate,
                 basis=shape_basis(c, "hidden_size", "num_hidden_layers", "num_local_experts"))


def _estimate(c: Config) -> int:
    """OME's estimateGptOssParams (experts counted once, not per layer, as OME does), in whole billions."""
    hidden, layers, experts, vocab = (c.int("hidden_size"), c.int("num_hidden_layers"), c.int("num_local_experts"),
                                      c.int("vocab_size"))
    total = (vocab * hidden + layers * 4 * hidden * hidden + experts * 3 * hidden * c.int("intermediate_size")
             + layers * hidden * experts + layers * 2 * hidden)
    if not c.data.get("tie_word_embeddings"):
        total += hidden * vocab
    return total // 1_000_000_000 * 1_000_000_000


LOADERS = {"gpt_oss": load_gpt_oss}
