"""Accelerator classes end to end through the CLI (accelerators.md §7 rows that need the whole pipeline)."""
import yaml

from conftest import CHART_DEFAULTS_INFO, render_objects, validate_k8s
from test_accelerators import ISVC70, L40S, RT70

MODEL70 = {
    "apiVersion": "ome.io/v1beta1", "kind": "ClusterBaseModel", "metadata": {"name": "llama-3-3-70b-instruct"},
    "spec": {"vendor": "meta", "storage": {"storageUri": "hf://meta-llama/Llama-3.3-70B-Instruct",
                                           "path": "/raid/models/meta/llama-3-3-70b-instruct"},
             "modelFormat": {"name": "safetensors", "version": "1.0.0"},
             "modelFramework": {"name": "transformers", "version": "4.47.0.dev0"},
             "modelArchitecture": "LlamaForCausalLM", "modelParameterSize": "70.6B"}}


def test_a24_child_inherits_the_pool_and_a_missing_class_is_skipped():
    profile = yaml.safe_load(RT70)
    profile["metadata"] = {"name": "sglang-profile", "annotations": {"ome.io/runtime-profile": "true"}}
    profile["spec"]["disabled"] = True
    child = {"apiVersion": "ome.io/v1beta1", "kind": "ClusterServingRuntime",
             "metadata": {"name": "sglang-child", "annotations": {"ome.io/inherit-from": "sglang-profile"}},
             "spec": {"disabled": False}}
    isvc = yaml.safe_load(ISVC70)
    isvc["spec"]["runtime"]["name"] = "sglang-child"
    isvc["spec"]["acceleratorSelector"] = {"policy": "FirstAvailable"}
    run = render_objects([yaml.safe_load(L40S), profile, child, MODEL70, isvc])
    assert run.code == 0, run.stderr
    assert run.lines == [CHART_DEFAULTS_INFO, 
        'warning: <stdin>: ClusterServingRuntime sglang-child: accelerator class "nvidia-h100" inherited from '
        'ClusterServingRuntime/sglang-profile in acceleratorRequirements.acceleratorClasses is not in the input',
        "info: <stdin>: InferenceService llama-demo/llama-3-3-70b-instruct: engine: accelerator class nvidia-h100 "
        "listed by runtime ClusterServingRuntime/sglang-child is not in the input; policy FirstAvailable skips it",
        "info: <stdin>: InferenceService llama-demo/llama-3-3-70b-instruct: engine: accelerator class nvidia-l40s from "
        "policy FirstAvailable in spec.acceleratorSelector.policy"]
    deployment = run.find("Deployment")
    assert deployment["spec"]["template"]["spec"]["nodeSelector"]["nvidia.com/gpu.product"] == "NVIDIA-L40S"
    runner = deployment["spec"]["template"]["spec"]["containers"][0]
    assert runner["args"][-3:] == ["--tp-size=4", "--pp-size=2", "--mem-frac=0.85"]
    for obj in run.objects:
        validate_k8s(obj)


def test_a22_a_named_class_missing_from_the_input_is_an_error():
    rt = yaml.safe_load(RT70)
    rt["spec"]["acceleratorRequirements"]["acceleratorClasses"] = ["nvidia-l40s"]
    isvc = yaml.safe_load(ISVC70)
    isvc["spec"]["acceleratorSelector"]["acceleratorClass"] = "nvidia-h100"
    run = render_objects([yaml.safe_load(L40S), rt, MODEL70, isvc])
    assert run.code == 1 and run.stdout == ""
    assert run.lines[-1] == ("error: <stdin>: InferenceService llama-demo/llama-3-3-70b-instruct: Failed to get "
                             "accelerator class for engine: accelerator class nvidia-h100 not found at cluster scope; "
                             'did you mean "nvidia-l40s"?')


def test_a23_unknown_classes_in_an_enabled_runtime():
    run = render_objects([yaml.safe_load(L40S), yaml.safe_load(RT70), MODEL70, yaml.safe_load(ISVC70)])
    assert run.code == 1
    assert run.lines == ["error: <stdin>: ClusterServingRuntime sglang-llama-3-3-70b: unknown accelerator classes "
                         "referenced in AcceleratorRequirements: [nvidia-h100]"]


def test_a20_a_named_class_the_runtime_cannot_apply_is_a_warning_and_strict_fails():
    rt = yaml.safe_load(RT70)
    del rt["spec"]["acceleratorRequirements"]
    isvc = yaml.safe_load(ISVC70)
    isvc["spec"]["acceleratorSelector"] = {"acceleratorClass": "nvidia-l40s"}
    run = render_objects([yaml.safe_load(L40S), rt, MODEL70, isvc])
    assert run.code == 0, run.stderr
    assert run.lines[-1] == (
        "warning: <stdin>: InferenceService llama-demo/llama-3-3-70b-instruct: engine: accelerator class nvidia-l40s "
        "from spec.acceleratorSelector.acceleratorClass is not applied: runtime "
        "ClusterServingRuntime/sglang-llama-3-3-70b lists no acceleratorRequirements.acceleratorClasses, and OME "
        "applies a class only from that list (no node selector, no resources of the class); list nvidia-l40s there")
    pod = run.find("Deployment")["spec"]["template"]["spec"]
    assert "nvidia.com/gpu.product" not in (pod.get("nodeSelector") or {})
    strict = render_objects([yaml.safe_load(L40S), rt, MODEL70, isvc], "--strict")
    assert (strict.code, strict.stdout) == (1, "")
    assert strict.lines[-1] == "error: 3 warnings, and --strict makes every warning fail the run"
