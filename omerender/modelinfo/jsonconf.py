"""Typed reads from a Hugging Face config, with the strictness of OME's Go decoder.

OME decodes config.json into Go structs: a field declared ``int`` that holds a string or a fraction makes the
whole load fail, a missing or null one reads as 0. :class:`Config` reads the same way, one field at a time.
"""
from __future__ import annotations

import sys

from omerender.errors import OmeError

INT64_MAX = (1 << 63) - 1
FLOAT64_MAX = sys.float_info.max


class Config:
    """One JSON object of a config file; ``where`` names it in messages (``config.json: text_config``)."""

    def __init__(self, data, where: str):
        self.data = data if isinstance(data, dict) else {}
        self.where = where

    def int(self, key: str) -> int:
        value = self.data.get(key)
        if value is None:
            return 0
        if isinstance(value, bool) or not isinstance(value, int) or not -INT64_MAX - 1 <= value <= INT64_MAX:
            raise OmeError(f"{self.where}: {key} must be an integer, got {value!r}")
        return value

    def float(self, key: str) -> float:
        value = self.data.get(key)
        if value is None:
            return 0.0
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise OmeError(f"{self.where}: {key} must be a number, got {value!r}")
        if not -FLOAT64_MAX <= value <= FLOAT64_MAX:  # Go's decoder refuses what a float64 cannot hold
            raise OmeError(f"{self.where}: {key} is out of the range of a float64")
        return float(value)

    def str(self, key: str) -> str:
        value = self.data.get(key)
        if value is None:
            return ""
        if not isinstance(value, str):
            raise OmeError(f"{self.where}: {key} must be a string, got {value!r}")
        return value

    def has(self, key: str) -> bool:
        """Present and not null: a Go pointer field that is set."""
        return self.data.get(key) is not None

    def sub(self, key: str) -> "Config":
        value = self.data.get(key)
        if value is not None and not isinstance(value, dict):
            raise OmeError(f"{self.where}: {key} must be an object")
        return Config(value, f"{self.where}: {key}")

    def architecture(self, default: str = "") -> str:
        """The first of ``architectures``, as OME's GetArchitecture reads it."""
        value = self.data.get("architectures")
        if value is None:
            return default
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise OmeError(f"{self.where}: architectures must be a list of strings")
        return value[0] if value else default

    def quant_method(self, field: str = "quant_method") -> str:
        """``quantization_config.<field>`` when quantization_config is set."""
        return self.sub("quantization_config").str(field) if self.has("quantization_config") else ""

    def invalid(self, family: str, text: str) -> OmeError:
        return OmeError(f"{self.where}: invalid {family} configuration: {text}")

    def positive(self, family: str, *keys: str) -> None:
        """OME's Validate(): each key must be positive, or the loader fails."""
        for key in keys:
            value = self.int(key)
            if value <= 0:
                raise self.invalid(family, f"{key} must be positive, got {value}")
