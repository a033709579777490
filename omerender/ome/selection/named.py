"""A runtime named by the InferenceService (selection.md §2.3, §4)."""
from __future__ import annotations

from omerender.errors import OmeError
from omerender.suggest import did_you_mean
from ..shared import render_table
from .entries import _format_reason
from .facts import ModelFacts, RuntimeFacts, _model_facts, runtime_facts_of
from .fields import _string
from .lookup import _runtime_names, find_runtime
from .nomatch import unknown_class_note
from .request import Request, _classes_pass, _mode_reason, _request
from .result import Resolution, _replay
from .runtimes import _index
from .scoring import _accelerator_entry
from .sizes import _size_reason
from .validation import format_required


def _named(isvc, inputs, report, merged_spec, model, runtime_ref, name) -> Resolution:
    model_name = isvc.spec["model"]["name"] if model is not None else None

    def fail(text: str, field: str | None = None) -> OmeError:
        if model is None:
            return OmeError(text, field=field)
        return OmeError(f"runtime {name} does not support model {model_name}: {text}", field=field)

    facts = _model_facts(model) if model is not None else None
    if facts is not None and not facts.fmt_name:
        raise format_required(model, f"runtime {name} does not support model {model_name}: ", isvc)
    kind = _string(runtime_ref, "kind", "spec.runtime.kind") or "ClusterServingRuntime"
    if kind not in ("ClusterServingRuntime", "ServingRuntime"):
        raise OmeError(f'spec.runtime.kind: Unsupported value: "{kind}": supported values: '
                       '"ClusterServingRuntime", "ServingRuntime"', field="spec.runtime.kind")
    runtime = find_runtime(inputs, isvc.namespace, name, kind)
    if runtime is None:
        hint = did_you_mean(name, lambda: _runtime_names(inputs, isvc.namespace, kind),
                            len(inputs.runtimes) + len(inputs.cluster_runtimes), inputs)
        if kind == "ServingRuntime":
            raise fail(f"ServingRuntime {name} not found in namespace {isvc.namespace}{hint}", "spec.runtime.name")
        raise fail(f"runtime {name} not found in namespace {isvc.namespace} or at cluster scope{hint}",
                   "spec.runtime.name")
    try:
        spec = merged_spec(runtime)
    except OmeError as err:
        raise fail(err.text) from None
    if spec.get("disabled") is True:
        scope = "cluster-scoped" if runtime.kind == "ClusterServingRuntime" else "namespace-scoped"
        raise fail(f"{scope} runtime {name} is disabled")
    if model is None:
        return Resolution(None, runtime, False, None)
    # a runtime without a parent merges to its own spec, whose facts the index of candidates has already
    rt_facts = _index(inputs).facts_of(runtime) if spec is runtime.spec else runtime_facts_of(runtime, spec)
    warnings: list = []
    detail = _named_detail(rt_facts, facts, _request(isvc), warnings)
    _replay(report, warnings)
    if detail is not None:
        report.warn(f'runtime "{name}" does not declare support for model "{model_name}" ({detail}); '
                    'proceeding because the runtime was named explicitly' + unknown_class_note(isvc, inputs),
                    code="runtime-unsupported-model")
    return Resolution(model, runtime, False, _accelerator_entry(rt_facts, facts, auto_only=False))


def _named_detail(rt: "RuntimeFacts", model: "ModelFacts", request: "Request", warnings: list) -> str | None:
    """§4: checks 2-5 on the merged spec; the ``<detail>`` of the warning, None when all pass."""
    name = rt.obj.name
    if not _classes_pass(rt, request):
        return f"runtime {name} does not support model : runtime does not support the required accelerator class"
    mode_reason = _mode_reason(rt, request)
    if mode_reason:
        return f"runtime {name} does not support model : {mode_reason}"
    reason = _support_reason(rt, model, warnings)
    if reason:
        return f"runtime {name} does not support model {model.fmt_name}: {reason}"
    return None


def _support_reason(rt: "RuntimeFacts", model: "ModelFacts", warnings: list) -> str | None:
    """Checks 4 and 5 (the format, the size), once per runtime and model in a render: they read nothing else, and
    InferenceServices that name the runtime with the model in other classes or namespaces ask again (ome.shared)."""
    table = render_table()
    key = ("support", id(rt), id(model))
    found = table.get(key)
    if found is None or found[0] is not rt or found[1] is not model:  # both held: their ids stay theirs
        said: list = []
        found = table[key] = (rt, model, _format_reason(rt, model) or _size_reason(rt, model, said), said)
    warnings.extend(found[3])
    return found[2]
