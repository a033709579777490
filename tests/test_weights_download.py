"""--model-weights download (docs/how-to/model-weights.md, render.md §6.5): per model and namespace a claim and a
Job that downloads the model into it; the pods mount the claim read-only and wait for the download; nothing of OME."""
from __future__ import annotations

import copy
import re

import pytest
import yaml

from conftest import CHART_DEFAULTS_INFO, render_objects, validate_k8s
from omerender.ome.weights import programs
from omerender.ome.weights.settings import DEFAULT_IMAGE

WE = "fixtures/worked-example/inputs.yaml"
MODEL = "ClusterBaseModel llama-3-2-3b-instruct"
ENGINE = "llama-3-2-3b-instruct-engine"
ROUTER = "llama-3-2-3b-instruct-router"
DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
def size_fix(gi: str) -> str:
    """The fix names the size the claim gets as its example (issue 40: not 20Gi for a 763Gi model)."""
    return f"set the annotation omerender.io/weights-size on the model (e.g. omerender.io/weights-size: {gi}) to " \
           "the size of its files"


def download(objs, *flags):
    return render_objects(objs, "--model-weights", "download", *flags)


def single(F):
    """The worked example with one engine replica at most: no ReadWriteOnce warning."""
    F["isvc"]["spec"]["engine"]["maxReplicas"] = 1
    return F


def claim_of(run):
    return run.find("PersistentVolumeClaim")["metadata"]["name"]


def pod(run, name=ENGINE):
    return run.find("Deployment", name)["spec"]["template"]["spec"]


def test_the_worked_example_gets_a_claim_a_job_and_pods_that_mount_and_wait(F):
    run = download(list(single(F).values()))
    assert run.code == 0, run.stderr
    claim = claim_of(run)
    assert re.fullmatch(r"llama-3-2-3b-instruct-weights-[0-9a-f]{10}", claim)
    assert run.lines == [CHART_DEFAULTS_INFO, f"warning: <stdin>: {MODEL}: the weights claim is 8Gi, estimated from modelParameterSize "
                         f"3.21B at 2 bytes a parameter (16-bit weights) plus 20%; {size_fix('8Gi')}"]
    assert [k for k, _ in run.kinds()][-2:] == ["PersistentVolumeClaim", "Job"]
    assert not [o for o in run.objects if o["apiVersion"].startswith("ome.io/")]
    labels = {"app.kubernetes.io/component": "model-weights", "app.kubernetes.io/managed-by": "omerender"}
    annotations = {"omerender.io/model": MODEL.replace(" ", "/"),
                   "omerender.io/storage-uri": "hf://meta-llama/Llama-3.2-3B-Instruct"}
    assert run.find("PersistentVolumeClaim") == {
        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": claim, "namespace": "llama-demo", "labels": labels, "annotations": annotations},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "8Gi"}}}}
    job = run.find("Job")
    assert re.fullmatch(r"llama-3-2-3b-instruct-download-[0-9a-f]{10}", job["metadata"]["name"])
    assert job["metadata"] == {"name": job["metadata"]["name"], "namespace": "llama-demo", "labels": labels,
                               "annotations": annotations}
    assert "ttlSecondsAfterFinished" not in job["spec"] and job["spec"]["backoffLimit"] == 6
    assert job["spec"]["activeDeadlineSeconds"] == 28800
    template = job["spec"]["template"]["spec"]
    assert template["restartPolicy"] == "OnFailure"
    assert template["volumes"] == [{"name": "weights", "persistentVolumeClaim": {"claimName": claim}},
                                   {"name": "tmp", "emptyDir": {}}]
    assert template["securityContext"] == {"runAsNonRoot": True, "runAsUser": 1000, "runAsGroup": 1000,
                                           "fsGroup": 1000, "fsGroupChangePolicy": "OnRootMismatch",
                                           "seccompProfile": {"type": "RuntimeDefault"}}
    locked_down = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]},
                   "readOnlyRootFilesystem": True}
    assert template["containers"] == [{
        "name": "download", "image": DEFAULT_IMAGE, "command": ["python3", "-c", programs.DOWNLOAD],
        "env": [{"name": "OMERENDER_REPO_ID", "value": "meta-llama/Llama-3.2-3B-Instruct"},
                {"name": "OMERENDER_REVISION", "value": "main"},
                {"name": "OMERENDER_TARGET_DIR", "value": "/weights/model"},
                {"name": "OMERENDER_MARKER", "value": "/weights/download-complete"},
                {"name": "HF_HOME", "value": "/weights/.huggingface"},
                {"name": "HF_HUB_DISABLE_TELEMETRY", "value": "1"},
                {"name": "HOME", "value": "/tmp"},
                {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf-token", "key": "token"}}}],
        "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "2", "memory": "4Gi"}},
        "securityContext": locked_down,
        "volumeMounts": [{"name": "weights", "mountPath": "/weights"}, {"name": "tmp", "mountPath": "/tmp"}]}]
    engine = pod(run)
    path = "/raid/models/meta/llama-3-2-3b-instruct"
    assert engine["volumes"] == [{"name": "dshm", "emptyDir": {"medium": "Memory"}},  # the runtime's
                                 {"name": "llama-3-2-3b-instruct",
                                  "persistentVolumeClaim": {"claimName": claim, "readOnly": True}}]
    runner = engine["containers"][0]
    assert runner["volumeMounts"] == [{"name": "dshm", "mountPath": "/dev/shm"},
                                      {"name": "llama-3-2-3b-instruct", "mountPath": path, "subPath": "model",
                                       "readOnly": True}]
    assert {"name": "MODEL_PATH", "value": path} in runner["env"]
    assert engine["initContainers"] == [{
        "name": "wait-llama-3-2-3b-instruct", "image": DEFAULT_IMAGE, "command": ["python3", "-c", programs.WAIT],
        "env": [{"name": "OMERENDER_MARKER", "value": "/weights/download-complete"},
                {"name": "OMERENDER_POLL_SECONDS", "value": "5"}],
        "resources": {"requests": {"cpu": "10m", "memory": "64Mi"}, "limits": {"cpu": "100m", "memory": "128Mi"}},
        "securityContext": {**locked_down, "runAsNonRoot": True, "runAsUser": 1000, "runAsGroup": 1000,
                            "seccompProfile": {"type": "RuntimeDefault"}},
        "volumeMounts": [{"name": "llama-3-2-3b-instruct", "mountPath": "/weights", "readOnly": True}]}]
    assert "nodeSelector" not in engine and "affinity" not in engine
    router = pod(run, ROUTER)
    assert "initContainers" not in router and "volumes" not in router  # the router needs no weights
    for obj in run.objects:
        validate_k8s(obj)


def test_nothing_of_the_model_agent_remains_and_two_renders_are_byte_identical(F):
    first, second = download(list(F.values())), download(list(F.values()))
    assert first.code == 0 and first.stdout == second.stdout
    assert "models.ome.io/" not in first.stdout and "hostPath" not in first.stdout


def test_secrets_programs_and_paths_never_come_from_the_repository(F):
    """The programs are omerender's constants; the model's values reach them only through env."""
    F["model"]["spec"]["storage"]["storageUri"] = "hf://org-x/m.y_z@refs/pr/1"
    run = download(list(single(F).values()))
    assert run.code == 0, run.stderr
    for container in run.find("Job")["spec"]["template"]["spec"]["containers"] + pod(run)["initContainers"]:
        assert container["command"][2] in (programs.DOWNLOAD, programs.WAIT)
        assert "org-x" not in container["command"][2] and "refs/pr/1" not in container["command"][2]
    env = run.find("Job")["spec"]["template"]["spec"]["containers"][0]["env"]
    assert env[:2] == [{"name": "OMERENDER_REPO_ID", "value": "org-x/m.y_z"},
                       {"name": "OMERENDER_REVISION", "value": "refs/pr/1"}]


def names(run):
    return run.find("PersistentVolumeClaim")["metadata"]["name"], run.find("Job")["metadata"]["name"]


@pytest.mark.parametrize("uri", ["hf://meta-llama/Llama-3.2-3B", "hf://meta-llama/Llama-3.2-3B-Instruct@main",
                                 "hf://meta-llama/Llama-3.2-3B-Instruct@v2"])
def test_a_changed_source_is_a_new_claim_and_a_new_job(F, uri):
    before = download(list(F.values()))
    F["model"]["spec"]["storage"]["storageUri"] = uri
    after = download(list(F.values()))
    assert after.code == 0, after.stderr
    assert names(after)[0] != names(before)[0] and names(after)[1] != names(before)[1]
    assert names(after)[0].startswith("llama-3-2-3b-instruct-weights-")
    assert names(after)[1].startswith("llama-3-2-3b-instruct-download-")


@pytest.mark.parametrize("flags", [("--downloader-image", "registry.example/dl:1"),
                                   ("--weights-storage-class", "fast"),
                                   ("--weights-access-mode", "ReadWriteMany")])
def test_a_changed_setting_of_the_immutable_objects_is_a_new_claim_and_job(F, flags):
    assert names(download(list(F.values()), *flags)) != names(download(list(F.values())))


def test_settings_reach_the_claim_the_job_and_the_wait_step(F):
    run = download(list(F.values()), "--weights-storage-class", "fast.example.com", "--weights-access-mode",
                   "ReadWriteMany", "--downloader-image", "registry.example/hf-dl@sha256:" + "a" * 64)
    assert run.code == 0, run.stderr
    spec = run.find("PersistentVolumeClaim")["spec"]
    assert (spec["storageClassName"], spec["accessModes"]) == ("fast.example.com", ["ReadWriteMany"])
    image = "registry.example/hf-dl@sha256:" + "a" * 64
    assert run.find("Job")["spec"]["template"]["spec"]["containers"][0]["image"] == image
    assert pod(run)["initContainers"][0]["image"] == image
    assert not [line for line in run.lines if "ReadWriteOnce" in line]


@pytest.mark.parametrize("name", ["m" * 63, "a-" * 31 + "b", "x1234567890-" * 5 + "abc"])
def test_long_model_names_make_names_of_at_most_63_characters(F, name):
    F["model"]["metadata"]["name"] = name
    F["isvc"]["spec"]["model"]["name"] = name
    run = download(list(F.values()))
    assert run.code == 0, run.stderr
    claim, job = names(run)
    for made, what in ((claim, "weights"), (job, "download")):
        assert len(made) <= 63 and DNS_LABEL.fullmatch(made), made
        assert re.search(rf"-{what}-[0-9a-f]{{10}}$", made)
        assert made.startswith(name[:20])
    for obj in run.objects:
        validate_k8s(obj)


def test_a_model_with_a_dot_in_its_name_is_refused_as_in_agent_mode(F):
    F["model"]["metadata"]["name"] = "llama.3"
    F["isvc"]["spec"]["model"]["name"] = "llama.3"
    agent, down = render_objects(list(F.values())), download(list(F.values()))
    assert (down.code, down.stdout) == (1, "")
    assert agent.lines == down.lines and 'Invalid value: "llama.3"' in down.stderr


def error_line(run):
    assert (run.code, run.stdout) == (1, ""), run.stderr
    (line,) = run.lines
    return line


@pytest.mark.parametrize("uri,text", [
    ("s3://bucket/llama", "storageUri s3://: --model-weights download downloads hf:// models only; render with "
                          "--model-weights agent (OME's model agent downloads it), or serve it from a pvc:// model"),
    ("oci://n/ns/b/bucket/o/llama", "storageUri oci://: --model-weights download downloads hf:// models only; render "
                                    "with --model-weights agent (OME's model agent downloads it), or serve it from a "
                                    "pvc:// model"),
    ("vendor://x", "storageUri vendor://: --model-weights download downloads hf:// models only; render with "
                   "--model-weights agent (OME's model agent downloads it), or serve it from a pvc:// model"),
    ("ftp://x/y", 'storageUri "ftp://x/y" has no scheme OME knows; --model-weights download downloads hf:// models '
                  "only; render with --model-weights agent (OME's model agent downloads it), or serve it from a "
                  "pvc:// model"),
    ("hf://", 'storageUri "hf://": "" is not a Hugging Face model id (ORG/NAME: letters, digits, "-", "_", ".", at '
              "most 96 characters)"),
    ("hf://../etc/passwd", 'storageUri "hf://../etc/passwd": "../etc/passwd" is not a Hugging Face model id (ORG/NAME: '
                           'letters, digits, "-", "_", ".", at most 96 characters)'),
    ("hf://org/m@", 'storageUri "hf://org/m@": "" after @ is not a revision (a branch, tag or commit: letters, '
                    'digits, "-", "_", ".", "/", "+", at most 255 characters)'),
    ("hf://org/m@main\nerror: forged", 'storageUri "hf://org/m@main\\nerror: forged": "main\\nerror: forged" after @ '
                                       'is not a revision (a branch, tag or commit: letters, digits, "-", "_", ".", '
                                       '"/", "+", at most 255 characters)'),
    ("hf://org/m@$(rm -rf /)", 'storageUri "hf://org/m@$(rm -rf /)": "$(rm -rf /)" after @ is not a revision (a '
                               'branch, tag or commit: letters, digits, "-", "_", ".", "/", "+", at most 255 '
                               'characters)'),
])
def test_what_download_mode_cannot_download_is_an_error_on_the_model(F, uri, text):
    F["model"]["spec"]["storage"]["storageUri"] = uri
    assert error_line(download(list(F.values()))) == f"error: <stdin>: {MODEL}: {text}"


def test_a_missing_storage_uri_is_an_error(F):
    del F["model"]["spec"]["storage"]["storageUri"]
    assert error_line(download(list(F.values()))) == (
        f"error: <stdin>: {MODEL}: {MODEL} has no spec.storage.storageUri: --model-weights download needs one to "
        f"know what to download (hf://ORG/NAME[@REVISION])")


@pytest.mark.parametrize("key", ["token", "hfToken", "AWS_SECRET_ACCESS_KEY", "password"])
def test_a_literal_credential_in_the_model_is_an_error_saying_to_use_a_secret(F, key):
    F["model"]["spec"]["storage"]["parameters"] = {key: "hf_literal_value"}
    run = download(list(F.values()))
    assert error_line(run) == (
        f"error: <stdin>: {MODEL}: spec.storage.parameters.{key} is a literal credential, and --model-weights download "
        f"never writes one into its output: put the token in a Secret (data key token) in the InferenceService's "
        f"namespace, name the Secret in spec.storage.key and remove the parameter")
    assert "hf_literal_value" not in run.stderr


def test_a_model_error_is_reported_once_however_many_inference_services_use_it(F):
    F["model"]["spec"]["storage"]["storageUri"] = "s3://bucket/llama"
    second = copy.deepcopy(F["isvc"])
    second["metadata"]["name"] = "second"
    run = download(list(F.values()) + [second])
    assert (run.code, len(run.lines)) == (1, 1)


def test_the_secret_key_parameter_names_the_data_key_and_no_key_means_no_token(F):
    F["model"]["spec"]["storage"]["parameters"] = {"secretKey": "hf_api_token"}
    run = download(list(F.values()))
    env = run.find("Job")["spec"]["template"]["spec"]["containers"][0]["env"]
    assert env[-1] == {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf-token", "key": "hf_api_token"}}}
    del F["model"]["spec"]["storage"]["key"]
    env = download(list(F.values())).find("Job")["spec"]["template"]["spec"]["containers"][0]["env"]
    assert "HF_TOKEN" not in [e["name"] for e in env]


@pytest.mark.parametrize("key,field,text", [
    ("key", "Bad_Secret", 'spec.storage.key "Bad_Secret" is not a Secret name (a DNS subdomain)'),
    ("key", "a\nb", 'spec.storage.key "a\\nb" is not a Secret name (a DNS subdomain)'),
    *[("secretKey", value, f'spec.storage.parameters.secretKey "{value}" is not a Secret data key (letters, '
                           'digits, "-", "_", ".", not "." or "..", not starting with "..")')
      for value in ("a b", ".", "..", "..token")],
])
def test_a_bad_secret_reference_is_an_error(F, key, field, text):
    if key == "key":
        F["model"]["spec"]["storage"]["key"] = field
    else:
        F["model"]["spec"]["storage"]["parameters"] = {"secretKey": field}
    assert error_line(download(list(F.values()))) == f"error: <stdin>: {MODEL}: {text}"


# ---------------------------------------------------------------- the claim's size

def size_of(run):
    return run.find("PersistentVolumeClaim")["spec"]["resources"]["requests"]["storage"]


def test_the_size_annotation_sets_the_claim_and_silences_the_warning(F):
    F["model"]["metadata"]["annotations"] = {"omerender.io/weights-size": "7Gi"}
    run = download(list(single(F).values()))
    assert (run.code, run.lines, size_of(run)) == (0, [CHART_DEFAULTS_INFO], "7Gi")


@pytest.mark.parametrize("value,text", [
    ("seven", 'metadata.annotations.omerender.io/weights-size: Invalid value: "seven": must be a Kubernetes quantity'),
    ("0", 'metadata.annotations.omerender.io/weights-size: Invalid value: "0": the weights claim needs a size above 0'),
    ("1e99", 'metadata.annotations.omerender.io/weights-size: Invalid value: "1e99": must be a Kubernetes quantity of '
             'at most 9223372036854775807 (2^63-1) in magnitude'),
])
def test_a_bad_size_annotation_is_an_error(F, value, text):
    F["model"]["metadata"]["annotations"] = {"omerender.io/weights-size": value}
    assert error_line(download(list(F.values()))) == f"error: <stdin>: {MODEL}: {text}"


@pytest.mark.parametrize("size,quantization,claim,dtype", [
    ("70B", None, "157Gi", "2 bytes a parameter (16-bit weights)"),
    ("70B", "fp8", "79Gi", "1 bytes a parameter (quantization fp8)"),
    ("70B", "int4", "40Gi", "0.5 bytes a parameter (quantization int4)"),
])
def test_the_size_is_estimated_from_the_parameter_count_and_quantization(F, size, quantization, claim, dtype):
    F["model"]["spec"]["modelParameterSize"] = size
    if quantization:
        F["model"]["spec"]["quantization"] = quantization
    run = download(list(single(F).values()))
    assert size_of(run) == claim
    assert run.lines[-1] == (f"warning: <stdin>: {MODEL}: the weights claim is {claim}, estimated from "
                             f"modelParameterSize {size} at {dtype} plus 20%; {size_fix(claim)}")


@pytest.mark.parametrize("size", [None, "lots", "9" * 40 + "T"])
def test_without_a_readable_size_the_default_is_used_with_a_warning(F, size):
    F["model"]["spec"].pop("modelParameterSize")
    if size:
        F["model"]["spec"]["modelParameterSize"] = size
    run = download(list(single(F).values()))
    assert run.code == 0 and size_of(run) == "100Gi"
    assert f"warning: <stdin>: {MODEL}: the weights claim is 100Gi, the default for a model with no size omerender " \
           f"can read; {size_fix('100Gi')}" in run.lines


def test_the_size_warning_is_once_per_model_and_the_claim_once_per_namespace(F):
    single(F)
    others = []
    for name, namespace in (("second", "llama-demo"), ("third", "other")):
        isvc = copy.deepcopy(F["isvc"])
        isvc["metadata"].update(name=name, namespace=namespace)
        others.append(isvc)
    run = download(list(F.values()) + others)
    assert run.code == 0, run.stderr
    claims = [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in run.objects
              if o["kind"] == "PersistentVolumeClaim"]
    jobs = [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in run.objects if o["kind"] == "Job"]
    assert [ns for ns, _ in claims] == [ns for ns, _ in jobs] == ["llama-demo", "other"]
    assert len({name for _, name in claims}) == len({name for _, name in jobs}) == 1
    assert len([line for line in run.lines if "estimated from" in line]) == 1


# ---------------------------------------------------------------- pods on several nodes

RWO_FIX = ("a ReadWriteOnce volume attaches to one node, so pods elsewhere stay Pending; render with "
           "--weights-access-mode ReadWriteMany --weights-storage-class CLASS, a StorageClass that supports it")


def test_a_read_write_once_claim_under_several_replicas_is_named_with_the_fix(F):
    run = download(list(F.values()))
    claim = claim_of(run)
    assert run.lines[-1] == (f"warning: <stdin>: {MODEL}: PersistentVolumeClaim llama-demo/{claim} is ReadWriteOnce, "
                             f"and pods that may run on different nodes at once mount it "
                             f"(llama-3-2-3b-instruct/engine: up to 2 replicas): {RWO_FIX}")
    assert "ReadWriteOnce" not in download(list(F.values()), "--weights-access-mode", "ReadWriteMany").stderr
    once_pod = download(list(F.values()), "--weights-access-mode", "ReadWriteOncePod")
    assert once_pod.lines[-1].endswith("is ReadWriteOncePod, and pods that may run on different nodes at once mount it "
                                       "(llama-3-2-3b-instruct/engine: up to 2 replicas): a ReadWriteOncePod volume is "
                                       "mounted by one pod at a time, so the others stay Pending; render with "
                                       "--weights-access-mode ReadWriteMany --weights-storage-class CLASS, a "
                                       "StorageClass that supports it")


def test_a_leader_worker_set_with_workers_is_named(F):
    engine = F["runtime"]["spec"]["engineConfig"]
    runner = engine.pop("runner")
    engine["leader"] = {"runner": runner, "volumes": engine["volumes"]}   # the mounts name a volume of each pod
    engine["worker"] = {"size": 2, "runner": dict(runner), "volumes": engine["volumes"]}
    run = download(list(single(F).values()))
    assert run.code == 0, run.stderr
    lws = run.find("LeaderWorkerSet")["spec"]["leaderWorkerTemplate"]
    for template in (lws["leaderTemplate"], lws["workerTemplate"]):
        assert template["spec"]["initContainers"][0]["name"] == "wait-llama-3-2-3b-instruct"
        assert "nodeSelector" not in template["spec"]
    assert "(llama-3-2-3b-instruct/engine: a LeaderWorkerSet with 2 worker pods)" in run.lines[-1]
    for obj in run.objects:
        validate_k8s(obj)


def test_a_read_write_once_claim_shared_by_inference_services_is_named(F):
    single(F)
    second = copy.deepcopy(F["isvc"])
    second["metadata"]["name"] = "second"
    run = download(list(F.values()) + [second])
    assert run.lines[-1] == (f"warning: <stdin>: {MODEL}: PersistentVolumeClaim llama-demo/{claim_of(run)} is "
                             f"ReadWriteOnce, and pods that may run on different nodes at once mount it (2 components "
                             f"mount it (llama-3-2-3b-instruct/engine, second/engine)): {RWO_FIX}")


# ---------------------------------------------------------------- what stays as v1.3 renders it

def test_a_pvc_model_renders_as_in_agent_mode(F):
    F["model"]["spec"]["storage"] = {"storageUri": "pvc://models/llama/3b"}
    F["model"]["kind"] = "BaseModel"
    F["model"]["metadata"]["namespace"] = "llama-demo"
    F["model"]["spec"]["storage"]["storageUri"] = "pvc://models/llama/3b"
    F["isvc"]["spec"]["model"]["kind"] = "BaseModel"
    agent, down = render_objects(list(F.values())), download(list(F.values()))
    assert agent.code == 0 and down.code == 0, agent.stderr + down.stderr
    rendered = [o for o in agent.objects if not o["apiVersion"].startswith("ome.io/")]
    assert rendered == down.objects
    assert pod(down)["volumes"][1:] == [{"name": "llama-3-2-3b-instruct",
                                     "persistentVolumeClaim": {"claimName": "models", "readOnly": True}}]


def test_model_overlays_get_their_own_claims_mounts_and_wait_steps(F):
    single(F)
    overlay = copy.deepcopy(F["model"])
    overlay["metadata"]["name"] = "adapter"
    overlay["spec"]["storage"] = {"storageUri": "hf://org/adapter", "path": "/raid/models/org/adapter"}
    overlay["metadata"]["annotations"] = {"omerender.io/weights-size": "1Gi"}
    F["isvc"]["spec"]["model"]["overlays"] = [{"name": "adapter"}]
    run = download(list(F.values()) + [overlay])
    assert run.code == 0, run.stderr
    claims = sorted(o["metadata"]["name"] for o in run.objects if o["kind"] == "PersistentVolumeClaim")
    assert [c.split("-weights-")[0] for c in claims] == ["adapter", "llama-3-2-3b-instruct"]
    engine = pod(run)
    assert [c["name"] for c in engine["initContainers"]] == ["wait-llama-3-2-3b-instruct",
                                                            "wait-model-overlay-adapter"]
    assert engine["volumes"][2] == {"name": "model-overlay-adapter",
                                    "persistentVolumeClaim": {"claimName": claims[0], "readOnly": True}}
    assert engine["containers"][0]["volumeMounts"][2] == {"name": "model-overlay-adapter",
                                                          "mountPath": "/opt/ml/model-overlays/adapter",
                                                          "subPath": "model", "readOnly": True}
    assert engine["initContainers"][1]["volumeMounts"] == [{"name": "model-overlay-adapter", "mountPath": "/weights",
                                                            "readOnly": True}]
    for obj in run.objects:
        validate_k8s(obj)


def test_a_model_without_a_path_is_mounted_at_the_default_path(F):
    del F["model"]["spec"]["storage"]["path"]
    run = download(list(F.values()))
    runner = pod(run)["containers"][0]
    assert runner["volumeMounts"][1]["mountPath"] == "/opt/ml/model"
    assert {"name": "MODEL_PATH", "value": "/opt/ml/model"} in runner["env"]


def test_the_wait_step_goes_before_the_runtimes_init_containers(F):
    F["runtime"]["spec"]["engineConfig"]["initContainers"] = [{"name": "setup", "image": "busybox"}]
    run = download(list(F.values()))
    assert [c["name"] for c in pod(run)["initContainers"]] == ["wait-llama-3-2-3b-instruct", "setup"]


def test_stdin_yaml_round_trips(F):
    run = download(list(F.values()))
    assert yaml.safe_load_all(run.stdout)


def test_a_benchmark_job_reads_the_tokenizer_from_the_claim(F):
    from test_benchmark import quickstart
    run = download(quickstart())
    assert run.code == 0, run.stderr
    claim = claim_of(run)
    (bench,) = [o for o in run.objects if o["kind"] == "Job" and o["metadata"]["name"] == "llama-bench"]
    pod = bench["spec"]["template"]["spec"]
    assert pod["volumes"][0] == {"name": "llama-3-2-3b-instruct",
                                 "persistentVolumeClaim": {"claimName": claim, "readOnly": True}}
    assert pod["containers"][0]["volumeMounts"][0] == {"name": "llama-3-2-3b-instruct",
                                                       "mountPath": "/raid/models/meta/llama-3-2-3b-instruct",
                                                       "subPath": "model", "readOnly": True}
    assert pod["initContainers"][0]["name"] == "wait-llama-3-2-3b-instruct" and "nodeSelector" not in pod
    assert "models.ome.io/" not in run.stdout and "hostPath" not in run.stdout
    for obj in run.objects:
        validate_k8s(obj)
