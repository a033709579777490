"""``omerender model-info``: a BaseModel's metadata from its files, as OME's model agent computes it.

``families`` has one loader per architecture family (OME's pkg/hfutil/modelconfig), ``safetensors`` the exact
parameter count from headers, ``metadata`` the spec fields, ``update`` the in-place edit of model files, and
``sources``/``hub`` where files are read from.
"""
from .metadata import FIELDS, describe
from .sources import HUB_SECONDS, ReadBudget, LocalSource

__all__ = ["FIELDS", "HUB_SECONDS", "ReadBudget", "LocalSource", "describe", "open_source"]


def open_source(source: str, budget: ReadBudget | None = None):
    """A local directory, or ``hf://ORG/NAME[@REVISION]``."""
    if source.startswith("hf://"):
        from .hub import HubSource
        return HubSource(source, budget)
    return LocalSource(source, budget)
