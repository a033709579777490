"""Pinning with ``omerender.lock.yaml`` (inheritance-and-pinning.md Parts B and C): the decisions.

:func:`resolve_with_lock` is what ``render`` calls per InferenceService (§15), and :func:`update_lock` is
``omerender lock update`` (§16). Both resolve the ISVC through :func:`omerender.ome.selection.resolve.resolve`
with the merged specs of :class:`~omerender.ome.runtimes.inherit.Chains`. The hashes and revision names are
:mod:`omerender.ome.pinning.revisions` (§12, §13); the file's records, :mod:`omerender.ome.pinning.lockfile` (§14).
"""
from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field
from typing import Callable, NamedTuple

from omerender.errors import OmeError, OmeErrors, Report
from omerender.yamlio.data import copy_data, count_values
from ..budget import charge_copy
from ..load import OME_API_VERSION, Inputs, Obj
from ..runtimes.inherit import Chains, ChainError, rt_ref, warn_auto_selected
from ..selection.lookup import find_runtime
from ..selection.resolve import resolve, selection_key
from ..shared import shared
from ..selection.result import Resolution
from .lockfile import LOCK_FILE, Entry, Lock, Revision
from .revisions import auto_sync, check_revision_field, revision_name, runtime_ref_of, snapshot_of, spec_hash

SYNC_ANNOTATION = "ome.io/runtime-sync"
KEEP_PER_RUNTIME = 10
UPDATE_HINT = 'run "omerender lock update"'


# ---------------------------------------------------------------- the live state of one ISVC

@dataclass
class Live:
    """What the input says now about an ISVC's runtime (§12: the spec it would render from)."""

    selection: str                   # "Named" or "Auto"
    resolution: Resolution | None    # None while the runtime is gone (pinned, no spec.model)
    ref: str | None                  # rt-ref of the resolved runtime
    chain: tuple[str, ...]           # root first
    spec: dict | None
    disabled: bool = False           # pinned without spec.model, merged disabled: true
    isvc: Obj | None = field(default=None, repr=False, compare=False)
    chains: Chains | None = field(default=None, repr=False, compare=False)

    # A render without a lock never needs the hash, and hashing every runtime's spec weighed in a large
    # fleet's profile (benchmarks/NOTES.md): both are computed on first use, once per runtime, from the
    # runtime's own or merged spec rather than ``spec``, which the render changes.
    @functools.cached_property
    def hash(self) -> str | None:
        if self.resolution is None:
            return None
        return _per_runtime(self.chains, self.resolution.runtime, self.resolution.auto_selected, spec_hash)

    @functools.cached_property
    def revision(self) -> str | None:
        digest = self.hash
        return None if digest is None else revision_name(self.isvc, self.resolution.runtime, digest)


def _per_runtime(chains: Chains, runtime: Obj, auto: bool, compute: Callable[[dict], object]):
    """``compute`` of the spec ``runtime`` renders from, once per runtime: the same runtime gives the same spec."""
    key = (compute, id(runtime), auto)
    found = chains.spec_facts.get(key)
    if found is None:
        source = chains.own_spec(runtime) if auto else chains.merged_view(runtime)
        found = chains.spec_facts[key] = compute(source)
    return found


class _OnRuntime(NamedTuple):
    """What every InferenceService rendered from one runtime (auto-selected or not) has alike."""

    runtime: Obj  # held, so that the entry's id(runtime) is never another's
    spec: dict    # the one spec they share: the render only reads it
    values: int   # what copying it costs (the copied-values limit)
    ref: str
    selection: str  # "Named" or "Auto"
    chain: tuple[str, ...]  # root first


def _on_runtime(chains: Chains, runtime: Obj, auto: bool) -> _OnRuntime:
    key = ("on runtime", id(runtime), auto)
    found = chains.spec_facts.get(key)
    if found is None or found.runtime is not runtime:
        spec = chains.own_spec(runtime) if auto else chains.merged_view(runtime)
        chain = (rt_ref(runtime),) if auto else tuple(rt_ref(rt) for rt in reversed(chains.chain(runtime)))
        found = chains.spec_facts[key] = _OnRuntime(runtime, spec, _per_runtime(chains, runtime, auto, count_values),
                                                    rt_ref(runtime), "Auto" if auto else "Named", chain)
    return found


def _snapshot_copy(record: Revision, live: Live) -> dict:
    """A fresh copy of a pinned revision's spec, charged to the copied-values limit first: what it holds beyond
    the live spec ``live_state`` copied and charged already (the render uses one of the two)."""
    resolution = live.resolution
    charged = 0 if resolution is None else _per_runtime(live.chains, resolution.runtime, resolution.auto_selected,
                                                        count_values)
    extra = count_values(record.spec) - charged
    if extra > 0:
        charge_copy(extra, f"revision {record.runtime}")
    return copy_data(record.spec)


def live_state(isvc: Obj, inputs: Inputs, chains: Chains, report: Report, lenient: bool = False) -> Live:
    """Resolve ``isvc`` as render does. ``lenient``: the ISVC holds a pin and has no ``spec.model``,
    so a missing or disabled runtime is not an error (§15 rows W-P4/W-P5)."""
    ref = runtime_ref_of(isvc)
    if ref is not None and lenient:
        runtime = find_runtime(inputs, isvc.namespace, ref["name"], ref.get("kind"))
        if runtime is None:
            return Live("Named", None, None, (), None)
        try:
            disabled = chains.merged_view(runtime).get("disabled") is True
        except ChainError:
            disabled = False  # resolve() below reports the chain error (E-I6)
        if disabled:
            return _live_of(isvc, chains, Resolution(None, runtime, False, None),
                            _on_runtime(chains, runtime, False), disabled=True)
    key = selection_key(isvc, inputs)
    found, on_runtime = shared(chains.spec_facts, key and ("resolve", key), report,
                               lambda said: _selected(isvc, inputs, chains, said),
                               inputs)  # selection only reads the merged spec
    resolution = Resolution(found.model, found.runtime, found.auto_selected, found.entry)  # the caller's own
    return _live_of(isvc, chains, resolution, on_runtime)


def _selected(isvc: Obj, inputs: Inputs, chains: Chains, report: Report) -> tuple[Resolution, _OnRuntime]:
    """The selection of ``isvc`` and what its runtime gives every InferenceService on it (shared alike)."""
    found = resolve(isvc, inputs, report, merged_spec=chains.merged_view)
    if found.auto_selected:
        warn_auto_selected(found.runtime, report)
    return found, _on_runtime(chains, found.runtime, found.auto_selected)


def _live_of(isvc: Obj, chains: Chains, resolution: Resolution, on_runtime: _OnRuntime,
             disabled: bool = False) -> Live:
    """The live state, the spec charged to the copied-values limit first: the InferenceService copies it into its
    objects (the component merge copies what it keeps)."""
    charge_copy(on_runtime.values, on_runtime.ref)
    return Live(on_runtime.selection, resolution, on_runtime.ref, on_runtime.chain, on_runtime.spec, disabled,
                isvc, chains)


def _lenient(isvc: Obj, entry: Entry | None) -> bool:
    """A pinned ISVC without spec.model keeps serving when its runtime is gone or disabled."""
    if "model" in isvc.spec and isvc.spec.get("model") is not None:
        return False
    ref = runtime_ref_of(isvc)
    if ref is None or ref.get("autoSync") is not False:
        return False
    return bool(ref.get("revision")) or (entry is not None and entry.pinnedRevision is not None)


def _stand_in(record: Revision) -> Obj:
    """A runtime object rebuilt from a snapshot, for an ISVC whose runtime left the input."""
    parts = record.runtime.split("/")
    metadata = {"name": parts[-1]}
    if parts[0] == "ServingRuntime":
        metadata["namespace"] = parts[1]
    data = {"apiVersion": OME_API_VERSION, "kind": parts[0], "metadata": metadata,
            "spec": copy_data(record.spec)}
    return Obj(data, LOCK_FILE, -1)


def _sync_token(isvc: Obj) -> str:
    annotations = isvc.metadata.get("annotations") or {}
    return annotations.get(SYNC_ANNOTATION) or ""


def _isvc_id(isvc: Obj) -> str:
    return f"{isvc.namespace}/{isvc.name}"


def _stale(reason: str) -> OmeError:
    return OmeError(f"{LOCK_FILE} is out of date: {reason}; {UPDATE_HINT}")


# ---------------------------------------------------------------- §15 render


@dataclass
class Pinned:
    """What render uses for one ISVC: the resolution, and the runtime spec to lay the ISVC over."""

    resolution: Resolution
    spec: dict
    name_revision: Callable[[], str] = field(repr=False, compare=False)

    @functools.cached_property
    def revision(self) -> str:
        """The revision the spec is (live or snapshot); render itself does not need it."""
        return self.name_revision()


def resolve_with_lock(isvc: Obj, inputs: Inputs, chains: Chains, lock: Lock | None, report: Report,
                      locked: bool = False) -> Pinned:
    """§15 for one ISVC. Raises OmeError (E-P1..E-P4, E-P8 when ``locked``, and every selection
    error); W-P*/I-P* go to ``report``. The spec is before the ISVC merge and placeholders."""
    entry = lock.entries.get((isvc.namespace, isvc.name)) if lock else None
    given = check_revision_field(isvc)
    live = live_state(isvc, inputs, chains, report, lenient=_lenient(isvc, entry))
    spec = pinned_spec(isvc, live, entry, lock, report, locked, given)
    resolution = live.resolution
    if resolution is None:
        record = lock.revisions[given or entry.pinnedRevision]
        resolution = Resolution(None, _stand_in(record), False, None)
    if spec is live.spec:
        return Pinned(resolution, spec, lambda: live.revision)
    digest = spec_hash(spec)
    if digest != live.hash and resolution.model is not None:
        resolution = _entry_from_snapshot(isvc, inputs, resolution, spec)
    return Pinned(resolution, spec, lambda: revision_name(isvc, resolution.runtime, digest))


def _entry_from_snapshot(isvc: Obj, inputs: Inputs, resolution: Resolution, snapshot: dict) -> Resolution:
    """§5: a pinned ISVC takes ``acceleratorConfig`` from its snapshot, not from the live spec."""
    try:
        again = resolve(isvc, inputs, Report(), merged_spec=lambda rt: copy_data(snapshot))
    except OmeError:
        return resolution
    return dataclasses.replace(resolution, entry=again.entry)


def pinned_spec(isvc: Obj, live: Live, entry: Entry | None, lock: Lock | None, report: Report,
                locked: bool, given: str | None = None) -> dict:
    """The spec to render from (live or a snapshot) and the §15 messages, for a resolved ISVC."""
    revisions = lock.revisions if lock else {}
    if given:
        return _named_revision(isvc, live, entry, revisions, report, locked, given)
    if not auto_sync(isvc):
        return _pinned(isvc, live, entry, revisions, report, locked)
    return _following(isvc, live, entry, report, locked)


def _named_revision(isvc, live, entry, revisions, report, locked, given) -> dict:
    record = _revision_for(isvc, live, revisions, given)
    if locked and (entry is None or entry.revision != given):
        raise _stale(f"no entry for InferenceService {_isvc_id(isvc)}" if entry is None else
                     f"runtime spec of InferenceService {_isvc_id(isvc)} changed ({entry.revision} -> {given})")
    _warn_runtime_gone(isvc, live, report, given)
    return _snapshot_copy(record, live)


def _revision_for(isvc: Obj, live: Live, revisions: dict, given: str) -> Revision:
    """E-P3/E-P4 for ``spec.runtime.revision``."""
    record = revisions.get(given)
    if record is None:
        raise OmeError(f"RuntimeDrifted (RevisionMissing): revision {given} is not in {LOCK_FILE}",
                       field="spec.runtime.revision")
    if live.ref is not None and record.runtime != live.ref:
        raise OmeError(f"RuntimeDrifted (RuntimeMismatch): revision {given} belongs to {record.runtime}, "
                       f"not {live.ref}", field="spec.runtime.revision")
    return record


def _warn_runtime_gone(isvc: Obj, live: Live, report: Report, revision: str) -> bool:
    if live.resolution is None:
        name = runtime_ref_of(isvc)["name"]
        report.warn(f'RuntimeDrifted (SourceRuntimeMissing): runtime "{name}" is not in the input; rendered from '
                    f"pinned revision {revision}", code="runtime-drifted-missing")
        return True
    if live.disabled:
        report.warn(f"runtime {live.ref} is disabled; rendered from pinned revision {revision}",
                    code="runtime-disabled-pinned")
        return True
    return False


def _pinned(isvc, live, entry, revisions, report, locked) -> dict:
    ident = _isvc_id(isvc)
    if entry is not None and live.ref is not None and entry.runtime != live.ref:
        if locked:
            raise _stale(f"runtime of InferenceService {ident} changed ({entry.runtime} -> {live.ref})")
        report.warn(f"{LOCK_FILE} pins {entry.runtime}, but spec.runtime now resolves to {live.ref}; rendered "
                    f"from the live spec; {UPDATE_HINT}", code="lock-runtime-moved")
        return live.spec
    pin = entry.pinnedRevision if entry is not None else None
    if pin is None:
        if locked:
            raise _stale(f"no entry for InferenceService {ident}" if entry is None else
                         f"InferenceService {ident} is not pinned yet")
        report.warn(f"spec.runtime.autoSync is false but {LOCK_FILE} has no pinned revision; rendered from the "
                    f"live spec ({live.revision}); {UPDATE_HINT} to pin it", field="spec.runtime.autoSync",
                    code="autosync-unpinned")
        return live.spec
    record = revisions.get(pin)
    if record is None:
        raise OmeError(f"RuntimeDrifted (RevisionMissing): revision {pin} is not in {LOCK_FILE}")
    if locked and entry.revision != pin:
        raise _stale(f"runtime spec of InferenceService {ident} changed ({entry.revision} -> {pin})")
    if _warn_runtime_gone(isvc, live, report, pin) or live.hash == record.specHash:
        return _snapshot_copy(record, live)
    token = _sync_token(isvc)
    if token and token != entry.syncToken:
        if locked:
            raise _stale(f'ome.io/runtime-sync "{token}" of InferenceService {ident} is pending')
        report.warn(f'ome.io/runtime-sync "{token}" is new; {UPDATE_HINT} to advance from {pin} to {live.revision}',
                    code="runtime-sync-new")
    else:
        report.warn(f"RuntimeDrifted (RevisionMismatch): pinned {pin}, live spec differs; bump "
                    "ome.io/runtime-sync annotation to advance", code="runtime-drifted")
    return _snapshot_copy(record, live)


def _following(isvc, live, entry, report, locked) -> dict:
    ident = _isvc_id(isvc)
    if entry is None:
        if locked:
            raise _stale(f"no entry for InferenceService {ident}")
        return live.spec
    if entry.runtime != live.ref:
        if locked:
            raise _stale(f"runtime of InferenceService {ident} changed ({entry.runtime} -> {live.ref})")
        if entry.selection == "Auto" and live.selection == "Auto":
            report.warn(f"auto-selected runtime changed since {LOCK_FILE}: {entry.runtime} -> {live.ref}",
                        code="auto-selected-runtime-changed")
        else:
            report.warn(f"{LOCK_FILE} pins {entry.runtime}, but spec.runtime now resolves to {live.ref}; "
                        f"rendered from the live spec; {UPDATE_HINT}", code="lock-runtime-moved")
    elif entry.specHash != live.hash:
        if locked:
            raise _stale(f"runtime spec of InferenceService {ident} changed ({entry.revision} -> {live.revision})")
        report.info(f"runtime spec changed since {LOCK_FILE} ({entry.revision} -> {live.revision})",
                    code="runtime-spec-changed")
    return live.spec


def check_locked_entries(inputs: Inputs, lock: Lock | None) -> None:
    """E-P8 under ``--locked`` for lock entries whose ISVC left the input (§19 E-P8)."""
    if lock is None:
        return
    present = {(isvc.namespace, isvc.name) for isvc in inputs.isvcs}
    for key in sorted(lock.entries):
        if key not in present:
            raise _stale(f"entry for InferenceService {key[0]}/{key[1]}, which is not in the input")


# ---------------------------------------------------------------- §16 lock update

class _Records:
    """The revisions while a lock is being updated: new records get the next serial."""

    def __init__(self, old: dict[str, Revision]):
        self.by_name = dict(old)
        self.next_serial = max((r.serial for r in old.values()), default=0) + 1

    def add(self, live: Live) -> str:
        existing = self.by_name.get(live.revision)
        if existing is not None:
            if existing.specHash != live.hash:
                raise OmeError(f"revision name {live.revision} already holds a different spec "
                               f"({existing.specHash}, {live.hash})")
            return live.revision
        self.by_name[live.revision] = Revision(live.revision, live.ref, live.chain, live.hash, self.next_serial,
                                               snapshot_of(live.spec))
        self.next_serial += 1
        return live.revision


def update_lock(inputs: Inputs, chains: Chains, old_lock: Lock | None, advance, report: Report) -> Lock:
    """§16. ``advance``: True for ``--advance-all``, else a set of ``"<namespace>/<name>"``.
    Raises OmeErrors with every ISVC's error; infos and warnings go to ``report``."""
    old = old_lock or Lock()
    records = _Records(old.revisions)
    entries: dict[tuple[str, str], Entry] = {}
    errors: list[OmeError] = []
    for isvc in sorted(inputs.isvcs, key=lambda obj: (obj.namespace, obj.name)):
        scoped = Report(ref=isvc.ref, file=isvc.file)
        key = (isvc.namespace, isvc.name)
        try:
            move = advance is True or _isvc_id(isvc) in (advance or ())
            entries[key] = _update_entry(isvc, inputs, chains, old.entries.get(key), records, move, scoped)
        except OmeError as err:
            errors.append(err.located(isvc.ref, isvc.file))
        report.extend(scoped.messages)
    if errors:
        raise OmeErrors(errors)
    return Lock(entries, _collect(records.by_name, entries, inputs))


def _update_entry(isvc: Obj, inputs: Inputs, chains: Chains, entry: Entry | None, records: _Records,
                  move: bool, report: Report) -> Entry:
    given = check_revision_field(isvc)
    live = live_state(isvc, inputs, chains, report, lenient=_lenient(isvc, entry))
    if entry is not None and live.ref is not None and entry.runtime != live.ref:
        entry = None  # step 0: recreated, and a pinned ISVC pinned anew
    synced = entry.syncToken if entry is not None else ""
    if given:
        _revision_for(isvc, live, records.by_name, given)
        _warn_runtime_gone(isvc, live, report, given)
        return _entry(isvc, live, entry, records, given, given, synced)
    if auto_sync(isvc):
        pin = entry.pinnedRevision if entry is not None else None
        return _entry(isvc, live, entry, records, records.add(live), pin, synced)
    pin = entry.pinnedRevision if entry is not None else None
    if pin is None:
        pin = records.add(live)
        report.info(f"pinned to {pin}", code="pinned")
        return _entry(isvc, live, entry, records, pin, pin, synced)
    record = records.by_name.get(pin)
    if record is None:
        raise OmeError(f"RuntimeDrifted (RevisionMissing): revision {pin} is not in {LOCK_FILE}")
    token = _sync_token(isvc)
    new_token = bool(token) and token != synced
    if _warn_runtime_gone(isvc, live, report, pin):
        pass
    elif live.hash == record.specHash:
        if new_token:
            report.info(f'ome.io/runtime-sync "{token}" held: the runtime spec has not changed',
                        code="runtime-sync-held")
    elif new_token or move:
        new_pin = records.add(live)
        why = f'ome.io/runtime-sync "{token}"' if new_token else "--advance"
        report.info(f"advanced from {pin} to {new_pin} ({why})", code="pin-advanced")
        pin, synced = new_pin, (token if new_token else synced)
    else:
        report.warn(f"RuntimeDrifted (RevisionMismatch): pinned {pin}, live spec differs; bump "
                    "ome.io/runtime-sync annotation to advance", code="runtime-drifted")
    return _entry(isvc, live, entry, records, pin, pin, synced)


def _entry(isvc: Obj, live: Live, entry: Entry | None, records: _Records, revision: str, pin: str | None,
           synced: str) -> Entry:
    """A lock entry whose ``runtime``/``chain`` are those of the revision it renders from."""
    record = records.by_name[revision]
    selection = live.selection if live.resolution is not None else entry.selection if entry else "Named"
    return Entry(isvc.namespace, isvc.name, selection, record.runtime, record.chain, auto_sync(isvc), revision,
                 record.specHash, pin, synced)


def _collect(records: dict[str, Revision], entries: dict, inputs: Inputs) -> dict[str, Revision]:
    """§16 step 7: keep what entries or ``spec.runtime.revision`` name, plus the newest 10 per runtime."""
    keep = {name for entry in entries.values() for name in (entry.revision, entry.pinnedRevision) if name}
    for isvc in inputs.isvcs:
        ref = runtime_ref_of(isvc)
        if ref is not None and isinstance(ref.get("revision"), str):
            keep.add(ref["revision"])
    by_runtime: dict[str, list[Revision]] = {}
    for record in records.values():
        by_runtime.setdefault(record.runtime, []).append(record)
    for group in by_runtime.values():
        keep.update(r.name for r in sorted(group, key=lambda r: -r.serial)[:KEEP_PER_RUNTIME])
    return {name: record for name, record in records.items() if name in keep}
