"""``omerender validate``: every object of the given files, directories or stdin checked as the target cluster's API
server would check it (:mod:`omerender.kube.validation`), one message per problem naming the object, the field and
its ``file:line:column``."""
from __future__ import annotations

from omerender.errors import Message, ObjRef, OmeError, OmeErrors
from omerender.kube.validation import crd_schemas, problems
from omerender.yamlio.reading import Doc, read_paths

def user_schemas(locations: list[str]) -> dict[str, dict]:
    """The CRDs (``kind: CustomResourceDefinition``) of the ``--schema-location`` files and directories, by
    ``group/version/Kind``; any other object there is an error."""
    found: dict[str, dict] = {}
    if not locations:
        return found
    errors = []
    for doc in read_paths(locations, outputs=True):
        data = doc.data
        if not isinstance(data, dict) or data.get("kind") != "CustomResourceDefinition":
            errors.append(OmeError("a --schema-location holds CustomResourceDefinitions only", _ref(doc), doc.file))
            continue
        try:
            found.update(crd_schemas(data))
        except OmeError as err:
            errors.append(err.located(_ref(doc), doc.file))
    if errors:
        raise OmeErrors(errors)
    return found


def validate_docs(docs: list[Doc], version: str, extra: dict[str, dict], notes: list[Message]) -> list[Message]:
    """The errors of every object; an object no schema knows adds a warning to ``notes``."""
    errors = []
    for doc in docs:
        if not isinstance(doc.data, dict):
            errors.append(Message("error", "not an object (a YAML mapping)", file=doc.file, origin=doc.origin))
            continue
        found = problems(doc.data, version, extra)
        ref = _ref(doc)
        if found is None:
            notes.append(Message("warning", f"no schema for {doc.data.get('apiVersion')} {doc.data.get('kind')}: not "
                                            f"validated; give its CRD with --schema-location", ref, doc.file,
                                 code="no-schema"))
            continue
        errors.extend(Message("error", f"{field}: {text}" if field else text, ref, doc.file, field or None)
                      for field, text in found)
    return errors


def read(paths: list[str]) -> list[Doc]:
    return read_paths(paths, outputs=True)


def _ref(doc: Doc) -> ObjRef | None:
    data = doc.data if isinstance(doc.data, dict) else {}
    meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    return ObjRef(str(data.get("kind") or "object"), str(meta.get("name") or "(no name)"),
                  str(meta["namespace"]) if meta.get("namespace") else None, origin=doc.origin)
