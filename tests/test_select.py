"""omerender.select: lookups, matching, versions, sizes, scoring, ranking (selection.md §8)."""
from __future__ import annotations

import copy
from decimal import Decimal

import pytest

from omerender.errors import OmeError, Report
from omerender.select import (entry_matches, evaluate, parse_size, request_of, resolve, validate_runtime,
                              versions_match)
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


def auto_error(*objects) -> str:
    return error_of(*objects)


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
    "runtime=4.36.0))")


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
    assert caught.value.text.endswith("rt (model size 3.21B is outside supported range [2B, 4b])")
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
