"""Every pod template omerender writes passes the API server's own pod rules (issue 41): Kubernetes'
ValidatePodSpec (pkg/apis/core/validation/validation.go) and resource.ParseQuantity, checked once, after every
step that changes a pod (profiles, weights, podOverride, placeholders), for Deployments, both templates of a
LeaderWorkerSet, BenchmarkJob Jobs and download Jobs; each refusal an error naming the object, the field and
where it came from."""
from __future__ import annotations

import copy

import pytest

from conftest import render_objects, worked_example
from omerender.errors import OmeError
from omerender.kube.podrules import pod_refusal
from omerender.kube.quantities import parse_quantity

ISVC = "error: <stdin>: InferenceService llama-demo/llama-3-2-3b-instruct: "


def objs(edit=None) -> dict:
    F = copy.deepcopy(worked_example())
    F["isvc"]["spec"]["engine"]["maxReplicas"] = 1
    if edit is not None:
        edit(F)
    return F


def runner(F) -> dict:
    return F["runtime"]["spec"]["engineConfig"]["runner"]


def render(F, *flags):
    return render_objects(list(F.values()), *flags)


def download(F, *extra):
    return render_objects(list(F.values()) + list(extra), "--model-weights", "download")


def refused(run) -> list[str]:
    assert run.code == 1 and run.stdout == "", run.stderr
    return [line for line in run.lines if line.startswith("error:")]


def engine_pod(run) -> dict:
    return run.find("Deployment", "llama-3-2-3b-instruct-engine")["spec"]["template"]["spec"]


# ---------------------------------------------------------------- quantities: ASCII digits only

@pytest.mark.parametrize("text", ["１６Gi", "١٦Gi", "16Gi\u0660", "1e１", "٠.5"])
def test_a_quantity_with_non_ascii_digits_is_refused(text):
    with pytest.raises(OmeError) as err:
        parse_quantity(text, "x")
    assert err.value.text == f'x: Invalid value: "{text}": must be a Kubernetes quantity'


def test_ascii_quantities_still_parse():
    assert parse_quantity("16Gi", "x") == 16 * 2 ** 30 and parse_quantity("1e3", "x") == 1000


def test_a_full_width_weights_size_is_an_error_on_the_model():
    def edit(F):
        F["model"]["metadata"]["annotations"] = {"omerender.io/weights-size": "１６Gi"}
    lines = refused(download(objs(edit)))
    assert lines == ['error: <stdin>: ClusterBaseModel llama-3-2-3b-instruct: metadata.annotations.omerender.io/'
                     'weights-size: Invalid value: "１６Gi": must be a Kubernetes quantity']


def test_a_full_width_memory_of_a_runtime_is_an_error():
    def edit(F):
        runner(F)["resources"]["limits"]["memory"] = "３０Gi"
    lines = refused(render(objs(edit)))
    assert len(lines) == 1 and "limits.memory" in lines[0], lines
    assert 'Invalid value: "３０Gi": must be a Kubernetes quantity' in lines[0]


# ---------------------------------------------------------------- the rules, one test each

def test_unique_container_names_across_init_and_app_containers():
    assert pod_refusal({"containers": [{"name": "a", "image": "i"}],
                        "initContainers": [{"name": "a", "image": "i"}]}).text == \
        'initContainers[0].name: Duplicate value: "a"'
    assert pod_refusal({"containers": [{"name": "a", "image": "i"}, {"name": "a", "image": "i"}]}).text == \
        'containers[1].name: Duplicate value: "a"'


def test_unique_volume_names():
    assert pod_refusal({"containers": [{"name": "a"}],
                        "volumes": [{"name": "v", "emptyDir": {}}, {"name": "v", "emptyDir": {}}]}).text == \
        'volumes[1].name: Duplicate value: "v"'


def test_every_mount_names_a_volume_of_the_pod():
    assert pod_refusal({"containers": [{"name": "a", "volumeMounts": [{"name": "v", "mountPath": "/v"}]}]}).text == \
        'containers[0].volumeMounts[0].name: Not found: "v"'
    assert pod_refusal({"initContainers": [{"name": "a", "volumeMounts": [{"name": "v", "mountPath": "/v"}]}],
                        "containers": [{"name": "b"}]}).text == \
        'initContainers[0].volumeMounts[0].name: Not found: "v"'


def test_a_mount_path_once_per_container():
    pod = {"volumes": [{"name": "v", "emptyDir": {}}, {"name": "w", "emptyDir": {}}],
           "containers": [{"name": "a", "volumeMounts": [{"name": "v", "mountPath": "/m"},
                                                         {"name": "w", "mountPath": "/m"}]},
                          {"name": "b", "volumeMounts": [{"name": "v", "mountPath": "/m"}]}]}
    assert pod_refusal(pod).text == ('containers[0].volumeMounts[1].mountPath: Invalid value: "/m": must be unique '
                                     '(w is mounted where v is)')


@pytest.mark.parametrize("sub, problem", [("/etc", "must be a relative path"), ("a/../../b", "must not contain '..'"),
                                          ("..", "must not contain '..'")])
def test_sub_paths_are_relative_and_never_step_up(sub, problem):
    pod = {"volumes": [{"name": "v", "emptyDir": {}}],
           "containers": [{"name": "a", "volumeMounts": [{"name": "v", "mountPath": "/m", "subPath": sub}]}]}
    assert pod_refusal(pod).text == f'containers[0].volumeMounts[0].subPath: Invalid value: "{sub}": {problem}'


def test_sub_paths_kubernetes_allows():
    pod = {"volumes": [{"name": "v", "emptyDir": {}}],
           "containers": [{"name": "a", "volumeMounts": [{"name": "v", "mountPath": "/m", "subPath": "a/..b/c.."}]}]}
    assert pod_refusal(pod) is None


def test_quantities_of_every_container_and_volume():
    assert pod_refusal({"containers": [{"name": "a", "resources": {"requests": {"cpu": "１"}}}]}).text == \
        'containers[0].resources.requests.cpu: Invalid value: "１": must be a Kubernetes quantity'
    assert pod_refusal({"containers": [{"name": "a"}],
                        "volumes": [{"name": "v", "emptyDir": {"sizeLimit": "１Gi"}}]}).text == \
        'volumes[0].emptyDir.sizeLimit: Invalid value: "１Gi": must be a Kubernetes quantity'


# ---------------------------------------------------------------- the attacks of issue 41, end to end

def test_a_profile_mount_at_a_path_the_runtime_mounts_already_is_an_error():
    def edit(F):
        spec = F["runtime"]["spec"]["engineConfig"]
        spec["volumes"] = [{"name": "shm", "emptyDir": {"medium": "Memory"}}]
        runner(F)["volumeMounts"] = [{"name": "shm", "mountPath": "/dev/shm"}]
        spec["annotations"]["runtime.ome.io/shm-profile"] = "default"
    assert refused(render(objs(edit))) == [
        f'{ISVC}engine pod template: containers[0].volumeMounts[2].mountPath: Invalid value: "/dev/shm": must be '
        f"unique (dshm is mounted where shm is; OME's pod webhook adds dshm for runtime.ome.io/shm-profile)"]


def test_a_serving_mount_that_names_no_volume_is_an_error():
    def edit(F):
        runner(F)["volumeMounts"].append({"name": "cache", "mountPath": "/cache"})
    assert refused(render(objs(edit))) == [
        f'{ISVC}engine pod template: containers[0].volumeMounts[1].name: Not found: "cache"']


def test_a_leader_or_worker_template_gets_the_same_check():
    def edit(F):
        spec = F["runtime"]["spec"]
        engine = spec.pop("engineConfig")
        spec["engineConfig"] = {"leader": {"runner": engine["runner"], "volumes": engine["volumes"]},
                                "worker": {"size": 1, "runner": {**engine["runner"], "name": "worker",
                                                                 "volumeMounts": [{"name": "gone",
                                                                                   "mountPath": "/gone"}]}}}
    run = render(objs(edit))
    lines = refused(run)
    assert lines == [f'{ISVC}engine.worker pod template: containers[0].volumeMounts[0].name: Not found: "gone"'], \
        run.stderr


def test_a_benchmark_pod_override_mount_naming_no_volume_is_an_error():
    bench = {"apiVersion": "ome.io/v1beta1", "kind": "BenchmarkJob",
             "metadata": {"name": "llama-bench", "namespace": "llama-demo"},
             "spec": {"endpoint": {"inferenceService": {"name": "llama-3-2-3b-instruct", "namespace": "llama-demo"}},
                      "task": "text-to-text", "maxTimePerIteration": 10, "maxRequestsPerIteration": 200,
                      "outputLocation": {"storageUri": "pvc://benchmark-results/llama"},
                      "podOverride": {"image": "genai-bench:1",
                                      "volumeMounts": [{"name": "nowhere", "mountPath": "/data"}]}}}
    run = render_objects(list(objs().values()) + [bench])
    assert refused(run) == [
        "error: <stdin>: BenchmarkJob llama-demo/llama-bench: rendered Job llama-demo/llama-bench: "
        'spec.template.spec.containers[0].volumeMounts[2].name: Not found: "nowhere" '
        "(add the volume in spec.podOverride.volumes)"]


def overlay_model(F, name):
    model = copy.deepcopy(F["model"])
    model["metadata"]["name"] = name
    model["metadata"]["annotations"] = {"omerender.io/weights-size": "1Gi"}
    model["spec"]["storage"] = {"storageUri": f"hf://org/{name}", "path": f"/raid/models/org/{name}"}
    return model


def test_two_overlays_sharing_their_first_44_characters_get_two_wait_steps():
    F = objs()
    names = ["a" * 44 + "-one", "a" * 44 + "-two"]
    F["isvc"]["spec"]["model"]["overlays"] = [{"name": n} for n in names]
    run = download(F, *(overlay_model(F, n) for n in names))
    assert run.code == 0, run.stderr
    init = engine_pod(run)["initContainers"]
    waits = [c["name"] for c in init]
    assert len(waits) == 3 and len(set(waits)) == 3, waits
    assert waits[0] == "wait-llama-3-2-3b-instruct"
    assert all(len(w) <= 63 and w.startswith("wait-model-overlay-" + "a" * 20) for w in waits[1:]), waits
    assert [c["volumeMounts"][0]["name"] for c in init] == ["llama-3-2-3b-instruct"] + \
        [f"model-overlay-{n}" for n in names]


def test_a_runtime_init_container_with_the_wait_steps_name_is_an_error_never_a_skipped_wait():
    def edit(F):
        F["runtime"]["spec"]["engineConfig"]["initContainers"] = [
            {"name": "wait-llama-3-2-3b-instruct", "image": "busybox", "command": ["true"]}]
    assert refused(download(objs(edit))) == [
        f"{ISVC}engine pod template: initContainers[1].name: Duplicate value: \"wait-llama-3-2-3b-instruct\" (the "
        "wait step of --model-weights download, which holds the pod until the weights of its volume "
        "llama-3-2-3b-instruct are downloaded, has this name: rename the runtime's or the InferenceService's init container)"]


def test_the_download_job_and_the_catalog_pods_pass():
    run = download(objs())
    assert run.code == 0, run.stderr
    assert engine_pod(run)["initContainers"][0]["name"] == "wait-llama-3-2-3b-instruct"


def test_a_pvc_model_whose_sub_path_steps_up_is_an_error():
    def edit(F):
        F["model"]["spec"]["storage"] = {"storageUri": "pvc://llama-demo:models/../../etc", "path": "/models"}
    run = render(objs(edit))
    lines = refused(run)
    assert lines == [f"{ISVC}engine pod template: containers[0].volumeMounts[1].subPath: Invalid value: "
                     f"\"../../etc\": must not contain '..'"], run.stderr


def test_every_job_template_is_checked_by_the_one_function():
    from omerender.kube.podrules import object_refusal
    job = {"kind": "Job", "spec": {"template": {"spec": {
        "containers": [{"name": "download", "volumeMounts": [{"name": "weights", "mountPath": "/weights"}]}]}}}}
    path, found = object_refusal(job)
    assert (path, found.text) == ("spec.template.spec", 'containers[0].volumeMounts[0].name: Not found: "weights"')
    job["spec"]["template"]["spec"]["volumes"] = [{"name": "weights", "persistentVolumeClaim": {"claimName": "c"}}]
    assert object_refusal(job) is None
