"""Replica bounds, autoscalers and PodDisruptionBudgets (render.md §9; api.md §8.9): §16 examples 38–43
and one test per rule and per message, through the CLI."""
import pytest

from conftest import CHART_DEFAULTS_INFO, render_objects
from omerender.errors import OmeError
from omerender.ome.workloads.autoscaling import removed_field_warnings, validate_runtime_autoscalers
from schemas import validate_all

ISVC = "InferenceService llama-demo/llama-3-2-3b-instruct"
COMP = "llama-3-2-3b-instruct-engine"
ROUTER = "llama-3-2-3b-instruct-router"
TRIGGERS = [{"type": "prometheus", "metricType": "AverageValue",
             "metadata": {"serverAddress": "http://ome-prometheus.ome.svc:9090", "query": "sum(q)", "threshold": "5"}}]
CPU_80 = [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]


def ok(F):
    run = render_objects(list(F.values()))
    assert run.code == 0, run.stderr
    validate_all(run.objects)
    return run


def error_of(F):
    run = render_objects(list(F.values()))
    assert run.code == 1, run.stdout
    assert run.stdout == ""
    (line,) = run.lines
    return line


def isvc_error(text):
    return f"error: <stdin>: {ISVC}: {text}"


def engine(F):
    return F["isvc"]["spec"]["engine"]


def rt_engine(F):
    return F["runtime"]["spec"]["engineConfig"]


def of_kind(run, kind, name=COMP):
    return [o for o in run.objects if o["kind"] == kind and o["metadata"]["name"] == name]


def bounds(run, name=COMP):
    spec = run.find("HorizontalPodAutoscaler", name)["spec"]
    return spec["minReplicas"], spec["maxReplicas"]


# ---------------------------------------------------------------- replica bounds (§9.1)

def test_42_defaults_after_the_merge(F):
    rt_engine(F)["minReplicas"] = 2
    del engine(F)["minReplicas"], engine(F)["maxReplicas"]
    F["isvc"]["spec"]["router"] = {}
    run = ok(F)
    assert bounds(run) == (2, 3)
    assert bounds(run, ROUTER) == (1, 2)


def test_default_max_below_min_is_raised_to_min(F):
    del engine(F)["maxReplicas"]
    engine(F)["minReplicas"] = 5
    assert bounds(ok(F)) == (5, 5)


def test_max_replicas_zero_is_unset(F):
    engine(F)["maxReplicas"] = 0
    rt_engine(F)["maxReplicas"] = 4
    assert bounds(ok(F)) == (1, 4)


def test_both_bounds_in_the_isvc_min_above_max(F):
    engine(F).update({"minReplicas": 3, "maxReplicas": 2})
    assert error_of(F) == isvc_error("spec.engine.minReplicas must be <= maxReplicas")


def test_isvc_min_above_runtime_max(F):
    del engine(F)["maxReplicas"]
    engine(F)["minReplicas"] = 3
    rt_engine(F)["maxReplicas"] = 2
    assert error_of(F) == isvc_error("minReplicas must not exceed maxReplicas")


@pytest.mark.parametrize("autoscaler", [None, {"class": "HPA"}])
def test_41_scale_to_zero_needs_an_inline_keda_block(F, autoscaler):
    engine(F)["minReplicas"] = 0
    if autoscaler:
        engine(F)["autoscaler"] = autoscaler
    assert error_of(F).startswith(isvc_error("engine: InvalidScaleToZero: "))


def test_runtime_keda_block_does_not_allow_scale_to_zero(F):
    engine(F)["minReplicas"] = 0
    rt_engine(F)["autoscaler"] = {"class": "KEDA", "keda": {"triggers": TRIGGERS}}
    assert error_of(F).startswith(isvc_error("engine: InvalidScaleToZero: "))


# ---------------------------------------------------------------- classes (§9.2)

def test_38_hpa_metrics_and_behavior_from_the_isvc(F):
    metrics = [{"type": "Resource", "resource": {"name": "memory",
                                                 "target": {"type": "Utilization", "averageUtilization": 70}}}]
    behavior = {"scaleDown": {"stabilizationWindowSeconds": 600}}
    engine(F)["autoscaler"] = {"class": "HPA", "hpa": {"metrics": metrics, "behavior": behavior}}
    hpa = ok(F).find("HorizontalPodAutoscaler", COMP)
    assert hpa["spec"] == {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": COMP},
                           "minReplicas": 1, "maxReplicas": 2, "metrics": metrics, "behavior": behavior}


def test_default_hpa_without_any_autoscaling_setting(F):
    run = ok(F)
    hpa = run.find("HorizontalPodAutoscaler", COMP)
    assert hpa["spec"]["metrics"] == CPU_80
    assert "behavior" not in hpa["spec"]
    assert "replicas" not in run.find("Deployment", COMP)["spec"]
    labels = hpa["metadata"]["labels"]
    annotations = hpa["metadata"]["annotations"]
    keys = annotations.pop("ome.io/autoscaler-propagated-metadata-keys")
    assert keys == ",".join(sorted(labels)) + "|" + ",".join(sorted(annotations))


def test_39_external(F):
    engine(F)["autoscaler"] = {"class": "External"}
    run = ok(F)
    assert of_kind(run, "HorizontalPodAutoscaler") == [] and of_kind(run, "ScaledObject") == []
    assert "replicas" not in run.find("Deployment", COMP)["spec"]


def test_class_none_holds_min_replicas(F):
    engine(F).update({"minReplicas": 2, "maxReplicas": 4, "autoscaler": {"class": "None"}})
    run = ok(F)
    assert of_kind(run, "HorizontalPodAutoscaler") == []
    assert run.find("Deployment", COMP)["spec"]["replicas"] == 2


def test_41_keda_scaled_object(F):
    keda = {"triggers": TRIGGERS, "pollingInterval": 15, "cooldownPeriod": 300,
            "fallback": {"failureThreshold": 3, "replicas": 1},
            "advanced": {"horizontalPodAutoscalerConfig": {"name": "keda-hpa-engine"}}}
    engine(F).update({"minReplicas": 0, "autoscaler": {"class": "KEDA", "keda": keda}})
    run = ok(F)
    scaled = run.find("ScaledObject", "scaledobject-llama-3-2-3b-instruct-engine")
    assert scaled["spec"] == {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": COMP},
                              "minReplicaCount": 0, "maxReplicaCount": 2, **keda}
    assert scaled["metadata"]["labels"] == run.find("Deployment", COMP)["metadata"]["labels"]
    assert "ome.io/autoscaler-propagated-metadata-keys" in scaled["metadata"]["annotations"]
    assert of_kind(run, "HorizontalPodAutoscaler") == []
    assert "replicas" not in run.find("Deployment", COMP)["spec"]


def test_keda_idle_replica_count_below_min(F):
    engine(F).update({"minReplicas": 2, "maxReplicas": 4,
                      "autoscaler": {"class": "KEDA", "keda": {"triggers": TRIGGERS, "idleReplicaCount": 1}}})
    assert ok(F).find("ScaledObject")["spec"]["idleReplicaCount"] == 1


# ---------------------------------------------------------------- precedence of sources (§9.2)

def test_runtime_block_when_the_isvc_has_none(F):
    rt_engine(F)["autoscaler"] = {"class": "None"}
    run = ok(F)
    assert of_kind(run, "HorizontalPodAutoscaler") == []
    assert run.find("Deployment", COMP)["spec"]["replicas"] == 1


def test_the_block_comes_whole_from_one_source(F):
    memory = [{"type": "Resource", "resource": {"name": "memory",
                                                "target": {"type": "Utilization", "averageUtilization": 50}}}]
    rt_engine(F)["autoscaler"] = {"class": "HPA", "hpa": {"metrics": memory}}
    engine(F)["autoscaler"] = {"class": "HPA"}
    assert ok(F).find("HorizontalPodAutoscaler", COMP)["spec"]["metrics"] == CPU_80


def test_runtime_block_wins_over_legacy_annotations(F):
    rt_engine(F)["autoscaler"] = {"class": "External"}
    F["isvc"]["metadata"]["annotations"] = {"ome.io/targetUtilizationPercentage": "60"}
    assert of_kind(ok(F), "HorizontalPodAutoscaler") == []


def test_40_legacy_target_utilization(F):
    F["isvc"]["metadata"]["annotations"] = {"ome.io/targetUtilizationPercentage": "60"}
    run = ok(F)
    assert run.find("HorizontalPodAutoscaler", COMP)["spec"]["metrics"] == [
        {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}}]
    assert run.find("Deployment", ROUTER)["spec"]["replicas"] == 1


def test_legacy_hpa_class_with_memory_metric(F):
    del F["isvc"]["spec"]["router"]
    F["isvc"]["metadata"]["annotations"] = {"ome.io/autoscalerClass": "hpa", "ome.io/metrics": "memory"}
    assert ok(F).find("HorizontalPodAutoscaler", COMP)["spec"]["metrics"] == [
        {"type": "Resource", "resource": {"name": "memory", "target": {"type": "Utilization",
                                                                       "averageUtilization": 80}}}]


def test_legacy_annotations_in_the_component_annotations(F):
    engine(F)["annotations"] = {"ome.io/autoscalerClass": "external"}
    assert of_kind(ok(F), "HorizontalPodAutoscaler") == []


def test_legacy_keda_class_is_an_error(F):
    del F["isvc"]["spec"]["router"]
    F["isvc"]["metadata"]["annotations"] = {"ome.io/autoscalerClass": "keda"}
    assert error_of(F) == isvc_error("KEDA autoscaler requires at least one trigger")


@pytest.mark.parametrize("annotations,text", [
    ({"ome.io/autoscalerClass": "knative"}, "[knative] is not a supported autoscaler class type"),
    ({"ome.io/autoscalerClass": "hpa", "ome.io/metrics": "gpu"}, "[gpu] is not a supported metric"),
    ({"ome.io/targetUtilizationPercentage": "0"}, "the target utilization percentage should be a [1-100] integer"),
    ({"ome.io/targetUtilizationPercentage": "101"}, "the target utilization percentage should be a [1-100] integer"),
    ({"ome.io/targetUtilizationPercentage": "high"}, "the target utilization percentage should be a [1-100] integer"),
])
def test_invalid_legacy_values(F, annotations, text):
    del F["isvc"]["spec"]["router"]
    F["isvc"]["metadata"]["annotations"] = annotations
    assert error_of(F) == isvc_error(text)


def test_invalid_legacy_target_is_rejected_even_beside_a_block(F):
    engine(F)["annotations"] = {"ome.io/targetUtilizationPercentage": "500"}
    engine(F)["autoscaler"] = {"class": "External"}
    assert error_of(F) == isvc_error("the target utilization percentage should be a [1-100] integer")


# ---------------------------------------------------------------- webhook errors (api.md §8.9)

@pytest.mark.parametrize("block", [{}, {"class": "Knative"}, {"hpa": {}}])
def test_autoscaler_class_unknown(F, block):
    engine(F)["autoscaler"] = block
    assert error_of(F).startswith(isvc_error("engine: AutoscalerClassUnknown: "))


@pytest.mark.parametrize("block", [{"class": "KEDA"}, {"class": "KEDA", "keda": {"triggers": []}},
                                   {"class": "KEDA", "keda": {"pollingInterval": 5}}])
def test_keda_triggers_required(F, block):
    engine(F)["autoscaler"] = block
    assert error_of(F) == isvc_error("engine: KedaTriggersRequired: class=keda requires at least 1 trigger")


@pytest.mark.parametrize("metric", [{"resource": {"name": "cpu"}}, {"type": "Pods"}, {"type": "Bogus"}])
def test_hpa_metric_malformed(F, metric):
    engine(F)["autoscaler"] = {"class": "HPA", "hpa": {"metrics": [metric]}}
    assert error_of(F).startswith(isvc_error("engine: HPAMetricMalformed: "))


@pytest.mark.parametrize("idle", [1, 2])
def test_keda_idle_not_below_min(F, idle):
    engine(F)["autoscaler"] = {"class": "KEDA", "keda": {"triggers": TRIGGERS, "idleReplicaCount": idle}}
    assert error_of(F).startswith(isvc_error("engine: KedaIdleBelowMin: "))


def test_autoscaler_annotation_conflict(F):
    F["isvc"]["metadata"]["annotations"] = {"ome.io/autoscalerClass": "hpa"}
    engine(F)["autoscaler"] = {"class": "HPA"}
    assert error_of(F).startswith(isvc_error("AutoscalerAnnotationConflict: "))


@pytest.mark.parametrize("inline", [None, {"class": "HPA"}])
def test_autoscaler_policy_ref_without_policies_is_rejected(F, inline):
    """The webhook's check (ValidateAutoscalerPolicyRefs) runs before an inline block outranks the ref; with no
    AutoscalerPolicy in the input the feature is off (tests/test_autoscaler_policy.py has the rest)."""
    engine(F)["autoscalerPolicyRef"] = {"name": "fast"}
    if inline:
        engine(F)["autoscaler"] = inline
    assert error_of(F) == isvc_error('AutoscalerPolicyFeatureDisabled: spec.engine.autoscalerPolicyRef references '
                                     '"fast" but the AutoscalerPolicy feature is not enabled on this cluster; remove '
                                     'the ref or enable the feature (omerender turns it on when the input holds an '
                                     'AutoscalerPolicy)')


def test_runtime_autoscaler_policy_ref_is_rejected(F):
    rt_engine(F)["autoscalerPolicyRef"] = {"name": "fast"}
    assert error_of(F) == ("error: <stdin>: ClusterServingRuntime srt-llama-3-2-3b-instruct: engineConfig."
                           "autoscalerPolicyRef is not allowed in a runtime; set it in the InferenceService")


def test_invalid_runtime_block_is_an_error(F):
    rt_engine(F)["autoscaler"] = {"class": "KEDA"}
    assert error_of(F).endswith(": engine: KedaTriggersRequired: class=keda requires at least 1 trigger")


def test_validate_runtime_autoscalers():
    validate_runtime_autoscalers({"engineConfig": {"autoscaler": {"class": "HPA"}}, "routerConfig": {}})
    with pytest.raises(OmeError) as caught:
        validate_runtime_autoscalers({"decoderConfig": {"minReplicas": 2, "autoscaler": {
            "class": "KEDA", "keda": {"triggers": TRIGGERS, "idleReplicaCount": 2}}}})
    assert caught.value.text.startswith("decoder: KedaIdleBelowMin: ")
    assert caught.value.field == "spec.decoderConfig.autoscaler.keda.idleReplicaCount"
    with pytest.raises(OmeError) as caught:
        validate_runtime_autoscalers({"routerConfig": {"autoscalerPolicyRef": {"name": "p"}}})
    assert caught.value.text == ("routerConfig.autoscalerPolicyRef is not allowed in a runtime; set it in the "
                                 "InferenceService")


def test_scaling_policy_other_than_independent(F):
    F["isvc"]["spec"]["scalingPolicy"] = {"mode": "Coordinated"}
    assert error_of(F) == isvc_error("ScalingModeNotImplemented: scalingPolicy.mode Coordinated is not implemented; "
                                     "only Independent is supported")
    F["isvc"]["spec"]["scalingPolicy"] = {"mode": "Independent"}
    ok(F)


def test_runtime_scaling_policy_other_than_independent(F):
    F["runtime"]["spec"]["scalingPolicy"] = {"mode": "Coordinated"}
    assert error_of(F) == ("error: <stdin>: ClusterServingRuntime srt-llama-3-2-3b-instruct: ScalingModeNotImplemented:"
                           " scalingPolicy.mode Coordinated is not implemented; only Independent is supported")


# ---------------------------------------------------------------- removed v1.2.2 fields

def test_removed_component_fields_are_ignored_with_warnings(F):
    engine(F).update({"scaleMetric": "cpu", "scaleTarget": 50})
    F["isvc"]["spec"]["kedaConfig"] = {"enableKeda": True}
    run = ok(F)
    assert run.lines == [CHART_DEFAULTS_INFO,
                         f"warning: <stdin>: {ISVC}: spec.kedaConfig was removed in OME v1.3 and is ignored",
                         f"warning: <stdin>: {ISVC}: spec.engine.scaleMetric was removed in OME v1.3 and is ignored",
                         f"warning: <stdin>: {ISVC}: spec.engine.scaleTarget was removed in OME v1.3 and is ignored"]
    assert run.find("HorizontalPodAutoscaler", COMP)["spec"]["metrics"] == CPU_80


def test_removed_runtime_fields():
    spec = {"engineConfig": {"scaleMetric": "cpu"}, "routerConfig": {"kedaConfig": {}, "scaleTarget": 5}}
    assert removed_field_warnings(spec) == [
        "spec.engineConfig.scaleMetric was removed in OME v1.3 and is ignored",
        "spec.routerConfig.kedaConfig was removed in OME v1.3 and is ignored",
        "spec.routerConfig.scaleTarget was removed in OME v1.3 and is ignored"]


# ---------------------------------------------------------------- PodDisruptionBudget (§9.3)

def pdb_spec(run, name=COMP):
    spec = dict(run.find("PodDisruptionBudget", name)["spec"])
    assert spec.pop("selector") == {"matchLabels": {"app": name}}
    return spec


def test_default_budget(F):
    assert pdb_spec(ok(F)) == {"maxUnavailable": 1}


def test_43_min_available_from_the_isvc(F):
    engine(F)["minAvailable"] = "50%"
    assert pdb_spec(ok(F)) == {"minAvailable": "50%"}


def test_43_runtime_and_isvc_set_different_fields(F):
    engine(F)["minAvailable"] = "50%"
    rt_engine(F)["maxUnavailable"] = 1
    assert error_of(F) == isvc_error("failed to resolve engine PodDisruptionBudget: runtime and InferenceService set "
                                     "different budget fields")


def test_budget_from_the_runtime_and_isvc_wins_on_the_same_field(F):
    rt_engine(F)["minAvailable"] = 1
    assert pdb_spec(ok(F)) == {"minAvailable": 1}
    engine(F)["minAvailable"] = 0
    assert pdb_spec(ok(F)) == {"minAvailable": 0}


def test_both_fields_in_the_isvc(F):
    engine(F).update({"minAvailable": 1, "maxUnavailable": 1})
    assert error_of(F) == isvc_error("spec.engine.minAvailable and spec.engine.maxUnavailable cannot both be set")


@pytest.mark.parametrize("field", ["minAvailable", "maxUnavailable"])
@pytest.mark.parametrize("value", [-1, "101%", "half", "5.5%", True])
def test_invalid_budget_value(F, field, value):
    engine(F)[field] = value
    assert error_of(F) == isvc_error(f"spec.engine.{field} must be a non-negative integer or a percentage from 0% to "
                                     f"100%")


def test_invalid_runtime_budget_value(F):
    rt_engine(F)["maxUnavailable"] = "150%"
    assert error_of(F) == isvc_error("failed to resolve engine PodDisruptionBudget: runtime and InferenceService set "
                                     "different budget fields")


def test_router_budget(F):
    F["isvc"]["spec"]["router"]["maxUnavailable"] = "0%"
    assert pdb_spec(ok(F), ROUTER) == {"maxUnavailable": "0%"}
