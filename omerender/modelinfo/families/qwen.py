"""Qwen 1, 2/2.5, 2-VL/2.5-VL, 3, 3-MoE, 3-VL and 3.5: OME's qwen*.go."""
from __future__ import annotations

from ..jsonconf import Config
from ..params import model_params
from .base import Model, shape_basis

SENTENCE_TRANSFORMERS = "config_sentence_transformers.json"


def _dense(c: Config) -> int:
    return model_params(c.int("hidden_size"), c.int("num_hidden_layers"), c.int("intermediate_size"),
                        c.int("vocab_size"))


def _sized(c: Config, table: dict, estimate, **kw) -> Model:
    shape = (c.int("hidden_size"), c.int("num_hidden_layers"))
    context = kw.pop("context", None)
    if context is None:
        context = c.int("seq_length") or c.int("max_position_embeddings")
    return Model(c.str("model_type"), c.architecture(), context, quant_method=c.quant_method(),
                 estimate=table.get(shape) or estimate(), basis=shape_basis(c, "hidden_size", "num_hidden_layers"),
                 **kw)


def load_qwen(c: Config, source) -> Model:
    table = {(4096, 32): 7_000_000_000, (5120, 40): 14_000_000_000, (8192, 80): 72_000_000_000}
    return _sized(c, table, lambda: _dense(c))


def load_qwen2(c: Config, source) -> Model:
    table = {(3584, 28): 7_000_000_000, (8192, 40): 34_000_000_000, (7680, 64): 72_000_000_000}
    return _sized(c, table, lambda: _dense(c))


def load_qwen2_vl(c: Config, source) -> Model:
    table = {(1536, 28): 2_000_000_000, (3584, 28): 7_000_000_000, (8192, 80): 72_000_000_000}
    vision = c.sub("vision_config")

    def estimate():
        tower = vision.int("embed_dim") ** 2 * vision.int("depth") * 4 if vision.int("depth") > 0 else 0
        return _dense(c) + tower
    return _sized(c, table, estimate, context=c.int("max_position_embeddings"), vision=True)


def load_qwen3(c: Config, source) -> Model:
    table = {(2560, 36): 4_000_000_000, (4096, 36): 8_000_000_000}
    similarity = c.str("similarity_fn_name")
    st = source.read_json_beside(SENTENCE_TRANSFORMERS)
    if st is not None:  # OME takes the sentence-transformers file's value, set or not
        similarity = Config(st, SENTENCE_TRANSFORMERS).str("similarity_fn_name")
    return _sized(c, table, lambda: _dense(c), embedding=bool(similarity))


def load_qwen3_moe(c: Config, source) -> Model:
    table = {(2048, 48): 30_000_000_000, (4096, 94): 235_000_000_000}
    return _sized(c, table, lambda: _dense(c))


def load_qwen3_vl(c: Config, source) -> Model:
    text, vision = c.sub("text_config"), c.sub("vision_config")
    return Model(c.str("model_type"), c.architecture(), text.int("max_position_embeddings"),
                 quant_method=c.quant_method(), vision=True, estimate=_qwen3_vl_text(text) + _qwen3_vl_vision(vision),
                 basis=shape_basis(text, "hidden_size", "num_hidden_layers", "num_experts"))


def _qwen3_vl_text(t: Config) -> int:
    hidden, layers, experts, vocab = t.int("hidden_size"), t.int("num_hidden_layers"), t.int("num_experts"), t.int(
        "vocab_size")
    if experts <= 0:
        return _dense(t)
    per_layer = (4 * hidden * hidden + experts * 3 * hidden * t.int("moe_intermediate_size") + hidden * experts
                 + 2 * hidden)
    return 2 * hidden * vocab + layers * per_layer


def _qwen3_vl_vision(v: Config) -> int:
    hidden, depth = v.int("hidden_size"), v.int("depth")
    if hidden <= 0 or depth <= 0:
        return 0
    return (v.int("patch_size") ** 2 * v.int("in_channels") * hidden + v.int("num_position_embeddings") * hidden
            + depth * (4 * hidden * hidden + 2 * hidden * v.int("intermediate_size") + 2 * hidden)
            + hidden * v.int("out_hidden_size"))


LOADERS = {"qwen": load_qwen, "qwen2": load_qwen2, "qwen2_vl": load_qwen2_vl, "qwen2_5_vl": load_qwen2_vl,
           "qwen3": load_qwen3, "qwen3_moe": load_qwen3_moe, "qwen3_vl": load_qwen3_vl,
           "qwen3_vl_moe": load_qwen3_vl, "qwen3_5": load_qwen3_vl, "qwen3_5_moe": load_qwen3_vl}
