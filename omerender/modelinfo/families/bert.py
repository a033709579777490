"""BERT-style embedding models (``bert``: BGE, E5 ...): OME's bert.go."""
from __future__ import annotations

from ..jsonconf import Config
from .base import Model, shape_basis


def load_bert(c: Config, source) -> Model:
    hidden, layers = c.int("hidden_size"), c.int("num_hidden_layers")
    known = {(768, 12): 110_000_000, (1024, 24): 340_000_000}.get((hidden, layers))
    vocab = c.int("vocab_size") or 30522
    estimate = known or ((vocab + c.int("max_position_embeddings") + c.int("type_vocab_size")) * hidden
                         + layers * (4 * hidden * hidden + 2 * hidden * c.int("intermediate_size") + 2 * hidden)
                         + hidden * hidden)
    return Model(c.str("model_type"), c.architecture(), c.int("max_position_embeddings"), embedding=True,
                 estimate=estimate, basis=shape_basis(c, "hidden_size", "num_hidden_layers"))


LOADERS = {"bert": load_bert}
