"""``omerender.lock.yaml``, the file (inheritance-and-pinning.md §14): its records, text in and text out,
where the CLI finds it, and a lock given as an input object. :mod:`omerender.ome.pinning.lock` decides with it.
"""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field

import yaml

from omerender.errors import OmeError
from omerender.yamlio.reading import read_named_file
from omerender.yamlio.yamlread import SafeLoader, yaml_error_text
from ..load import Inputs, Obj
from .revisions import snapshot_of, spec_hash

LOCK_FILE = "omerender.lock.yaml"
LOCK_API_VERSION = "omerender.io/v1alpha1"
LOCK_KIND = "RuntimeLock"
HASH_ALGORITHM = "omerender-canonical-json/v1"
HEADER_ERROR = (f"{LOCK_FILE}: expected apiVersion {LOCK_API_VERSION}, kind {LOCK_KIND} and hash "
                f"{HASH_ALGORITHM}")


# ---------------------------------------------------------------- §14 the lock file

@dataclass(frozen=True)
class Entry:
    namespace: str
    name: str
    selection: str            # "Named" or "Auto"
    runtime: str              # rt-ref
    chain: tuple[str, ...]    # root first
    autoSync: bool
    revision: str
    specHash: str
    pinnedRevision: str | None = None
    syncToken: str = ""


@dataclass(frozen=True)
class Revision:
    name: str
    runtime: str
    chain: tuple[str, ...]
    specHash: str
    serial: int
    spec: dict = field(compare=False)


@dataclass
class Lock:
    entries: dict[tuple[str, str], Entry] = field(default_factory=dict)
    revisions: dict[str, Revision] = field(default_factory=dict)


ENTRY_KEYS = [f.name for f in dataclasses.fields(Entry)]
REVISION_KEYS = [f.name for f in dataclasses.fields(Revision)]


def parse_lock(text: str, file: str = LOCK_FILE) -> Lock:
    """Read a lock file's text, verifying the header (E-P6) and every snapshot's hash (E-P5)."""
    try:
        data = yaml.load(text, Loader=SafeLoader)  # the inputs' loader: same limits, dates kept as text
    except yaml.YAMLError as err:
        raise OmeError(f"{LOCK_FILE}: {yaml_error_text(err)}", file=file) from None
    return lock_from_data(data or {}, file)


def lock_from_data(data, file: str = LOCK_FILE) -> Lock:
    if not isinstance(data, dict) or data.get("apiVersion") != LOCK_API_VERSION or data.get("kind") != LOCK_KIND \
            or data.get("hash") != HASH_ALGORITHM:
        raise OmeError(HEADER_ERROR, file=file)
    lock = Lock()
    for raw in _items(data, "revisions", file):
        record = _record(raw, Revision, REVISION_KEYS, "revisions", file)
        actual = spec_hash(record.spec)
        if actual != record.specHash:
            raise OmeError(f"{LOCK_FILE}: revision {record.name} hashes to {actual}, not the recorded "
                           f"{record.specHash}", file=file)
        lock.revisions[record.name] = record
    for raw in _items(data, "inferenceServices", file):
        entry = _record(raw, Entry, ENTRY_KEYS, "inferenceServices", file)
        lock.entries[(entry.namespace, entry.name)] = entry
    return lock


def _items(data: dict, key: str, file: str) -> list:
    items = data.get(key) or []
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
        raise OmeError(f"{LOCK_FILE}: malformed: {key} must be a list of mappings", file=file)
    return items


def _record(raw: dict, cls, keys: list[str], where: str, file: str):
    values = {k: raw.get(k) for k in keys if k in raw}
    try:
        values["chain"] = tuple(values.get("chain") or ())
        if cls is Entry:
            values["syncToken"] = values.get("syncToken") or ""
        else:
            values["spec"] = values.get("spec") or {}
        record = cls(**values)
    except TypeError:
        missing = [k for k in keys if k not in raw and k not in ("pinnedRevision", "syncToken", "spec")]
        raise OmeError(f"{LOCK_FILE}: malformed: {where} item lacks {', '.join(missing)}", file=file) from None
    return record


def dump_lock(lock: Lock) -> str:
    """The lock's text: entries by namespace and name, revisions by runtime and serial (§14)."""
    entries = []
    for key in sorted(lock.entries):
        entry = lock.entries[key]
        item = {k: getattr(entry, k) for k in ENTRY_KEYS}
        item["chain"] = list(entry.chain)
        if entry.pinnedRevision is None:
            del item["pinnedRevision"]
        entries.append(item)
    revisions = []
    for record in sorted(lock.revisions.values(), key=lambda r: (r.runtime, r.serial)):
        item = {k: getattr(record, k) for k in REVISION_KEYS}
        item["chain"] = list(record.chain)
        item["spec"] = snapshot_of(record.spec)
        revisions.append(item)
    data = {"apiVersion": LOCK_API_VERSION, "kind": LOCK_KIND, "metadata": {"name": "omerender"},
            "hash": HASH_ALGORITHM, "inferenceServices": entries, "revisions": revisions}
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=False, width=1 << 20)


def find_lock(paths: list[str], explicit: str | None = None) -> str | None:
    """Where the CLI reads and writes the lock (§11): ``--lock``, else ``omerender.lock.yaml`` in the
    first input path if it is a directory, or beside it if it is a file; None for stdin only."""
    if explicit:
        return explicit
    for path in paths:
        if path == "-":
            continue
        root = path if os.path.isdir(path) else os.path.dirname(path)
        return os.path.join(root, LOCK_FILE) if root else LOCK_FILE
    return None


def read_lock(path: str | None) -> Lock | None:
    """The lock at ``path``; None when there is no such file (an empty lock)."""
    text = read_lock_text(path)
    return None if text is None else parse_lock(text, path)


def read_lock_text(path: str | None) -> str | None:
    """The lock file's text, read like any input (a regular file within the size limit, UTF-8, no link
    out of its directory); None when there is none. A dangling link is an error, not a missing lock."""
    if path is None or not os.path.lexists(path):
        return None
    return read_named_file(path)


def is_lock_object(obj: Obj) -> bool:
    """A ``RuntimeLock`` read as an input object: never rendered or passed through (§11, §16)."""
    return obj.kind == LOCK_KIND and obj.api_version == LOCK_API_VERSION


def lock_from_inputs(inputs: Inputs) -> Lock | None:
    """The lock given as an input item (KRM function, §16); more than one is an error."""
    found = [obj for obj in inputs.others if is_lock_object(obj)]
    if len(found) > 1:
        raise OmeError(f"more than one {LOCK_KIND} in the input (first in {found[0].file}, another in {found[1].file})")
    return lock_from_data(found[0].data, found[0].file) if found else None
