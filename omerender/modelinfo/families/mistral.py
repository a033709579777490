"""Mistral (``mistral``, embedding models such as E5 included) and Mixtral: OME's mistral.go and mixtral.go."""
from __future__ import annotations

from ..jsonconf import Config
from .base import Model, shape_basis

_CORE = ("hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "vocab_size",
         "max_position_embeddings")


def load_mistral(c: Config, source) -> Model:
    c.positive("Mistral", *_CORE)
    seven_b = c.str("model_type") == "mistral" and (c.int("hidden_size"), c.int("num_hidden_layers")) == (4096, 32)
    # OME's Mistral loader reports every Mistral model as an embedding model.
    return Model(c.str("model_type"), c.architecture("MistralModel"), c.int("max_position_embeddings"),
                 embedding=True, estimate=7_000_000_000 if seven_b else 0,
                 basis=shape_basis(c, "hidden_size", "num_hidden_layers"))


def load_mixtral(c: Config, source) -> Model:
    c.positive("Mixtral", *_CORE, "num_local_experts", "num_experts_per_tok")
    return Model(c.str("model_type"), c.architecture("MixtralForCausalLM"), c.int("max_position_embeddings"),
                 estimate=46_700_000_000, basis="OME's fixed estimate for Mixtral 8x7B")


LOADERS = {"mistral": load_mistral, "mixtral": load_mixtral}
