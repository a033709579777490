"""OME's fallback for model types it has no loader for (GenericModelConfig): common fields, read from nested
``text_config`` / ``llm_config`` / ``language_config`` where the top level lacks them."""
from __future__ import annotations

from ..jsonconf import Config
from ..params import moe_params
from .base import Model

_NESTED = ("text_config", "llm_config", "language_config")
_FIELDS = ("hidden_size", "num_hidden_layers", "intermediate_size", "max_position_embeddings", "vocab_size",
           "n_shared_experts", "moe_intermediate_size")


def load_generic(c: Config, source) -> Model:
    values = {key: c.int(key) for key in _FIELDS + ("n_routed_experts", "max_sequence_length")}
    version = c.str("transformers_version")
    nested = next((key for key in _NESTED if key in c.data), None)
    if nested is not None and isinstance(c.data[nested], dict):
        sub = c.sub(nested)
        for key in _FIELDS:
            values[key] = values[key] or sub.int(key)
        version = version or sub.str("transformers_version")
        if not values["n_routed_experts"]:
            values["n_routed_experts"] = sub.int("n_routed_experts") or sub.int("num_local_experts") or sub.int(
                "num_experts")
    if not values["n_routed_experts"]:
        values["n_routed_experts"] = c.int("num_local_experts") or c.int("num_experts")
    model = Model(c.str("model_type"), c.architecture(),
                  values["max_position_embeddings"] or values["max_sequence_length"],
                  quant_method=c.quant_method(), vision="vision_config" in c.data, estimate=_estimate(values),
                  basis="OME's generic estimate from hidden_size, num_hidden_layers and vocab_size")
    model.transformers_version = version
    return model


def _estimate(v: dict) -> int:
    hidden, layers = v["hidden_size"], v["num_hidden_layers"]
    if hidden <= 0 or layers <= 0:
        return 0
    if v["n_routed_experts"] > 0:
        return moe_params(hidden, layers, v["intermediate_size"], v["moe_intermediate_size"], v["n_routed_experts"],
                          v["n_shared_experts"], v["vocab_size"])
    return v["vocab_size"] * hidden + layers * 12 * hidden * hidden
