"""Every error names the fix: unknown runtime, model and accelerator-class names suggest the nearest
existing names; a failed auto-selection names the nearest runtimes and the explain command (issue 13)."""
import copy

import yaml

from conftest import FIXTURES, load_yaml, render_objects, run_cli
from select_helpers import csr

ISVC = "error: <stdin>: InferenceService llama-demo/llama-3-2-3b-instruct: "
RT = "srt-llama-3-2-3b-instruct"


def failed(objects):
    run = render_objects(objects)
    assert run.code == 1 and run.stdout == ""
    return run


def test_mistyped_runtime_name_suggests_the_existing_one(F):
    F["isvc"]["spec"]["runtime"]["name"] = "srt-llama-3-2-3b-instrut"
    assert failed(list(F.values())).lines == [
        ISVC + "runtime srt-llama-3-2-3b-instrut does not support model llama-3-2-3b-instruct: runtime "
        "srt-llama-3-2-3b-instrut not found in namespace llama-demo or at cluster scope; did you mean "
        f'"{RT}"?']


def test_mistyped_servingruntime_only_suggests_runtimes_of_the_namespace(F):
    F["isvc"]["spec"]["runtime"] = {"name": "srt-llama-3-2-3b-instrut", "kind": "ServingRuntime"}
    (line,) = failed(list(F.values())).lines
    assert line.endswith("ServingRuntime srt-llama-3-2-3b-instrut not found in namespace llama-demo")
    namespaced = copy.deepcopy(F["runtime"])
    namespaced.update(kind="ServingRuntime", metadata={"name": RT, "namespace": "llama-demo"})
    (line,) = failed(list(F.values()) + [namespaced]).lines
    assert line.endswith(f'not found in namespace llama-demo; did you mean "{RT}"?')


def test_mistyped_model_name_suggests_the_existing_one(F):
    F["isvc"]["spec"]["model"]["name"] = "llama-3-2-3b-instuct"
    assert failed(list(F.values())).lines == [
        ISVC + 'referenced model "llama-3-2-3b-instuct" not found in namespace "llama-demo": ensure a BaseModel '
        "exists in this namespace or a ClusterBaseModel exists cluster-wide with this name; did you mean "
        '"llama-3-2-3b-instruct"?']


def test_nothing_close_suggests_nothing(F):
    F["isvc"]["spec"]["model"]["name"] = "mistral"
    (line,) = failed(list(F.values())).lines
    assert line.endswith("with this name")


def seventy_b():
    return [o for name in ("classes.yaml", "model.yaml", "runtime-70b.yaml", "isvc-70b.yaml")
            for o in load_yaml(FIXTURES / "accelerators-70b" / name)]


def test_mistyped_class_on_a_named_runtime_suggests_the_class():
    objects = seventy_b()
    objects[-1]["spec"]["acceleratorSelector"]["acceleratorClass"] = "nvidia-l40"
    assert failed(objects).lines == [
        "error: <stdin>: InferenceService llama-demo/llama-3-3-70b-instruct: Failed to get accelerator class for "
        'engine: accelerator class nvidia-l40 not found at cluster scope; did you mean "nvidia-l40s" or '
        '"nvidia-h100"?']


def test_mistyped_class_in_auto_selection_says_so_instead_of_blaming_every_runtime():
    objects = seventy_b()
    del objects[-1]["spec"]["runtime"]
    objects[-1]["metadata"]["annotations"] = {"ome.io/accelerator-class": "nvidia-h10"}
    for entry in objects[-2]["spec"]["supportedModelFormats"]:
        entry["autoSelect"] = True
    (line,) = failed(objects).lines
    assert "Excluded runtimes: sglang-llama-3-3-70b (runtime does not support the required accelerator class)" in line
    assert line.endswith('Accelerator class "nvidia-h10" (metadata.annotations.ome.io/accelerator-class) does not '
                         "exist: no AcceleratorClass of that name in the input and no runtime lists it in "
                         'acceleratorRequirements.acceleratorClasses; did you mean "nvidia-h100" or '
                         '"nvidia-l40s"? Run `omerender explain --isvc llama-3-3-70b-instruct -n llama-demo` for '
                         'every runtime and its reason')


def runtimes_for(F, n):
    """``n`` copies of F's runtime that each miss the model by a different amount, and make it auto-selectable."""
    out = []
    for i in range(n):
        rt = copy.deepcopy(F["runtime"])
        rt["metadata"]["name"] = f"rt-{i:02d}"
        entry = rt["spec"]["supportedModelFormats"][0]
        entry["autoSelect"] = True
        if i % 3 == 0:
            entry["modelArchitecture"] = "MistralForCausalLM"
            entry["modelFramework"]["version"] = "4.0.0"
        elif i % 3 == 1:
            entry["modelArchitecture"] = "MistralForCausalLM"
        else:
            rt["spec"]["modelSizeRange"] = {"min": f"{i + 4}B", "max": "100B"}
        out.append(rt)
    return out


def test_failed_auto_selection_names_the_three_nearest_and_explain(F, tmp_path):
    del F["isvc"]["spec"]["runtime"]
    objects = [F["model"], F["isvc"]] + runtimes_for(F, 30)
    (line,) = failed(objects).lines
    assert line.startswith(ISVC + "no supporting runtime found for model llama-3-2-3b-instruct")
    assert ("Checked 30 runtimes (0 namespace-scoped, 30 cluster-scoped). Nearest of 30 excluded runtimes: "
            "rt-02 (model size 3.21B is outside supported range [6B, 100B]); "
            "rt-05 (model size 3.21B is outside supported range [9B, 100B]); "
            "rt-08 (model size 3.21B is outside supported range [12B, 100B]). Run `omerender explain --isvc "
            "llama-3-2-3b-instruct -n llama-demo` for every runtime and its reason") in line
    assert len(line) < 1000
    # the pointed-to command works on the same input and lists every runtime
    path = tmp_path / "all.yaml"
    path.write_text(yaml.safe_dump_all(objects))
    explained = run_cli("explain", "--isvc", "llama-3-2-3b-instruct", "-n", "llama-demo", str(path))
    assert explained.code == 0
    assert len(explained.stdout.splitlines()) == 31


def test_three_or_fewer_excluded_runtimes_keep_omes_list(F):
    del F["isvc"]["spec"]["runtime"]
    (line,) = failed([F["model"], F["isvc"]] + runtimes_for(F, 3)).lines
    assert line.endswith("Excluded runtimes: rt-00 (model format 'mt:safetensors:1.0.0:LlamaForCausalLM:"
                         "transformers:4.45.0.dev0' not in supported formats: architecture mismatch "
                         "(model=LlamaForCausalLM, runtime=MistralForCausalLM), framework version mismatch "
                         "(model=4.45.0.dev0, runtime=4.0.0)); rt-01 (model format 'mt:safetensors:1.0.0:"
                         "LlamaForCausalLM:transformers:4.45.0.dev0' not in supported formats: architecture mismatch "
                         "(model=LlamaForCausalLM, runtime=MistralForCausalLM)); rt-02 (model size 3.21B is outside "
                         "supported range [6B, 100B]). Run `omerender explain --isvc llama-3-2-3b-instruct -n "
                         "llama-demo` for every runtime and its reason")


def test_the_only_runtime_with_autoselect_false_is_named_with_it_and_explain(tmp_path):
    quickstart = FIXTURES / "quickstart"
    for name in ("namespace.yaml", "model.yaml", "runtime.yaml", "isvc.yaml"):
        (tmp_path / name).write_text((quickstart / name).read_text().replace("autoSelect: true", "autoSelect: false"))
    run = run_cli("render", str(tmp_path))
    assert (run.code, run.stdout) == (1, "")
    assert run.lines == [
        f"error: {tmp_path}/isvc.yaml: InferenceService llama-demo/llama-3-2-3b-instruct: no supporting runtime found "
        "for model llama-3-2-3b-instruct and engine does not have complete runner configuration: no runtime found to "
        "support model safetensors with format safetensors in namespace llama-demo. Checked 1 runtimes (1 "
        "namespace-scoped, 0 cluster-scoped). Supporting the model but not auto-selectable: sglang-llama-3-2-3b "
        "(autoSelect: false): set autoSelect: true on the matching supportedModelFormats entry, or name the runtime in "
        "spec.runtime.name. Run `omerender explain --isvc llama-3-2-3b-instruct -n llama-demo` for every runtime and "
        "its reason"]
    explained = run_cli("explain", "--isvc", "llama-3-2-3b-instruct", "-n", "llama-demo", str(tmp_path))
    assert explained.code == 0
    assert "sglang-llama-3-2-3b   Namespaced   No " in explained.stdout


def test_a_huge_name_gets_no_suggestion(F):
    F["isvc"]["spec"]["runtime"]["name"] = "s" * 5000
    (line,) = failed(list(F.values())).lines
    assert line.endswith("not found in namespace llama-demo or at cluster scope")


def test_suggestions_are_budgeted_across_the_whole_input(F):
    runtimes = [csr(f"runtime-{i:05d}") for i in range(500)]
    services = []
    for i in range(150):
        isvc = copy.deepcopy(F["isvc"])
        isvc["metadata"]["name"] = f"svc-{i:04d}"
        isvc["spec"]["runtime"]["name"] = f"runtime-{i:05d}x"
        services.append(isvc)
    text = yaml.dump_all([F["model"]] + runtimes + services, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper))
    run = run_cli("render", "-", input=text)
    assert run.code == 1 and run.stdout == "" and len(run.lines) == 150
    hinted = [line for line in run.lines if "did you mean" in line]
    # 50,000 comparisons at 500 names per error: the first 100 errors get a suggestion, the rest none
    assert len(hinted) == 100
    assert 'did you mean "runtime-00000"' in run.lines[0]


QUICKSTART = str(FIXTURES / "quickstart")


def test_explain_names_the_namespace_an_inference_service_is_in():
    run = run_cli("explain", "--isvc", "llama-3-2-3b-instruct", QUICKSTART)
    assert run.code == 1 and run.stdout == ""
    assert run.lines == ['error: inferenceservices.ome.io "llama-3-2-3b-instruct" not found in namespace default; '
                         "it is in namespace llama-demo: pass -n llama-demo"]


def test_explain_suggests_inference_service_and_model_names():
    run = run_cli("explain", "--isvc", "llama-3-2-3b-instrct", "-n", "llama-demo", QUICKSTART)
    assert run.code == 1 and run.lines == [
        'error: inferenceservices.ome.io "llama-3-2-3b-instrct" not found; did you mean "llama-3-2-3b-instruct"?']
    run = run_cli("explain", "--model", "llama-3-2-3b-instrct", "-n", "llama-demo", QUICKSTART)
    assert run.code == 1 and run.lines == [
        'error: clusterbasemodels.ome.io "llama-3-2-3b-instrct" not found; did you mean "llama-3-2-3b-instruct"?']


def test_tree_suggests_runtime_names():
    run = run_cli("tree", "sglang-llama-3-2-3", QUICKSTART)
    assert run.code == 1 and run.stdout == ""
    assert run.lines == ['error: "sglang-llama-3-2-3" not found in the input: no runtime, AcceleratorClass, model or '
                         'AutoscalerPolicy has that name; did you mean "sglang-llama-3-2-3b" or "llama-3-2-3b-instruct"?']
