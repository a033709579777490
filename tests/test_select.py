"""omerender.ome.selection: lookups, matching, versions, sizes, scoring, ranking (selection.md §8)."""
from __future__ import annotations

import copy
import re
from decimal import Decimal

import pytest

from omerender.errors import OmeError, Report
from omerender.ome.selection.entries import entry_matches
from omerender.ome.selection.evaluation import evaluate
from omerender.ome.selection.fields import parse_size
from omerender.ome.selection.request import request_of
from omerender.ome.selection.resolve import resolve
from omerender.ome.selection.validation import validate_runtime
from omerender.ome.selection.versions import versions_match
from select_helpers import L3, NS, bm, cbm, csr, entry, isvc, load, model_spec, sr, texts


def run(*objects, merged=None):
    """Resolve the first InferenceService of the inputs; returns (resolution, report)."""
    inputs = load(*objects)
    report = Report()
    kwargs = {"merged_spec": merged} if merged else {}
    return resolve(inputs.isvcs[0], inputs, report, **kwargs), report


def error_of(*objects, merged=None) -> str:
    with pytest.raises(OmeError) as caught:
        run(*objects, merged=merged)
    return caught.value.text


# ---------------------------------------------------------------- 8.1 lookups

def test_1_cluster_base_model_by_default():
    res, report = run(isvc(runtime="rt"), cbm("llama-3-2-3b-instruct"), csr("rt"))
    assert res.model.kind == "ClusterBaseModel" and res.runtime.name == "rt" and not res.auto_selected
    assert report.messages == []


def test_2_basemodel_needs_its_kind():
    assert error_of(isvc(model="m", runtime="rt"), bm("m"), csr("rt")) == (
        'Failed to get referenced ClusterBaseModel "m": only a BaseModel of that name exists in namespace '
        '"llama-demo"; set spec.model.kind: BaseModel')
    res, report = run(isvc(model={"name": "m", "kind": "BaseModel"}, runtime="rt"), bm("m"), csr("rt"))
    assert res.model.kind == "BaseModel" and report.messages == []


def test_3_basemodel_shadows_cluster_model():
    res, report = run(isvc(model="m", runtime="rt"), bm("m"), cbm("m"), csr("rt"))
    assert res.model.kind == "BaseModel"
    assert texts(report)[0] == "BaseModel llama-demo/m shadows ClusterBaseModel m; OME serves the BaseModel"


def test_4_cluster_model_with_basemodel_kind():
    assert error_of(isvc(model={"name": "m", "kind": "BaseModel"}, runtime="rt"), cbm("m"), csr("rt")) == (
        'Failed to get referenced BaseModel "m" in namespace "llama-demo": only a ClusterBaseModel of that name '
        'exists; remove spec.model.kind or set it to ClusterBaseModel')


def test_basemodel_of_another_namespace_is_invisible():
    assert error_of(isvc(model="m", runtime="rt"), bm("m", ns="other"), csr("rt")).startswith(
        'referenced model "m" not found in namespace "llama-demo"')


def test_unsupported_model_kind():
    assert error_of(isvc(model={"name": "m", "kind": "Model"}, runtime="rt"), cbm("m"), csr("rt")) == (
        'spec.model.kind: Unsupported value: "Model": supported values: "BaseModel", "ClusterBaseModel"')


def test_5_model_not_found():
    assert error_of(isvc(model="llama-3-2-1b-instruct", runtime="rt"), csr("rt")) == (
        'referenced model "llama-3-2-1b-instruct" not found in namespace "llama-demo": ensure a BaseModel exists in '
        'this namespace or a ClusterBaseModel exists cluster-wide with this name')


def test_6_disabled_model():
    assert error_of(isvc(model="qwen2-5-7b-instruct", runtime="rt"), cbm("qwen2-5-7b-instruct", disabled=True),
                    csr("rt")) == "model qwen2-5-7b-instruct is disabled"


def test_7_neither_model_nor_runtime():
    assert error_of(isvc(model=None)) == "at least one of spec.model or spec.runtime must be set"
    assert error_of(isvc(model=None, runtime={"name": ""})) == "at least one of spec.model or spec.runtime must be set"


def test_8_runtime_kind_decides_where_to_look():
    both = (cbm(L3), csr("foo"), sr("foo"))
    assert run(isvc(runtime="foo"), *both)[0].runtime.kind == "ClusterServingRuntime"
    assert run(isvc(runtime={"name": "foo", "kind": "ServingRuntime"}), *both)[0].runtime.kind == "ServingRuntime"
    assert run(isvc(runtime="foo"), cbm(L3), sr("foo"))[0].runtime.kind == "ServingRuntime"


def test_9_named_servingruntime_missing_with_model():
    assert error_of(isvc(runtime={"name": "sglang-llama-3-2-3b", "kind": "ServingRuntime"}), cbm(L3),
                    csr("sglang-llama-3-2-3b")) == (
        "runtime sglang-llama-3-2-3b does not support model llama-3-2-3b-instruct: ServingRuntime "
        "sglang-llama-3-2-3b not found in namespace llama-demo")


def test_named_cluster_runtime_missing_with_model():
    assert error_of(isvc(runtime="nope"), cbm(L3)) == (
        "runtime nope does not support model llama-3-2-3b-instruct: runtime nope not found in namespace llama-demo "
        "or at cluster scope")


def test_10_runtime_only_missing_runtime():
    assert error_of(isvc(ns="demo", model=None, runtime="srt-qwen2-5-7b")) == (
        "runtime srt-qwen2-5-7b not found in namespace demo or at cluster scope")
    assert error_of(isvc(ns="demo", model=None, runtime={"name": "x", "kind": "ServingRuntime"})) == (
        "ServingRuntime x not found in namespace demo")


def test_11_named_runtime_disabled():
    assert error_of(isvc(runtime="old-rt"), cbm(L3), csr("old-rt", disabled=True)) == (
        "runtime old-rt does not support model llama-3-2-3b-instruct: cluster-scoped runtime old-rt is disabled")
    assert error_of(isvc(runtime="old-rt"), cbm(L3), sr("old-rt", disabled=True)) == (
        "runtime old-rt does not support model llama-3-2-3b-instruct: namespace-scoped runtime old-rt is disabled")
    assert error_of(isvc(model=None, runtime="old-rt"), csr("old-rt", disabled=True)) == (
        "cluster-scoped runtime old-rt is disabled")


def test_disabled_is_judged_on_the_merged_spec():
    def merged(rt):
        return dict(rt.spec, disabled=True)
    assert error_of(isvc(runtime="rt"), cbm(L3), csr("rt"), merged=merged).endswith(
        "cluster-scoped runtime rt is disabled")
    res, _ = run(isvc(runtime="rt"), cbm(L3), csr("rt", disabled=True), merged=lambda rt: dict(rt.spec, disabled=False))
    assert res.runtime.name == "rt"


def test_chain_errors_are_wrapped_with_a_model():
    def broken(rt):
        raise OmeError('inherit-from parent "p" not found (chain so far: [rt])')
    assert error_of(isvc(runtime="rt"), cbm(L3), csr("rt"), merged=broken) == (
        'runtime rt does not support model llama-3-2-3b-instruct: inherit-from parent "p" not found '
        '(chain so far: [rt])')
    assert error_of(isvc(model=None, runtime="rt"), csr("rt"), merged=broken) == (
        'inherit-from parent "p" not found (chain so far: [rt])')


def test_12_runtime_only_skips_model_work():
    res, report = run(isvc(model=None, runtime="vllm-generic", acceleratorSelector={"acceleratorClass": "nvidia-h100"}),
                      csr("vllm-generic", entries=[entry(fmt="onnx")]))
    assert res.model is None and res.entry is None and report.messages == []


def test_13_sharded_model():
    assert error_of(isvc(model="m", runtime="rt"), cbm("m", distribution="Sharded"), csr("rt")) == (
        "model m uses distribution Sharded: no model cache provider is configured for sharded model loading")
    assert error_of(isvc(model="m"), cbm("m", distribution="Sharded"), csr("rt")).startswith("model m uses")


def test_number_where_a_string_is_expected_names_the_field():
    with pytest.raises(OmeError) as caught:
        run(isvc(runtime="rt"), cbm(L3, fmt_v=1.0), csr("rt"))
    assert caught.value.text == 'spec.modelFormat.version: Invalid value: "number": must be of type string'
    assert caught.value.ref.kind == "ClusterBaseModel"


def test_inputs_are_not_mutated():
    objects = (isvc(), cbm(L3), csr("rt", entries=[entry(auto=True)], size=("2B", "4b")))
    inputs = load(*objects)
    before = copy.deepcopy([o.data for o in inputs.objects])
    with pytest.raises(OmeError):
        resolve(inputs.isvcs[0], inputs, Report())
    resolve(load(isvc(runtime="rt"), cbm(L3), csr("rt")).isvcs[0], inputs, Report())
    assert [o.data for o in inputs.objects] == before


# ---------------------------------------------------------------- 8.2 versions, architecture, quantization

def reason(e: dict, **model) -> str | None:
    return entry_matches(e, model_spec(**model))


def test_14_exact_entry_matches_but_is_not_auto_selectable():
    assert reason(entry(auto=False)) is None
    res, report = run(isvc(runtime="srt-llama-3-2-3b-instruct"), cbm(L3),
                      csr("srt-llama-3-2-3b-instruct", entries=[entry(auto=False)]))
    assert res.runtime.name == "srt-llama-3-2-3b-instruct" and report.messages == []
    verdict = evaluate(load(cbm(L3), csr("rt", entries=[entry(auto=False)])), NS, load(cbm(L3)).cluster_models[L3])
    assert verdict.winner is None and verdict.verdicts[0].check == 6


def test_15_suffixed_model_version_needs_equality():
    assert reason(entry(fw_v="4.46.0", fw_op="GreaterThanOrEqual")) == (
        "framework version mismatch (model=4.45.0.dev0, runtime=4.46.0)")


@pytest.mark.parametrize("entry_v,op,model_v,expected", [
    ("1.0.0", None, "1.0", True),                       # 16
    ("1.8.0", "GreaterThan", "1.7.0", True),
    ("1.8.0", "GreaterThan", "1.8.0", False),
    ("1.8.0", "GreaterThanOrEqual", "1.8.0", True),
    ("4.50.0", "GreaterThanOrEqual", "4.36.2", True),   # 17
    ("4.50.0", "GreaterThanOrEqual", "4.51.0", False),
    ("4.50.0", "GreaterThanOrEqual", "4.45.0.dev0", False),
    ("1.8", "GreaterThan", "1.7.0", False),             # 18
    ("v1.0.0", "GreaterThan", "1.0.0", False),
    ("v1", "Equal", "1.0.0", True),
    ("1.8.0-dev", "GreaterThan", "1.8.0-dev", True),    # 19
    ("1.8.0-dev", "GreaterThan", "1.8.0-alpha", False),
    ("4.45.0.dev0", "GreaterThanOrEqual", "4.44.0", False),
    ("1.08.0", None, "1.8.0", False),                   # 20
    ("V1.0.0", None, "1.0.0", False),
    ("1.2-beta", None, "1.2-beta", False),
    ("1.0.0-", None, "1.0.0-", False),
    ("", None, "", False),
    ("1.2.3.4", None, "1.2.3.4", True),
    ("4.43.0+build", None, "4.43.0", False),
    ("2.0", "LessThan", "2.0", True),                   # unknown operator: Equal plus parts/prefix
    ("2.0", "LessThan", "2.0.0", False),
    ("2.0", "Equal", "2.0.0", True),
])
def test_16_to_20_versions(entry_v, op, model_v, expected):
    assert versions_match(entry_v, model_v, op or "Equal") is expected
    result = reason(entry(fmt_v=entry_v, fmt_op=op), fmt_v=model_v)
    if expected:
        assert result is None
    else:
        assert result == f"format version mismatch (model={model_v}, runtime={entry_v})"


def test_21_format_name_and_one_sided_version():
    assert reason(entry(fmt="SafeTensors")) == "format name mismatch (model=safetensors, runtime=SafeTensors)"
    assert reason(entry(), fmt_v=None) == "model has no format version but runtime requires 1.0.0"
    assert reason(entry(fmt_v=None)) == "model has format version but runtime has no version requirement"
    assert reason(entry(fmt_v=None), fmt_v=None) is None


def test_framework_sides():
    assert reason(entry(), fw=None) == "model has no framework but runtime requires transformers"
    assert reason(entry(fw="vllm")) == "framework name mismatch (model=transformers, runtime=vllm)"
    assert reason(entry(), fw_v=None) == "model has no framework version but runtime requires 4.45.0.dev0"
    assert reason(entry(fw_v=None)) == "model has framework version but runtime has no version requirement"
    assert reason(entry(fw_v=None), fw_v=None) is None


def test_22_architecture_sides():
    assert reason(entry(arch=None)) == (
        "model has architecture LlamaForCausalLM but runtime has no architecture requirement")
    assert reason(entry(), arch=None) == "model has no architecture but runtime requires LlamaForCausalLM"
    assert reason(entry(arch="MistralForCausalLM")) == (
        "architecture mismatch (model=LlamaForCausalLM, runtime=MistralForCausalLM)")
    assert reason(entry(arch=None), arch=None) is None


def test_23_quantization_sides():
    assert reason(entry(), quantization="fp8") == "model has quantization fp8 but runtime has no quantization requirement"
    assert reason(entry(quantization="fp8")) == "model has no quantization but runtime requires fp8"
    assert reason(entry(quantization="fp8"), quantization="int4") == "quantization mismatch (model=int4, runtime=fp8)"
    assert reason(entry(quantization="fp8"), quantization="fp8") is None


def test_pieces_are_joined_in_order():
    assert reason(entry(arch="MistralForCausalLM", fmt="pytorch", fw_v="4.36.0"), quantization="fp8") == (
        "architecture mismatch (model=LlamaForCausalLM, runtime=MistralForCausalLM), model has quantization fp8 but "
        "runtime has no quantization requirement, format name mismatch (model=safetensors, runtime=pytorch), "
        "framework version mismatch (model=4.45.0.dev0, runtime=4.36.0)")


EXPLAIN_POINTER = re.compile(r"[.?] Run `omerender explain --isvc \S+ -n \S+` for every runtime and its reason$")


def auto_error(*objects) -> str:
    """The text of a failed auto-selection without the pointer to explain, which ends every one that checked a
    runtime."""
    text = error_of(*objects)
    assert bool(EXPLAIN_POINTER.search(text)) is (". Checked " in text), text
    return EXPLAIN_POINTER.sub(lambda m: m.group()[0] if m.group()[0] == "?" else "", text)


def test_24_model_label():
    m = cbm("m", fmt="pytorch", fmt_v="1.0.0", arch="transformer", quantization="fp16", fw_v="4.0.0")
    text = auto_error(isvc(model="m"), m, csr("rt", entries=[entry(fmt="onnx", auto=True)]))
    assert "model format 'mt:pytorch:1.0.0:transformer:fp16:transformers:4.0.0' not in supported formats" in text


def test_25_runtime_without_entries():
    m = cbm("m", fmt="pytorch", fmt_v=None, fw=None, arch=None, size=None)
    assert auto_error(isvc(model="m"), m, csr("rt", entries=[])).endswith(
        "Excluded runtimes: rt (model format 'mt:pytorch' not in supported formats: no supported formats defined)")


QWEN = dict(fmt_v="1.0.0", arch="Qwen2ForCausalLM", fw_v="4.40.1", size=None)
QWEN_TAIL = (
    "no runtime found to support model safetensors with format safetensors in namespace demo. Checked 2 runtimes "
    "(0 namespace-scoped, 2 cluster-scoped). Excluded runtimes: srt-mistral-7b-instruct (model format "
    "'mt:safetensors:1.0.0:Qwen2ForCausalLM:transformers:4.40.1' not in supported formats: architecture mismatch "
    "(model=Qwen2ForCausalLM, runtime=MistralForCausalLM), framework version mismatch (model=4.40.1, "
    "runtime=4.36.0)). Supporting the model but not auto-selectable: srt-qwen2-5-7b (autoSelect: false): set "
    "autoSelect: true on the matching supportedModelFormats entry, or name the runtime in spec.runtime.name")  # OME's text ends before "Supporting": omerender names what OME leaves out


def qwen_inputs(auto=False, engine=True):
    return (isvc("qwen2-5-7b", ns="demo", model="qwen2-5-7b", engine=engine), cbm("qwen2-5-7b", **QWEN),
            csr("srt-mistral-7b-instruct", entries=[entry(arch="MistralForCausalLM", fw_v="4.36.0", auto=True)]),
            csr("srt-qwen2-5-7b", entries=[entry(arch="Qwen2ForCausalLM", fw_v="4.40.1", auto=auto)]))


def test_26_no_supporting_runtime_admission_form():
    assert auto_error(*qwen_inputs()) == (
        "no supporting runtime found for model qwen2-5-7b and engine does not have complete runner configuration: "
        + QWEN_TAIL)


def test_27_auto_selected_with_warning():
    res, report = run(*qwen_inputs(auto=True))
    assert res.runtime.name == "srt-qwen2-5-7b" and res.auto_selected
    assert texts(report) == ["Runtime srt-qwen2-5-7b will be auto-selected for model qwen2-5-7b"]
    assert res.entry["modelArchitecture"] == "Qwen2ForCausalLM"


def test_28_engine_with_runner_image_gets_the_bare_text():
    assert auto_error(*qwen_inputs(engine={"runner": {"image": "x"}})) == QWEN_TAIL
    both = {"leader": {"runner": {"image": "x"}}, "worker": {"runner": {"image": "y"}}}
    assert auto_error(*qwen_inputs(engine=both)) == QWEN_TAIL
    leader_only = {"leader": {"runner": {"image": "x"}}}
    assert auto_error(*qwen_inputs(engine=leader_only)).startswith("no supporting runtime found")
    assert auto_error(*qwen_inputs(engine=None)) == QWEN_TAIL


def test_no_warning_outside_admission():
    res, report = run(*qwen_inputs(auto=True, engine={"runner": {"image": "x"}}))
    assert res.runtime.name == "srt-qwen2-5-7b" and report.messages == []


def test_no_runtimes_at_all():
    assert auto_error(isvc(), cbm(L3)).endswith(
        "no runtime found to support model safetensors with format safetensors in namespace llama-demo")


# ---------------------------------------------------------------- 8.3 sizes

@pytest.mark.parametrize("text,value", [
    ("3.21B", Decimal("3210000000")), ("3210M", Decimal("3210000000")), ("0.5B", Decimal("500000000")),
    ("500M", Decimal("500000000")), (".5", Decimal("0.5")), ("5.", Decimal(5)), ("3", Decimal(3)),
    ("1T", Decimal(10) ** 12), ("4b", Decimal(0)), ("7 B", Decimal(0)), ("1.5K", Decimal(0)), ("", Decimal(0)),
    ("1e9", Decimal(0)), ("inf", Decimal(0)), (None, None)])
def test_parse_size(text, value):
    assert parse_size(text) == value


def size_verdict(low, high, size):
    objects = (cbm(L3, size=size), csr("rt", size=(low, high)))
    inputs = load(*objects)
    result = evaluate(inputs, NS, inputs.cluster_models[L3])
    return result.verdicts[0], result.warnings


@pytest.mark.parametrize("low,high,size", [
    ("2B", "4B", "3.21B"), ("2B", "4B", "4B"), ("1B", "4B", "1500M"), ("70B", None, "405B"), (None, "13B", "3.21B"),
    ("2B", "4B", None), ("2B", "4B", "2000M")])
def test_29_sizes_inside(low, high, size):
    verdict, _ = size_verdict(low, high, size)
    assert verdict.compatible, verdict.reason


@pytest.mark.parametrize("low,high,size,text", [
    ("500M", "2B", "3.21B", "[500M, 2B]"), ("70B", None, "3.21B", "[70B, inf)"), (None, "2B", "3.21B", "(-inf, 2B]"),
    ("4B", "2B", "3B", "[4B, 2B]")])
def test_30_31_33_sizes_outside(low, high, size, text):
    verdict, _ = size_verdict(low, high, size)
    assert verdict.reason == f"model size {size} is outside supported range {text}"


def test_32_lower_case_suffix_reads_as_zero():
    objects = (isvc(), cbm(L3), csr("rt", size=("2B", "4b")))
    with pytest.raises(OmeError) as caught:
        run(*objects)
    assert EXPLAIN_POINTER.sub("", caught.value.text).endswith(
        "rt (model size 3.21B is outside supported range [2B, 4b])")
    inputs = load(*objects)
    report = Report()
    with pytest.raises(OmeError):
        resolve(inputs.isvcs[0], inputs, report)
    assert texts(report) == ['spec.modelSizeRange.max "4b" is not a valid parameter count; OME reads it as 0']
    assert report.messages[0].ref.kind == "ClusterServingRuntime"


def test_33_lower_case_min_is_no_lower_limit():
    verdict, warnings = size_verdict("2b", None, "1B")
    assert verdict.compatible
    assert [w[0] for w in warnings] == ['spec.modelSizeRange.min "2b" is not a valid parameter count; OME reads it as 0']


def test_unparseable_model_size_warns_on_the_model():
    verdict, warnings = size_verdict("2B", "4B", "3.21b")
    assert verdict.reason == "model size 3.21b is outside supported range [2B, 4B]"
    assert warnings[0][0] == 'spec.modelParameterSize "3.21b" is not a valid parameter count; OME reads it as 0'
    assert warnings[0][1].kind == "ClusterBaseModel"


def test_size_is_not_checked_without_a_format_match():
    verdict, warnings = size_verdict("2B", "4b", "3.21B")
    assert warnings  # used, so warned
    inputs = load(cbm(L3), csr("rt", entries=[entry(fmt="onnx", auto=True)], size=("2B", "4b")))
    assert evaluate(inputs, NS, inputs.cluster_models[L3]).warnings == []


# ---------------------------------------------------------------- 8.4 diffusion pipelines

DIFF = dict(fmt="diffusers", fmt_v="0.34.0.dev0", fw="diffusers", fw_v="0.34.0.dev0", arch="QwenImagePipeline")
PIPELINE = {"className": "QwenImagePipeline", "transformer": {"library": "diffusers"}}


def qwen_image(model_pipeline=None):
    extra = {"diffusionPipeline": model_pipeline} if model_pipeline is not None else {}
    return (isvc("qi", model="qwen-image-pvc"), cbm("qwen-image-pvc", size=None, **DIFF, **extra),
            csr("srt-qwen-image-pipeline", entries=[entry(**DIFF, auto=True, priority=2, diffusionPipeline=PIPELINE)]))


def test_34_pipeline_required_by_runtime():
    assert auto_error(*qwen_image()).endswith(
        "Excluded runtimes: srt-qwen-image-pipeline (model format "
        "'mt:diffusers:0.34.0.dev0:QwenImagePipeline:diffusers:0.34.0.dev0' not in supported formats: diffusion "
        "pipeline required by runtime but not specified in model)")


def test_35_pipeline_matches_and_scores_four():
    objects = qwen_image(PIPELINE)
    res, _ = run(*objects)
    assert res.runtime.name == "srt-qwen-image-pipeline"
    inputs = load(*objects)
    assert evaluate(inputs, NS, inputs.cluster_models["qwen-image-pvc"]).verdicts[0].score == 4


def pipe_reason(entry_pipeline, model_pipeline):
    extra = {"diffusionPipeline": model_pipeline} if model_pipeline is not None else {}
    return entry_matches(entry(**DIFF, diffusionPipeline=entry_pipeline), model_spec(**DIFF, **extra))


def test_36_pipeline_differences():
    assert pipe_reason(PIPELINE, {"className": "QwenImageEditPipeline"}) == (
        "pipeline class mismatch (model=QwenImageEditPipeline, runtime=QwenImagePipeline)")
    assert pipe_reason(PIPELINE, {"transformer": {}}) == "pipeline class mismatch (model=<nil>, runtime=QwenImagePipeline)"
    assert pipe_reason(PIPELINE, {"className": "QwenImagePipeline", "transformer": {"library": "transformers"}}) == (
        "transformer library mismatch (model=transformers, runtime=diffusers)")
    assert pipe_reason(PIPELINE, {"className": "QwenImagePipeline"}) == (
        "component transformer required by runtime but not specified in model")
    assert pipe_reason({"vae": {"type": "AutoencoderKL"}}, {"vae": {"type": "Other", "library": "x"}}) == (
        "vae type mismatch (model=Other, runtime=AutoencoderKL)")
    wanted = {"additionalComponents": {"safety_checker": {}}}
    assert pipe_reason(wanted, {"additionalComponents": {"feature_extractor": {}}}) == (
        "diffusion component safety_checker missing in model")
    assert pipe_reason(wanted, {"className": "x"}) == "diffusion pipeline missing required additional components"
    assert pipe_reason({"additionalComponents": {"a": {"library": "l"}}},
                       {"additionalComponents": {"a": {"library": "m"}}}) == "a library mismatch (model=m, runtime=l)"
    assert pipe_reason(PIPELINE, {"className": "QwenImagePipeline", "transformer": {"library": "diffusers"},
                                  "vae": {"library": "extra"}}) is None


def test_only_the_first_pipeline_difference_joins_the_other_pieces():
    assert entry_matches(entry(**dict(DIFF, arch="Other"), diffusionPipeline=PIPELINE), model_spec(**DIFF)) == (
        "diffusion pipeline required by runtime but not specified in model, "
        "architecture mismatch (model=QwenImagePipeline, runtime=Other)")


def test_37_empty_pipeline_requirement():
    assert pipe_reason({}, None) == "diffusion pipeline required by runtime but not specified in model"
    assert pipe_reason({}, {"className": "Anything"}) is None
    assert pipe_reason(None, {"className": "Anything"}) is None


# ---------------------------------------------------------------- 8.5 accelerator classes and modes

def verdict_for(isvc_obj, runtime_obj, model_obj=None):
    inputs = load(isvc_obj, model_obj or cbm(L3), runtime_obj)
    found = evaluate(inputs, NS, inputs.cluster_models[L3], request_of(inputs.isvcs[0]))
    return found.verdicts[0]


CLASSES = ["nvidia-h100", "nvidia-h200"]


@pytest.mark.parametrize("spec,classes,passes", [
    ({"acceleratorSelector": {"acceleratorClass": "nvidia-h100"}}, CLASSES, True),
    ({"acceleratorSelector": {"acceleratorClass": "nvidia-h100"}}, None, False),
    ({"acceleratorSelector": {"acceleratorClass": "nvidia-a100"}}, CLASSES, False),
    ({}, CLASSES, True),
    ({}, None, True),
    ({"acceleratorSelector": {"acceleratorClass": ""}}, CLASSES, False),
    ({"annotations": {"ome.io/accelerator-class": "nvidia-h200"}}, CLASSES, True),
    ({"annotations": {"ome.io/accelerator-class": "NVIDIA-H200"}}, CLASSES, False),
    ({"acceleratorSelector": {"policy": "BestFit"}}, None, True),
])
def test_38_accelerator_class_filter(spec, classes, passes):
    verdict = verdict_for(isvc(**spec), csr("rt", classes=classes))
    assert verdict.compatible is passes
    if not passes:
        assert verdict.reason == "runtime does not support the required accelerator class" and verdict.check == 2


def test_39_every_component_class_must_be_listed():
    def with_overrides(engine_class, decoder_class):
        return isvc(engine={"acceleratorOverride": {"acceleratorClass": engine_class}},
                    decoder={"acceleratorOverride": {"acceleratorClass": decoder_class}})
    assert verdict_for(with_overrides("nvidia-h100", "nvidia-h200"), csr("rt", classes=CLASSES)).compatible
    assert not verdict_for(with_overrides("nvidia-h100", "nvidia-a100"), csr("rt", classes=CLASSES)).compatible


HOPPER = dict(classes=CLASSES, entries=[entry(fw_v="4.45.0.dev0", auto=True)])


def test_40_class_excludes_the_only_runtime():
    objects = (isvc("llama-3-3-70b", model="llama-3-3-70b-instruct",
                    acceleratorSelector={"acceleratorClass": "nvidia-a100"}),
               cbm("llama-3-3-70b-instruct", size="70B"), csr("llama-3-3-70b-hopper", **HOPPER))
    assert auto_error(*objects) == (
        "no supporting runtime found for model llama-3-3-70b-instruct and engine does not have complete runner "
        "configuration: no runtime found to support model safetensors with format safetensors in namespace "
        "llama-demo. Checked 1 runtimes (0 namespace-scoped, 1 cluster-scoped). Excluded runtimes: "
        "llama-3-3-70b-hopper (runtime does not support the required accelerator class). Accelerator class "
        '"nvidia-a100" (spec.acceleratorSelector.acceleratorClass) does not exist: no AcceleratorClass of that name '
        'in the input and no runtime lists it in acceleratorRequirements.acceleratorClasses; did you mean '
        '"nvidia-h100" or "nvidia-h200"?')


def hopper_inputs(runtime=None):
    return (isvc("llama-3-3-70b", model="llama-3-3-70b-instruct", runtime=runtime,
                 acceleratorSelector={"acceleratorClass": "nvidia-h100"}),
            cbm("llama-3-3-70b-instruct", size="70B"), csr("llama-3-3-70b-hopper", **HOPPER),
            csr("srt-llama-3-3-70b-instruct", entries=[entry(auto=False)]))


def test_41_class_listed_selects():
    res, report = run(*hopper_inputs())
    assert res.runtime.name == "llama-3-3-70b-hopper"
    assert texts(report) == ["Runtime llama-3-3-70b-hopper will be auto-selected for model llama-3-3-70b-instruct"]


def test_42_named_runtime_without_the_class_warns():
    res, report = run(*hopper_inputs(runtime="srt-llama-3-3-70b-instruct"))
    assert res.runtime.name == "srt-llama-3-3-70b-instruct" and not res.auto_selected
    assert texts(report) == [
        'runtime "srt-llama-3-3-70b-instruct" does not declare support for model "llama-3-3-70b-instruct" (runtime '
        'srt-llama-3-3-70b-instruct does not support model : runtime does not support the required accelerator '
        'class); proceeding because the runtime was named explicitly']


@pytest.mark.parametrize("spec,runtime_kw", [
    ({}, {"engine_mode": "MultiNode"}),
    ({"deploymentMode": "OMENative"}, {}),
    ({"engine": {"annotations": {"ome.io/deploymentMode": "omenative"}}}, {"engine_mode": "MultiNode"}),
    ({"deploymentMode": "RawDeployment"}, {"decoder_mode": "OMENative"}),
    ({"engine": {"annotations": {"ome.io/deploymentMode": "RawDeployment"}}}, {"engine_mode": "rawdeployment"}),
    ({"deploymentMode": "RawDeployment"}, {"engine_mode": "RawDeployment"}),
])
def test_43_modes_that_pass(spec, runtime_kw):
    assert verdict_for(isvc(**spec), csr("rt", **runtime_kw)).compatible


def test_44_engine_modes_differ():
    verdict = verdict_for(isvc(engine={"annotations": {"ome.io/deploymentMode": "RawDeployment"}}),
                          csr("rt", engine_mode="OMENative"))
    assert verdict.check == 3 and verdict.reason == (
        "runtime engine deployment mode OMENative does not match requested engine deployment mode RawDeployment")
    verdict = verdict_for(isvc(deploymentMode="RawDeployment"), csr("rt", engine_mode="MultiNode"))
    assert verdict.reason.startswith("runtime engine deployment mode MultiNode")


def test_decoder_mode_compared_when_the_isvc_has_a_decoder():
    verdict = verdict_for(isvc(deploymentMode="RawDeployment", decoder={}), csr("rt", decoder_mode="OMENative"))
    assert verdict.reason == (
        "runtime decoder deployment mode OMENative does not match requested decoder deployment mode RawDeployment")


def test_45_named_runtime_with_another_mode_warns():
    objects = (isvc("llama-3-3-70b", model="llama-3-3-70b-instruct", runtime="srt-llama-3-3-70b-instruct-multinode",
                    engine={"annotations": {"ome.io/deploymentMode": "RawDeployment"}}),
               cbm("llama-3-3-70b-instruct", size="70B"),
               csr("srt-llama-3-3-70b-instruct-multinode", engine_mode="MultiNode"))
    res, report = run(*objects)
    assert res.runtime.name == "srt-llama-3-3-70b-instruct-multinode"
    assert texts(report) == [
        'runtime "srt-llama-3-3-70b-instruct-multinode" does not declare support for model "llama-3-3-70b-instruct" '
        '(runtime srt-llama-3-3-70b-instruct-multinode does not support model : runtime engine deployment mode '
        'MultiNode does not match requested engine deployment mode RawDeployment); proceeding because the runtime was '
        'named explicitly']


def test_named_runtime_mode_comes_from_the_merged_spec():
    objects = (isvc(runtime="rt", deploymentMode="RawDeployment"), cbm(L3), csr("rt"))
    _, report = run(*objects, merged=lambda rt: dict(rt.spec, engineConfig={
        "annotations": {"ome.io/deploymentMode": "MultiNode"}}))
    assert "runtime engine deployment mode MultiNode" in texts(report)[0]


# ---------------------------------------------------------------- 8.6 scoring and ranking

def score_of(*entries):
    inputs = load(cbm(L3), csr("rt", entries=list(entries)))
    return evaluate(inputs, NS, inputs.cluster_models[L3]).verdicts[0]


def test_46_scores():
    assert score_of(entry(fmt_w=2, priority=2, auto=True)).score == 6
    assert score_of(entry(fmt_w=0, fw_w=0, priority=1, auto=True)).score == 15
    verdict = score_of(entry(fmt_w=-3, fw_w=1, auto=True))
    assert verdict.score == 0 and verdict.reason == "auto-select score is 0" and verdict.check == 7


def l3_family(small_priority=3):
    return (bm(L3), sr("team-llama", entries=[entry(auto=True)]),
            csr("vllm-llama", entries=[entry(fmt_w=2, priority=2, auto=True)]),
            csr("srt-llama-small", entries=[entry(priority=small_priority, auto=True)], size=("1B", "8B")),
            csr("srt-llama-large", entries=[entry(priority=3, auto=True)], size=("1B", "70B")))


def ranked(objects, namespace=NS, model=L3):
    inputs = load(*objects)
    model_obj = inputs.models.get((namespace, model)) or inputs.cluster_models[model]
    return evaluate(inputs, namespace, model_obj)


def test_47_servingruntime_first_then_score_then_range():
    result = ranked(l3_family())
    assert [(v.runtime.name, v.score, v.priority, v.weight) for v in result.verdicts] == [
        ("team-llama", 2, 1, 2), ("vllm-llama", 6, 2, 6), ("srt-llama-small", 6, 3, 6), ("srt-llama-large", 6, 3, 6)]
    assert result.tie_break == ("ServingRuntimes in the namespace come before ClusterServingRuntimes "
                                "(vllm-llama (Cluster))")
    res, _ = run(isvc(model={"name": L3, "kind": "BaseModel"}), *l3_family())
    assert res.runtime.name == "team-llama" and res.runtime.kind == "ServingRuntime"


def test_48_priority_reorders_cluster_runtimes():
    result = ranked(l3_family(small_priority=4))
    assert [(v.runtime.name, v.score) for v in result.verdicts] == [
        ("team-llama", 2), ("srt-llama-small", 8), ("vllm-llama", 6), ("srt-llama-large", 6)]
    without_sr = [o for o in l3_family(4) if o["kind"] != "ServingRuntime"]
    assert ranked(without_sr).tie_break == "higher score: 8 over 6 of vllm-llama (Cluster)"


def test_49_name_then_narrower_range():
    same = dict(entries=[entry(auto=True)])
    result = ranked((cbm(L3), csr("runtime-b", **same), csr("runtime-a", **same)))
    assert result.winner.runtime.name == "runtime-a"
    assert result.tie_break == "name order: runtime-a before runtime-b (Cluster)"
    result = ranked((cbm(L3, size="7B"), csr("a", size=("6.9B", "100B"), **same), csr("b", size=("1B", "10B"), **same)))
    assert result.winner.runtime.name == "b"
    assert result.tie_break == ("size range closer to the model size 7B: distance 9000000000 against 93100000000 "
                                "of a (Cluster)")


def test_range_distance_is_exact():
    same = dict(entries=[entry(auto=True)])
    # distances 2.0000000001B and 2B: an integer truncation (OME) would tie and pick "a" by name
    result = ranked((cbm(L3, size="3B"), csr("a", size=("1B", "5.0000000001B"), **same),
                     csr("b", size=("2B", "4B"), **same)))
    assert result.winner.runtime.name == "b"


def test_no_size_skips_the_range_tie_break():
    same = dict(entries=[entry(auto=True)])
    result = ranked((cbm(L3, size=None), csr("b", size=("1B", "2B"), **same), csr("a", size=("1B", "700B"), **same)))
    assert result.winner.runtime.name == "a"


def test_50_no_auto_select_entry():
    verdict = score_of(entry())
    assert not verdict.compatible and verdict.check == 6 and verdict.reason == (
        "supports the model but has no supportedModelFormats[].autoSelect=true entry, so automatic selection skips it "
        "(pin it explicitly via spec.runtime.name instead)")


ONNX = dict(fmt="onnx", fw="onnxruntime", fw_v="1.10.0", auto=True)


def test_51_unset_auto_select_counts_in_the_score():
    verdict = score_of(entry(), entry(**ONNX))
    assert verdict.compatible and verdict.score == 2


def test_52_matching_entry_is_not_auto_select_enabled():
    verdict = score_of(entry(auto=False), entry(**ONNX))
    assert not verdict.compatible and verdict.check == 7 and verdict.reason == (
        "matching format safetensors is not autoSelect-enabled (a different supportedModelFormats entry on this "
        "runtime has autoSelect=true, but not the one that matches this model)")


def test_53_score_ignores_architecture_and_entries_differ():
    entries = [entry(arch="MistralForCausalLM", auto=True, priority=3), entry(auto=False, priority=1)]
    verdict = score_of(*entries)
    assert verdict.compatible and verdict.score == 6 and verdict.priority == 1 and verdict.weight == 2
    res, _ = run(isvc(), cbm(L3), csr("rt", entries=entries))
    assert res.entry is res.runtime.spec["supportedModelFormats"][0]


def test_accelerator_entry_for_a_named_runtime_counts_every_entry():
    entries = [entry(auto=False, fmt_w=3), entry(auto=True)]
    res, _ = run(isvc(runtime="rt"), cbm(L3), csr("rt", entries=entries))
    assert res.entry is res.runtime.spec["supportedModelFormats"][0]
    res, _ = run(isvc(), cbm(L3), csr("rt", entries=entries))
    assert res.entry is res.runtime.spec["supportedModelFormats"][1]
    res, _ = run(isvc(runtime="rt"), cbm(L3), csr("rt", entries=[entry(fw_v="9.9.9")]))
    assert res.entry is None


def test_auto_selected_runtime_uses_its_own_spec():
    def merged(rt):
        raise AssertionError("auto-selection must not use inheritance")
    res, _ = run(isvc(), cbm(L3), csr("rt"), merged=merged)
    assert res.runtime.name == "rt"


def test_excluded_order_and_counts():
    objects = (isvc(), cbm(L3), csr("zeta", disabled=True), csr("alpha", entries=[entry(fmt="onnx", auto=True)]),
               sr("zeta", entries=[entry()]), sr("mid", disabled=True), csr("plain", entries=[entry()]),
               sr("elsewhere", ns="other", disabled=True))
    assert auto_error(*objects).endswith(
        "Checked 5 runtimes (2 namespace-scoped, 3 cluster-scoped). Excluded runtimes: mid (runtime is disabled); "
        "alpha (model format 'mt:safetensors:1.0.0:LlamaForCausalLM:transformers:4.45.0.dev0:3.21B' not in supported "
        "formats: format name mismatch (model=safetensors, runtime=onnx)); zeta (runtime is disabled). Supporting the "
        "model but not auto-selectable: zeta (autoSelect unset, which counts as false); plain (autoSelect unset, which "
        "counts as false): set autoSelect: true on the matching supportedModelFormats entry, or name the runtime in "
        "spec.runtime.name".replace(":3.21B", ""))


def test_54_verdicts_for_explain():
    objects = (bm(L3, ns="team-a"), sr("team-llama", ns="team-a", entries=[entry(auto=True)]),
               csr("vllm-llama", entries=[entry(fmt_w=2, priority=2, auto=True)]),
               csr("srt-llama-1b", size=("500M", "2B")), csr("vllm-base", entries=[entry()]),
               csr("vllm-legacy", disabled=True))
    result = ranked(objects, namespace="team-a")
    assert [(v.runtime.name, v.compatible, v.reason) for v in result.verdicts] == [
        ("team-llama", True, None), ("vllm-llama", True, None),
        ("srt-llama-1b", False, "model size 3.21B is outside supported range [500M, 2B]"),
        ("vllm-base", False, NOT_AUTO_TEXT), ("vllm-legacy", False, "runtime is disabled")]


NOT_AUTO_TEXT = ("supports the model but has no supportedModelFormats[].autoSelect=true entry, so automatic selection "
                 "skips it (pin it explicitly via spec.runtime.name instead)")


# ---------------------------------------------------------------- 8.8 named runtimes and input errors

N56 = "srt-llama-3-2-1b-instruct"
M56 = "llama-3-2-1b-instruct"


def named_56(model_kw=None):
    kw = dict(fw_v="4.46.0", size="1.24B") if model_kw is None else model_kw
    return (isvc(M56, runtime=N56, model=M56), cbm(M56, **kw),
            csr(N56, entries=[entry(auto=False)], size=("500M", "2B")))


def test_56_named_runtime_that_does_not_declare_support():
    res, report = run(*named_56())
    assert res.runtime.name == N56
    assert texts(report) == [
        'runtime "srt-llama-3-2-1b-instruct" does not declare support for model "llama-3-2-1b-instruct" (runtime '
        'srt-llama-3-2-1b-instruct does not support model safetensors: model format '
        "'mt:safetensors:1.0.0:LlamaForCausalLM:transformers:4.46.0' not in supported formats: framework version "
        'mismatch (model=4.46.0, runtime=4.45.0.dev0)); proceeding because the runtime was named explicitly']


def test_named_runtime_size_outside_range_warns():
    _, report = run(*named_56(dict(size="8B")))
    assert texts(report) == [
        'runtime "srt-llama-3-2-1b-instruct" does not declare support for model "llama-3-2-1b-instruct" (runtime '
        'srt-llama-3-2-1b-instruct does not support model safetensors: model size 8B is outside supported range '
        '[500M, 2B]); proceeding because the runtime was named explicitly']


def test_named_runtime_that_supports_the_model_is_silent():
    res, report = run(*named_56(dict(size="1.24B")))
    assert report.messages == [] and res.entry is res.runtime.spec["supportedModelFormats"][0]


def test_57_named_runtime_model_without_format():
    assert error_of(*named_56(dict(fmt=None))) == (
        "runtime srt-llama-3-2-1b-instruct does not support model llama-3-2-1b-instruct: invalid model "
        "specification: modelFormat.name: model format name is required; OME's model agent records modelFormat once it has read the model's files: run omerender "
        "model-info --update in.yaml to fill them now (used by InferenceService llama-demo/llama-3-2-1b-instruct)")
    assert error_of(*named_56(dict(fmt=""))).endswith("(used by InferenceService llama-demo/llama-3-2-1b-instruct)")


def test_58_auto_selection_model_without_format():
    objects = (isvc(M56, model=M56), cbm(M56, fmt=None), csr("rt"))
    assert error_of(*objects) == (
        "no supporting runtime found for model llama-3-2-1b-instruct and engine does not have complete runner "
        "configuration: invalid model specification: modelFormat.name: model format name is required; OME's model agent records modelFormat once it has read the model's files: run omerender "
        "model-info --update in.yaml to fill them now (used by InferenceService llama-demo/llama-3-2-1b-instruct)")
    objects = (isvc(M56, model=M56, engine=None), cbm(M56, fmt=None), csr("rt"))
    assert error_of(*objects) == (
        "Failed to find runtime for model llama-3-2-1b-instruct: invalid model specification: modelFormat.name: "
        "model format name is required; OME's model agent records modelFormat once it has read the model's files: run omerender "
        "model-info --update in.yaml to fill them now (used by InferenceService llama-demo/llama-3-2-1b-instruct)")


def validation_error(obj) -> str:
    with pytest.raises(OmeError) as caught:
        validate_runtime(load(obj).objects[0])
    return caught.value.text


def test_59_different_priorities():
    assert validation_error(csr("vllm-multi", entries=[entry(auto=True, priority=1), entry(auto=True, priority=2)])) == (
        "different priorities assigned for the model format  under the clusterservingruntime vllm-multi")
    assert validation_error(sr("m", entries=[entry(auto=True, priority=1, name="a"),
                                             entry(auto=True, priority=3, name="a")])) == (
        "different priorities assigned for the model format a under the servingruntime m")


@pytest.mark.parametrize("entries,disabled", [
    ([entry(auto=True, priority=1), entry(auto=True, priority=1)], None),
    ([entry(auto=True, priority=1, name="a"), entry(auto=True, priority=2, name="b")], None),
    ([entry(auto=True, priority=1), entry(auto=False, priority=2)], None),
    ([entry(auto=True, priority=1), entry(auto=True)], None),
    ([entry(auto=True, priority=1), entry(auto=True, priority=2)], True),
])
def test_priorities_that_pass(entries, disabled):
    validate_runtime(load(csr("rt", entries=entries, disabled=disabled)).objects[0])


def test_entry_required_fields_and_priority_minimum():
    bad = entry()
    del bad["modelFormat"]
    assert validation_error(csr("rt", entries=[entry(), bad])) == (
        "spec.supportedModelFormats[1].modelFormat: Required value")
    bad = entry()
    del bad["modelFramework"]
    assert validation_error(csr("rt", entries=[bad])) == "spec.supportedModelFormats[0].modelFramework: Required value"
    bad = entry()
    del bad["modelFramework"]["name"]
    assert validation_error(csr("rt", entries=[bad])) == (
        "spec.supportedModelFormats[0].modelFramework.name: Required value")
    assert validation_error(csr("rt", entries=[entry(priority=0)])) == (
        "spec.supportedModelFormats[0].priority: Invalid value: 0: should be greater than or equal to 1")
    assert validation_error(csr("rt", entries=[entry(fmt_v=1.0)])) == (
        'spec.supportedModelFormats[0].modelFormat.version: Invalid value: "number": must be of type string')
    assert validation_error(csr("rt", size=(2, "4B"))) == (
        'spec.modelSizeRange.min: Invalid value: "number": must be of type string')


# ---------------------------------------------------------------- the real catalog (api.md §9.5, §9.8 step 5)

from pathlib import Path  # noqa: E402

import yaml  # noqa: E402

from omerender.ome.load import index  # noqa: E402
from omerender.yamlio.reading import Doc, read_paths  # noqa: E402

OME = Path(__file__).resolve().parent / "data" / "ome"   # OME's catalog, vendored (PROVENANCE.md there)


def catalog_runtime_docs() -> list[Doc]:
    """Every catalog runtime, one file per duplicated name (the first in path order)."""
    files = sorted(str(p) for p in (OME / "runtimes").rglob("*.yaml") if p.name != "kustomization.yaml")
    seen, kept = set(), []
    for doc in read_paths(files):
        if doc.data["metadata"]["name"] not in seen:
            seen.add(doc.data["metadata"]["name"])
            kept.append(doc)
    return kept


RUNTIME_DOCS = catalog_runtime_docs()


def catalog_model(name: str, runtime_name: str, size: str) -> dict:
    """A catalog model completed from its runtime's first autoSelect entry (else its first entry), §9.5."""
    path = next(p for p in (OME / "models").rglob("*.yaml")
                if p.name != "kustomization.yaml" and yaml.safe_load(p.read_text())["metadata"]["name"] == name)
    data = yaml.safe_load(path.read_text())
    runtime = next(d.data for d in RUNTIME_DOCS if d.data["metadata"]["name"] == runtime_name)
    entries = runtime["spec"]["supportedModelFormats"]
    source = next((e for e in entries if e.get("autoSelect") is True), entries[0])
    for key in ("modelFormat", "modelFramework"):
        data["spec"][key] = {k: v for k, v in source[key].items() if k in ("name", "version")}
    for key in ("modelArchitecture", "quantization"):
        if key in source:
            data["spec"][key] = source[key]
    data["spec"]["modelParameterSize"] = size
    return data


def catalog_run(model: dict, reverse: bool = False):
    docs = RUNTIME_DOCS[::-1] if reverse else RUNTIME_DOCS
    extra = [Doc(model, "model.yaml", 0), Doc(isvc("svc", model=model["metadata"]["name"]), "isvc.yaml", 1)]
    inputs = index(list(docs) + extra)
    report = Report()
    return inputs, report, (lambda: resolve(inputs.isvcs[0], inputs, report))


def test_catalog_runtimes_pass_the_runtime_checks():
    inputs = index(RUNTIME_DOCS)
    assert len(inputs.cluster_runtimes) == 203
    for runtime in inputs.cluster_runtimes.values():
        validate_runtime(runtime)


def test_catalog_selects_the_only_fitting_runtime():
    model = catalog_model(L3, "vllm-llama-3-2-3b-instruct", "3.21B")
    for reverse in (False, True):
        inputs, report, go = catalog_run(model, reverse)
        res = go()
        assert res.runtime.name == "vllm-llama-3-2-3b-instruct" and res.auto_selected
        assert texts(report) == ["Runtime vllm-llama-3-2-3b-instruct will be auto-selected for model "
                                 "llama-3-2-3b-instruct"]
        compatible = [v.runtime.name for v in evaluate(inputs, NS, inputs.cluster_models[L3]).verdicts if v.compatible]
        # srt-llama-3-2-3b-instruct matches too, but is autoSelect: false
        assert compatible == ["vllm-llama-3-2-3b-instruct"]


def test_catalog_family_without_range_wins_the_tie():
    model = catalog_model("qwen2-5-14b-instruct", "srt-qwen2-5-14b-instruct", "14.7B")
    for reverse in (False, True):
        inputs, report, go = catalog_run(model, reverse)
        assert go().runtime.name == "srt-deepseek-r1-distill-qwen-14b"
        result = evaluate(inputs, NS, inputs.cluster_models["qwen2-5-14b-instruct"])
        assert [(v.runtime.name, v.score, v.distance) for v in result.verdicts if v.compatible] == [
            ("srt-deepseek-r1-distill-qwen-14b", 2, 0), ("srt-deepseek-r1-distill-qwen-32b", 2, 0),
            ("srt-qwen2-5-14b-instruct", 2, Decimal("4E9"))]
        assert result.tie_break == ("name order: srt-deepseek-r1-distill-qwen-14b before "
                                    "srt-deepseek-r1-distill-qwen-32b (Cluster)")


def test_catalog_model_whose_runtimes_are_not_auto_selectable():
    model = catalog_model("llama-3-1-8b-instruct", "vllm-llama-3-1-8b-instruct", "8.03B")
    texts_seen = []
    for reverse in (False, True):
        _, _, go = catalog_run(model, reverse)
        with pytest.raises(OmeError) as caught:
            go()
        texts_seen.append(caught.value.text)
    text = texts_seen[0]
    assert texts_seen[1] == text
    assert text.startswith(
        "no supporting runtime found for model llama-3-1-8b-instruct and engine does not have complete runner "
        "configuration: no runtime found to support model safetensors with format safetensors in namespace "
        "llama-demo. Checked 203 runtimes (0 namespace-scoped, 203 cluster-scoped). Nearest of 200 excluded "
        "runtimes: ")
    assert text.endswith(". Run `omerender explain --isvc svc -n llama-demo` for every runtime and its reason")
    assert len(text) < 1500
    listed, not_auto = text.split(" excluded runtimes: ", 1)[1].split(". Supporting the model but not "
                                                                     "auto-selectable: ")
    # nearest first: runtimes that match the format but not the size (smallest gap first), then one mismatch
    assert listed.startswith("srt-smollm2-1-7b-instruct (model size 8.03B is outside supported range [1B, 2B]); "
                             "srt-llama-3-1-70b-instruct (model size 8.03B is outside supported range [60B, 75B]); "
                             "srt-deepseek-coder-7b-instruct-v1-5 (model format ")
    assert listed.count("; ") == 2 and "architecture mismatch" not in listed
    # the three matching runtimes fail only check 6, the nearest of all: named with their autoSelect
    assert not_auto.split(". Run `omerender")[0] == (
        "srt-hermes-2-pro-llama-3-8b (autoSelect: false); srt-llama-3-1-8b-instruct (autoSelect: false); "
        "vllm-llama-3-1-8b-instruct (autoSelect: false): set autoSelect: true on the matching supportedModelFormats "
        "entry, or name the runtime in spec.runtime.name")


# ---------------------------------------------------------------- scale: not quadratic

def test_ten_thousand_isvcs_over_two_thousand_runtimes_is_fast():
    import time
    # four runtimes per architecture, ranges [1B, 20B], [1B, 40B], [1B, 60B], [1B, 80B]
    runtimes = [csr(f"rt-{i:04d}", entries=[entry(arch=f"Arch{i % 500}", auto=True)],
                    size=("1B", f"{(i // 500) * 20 + 20}B")) for i in range(2000)]
    models = [cbm(f"m-{i}", arch=f"Arch{i % 500}", size=f"{i % 40 + 1}B") for i in range(500)]
    models.append(cbm("orphan", arch="Nowhere"))
    services = [isvc(f"s-{i}", model=f"m-{i % 500}") for i in range(9900)]
    services += [isvc(f"orphan-{i}", model="orphan") for i in range(100)]
    inputs = index([Doc(o, "big.yaml", n) for n, o in enumerate(runtimes + models + services)])
    start = time.perf_counter()
    chosen, failures = [], 0
    for service in inputs.isvcs:
        try:
            chosen.append(resolve(service, inputs, Report()).runtime.name)
        except OmeError as err:
            failures += 1
            assert err.text.endswith("rt-0002 (model format 'mt:safetensors:1.0.0:Nowhere:transformers:4.45.0.dev0' "
                                     "not in supported formats: architecture mismatch (model=Nowhere, "
                                     "runtime=Arch2)). Run `omerender explain --isvc orphan-0 -n llama-demo` "
                                     "for every runtime and its reason".replace("orphan-0", service.name))
    elapsed = time.perf_counter() - start
    # m-7 (Arch7, 8B) fits rt-0007, rt-0507, rt-1007, rt-1507; the narrowest range wins
    # m-25 (Arch25, 26B) does not fit [1B, 20B]: rt-0525 is next narrowest
    assert (chosen[7], chosen[25], failures) == ("rt-0007", "rt-0525", 100)
    assert elapsed < 10, elapsed


def test_x11_servingruntime_and_cluster_runtime_of_one_name_are_both_listed():
    assert auto_error(isvc(), cbm(L3), sr("same", disabled=True), csr("same", disabled=True)).endswith(
        "Checked 2 runtimes (1 namespace-scoped, 1 cluster-scoped). Excluded runtimes: same (runtime is disabled); "
        "same (runtime is disabled)")
