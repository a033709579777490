"""The render's output as a whole (render.md §1, §14): the inputs it passes through and the kinds of OME's API
groups it cannot render, and what the API server would refuse in the objects it writes (its rules, one identity
written once)."""
from __future__ import annotations

import json

from omerender.errors import OmeError
from omerender.kube import apirules
from .load import OME_API_VERSION, Inputs, Obj, foreign_ome_group
from .pinning.lockfile import is_lock_object


def unrendered_errors(inputs: Inputs, keep_inputs: bool) -> list[OmeError]:
    """A kind of OME's API groups that omerender cannot render is an error, unless --keep-inputs passes it on; one
    of the kinds omerender renders, under a group below ome.io, is named with the apiVersion that renders it."""
    if keep_inputs:
        return []
    return [_unrendered_error(obj) for obj in sorted(inputs.unrendered, key=_object_order)]


def _unrendered_error(obj: Obj) -> OmeError:
    problem = foreign_ome_group(obj.api_version, obj.kind)
    if problem:
        return obj.error(f"{problem} is not rendered: use apiVersion: {OME_API_VERSION} (--keep-inputs passes it "
                         f"through unrendered)", "apiVersion")
    article = "an" if obj.kind[:1] in "AEIOU" else "a"
    return obj.error(f"omerender cannot render {article} {obj.kind} ({obj.api_version}): it needs OME's controller; "
                     f"--keep-inputs passes it through, for a cluster that runs OME", "kind")


def passthrough_objects(inputs: Inputs, keep_inputs: bool, models: list[Obj] = ()) -> list[Obj]:
    """Objects that are not rendered, in an order that does not depend on the input's order, with ``models`` (the
    models the rendered InferenceServices use, written out for OME's model agent: ``Options.model_objects``)."""
    kept = [o for o in inputs.objects if (not o.in_ome_groups or keep_inputs) and not is_lock_object(o)]
    return sorted(kept + list(models), key=_object_order)


# ---------------------------------------------------------------- what the API server would refuse

# Labels whose values omerender copies from an input, for the error that names the rendered field.
LABEL_SOURCES = {"base-model-name": "the model's metadata.name", "base-model-vendor": "the model's spec.vendor",
                 "serving-runtime": "the runtime's metadata.name",
                 "ome.io/inferenceservice": "the InferenceService's metadata.name"}


def check_rendered(objects: list[dict]) -> None:
    """The objects omerender writes for one InferenceService pass the API server's rules (apirules); the error
    names the object. A label or annotation map several of them hold (the component's) is checked once: nothing
    changes them while they are checked."""
    checked = apirules.Checked()
    for obj in objects:
        try:
            apirules.check_object(obj, checked)
        except OmeError as err:
            source = next((v for k, v in LABEL_SOURCES.items() if (err.field or "").endswith(f"labels.{k}")), None)
            hint = f" (the value of {source})" if source else ""
            # no field: the error is located at the InferenceService, and err.field is one of the rendered object
            raise OmeError(f"rendered {_object_text(obj)}: {err.text}{hint}") from None


def duplicate_errors(entries: list[tuple[dict, Obj]]) -> list[OmeError]:
    """One object identity (group, kind, namespace, name) written twice, naming both sources."""
    errors = []
    for first, (obj, source) in apirules.duplicates(entries):
        errors.append(source.error(f"{_object_text(obj)} would be written twice: {_origin(*first)} and "
                                   f"{_origin(obj, source)}; the API server keeps one object per kind, namespace and "
                                   f"name: rename one", "metadata.name"))
    return errors


def _object_text(obj: dict) -> str:
    meta = obj.get("metadata") or {}
    return f"{obj.get('kind')} {'/'.join(p for p in (meta.get('namespace'), meta.get('name')) if p)}"


def _origin(obj: dict, source: Obj) -> str:
    if source.data is obj:
        return f"the input object in {source.file}"
    return f"rendered from {source.ref} ({source.file})"


def _object_order(obj: Obj) -> tuple:
    return (obj.api_version, obj.kind, obj.namespace or "", obj.name,
            json.dumps(obj.data, sort_keys=True, default=str))
