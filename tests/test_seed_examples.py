"""The seed page's examples (OME v1.3 "Serving runtimes"), end to end through the CLI."""
import yaml

from conftest import CHART_DEFAULTS_INFO, FIXTURES, run_cli, validate_k8s

SEED_70B = FIXTURES / "accelerators-70b"


def engine_runner(run, name):
    deployment = run.find("Deployment", name)
    return deployment, next(c for c in deployment["spec"]["template"]["spec"]["containers"]
                            if c["name"] == "ome-container")


def test_70b_on_l40s_rewrites_parallelism_and_overrides_args():
    run = run_cli("render", str(SEED_70B))
    assert run.code == 0, run.stderr
    deployment, runner = engine_runner(run, "llama-3-3-70b-instruct-engine")
    assert runner["args"] == ["--host=0.0.0.0", "--port=8080", "--model-path=$(MODEL_PATH)", "--tp-size=4",
                              "--pp-size=2", "--mem-frac=0.85"]
    assert runner["command"] == ["python3", "-m", "sglang.launch_server"]
    assert runner["resources"]["limits"]["nvidia.com/gpu"] == "8"
    assert "PARALLELISM_SIZE" not in [e["name"] for e in runner["env"]]
    assert deployment["spec"]["template"]["spec"]["nodeSelector"] == {
        "models.ome.io/clusterbasemodel.llama-3-3-70b-instruct": "Ready", "nvidia.com/gpu.product": "NVIDIA-L40S"}
    assert run.lines == [CHART_DEFAULTS_INFO, "info: " + str(SEED_70B / "isvc-70b.yaml") + ": InferenceService "
                         "llama-demo/llama-3-3-70b-instruct: engine: accelerator class nvidia-l40s from "
                         "spec.acceleratorSelector.acceleratorClass"]
    for obj in run.objects:
        validate_k8s(obj)


def test_70b_on_h100_keeps_the_runtime_flags():
    text = (SEED_70B / "isvc-70b.yaml").read_text().replace("acceleratorClass: nvidia-l40s",
                                                            "acceleratorClass: nvidia-h100")
    others = [str(SEED_70B / f) for f in ("classes.yaml", "model.yaml", "runtime-70b.yaml")]
    run = run_cli("render", "-", *others, input=text)
    assert run.code == 0, run.stderr
    deployment, runner = engine_runner(run, "llama-3-3-70b-instruct-engine")
    assert runner["args"] == ["--host=0.0.0.0", "--port=8080", "--model-path=$(MODEL_PATH)", "--tp-size=8",
                              "--pp-size=1", "--mem-frac=0.9"]
    assert {"name": "PARALLELISM_SIZE", "value": "8"} in runner["env"]
    assert deployment["spec"]["template"]["spec"]["nodeSelector"]["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3"


def test_runtime_page_example_is_auto_selected_and_fills_the_name_placeholder():
    run = run_cli("render", str(FIXTURES / "quickstart"))
    assert run.code == 0
    _, runner = engine_runner(run, "llama-3-2-3b-instruct-engine")
    assert "--served-model-name=llama-3-2-3b-instruct" in runner["args"]
    assert run.find("Deployment")["metadata"]["labels"]["serving-runtime"] == "sglang-llama-3-2-3b"
    assert run.lines[1].endswith("Runtime sglang-llama-3-2-3b will be auto-selected for model llama-3-2-3b-instruct")


def test_runtime_named_in_a_different_namespace_kind_lookup():
    """The seed's table: kind ClusterServingRuntime (default) falls back to a ServingRuntime in the namespace;
    kind ServingRuntime looks only in the namespace."""
    isvc = yaml.safe_load((FIXTURES / "quickstart" / "isvc.yaml").read_text())
    isvc["spec"]["runtime"] = {"name": "sglang-llama-3-2-3b"}
    paths = [str(FIXTURES / "quickstart" / f) for f in ("model.yaml", "runtime.yaml")]
    run = run_cli("render", "-", *paths, input=yaml.safe_dump(isvc))
    assert run.code == 0, run.stderr
    isvc["spec"]["runtime"]["kind"] = "ServingRuntime"
    isvc["metadata"]["namespace"] = "other"
    run = run_cli("render", "-", *paths, input=yaml.safe_dump(isvc))
    assert run.lines == ["error: <stdin>: InferenceService other/llama-3-2-3b-instruct: runtime sglang-llama-3-2-3b "
                         "does not support model llama-3-2-3b-instruct: ServingRuntime sglang-llama-3-2-3b not found "
                         "in namespace other"]
