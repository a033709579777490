"""Dense decoder families OME sizes by shape: Baichuan, ChatGLM/GLM-4, Command-R, DBRX, EXAONE, InternLM,
MiniCPM, StableLM, XVERSE (OME's baichuan.go, chatglm.go, command_r.go, dbrx.go, exaone.go, internlm.go,
minicpm.go, stablelm.go, xverse.go)."""
from __future__ import annotations

from ..jsonconf import Config
from ..params import model_params
from .base import Model, shape_basis

B = 1_000_000_000


def _dense(c: Config, table: dict, context: int, layers_key: str = "num_hidden_layers", vocab: int = 0,
           default_arch: str = "") -> Model:
    hidden, layers = c.int("hidden_size"), c.int(layers_key)
    estimate = table.get((hidden, layers)) or model_params(hidden, layers, c.int("intermediate_size"),
                                                            vocab or c.int("vocab_size"))
    return Model(c.str("model_type"), c.architecture(default_arch), context, estimate=estimate,
                 basis=shape_basis(c, "hidden_size", layers_key))


def load_baichuan(c: Config, source) -> Model:
    context = c.int("model_max_length") or c.int("max_position_embeddings")
    return _dense(c, {(4096, 32): 7 * B, (5120, 40): 13 * B}, context)


def load_exaone(c: Config, source) -> Model:
    return _dense(c, {(4096, 32): 7_800_000_000, (2560, 42): 2_800_000_000}, c.int("max_position_embeddings"),
                  layers_key="num_layers", vocab=c.int("vocab_size") or 102400)


def load_internlm(c: Config, source) -> Model:
    table = {(4096, 32): 7 * B, (6144, 48): 20 * B, (2048, 24): 1_800_000_000}
    return _dense(c, table, c.int("max_position_embeddings"))


def load_minicpm(c: Config, source) -> Model:
    table = {(2560, 62): 4 * B, (2304, 40): 2_400_000_000, (1536, 52): 1_200_000_000}
    return _dense(c, table, c.int("max_position_embeddings"))


def load_stablelm(c: Config, source) -> Model:
    return _dense(c, {(2560, 32): 3 * B, (2048, 24): 1_600_000_000}, c.int("max_position_embeddings"))


def load_xverse(c: Config, source) -> Model:
    table = {(4096, 32): 7 * B, (5120, 40): 13 * B, (6144, 80): 65 * B}
    return _dense(c, table, c.int("max_position_embeddings"))


def load_command_r(c: Config, source) -> Model:
    hidden, layers = c.int("hidden_size"), c.int("num_hidden_layers")
    table = {(8192, 40): 35 * B}
    if layers >= 64 and hidden >= 12288:
        table[(hidden, layers)] = 104 * B
    return _dense(c, table, c.int("max_position_embeddings"))


def load_chatglm(c: Config, source) -> Model:
    hidden, layers = c.int("hidden_size"), c.int("num_layers")
    known = {(4096, 28): 6 * B, (4096, 40): 9 * B}.get((hidden, layers))
    vocab, ffn = c.int("padded_vocab_size") or 65024, c.int("ffn_hidden_size")
    estimate = known or (hidden * vocab + layers * hidden * hidden * 4 + layers * (hidden * ffn * 2 + hidden + ffn)
                         + layers * 2 * hidden)
    return Model(c.str("model_type"), c.architecture(), c.int("seq_length"), estimate=estimate,
                 basis=shape_basis(c, "hidden_size", "num_layers"))


def load_dbrx(c: Config, source) -> Model:
    d, layers, vocab = c.int("d_model"), c.int("n_layers"), c.int("vocab_size")
    ffn = c.sub("ffn_config")
    experts = ffn.int("moe_num_experts")
    if (layers, d) == (48, 6144):
        estimate = 132 * B
    else:
        estimate = vocab * d + layers * (4 * d * d + experts * 2 * d * ffn.int("ffn_hidden_size") + d * experts + 2 * d)
        if not c.data.get("tie_word_embeddings"):
            estimate += vocab * d
    return Model(c.str("model_type"), c.architecture("DbrxForCausalLM"), c.int("max_seq_len"), estimate=estimate,
                 basis=shape_basis(c, "d_model", "n_layers"))


LOADERS = {"baichuan": load_baichuan, "exaone": load_exaone, "internlm": load_internlm, "internlm2": load_internlm,
           "minicpm": load_minicpm, "minicpm3": load_minicpm, "stablelm": load_stablelm, "xverse": load_xverse,
           "cohere": load_command_r, "command-r": load_command_r, "chatglm": load_chatglm, "dbrx": load_dbrx}
