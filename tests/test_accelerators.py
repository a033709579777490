"""Accelerator classes (accelerators.md): choice, constraints, policies, and the effects on runners and pods."""
from __future__ import annotations

import copy

import pytest
import yaml

from omerender.errors import OmeError, Report
from omerender.ome.accelerators.choice import (ClassChoice, best_fit_score, choose_class, constraint_failure,
                                               most_capable_scores, validate_runtime_classes)
from omerender.ome.accelerators.effects import (TP_ALIASES, apply_args_overrides, apply_class_resources,
                                                apply_environment_override, class_affinity, class_config,
                                                class_node_selector, isvc_runner_sets_resources, merge_runtime_args,
                                                pod_node_selector, report_config_without_model, rewrite_parallel_flag,
                                                suppresses_parallelism)
from omerender.ome.load import Inputs, Obj

# ---------------------------------------------------------------- fixtures (accelerators.md §7)

H100 = """
apiVersion: ome.io/v1beta1
kind: AcceleratorClass
metadata: {name: nvidia-h100}
spec:
  vendor: nvidia
  family: hopper
  model: H100
  discovery:
    nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
  capabilities:
    memoryGB: 80Gi
    computeCapability: "9.0"
    memoryBandwidthGBps: "3350"
    features: [tensor-cores, fp8, nvlink]
    performance: {fp16Tflops: 989, int8Tops: 1979}
  resources:
    - {name: nvidia.com/gpu, quantity: "8"}
  cost: {perHour: "4.5", spotPerHour: "2.1", tier: high}
"""

L40S = """
apiVersion: ome.io/v1beta1
kind: AcceleratorClass
metadata: {name: nvidia-l40s}
spec:
  vendor: nvidia
  family: ada
  model: L40S
  discovery:
    nodeSelector: {nvidia.com/gpu.product: NVIDIA-L40S}
  capabilities:
    memoryGB: 48Gi
    computeCapability: "8.9"
    memoryBandwidthGBps: "864"
    features: [tensor-cores, fp8]
    performance: {fp16Tflops: 362, int8Tops: 733}
  resources:
    - {name: nvidia.com/gpu, quantity: "8"}
  cost: {perHour: "1.8", spotPerHour: "0.8", tier: medium}
"""

SA_H100 = """
apiVersion: ome.io/v1beta1
kind: AcceleratorClass
metadata: {name: nvidia-h100}
spec:
  discovery: {nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}}
  capabilities: {memoryGB: 80Gi, memoryBandwidthGBps: "3350", performance: {fp16Tflops: 989}}
  cost: {perHour: "10"}
"""

SA_H200 = """
apiVersion: ome.io/v1beta1
kind: AcceleratorClass
metadata: {name: nvidia-h200}
spec:
  discovery: {nodeSelector: {nvidia.com/gpu.product: NVIDIA-H200}}
  capabilities: {memoryGB: 141Gi, memoryBandwidthGBps: "4800", performance: {fp16Tflops: 989}}
  cost: {perHour: "12"}
"""

RT70 = """
apiVersion: ome.io/v1beta1
kind: ClusterServingRuntime
metadata: {name: sglang-llama-3-3-70b}
spec:
  supportedModelFormats:
    - modelFormat: {name: safetensors, version: "1.0.0"}
      modelFramework: {name: transformers, version: "4.47.0.dev0"}
      modelArchitecture: LlamaForCausalLM
      autoSelect: false
      priority: 1
      acceleratorConfig:
        nvidia-l40s:
          tensorParallelismOverride: {tensorParallelSize: 4, pipelineParallelSize: 2}
          runtimeArgsOverride: [--mem-frac=0.85]
  modelSizeRange: {min: 60B, max: 75B}
  acceleratorRequirements:
    acceleratorClasses: [nvidia-h100, nvidia-l40s]
  engineConfig:
    runner:
      name: ome-container
      image: docker.io/lmsysorg/sglang:v0.5.5.post3-cu129-amd64
      command: [python3, -m, sglang.launch_server]
      args:
        - --host=0.0.0.0
        - --port=8080
        - --model-path=$(MODEL_PATH)
        - --tp-size=8
        - --pp-size=1
        - --mem-frac=0.9
      resources:
        requests: {cpu: "16", memory: 320Gi, nvidia.com/gpu: "8"}
        limits: {cpu: "16", memory: 320Gi, nvidia.com/gpu: "8"}
"""

ISVC70 = """
apiVersion: ome.io/v1beta1
kind: InferenceService
metadata: {name: llama-3-3-70b-instruct, namespace: llama-demo}
spec:
  model: {name: llama-3-3-70b-instruct}
  runtime: {name: sglang-llama-3-3-70b}
  acceleratorSelector: {acceleratorClass: nvidia-l40s}
  engine: {minReplicas: 1, maxReplicas: 1}
"""

RT_REF = "ClusterServingRuntime/sglang-llama-3-3-70b"
SEED_ARGS_L40S = ["--host=0.0.0.0", "--port=8080", "--model-path=$(MODEL_PATH)", "--tp-size=4", "--pp-size=2",
                  "--mem-frac=0.85"]
SEED_ARGS_RUNTIME = ["--host=0.0.0.0", "--port=8080", "--model-path=$(MODEL_PATH)", "--tp-size=8", "--pp-size=1",
                     "--mem-frac=0.9"]
MODEL_KEY = {"models.ome.io/clusterbasemodel.llama-3-3-70b-instruct": "Ready"}


def obj(text: str) -> Obj:
    return Obj(yaml.safe_load(text), "test.yaml", 0)


def cls_obj(name: str, spec: dict) -> Obj:
    return Obj({"apiVersion": "ome.io/v1beta1", "kind": "AcceleratorClass", "metadata": {"name": name},
                "spec": spec}, "classes.yaml", 0)


def inputs_with(*classes: Obj) -> Inputs:
    return Inputs(classes={c.name: c for c in classes})


def isvc_obj(spec_changes: dict | None = None, drop: tuple[str, ...] = ()) -> Obj:
    data = yaml.safe_load(ISVC70)
    for key in drop:
        data["spec"].pop(key, None)
    data["spec"].update(spec_changes or {})
    return Obj(data, "isvc.yaml", 0)


def selector(**fields) -> dict:
    return {"acceleratorSelector": fields}


def rt70_spec() -> dict:
    return yaml.safe_load(RT70)["spec"]


def messages(report: Report) -> list[tuple[str, str]]:
    return [(m.severity, m.text) for m in report.messages]


def choose(isvc: Obj, inputs: Inputs | None = None, runtime_spec: dict | None = None, component: str = "engine",
           report: Report | None = None) -> tuple[ClassChoice, Report]:
    report = report if report is not None else Report()
    inputs = inputs if inputs is not None else inputs_with(obj(H100), obj(L40S))
    spec = runtime_spec if runtime_spec is not None else rt70_spec()
    return choose_class(component, isvc, spec, RT_REF, inputs, report), report


def chosen_name(isvc: Obj, **kwargs) -> str | None:
    choice, _ = choose(isvc, **kwargs)
    return choice.cls.name if choice.cls else None


def render_runner(choice: ClassChoice, runtime_spec: dict | None = None, runner: dict | None = None,
                  isvc_sets_resources: bool = False) -> tuple[dict, bool]:
    """The runner after §4.3 step 3 at this module's level, plus whether PARALLELISM_SIZE is suppressed."""
    spec = runtime_spec if runtime_spec is not None else rt70_spec()
    runner = runner if runner is not None else spec["engineConfig"]["runner"]
    config = class_config(spec["supportedModelFormats"][0], choice.cls)
    name = choice.cls.name if choice.cls else ""
    runner = apply_environment_override(runner, config, "engine", name, Report())
    runner = apply_class_resources(runner, choice.cls, isvc_sets_resources)
    runner = apply_args_overrides(runner, config)
    return runner, suppresses_parallelism(config)


def gpu(runner: dict) -> tuple[str, str]:
    return runner["resources"]["requests"]["nvidia.com/gpu"], runner["resources"]["limits"]["nvidia.com/gpu"]


# ---------------------------------------------------------------- the seed's 70B example (A1, A2, A3)

def test_a1_seed_example_l40s_rewrites_flags_and_sets_selector():
    choice, report = choose(isvc_obj())
    assert choice.cls.name == "nvidia-l40s"
    assert choice.where == "spec.acceleratorSelector.acceleratorClass"
    assert messages(report) == [("info", "engine: accelerator class nvidia-l40s from "
                                         "spec.acceleratorSelector.acceleratorClass")]
    runner, suppressed = render_runner(choice)
    assert runner["args"] == SEED_ARGS_L40S
    assert runner["command"] == ["python3", "-m", "sglang.launch_server"]
    assert runner["resources"] == {"requests": {"cpu": "16", "memory": "320Gi", "nvidia.com/gpu": "8"},
                                   "limits": {"cpu": "16", "memory": "320Gi", "nvidia.com/gpu": "8"}}
    assert suppressed is True  # no PARALLELISM_SIZE
    selector_ = pod_node_selector("engine", None, {}, MODEL_KEY, {}, choice.cls, {}, Report())
    assert selector_ == {**MODEL_KEY, "nvidia.com/gpu.product": "NVIDIA-L40S"}


def test_a2_h100_keeps_runtime_flags():
    choice, _ = choose(isvc_obj(selector(acceleratorClass="nvidia-h100")))
    assert choice.cls.name == "nvidia-h100"
    runner, suppressed = render_runner(choice)
    assert runner["args"] == SEED_ARGS_RUNTIME
    assert gpu(runner) == ("8", "8")
    assert suppressed is False  # PARALLELISM_SIZE=8 is set by the pod builder
    assert class_node_selector(choice.cls) == {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}


def test_a3_no_selector_no_class_no_message():
    choice, report = choose(isvc_obj(drop=("acceleratorSelector",)))
    assert choice == ClassChoice(None, "")
    assert messages(report) == []
    runner, suppressed = render_runner(choice)
    assert runner["args"] == SEED_ARGS_RUNTIME
    assert suppressed is False
    assert class_node_selector(None) == {}


# ---------------------------------------------------------------- policies (A4-A8, A15, A17)

def test_a4_cheapest_and_most_capable():
    choice, report = choose(isvc_obj(selector(policy="Cheapest")))
    assert choice.cls.name == "nvidia-l40s"
    assert choice.where == "policy Cheapest in spec.acceleratorSelector.policy"
    assert messages(report) == [("info", "engine: accelerator class nvidia-l40s from policy Cheapest in "
                                         "spec.acceleratorSelector.policy")]
    assert render_runner(choice)[0]["args"] == SEED_ARGS_L40S
    choice, _ = choose(isvc_obj(selector(policy="MostCapable")))
    assert choice.cls.name == "nvidia-h100"
    assert render_runner(choice)[0]["args"] == SEED_ARGS_RUNTIME


@pytest.mark.parametrize("constraints, expected", [
    ({"minMemory": 40}, "nvidia-l40s"),                                        # A5: 0.65 / 0.8833
    ({"minMemory": 48}, "nvidia-l40s"),                                        # A5: 0.72 / 1.0
    ({"minMemory": 24, "minComputePerformanceTFLOPS": 989, "preferredPrecisions": ["fp16"]}, "nvidia-h100"),  # A6
    ({"minMemory": 40, "minComputePerformanceTFLOPS": 500, "preferredPrecisions": ["int4", "fp16"]},
     "nvidia-l40s"),                                                           # A7
])
def test_a5_a6_a7_best_fit(constraints, expected):
    choice, report = choose(isvc_obj(selector(policy="BestFit", constraints=constraints)))
    assert choice.cls.name == expected
    assert [s for s, _ in messages(report)] == ["info"]


def test_best_fit_scores_match_the_spec():
    h100, l40s = obj(H100), obj(L40S)
    assert best_fit_score(h100, {"minMemory": 40}) == pytest.approx(0.65)
    assert best_fit_score(l40s, {"minMemory": 40}) == pytest.approx(0.8833, abs=1e-4)
    a6 = {"minMemory": 24, "minComputePerformanceTFLOPS": 989, "preferredPrecisions": ["fp16"]}
    assert best_fit_score(h100, a6) == pytest.approx(0.51)
    assert best_fit_score(l40s, a6) == pytest.approx(0.4598, abs=1e-4)
    a7 = {"minMemory": 40, "minComputePerformanceTFLOPS": 500, "preferredPrecisions": ["int4", "fp16"]}
    assert best_fit_score(h100, a7) == pytest.approx(0.5)
    assert best_fit_score(l40s, a7) == pytest.approx(0.6919, abs=1e-4)


def test_most_capable_scores_match_the_spec():
    assert most_capable_scores([obj(H100), obj(L40S)], []) == pytest.approx([1.0, 0.4506], abs=1e-4)
    assert most_capable_scores([obj(SA_H100), obj(SA_H200)], []) == pytest.approx([0.6931, 1.0], abs=1e-4)


def test_a8_best_fit_without_constraints_warns_and_takes_pool_order():
    choice, report = choose(isvc_obj(selector(policy="BestFit")))
    assert choice.cls.name == "nvidia-h100"
    assert messages(report) == [
        ("warning", "engine: BestFit has 2 candidate classes but spec.acceleratorSelector.constraints is not set; "
                    "OME does not reconcile this (known bug); omerender scored with empty constraints and chose "
                    "nvidia-h100"),
        ("info", "engine: accelerator class nvidia-h100 from policy BestFit in spec.acceleratorSelector.policy"),
    ]


def test_best_fit_with_empty_constraints_does_not_warn():
    choice, report = choose(isvc_obj(selector(policy="BestFit", constraints={})))
    assert choice.cls.name == "nvidia-h100"
    assert [s for s, _ in messages(report)] == ["info"]


def test_best_fit_single_candidate_without_constraints_does_not_warn():
    spec = rt70_spec()
    spec["acceleratorRequirements"]["acceleratorClasses"] = ["nvidia-l40s"]
    choice, report = choose(isvc_obj(selector(policy="BestFit")), runtime_spec=spec)
    assert choice.cls.name == "nvidia-l40s"
    assert [s for s, _ in messages(report)] == ["info"]


SA_POOL = {"acceleratorRequirements": {"acceleratorClasses": ["nvidia-h100", "nvidia-h200"]}}


@pytest.mark.parametrize("fields, expected", [
    ({"policy": "BestFit", "constraints": {"minMemory": 80}}, "nvidia-h100"),
    ({"policy": "Cheapest"}, "nvidia-h100"),
    ({"policy": "MostCapable"}, "nvidia-h200"),
    ({"policy": "FirstAvailable"}, "nvidia-h100"),
])
def test_a15_select_accelerators_page(fields, expected):
    assert chosen_name(isvc_obj(selector(**fields)), inputs=inputs_with(obj(SA_H100), obj(SA_H200)),
                       runtime_spec=SA_POOL) == expected


def test_a16_class_without_resources_keeps_runner_gpus():
    choice, _ = choose(isvc_obj(selector(policy="FirstAvailable")), inputs=inputs_with(obj(SA_H100), obj(SA_H200)),
                       runtime_spec=SA_POOL)
    runner = {"name": "ome-container", "resources": {"requests": {"nvidia.com/gpu": "4"},
                                                     "limits": {"nvidia.com/gpu": "4"}}}
    assert apply_class_resources(runner, choice.cls, False) == runner


def test_a17_prefill_decode_each_component_separately():
    isvc = isvc_obj({"acceleratorSelector": {"policy": "Cheapest"},
                     "decoder": {"acceleratorOverride": {"acceleratorClass": "nvidia-h200"}}, "router": {}})
    inputs = inputs_with(obj(SA_H100), obj(SA_H200))
    engine, _ = choose(isvc, inputs=inputs, runtime_spec=SA_POOL, component="engine")
    decoder, report = choose(isvc, inputs=inputs, runtime_spec=SA_POOL, component="decoder")
    assert engine.cls.name == "nvidia-h100"
    assert decoder.cls.name == "nvidia-h200"
    assert decoder.where == "spec.decoder.acceleratorOverride.acceleratorClass"
    assert messages(report) == [("info", "decoder: accelerator class nvidia-h200 from "
                                         "spec.decoder.acceleratorOverride.acceleratorClass")]


# Four classes where each policy picks a different one (pool order a, b, c, d).
POLICY_CLASSES = [
    cls_obj("a", {"capabilities": {"memoryGB": "80Gi", "memoryBandwidthGBps": "2000",
                                   "performance": {"fp16Tflops": 500}}, "cost": {"perHour": "5"}}),
    cls_obj("b", {"capabilities": {"memoryGB": "96Gi", "memoryBandwidthGBps": "1000",
                                   "performance": {"fp16Tflops": 300}}, "cost": {"perHour": "1"}}),
    cls_obj("c", {"capabilities": {"memoryGB": "192Gi", "memoryBandwidthGBps": "8000",
                                   "performance": {"fp16Tflops": 2000}}, "cost": {"perHour": "20"}}),
    cls_obj("d", {"capabilities": {"memoryGB": "40Gi", "memoryBandwidthGBps": "500",
                                   "performance": {"fp16Tflops": 200}}, "cost": {"perHour": "3"}}),
]


@pytest.mark.parametrize("policy, expected", [
    ("FirstAvailable", "a"), ("Cheapest", "b"), ("MostCapable", "c"), ("BestFit", "d")])
def test_each_policy_picks_a_different_class(policy, expected):
    isvc = isvc_obj(selector(policy=policy, constraints={"minMemory": 40}))
    spec = {"acceleratorRequirements": {"acceleratorClasses": ["a", "b", "c", "d"]}}
    assert chosen_name(isvc, inputs=inputs_with(*POLICY_CLASSES), runtime_spec=spec) == expected


@pytest.mark.parametrize("cost, expected", [
    ({"a": {"perMillionTokens": "0.01"}, "b": {"perHour": "100"}}, "b"),     # any hourly price beats tokens
    ({"a": {"perHour": "1", "spotPerHour": "5"}, "b": {"perHour": "2"}}, "b"),  # spot used when set
    ({"a": {"perMillionTokens": "3"}, "b": {"perMillionTokens": "2"}}, "b"),
    ({"a": {"tier": "HIGH"}, "b": {"tier": "other"}}, "b"),                   # unknown tier counts as medium
    ({"a": {"tier": "low"}, "b": {"tier": "medium"}}, "a"),
    ({"a": {"perHour": "1.50"}, "b": {"perHour": "1.5"}}, "a"),               # tie: earlier stays
    ({"a": {"perHour": "1500m"}, "b": {"perHour": "1.4"}}, "b"),              # exact decimal quantities
    ({"a": {}, "b": {"tier": "high"}}, "b"),                                  # empty cost is no cost
    ({"a": {"perHour": 0}, "b": {"perHour": "1"}}, "a"),                      # a zero price is a price
])
def test_cheapest_groups(cost, expected):
    classes = [cls_obj(name, {"cost": value}) for name, value in cost.items()]
    spec = {"acceleratorRequirements": {"acceleratorClasses": ["a", "b"]}}
    assert chosen_name(isvc_obj(selector(policy="Cheapest")), inputs=inputs_with(*classes),
                       runtime_spec=spec) == expected


# ---------------------------------------------------------------- constraints (A9-A14, §2.4)

def test_a9_exclusion_filters_a_policy_but_not_a_name():
    excluded = {"excludedClasses": ["nvidia-h100"]}
    assert chosen_name(isvc_obj(selector(policy="FirstAvailable", constraints=excluded))) == "nvidia-l40s"
    assert chosen_name(isvc_obj(selector(acceleratorClass="nvidia-h100", constraints=excluded))) == "nvidia-h100"


def test_a10_required_features_ignore_case():
    assert chosen_name(isvc_obj(selector(policy="Cheapest", constraints={"requiredFeatures": ["NVLink"]}))) \
        == "nvidia-h100"


def test_a11_min_architecture_version_is_a_string_comparison():
    assert chosen_name(isvc_obj(selector(policy="Cheapest", constraints={"minArchitectureVersion": "9.0"}))) \
        == "nvidia-h100"
    blackwell = cls_obj("b200", {"capabilities": {"computeCapability": "10.0"}})
    assert constraint_failure(blackwell, {"minArchitectureVersion": "9.0"}) == "compute capability 10.0 < required 9.0"


@pytest.mark.parametrize("families, expected", [
    (["Ada"], "nvidia-l40s"), (["nvidia-hopper"], "nvidia-h100"), (["hopper-nvidia"], None)])
def test_a12_architecture_families(families, expected):
    choice, report = choose(isvc_obj(selector(policy="FirstAvailable",
                                              constraints={"architectureFamilies": families})))
    assert (choice.cls.name if choice.cls else None) == expected
    if expected is None:
        assert messages(report) == [("info", "engine: no accelerator class: policy FirstAvailable found no eligible "
                                             "class (nvidia-h100: architecture family hopper not in allowed list; "
                                             "nvidia-l40s: architecture family ada not in allowed list)")]


def test_a13_max_memory_filters_before_scoring():
    assert constraint_failure(obj(H100), {"maxMemory": 64}) == "memory 80GB > max allowed 64GB"
    assert chosen_name(isvc_obj(selector(policy="MostCapable", constraints={"maxMemory": 64}))) == "nvidia-l40s"


@pytest.mark.parametrize("memory, reason", [
    ("80G", "memory 74GB < required 80GB"), ("80", "memory 0GB < required 80GB")])
def test_a14_memory_units(memory, reason):
    cls = cls_obj("odd", {"capabilities": {"memoryGB": memory}})
    choice, report = choose(isvc_obj(selector(policy="FirstAvailable", constraints={"minMemory": 80})),
                            inputs=inputs_with(cls),
                            runtime_spec={"acceleratorRequirements": {"acceleratorClasses": ["odd"]}})
    assert choice.cls is None
    assert messages(report) == [("info", f"engine: no accelerator class: policy FirstAvailable found no eligible "
                                         f"class (odd: {reason})")]


CONSTRAINT_CASES = [  # (constraints, passes for H100, reason when H100 fails)
    ({"excludedClasses": ["nvidia-l40s"]}, ""),
    ({"excludedClasses": ["nvidia-h100"]}, "explicitly excluded"),
    ({"excludedClasses": ["NVIDIA-H100"]}, ""),
    ({"architectureFamilies": ["HOPPER"]}, ""),
    ({"architectureFamilies": ["ada", "Nvidia-Hopper"]}, ""),
    ({"architectureFamilies": ["ada"]}, "architecture family hopper not in allowed list"),
    ({"architectureFamilies": []}, ""),
    ({"minMemory": 80}, ""),
    ({"minMemory": 81}, "memory 80GB < required 81GB"),
    ({"maxMemory": 80}, ""),
    ({"maxMemory": 79}, "memory 80GB > max allowed 79GB"),
    ({"minMemory": 0, "maxMemory": 100}, ""),
    ({"requiredFeatures": ["FP8", "nvlink"]}, ""),
    ({"requiredFeatures": ["fp8", "sparsity"]}, "missing required feature: sparsity"),
    ({"minArchitectureVersion": "9.0"}, ""),
    ({"minArchitectureVersion": "9.1"}, "compute capability 9.0 < required 9.1"),
    ({"minComputePerformanceTFLOPS": 5000, "preferredPrecisions": ["fp4"]}, ""),
    ({"excludedClasses": ["nvidia-h100"], "minMemory": 200}, "explicitly excluded"),  # first failure wins
]


@pytest.mark.parametrize("constraints, reason", CONSTRAINT_CASES)
def test_constraint_each_side(constraints, reason):
    assert constraint_failure(obj(H100), constraints) == reason


def test_constraints_on_a_class_without_figures():
    bare = cls_obj("bare", {"discovery": {}, "capabilities": {}})
    assert constraint_failure(bare, {"maxMemory": 10}) == "missing memory specification for memory check"
    assert constraint_failure(bare, {"minArchitectureVersion": "8.0"}) == \
        "missing compute capability for architecture version check"
    assert constraint_failure(bare, {"architectureFamilies": ["x"]}) == "architecture family  not in allowed list"


# ---------------------------------------------------------------- precedence (A18, A19)

def test_a18_a_name_beats_a_policy():
    isvc = isvc_obj({"acceleratorSelector": {"acceleratorClass": "nvidia-h100"},
                     "decoder": {"acceleratorOverride": {"policy": "MostCapable"}}})
    decoder, report = choose(isvc, component="decoder")
    assert decoder.cls.name == "nvidia-h100"
    assert decoder.where == "spec.acceleratorSelector.acceleratorClass"
    isvc = isvc_obj({"acceleratorSelector": {"acceleratorClass": "nvidia-h100"},
                     "engine": {"acceleratorOverride": {"acceleratorClass": "nvidia-l40s"}}, "decoder": {}})
    assert chosen_name(isvc, component="engine") == "nvidia-l40s"
    assert chosen_name(isvc, component="decoder") == "nvidia-h100"


def test_override_policy_beats_isvc_policy_and_empty_strings_are_unset():
    isvc = isvc_obj({"acceleratorSelector": {"acceleratorClass": "", "policy": "MostCapable"},
                     "engine": {"acceleratorOverride": {"acceleratorClass": "", "policy": "Cheapest"}}})
    choice, _ = choose(isvc)
    assert (choice.cls.name, choice.where) == ("nvidia-l40s",
                                               "policy Cheapest in spec.engine.acceleratorOverride.policy")
    assert chosen_name(isvc, component="decoder") == "nvidia-h100"


def test_a19_override_constraints_are_ignored():
    isvc = isvc_obj({"engine": {"acceleratorOverride": {"policy": "BestFit", "constraints": {"minMemory": 80}}}},
                    drop=("acceleratorSelector",))
    choice, report = choose(isvc)
    assert choice.cls.name == "nvidia-h100"
    assert messages(report) == [
        ("warning", "spec.engine.acceleratorOverride.constraints has no effect; constraints are read only from "
                    "spec.acceleratorSelector.constraints"),
        ("warning", "engine: BestFit has 2 candidate classes but spec.acceleratorSelector.constraints is not set; "
                    "OME does not reconcile this (known bug); omerender scored with empty constraints and chose "
                    "nvidia-h100"),
        ("info", "engine: accelerator class nvidia-h100 from policy BestFit in spec.engine.acceleratorOverride.policy"),
    ]


@pytest.mark.parametrize("changes, path", [
    ({"acceleratorSelector": {"policy": "Fastest"}}, "spec.acceleratorSelector.policy"),
    ({"engine": {"acceleratorOverride": {"policy": "bestfit"}}}, "spec.engine.acceleratorOverride.policy"),
])
def test_e_a3_policy_outside_the_enum(changes, path):
    with pytest.raises(OmeError) as err:
        choose(isvc_obj(changes))
    value = "Fastest" if "Fastest" in str(changes) else "bestfit"
    assert err.value.text == (f'{path}: Unsupported value: "{value}": supported values: "BestFit", "Cheapest", '
                              '"MostCapable", "FirstAvailable"')
    assert err.value.field == path


# ---------------------------------------------------------------- pools and missing classes (A20-A25)

def test_a20_runtime_without_pool_drops_a_named_class_with_a_warning_naming_it():
    spec = rt70_spec()
    del spec["acceleratorRequirements"]
    choice, report = choose(isvc_obj(selector(acceleratorClass="nvidia-h100")), runtime_spec=spec)
    assert choice.cls is None
    assert messages(report) == [("warning", "engine: accelerator class nvidia-h100 from "
                                            "spec.acceleratorSelector.acceleratorClass is not applied: runtime "
                                            "ClusterServingRuntime/sglang-llama-3-3-70b lists no "
                                            "acceleratorRequirements.acceleratorClasses, and OME applies a class only "
                                            "from that list (no node selector, no resources of the class); list "
                                            "nvidia-h100 there")]
    assert report.messages[0].field == "spec.acceleratorSelector.acceleratorClass"
    assert render_runner(choice, spec)[0]["args"] == SEED_ARGS_RUNTIME


def test_a20_runtime_without_pool_and_a_policy_gives_i_a1():
    spec = rt70_spec()
    del spec["acceleratorRequirements"]
    choice, report = choose(isvc_obj(selector(policy="Cheapest")), runtime_spec=spec)
    assert choice.cls is None
    assert messages(report) == [("info", "engine: no accelerator class: runtime "
                                         "ClusterServingRuntime/sglang-llama-3-3-70b lists no "
                                         "acceleratorRequirements.acceleratorClasses")]


def test_empty_pool_beats_even_a_missing_named_class():
    spec = {"acceleratorRequirements": {"acceleratorClasses": []}}
    choice, report = choose(isvc_obj({"engine": {"acceleratorOverride": {"acceleratorClass": "nvidia-a100"}}}),
                            runtime_spec=spec, inputs=inputs_with())
    assert choice.cls is None
    assert [(s, t.split(" is not applied")[0]) for s, t in messages(report)] == [
        ("warning", "engine: accelerator class nvidia-a100 from spec.engine.acceleratorOverride.acceleratorClass")]


def test_a21_named_class_outside_the_pool_is_applied():
    spec = {"acceleratorRequirements": {"acceleratorClasses": ["nvidia-h200"]}}
    choice, _ = choose(isvc_obj(selector(acceleratorClass="nvidia-h100")), runtime_spec=spec,
                       inputs=inputs_with(obj(H100), obj(SA_H200)))
    assert choice.cls.name == "nvidia-h100"


def test_a22_named_class_not_in_the_input_is_e_a1():
    spec = {"acceleratorRequirements": {"acceleratorClasses": ["nvidia-h100"]}}
    with pytest.raises(OmeError) as err:
        choose(isvc_obj(), runtime_spec=spec, inputs=inputs_with(obj(H100)))
    assert err.value.text == ("Failed to get accelerator class for engine: accelerator class nvidia-l40s not found "
                              'at cluster scope; did you mean "nvidia-h100"?')


def runtime_obj(spec: dict, disabled: bool = False, name: str = "rt") -> Obj:
    spec = dict(spec, disabled=True) if disabled else spec
    return Obj({"apiVersion": "ome.io/v1beta1", "kind": "ClusterServingRuntime", "metadata": {"name": name},
                "spec": spec}, "rt.yaml", 0)


def test_a23_enabled_runtime_with_missing_class_is_e_a2():
    spec = {"acceleratorRequirements": {"acceleratorClasses": ["nvidia-h100", "nvidia-h200", "nvidia-a100",
                                                               "nvidia-h200"]}}
    with pytest.raises(OmeError) as err:
        validate_runtime_classes(runtime_obj(spec), spec, inputs_with(obj(H100)), Report())
    assert err.value.text == "unknown accelerator classes referenced in AcceleratorRequirements: " \
                             "[nvidia-h200 nvidia-a100]"
    report = Report()
    validate_runtime_classes(runtime_obj(spec, disabled=True), spec, inputs_with(obj(H100)), report)
    assert messages(report) == []


def test_a24_inherited_pool_with_missing_class():
    child = runtime_obj({}, name="child")
    merged = {"acceleratorRequirements": {"acceleratorClasses": ["nvidia-h100", "nvidia-l40s"]}}
    inputs = inputs_with(obj(L40S))
    report = Report()
    validate_runtime_classes(child, merged, inputs, report, pool_inherited_from="ClusterServingRuntime/profile")
    assert messages(report) == [("warning", 'accelerator class "nvidia-h100" inherited from '
                                            'ClusterServingRuntime/profile in acceleratorRequirements.'
                                            'acceleratorClasses is not in the input')]
    isvc = isvc_obj(selector(policy="FirstAvailable"))
    report = Report()
    choice = choose_class("engine", isvc, merged, "ClusterServingRuntime/child", inputs, report)
    assert choice.cls.name == "nvidia-l40s"
    assert messages(report) == [
        ("info", "engine: accelerator class nvidia-h100 listed by runtime ClusterServingRuntime/child is not in the "
                 "input; policy FirstAvailable skips it"),
        ("info", "engine: accelerator class nvidia-l40s from policy FirstAvailable in "
                 "spec.acceleratorSelector.policy"),
    ]


def test_a25_cheapest_ignores_classes_without_cost():
    h100, l40s = yaml.safe_load(H100), yaml.safe_load(L40S)
    del h100["spec"]["cost"], l40s["spec"]["cost"]
    inputs = inputs_with(Obj(h100, "c.yaml", 0), Obj(l40s, "c.yaml", 1))
    choice, report = choose(isvc_obj(selector(policy="Cheapest")), inputs=inputs)
    assert choice.cls is None
    assert messages(report) == [("info", "engine: no accelerator class: policy Cheapest found no eligible class "
                                         "(nvidia-h100: no cost; nvidia-l40s: no cost)")]
    choice, report = choose(isvc_obj(selector(policy="Cheapest", constraints={"requiredFeatures": ["nvlink"]})),
                            inputs=inputs)
    assert choice.cls is None  # the docs: a lone candidate without cost is not chosen
    assert messages(report) == [("info", "engine: no accelerator class: policy Cheapest found no eligible class "
                                         "(nvidia-h100: no cost; nvidia-l40s: missing required feature: nvlink)")]


def test_missing_pool_class_with_nothing_left():
    choice, report = choose(isvc_obj(selector(policy="MostCapable")), inputs=inputs_with())
    assert choice.cls is None
    assert messages(report)[-1] == ("info", "engine: no accelerator class: policy MostCapable found no eligible "
                                            "class (nvidia-h100: not in the input; nvidia-l40s: not in the input)")
    assert len(messages(report)) == 3


def test_repeated_pool_name_counts_once():
    spec = {"acceleratorRequirements": {"acceleratorClasses": ["nvidia-l40s", "nvidia-h100", "nvidia-l40s"]}}
    choice, report = choose(isvc_obj(selector(policy="BestFit")), runtime_spec=spec)
    assert choice.cls.name == "nvidia-l40s"
    assert "has 2 candidate classes" in messages(report)[0][1]


# ---------------------------------------------------------------- resources (A26, A27)

RUNNER_4 = {"name": "ome-container", "resources": {"requests": {"cpu": "4", "nvidia.com/gpu": "4"},
                                                   "limits": {"cpu": "4", "nvidia.com/gpu": "4"}}}


def test_a26_class_resources_replace_the_runtime_count():
    cls = cls_obj("g", {"resources": [{"name": "nvidia.com/gpu", "quantity": "8"}]})
    runner = apply_class_resources(RUNNER_4, cls, False)
    assert runner["resources"] == {"requests": {"cpu": "4", "nvidia.com/gpu": "8"},
                                   "limits": {"cpu": "4", "nvidia.com/gpu": "8"}}
    cls = cls_obj("g", {"resources": [{"name": "nvidia.com/gpu"}, {"name": "amd.com/gpu", "quantity": 2}]})
    runner = apply_class_resources(RUNNER_4, cls, False)
    assert runner["resources"] == {"requests": {"cpu": "4", "nvidia.com/gpu": "1", "amd.com/gpu": "2"},
                                   "limits": {"cpu": "4", "nvidia.com/gpu": "1", "amd.com/gpu": "2"}}
    assert RUNNER_4["resources"]["limits"]["nvidia.com/gpu"] == "4"


def test_a27_isvc_resources_win():
    cls = cls_obj("g", {"resources": [{"name": "nvidia.com/gpu", "quantity": "8"}]})
    assert apply_class_resources(RUNNER_4, cls, True) == RUNNER_4


@pytest.mark.parametrize("isvc_component, role, sets", [
    ({}, None, False),
    ({"runner": {"resources": {"limits": {"nvidia.com/gpu": "2"}, "requests": {"nvidia.com/gpu": "2"}}}}, None, True),
    ({"runner": {"resources": {"requests": {"cpu": "1"}}}}, "worker", True),   # the component runner counts too
    ({"runner": {"resources": {"claims": [{"name": "gpu"}]}}}, None, True),
    ({"runner": {"resources": {}}, "leader": {"runner": {"name": "l"}}}, "leader", False),
    ({"worker": {"runner": {"name": "w", "resources": {"limits": {"cpu": "1"}}}}}, "worker", True),
    ({"worker": {"runner": {"name": "w", "resources": {"limits": {"cpu": "1"}}}}}, "leader", False),
    ({"worker": {"runner": {"name": "w", "resources": {"limits": {"cpu": "1"}}}}}, None, False),
])
def test_isvc_runner_sets_resources(isvc_component, role, sets):
    assert isvc_runner_sets_resources(isvc_component, role) is sets


def test_class_resources_on_a_runner_without_resources():
    cls = cls_obj("g", {"resources": [{"name": "nvidia.com/gpu", "quantity": "2"}]})
    assert apply_class_resources({"name": "r"}, cls, False) == {
        "name": "r", "resources": {"limits": {"nvidia.com/gpu": "2"}, "requests": {"nvidia.com/gpu": "2"}}}
    assert apply_class_resources({"name": "r"}, None, False) == {"name": "r"}


# ---------------------------------------------------------------- node selector and affinity (A28-A30)

def test_a28_node_selector_layers():
    cls = cls_obj("c", {"discovery": {"nodeSelector": {"c": "cls", "d": "cls"}}})
    merged = {"a": "rt", "b": "rt", "d": "isvc"}  # runtime engineConfig merged with the ISVC's (ISVC wins)
    result = pod_node_selector("engine", None, merged, {"m": "Ready"}, {"b": "top", "c": "top"}, cls,
                               {"nodeSelector": {"d": "isvc"}}, Report())
    assert result == {"a": "rt", "b": "top", "d": "isvc", "m": "Ready", "c": "cls"}


def test_model_ready_key_is_added_only_when_absent():
    result = pod_node_selector("engine", None, {"m": "mine"}, {"m": "Ready"}, {}, None, {}, Report())
    assert result == {"m": "mine"}


def test_a29_class_overwrites_worker_selector_with_w_a7():
    report = Report()
    isvc_engine = {"worker": {"nodeSelector": {"nvidia.com/gpu.product": "X", "zone": "a"}}}
    result = pod_node_selector("engine", "worker", {"nvidia.com/gpu.product": "X", "zone": "a"}, MODEL_KEY, {},
                               obj(L40S), isvc_engine, report)
    assert result == {"nvidia.com/gpu.product": "NVIDIA-L40S", "zone": "a", **MODEL_KEY}
    assert messages(report) == [("warning", "engine worker pods: accelerator class nvidia-l40s sets nodeSelector "
                                            "nvidia.com/gpu.product=NVIDIA-L40S over X from "
                                            "spec.engine.worker.nodeSelector")]
    report = Report()
    leader = pod_node_selector("engine", "leader", {}, MODEL_KEY, {}, obj(L40S), isvc_engine, report)
    assert leader == {**MODEL_KEY, "nvidia.com/gpu.product": "NVIDIA-L40S"}
    assert messages(report) == []


def test_component_selector_restores_a_key_without_w_a7():
    report = Report()
    isvc_engine = {"nodeSelector": {"nvidia.com/gpu.product": "Y"},
                   "worker": {"nodeSelector": {"nvidia.com/gpu.product": "X"}}}
    result = pod_node_selector("engine", "worker", {"nvidia.com/gpu.product": "X"}, {}, {}, obj(L40S),
                               isvc_engine, report)
    assert result == {"nvidia.com/gpu.product": "Y"}
    assert messages(report) == []


N = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
    {"matchExpressions": [{"key": "gpu", "operator": "In", "values": ["n"]}]}]}}
R = {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference": {"matchExpressions": [
    {"key": "zone", "operator": "In", "values": ["r"]}]}}]}
P = {"requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "p"}]}
Q = {"requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "q"}]}
AFFINITY_CLASS = cls_obj("aff", {"discovery": {"affinity": {"nodeAffinity": N, "podAntiAffinity": Q}}})


def test_a30_class_node_affinity():
    pod = {"containers": [], "affinity": {"podAntiAffinity": P}}
    assert class_affinity(pod, AFFINITY_CLASS, {}) == {"containers": [],
                                                       "affinity": {"nodeAffinity": N, "podAntiAffinity": P}}
    assert pod == {"containers": [], "affinity": {"podAntiAffinity": P}}
    with_r = {"affinity": {"nodeAffinity": R, "podAntiAffinity": P}}
    assert class_affinity(with_r, AFFINITY_CLASS, {}) == with_r
    isvc_set = {"affinity": {"podAffinity": P}}
    assert class_affinity({"affinity": {"podAffinity": P}}, AFFINITY_CLASS, {"affinity": {"podAffinity": P}}) == \
        isvc_set
    assert class_affinity({}, AFFINITY_CLASS, {}) == {"affinity": {"nodeAffinity": N}}
    assert class_affinity({}, obj(H100), {}) == {}
    assert class_affinity({}, None, {}) == {}


# ---------------------------------------------------------------- environmentOverride (A31, A38, W-A5)

def test_a31_environment_override_order():
    runner = {"name": "ome-container", "env": [{"name": "A", "value": "2"}, {"name": "B", "value": "3"},
                                               {"name": "MODEL_PATH", "value": "/p"}]}
    config = {"environmentOverride": {"D": "8", "A": "9", "C": "7"}}
    report = Report()
    result = apply_environment_override(runner, config, "engine", "nvidia-l40s", report)
    assert result["env"] == [{"name": "A", "value": "9"}, {"name": "B", "value": "3"},
                             {"name": "MODEL_PATH", "value": "/p"}, {"name": "C", "value": "7"},
                             {"name": "D", "value": "8"}]
    assert runner["env"][0] == {"name": "A", "value": "2"}
    assert messages(report) == []


def test_w_a5_value_from_is_dropped():
    runner = {"name": "ome-container", "env": [{"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "s",
                                                                                              "key": "k"}}}]}
    report = Report()
    result = apply_environment_override(runner, {"environmentOverride": {"TOKEN": "x"}}, "decoder", "nvidia-h100",
                                         report)
    assert result["env"] == [{"name": "TOKEN", "value": "x"}]
    assert messages(report) == [("warning", "decoder runner ome-container: environmentOverride for class "
                                            "nvidia-h100 replaces TOKEN, which used valueFrom")]


def test_a38_environment_override_and_parallelism_suppression():
    runner = {"name": "ome-container"}
    config = {"environmentOverride": {"PARALLELISM_SIZE": "4"}}
    assert apply_environment_override(runner, config, "engine", "x", Report()) == {
        "name": "ome-container", "env": [{"name": "PARALLELISM_SIZE", "value": "4"}]}
    assert suppresses_parallelism(config) is False
    assert suppresses_parallelism({**config, "tensorParallelismOverride": {"tensorParallelSize": 8}}) is True


@pytest.mark.parametrize("config, suppressed", [
    (None, False), ({}, False), ({"tensorParallelismOverride": {}}, False),
    ({"tensorParallelismOverride": {"pipelineParallelSize": 2}}, True),
    ({"tensorParallelismOverride": {"dataParallelSize": 2}}, True),
    ({"runtimeArgsOverride": ["--x"]}, False)])
def test_suppresses_parallelism(config, suppressed):
    assert suppresses_parallelism(config) is suppressed


def test_environment_override_without_config_returns_the_runner():
    runner = {"name": "r", "env": [{"name": "A", "value": "1"}]}
    assert apply_environment_override(runner, None, "engine", "", Report()) == runner
    assert apply_environment_override(runner, {"environmentOverride": {}}, "engine", "", Report()) == runner


# ---------------------------------------------------------------- runtimeArgsOverride (A32-A34, §4.5)

ML = " \\\n"  # how multi-line args are joined


@pytest.mark.parametrize("args, override, expected", [
    # A32: both flag forms, replaced in place in the override's form, the rest appended
    (["--port=8080", "--tp-size", "8", "--trust-remote-code"], ["--tp-size=4", "--log-level", "debug"],
     ["--port=8080", "--tp-size=4", "--trust-remote-code", "--log-level", "debug"]),
    # --flag=value in args, --flag value in the override
    (["--mem-frac=0.9", "--port=8080"], ["--mem-frac", "0.8"], ["--mem-frac", "0.8", "--port=8080"]),
    # A33: a flag only in command goes into args
    (["--port=8080"], ["--mem-frac=0.85"], ["--port=8080", "--mem-frac=0.85"]),
    # A33: absent args become the override exactly as written
    ([], ["--served-model-name={{.Name}}", " --x "], ["--served-model-name={{.Name}}", " --x "]),
    # empty override leaves args as they are
    (["  --a ", "b"], [], ["  --a ", "b"]),
    # repeated flags in args collapse at the first position with the later content
    (["--a=1", "--b", "--a=2"], ["--c"], ["--a=2", "--b", "--c"]),
    # repeated flags in the override: the last wins
    (["--a=1"], ["--a=2", "--a=3"], ["--a=3"]),
    # aliases are not unified; keys are case-sensitive
    (["--tp-size", "8"], ["--tp=4", "--TP-SIZE=2"], ["--tp-size", "8", "--tp=4", "--TP-SIZE=2"]),
    # a value starting with - reads as a flag
    (["--offset", "-1"], ["--offset=2"], ["--offset=2", "-1"]),
    # positional words pair up; elements are trimmed
    (["python3", "app.py", " --x=1 "], ["--x=2"], ["python3", "app.py", "--x=2"]),
    # a boolean flag replaced by a valued one
    (["--trust-remote-code", "--port=1"], ["--trust-remote-code=false"], ["--trust-remote-code=false", "--port=1"]),
])
def test_runtime_args_override_list_form(args, override, expected):
    assert merge_runtime_args(args, override) == expected


@pytest.mark.parametrize("args, override, expected", [
    # A34 (the TP rewrite follows in test_a34_multiline_with_tp)
    (["python3 -m sglang.launch_server \\\n--host=0.0.0.0 \\\n--tp-size 4"], ["--mem-frac=0.8"],
     ["python3 -m sglang.launch_server" + ML + "--host=0.0.0.0" + ML + "--tp-size 4" + ML + "--mem-frac=0.8"]),
    # a whole line is one token: its key is its first word
    (["serve \\\n  --port 8080 \\\n  --mem-frac 0.9  \\\n"], ["--mem-frac", "0.85"],
     ["serve" + ML + "--port 8080" + ML + "--mem-frac" + ML + "0.85"]),
    # a flag sharing a line with another cannot be found, so the override is appended
    (["run \\\n--a=1 --b=2"], ["--b=3"], ["run" + ML + "--a=1 --b=2" + ML + "--b=3"]),
])
def test_runtime_args_override_multiline(args, override, expected):
    assert merge_runtime_args(args, override) == expected


# ---------------------------------------------------------------- tensorParallelismOverride (A35-A37, §4.6)

CMD = ["python3", "-m", "sglang.launch_server"]


@pytest.mark.parametrize("runner, size, expected", [
    # --flag=value and --flag value in args
    ({"args": ["--tp-size=8"]}, 4, {"args": ["--tp-size=4"]}),
    ({"args": ["--port=1", "--tp-size", "8", "--x"]}, 4, {"args": ["--port=1", "--tp-size", "4", "--x"]}),
    # every alias
    ({"args": ["--tp", "8"]}, 2, {"args": ["--tp", "2"]}),
    ({"args": ["--tensor-parallel-size=8"]}, 2, {"args": ["--tensor-parallel-size=2"]}),
    # absent flag: nothing added, anywhere
    ({"command": CMD, "args": ["--port=8080"]}, 8, {"command": CMD, "args": ["--port=8080"]}),
    ({"command": CMD}, 8, {"command": CMD}),
    ({}, 8, {}),
    # A35: command when args lack the flag; args first otherwise, command untouched
    ({"command": CMD + ["--tp-size", "1"], "args": ["--port=8080"]}, 8,
     {"command": CMD + ["--tp-size", "8"], "args": ["--port=8080"]}),
    ({"command": CMD + ["--tp-size", "1"], "args": ["--tensor-parallel-size", "4"]}, 8,
     {"command": CMD + ["--tp-size", "1"], "args": ["--tensor-parallel-size", "8"]}),
    ({"command": CMD + ["--tp=1"]}, 8, {"command": CMD + ["--tp=8"]}),
    # alias order: --tp-size is looked for first, even if --tp comes earlier
    ({"args": ["--tp", "1", "--tp-size", "2"]}, 8, {"args": ["--tp", "1", "--tp-size", "8"]}),
    # repeated flags: only the first hit changes
    ({"args": ["--tp-size=1", "--tp-size", "2"]}, 8, {"args": ["--tp-size=8", "--tp-size", "2"]}),
    # A37: whatever follows is replaced, even a variable
    ({"args": ["--tp-size", "$(PARALLELISM_SIZE)"]}, 8, {"args": ["--tp-size", "8"]}),
    # the flag as the last element has no value to replace; one element "--tp-size 4" is not recognized
    ({"args": ["--port=1", "--tp-size"]}, 8, {"args": ["--port=1", "--tp-size"]}),
    ({"args": ["--tp-size 4"]}, 8, {"args": ["--tp-size 4"]}),
    # a shell script in command is never rewritten
    ({"command": ["sh", "-c", "serve --tp-size 4"]}, 8, {"command": ["sh", "-c", "serve --tp-size 4"]}),
    # multi-line args: every match with digits becomes --flag=N
    ({"args": ["serve \\\n--tp-size 4 \\\n--tp-size=2"]}, 8, {"args": ["serve \\\n--tp-size=8 \\\n--tp-size=8"]}),
    ({"args": ["serve \\\n--tp  16"]}, 2, {"args": ["serve \\\n--tp=2"]}),
    # A37: a non-numeric value in multi-line form does not match, and command is tried next
    ({"command": CMD, "args": ["serve \\\n--tp-size $(PARALLELISM_SIZE)"]}, 8,
     {"command": CMD, "args": ["serve \\\n--tp-size $(PARALLELISM_SIZE)"]}),
    ({"command": ["serve", "--tp", "1"], "args": ["x \\\n--tp-size $(PARALLELISM_SIZE)"]}, 8,
     {"command": ["serve", "--tp", "8"], "args": ["x \\\n--tp-size $(PARALLELISM_SIZE)"]}),
])
def test_tensor_parallel_rewrite(runner, size, expected):
    before = copy.deepcopy(runner)
    assert rewrite_parallel_flag(runner, TP_ALIASES, size) == expected
    assert runner == before


def test_pipeline_parallel_aliases_and_both_overrides():
    config = {"tensorParallelismOverride": {"tensorParallelSize": 2, "pipelineParallelSize": 3}}
    runner = {"command": ["serve", "--pipeline-parallel-size", "1"], "args": ["--tp=1", "--pp=9"]}
    assert apply_args_overrides(runner, config) == {"command": ["serve", "--pipeline-parallel-size", "1"],
                                                    "args": ["--tp=2", "--pp=3"]}
    runner = {"command": ["serve", "--pipeline-parallel-size", "1"], "args": ["--tp=1"]}
    assert apply_args_overrides(runner, config) == {"command": ["serve", "--pipeline-parallel-size", "3"],
                                                    "args": ["--tp=2"]}
    runner = {"args": ["--pp-size", "1", "--pp", "4"]}
    assert apply_args_overrides(runner, {"tensorParallelismOverride": {"pipelineParallelSize": 2}}) == \
        {"args": ["--pp-size", "2", "--pp", "4"]}


def test_zero_sizes_rewrite_nothing():
    runner = {"args": ["--tp-size=8", "--pp-size=2"]}
    config = {"tensorParallelismOverride": {"tensorParallelSize": 0, "pipelineParallelSize": 0}}
    assert apply_args_overrides(runner, config) == runner


def test_a34_multiline_with_tp():
    runner = {"args": ["python3 -m sglang.launch_server \\\n--host=0.0.0.0 \\\n--tp-size 4"]}
    config = {"runtimeArgsOverride": ["--mem-frac=0.8"], "tensorParallelismOverride": {"tensorParallelSize": 8}}
    assert apply_args_overrides(runner, config) == {
        "args": ["python3 -m sglang.launch_server \\\n--host=0.0.0.0 \\\n--tp-size=8 \\\n--mem-frac=0.8"]}


def test_a36_tp_beats_the_args_override_and_never_adds():
    config = {"runtimeArgsOverride": ["--tp-size=2"], "tensorParallelismOverride": {"tensorParallelSize": 4}}
    assert apply_args_overrides({"args": ["--tp-size=8"]}, config) == {"args": ["--tp-size=4"]}
    config = {"tensorParallelismOverride": {"tensorParallelSize": 8}}
    assert apply_args_overrides({"args": ["--port=8080"]}, config) == {"args": ["--port=8080"]}
    assert suppresses_parallelism(config) is True


def test_a33_override_never_touches_command():
    runner = {"command": CMD + ["--mem-frac=0.9"], "args": ["--port=8080"]}
    assert apply_args_overrides(runner, {"runtimeArgsOverride": ["--mem-frac=0.85"]}) == {
        "command": CMD + ["--mem-frac=0.9"], "args": ["--port=8080", "--mem-frac=0.85"]}
    assert apply_args_overrides({"command": CMD}, {"runtimeArgsOverride": ["--served-model-name={{.Name}}"]}) == {
        "command": CMD, "args": ["--served-model-name={{.Name}}"]}
    assert apply_args_overrides({"command": CMD}, None) == {"command": CMD}


def test_apply_args_overrides_does_not_mutate():
    spec = rt70_spec()
    runner = spec["engineConfig"]["runner"]
    before = copy.deepcopy(runner)
    apply_args_overrides(runner, class_config(spec["supportedModelFormats"][0], obj(L40S)))
    assert runner == before


# ---------------------------------------------------------------- acceleratorConfig lookup (A39, A40, I-A4, I-A5)

def test_a39_config_comes_from_the_given_entry():
    e0 = {"autoSelect": False, "acceleratorConfig": {"nvidia-l40s": {"runtimeArgsOverride": ["--x"]}}}
    e1 = {"autoSelect": True}
    assert class_config(e1, obj(L40S)) is None
    assert class_config(e0, obj(L40S)) == {"runtimeArgsOverride": ["--x"]}
    assert class_config(e0, obj(H100)) is None
    assert class_config(None, obj(L40S)) is None
    assert class_config(e0, None) is None


def test_a40_misspelt_key_is_i_a4_and_not_applied():
    data = yaml.safe_load(RT70)
    config = data["spec"]["supportedModelFormats"][0]["acceleratorConfig"]
    config["nvidia-l40"] = config.pop("nvidia-l40s")
    rt = Obj(data, "rt.yaml", 0)
    report = Report()
    validate_runtime_classes(rt, rt.spec, inputs_with(obj(H100), obj(L40S)), report)
    assert messages(report) == [("warning", 'supportedModelFormats[0].acceleratorConfig key "nvidia-l40" names no class '
                                         'in acceleratorRequirements.acceleratorClasses')]
    choice, _ = choose(isvc_obj(), runtime_spec=rt.spec)
    assert choice.cls.name == "nvidia-l40s"
    runner, suppressed = render_runner(choice, rt.spec)
    assert runner["args"] == SEED_ARGS_RUNTIME
    assert gpu(runner) == ("8", "8")
    assert suppressed is False  # PARALLELISM_SIZE=8


def test_rt70_is_valid():
    rt = obj(RT70)
    report = Report()
    validate_runtime_classes(rt, rt.spec, inputs_with(obj(H100), obj(L40S)), report)
    assert messages(report) == []


def test_w_a8_runtime_accelerator_override():
    spec = {"engineConfig": {"acceleratorOverride": {"acceleratorClass": "x"}},
            "decoderConfig": {"acceleratorOverride": {"policy": "BestFit"}}}
    report = Report()
    validate_runtime_classes(runtime_obj(spec), spec, inputs_with(), report)
    assert messages(report) == [("warning", "spec.engineConfig.acceleratorOverride has no effect in a runtime"),
                                ("warning", "spec.decoderConfig.acceleratorOverride has no effect in a runtime")]


def test_i_a5_config_without_model():
    report = Report()
    report_config_without_model("engine", rt70_spec(), obj(L40S), report)
    report_config_without_model("engine", rt70_spec(), obj(H100), report)
    report_config_without_model("engine", rt70_spec(), None, report)
    assert messages(report) == [("info", "engine: acceleratorConfig for class nvidia-l40s not applied: the "
                                         "InferenceService has no spec.model")]


def test_inputs_are_not_mutated():
    isvc = isvc_obj(selector(policy="BestFit"))
    spec = rt70_spec()
    before = (copy.deepcopy(isvc.data), copy.deepcopy(spec))
    choose(isvc, runtime_spec=spec)
    assert (isvc.data, spec) == before


def test_invalid_quantity_names_the_class_field():
    bad = cls_obj("bad", {"capabilities": {"memoryGB": "lots"}})
    with pytest.raises(OmeError) as err:
        choose(isvc_obj(selector(policy="MostCapable")), inputs=inputs_with(bad, obj(H100)),
               runtime_spec={"acceleratorRequirements": {"acceleratorClasses": ["bad", "nvidia-h100"]}})
    assert err.value.text == 'spec.capabilities.memoryGB: Invalid value: "lots": must be a Kubernetes quantity'
    assert str(err.value.ref) == "AcceleratorClass bad"
