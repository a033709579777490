"""Issue 39, item 5: mistakes that break a cluster, caught by the render with a message, its position and the fix,
in the CLI, the KRM function and the Argo CD plugin: an AcceleratorClass that changes a component's GPUs per pod,
parallelism flags against the GPUs there are, annotation keys OME v1.3 does not read, a webhook key of the
cluster ConfigMap OME's pod webhook cannot read, and a BenchmarkJob output whose Job the API server refuses."""
from __future__ import annotations

import copy
import os
import time
from pathlib import Path

import pytest
import yaml

from conftest import FIXTURES, load_yaml, run_cli
from test_argocd import PLUGIN, environment, run_command
from test_krm import fn, resource_list

ISVC = "InferenceService llama-demo/llama-3-2-3b-instruct"
ISVC_70B = "InferenceService llama-demo/llama-3-3-70b-instruct"
FIX_CLASS = ("give the class the runtime's count (8; its resources quantity is per pod), or set resources on the "
             "InferenceService's runner")


def write(directory: Path, files: dict[str, list[dict] | str]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name, docs in files.items():
        (directory / name).write_text(docs if isinstance(docs, str) else yaml.safe_dump_all(docs, sort_keys=False))
    return directory


def cli(tmp_path: Path, files: dict) -> tuple[int, str, list[str]]:
    """``omerender render`` of the files written into a directory, from inside it (positions name the files)."""
    app = write(tmp_path / "app", files)
    cwd = os.getcwd()
    os.chdir(app)
    try:
        run = run_cli("render", ".")
    finally:
        os.chdir(cwd)
    return run.code, run.stdout, run.printed.splitlines()


def krm(files: dict) -> tuple[int, list[dict]]:
    items = []
    for name, docs in files.items():
        for i, doc in enumerate(yaml.safe_load_all(docs) if isinstance(docs, str) else docs):
            doc = copy.deepcopy(doc)
            doc["metadata"].setdefault("annotations", {}).update(
                {"internal.config.kubernetes.io/path": name, "internal.config.kubernetes.io/index": str(i)})
            items.append(doc)
    code, out, _ = fn(resource_list(items))
    return code, out.get("results") or []


def argocd(tmp_path: Path, files: dict):
    app = write(tmp_path / "cmp-work" / "apps" / "app", files)
    environ = environment("apps/app", {}, [])
    init = run_command(PLUGIN["spec"]["init"], app, environ)
    assert init.returncode == 0, init.stderr
    return run_command(PLUGIN["spec"]["generate"], app, environ)


def quickstart() -> dict[str, list[dict]]:
    return {name: load_yaml(FIXTURES / "quickstart" / name) for name in ("model.yaml", "runtime.yaml", "isvc.yaml")}


def seventy_b(quantity: str, args_tp: str) -> dict[str, list[dict]]:
    """The 70B fixture on class nvidia-h100, whose nvidia.com/gpu quantity is ``quantity``; the runtime's
    tensor-parallel flag ``--tp-size=<args_tp>``."""
    files = {p.name: load_yaml(p) for p in sorted((FIXTURES / "accelerators-70b").glob("*.yaml"))}
    for cls in files["classes.yaml"]:
        if cls["metadata"]["name"] == "nvidia-h100":
            cls["spec"]["resources"] = [{"name": "nvidia.com/gpu", "quantity": quantity}]
    (isvc,) = files["isvc-70b.yaml"]
    isvc["spec"]["acceleratorSelector"]["acceleratorClass"] = "nvidia-h100"
    (runtime,) = files["runtime-70b.yaml"]
    args = runtime["spec"]["engineConfig"]["runner"]["args"]
    args[args.index("--tp-size=8")] = f"--tp-size={args_tp}"
    return files


def only(lines: list[str], code_or_word: str) -> list[str]:
    return [line for line in lines if code_or_word in line]


# ---------------------------------------------------------------- a. an AcceleratorClass that changes GPUs per pod

CAUSE = " (accelerator class nvidia-h100 sets 1 GPUs per pod, where the runtime asks for 8)"
CLASS_WARNING = (f"engine runner ome-container: accelerator class nvidia-h100 sets 1 GPUs per pod, where the runtime "
                 f"asks for 8; PARALLELISM_SIZE is 1, not 8 (1 per pod); {FIX_CLASS}")


def test_a_class_that_changes_the_gpus_per_pod_is_a_warning_naming_both_counts_and_parallelism_size(tmp_path):
    code, stdout, lines = cli(tmp_path, seventy_b("1", "$(PARALLELISM_SIZE)"))
    assert code == 0 and stdout
    assert only(lines, "[accelerator-class-gpus]") == [
        f"warning: ./isvc-70b.yaml:13:3: {ISVC_70B}: {CLASS_WARNING} [accelerator-class-gpus]"]


def test_a_class_that_keeps_the_runtime_s_count_says_nothing(tmp_path):
    _, _, lines = cli(tmp_path, seventy_b("8", "8"))
    assert only(lines, "accelerator-class-gpus") == [] and only(lines, "parallelism") == []


def test_a_class_the_runtime_plans_for_with_a_tensor_parallelism_override_gets_no_class_warning(tmp_path):
    """nvidia-l40s has a tensorParallelismOverride (--tp-size=4, --pp-size=2) in the runtime's acceleratorConfig: the
    runtime says how it runs on that class, so only the flags are judged against the class's count."""
    files = {p.name: load_yaml(p) for p in sorted((FIXTURES / "accelerators-70b").glob("*.yaml"))}
    code, _, lines = cli(tmp_path, files)
    assert code == 0 and only(lines, "accelerator-class-gpus") == [] and only(lines, "parallelism") == []
    for cls in files["classes.yaml"]:
        if cls["metadata"]["name"] == "nvidia-l40s":
            cls["spec"]["resources"] = [{"name": "nvidia.com/gpu", "quantity": "4"}]
    code, _, lines = cli(tmp_path / "4", files)
    assert code == 1 and only(lines, "accelerator-class-gpus") == []
    assert only(lines, "error:") == [
        f"error: ./isvc-70b.yaml:13:3: {ISVC_70B}: engine runner ome-container: --tp-size=4 × --pp-size=2 need 8 GPUs "
        "and the pod holds 4 (accelerator class nvidia-l40s sets 4 GPUs per pod, where the runtime asks for 8): the "
        "server fails at start; lower the flags to 4 GPUs in all, or give the pods more GPUs"]


def test_the_class_warning_in_the_krm_function_and_argo_cd(tmp_path):
    files = seventy_b("1", "$(PARALLELISM_SIZE)")
    code, results = krm(files)
    assert code == 0
    (result,) = [r for r in results if "accelerator class nvidia-h100 sets" in r["message"]]
    assert {k: result.get(k) for k in ("message", "severity", "resourceRef", "field", "file")} == {
                      "message": f"{ISVC_70B}: {CLASS_WARNING}", "severity": "warning",
                      "resourceRef": {"apiVersion": "ome.io/v1beta1", "kind": "InferenceService",
                                      "name": "llama-3-3-70b-instruct", "namespace": "llama-demo"},
                      "field": {"path": "spec.engine.runner"}, "file": {"path": "isvc-70b.yaml", "index": 0}}
    done = argocd(tmp_path, files)
    assert done.returncode == 0, done.stderr
    assert f"warning: ./isvc-70b.yaml:13:3: {ISVC_70B}: {CLASS_WARNING} [accelerator-class-gpus]" in done.stderr


# ---------------------------------------------------------------- b. parallelism flags

def test_flags_that_need_more_gpus_than_the_pod_holds_are_an_error(tmp_path):
    code, stdout, lines = cli(tmp_path, seventy_b("1", "8"))
    assert (code, stdout) == (1, "")
    assert only(lines, "error:") == [
        f"error: ./isvc-70b.yaml:13:3: {ISVC_70B}: engine runner ome-container: --tp-size=8 × --pp-size=1 need 8 GPUs "
        f"and the pod holds 1{CAUSE}: the server fails at start; lower the flags to 1 GPUs in all, or give the pods "
        "more GPUs"]


def test_flags_that_use_fewer_gpus_than_the_pod_holds_are_a_warning(tmp_path):
    code, _, lines = cli(tmp_path, seventy_b("8", "4"))
    assert code == 0
    assert only(lines, "[parallelism-gpu-mismatch]") == [
        f"warning: ./isvc-70b.yaml:13:3: {ISVC_70B}: engine runner ome-container: --tp-size=4 × --pp-size=1 use 4 GPUs "
        "and the pod holds 8: 4 sit idle; raise the flags to 8 GPUs in all, or give the pods fewer GPUs "
        "[parallelism-gpu-mismatch]"]


def _runner_with(files: dict, command: list[str], args: list[str] | None, gpus: int = 8, env=None) -> dict:
    (runtime,) = files["runtime-70b.yaml"]
    runner = runtime["spec"]["engineConfig"]["runner"]
    runner["command"] = command
    if args is None:
        runner.pop("args", None)
    else:
        runner["args"] = args
    if env is not None:
        runner["env"] = env
    for part in ("limits", "requests"):
        runner["resources"][part]["nvidia.com/gpu"] = str(gpus)
    return files


@pytest.mark.parametrize("command,args,need", [
    # vLLM's spellings, both forms
    (["vllm", "serve"], ["-tp", "8", "-pp", "2"], "-tp 8 × -pp 2 need 16"),
    (["vllm", "serve"], ["--tensor-parallel-size=4", "--data-parallel-size=4"],
     "--tensor-parallel-size=4 × --data-parallel-size=4 need 16"),
    # SGLang's: --dp-size takes GPUs of its own...
    (["python3", "-m", "sglang.launch_server"], ["--tp", "8", "--dp-size", "2"], "--tp 8 × --dp-size 2 need 16"),
    (["python3", "-m", "sglang.launch_server"], ["--pipeline-parallel-size", "16"],
     "--pipeline-parallel-size 16 need 16"),
    # a shell string, as runtimes write them, with a variable of the container's env
    (["sh", "-c"], ["python3 -m sglang.launch_server --tp-size \"$TP\" \\\n  --pp-size ${PP}"],
     "--tp-size 8 × --pp-size 2 need 16"),
    # in command, after a placeholder is filled
    (["python3", "-m", "sglang.launch_server", "--tp-size", "{{ .Annotations.tp }}"], None, "--tp-size 16 need 16"),
])
def test_each_spelling_and_form_is_counted_as_the_server_counts_it(tmp_path, command, args, need):
    files = _runner_with(seventy_b("8", "8"), command, args, env=[{"name": "TP", "value": "8"},
                                                                  {"name": "PP", "value": "2"}])
    files["isvc-70b.yaml"][0]["metadata"]["annotations"] = {"tp": "16"}
    code, _, lines = cli(tmp_path, files)
    assert code == 1
    assert only(lines, "error:") == [
        f"error: ./isvc-70b.yaml:15:3: {ISVC_70B}: engine runner ome-container: {need} GPUs and the pod holds 8: the "
        "server fails at start; lower the flags to 8 GPUs in all, or give the pods more GPUs"]


def test_sglang_dp_attention_shares_the_tensor_parallel_gpus(tmp_path):
    files = _runner_with(seventy_b("8", "8"), ["python3", "-m", "sglang.launch_server"],
                         ["--tp-size", "8", "--dp-size", "8", "--enable-dp-attention"])
    code, _, lines = cli(tmp_path, files)
    assert code == 0 and only(lines, "parallelism") == [] and only(lines, "error") == []


def test_a_size_that_is_not_a_number_is_not_judged(tmp_path):
    files = _runner_with(seventy_b("8", "8"), ["python3", "-m", "sglang.launch_server"], ["--tp-size", "$(UNSET)"])
    code, _, lines = cli(tmp_path, files)
    assert code == 0 and only(lines, "parallelism") == []


@pytest.mark.parametrize("env,args,need", [
    # an env value expanded against the variables before it, as the kubelet does
    ([{"name": "BASE", "value": "16"}, {"name": "TP", "value": "$(BASE)"}], ["--tp-size", "$(TP)"],
     "--tp-size 16 need 16"),
    # a later variable isn't defined yet where TP is expanded: TP stays $(BASE), no number
    ([{"name": "TP", "value": "$(BASE)"}, {"name": "BASE", "value": "16"}], ["--tp-size", "$(TP)"], None),
    # $$ is an escaped $: the server gets the text $(TP)
    ([{"name": "TP", "value": "16"}], ["--tp-size", "$$(TP)"], None),
    # a value only the cluster knows
    ([{"name": "TP", "valueFrom": {"configMapKeyRef": {"name": "c", "key": "tp"}}}], ["--tp-size=$(TP)"], None),
])
def test_flags_are_read_after_the_kubelet_s_expansion(tmp_path, env, args, need):
    files = _runner_with(seventy_b("8", "8"), ["python3", "-m", "sglang.launch_server"], args, env=env)
    code, _, lines = cli(tmp_path, files)
    if need is None:
        assert code == 0 and only(lines, "parallelism") == [] and only(lines, "error") == []
    else:
        assert code == 1
        assert [line.split(": engine runner ome-container: ")[1] for line in only(lines, "error:")] == [
            f"{need} GPUs and the pod holds 8: the server fails at start; lower the flags to 8 GPUs in all, or give "
            "the pods more GPUs"]


def test_a_leader_worker_set_counts_the_gpus_of_all_its_pods(tmp_path):
    files = quickstart()
    (isvc,) = files["isvc.yaml"]
    runner = {"name": "ome-container", "image": "i",
              "resources": {"limits": {"nvidia.com/gpu": 8}, "requests": {"nvidia.com/gpu": 8}}}
    isvc["spec"]["runtime"] = {"name": "sglang-llama-3-2-3b"}
    isvc["spec"]["engine"] = {"annotations": {"ome.io/deploymentMode": "MultiNode"},
                              "leader": {"runner": {**runner, "args": ["--tp", "16", "--pp", "2"]}},
                              "worker": {"size": 1, "runner": {**runner, "args": ["--tp", "16"]}}}
    code, stdout, lines = cli(tmp_path, files)
    assert (code, stdout) == (1, "")
    assert only(lines, "error:") == [
        f"error: ./isvc.yaml:13:7: {ISVC}: engine.leader runner ome-container: --tp 16 × --pp 2 need 32 GPUs and the "
        "LeaderWorkerSet's 2 pods hold 16 (8 per pod × 2 pods): the server fails at start; lower the flags to 16 "
        "GPUs in all, or give the pods more GPUs"]


def test_the_flags_error_in_the_krm_function_and_argo_cd(tmp_path):
    files = seventy_b("1", "8")
    code, results = krm(files)
    assert code == 1
    (result,) = [r for r in results if r["severity"] == "error"]
    assert result["message"] == (f"{ISVC_70B}: engine runner ome-container: --tp-size=8 × --pp-size=1 need 8 GPUs and "
                                 f"the pod holds 1{CAUSE}: the server fails at start; lower the flags to 1 GPUs in "
                                 "all, or give the pods more GPUs")
    assert (result["field"], result["file"]) == ({"path": "spec.engine.runner"}, {"path": "isvc-70b.yaml", "index": 0})
    done = argocd(tmp_path, files)
    assert (done.returncode, done.stdout) == (1, "")
    assert (f"error: ./isvc-70b.yaml:13:3: {ISVC_70B}: engine runner ome-container: --tp-size=8 × --pp-size=1 need 8 "
            "GPUs and the pod holds 1") in done.stderr


# ---------------------------------------------------------------- c. annotation keys OME v1.3 does not read

ANNOTATED = """apiVersion: ome.io/v1beta1
kind: InferenceService
metadata:
  name: llama-3-2-3b-instruct
  namespace: llama-demo
  annotations:
    ome.io/deployment-mode: MultiNode
    ome.io/circuit-breaker-max-connections: "10"
    models.ome.io/categroy: LARGE
spec:
  model:
    name: llama-3-2-3b-instruct
  engine:
    annotations:
      rdma.ome.io/autoinject: "true"
      runtime.ome.io/shm-profile: default
"""


def _unread(key: str, near: str) -> str:
    return f'annotation {key} is not one OME v1.3 reads, and has no effect; did you mean "{near}"?'


def test_an_annotation_key_ome_does_not_read_is_a_warning_with_the_nearest_key_it_reads(tmp_path):
    files = {**quickstart(), "isvc.yaml": ANNOTATED}
    (runtime,) = files["runtime.yaml"]
    runtime["metadata"]["annotations"] = {"ome.io/inherit_from": "base"}
    (model,) = files["model.yaml"]
    model["metadata"]["annotations"] = {"models.ome.io/Category": "LARGE"}
    code, _, lines = cli(tmp_path, files)
    assert code == 0
    assert only(lines, "[unknown-annotation]") == [
        f"warning: ./runtime.yaml:7:5: ServingRuntime llama-demo/sglang-llama-3-2-3b: "
        f"{_unread('ome.io/inherit_from', 'ome.io/inherit-from')} [unknown-annotation]",
        f"warning: ./model.yaml:6:5: ClusterBaseModel llama-3-2-3b-instruct: "
        f"{_unread('models.ome.io/Category', 'models.ome.io/category')} [unknown-annotation]",
        f"warning: ./isvc.yaml:7:5: {ISVC}: {_unread('ome.io/deployment-mode', 'ome.io/deploymentMode')} "
        "[unknown-annotation]",
        f"warning: ./isvc.yaml:9:5: {ISVC}: {_unread('models.ome.io/categroy', 'models.ome.io/category')} "
        "[unknown-annotation]",
        f"warning: ./isvc.yaml:15:7: {ISVC}: {_unread('rdma.ome.io/autoinject', 'rdma.ome.io/auto-inject')} "
        "[unknown-annotation]"]


def test_the_annotation_warning_in_the_krm_function_and_argo_cd(tmp_path):
    files = {**quickstart(), "isvc.yaml": ANNOTATED}
    code, results = krm(files)
    assert code == 0
    found = [(r["message"], r["field"], r["file"]) for r in results if "is not one OME v1.3 reads" in r["message"]]
    assert found[0] == (f"{ISVC}: {_unread('ome.io/deployment-mode', 'ome.io/deploymentMode')}",
                        {"path": "metadata.annotations.ome.io/deployment-mode"}, {"path": "isvc.yaml", "index": 0})
    assert len(found) == 3
    done = argocd(tmp_path, files)
    assert done.returncode == 0, done.stderr
    assert (f"warning: ./isvc.yaml:7:5: {ISVC}: {_unread('ome.io/deployment-mode', 'ome.io/deploymentMode')} "
            "[unknown-annotation]") in done.stderr.splitlines()


# ---------------------------------------------------------------- d. the pod webhook's keys of the ConfigMap

CONFIG_MAP = """apiVersion: v1
kind: ConfigMap
metadata:
  name: inferenceservice-config
  namespace: ome
data:
  modelInit: |-
    {
      "image": "model-init:1",
      "authType": "InstancePrincipal",
    }
"""
DENIED = ("data.modelInit: OME's pod webhook denies every InferenceService pod: unable to unmarshal modelInit json "
          "string: invalid character '}' looking for beginning of object key string; fix the JSON")


def test_a_webhook_key_that_is_not_json_is_an_error_at_its_line(tmp_path):
    code, stdout, lines = cli(tmp_path, {**quickstart(), "config.yaml": CONFIG_MAP})
    assert (code, stdout) == (1, "")
    assert lines == [f"error: ./config.yaml:11:5: ConfigMap ome/inferenceservice-config: {DENIED}"]


@pytest.mark.parametrize("key,text,error", [
    ("fineTunedAdapter", '{"image": 1}', "json: cannot unmarshal number into Go struct field "
                                         "FineTunedAdapterInjector.image of type string"),
    ("servingSidecar", '{"image":', "unexpected end of JSON input"),
    ("modelInit", '{"extraEnvVars": {}}', "json: cannot unmarshal object into Go struct field "
                                          "ModelInitInjector.extraEnvVars of type []v1.EnvVar"),
])
def test_each_webhook_key_is_read_as_the_webhook_reads_it(tmp_path, key, text, error):
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "inferenceservice-config",
                                                                     "namespace": "ome"}, "data": {key: text}}
    code, _, lines = cli(tmp_path, {**quickstart(), "config.yaml": [config]})
    assert code == 1
    (line,) = lines
    assert line.endswith(f"ConfigMap ome/inferenceservice-config: data.{key}: OME's pod webhook denies every "
                         f"InferenceService pod: unable to unmarshal {key} json string: {error}; fix the JSON")


def test_valid_webhook_keys_render(tmp_path):
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "inferenceservice-config",
                                                                     "namespace": "ome"},
              "data": {"modelInit": '{"image": "m", "extraEnvVars": [{"name": "A", "value": "b"}]}',
                       "fineTunedAdapter": '{"image": "f"}', "servingSidecar": "null"}}
    code, stdout, lines = cli(tmp_path, {**quickstart(), "config.yaml": [config]})
    assert code == 0 and stdout and only(lines, "error") == []


def test_the_webhook_key_error_in_the_krm_function_and_argo_cd(tmp_path):
    files = {**quickstart(), "config.yaml": CONFIG_MAP}
    code, results = krm(files)
    assert code == 1
    (result,) = results
    assert (result["message"], result["field"], result["file"]) == (
        f"ConfigMap ome/inferenceservice-config: {DENIED}", {"path": "data.modelInit"}, {"path": "config.yaml", "index": 0})
    done = argocd(tmp_path, files)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == f"error: ./config.yaml:11:5: ConfigMap ome/inferenceservice-config: {DENIED}\n"


# ---------------------------------------------------------------- e. a BenchmarkJob output the API server refuses

BENCHMARK = """apiVersion: ome.io/v1beta1
kind: BenchmarkJob
metadata:
  name: bench
  namespace: llama-demo
spec:
  podOverride:
    image: ghcr.io/sgl-project/genai-bench:0.1.132
  endpoint:
    endpoint:
      url: http://llama:8080
      apiFormat: openai
      modelName: llama
  task: text-to-text
  maxTimePerIteration: 15
  maxRequestsPerIteration: 100
  outputLocation:
    storageUri: pvc://results-claim//results
"""
ABSOLUTE = ('BenchmarkJob llama-demo/bench: spec.outputLocation.storageUri: "pvc://results-claim//results": the '
            'sub-path "/results" is absolute, so OME\'s Job mounts the claim with subPath "/results", which the API '
            'server refuses (volumeMounts[].subPath: Invalid value: "/results": must be a relative path) and the '
            'benchmark never runs; write "pvc://results-claim/results"')


def test_an_absolute_pvc_sub_path_is_an_error_not_a_job_the_apply_fails_on(tmp_path):
    code, stdout, lines = cli(tmp_path, {"bench.yaml": BENCHMARK})
    assert (code, stdout) == (1, "")
    assert lines == [f"error: ./bench.yaml:18:5: {ABSOLUTE}"]


def test_a_relative_pvc_sub_path_renders_its_job(tmp_path):
    code, stdout, _ = cli(tmp_path, {"bench.yaml": BENCHMARK.replace("claim//results", "claim/results")})
    assert code == 0
    (job,) = list(yaml.safe_load_all(stdout))
    assert job["spec"]["template"]["spec"]["containers"][0]["volumeMounts"][-1]["subPath"] == "results"


def test_the_benchmark_error_in_the_krm_function_and_argo_cd(tmp_path):
    files = {"bench.yaml": BENCHMARK}
    code, results = krm(files)
    assert code == 1
    (result,) = results
    assert (result["message"], result["field"], result["file"]) == (
        ABSOLUTE, {"path": "spec.outputLocation.storageUri"}, {"path": "bench.yaml", "index": 0})
    done = argocd(tmp_path, files)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == f"error: ./bench.yaml:18:5: {ABSOLUTE}\n"




# ---------------------------------------------------------------- hostile input: the checks' work is bounded

def test_a_flood_of_unread_annotation_keys_is_bounded_in_time_and_lines(tmp_path):
    """Thousands of distinct misspelt keys (up to 200 kB of annotations on each of three objects): the nearest keys
    are looked for a bounded number of times, and each object prints at most 100 warnings and a count."""
    files = quickstart()
    flood = {f"ome.io/deploymnt-mode-{i}": "" for i in range(6000)}
    for name in ("model.yaml", "runtime.yaml"):
        files[name][0]["metadata"]["annotations"] = dict(flood)
    (isvc,) = files["isvc.yaml"]
    isvc["spec"]["engine"] = {"annotations": dict(list(flood.items())[:3000])}   # copied to the HPA twice
    started = time.monotonic()
    code, _, lines = cli(tmp_path, files)
    assert time.monotonic() - started < 15
    assert code == 0, lines[-1]
    per_object = {}
    for line in only(lines, "unknown-annotation") + only(lines, "[more-messages]"):
        per_object.setdefault(line.split(": ")[2], []).append(line)
    assert len(per_object) == 3
    for shown in per_object.values():   # 100 warnings (the InferenceService's first is auto-selected-runtime's), a count
        assert len(shown) <= 101 and shown[-1].endswith("[more-messages]")
    assert only(lines, "ome.io/deploymnt-mode-0 ")[0].endswith('did you mean "ome.io/deploymentMode"? '
                                                                 '[unknown-annotation]')


def test_a_megabyte_shell_script_of_flags_is_read_in_seconds(tmp_path):
    files = _runner_with(seventy_b("8", "8"), ["sh", "-c"], [" ".join(['--tp-size 8 "a b" $X'] * 40000)])
    started = time.monotonic()
    code, _, lines = cli(tmp_path, files)
    assert time.monotonic() - started < 15
    assert code == 0 and only(lines, "parallelism") == []


def test_an_unbalanced_quote_in_a_shell_script_is_split_at_spaces(tmp_path):
    files = _runner_with(seventy_b("8", "8"), ["bash", "-c"], ["exec python3 -m sglang.launch_server --tp 16 'x"])
    code, _, lines = cli(tmp_path, files)
    assert code == 1 and "--tp 16 need 16 GPUs and the pod holds 8" in only(lines, "error:")[0]
