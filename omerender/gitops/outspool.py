"""``render --output-dir`` as the render streams its objects (ome.render's sink): each InferenceService's objects
are named and dumped as they come and held compressed (emit.Spool), and what :func:`outdir.rendered_files` checks
across the whole output (two objects written to one file, a name that is no file name, a string no UTF-8 writes) is
decided once the render has succeeded, in output order, with the same messages: the same files, or the same error
with nothing written."""
from __future__ import annotations

from omerender.errors import OmeError, OmeErrors
from omerender.yamlio.emit import Spool, dump
from .outdir import (GENERATED_MARK, ISVC_LABEL, KUSTOMIZATION, MARKER, MARKER_MARK, Origin, _locate, _safe_ref,
                     path_parts)

# One object of the output, as the checks need it: (file, error naming it, apiVersion, kind, namespace, name,
# InferenceService label, length of its text in the spool, the object itself where it is still held)
_FILE, _ERROR, _API, _KIND, _NAMESPACE, _NAME, _ISVC, _LENGTH, _OBJECT = range(9)


class DirSpool:
    """A sink for :func:`omerender.ome.render.render`: the objects rendered from InferenceServices, in order."""

    def __init__(self, origin: Origin | None = None):
        self._origin = origin
        self._records: list[tuple] = []
        self._texts = Spool()

    def __call__(self, obj: dict) -> None:
        self._records.append(self._record(obj, held=False))

    def _record(self, obj: dict, held: bool) -> tuple:
        meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        labels = meta.get("labels") if isinstance(meta.get("labels"), dict) else {}
        try:
            relative = "/".join(path_parts(obj))
        except OmeError as err:
            relative, error = None, _locate(err, obj, self._origin)
        else:
            error = None
        length = 0
        if relative is not None and not held:
            try:
                text = dump(obj)
            except OmeError as err:   # raised only where rendered_files would reach it: the file's owner
                error = err
            else:
                self._texts.put(text)
                length = len(text)
        return (relative, error, obj.get("apiVersion"), obj.get("kind"), meta.get("namespace"), meta.get("name"),
                labels.get(ISVC_LABEL), length, obj if held else None)

    def files(self, head: list[dict], tail: list[dict]) -> "SpooledFiles":
        """What rendered_files(head + <the objects streamed> + tail) gives, or raises."""
        records = ([self._record(obj, held=True) for obj in head] + self._records
                   + [self._record(obj, held=True) for obj in tail])
        owners: dict[str, tuple] = {}
        held: dict[str, str] = {}
        errors: dict[tuple, OmeError] = {}
        for record in records:
            relative = record[_FILE]
            if relative is None:
                located = record[_ERROR]
                errors.setdefault((located.file, located.ref, located.text), located)
                continue
            if relative in owners:
                owner = owners[relative]
                located = _locate(OmeError(
                    f"{_safe_ref(_stand_in(owner))} ({owner[_API]}) and this object ({record[_API]}) would both be "
                    f"written to {relative}: one kind, namespace and name can be rendered once"),
                    _stand_in(record), self._origin)
                errors.setdefault((located.file, located.ref, located.text), located)
                continue
            owners[relative] = record
            if record[_OBJECT] is not None:
                held[relative] = dump(record[_OBJECT])
            elif record[_ERROR] is not None:
                raise record[_ERROR]
        if errors:
            raise OmeErrors(list(errors.values()))
        names = sorted(owners)
        kustomization = {"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization",
                         "resources": names}
        held[KUSTOMIZATION] = f"{GENERATED_MARK}\n{dump(kustomization)}"
        held[MARKER] = f"{MARKER_MARK}\n{dump({'files': sorted([*owners, KUSTOMIZATION])})}"
        streamed = [(r[_FILE], r[_LENGTH]) for r in self._records]
        self._records = []
        return SpooledFiles(held, streamed, self._texts)


def _stand_in(record: tuple) -> dict:
    """The object of ``record`` as outdir's messages read it (its own where it is held)."""
    if record[_OBJECT] is not None:
        return record[_OBJECT]
    meta = {"name": record[_NAME], "namespace": record[_NAMESPACE], "labels": {ISVC_LABEL: record[_ISVC]}}
    return {"apiVersion": record[_API], "kind": record[_KIND], "metadata": meta}


class SpooledFiles:
    """The files to write (outdir.write_files): their names, and (name, text) pairs, the spooled texts read back
    once, in order."""

    def __init__(self, held: dict[str, str], streamed: list[tuple[str, int]], texts: Spool):
        self._held, self._streamed, self._texts = held, streamed, texts
        self._names = set(held) | {name for name, _ in streamed}

    def __contains__(self, name) -> bool:
        return name in self._names

    def __iter__(self):
        return iter(self._names)

    def items(self):
        yield from self._held.items()
        pieces, buffer, at = self._texts.texts(), "", 0
        for name, length in self._streamed:
            while len(buffer) - at < length:
                buffer, at = buffer[at:] + next(pieces), 0
            yield name, buffer[at:at + length]
            at += length
