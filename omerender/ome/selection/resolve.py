"""selection.md §2.4 for one InferenceService: the model, then a named or an auto-selected runtime."""
from __future__ import annotations

from typing import Callable

from omerender.errors import OmeError, Report
from omerender.yamlio.data import fingerprint
from ..load import Inputs, Obj
from .auto import _admission_checked, _auto
from .fields import _mapping, _string
from .lookup import _lookup_model
from .named import _named
from .request import _class_requests, _modes
from .result import Resolution


def resolve(isvc: Obj, inputs: Inputs, report: Report,
            merged_spec: Callable[[Obj], dict] = lambda rt: rt.spec) -> Resolution:
    """selection.md §2.4 for one InferenceService. Raises OmeError; warnings go to ``report``."""
    spec = isvc.spec
    model_ref = _mapping(spec, "model", "spec.model")
    runtime_ref = _mapping(spec, "runtime", "spec.runtime")
    runtime_name = _string(runtime_ref, "name", "spec.runtime.name") if runtime_ref is not None else None
    if model_ref is None and not runtime_name:
        raise OmeError("at least one of spec.model or spec.runtime must be set")
    model = _lookup_model(isvc, inputs, report, model_ref) if model_ref is not None else None
    if runtime_name:
        return _named(isvc, inputs, report, merged_spec, model, runtime_ref, runtime_name)
    return _auto(isvc, inputs, report, model)


def selection_key(isvc: Obj, inputs: Inputs) -> tuple | None:
    """Everything of ``isvc`` that :func:`resolve` reads when it succeeds, so that InferenceServices with equal
    keys resolve alike (ome.shared); None where that is not plain data."""
    spec = isvc.spec
    model, runtime = _content(spec.get("model")), _content(spec.get("runtime"))
    if model is None or runtime is None:
        return None
    try:
        return (_scope(isvc, inputs), model, runtime, _modes(spec), tuple(_class_requests(isvc)),
                _admission_checked(isvc))
    except TypeError:  # an unhashable value where a name belongs: resolve reports it
        return None


def _scope(isvc: Obj, inputs: Inputs) -> tuple:
    """What of the InferenceService's namespace :func:`resolve` reads. A named runtime reads only which BaseModel and
    ServingRuntime of the names the namespace holds (InferenceServices of namespaces that hold the same, as a rule
    none, resolve alike; only errors, never shared, name the namespace); an auto-selection judges all its runtimes."""
    spec, namespace = isvc.spec, isvc.namespace
    model_ref, runtime_ref = spec.get("model"), spec.get("runtime")
    name = runtime_ref.get("name") if type(runtime_ref) is dict else None
    if type(name) is not str or not name:
        return ("namespace", namespace)
    model_name = model_ref.get("name") if type(model_ref) is dict else None
    model = inputs.models.get((namespace, model_name)) if type(model_name) is str else None
    return ("named", id(model), id(inputs.runtimes.get((namespace, name))))


def _content(value) -> tuple | None:
    """``value`` as a key equal only for equal content: a map of strings as its items (the usual reference), else a
    digest of it (ome.shared); None where it has none."""
    if type(value) is dict:
        for key, item in value.items():
            if type(key) is not str or type(item) is not str:
                break
        else:
            return ("strings", tuple(value.items()))
    digest = fingerprint(value)
    return None if digest is None else ("digest", digest)
