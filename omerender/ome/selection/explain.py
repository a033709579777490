"""What ``omerender explain`` evaluates: every runtime against one model, as an InferenceService (``--isvc``) or
the model alone (``--model``) would ask (selection.md §3), with the notes the command prints."""
from __future__ import annotations

from dataclasses import dataclass

from omerender.errors import OmeError, Report
from omerender.suggest import did_you_mean
from ..load import Inputs, Obj
from ..runtimes.inherit import Chains
from .evaluation import Evaluation, evaluate
from .lookup import model_for_explain
from .request import Request, request_of
from .resolve import resolve
from .validation import format_required

NO_RUNTIMES = "No serving runtimes found in the selected namespace or at cluster scope."
PINNED_NOTE = ("Note: spec.runtime.name pins {runtime}; the other rows rank as automatic selection would if it "
               "were not pinned.")
UNSUPPORTED = "runtime-unsupported-model"


@dataclass
class Pinned:
    """The runtime an InferenceService names, checked as OME's webhook checks it (selection.md §4)."""
    name: str
    runtime: Obj | None        # None when the webhook refuses it (missing, disabled, an unusable chain)
    refusal: str | None = None  # the webhook's error
    warning: str | None = None  # the runtime does not declare support: the admission warning, rendered anyway

    @property
    def scope(self) -> str | None:
        if self.runtime is None:
            return None
        return "Cluster" if self.runtime.kind == "ClusterServingRuntime" else "Namespaced"


def explain_inputs(inputs: Inputs, namespace: str, model_name: str | None,
                   isvc_name: str | None) -> tuple[Evaluation, list[str], Pinned | None]:
    """Run the shared evaluation for ``--model`` or ``--isvc``; returns it with the stderr notes and, for an
    InferenceService that names its runtime, that runtime as OME's webhook judges it."""
    if bool(model_name) == bool(isvc_name):
        raise OmeError("exactly one of --model or --isvc is required")
    notes: list[str] = []
    request = Request()
    pinned = None
    if isvc_name:
        isvc = next((i for i in inputs.isvcs if i.name == isvc_name and i.namespace == namespace), None)
        if isvc is None:
            raise OmeError(f'inferenceservices.ome.io "{isvc_name}" not found'
                           + _isvc_hint(inputs, isvc_name, namespace))
        model_ref = isvc.spec.get("model")
        model_name = model_ref.get("name") if isinstance(model_ref, dict) else None
        if not model_name:
            raise OmeError(f'InferenceService "{isvc_name}" has no spec.model; pass --model instead')
        runtime_ref = isvc.spec.get("runtime")
        if isinstance(runtime_ref, dict) and runtime_ref.get("name"):
            pinned = pinned_runtime(isvc, inputs)
            notes.append(PINNED_NOTE.format(runtime=pinned.name))
        request = request_of(isvc)
    model = model_for_explain(inputs, namespace, model_name)
    if model is None:
        names = lambda: [n for ns, n in inputs.models if ns == namespace] + list(inputs.cluster_models)  # noqa: E731
        raise OmeError(f'clusterbasemodels.ome.io "{model_name}" not found'
                       + did_you_mean(model_name, names, len(inputs.models) + len(inputs.cluster_models), inputs))
    result = evaluate(inputs, namespace, model, request)
    if not result.format:
        raise format_required(model)
    if not result.verdicts:
        notes.append(NO_RUNTIMES)
    return result, notes, pinned


def pinned_runtime(isvc: Obj, inputs: Inputs) -> Pinned:
    """The named runtime through the render's own resolution (its merged chain, selection.md §2.3 and §4)."""
    name = str(isvc.spec["runtime"]["name"])
    report = Report()
    try:
        resolution = resolve(isvc, inputs, report, merged_spec=Chains(inputs, Report()).merged_view)
    except OmeError as err:
        return Pinned(name, None, refusal=err.text)
    warning = next((m.text for m in report.messages if m.code == UNSUPPORTED), None)
    return Pinned(resolution.runtime.name, resolution.runtime, warning=warning)


def _isvc_hint(inputs: Inputs, name: str, namespace: str) -> str:
    """Where the InferenceService is when it is in another namespace, else the nearest names in this one."""
    elsewhere = sorted(i.namespace for i in inputs.isvcs if i.name == name)
    if elsewhere:
        return f" in namespace {namespace}; it is in namespace {elsewhere[0]}: pass -n {elsewhere[0]}"
    names = lambda: [i.name for i in inputs.isvcs if i.namespace == namespace]  # noqa: E731
    return did_you_mean(name, names, len(inputs.isvcs), inputs)
