"""The objects of one model in one namespace under ``--model-weights download``: the PersistentVolumeClaim, the
Job that fills it, and what the serving pods mount and wait for (docs/how-to/model-weights.md; render.md §6.5).

Both names end in a hash of everything the two objects are made of (the storageUri with its revision, the token
Secret, the image, the storage class, access mode and size): a Job's template and most of a claim's spec are
immutable, so a change is a new claim and a new Job, and the old claim, pruned by Argo CD or Flux, stays until
the last pod using it is gone (Kubernetes' pvc-protection), so a rolling update keeps serving the old weights."""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass

from omerender.kube.podrules import object_refusal
from ..load import Obj
from . import programs
from .settings import WeightsSettings
from .size import claim_size
from .source import HfSource, hf_source

CLAIM_ROOT = "/weights"            # where the Job and the wait step mount the whole claim
MODEL_DIR = "model"                # the model's files, in the claim; the serving pods mount only this
MARKER = "download-complete"       # in the claim, beside MODEL_DIR
DEFAULT_MOUNT_PATH = "/opt/ml/model"   # a model with no storage.path (the mount path v1.3 gives pvc:// models)
HASH_DIGITS = 10
MAX_NAME = 63
BACKOFF_LIMIT = 6
POLL_SECONDS = "5"
COMPONENT_LABEL = {"app.kubernetes.io/component": "model-weights", "app.kubernetes.io/managed-by": "omerender"}
MODEL_ANNOTATION = "omerender.io/model"
URI_ANNOTATION = "omerender.io/storage-uri"
NOT_IN_NAME = re.compile(r"[^a-z0-9-]+")


@dataclass(frozen=True)
class Staged:
    """One model's weights in one namespace."""

    claim: str              # the PersistentVolumeClaim's (and the Job's) name
    namespace: str
    objects: tuple          # the claim and the Job
    volume: dict            # the serving pods' volume (named after the model, as OME names it)
    mount: dict             # the runner's mount: the model directory, read-only
    path: str               # MODEL_PATH
    wait: dict              # the pods' first init container
    size_warning: str | None
    access_mode: str


def stage(model: Obj, namespace: str, settings: WeightsSettings, volume_name: str) -> Staged:
    """``model``'s claim, Job and pod parts in ``namespace``; errors name the model's field."""
    source = hf_source(model)
    size = claim_size(model)
    name = claim_name(model.name, _digest(source, settings, size.request))
    path = (model.spec.get("storage") or {}).get("path") or DEFAULT_MOUNT_PATH
    annotations = {MODEL_ANNOTATION: f"{model.kind}/{model.name}", URI_ANNOTATION: source.uri}
    objects = (_claim(name, namespace, annotations, settings, size.request),
               _job(name, namespace, annotations, source, settings))
    found = object_refusal(objects[1])
    if found is not None:   # the pod rules every written pod meets (kube.podrules)
        raise model.error(f"rendered Job {namespace}/{name}: {found[0]}.{found[1].text}", "spec.storage")
    volume = {"name": volume_name, "persistentVolumeClaim": {"claimName": name, "readOnly": True}}
    mount = {"name": volume_name, "mountPath": path, "subPath": MODEL_DIR, "readOnly": True}
    return Staged(name, namespace, objects, volume, mount, path, wait_container(volume_name, settings.image),
                  size.warning, settings.access_mode)


def claim_name(model_name: str, digest: str) -> str:
    """``<model>-weights-<hash>``, a DNS label of at most 63 characters; the model's part is cut to fit."""
    suffix = f"-weights-{digest}"
    base = NOT_IN_NAME.sub("-", model_name.lower())[:MAX_NAME - len(suffix)].strip("-")
    return f"{base or 'model'}{suffix}"


def _digest(source: HfSource, settings: WeightsSettings, size: str) -> str:
    made_of = {"uri": source.uri, "repo": source.repo_id, "revision": source.revision, "secret": source.secret,
               "secretKey": source.secret_key, "image": settings.image, "storageClass": settings.storage_class,
               "accessMode": settings.access_mode, "size": size, "program": programs.DOWNLOAD}
    text = json.dumps(made_of, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:HASH_DIGITS]


def _metadata(name: str, namespace: str, annotations: dict) -> dict:
    return {"name": name, "namespace": namespace, "labels": dict(COMPONENT_LABEL), "annotations": dict(annotations)}


def _claim(name: str, namespace: str, annotations: dict, settings: WeightsSettings, size: str) -> dict:
    spec: dict = {"accessModes": [settings.access_mode], "resources": {"requests": {"storage": size}}}
    if settings.storage_class is not None:
        spec["storageClassName"] = settings.storage_class
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": _metadata(name, namespace, annotations),
            "spec": spec}


def _job(name: str, namespace: str, annotations: dict, source: HfSource, settings: WeightsSettings) -> dict:
    env = [{"name": "OMERENDER_REPO_ID", "value": source.repo_id},
           {"name": "OMERENDER_REVISION", "value": source.revision},
           {"name": "OMERENDER_TARGET_DIR", "value": f"{CLAIM_ROOT}/{MODEL_DIR}"},
           {"name": "OMERENDER_MARKER", "value": f"{CLAIM_ROOT}/{MARKER}"},
           {"name": "HF_HOME", "value": f"{CLAIM_ROOT}/.huggingface"},
           {"name": "HF_HUB_DISABLE_TELEMETRY", "value": "1"}]
    if source.secret is not None:
        env.append({"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": source.secret,
                                                                          "key": source.secret_key}}})
    container = {"name": "download", "image": settings.image, "command": ["python3", "-c", programs.DOWNLOAD],
                 "env": env, "volumeMounts": [{"name": "weights", "mountPath": CLAIM_ROOT}]}
    pod = {"restartPolicy": "OnFailure", "containers": [container],
           "volumes": [{"name": "weights", "persistentVolumeClaim": {"claimName": name}}]}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": _metadata(name, namespace, annotations),
            "spec": {"backoffLimit": BACKOFF_LIMIT,
                     "template": {"metadata": {"labels": dict(COMPONENT_LABEL)}, "spec": pod}}}


def wait_container(volume_name: str, image: str) -> dict:
    """The init container that holds a serving pod until the Job's marker is in the claim: ``wait-<volume>``, or,
    past 63 characters, cut and ended by a hash of the volume's name, so two volumes never share a wait step's name."""
    name = f"wait-{volume_name}"
    if len(name) > MAX_NAME:
        digest = hashlib.sha256(volume_name.encode("utf-8")).hexdigest()[:HASH_DIGITS]
        name = f"{name[:MAX_NAME - HASH_DIGITS - 1].rstrip('-')}-{digest}"
    return {"name": name, "image": image, "command": ["python3", "-c", programs.WAIT],
            "env": [{"name": "OMERENDER_MARKER", "value": f"{CLAIM_ROOT}/{MARKER}"},
                    {"name": "OMERENDER_POLL_SECONDS", "value": POLL_SECONDS}],
            "volumeMounts": [{"name": volume_name, "mountPath": CLAIM_ROOT, "readOnly": True}]}


def mount_claim(pod: dict, staged: Staged) -> dict:
    """``pod`` (a copy) with the model's node-disk volume (the one named as the claim's) replaced by the claim, its
    mounts reading the model directory, and the wait step first: for pods omerender builds from OME's own recipe
    (a BenchmarkJob's), which mount the model where OME's agent puts it."""
    name = staged.volume["name"]
    volumes = [dict(staged.volume) if v.get("name") == name else v for v in pod.get("volumes") or []]
    if not any(v.get("name") == name and "persistentVolumeClaim" in v for v in volumes):
        return pod
    containers = [{**c, "volumeMounts": [{**m, "subPath": MODEL_DIR, "readOnly": True} if m.get("name") == name
                                         else m for m in c.get("volumeMounts") or []]}
                  if c.get("volumeMounts") else c for c in pod.get("containers") or []]
    # never skipped: a clash with an init container of the pod is the pod rules' error (kube.podrules)
    return {**pod, "volumes": volumes, "containers": containers,
            "initContainers": [dict(staged.wait)] + list(pod.get("initContainers") or [])}
