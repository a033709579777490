"""DeepSeek V3 and Kimi K2 (DeepSeek V3 architecture), DeepSeek-VL2 and Janus: OME's deepseek_v3.go, kimi_k2.go,
deepseek_vl.go."""
from __future__ import annotations

from ..jsonconf import Config
from ..params import model_params, moe_params
from .base import Model

_MOE_CORE = ("hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "vocab_size",
             "max_position_embeddings", "n_routed_experts", "num_experts_per_tok")


def load_deepseek_v3(c: Config, source) -> Model:
    c.positive("DeepSeek V3", *_MOE_CORE)
    return Model(c.str("model_type"), c.architecture(), c.int("max_position_embeddings"),
                 quant_method=c.quant_method(), estimate=685_000_000_000, basis="OME's fixed estimate for DeepSeek V3")


def load_kimi_k2(c: Config, source) -> Model:
    c.positive("Kimi-K2", *_MOE_CORE)
    return Model(c.str("model_type"), c.architecture(), c.int("max_position_embeddings"),
                 quant_method=c.quant_method(), estimate=1_500_000_000_000, basis="OME's fixed estimate for Kimi K2")


_VL_ARCH = {"deepseek_vl_v2": "DeepseekVLV2ForCausalLM", "multi_modality": "JanusMultiModalityCausalLM",
            "janus": "JanusMultiModalityCausalLM"}


def load_deepseek_vl(c: Config, source) -> Model:
    kind = c.str("model_type")
    lang = c.sub("language_config")
    context = lang.int("max_position_embeddings") if c.has("language_config") else 4096
    return Model(kind, c.architecture(_VL_ARCH.get(kind, "DeepseekVLForCausalLM")), context, vision=True,
                 estimate=_vl_estimate(c, lang), basis="OME's estimate from language_config and vision_config")


def _vl_estimate(c: Config, lang: Config) -> int:
    hidden, layers = lang.int("hidden_size"), lang.int("num_hidden_layers")
    known = {(1280, 12): 1_000_000_000, (2048, 24): 1_300_000_000}.get((hidden, layers))
    if c.has("language_config") and known:
        return known
    total = 0
    if c.has("language_config"):
        if lang.int("moe_intermediate_size") > 0:
            total += moe_params(hidden, layers, lang.int("intermediate_size"), lang.int("moe_intermediate_size"),
                                lang.int("n_routed_experts"), lang.int("n_shared_experts"), lang.int("vocab_size"))
        else:
            total += model_params(hidden, layers, lang.int("intermediate_size"), lang.int("vocab_size"))
    if c.has("vision_config"):
        vision = c.sub("vision_config")
        total += vision.int("width") ** 2 * vision.int("layers") * 4
    if c.has("projector_config"):
        total += c.sub("projector_config").int("n_embed") ** 2 * 2
    return total


LOADERS = {"deepseek_v3": load_deepseek_v3, "kimi_k2": load_kimi_k2, "deepseek_vl_v2": load_deepseek_vl,
           "janus": load_deepseek_vl, "multi_modality": load_deepseek_vl}
