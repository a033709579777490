"""Where the model's weights come from: the pod volume, the runner mount, MODEL_PATH and
the model-ready node selector (render.md §6)."""
from __future__ import annotations

import re
from dataclasses import dataclass

from omerender.errors import OmeError
from omerender.kube.names import model_ready_key
from ..load import Obj
from ..shared import per_object

PVC_MOUNT_PATH = "/opt/ml/model"
OVERLAY_ROOT = "/opt/ml/model-overlays"
DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


@dataclass(frozen=True)
class ModelStorage:
    volume: dict | None          # pod volume, None when the model has none
    mount: dict | None           # runner volumeMount
    path: str | None             # MODEL_PATH value
    node_selector_key: str | None
    wait: dict | None = None     # --model-weights download: the init container that waits for the weights

    @property
    def is_pvc(self) -> bool:
        return self.volume is not None and "persistentVolumeClaim" in self.volume


NO_STORAGE = ModelStorage(None, None, None, None)


def check_volume_name(name: str) -> None:
    if len(name) > 63 or not DNS1123_LABEL.fullmatch(name):
        raise OmeError(
            f'spec.volumes[].name: Invalid value: "{name}": a lowercase RFC 1123 label must consist of lower case '
            f"alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name', "
            f"or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?'); the volume is named after "
            f"the model, so rename the model")


def parse_pvc_uri(uri: str, cluster_scoped: bool) -> tuple[str | None, str, str]:
    """``pvc://[<ns>:]<claim>/<sub>`` → (namespace, claim, sub-path)."""
    rest = uri[len("pvc://"):]
    claim_part, _, sub = rest.partition("/")
    namespace, _, claim = claim_part.rpartition(":")
    if cluster_scoped and not namespace:
        raise OmeError("ClusterBaseModel PVC URI must specify a namespace (format: "
                       f'pvc://{{namespace}}:{{pvc-name}}/{{sub-path}}), got "{uri}"', field="spec.storage.storageUri")
    if not cluster_scoped and namespace:
        raise OmeError("namespaced BaseModel PVC URI must not specify a namespace; the BaseModel's own namespace is "
                       f'used, got "{uri}"', field="spec.storage.storageUri")
    if not sub or not claim:
        raise OmeError(f'invalid PVC storage URI "{uri}": invalid PVC storage URI format: missing subpath',
                       field="spec.storage.storageUri")
    return namespace or None, claim, sub


def model_storage(model: Obj | None, isvc_namespace: str) -> ModelStorage:
    """``model``'s storage as the pods of an InferenceService in ``isvc_namespace`` mount it. One per model in a
    render where the namespace changes nothing (all but a pvc:// URI): what holds it only reads it (the pod build
    copies the volume and mount it adds)."""
    if model is None:
        return NO_STORAGE
    storage = model.spec.get("storage") or {}
    uri = storage.get("storageUri") or ""
    if isinstance(uri, str) and uri.startswith("pvc://"):
        return _model_storage(model, isvc_namespace, storage, uri)
    return per_object(STORAGES, model, lambda: _model_storage(model, isvc_namespace, storage, uri))


STORAGES = "model storages"   # the render table's entry (ome.shared.per_object)


def _model_storage(model: Obj, isvc_namespace: str, storage: dict, uri) -> ModelStorage:
    name = model.name
    cluster = model.kind == "ClusterBaseModel"
    key = model_ready_key(model.kind, name, None if cluster else model.namespace)
    if isinstance(uri, str) and uri.startswith("pvc://"):
        check_volume_name(name)
        pvc_ns, claim, sub = parse_pvc_uri(uri, cluster)
        if cluster and pvc_ns != isvc_namespace:
            raise OmeError(
                f'ClusterBaseModel "{name}" references PVC in namespace "{pvc_ns}", but InferenceService is in namespace '
                f'"{isvc_namespace}"; Kubernetes does not allow pods to mount PVCs from another namespace. Either move the '
                f'InferenceService to namespace "{pvc_ns}" or replicate the PVC into namespace "{isvc_namespace}".')
        volume = {"name": name, "persistentVolumeClaim": {"claimName": claim, "readOnly": True}}
        mount = {"name": name, "mountPath": PVC_MOUNT_PATH, "subPath": sub, "readOnly": True}
        return ModelStorage(volume, mount, PVC_MOUNT_PATH, None)
    path = storage.get("path")
    if not path:
        return ModelStorage(None, None, None, key)
    check_volume_name(name)
    volume = {"name": name, "hostPath": {"path": path}}
    mount = {"name": name, "mountPath": path, "readOnly": True}
    return ModelStorage(volume, mount, path, key)


@dataclass(frozen=True)
class OverlayStorage:
    volume: dict
    mount: dict
    env_name: str
    path: str
    wait: dict | None = None


def overlay_storage(model: Obj, isvc_namespace: str, base: ModelStorage | None = None) -> OverlayStorage:
    """render.md §6.3: one resolved ``spec.model.overlays[]`` entry; ``base`` is the overlay model's own storage
    where the caller chose it (``--model-weights download``), else as v1.3 mounts it."""
    base = base or model_storage(model, isvc_namespace)
    name = f"model-overlay-{model.name}"
    path = f"{OVERLAY_ROOT}/{model.name}"
    if base.volume is None:
        raise OmeError(f"overlay model {model.name} has no storage.path or pvc:// URI to mount")
    source = {k: v for k, v in base.volume.items() if k != "name"}
    mount = {"name": name, "mountPath": path, "readOnly": True}
    if base.is_pvc:
        mount["subPath"] = base.mount["subPath"]
    env_name = "OVERLAY_" + model.name.upper().replace("-", "_") + "_MODEL_PATH"
    wait = None
    if base.wait is not None:  # the overlay's volume is named by the overlay, and so is the wait step's mount
        wait = {**base.wait, "volumeMounts": [{**m, "name": name} for m in base.wait["volumeMounts"]]}
    return OverlayStorage({"name": name, **source}, mount, env_name, path, wait)
