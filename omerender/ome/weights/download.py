"""The objects of one model in one namespace under ``--model-weights download``: the PersistentVolumeClaim, the
Job that fills it, and what the serving pods mount and wait for (docs/how-to/model-weights.md; render.md §6.5).

The claim's name ends in a hash of what it is made of (the storageUri with its revision, the token Secret, the
image, the storage class, access mode and size), the Job's in a hash of the claim's name and the Job's whole
template: a Job's template and most of a claim's spec are immutable, so a change of either is a new object. A new
claim means a new download; the old claim, pruned by Argo CD or Flux, stays until the last pod using it is gone
(Kubernetes' pvc-protection), so a rolling update keeps serving the old weights. A new Job on the same claim (its
placement, resources or environment changed) finds the claim complete and ends at once.

The Job's pod and the wait step meet Pod Security "restricted": user and group RUN_AS (never root), the claim's
group RUN_AS through fsGroup so the download can write it, no privilege escalation, no capabilities, the runtime's
default seccomp profile, a read-only root filesystem (the downloader writes the claim and an emptyDir at /tmp)."""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass

from ..frontend import CLI_FRONT, FrontEnd
from ..load import Obj
from . import programs
from .jobsettings import resources
from .settings import WeightsSettings
from .size import claim_size
from .source import HfSource, hf_source

CLAIM_ROOT = "/weights"            # where the Job and the wait step mount the whole claim
MODEL_DIR = "model"                # the model's files, in the claim; the serving pods mount only this
MARKER = "download-complete"       # in the claim, beside MODEL_DIR
DEFAULT_MOUNT_PATH = "/opt/ml/model"   # a model with no storage.path (the mount path v1.3 gives pvc:// models)
HASH_DIGITS = 10
RUN_AS = 1000                      # the download's and the wait step's user and group, and the claim's fsGroup
TMP = "/tmp"
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

    claim: str              # the PersistentVolumeClaim's name
    namespace: str
    objects: tuple          # the claim
    job: tuple              # what the Job is made of but its placement: (model name, annotations, source, settings)
    volume: dict            # the serving pods' volume (named after the model, as OME names it)
    mount: dict             # the runner's mount: the model directory, read-only
    path: str               # MODEL_PATH
    wait: dict              # the pods' first init container
    size_warning: str | None
    access_mode: str


def stage(model: Obj, namespace: str, settings: WeightsSettings, volume_name: str,
          front: FrontEnd = CLI_FRONT) -> Staged:
    """``model``'s claim, Job and pod parts in ``namespace``; errors name the model's field (and a fix, the setting
    as ``front`` spells it)."""
    source = hf_source(model, front)
    size = claim_size(model)
    name = claim_name(model.name, _digest(source, settings, size.request))
    path = (model.spec.get("storage") or {}).get("path") or DEFAULT_MOUNT_PATH
    annotations = {MODEL_ANNOTATION: f"{model.kind}/{model.name}", URI_ANNOTATION: source.uri}
    objects = (_claim(name, namespace, annotations, settings, size.request),)
    volume = {"name": volume_name, "persistentVolumeClaim": {"claimName": name, "readOnly": True}}
    mount = {"name": volume_name, "mountPath": path, "subPath": MODEL_DIR, "readOnly": True}
    return Staged(name, namespace, objects, (model.name, annotations, source, settings), volume, mount, path,
                  wait_container(volume_name, settings), size.warning, settings.access_mode)


def claim_name(model_name: str, digest: str, what: str = "weights") -> str:
    """``<model>-<what>-<hash>``, a DNS label of at most 63 characters; the model's part is cut to fit."""
    suffix = f"-{what}-{digest}"
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


def job(staged: Staged, placement: dict) -> dict:
    """The Job that fills ``staged``'s claim, its pod placed by ``placement`` (nodeSelector, affinity, tolerations,
    priorityClassName: :mod:`.placement`)."""
    model_name, annotations, source, settings = staged.job
    env = [{"name": "OMERENDER_REPO_ID", "value": source.repo_id},
           {"name": "OMERENDER_REVISION", "value": source.revision},
           {"name": "OMERENDER_TARGET_DIR", "value": f"{CLAIM_ROOT}/{MODEL_DIR}"},
           {"name": "OMERENDER_MARKER", "value": f"{CLAIM_ROOT}/{MARKER}"},
           {"name": "HF_HOME", "value": f"{CLAIM_ROOT}/.huggingface"},
           {"name": "HF_HUB_DISABLE_TELEMETRY", "value": "1"},
           {"name": "HOME", "value": TMP}]
    if source.secret is not None:
        env.append({"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": source.secret,
                                                                          "key": source.secret_key}}})
    env += [{"name": name, "value": value} for name, value in settings.env]
    container = {"name": "download", "image": settings.image, "command": ["python3", "-c", programs.DOWNLOAD],
                 "env": env, "resources": resources(settings.download_resources),
                 "securityContext": container_security(),
                 "volumeMounts": [{"name": "weights", "mountPath": CLAIM_ROOT}, {"name": "tmp", "mountPath": TMP}]}
    if settings.env_from:
        container["envFrom"] = [dict(entry) for entry in settings.env_from]
    pod = {**placement, "restartPolicy": "OnFailure", "containers": [container],
           "securityContext": {"runAsNonRoot": True, "runAsUser": RUN_AS, "runAsGroup": RUN_AS, "fsGroup": RUN_AS,
                               "fsGroupChangePolicy": "OnRootMismatch", "seccompProfile": {"type": "RuntimeDefault"}},
           "volumes": [{"name": "weights", "persistentVolumeClaim": {"claimName": staged.claim}},
                       {"name": "tmp", "emptyDir": {}}]}
    spec = {"activeDeadlineSeconds": settings.deadline, "backoffLimit": BACKOFF_LIMIT,
            "template": {"metadata": {"labels": dict(COMPONENT_LABEL)}, "spec": pod}}
    made_of = json.dumps({"claim": staged.claim, "spec": spec}, sort_keys=True)
    name = claim_name(model_name, hashlib.sha256(made_of.encode("utf-8")).hexdigest()[:HASH_DIGITS], "download")
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": _metadata(name, staged.namespace, annotations),
            "spec": spec}


def container_security(user: bool = False) -> dict:
    """A container's securityContext under Pod Security "restricted"; ``user``: with the user and seccomp profile
    too, for a container in a pod whose own securityContext omerender doesn't set (the wait step)."""
    out: dict = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}, "readOnlyRootFilesystem": True}
    if user:
        out.update({"runAsNonRoot": True, "runAsUser": RUN_AS, "runAsGroup": RUN_AS,
                    "seccompProfile": {"type": "RuntimeDefault"}})
    return out


def wait_container(volume_name: str, settings: WeightsSettings) -> dict:
    """The init container that holds a serving pod until the Job's marker is in the claim: ``wait-<volume>``, or,
    past 63 characters, cut and ended by a hash of the volume's name, so two volumes never share a wait step's name."""
    name = f"wait-{volume_name}"
    if len(name) > MAX_NAME:
        digest = hashlib.sha256(volume_name.encode("utf-8")).hexdigest()[:HASH_DIGITS]
        name = f"{name[:MAX_NAME - HASH_DIGITS - 1].rstrip('-')}-{digest}"
    return {"name": name, "image": settings.image, "command": ["python3", "-c", programs.WAIT],
            "env": [{"name": "OMERENDER_MARKER", "value": f"{CLAIM_ROOT}/{MARKER}"},
                    {"name": "OMERENDER_POLL_SECONDS", "value": POLL_SECONDS}],
            "resources": resources(settings.wait_resources), "securityContext": container_security(user=True),
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
