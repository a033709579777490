"""Finding the referenced model (selection.md §2.2) and a runtime by name (§2.3); explain's model lookup (§5)."""
from __future__ import annotations

from omerender.errors import OmeError, Report
from omerender.suggest import did_you_mean
from ..load import Inputs, Obj
from .fields import _string


def find_runtime(inputs: Inputs, namespace: str, name: str, kind: str | None) -> Obj | None:
    """§2.3: ``kind`` ClusterServingRuntime (default) looks at cluster scope, then the namespace."""
    namespaced = inputs.runtimes.get((namespace, name))
    if kind == "ServingRuntime":
        return namespaced
    return inputs.cluster_runtimes.get(name) or namespaced


def _lookup_model(isvc: Obj, inputs: Inputs, report: Report, model_ref: dict) -> Obj:
    name = _string(model_ref, "name", "spec.model.name")
    if not name:
        raise OmeError("spec.model.name: Required value", field="spec.model.name")
    kind = _string(model_ref, "kind", "spec.model.kind") or "ClusterBaseModel"
    if kind not in ("BaseModel", "ClusterBaseModel"):
        raise OmeError(f'spec.model.kind: Unsupported value: "{kind}": supported values: "BaseModel", '
                       '"ClusterBaseModel"', field="spec.model.kind")
    ns = isvc.namespace
    namespaced, cluster = inputs.models.get((ns, name)), inputs.cluster_models.get(name)
    if namespaced is None and cluster is None:
        raise OmeError(f'referenced model "{name}" not found in namespace "{ns}": ensure a BaseModel exists in this '
                       'namespace or a ClusterBaseModel exists cluster-wide with this name'
                       + did_you_mean(name, lambda: _model_names(inputs, ns), len(inputs.models) +
                                      len(inputs.cluster_models), inputs), field="spec.model.name")
    if kind == "BaseModel" and namespaced is None:
        raise OmeError(f'Failed to get referenced BaseModel "{name}" in namespace "{ns}": only a ClusterBaseModel of '
                       'that name exists; remove spec.model.kind or set it to ClusterBaseModel')
    if kind == "ClusterBaseModel" and cluster is None:
        raise OmeError(f'Failed to get referenced ClusterBaseModel "{name}": only a BaseModel of that name exists in '
                       f'namespace "{ns}"; set spec.model.kind: BaseModel')
    if kind == "ClusterBaseModel" and namespaced is not None:
        report.warn(f"BaseModel {ns}/{name} shadows ClusterBaseModel {name}; OME serves the BaseModel",
                    code="basemodel-shadows-cluster")
    model = namespaced if namespaced is not None else cluster
    if model.spec.get("disabled") is True:
        raise OmeError(f"model {name} is disabled")
    if model.spec.get("distribution") == "Sharded":
        raise OmeError(f"model {name} uses distribution Sharded: no model cache provider is configured for "
                       "sharded model loading")
    return model


def _model_names(inputs: Inputs, namespace: str) -> list[str]:
    return [n for (ns, n) in inputs.models if ns == namespace] + list(inputs.cluster_models)


def _runtime_names(inputs: Inputs, namespace: str, kind: str) -> list[str]:
    names = [n for (ns, n) in inputs.runtimes if ns == namespace]
    return names if kind == "ServingRuntime" else names + list(inputs.cluster_runtimes)


def model_for_explain(inputs: Inputs, namespace: str, name: str) -> Obj | None:
    """explain's lookup (§5): BaseModel ``<ns>/name``, else ClusterBaseModel ``name``; the kind is ignored."""
    return inputs.models.get((namespace, name)) or inputs.cluster_models.get(name)
