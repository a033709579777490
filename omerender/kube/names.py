"""Object names and the model-ready node selector key (render.md §8.1, §6.4).

Both follow OME's pkg/constants/constants.go: a name too long for its limit
becomes the first 8 hex digits of its SHA-256, ``-``, and the name's tail.
"""
from __future__ import annotations

import hashlib

MAX_NAME = 63
HASH_DIGITS = 8
TAIL_CHARS = 50
MODEL_LABEL_DOMAIN = "models.ome.io"
MAX_MODEL_LABEL_NAME = 49  # 63 minus "models.ome.io/"
CLUSTER_BASE_MODEL_PART = "clusterbasemodel"
BASE_MODEL_PART = "basemodel"
MIN_NAMESPACE_CHARS = 8


def _hash_prefix(s: str) -> str:
    return hashlib.sha256(s.encode("utf-8")).hexdigest()[:HASH_DIGITS]


def _truncate_with_hash(s: str, max_len: int) -> str:
    """``h(s, n)`` of render.md §6.4: ``s`` if it fits, else hash prefix + ``-`` + tail."""
    if len(s) <= max_len:
        return s
    tail_len = max_len - HASH_DIGITS - 1
    if tail_len <= 0:
        return _hash_prefix(s)[:max_len]
    return f"{_hash_prefix(s)}-{s[len(s) - tail_len:]}"


def trunc63(s: str) -> str:
    """A DNS label of at most 63 characters; a long name starts with its hash, a letter first."""
    if len(s) <= MAX_NAME:
        return s
    prefix = _hash_prefix(s)
    if prefix[0].isdigit():
        prefix = "a" + prefix[1:]  # a DNS-1035 name must start with a letter
    return f"{prefix}-{s[len(s) - (MAX_NAME - HASH_DIGITS - 1):]}"


def lws_name(comp_name: str) -> str:
    return "lws-" + comp_name[-TAIL_CHARS:]


def scaledobject_name(comp_name: str) -> str:
    return "scaledobject-" + comp_name[-TAIL_CHARS:]


def model_ready_key(model_kind: str, model_name: str, namespace: str | None) -> str:
    """The node label key OME's model agent sets when a model is ready on a node.

    ``model_kind`` is ``ClusterBaseModel`` or ``BaseModel``; a BaseModel needs its namespace.
    """
    if model_kind == "ClusterBaseModel":
        room = MAX_MODEL_LABEL_NAME - len(CLUSTER_BASE_MODEL_PART) - 1
        return f"{MODEL_LABEL_DOMAIN}/{CLUSTER_BASE_MODEL_PART}.{_truncate_with_hash(model_name, room)}"
    if model_kind != "BaseModel" or not namespace:
        raise ValueError(f"model_ready_key: need ClusterBaseModel, or BaseModel with a namespace; "
                         f"got {model_kind!r}, {namespace!r}")
    room = MAX_MODEL_LABEL_NAME - len(BASE_MODEL_PART) - 2  # two dots around "basemodel"
    if len(namespace) + len(model_name) > room:
        namespace_room = min(len(namespace), MIN_NAMESPACE_CHARS)
        namespace = _truncate_with_hash(namespace, namespace_room)
        model_name = _truncate_with_hash(model_name, room - namespace_room)
    return f"{MODEL_LABEL_DOMAIN}/{namespace}.{BASE_MODEL_PART}.{model_name}"
