"""LLaVA (``llava``): OME's llava.go."""
from __future__ import annotations

from ..jsonconf import Config
from ..params import model_params
from .base import Model


def load_llava(c: Config, source) -> Model:
    text, vision = c.sub("text_config"), c.sub("vision_config")
    return Model(c.str("model_type"), c.architecture(), text.int("max_position_embeddings"), vision=True,
                 estimate=_estimate(text, vision), basis="OME's estimate from text_config and vision_config")


def _estimate(text: Config, vision: Config) -> int:
    if vision.int("num_hidden_layers") == 24 and text.int("vocab_size") >= 32000:
        return 7_500_000_000  # OME: LLaVA 1.5 7B
    total = 0
    if text.str("model_type") == "llama":
        if text.int("hidden_size") > 0:
            total += model_params(text.int("hidden_size"), text.int("num_hidden_layers"),
                                  text.int("intermediate_size"), text.int("vocab_size"))
        elif text.int("vocab_size") >= 32000:
            total += 7_000_000_000
    if vision.str("model_type") == "clip_vision_model":
        hidden, patch = vision.int("hidden_size"), vision.int("patch_size")
        grid = vision.int("image_size") // patch if patch else 0
        total += (patch * patch * 3 * hidden + grid * grid * hidden
                  + vision.int("num_hidden_layers") * (4 * hidden * hidden + 2 * hidden * vision.int(
                      "intermediate_size") + 2 * hidden))
    if vision.int("hidden_size") > 0 and text.int("hidden_size") > 0:
        total += 2 * vision.int("hidden_size") * text.int("hidden_size")
    return total


LOADERS = {"llava": load_llava}
