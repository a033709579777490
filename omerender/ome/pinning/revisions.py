"""Runtime revisions (inheritance-and-pinning.md §12, §13): the canonical JSON of a runtime spec, its hash,
and the revision names an InferenceService pins. Pure functions; :mod:`omerender.ome.pinning.lockfile` stores them and
:mod:`omerender.ome.pinning.lock` decides with them.
"""
from __future__ import annotations

import datetime
import hashlib
import json
import math
import re

from omerender.errors import OmeError
from ..load import Obj


# ---------------------------------------------------------------- §12 canonical JSON and hash

def _empty(value) -> bool:
    return value is None or (isinstance(value, (str, list, dict)) and len(value) == 0)


def canonical_spec(value, strip: bool = True):
    """§12 steps 1-2: object members that are empty dropped bottom-up (unless ``strip`` is
    false), keys sorted, YAML-only scalars (timestamps) as strings. List elements are kept."""
    if isinstance(value, dict):
        members = {str(k): canonical_spec(v, strip) for k, v in value.items()}
        return {k: members[k] for k in sorted(members) if not (strip and _empty(members[k]))}
    if isinstance(value, list):
        return [canonical_spec(item, strip) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        raise OmeError(f"{value!r} is not a finite number; runtime specs cannot be hashed with it")
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    return str(value)


def snapshot_of(spec: dict) -> dict:
    """The spec as the lock stores it: keys sorted, empty values kept. Unlike the hash input, the
    snapshot keeps ``emptyDir: {}`` and the like, which a rendered pod needs (a volume's only
    source); the hash, and so the revision, is the same as of the stripped spec."""
    return canonical_spec(spec, strip=False)


def canonical_json(spec: dict) -> str:
    """§12 step 3: the exact text that is hashed."""
    return json.dumps(canonical_spec(spec), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def spec_hash(spec: dict) -> str:
    """``sha256:<64 lowercase hex>`` of the canonical JSON (§12 step 4)."""
    return "sha256:" + hashlib.sha256(canonical_json(spec).encode("utf-8")).hexdigest()


def _hex(digest: str) -> str:
    return digest.split(":", 1)[-1]


# ---------------------------------------------------------------- §13 revision names

def runtime_ref_of(isvc: Obj) -> dict | None:
    runtime = isvc.spec.get("runtime")
    return runtime if isinstance(runtime, dict) and runtime.get("name") else None


def auto_sync(isvc: Obj) -> bool:
    """``spec.runtime.autoSync``; true unless it is exactly ``false`` (Auto ISVCs never pin)."""
    ref = runtime_ref_of(isvc)
    return ref is None or ref.get("autoSync") is not False


def revision_prefix(isvc: Obj, runtime: Obj | None = None) -> str:
    """``cr-<runtime>`` or ``r-<namespace>-<runtime>`` (§13): by ``spec.runtime.kind`` for a named
    runtime, by the resolved runtime's kind for an auto-selected one."""
    ref = runtime_ref_of(isvc)
    if ref is not None:
        kind, name = ref.get("kind") or "ClusterServingRuntime", ref["name"]
    else:
        kind, name = runtime.kind, runtime.name
    if kind == "ServingRuntime":
        return f"r-{isvc.namespace}-{name}"
    return f"cr-{name}"


def revision_name(isvc: Obj, runtime: Obj | None, digest: str) -> str:
    """The revision name of ``digest`` (a ``sha256:`` hash) for this ISVC (§13)."""
    return f"{revision_prefix(isvc, runtime)}-{_hex(digest)[:8]}"


def check_revision_field(isvc: Obj) -> str | None:
    """api.md §7.2 row 8: E-P2, then E-P1. Returns ``spec.runtime.revision`` or None."""
    ref = runtime_ref_of(isvc)
    given = ref.get("revision") if ref is not None else None
    if not given:
        return None
    if ref.get("autoSync") is not False:
        raise OmeError("spec.runtime.revision requires spec.runtime.autoSync: false", field="spec.runtime.revision")
    prefix = revision_prefix(isvc)
    if not isinstance(given, str) or not re.fullmatch(re.escape(prefix) + "-[0-9a-f]{8}", given):
        kind = ref.get("kind") or "ClusterServingRuntime"
        raise OmeError(f'spec.runtime.revision "{given}" does not match the expected naming convention for runtime '
                       f'"{ref["name"]}" ({kind}); expected the form {prefix}-<8 lowercase hex chars>',
                       field="spec.runtime.revision")
    return given
