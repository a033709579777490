"""BenchmarkJobs become the Job OME's benchmark controller creates (issue 31, item 3; docs/spec/benchmarks.md), the
webhook's checks are errors with OME's texts, and no kind of OME's API groups passes through silently.

genai-bench can't be installed here, so the tests check that the Job's command and arguments are exactly the ones
OME's controller writes (v1.3 docs concepts/serving/benchmarks.md and reference/storage/benchmark-output-storage.md;
Go pkg/controller/v1beta1/benchmark), not that genai-bench runs them."""
import copy
import time
from pathlib import Path

import pytest
import yaml

from omerender.kube.envexpand import expand

from conftest import CHART_DEFAULTS_INFO, FIXTURES, load_yaml, render_objects, run_cli, validate_k8s, worked_example

CHART_IMAGE = "ghcr.io/moirai-internal/genai-bench:0.1.113"
SAMPLE_IMAGE = "ghcr.io/sgl-project/genai-bench:0.1.132"
RESOURCES = {"requests": {"cpu": "2", "memory": "2Gi"}, "limits": {"cpu": "2", "memory": "2Gi"}}
GPU_TOLERATION = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
OCI_ARGS = ["--upload-results", "--namespace", "idqj093njucb", "--storage-bucket", "ome-benchmark-results",
            "--storage-prefix"]
OCI_PARAMS = {"auth": "instance_principal", "region": "eu-frankfurt-1"}
OCI_PARAM_ARGS = ["--auth", "instance_principal", "--region", "eu-frankfurt-1"]


# ---------------------------------------------------------------- helpers

def serving(name, namespace, model, path, served=None):
    """The worked example's model, runtime and InferenceService, renamed: ``served`` replaces the runtime's
    --served-model-name (None keeps meta-llama/Llama-3.2-3B-Instruct)."""
    objs = copy.deepcopy(worked_example())
    objs["model"]["metadata"]["name"] = model
    objs["model"]["spec"]["storage"]["path"] = path
    objs["isvc"]["metadata"].update(name=name, namespace=namespace)
    objs["isvc"]["spec"]["model"]["name"] = model
    if served is not None:
        command = objs["runtime"]["spec"]["engineConfig"]["runner"]["command"]
        command[command.index("--served-model-name") + 1] = served
    return objs


def bench(name, namespace, **spec):
    base = {"endpoint": {"inferenceService": {"name": "llama-3-2-3b-instruct", "namespace": "llama-demo"}},
            "task": "text-to-text", "maxTimePerIteration": 10, "maxRequestsPerIteration": 200,
            "outputLocation": {"storageUri": "pvc://benchmark-results/llama"}}
    return {"apiVersion": "ome.io/v1beta1", "kind": "BenchmarkJob", "metadata": {"name": name, "namespace": namespace},
            "spec": {**base, **spec}}


def expected_job(name, namespace, args, *, container_name, image=SAMPLE_IMAGE, env=(), model=None, output=None,
                 node_selector=None, resources=RESOURCES):
    """The Job OME creates: ``model`` (name, path) for the tokenizer mount, ``output`` (claim, sub-path)."""
    meta = {"name": name, "namespace": namespace, "labels": {"benchmark": name},
            "annotations": {"logging-forward": "true"}}
    container = {"name": container_name, "image": image, "resources": resources,
                 "env": [{"name": "ENABLE_UI", "value": "false"}, *env], "command": ["genai-bench"], "args": args}
    volumes, mounts = [], []
    if model:
        volumes.append({"name": model[0], "hostPath": {"path": model[1]}})
        mounts.append({"name": model[0], "mountPath": model[1], "readOnly": True})
        container["env"].append({"name": "MODEL_PATH", "value": model[1]})
    if output:
        volumes.append({"name": "benchmark-output-storage", "persistentVolumeClaim": {"claimName": output[0]}})
        mounts.append({"name": "benchmark-output-storage", "mountPath": "/" + output[1], "subPath": output[1]})
    if mounts:
        container["volumeMounts"] = mounts
    pod = {"containers": [container], "tolerations": GPU_TOLERATION, "restartPolicy": "Never"}
    if volumes:
        pod["volumes"] = volumes
    if node_selector:
        pod["nodeSelector"] = node_selector
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta,
            "spec": {"backoffLimit": 0, "template": {"metadata": meta, "spec": pod}}}


def scenario_args(*scenarios):
    return [a for s in scenarios for a in ("--traffic-scenario", s)]


def concurrency_args(*levels):
    return [a for n in levels for a in ("--num-concurrency", str(n))]


def the_job(objects, *flags):
    run = render_objects(objects, *flags)
    assert run.code == 0, run.stderr
    jobs = [o for o in run.objects if o["kind"] == "Job"]
    assert len(jobs) == 1
    validate_k8s(jobs[0])
    assert "ownerReferences" not in jobs[0]["metadata"]
    assert not [o for o in run.objects if o["apiVersion"].startswith("ome.io/")
                and o["kind"] not in ("BaseModel", "ClusterBaseModel")] or "--keep-inputs" in flags  # models: D3
    return jobs[0]


def errors(objects, *flags):
    run = render_objects(objects, *flags)
    assert (run.code, run.stdout) == (1, ""), run.stderr
    return [line for line in run.lines if line.startswith("error:")]


def quickstart(**spec):
    """The worked example and one BenchmarkJob against it."""
    return list(worked_example().values()) + [bench("llama-bench", "llama-demo", **spec)]


QUICKSTART_ARGS = ["benchmark", "--api-backend", "openai", "--api-base",
                   "http://llama-3-2-3b-instruct.llama-demo.svc.cluster.local:8080", "--api-model-name",
                   "meta-llama/Llama-3.2-3B-Instruct", "--task", "text-to-text", "--max-time-per-run", "10",
                   "--max-requests-per-run", "200", "--api-key", "sample-key", "--model-tokenizer",
                   "/raid/models/meta/llama-3-2-3b-instruct"]
QUICKSTART_MODEL = ("llama-3-2-3b-instruct", "/raid/models/meta/llama-3-2-3b-instruct")
QUICKSTART_SELECTOR = {"models.ome.io/clusterbasemodel.llama-3-2-3b-instruct": "Ready"}


def error_of(**spec):
    found = errors(quickstart(**spec))
    assert len(found) == 1, found
    return found[0].removeprefix("error: <stdin>: BenchmarkJob llama-demo/llama-bench: ")


# ---------------------------------------------------------------- OME's samples (config/samples/benchmark/)

def test_sample_deepseek_r1_rdma_on_a_multinode_engine():
    objs = serving("deepseek-r1", "deepseek-r1", "deepseek-r1", "/raid/models/deepseek-ai/deepseek-r1")
    engine = objs["isvc"]["spec"]["engine"]
    engine["annotations"] = {"ome.io/deploymentMode": "MultiNode"}
    engine["leader"] = {"runner": {"name": "ome-container", "image": "i", "env": [{"name": "SERVED", "value": "dsr1"}],
                                   "args": ["--served-model-name", "$(SERVED)"]}}
    engine["worker"] = {"size": 1, "runner": {"name": "ome-container", "image": "i"}}
    sample = bench("deepseek-r1-rdma-benchmark", "deepseek-r1",
                   podOverride={"image": SAMPLE_IMAGE},
                   endpoint={"inferenceService": {"name": "deepseek-r1", "namespace": "deepseek-r1"}},
                   trafficScenarios=["N(480,240)/(300,150)", "D(100,100)", "D(100,1000)", "D(2000,200)",
                                     "D(7800,200)", "D(16000,200)", "D(32000,200)", "D(128000,200)", "D(1000,4000)"],
                   numConcurrency=[1, 2, 4, 8, 16, 32, 64, 128, 256], maxTimePerIteration=30,
                   maxRequestsPerIteration=300,
                   serviceMetadata={"engine": "SGLang", "version": "v0.4.2.post1.35b88e65-cu121", "gpuType": "H100",
                                    "gpuCount": 16},
                   outputLocation={"storageUri": "oci://n/idqj093njucb/b/ome-benchmark-results/o/deepseek-r1-benchmark",
                                   "parameters": OCI_PARAMS})
    args = ["benchmark", "--api-backend", "openai", "--api-base",
            "http://deepseek-r1.deepseek-r1.svc.cluster.local:8080", "--api-model-name", "dsr1", "--task",
            "text-to-text", "--max-time-per-run", "30", "--max-requests-per-run", "300", "--api-key", "sample-key",
            "--model-tokenizer", "/raid/models/deepseek-ai/deepseek-r1",
            *scenario_args("N(480,240)/(300,150)", "D(100,100)", "D(100,1000)", "D(2000,200)", "D(7800,200)",
                           "D(16000,200)", "D(32000,200)", "D(128000,200)", "D(1000,4000)"),
            *concurrency_args(1, 2, 4, 8, 16, 32, 64, 128, 256),
            "--server-engine", "SGLang", "--server-gpu-type", "H100", "--server-version",
            "v0.4.2.post1.35b88e65-cu121", "--server-gpu-count", "16", *OCI_ARGS, "deepseek-r1-benchmark",
            *OCI_PARAM_ARGS]
    assert the_job(list(objs.values()) + [sample]) == expected_job(
        "deepseek-r1-rdma-benchmark", "deepseek-r1", args, container_name="genai-bench",
        model=("deepseek-r1", "/raid/models/deepseek-ai/deepseek-r1"),
        node_selector={"models.ome.io/clusterbasemodel.deepseek-r1": "Ready"})


E5_SCENARIOS = ["E(128)", "E(512)", "E(1024)", "E(2048)", "E(4096)", "E(32000)"]


def e5_sample(scenarios):
    objs = serving("e5-mistral-7b-instruct", "e5-mistral-7b-instruct", "e5-mistral-7b-instruct",
                   "/raid/models/intfloat/e5-mistral-7b-instruct", served="intfloat/e5-mistral-7b-instruct")
    sample = bench("e5-mistral-7b-instruct-benchmark", "e5-mistral-7b-instruct", podOverride={"image": SAMPLE_IMAGE},
                   endpoint={"inferenceService": {"name": "e5-mistral-7b-instruct",
                                                  "namespace": "e5-mistral-7b-instruct"}},
                   task="text-to-embeddings", trafficScenarios=scenarios, maxTimePerIteration=15,
                   maxRequestsPerIteration=15000,
                   serviceMetadata={"engine": "SGLang", "version": "v0.4.0.post1", "gpuType": "H100", "gpuCount": 1},
                   outputLocation={"storageUri": "oci://n/idqj093njucb/b/ome-benchmark-results/o/"
                                                 "e5-mistral-7b-instruct-benchmark", "parameters": OCI_PARAMS})
    return list(objs.values()) + [sample]


def test_sample_e5_mistral_embeddings_is_refused_as_ome_v1_3s_webhook_refuses_it():
    assert errors(e5_sample(E5_SCENARIOS)) == [
        "error: <stdin>: BenchmarkJob e5-mistral-7b-instruct/e5-mistral-7b-instruct-benchmark: invalid traffic "
        "scenarios: failed to validate scenario 'E(128)': invalid scenario format for task 'text-to-embeddings': "
        "E(128)"]


def test_sample_e5_mistral_with_the_two_number_form_admission_accepts():
    job = the_job(e5_sample(["E(128,128)", "E(512,512)"]))
    assert job == expected_job(
        "e5-mistral-7b-instruct-benchmark", "e5-mistral-7b-instruct",
        ["benchmark", "--api-backend", "openai", "--api-base",
         "http://e5-mistral-7b-instruct.e5-mistral-7b-instruct.svc.cluster.local:8080", "--api-model-name",
         "intfloat/e5-mistral-7b-instruct", "--task", "text-to-embeddings", "--max-time-per-run", "15",
         "--max-requests-per-run", "15000", "--api-key", "sample-key", "--model-tokenizer",
         "/raid/models/intfloat/e5-mistral-7b-instruct", *scenario_args("E(128,128)", "E(512,512)"),
         "--server-engine", "SGLang", "--server-gpu-type", "H100", "--server-version", "v0.4.0.post1",
         "--server-gpu-count", "1", *OCI_ARGS, "e5-mistral-7b-instruct-benchmark", *OCI_PARAM_ARGS],
        container_name="genai-bench", model=("e5-mistral-7b-instruct", "/raid/models/intfloat/e5-mistral-7b-instruct"),
        node_selector={"models.ome.io/clusterbasemodel.e5-mistral-7b-instruct": "Ready"})


def test_sample_llama_3_1_70b_with_a_hugging_face_secret_and_an_inference_service_in_another_namespace():
    objs = serving("llama-3-1-70b-instruct", "llama-3-1-70b-instruct", "llama-3-1-70b-instruct",
                   "/raid/models/meta/llama-3-1-70b-instruct")
    objs["isvc"]["spec"]["engine"]["runner"]["env"].append({"name": "PROTOCOL_VERSION", "value": "openai"})
    secret = {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
              "metadata": {"name": "huggingface-secret", "namespace": "llama-3-1-70b"},
              "data": {"HUGGINGFACE_API_KEY": "aGZfZXhhbXBsZQ=="}}
    sample = bench("llama-3-1-70b-benchmark", "llama-3-1-70b", podOverride={"image": SAMPLE_IMAGE},
                   huggingFaceSecretReference={"name": "huggingface-secret"},
                   endpoint={"inferenceService": {"name": "llama-3-1-70b-instruct",
                                                  "namespace": "llama-3-1-70b-instruct"}},
                   trafficScenarios=["N(480,240)/(300,150)", "D(100,100)", "D(100,1000)", "D(2000,200)",
                                     "D(7800,200)"],
                   numConcurrency=[1, 2, 4, 8, 16, 32, 64, 128, 256], maxTimePerIteration=15,
                   maxRequestsPerIteration=100, additionalRequestParams={"temperature": "0.0"},
                   outputLocation={"storageUri": "oci://n/idqj093njucb/b/ome-benchmark-results/o/"
                                                 "llama-3-1-70b-benchmark", "parameters": OCI_PARAMS})
    run = render_objects(list(objs.values()) + [secret, sample])
    assert run.code == 0, run.stderr
    assert run.find("Secret", "huggingface-secret") == secret   # passed through, as every Secret
    job = run.find("Job")
    validate_k8s(job)
    assert job == expected_job(
        "llama-3-1-70b-benchmark", "llama-3-1-70b",
        ["benchmark", "--api-backend", "openai", "--api-base",
         "http://llama-3-1-70b-instruct.llama-3-1-70b-instruct.svc.cluster.local:8080", "--api-model-name",
         "meta-llama/Llama-3.2-3B-Instruct", "--task", "text-to-text", "--max-time-per-run", "15",
         "--max-requests-per-run", "100", "--api-key", "sample-key", "--model-tokenizer",
         "/raid/models/meta/llama-3-1-70b-instruct",
         *scenario_args("N(480,240)/(300,150)", "D(100,100)", "D(100,1000)", "D(2000,200)", "D(7800,200)"),
         *concurrency_args(1, 2, 4, 8, 16, 32, 64, 128, 256), *OCI_ARGS, "llama-3-1-70b-benchmark",
         *OCI_PARAM_ARGS],
        container_name="genai-bench",
        env=[{"name": "HUGGINGFACE_API_KEY",
              "valueFrom": {"secretKeyRef": {"name": "huggingface-secret", "key": "HUGGINGFACE_API_KEY"}}}],
        model=("llama-3-1-70b-instruct", "/raid/models/meta/llama-3-1-70b-instruct"),
        node_selector={"models.ome.io/clusterbasemodel.llama-3-1-70b-instruct": "Ready"})


def test_docs_example_writes_to_a_claim():
    """v1.3 docs concepts/serving/benchmarks.md, "The BenchmarkJob resource" (the PVC and the BenchmarkJob)."""
    objs = serving("llama-3-2-1b-instruct", "llama-demo", "llama-3-2-1b-instruct",
                   "/raid/models/meta/llama-3-2-1b-instruct", served="vllm-model")
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
             "metadata": {"name": "benchmark-results", "namespace": "llama-demo"},
             "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}}}}
    example = bench("llama-3-2-1b-instruct-bench", "llama-demo",
                    endpoint={"inferenceService": {"name": "llama-3-2-1b-instruct", "namespace": "llama-demo"}},
                    trafficScenarios=["D(100,100)", "N(480,240)/(300,150)"], numConcurrency=[1, 4, 16],
                    outputLocation={"storageUri": "pvc://benchmark-results/llama-3-2-1b-instruct"},
                    podOverride={"image": SAMPLE_IMAGE})
    run = render_objects(list(objs.values()) + [claim, example])
    assert run.code == 0, run.stderr
    assert run.find("PersistentVolumeClaim") == claim
    job = run.find("Job")
    validate_k8s(job)
    assert job == expected_job(
        "llama-3-2-1b-instruct-bench", "llama-demo",
        ["benchmark", "--api-backend", "openai", "--api-base",
         "http://llama-3-2-1b-instruct.llama-demo.svc.cluster.local:8080", "--api-model-name", "vllm-model",
         "--task", "text-to-text", "--max-time-per-run", "10", "--max-requests-per-run", "200", "--api-key",
         "sample-key", "--model-tokenizer", "/raid/models/meta/llama-3-2-1b-instruct",
         *scenario_args("D(100,100)", "N(480,240)/(300,150)"), *concurrency_args(1, 4, 16),
         "--experiment-base-dir", "/llama-3-2-1b-instruct"],
        container_name="genai-bench", model=("llama-3-2-1b-instruct", "/raid/models/meta/llama-3-2-1b-instruct"),
        output=("benchmark-results", "llama-3-2-1b-instruct"),
        node_selector={"models.ome.io/clusterbasemodel.llama-3-2-1b-instruct": "Ready"})


# ---------------------------------------------------------------- the pod: defaults, cluster settings, podOverride

def test_without_pod_override_the_chart_image_and_the_benchmark_jobs_name_for_the_container():
    job = the_job(quickstart(resultFolderName="baseline"))
    assert job == expected_job("llama-bench", "llama-demo",
                               QUICKSTART_ARGS + ["--experiment-folder-name", "baseline", "--experiment-base-dir",
                                                  "/llama"],
                               container_name="llama-bench", image=CHART_IMAGE, model=QUICKSTART_MODEL,
                               output=("benchmark-results", "llama"), node_selector=QUICKSTART_SELECTOR)


def benchmark_config(text, namespace="ome"):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "benchmarkjob-config",
                                                                  "namespace": namespace},
            "data": {"benchmarkjob": text}}


def test_the_clusters_benchmarkjob_config_sets_the_image_and_resources_and_is_never_output():
    text = ('{"podConfig": {"image": "registry.example.com/genai-bench:0.1.132", "cpuRequest": "1", '
            '"memoryRequest": "1Gi", "cpuLimit": "4", "memoryLimit": "8Gi"}}')
    run = render_objects(quickstart() + [benchmark_config(text)])
    assert run.code == 0, run.stderr
    job = run.find("Job")
    container = job["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "registry.example.com/genai-bench:0.1.132"
    assert container["resources"] == {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "4",
                                                                                          "memory": "8Gi"}}
    assert not [o for o in run.objects if o["kind"] == "ConfigMap"]
    again = render_objects(quickstart() + [benchmark_config(text)], "--keep-inputs")
    assert not [o for o in again.objects if o["kind"] == "ConfigMap"]


def test_config_shows_the_benchmark_settings_and_their_source(tmp_path):
    import json
    run = run_cli("config", "-o", "json", "-", input=yaml.safe_dump_all(quickstart()))
    rows = {r["setting"]: (r["value"], r["source"]) for r in json.loads(run.stdout)["settings"]}
    assert rows["benchmarkjob.podConfig.image"] == (CHART_IMAGE, "chart default")
    (tmp_path / "bench-config.yaml").write_text(yaml.safe_dump(benchmark_config(
        '{"podConfig": {"image": "i", "cpuRequest": "1", "memoryRequest": "1Gi", "cpuLimit": "1", '
        '"memoryLimit": "1Gi"}}')))
    run = run_cli("config", "-o", "json", str(tmp_path))
    rows = {r["setting"]: (r["value"], r["source"]) for r in json.loads(run.stdout)["settings"]}
    assert rows["benchmarkjob.podConfig.memoryLimit"] == ("1Gi", f"configmap {tmp_path}/bench-config.yaml")


@pytest.mark.parametrize("text, message", [
    ('{"podConfig": {"image": "x", "cpuRequest": "two"}}',
     'data.benchmarkjob: podConfig.cpuRequest: "two" is not a quantity, and OME\'s controller fails on every '
     'BenchmarkJob with it (resource.MustParse); set it, such as "2" or "2Gi"'),
    ('{"podConfig": ', "data.benchmarkjob: unable to unmarshall benchmarkjob json string due to unexpected end of "
                      "JSON input "),
])
def test_a_benchmarkjob_config_ome_cannot_use_is_an_error_naming_the_key(text, message):
    assert errors(quickstart() + [benchmark_config(text)]) == [
        f"error: <stdin>: ConfigMap ome/benchmarkjob-config: {message}"]


def test_a_configmap_named_nearly_benchmarkjob_config_is_named_with_a_warning():
    near = benchmark_config('{"podConfig": {"image": "x"}}')
    near["metadata"]["name"] = "benchmarkjobs-config"
    run = render_objects(quickstart() + [near])
    assert run.code == 0, run.stderr
    assert [line for line in run.lines if "benchmarkjobs-config" in line] == [
        "warning: <stdin>: ConfigMap ome/benchmarkjobs-config: ConfigMap benchmarkjobs-config is not OME's "
        'BenchmarkJob configuration, which is named "benchmarkjob-config" (namespace ome): omerender passes it '
        'through and does not read it; did you mean "benchmarkjob-config"?']
    assert run.find("Job")["spec"]["template"]["spec"]["containers"][0]["image"] == CHART_IMAGE
    assert run.find("ConfigMap", "benchmarkjobs-config") == near


def test_an_empty_storage_uri_is_an_unknown_storage_type():
    assert error_of(outputLocation={"storageUri": ""}) == (
        "invalid storage: error parsing storage URI: unknown storage type for URI: ")


def test_pod_override_merges_as_the_docs_say():
    override = {"image": SAMPLE_IMAGE,
                "env": [{"name": "MODEL_PATH", "value": "/elsewhere"}, {"name": "EXTRA", "value": "1"}],
                "envFrom": [{"secretRef": {"name": "bench-env"}}],
                "resources": {"requests": {"cpu": "4"}, "limits": {"cpu": "4"}},
                "volumes": [{"name": "benchmark-output-storage", "emptyDir": {}}, {"name": "scratch", "emptyDir": {}}],
                "volumeMounts": [{"name": "scratch", "mountPath": "/llama"}],
                "nodeSelector": {"pool": "cpu"},
                "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "bench", "effect": "NoSchedule"}],
                "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}}}
    job = the_job(quickstart(podOverride=override))
    pod = job["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert container["name"] == "genai-bench"
    assert container["env"] == [{"name": "ENABLE_UI", "value": "false"}, {"name": "MODEL_PATH", "value": "/elsewhere"},
                                {"name": "EXTRA", "value": "1"}]
    assert container["envFrom"] == [{"secretRef": {"name": "bench-env"}}]
    assert container["resources"] == {"requests": {"cpu": "4", "memory": "2Gi"}, "limits": {"cpu": "4",
                                                                                          "memory": "2Gi"}}
    assert container["volumeMounts"] == [
        {"name": "llama-3-2-3b-instruct", "mountPath": "/raid/models/meta/llama-3-2-3b-instruct", "readOnly": True},
        {"name": "scratch", "mountPath": "/llama"}]
    assert pod["volumes"] == [{"name": "llama-3-2-3b-instruct",
                               "hostPath": {"path": "/raid/models/meta/llama-3-2-3b-instruct"}},
                              {"name": "benchmark-output-storage", "emptyDir": {}}, {"name": "scratch", "emptyDir": {}}]
    assert pod["nodeSelector"] == {**QUICKSTART_SELECTOR, "pool": "cpu"}
    assert pod["tolerations"] == override["tolerations"]
    assert pod["affinity"] == override["affinity"]


def test_no_model_node_selector_drops_the_benchmark_pods_selector_too():
    job = the_job(quickstart(), "--no-model-node-selector")
    assert "nodeSelector" not in job["spec"]["template"]["spec"]


def test_keep_inputs_keeps_the_benchmark_job_beside_its_job():
    run = render_objects(quickstart(), "--keep-inputs")
    assert run.code == 0, run.stderr
    assert run.find("BenchmarkJob", "llama-bench")["spec"]["task"] == "text-to-text"
    assert run.find("Job", "llama-bench")


def test_strict_is_unaffected_by_a_benchmark_job():
    plain, strict = render_objects(quickstart()), render_objects(quickstart(), "--strict")
    assert (strict.code, strict.stdout) == (plain.code, plain.stdout) == (0, plain.stdout)


def test_the_krm_function_renders_the_same_job():
    items = quickstart()
    text = yaml.safe_dump({"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items})
    run = run_cli("fn", input=text)
    assert run.code == 0, run.stderr
    jobs = [o for o in yaml.safe_load(run.stdout)["items"] if o["kind"] == "Job"]
    for job in jobs:
        job["metadata"]["annotations"] = {k: v for k, v in job["metadata"]["annotations"].items()
                                          if "kubernetes.io" not in k}
    assert jobs == [the_job(quickstart())]


# ---------------------------------------------------------------- the endpoint

def test_a_url_endpoint_needs_no_inference_service():
    job = the_job([bench("ext", "bench", endpoint={"endpoint": {"url": "https://llm.example.com", "apiFormat": "openai",
                                                                "modelName": "m"}})])
    assert job == expected_job("ext", "bench", [
        "benchmark", "--api-backend", "openai", "--api-base", "https://llm.example.com", "--api-model-name", "m",
        "--task", "text-to-text", "--max-time-per-run", "10", "--max-requests-per-run", "200",
        "--experiment-base-dir", "/llama"], container_name="ext", image=CHART_IMAGE,
        output=("benchmark-results", "llama"))


def test_an_inference_service_not_in_the_input_is_an_error_naming_it():
    objs = list(worked_example().values()) + [bench("b", "llama-demo", endpoint={
        "inferenceService": {"name": "llama-3-2-3b-instrct", "namespace": "llama-demo"}})]
    assert errors(objs) == [
        "error: <stdin>: BenchmarkJob llama-demo/b: failed to get InferenceService llama-demo/llama-3-2-3b-instrct: it "
        "is not in the inputs; OME creates the Job only for an InferenceService it serves: add it, or benchmark a URL "
        'with spec.endpoint.endpoint; did you mean "llama-3-2-3b-instruct"?']


def test_the_inference_service_is_looked_up_in_the_namespace_the_endpoint_names():
    objs = list(worked_example().values()) + [bench("b", "bench", endpoint={
        "inferenceService": {"name": "llama-3-2-3b-instruct", "namespace": "other"}})]
    assert errors(objs) == [
        "error: <stdin>: BenchmarkJob bench/b: failed to get InferenceService other/llama-3-2-3b-instruct: it is not "
        "in the inputs; OME creates the Job only for an InferenceService it serves: add it, or benchmark a URL with "
        "spec.endpoint.endpoint"]
    found = list(worked_example().values()) + [bench("b", "bench")]
    assert the_job(found)["metadata"]["namespace"] == "bench"


def test_a_failed_inference_service_reports_its_own_error_only():
    objs = quickstart()
    objs[2]["spec"]["runtime"]["name"] = "nope"
    assert [line for line in errors(objs) if "BenchmarkJob" in line] == []


def test_inference_service_without_a_model_or_model_without_a_path():
    objs = quickstart()
    del objs[0]["spec"]["storage"]["path"]
    assert errors(objs) == [
        "error: <stdin>: BenchmarkJob llama-demo/llama-bench: BaseModel llama-3-2-3b-instruct has missing Storage or "
        "Path information: OME reads the tokenizer from the model's storage.path on the node, so it can't benchmark "
        "a model without one (such as a pvc:// model)"]


def test_cluster_local_inference_service_gets_no_url():
    objs = quickstart()
    objs[2]["metadata"]["labels"]["networking.knative.dev/visibility"] = "cluster-local"
    assert errors(objs) == [
        "error: <stdin>: BenchmarkJob llama-demo/llama-bench: InferenceService llama-demo/llama-3-2-3b-instruct has "
        "no URL.Host in status: it gets neither the external Service nor an ingress route (it is cluster-local, or "
        "renders no workload), so OME never sets its URL and never creates the Job; benchmark a URL with "
        "spec.endpoint.endpoint instead"]


def test_with_ingress_the_url_is_the_routes_host_and_the_fronted_port():
    ingress = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "inferenceservice-config",
                                                                     "namespace": "ome"},
               "data": {"ingress": '{"ingressGateway": "istio-system/g", "ingressService": "g.istio-system", '
                                   '"ingressDomain": "example.com", "ingressClassName": "nginx", '
                                   '"disableIngressCreation": false, "urlScheme": "https"}'}}
    job = the_job(quickstart() + [ingress])
    args = job["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[args.index("--api-base") + 1] == "https://llama-3-2-3b-instruct.llama-demo.example.com:8080"


def test_with_gateway_api_the_url_is_the_routes_host_and_the_shared_hosts_prefix_is_named():
    objs = load_yaml(FIXTURES / "gateway-api" / "inputs.yaml")
    objs.append(bench("chat-bench", "llama-demo",
                      endpoint={"inferenceService": {"name": "llama-chat", "namespace": "llama-demo"}}))
    run = render_objects(objs)
    assert run.code == 0, run.stderr
    args = run.find("Job")["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[args.index("--api-base") + 1] == "http://llm.example.com"
    assert [line for line in run.lines if "which OME v1.3's Helm chart writes" not in line] == [
        "warning: <stdin>: BenchmarkJob llama-demo/chat-bench: InferenceService llama-demo/llama-chat is on the shared "
        "host with the path prefix /llama-demo/llama-chat/, and OME gives genai-bench only the scheme and host of its "
        'URL, so requests miss the prefix; give it its own hostname (annotation ome.io/ingress-per-isvc-subdomain: '
        '"true") or benchmark a URL with spec.endpoint.endpoint']
    objs[3]["metadata"]["annotations"] = {"ome.io/ingress-per-isvc-subdomain": "true"}
    run = render_objects(objs)
    args = run.find("Job")["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[args.index("--api-base") + 1] == "http://llama-chat.llama-demo.example.com"
    assert not [line for line in run.lines if "BenchmarkJob" in line]


def test_protocol_version_and_a_model_path_without_a_served_name():
    objs = quickstart()
    objs[2]["spec"]["engine"]["runner"]["env"].append({"name": "PROTOCOL_VERSION", "value": "oci-cohere"})
    command = objs[1]["spec"]["engineConfig"]["runner"]["command"]
    del command[command.index("--served-model-name"):command.index("--served-model-name") + 2]
    args = the_job(objs)["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[1:3] == ["--api-backend", "oci-cohere"]
    assert args[args.index("--api-model-name") + 1] == "/raid/models/meta/llama-3-2-3b-instruct"


@pytest.mark.parametrize("env, served, engine_serves, job_arg", [
    # a variable defined before: expanded in the engine's env, then in its argument
    ([{"name": "ORG", "value": "meta-llama"}, {"name": "NAME", "value": "$(ORG)/llama"}], "$(NAME)",
     "meta-llama/llama", "meta-llama/llama"),
    # $$ is an escaped $: the engine serves the text $(NAME); the Job's argument is escaped for the kubelet in turn
    ([{"name": "NAME", "value": "llama"}], "$$(NAME)", "$(NAME)", "$$(NAME)"),
    # an unknown reference stays as written
    ([], "$(NOT_SET)", "$(NOT_SET)", "$$(NOT_SET)"),
    # a reference to a later variable: not defined yet where NAME is expanded, so NAME is the text $(LATER)
    ([{"name": "NAME", "value": "$(LATER)"}, {"name": "LATER", "value": "llama"}], "$(NAME)", "$(LATER)",
     "$$(LATER)"),
    # nested: the name read is "A$(B", no variable, so all stays as written
    ([{"name": "A", "value": "a"}, {"name": "B", "value": "b"}], "$(A$(B))", "$(A$(B))", "$$(A$$(B))"),
])
def test_the_served_name_is_what_the_kubelet_gives_the_engine_and_reaches_genai_bench_unchanged(
        env, served, engine_serves, job_arg):
    objs = quickstart()
    runner = objs[1]["spec"]["engineConfig"]["runner"]
    runner["command"][runner["command"].index("--served-model-name") + 1] = served
    runner["env"] = env
    run = render_objects(objs)
    assert run.code == 0, run.stderr
    job = next(o for o in run.objects if o["kind"] == "Job")
    validate_k8s(job)
    args = job["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[args.index("--api-model-name") + 1] == job_arg
    assert expand(job_arg, lambda _: "never") == engine_serves   # the kubelet's expansion of the Job's argument
    assert [line for line in run.lines if line.startswith("warning:")] == []


def test_a_served_name_set_in_the_cluster_is_a_warning_naming_the_variable():
    objs = quickstart()
    runner = objs[1]["spec"]["engineConfig"]["runner"]
    runner["command"][runner["command"].index("--served-model-name") + 1] = "$(NAME)"
    runner["env"] = [{"name": "NS", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
                     {"name": "NAME", "value": "llama-$(NS)"}]
    run = render_objects(objs)
    assert run.code == 0, run.stderr
    args = next(o for o in run.objects if o["kind"] == "Job")["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[args.index("--api-model-name") + 1] == "llama-$$(NS)"
    assert [line for line in run.lines if line.startswith("warning:")] == [
        "warning: <stdin>: BenchmarkJob llama-demo/llama-bench: the served model name of "
        "InferenceService llama-demo/llama-3-2-3b-instruct, llama-$(NS), refers to NAME, whose value the cluster "
        "sets (valueFrom): OME reads only literal values, so genai-bench asks for the model llama-$(NS) and the engine "
        "rejects requests for a model it doesn't serve; write the name literally in the runtime's "
        "--served-model-name, or benchmark a URL with spec.endpoint.endpoint and its modelName"]


# ---------------------------------------------------------------- the webhook's checks, with OME's texts

@pytest.mark.parametrize("spec, message", [
    ({"endpoint": {}}, "invalid endpoint: endpoint or InferenceService must be specified"),
    ({"endpoint": {"inferenceService": {"name": "a", "namespace": "b"},
                   "endpoint": {"url": "http://x", "apiFormat": "openai"}}},
     "invalid endpoint: endpoint and InferenceService cannot be specified together"),
    ({"trafficScenarios": ["D(100)"]},
     "invalid traffic scenarios: failed to validate scenario 'D(100)': invalid scenario format for task "
     "'text-to-text': D(100)"),
    ({"task": "text-to-embeddings"},
     "invalid traffic scenarios: failed to validate scenario 'E(64)': invalid scenario format for task "
     "'text-to-embeddings': E(64) (the webhook checks text-to-embeddings's defaults when spec.trafficScenarios is "
     "empty)"),
    ({"task": "image-to-text", "trafficScenarios": ["I(512,512,2)", "I(512)"]},
     "invalid traffic scenarios: failed to validate scenario 'I(512)': invalid scenario format for task "
     "'image-to-text': I(512)"),
    ({"trafficScenarios": ["D(١,٢)"]},
     "invalid traffic scenarios: failed to validate scenario 'D(١,٢)': invalid scenario format for task "
     "'text-to-text': D(١,٢)"),
    ({"additionalRequestParams": {"temperature": "hot"}},
     'invalid additional request parameters: invalid temperature: strconv.ParseFloat: parsing "hot": invalid syntax'),
    ({"additionalRequestParams": {"temperature": "1e400"}},
     'invalid additional request parameters: invalid temperature: strconv.ParseFloat: parsing "1e400": value out '
     'of range'),
    ({"additionalRequestParams": {"ignore_eos": "yes"}},
     "invalid additional request parameters: ignore_eos must be 'true' or 'false'"),
    ({"outputLocation": {"parameters": {"a": "b"}}}, "invalid storage: storageUri cannot be empty"),
    ({"outputLocation": {"storageUri": "ftp://x"}},
     "invalid storage: error parsing storage URI: unknown storage type for URI: ftp://x"),
    ({"outputLocation": {"storageUri": "oci://n/ns/b/bucket"}},
     "invalid storage: error parsing storage URI: invalid OCI storage URI format. Expected: "
     "oci://n/{namespace}/b/{bucket}/o/{object_path}"),
    ({"outputLocation": {"storageUri": "pvc://"}},
     "invalid storage: error parsing storage URI: invalid PVC storage URI format: missing content after prefix"),
    ({"outputLocation": {"storageUri": "pvc://benchmark-results"}},
     "invalid storage: error parsing storage URI: invalid PVC storage URI format: missing subpath"),
    ({"outputLocation": {"storageUri": "pvc:///llama"}},
     "invalid storage: error parsing storage URI: invalid PVC storage URI format: missing PVC name"),
    ({"outputLocation": {"storageUri": "pvc://r/runs/../llama"}},
     "invalid storage: error parsing storage URI: invalid PVC storage URI format: subpath must not contain '..' "
     "segments"),
    ({"outputLocation": {"storageUri": "pvc://llama-demo:/llama"}},
     "invalid storage: error parsing storage URI: invalid PVC storage URI format: empty PVC name after colon"),
    ({"outputLocation": {"storageUri": "pvc://Demo:r/llama"}},
     'invalid storage: error parsing storage URI: invalid PVC storage URI format: invalid namespace "Demo" (must be '
     'lowercase alphanumeric with hyphens, max 63 chars)'),
    ({"outputLocation": {"storageUri": "s3://"}},
     "invalid storage: error parsing storage URI: invalid S3 storage URI format: missing bucket name"),
    ({"outputLocation": {"storageUri": "s3:///x"}},
     "invalid storage: error parsing storage URI: invalid S3 storage URI format: bucket name cannot be empty"),
    ({"outputLocation": {"storageUri": "az://benchmarkstore"}},
     "invalid storage: error parsing storage URI: invalid Azure storage URI format: missing container name"),
    ({"outputLocation": {"storageUri": "az://benchmarkstore//x"}},
     "invalid storage: error parsing storage URI: invalid Azure storage URI format: account name and container name "
     "are required"),
    ({"outputLocation": {"storageUri": "gs://"}},
     "invalid storage: error parsing storage URI: invalid GCS storage URI format: missing bucket name"),
    ({"outputLocation": {"storageUri": "github://acme"}},
     "invalid storage: error parsing storage URI: invalid GitHub storage URI format: expected owner/repository"),
    ({"outputLocation": {"storageUri": "github://acme/"}},
     "invalid storage: error parsing storage URI: invalid GitHub storage URI format: owner and repository are "
     "required"),
])
def test_each_webhook_check_is_an_error_with_omes_text(spec, message):
    assert error_of(**spec) == message


@pytest.mark.parametrize("spec, message", [
    ({"task": "text-to-speech"}, 'spec.task: Unsupported value: "text-to-speech": supported values: "text-to-text", '
                                 '"image-to-text", "text-to-embeddings", "image-to-embeddings"'),
    ({"endpoint": {"endpoint": {"url": "llm.example.com", "apiFormat": "openai"}}},
     "spec.endpoint.endpoint.url: Invalid value: \"llm.example.com\": spec.endpoint.endpoint.url in body should "
     "match '^(http|https)://'"),
    ({"endpoint": {"endpoint": {"url": "http://x", "apiFormat": "anthropic"}}},
     'spec.endpoint.endpoint.apiFormat: Unsupported value: "anthropic": supported values: "openai", "oci-cohere", '
     '"cohere"'),
    ({"serviceMetadata": {"engine": "SGLang", "version": "1", "gpuType": "B200", "gpuCount": 8}},
     'spec.serviceMetadata.gpuType: Unsupported value: "B200": supported values: "H100", "A100", "MI300", "A10"'),
    ({"numConcurrency": [1, 2, 1]}, "spec.numConcurrency[2]: Duplicate value: 1"),
    ({"maxTimePerIteration": None}, "spec.maxTimePerIteration: Required value"),
    ({"maxTimePerIteration": "10"}, 'spec.maxTimePerIteration: Invalid value: "string": must be of type integer'),
    ({"trafficScenario": ["D(1,1)"]}, 'spec.trafficScenario: unknown field "trafficScenario"; did you mean '
                                      '"trafficScenarios"?'),
])
def test_what_the_crd_refuses_is_an_error(spec, message):
    assert error_of(**spec) == message


@pytest.mark.parametrize("uri, kind", [("hf://meta-llama/Llama-3.2-1B", "HUGGINGFACE"),
                                       ("local:///data", "LOCAL"), ("vendor://a/b/c", "VENDOR")])
def test_uris_admission_accepts_but_ome_cannot_write_to_are_errors(uri, kind):
    assert error_of(outputLocation={"storageUri": uri}) == (
        f"failed to build storage args: unsupported storage type: {kind}: OME accepts this URI but can't write "
        f"results to it, and creates no Job; use oci://, s3://, az://, gs://, github:// or pvc://")


@pytest.mark.parametrize("uri, params, args", [
    ("s3://benchmark-results@us-east-1/llama", {"aws_region": "us-west-2"},
     ["--upload-results", "--storage-provider", "aws", "--storage-bucket", "benchmark-results", "--storage-prefix",
      "llama", "--storage-aws-region", "us-west-2"]),
    ("az://benchmarkstore.blob.core.windows.net/results", {"azure_sas_token": "t"},
     ["--upload-results", "--storage-provider", "azure", "--storage-bucket", "results",
      "--storage-azure-account-name", "benchmarkstore", "--storage-azure-sas-token", "t"]),
    ("gs://benchmark-results/llama", {"gcp_project_id": "p"},
     ["--upload-results", "--storage-provider", "gcp", "--storage-bucket", "benchmark-results", "--storage-prefix",
      "llama", "--storage-gcp-project-id", "p"]),
    ("github://acme/benchmarks@v1", {}, ["--upload-results", "--storage-provider", "github", "--github-owner", "acme",
                                         "--github-repo", "benchmarks", "--github-tag", "v1"]),
    ("github://acme/benchmarks", {"github_token": "t"},
     ["--upload-results", "--storage-provider", "github", "--github-owner", "acme", "--github-repo", "benchmarks",
      "--github-token", "t"]),
])
def test_each_upload_backend_gets_omes_arguments(uri, params, args):
    job = the_job(quickstart(outputLocation={"storageUri": uri, "parameters": params}))
    assert job["spec"]["template"]["spec"]["containers"][0]["args"] == QUICKSTART_ARGS + args
    assert "volumes" not in job["spec"]["template"]["spec"] or len(job["spec"]["template"]["spec"]["volumes"]) == 1


# ---------------------------------------------------------------- hostile input

def test_a_name_the_api_server_would_refuse_in_the_job_is_an_error():
    long_name = "b" * 64
    assert errors(list(worked_example().values()) + [bench(long_name, "llama-demo")]) == [
        f"error: <stdin>: BenchmarkJob llama-demo/{long_name}: rendered Job llama-demo/{long_name}: "
        f"metadata.labels.benchmark: Invalid value: \"{long_name}\": must be no more than 63 characters (the label "
        f"benchmark carries the BenchmarkJob's name: shorten it)"]


def test_a_container_name_the_api_server_would_refuse_is_an_error_with_the_fix():
    assert errors(list(worked_example().values()) + [bench("bench.v1", "llama-demo")]) == [
        "error: <stdin>: BenchmarkJob llama-demo/bench.v1: rendered Job llama-demo/bench.v1: spec.template.spec."
        'containers[0].name: Invalid value: "bench.v1": a lowercase RFC 1123 label must consist of lower case '
        "alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or "
        "'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?') (OME names the container after the "
        "BenchmarkJob, or genai-bench when spec.podOverride is set: rename the BenchmarkJob, or set "
        "spec.podOverride)"]
    named = the_job(list(worked_example().values()) + [bench("bench.v1", "llama-demo", podOverride={})])
    assert named["spec"]["template"]["spec"]["containers"][0]["name"] == "genai-bench"


def test_a_request_above_its_limit_is_an_error():
    assert error_of(podOverride={"resources": {"requests": {"cpu": "4"}}}) == (
        "rendered Job llama-demo/llama-bench: spec.template.spec.containers[0].resources: request cpu=4 is above limit "
        "2; raise the limit too (spec.podOverride.resources)")


def test_scenarios_and_folder_names_are_arguments_never_shell_words():
    hostile = "U(1,1)$(rm -rf /);`id`\n"   # the loose text-to-text check lets it through, as OME's does
    job = the_job(quickstart(trafficScenarios=[hostile], resultFolderName="$(HOME) && reboot"))
    container = job["spec"]["template"]["spec"]["containers"][0]
    assert container["command"] == ["genai-bench"]
    assert container["args"][container["args"].index("--traffic-scenario") + 1] == hostile
    assert "$(HOME) && reboot" in container["args"]


def test_many_scenarios_are_bounded_work():
    scenarios = [f"D({i},{i})" for i in range(20000)]
    start = time.process_time()
    job = the_job(quickstart(trafficScenarios=scenarios))
    assert time.process_time() - start < 30
    assert job["spec"]["template"]["spec"]["containers"][0]["args"].count("--traffic-scenario") == 20000


def test_a_scenario_built_to_backtrack_is_refused_in_linear_work():
    scenario = "U(" + "1" * 200_000
    start = time.process_time()
    assert error_of(trafficScenarios=[scenario]).startswith("invalid traffic scenarios: failed to validate scenario")
    assert time.process_time() - start < 10


def test_many_benchmark_jobs_copying_one_long_model_path_meet_the_copy_budget():
    objs = list(worked_example().values())
    objs[0]["spec"]["storage"]["path"] = "/raid/" + "m" * 100_000
    objs += [bench(f"b{i}", "llama-demo") for i in range(1000)]
    start = time.process_time()
    found = errors(objs)
    assert time.process_time() - start < 30
    assert found == [   # b322 is the 250th in name order: 250 Jobs of 4,006 values pass the free 1,000,000
        "error: <stdin>: BenchmarkJob llama-demo/b322: the InferenceServices rendered so far copy more than 1,000,000 "
        "values of runtime specs, policies and cluster settings in all (this one 4,006, from BenchmarkJob "
        "llama-demo/b322); the limit is 8 times the values of the input, at least 1,000,000 and at most 20,000,000; "
        "render fewer InferenceServices at a time, or render fewer BenchmarkJobs at a time"]


def test_two_benchmark_jobs_of_one_name_are_an_error():
    objs = quickstart() + [bench("llama-bench", "llama-demo")]
    assert errors(objs) == ["error: <stdin>: BenchmarkJob llama-demo/llama-bench: duplicate BenchmarkJob llama-bench "
                            "in the inputs"]


# ---------------------------------------------------------------- no kind of OME's groups passes through silently

@pytest.mark.parametrize("api_version, kind", [
    ("ome.io/v1beta1", "FineTunedWeight"), ("ome.io/v1beta1", "InferenceReplica"),
    ("ome.io/v1beta1", "RolloutPolicy"), ("ome.io/v1beta1", "AcceleratorQuota"),
    ("serving.ome.io/v1beta1", "InferenceGraph"), ("training.ome.io/v1", "TrainingJob"),
])
def test_a_kind_omerender_cannot_render_is_an_error_and_keep_inputs_passes_it(api_version, kind):
    obj = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "x", "namespace": "a"}, "spec": {"k": 1}}
    article = "an" if kind in ("InferenceReplica", "AcceleratorQuota", "InferenceGraph") else "a"
    assert errors([obj]) == [
        f"error: <stdin>: {kind} a/x: omerender cannot render {article} {kind} ({api_version}): it needs OME's "
        f"controller; --keep-inputs passes it through, for a cluster that runs OME"]
    run = render_objects([obj], "--keep-inputs")
    assert (run.code, run.lines, run.objects) == (0, [], [obj])


@pytest.mark.parametrize("obj, message", [
    ({"apiVersion": "ome.io/v1beta1", "kind": "BenchmarkJobs"},
     'kind: Unsupported value: "BenchmarkJobs": not a kind of the ome.io API group; did you mean "BenchmarkJob"?'),
    ({"apiVersion": "ome.io/v1beta1", "kind": "InferenceGraph"},
     'kind: Unsupported value: "InferenceGraph": not a kind of the ome.io API group; did you mean '
     '"InferenceReplica"?'),
    ({"apiVersion": "ome.io/v1beta1", "kind": "TrainingJob"},
     'kind: Unsupported value: "TrainingJob": not a kind of the ome.io API group; the kinds of ome.io are '
     'AcceleratorClass, AcceleratorQuota, AutoscalerPolicy, BaseModel, BenchmarkJob, ClusterBaseModel, '
     'ClusterServingRuntime, FineTunedWeight, InferenceReplica, InferenceService, RolloutPolicy, ServingRuntime, '
     'TrafficMap, WorkloadCluster'),
    ({"apiVersion": "ome.io/v1", "kind": "BenchmarkJob"},
     'apiVersion: Unsupported value: "ome.io/v1": supported values: "ome.io/v1beta1"'),
])
def test_near_miss_kinds_and_versions_are_named(obj, message):
    obj = {**obj, "metadata": {"name": "x", "namespace": "a"}}
    assert errors([obj]) == [f"error: <stdin>: {obj['kind']} a/x: {message}"]
    assert errors([obj], "--keep-inputs") == [f"error: <stdin>: {obj['kind']} a/x: {message}"]


@pytest.mark.parametrize("kind", ["InferenceService", "BenchmarkJob"])
def test_a_kind_omerender_renders_under_a_group_below_ome_io_is_one_error_naming_the_group_to_use(kind):
    """Not also a warning that it passes through: without --keep-inputs it does not."""
    obj = {"apiVersion": "serving.ome.io/v1beta1", "kind": kind, "metadata": {"name": "x", "namespace": "a"},
           "spec": {}}
    run = render_objects([obj])
    assert (run.code, run.stdout) == (1, "")
    assert run.lines == [f"error: <stdin>: {kind} a/x: apiVersion serving.ome.io/v1beta1 is not OME's API group, so "
                         f"this {kind} is not rendered: use apiVersion: ome.io/v1beta1 (--keep-inputs passes it "
                         f"through unrendered)"]
    run = render_objects([obj], "--keep-inputs")
    assert (run.code, run.lines, run.objects) == (0, [], [obj])


def test_benchmark_job_under_a_look_alike_group_is_a_warning_and_passes_through():
    obj = {**bench("b", "a"), "apiVersion": "ome.oracle.com/v1beta1"}
    run = render_objects([obj])
    assert run.code == 0
    assert run.lines == ["warning: <stdin>: BenchmarkJob a/b: apiVersion ome.oracle.com/v1beta1 is not OME's API "
                         "group, so this BenchmarkJob is passed through unrendered; to render it, use apiVersion: "
                         "ome.io/v1beta1"]


def test_the_argo_cd_plugin_renders_the_job_and_refuses_what_it_cannot_render(tmp_path):
    from test_argocd import PLUGIN, environment, manifests, repo_copy, run_command
    work = repo_copy(tmp_path)
    app = work / "apps" / "plain"
    (app / "benchmark.yaml").write_text((FIXTURES / "benchmark" / "benchmark.yaml").read_text())

    def generate(env):
        environ = environment("apps/plain", env, [])
        assert run_command(PLUGIN["spec"]["init"], app, environ).returncode == 0
        return run_command(PLUGIN["spec"]["generate"], app, environ)

    done = generate({})
    assert done.returncode == 0, done.stderr
    objs = manifests(done.stdout)
    job = next(o for o in objs if o["kind"] == "Job")
    validate_k8s(job)
    assert job["metadata"]["name"] == "llama-3-2-3b-instruct-bench"
    # the model stays, for OME's model agent (D3)
    assert [o["kind"] for o in objs if o["apiVersion"].startswith("ome.io/")] == ["ClusterBaseModel"]
    (app / "weight.yaml").write_text("apiVersion: ome.io/v1beta1\nkind: FineTunedWeight\nmetadata:\n  name: lora\n")
    done = generate({})
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == ("error: ./weight.yaml:2:1: FineTunedWeight lora: omerender cannot render a "
                           "FineTunedWeight (ome.io/v1beta1): it needs OME's controller; --keep-inputs passes it "
                           "through, for a cluster that runs OME\n")
    done = generate({"KEEP_INPUTS": "true"})
    assert done.returncode == 0, done.stderr
    assert {"FineTunedWeight", "BenchmarkJob", "Job"} <= {o["kind"] for o in manifests(done.stdout)}


def test_a_benchmark_configmap_in_a_file_is_named_at_its_line(tmp_path, monkeypatch):
    """Its errors and warnings name the line, as the cluster configuration's do."""
    monkeypatch.chdir(tmp_path)
    Path("cfg.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: benchmarkjob-config\n"
                                "  namespace: ome\ndata: {}\n")
    run = run_cli("render", "cfg.yaml")
    assert (run.code, run.stdout) == (1, "")
    assert run.printed == ('error: cfg.yaml:6:1: ConfigMap ome/benchmarkjob-config: data.benchmarkjob: '
                           'podConfig.cpuRequest: "" is not a quantity, and OME\'s controller fails on every '
                           'BenchmarkJob with it (resource.MustParse); set it, such as "2" or "2Gi"\n')


@pytest.mark.parametrize("uri, key, flag, env", [
    ("s3://benchmark-results@us-east-1/llama", "aws_secret_access_key", "--storage-aws-secret-access-key",
     "AWS_SECRET_ACCESS_KEY"),
    ("az://benchmarkstore.blob.core.windows.net/results", "azure_sas_token", "--storage-azure-sas-token",
     "AZURE_STORAGE_SAS_TOKEN"),
    ("github://acme/benchmarks", "github_token", "--github-token", "GITHUB_TOKEN"),
])
def test_a_credential_in_the_output_parameters_is_a_warning_naming_the_secret_to_use(uri, key, flag, env):
    run = render_objects(quickstart(outputLocation={"storageUri": uri, "parameters": {key: "s3cr3t",
                                                                                      "aws_region": "us-west-2"}}))
    assert run.code == 0, run.stderr
    assert run.lines == [
        CHART_DEFAULTS_INFO,
        f"warning: <stdin>: BenchmarkJob llama-demo/llama-bench: spec.outputLocation.parameters.{key} is a credential, "
        f"and OME writes it into the Job's arguments ({flag}), where anyone who can read the Job or its pods reads it: "
        f"keep it in a Secret (e.g. llama-bench-output-credentials, key {env}), give it to genai-bench as the "
        f"environment variable {env} (spec.podOverride.env: name {env}, valueFrom.secretKeyRef {{name: "
        f"llama-bench-output-credentials, key: {env}}}), and remove the parameter"]
    assert run.codes == ["chart-defaults", "benchmark-credentials-in-args"]


def test_parameters_that_are_no_credentials_or_not_passed_give_no_warning():
    for uri, params in (("s3://benchmark-results@us-east-1/llama", {"aws_region": "us-west-2", "aws_profile": "p"}),
                        ("gs://benchmark-results/llama", {"github_token": "not passed for gs://"})):
        run = render_objects(quickstart(outputLocation={"storageUri": uri, "parameters": params}))
        assert (run.code, run.lines) == (0, [CHART_DEFAULTS_INFO]), run.stderr
