"""Phi, Phi-3, Phi-3 Vision, Phi-3 Small and Phi-3.5 MoE: OME's phi*.go."""
from __future__ import annotations

from ..jsonconf import Config
from ..params import model_params
from .base import Model, shape_basis


def _phi(c: Config, estimate: int, **kw) -> Model:
    return Model(c.str("model_type"), c.architecture(), c.int("max_position_embeddings"), estimate=estimate,
                 basis=shape_basis(c, "hidden_size", "num_hidden_layers"), **kw)


def _shape(c: Config) -> tuple[int, int]:
    return c.int("hidden_size"), c.int("num_hidden_layers")


def load_phi(c: Config, source) -> Model:
    return _phi(c, 0)  # OME has no estimate for Phi: only the safetensors count


def load_phi3(c: Config, source) -> Model:
    return _phi(c, 3_800_000_000 if _shape(c) == (3072, 32) else 0)


def load_phi3_v(c: Config, source) -> Model:
    if c.has("img_processor"):
        c.sub("img_processor")  # OME decodes it as an object
    estimate = 14_000_000_000 if _shape(c) == (3072, 32) else model_params(
        c.int("hidden_size"), c.int("num_hidden_layers"), c.int("intermediate_size"), c.int("vocab_size"))
    return _phi(c, estimate, vision=c.has("img_processor"))


def load_phi3small(c: Config, source) -> Model:
    return _phi(c, 7_000_000_000 if _shape(c) == (4096, 32) else 0)


def load_phimoe(c: Config, source) -> Model:
    known = _shape(c) == (4096, 32) and c.int("num_local_experts") == 16
    return _phi(c, 16_000_000_000 if known else 0)


LOADERS = {"phi": load_phi, "phi3": load_phi3, "phi3_v": load_phi3_v, "phi3small": load_phi3small,
           "phimoe": load_phimoe}
