"""AutoscalerPolicy (alpha, OME v1.3; issue 26): an input kind whose policies a component's autoscalerPolicyRef
renders into its HPA or ScaledObject (render.md §9.2). Ported from ome-projects/ome
pkg/autoscalerpolicy/render/render_test.go (2af192b3), the webhook's validation tests (TestValidateAutoscalerPolicySpec,
TestValidateAutoscalerPolicyRefs) and docs concepts/serving/autoscaler-policy.md, through the CLI."""
import copy
from types import MappingProxyType

import pytest

from conftest import CHART_DEFAULTS_INFO, render_objects
from omerender.errors import OmeError
from omerender.ome.cluster.settings import AutoscalerPolicyConfig, ClusterConfig, MetricProvider
from omerender.ome.workloads.autoscaler_policy import Context, compile_template, render_block
from omerender.ome.workloads.metric_providers import Bindings
from schemas import validate_all

ISVC = "InferenceService llama-demo/llama-3-2-3b-instruct"
ENGINE = "llama-3-2-3b-instruct-engine"
ROUTER = "llama-3-2-3b-instruct-router"
VARIABLES = ".Namespace .ISVCName .Component .MinReplicas .MaxReplicas .TargetName"
CPU_60 = {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}}


def policy(name, spec, namespace="llama-demo"):
    return {"apiVersion": "ome.io/v1beta1", "kind": "AutoscalerPolicy",
            "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def hpa_policy(name="cpu-60"):
    return policy(name, {"class": "HPA", "hpa": {"metrics": [CPU_60],
                                                 "behavior": {"scaleDown": {"stabilizationWindowSeconds": 300}}}})


def keda_policy(name="activity", **keda):
    trigger = {"type": "cpu", "metadata": {"value": "50", "containerName": "{{ .TargetName }}"}}
    return policy(name, {"class": "KEDA", "keda": {"triggers": [trigger], **keda}})


def prometheus_trigger(**changes):
    trigger = {"type": "prometheus", "providerRef": {"name": "cluster-prometheus"}, "metricType": "AverageValue",
               "metadata": {"threshold": "5", "ignoreNullValues": "false",
                            "query": 'sum(vllm:num_requests_waiting{namespace="{{ .Namespace }}",'
                                     'inferenceservice="{{ .ISVCName }}",component="{{ .Component }}"})'}}
    trigger.update(changes)
    return trigger


def with_ref(F, *policies, component="engine", **ref):
    F["isvc"]["spec"][component]["autoscalerPolicyRef"] = {"name": policies[0]["metadata"]["name"], **ref} \
        if policies else ref
    return list(F.values()) + list(policies)


def ok(objects, *flags):
    run = render_objects(objects, *flags)
    assert run.code == 0, run.stderr
    validate_all(run.objects)
    return run


def errors_of(objects):
    run = render_objects(objects)
    assert run.code == 1, run.stdout
    assert run.stdout == ""
    return run.lines


def isvc_error(text):
    return f"error: <stdin>: {ISVC}: {text}"


def policy_error(name, text):
    return f"error: <stdin>: AutoscalerPolicy llama-demo/{name}: {text}"


# ---------------------------------------------------------------- rendering

def test_an_hpa_policy_renders_the_hpa_verbatim(F):
    """TestRenderHPAClassVerbatim; the docs' cpu-60 policy: metrics and behavior copied, the component's bounds."""
    run = ok(with_ref(F, hpa_policy()))
    assert run.find("HorizontalPodAutoscaler", ENGINE)["spec"] == {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": ENGINE},
        "minReplicas": 1, "maxReplicas": 2, "metrics": [CPU_60],
        "behavior": {"scaleDown": {"stabilizationWindowSeconds": 300}}}
    assert run.lines == [CHART_DEFAULTS_INFO]


def test_an_hpa_policy_without_hpa_gets_cpu_80(F):
    """TestRenderHPAClassVerbatim: no template; "the HorizontalPodAutoscaler keeps CPU use at 80%" (docs)."""
    run = ok(with_ref(F, policy("plain", {"class": "HPA"})))
    assert run.find("HorizontalPodAutoscaler", ENGINE)["spec"]["metrics"] == [
        {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]


def test_a_keda_policy_renders_the_scaled_object(F):
    """TestRenderGolden without an endpoint trigger: metadata templates filled per component, fallback replicas
    from the component's bounds (TestReplicaValueSource), the rest copied; KEDA replaces the HPA."""
    trigger = {"type": "cpu", "metricType": "Value",
               "metadata": {"value": "{{ .MinReplicas }}-{{ .MaxReplicas }}",
                            "containerName": "{{.Namespace}}/{{.ISVCName}}/{{.Component}}/{{.TargetName}}"}}
    spec = {"class": "KEDA", "keda": {"triggers": [trigger], "pollingInterval": 15, "cooldownPeriod": 120,
                                      "fallback": {"failureThreshold": 3, "replicas": {"fromComponent": "MaxReplicas"}}}}
    run = ok(with_ref(F, policy("activity", spec)))
    assert ("HorizontalPodAutoscaler", ENGINE) not in run.kinds()
    assert run.find("ScaledObject", f"scaledobject-{ENGINE}")["spec"] == {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": ENGINE},
        "minReplicaCount": 1, "maxReplicaCount": 2, "pollingInterval": 15, "cooldownPeriod": 120,
        "fallback": {"failureThreshold": 3, "replicas": 2},
        "triggers": [{"type": "cpu", "metricType": "Value",
                      "metadata": {"value": "1-2", "containerName": f"llama-demo/llama-3-2-3b-instruct/engine/{ENGINE}"}}]}


@pytest.mark.parametrize("source, replicas", [({"value": 5}, 5), ({"fromComponent": "MinReplicas"}, 1),
                                              ({"fromComponent": "MaxReplicas"}, 2)])
def test_fallback_replicas(F, source, replicas):
    """TestReplicaValueSource."""
    run = ok(with_ref(F, keda_policy(fallback={"failureThreshold": 1, "replicas": source})))
    assert run.find("ScaledObject")["spec"]["fallback"] == {"failureThreshold": 1, "replicas": replicas}


def test_each_component_renders_its_own_ref(F):
    """The engine, decoder and router can each name a policy (docs); the router's inline block is removed here."""
    del F["isvc"]["spec"]["router"]["autoscaler"]
    objects = with_ref(F, hpa_policy(), keda_policy())
    F["isvc"]["spec"]["router"]["autoscalerPolicyRef"] = {"name": "activity", "kind": "AutoscalerPolicy"}
    run = ok(objects)
    assert run.find("HorizontalPodAutoscaler", ENGINE)["spec"]["metrics"] == [CPU_60]
    assert run.find("ScaledObject", f"scaledobject-{ROUTER}")["spec"]["triggers"][0]["metadata"]["containerName"] == ROUTER


def test_template_white_space_trims_and_comments(F):
    """Go's text/template: {{- and -}} trim the white space beside them; a comment prints nothing."""
    trigger = {"type": "cpu", "metadata": {"value": "a {{- .MaxReplicas -}} b{{/* none */}}"}}
    run = ok(with_ref(F, policy("p", {"class": "KEDA", "keda": {"triggers": [trigger]}})))
    assert run.find("ScaledObject")["spec"]["triggers"][0]["metadata"] == {"value": "a2b"}


def test_a_prometheus_trigger_gets_its_providers_address():
    """TestRenderGolden: the provider binding sets serverAddress; bounds fill the query."""
    spec = {"class": "KEDA", "keda": {"triggers": [prometheus_trigger()]}}
    ctx = Context("llm-serving", "llm-a", "engine", 1, 8, "llm-a-engine")
    bound = AutoscalerPolicyConfig(MappingProxyType({"cluster-prometheus": MetricProvider(
        "http://prometheus.example.invalid:9090")}))
    cluster = ClusterConfig("test", autoscaler_policy=bound, file="test.yaml")
    block = render_block("queue-depth", spec, ctx, Bindings(cluster))
    assert block == {"class": "KEDA", "keda": {"triggers": [{
        "type": "prometheus", "metricType": "AverageValue",
        "metadata": {"threshold": "5", "ignoreNullValues": "false",
                     "query": 'sum(vllm:num_requests_waiting{namespace="llm-serving",inferenceservice="llm-a",'
                              'component="engine"})',
                     "serverAddress": "http://prometheus.example.invalid:9090"}}]}}


def test_a_non_positive_ceiling_is_refused():
    """TestRenderRejections "non-positive max"."""
    with pytest.raises(OmeError) as caught:
        render_block("p", {"class": "HPA"}, Context("ns", "i", "engine", 0, 0, "i-engine"), {})
    assert caught.value.text == "component engine has effective maxReplicas 0; policy rendering requires a positive ceiling"


# ---------------------------------------------------------------- the input kind

def test_policies_are_inputs_left_out_of_the_output_unless_kept(F):
    objects = with_ref(F, hpa_policy())
    assert ("AutoscalerPolicy", "cpu-60") not in ok(objects).kinds()
    kept = render_objects(objects, "--keep-inputs")  # OME kinds are not in the Kubernetes schema: not validated
    assert kept.code == 0 and ("AutoscalerPolicy", "cpu-60") in kept.kinds()


def test_a_near_miss_kind_is_named(F):
    bad = hpa_policy()
    bad["kind"] = "AutoscalerPolicys"
    assert errors_of(list(F.values()) + [bad]) == [
        'error: <stdin>: AutoscalerPolicys llama-demo/cpu-60: kind: Unsupported value: "AutoscalerPolicys": not a kind '
        'of the ome.io API group; did you mean "AutoscalerPolicy"?']


def test_an_unknown_field_is_named(F):
    bad = hpa_policy()
    bad["spec"]["hpa"]["behaviour"] = {}
    assert errors_of(list(F.values()) + [bad]) == [policy_error(
        "cpu-60", 'spec.hpa.behaviour: unknown field "behaviour"; did you mean "behavior"?')]


def test_an_unused_invalid_policy_is_refused(F):
    """OME's webhook refuses it when it is applied, whether or not anything uses it."""
    bad = policy("broken", {"class": "External"})
    assert errors_of(list(F.values()) + [bad]) == [policy_error(
        "broken", 'spec.class: Unsupported value: "External": supported values: "HPA", "KEDA"')]


# ---------------------------------------------------------------- the references

def test_without_any_policy_the_feature_is_off(F):
    """TestValidateAutoscalerPolicyRefs "router ref with feature disabled"."""
    del F["isvc"]["spec"]["router"]["autoscaler"]
    F["isvc"]["spec"]["router"]["autoscalerPolicyRef"] = {"name": "request-activity-v1"}
    assert errors_of(list(F.values())) == [isvc_error(
        'AutoscalerPolicyFeatureDisabled: spec.router.autoscalerPolicyRef references "request-activity-v1" but the '
        "AutoscalerPolicy feature is not enabled on this cluster; remove the ref or enable the feature (omerender turns "
        "it on when the input holds an AutoscalerPolicy)")]


def test_a_cluster_kind_is_reserved(F):
    """TestValidateAutoscalerPolicyRefs "reserved cluster kind on engine"."""
    objects = with_ref(F, hpa_policy(), kind="ClusterAutoscalerPolicy")
    assert errors_of(objects) == [isvc_error(
        'AutoscalerPolicyRefKindReserved: spec.engine.autoscalerPolicyRef.kind "ClusterAutoscalerPolicy" is not '
        "supported (ClusterAutoscalerPolicy is a reserved shape); use AutoscalerPolicy")]


def test_a_missing_policy_is_an_error_with_the_nearest_name(F):
    """OME holds the component (PolicyNotFound) and keeps its last autoscaler, which a render does not have."""
    objects = with_ref(F, hpa_policy("cpu-60"))
    F["isvc"]["spec"]["engine"]["autoscalerPolicyRef"] = {"name": "cpu-6"}
    assert errors_of(objects) == [isvc_error(
        'engine: PolicyNotFound: AutoscalerPolicy "cpu-6" not found in namespace llama-demo; OME would keep the '
        "engine's last autoscaler until it exists, which a render cannot know; did you mean \"cpu-60\"?")]


def test_a_policy_in_another_namespace_is_not_found(F):
    """A ref names a policy of the InferenceService's own namespace."""
    objects = with_ref(F, hpa_policy())
    objects[-1]["metadata"]["namespace"] = "other"
    assert errors_of(objects) == [isvc_error(
        'engine: PolicyNotFound: AutoscalerPolicy "cpu-60" not found in namespace llama-demo; OME would keep the '
        "engine's last autoscaler until it exists, which a render cannot know")]


def test_an_inline_block_outranks_the_ref(F):
    """docs "Inline settings win": the policy is not even needed; the ref is reported as shadowed."""
    F["isvc"]["spec"]["engine"]["autoscaler"] = {"class": "HPA"}
    run = ok(with_ref(F, keda_policy()))
    assert ("HorizontalPodAutoscaler", ENGINE) in run.kinds()
    assert run.lines == [CHART_DEFAULTS_INFO, f'info: <stdin>: {ISVC}: spec.engine.autoscalerPolicyRef "activity" is shadowed: the inline '
                         f"autoscaler block outranks it"]


def test_a_ref_outranks_the_runtime_block(F):
    """Which setting wins: inline, then the policy, then the runtime's block."""
    F["runtime"]["spec"]["engineConfig"]["autoscaler"] = {"class": "None"}
    assert ("HorizontalPodAutoscaler", ENGINE) in ok(with_ref(F, hpa_policy())).kinds()


def test_scale_to_zero_needs_an_inline_keda_block(F):
    """The webhook rejects minReplicas 0 with only a reference (docs)."""
    F["isvc"]["spec"]["engine"]["minReplicas"] = 0
    (line,) = errors_of(with_ref(F, keda_policy()))
    assert line.startswith(isvc_error("engine: InvalidScaleToZero: "))


def test_a_multinode_ref_is_inert(F):
    """UnsupportedDeploymentMode: MultiNode components have no autoscaler dispatch; the ref is inert."""
    engine = F["isvc"]["spec"]["engine"]
    engine["annotations"] = {"ome.io/deploymentMode": "MultiNode"}
    engine["leader"] = {"runner": {"name": "ome-container", "image": "i"}}
    engine["worker"] = {"size": 1, "runner": {"name": "ome-container", "image": "i"}}
    run = ok(with_ref(F, policy("missing-is-fine", {"class": "HPA"})))
    assert (f"warning: <stdin>: {ISVC}: engine is MultiNode: spec.engine.autoscalerPolicyRef is inert (OME does not "
            f"autoscale a LeaderWorkerSet)") in run.lines


# ---------------------------------------------------------------- the policy's own checks

@pytest.mark.parametrize("query, text", [
    ("{{ .Nope }}", f'unknown template variable "{{{{.Nope}}}}": allowed variables are {VARIABLES}'),
    ('{{ printf "%s" .Namespace }}',
     'forbidden template construct "{{printf \\"%s\\" .Namespace}}": function calls are not allowed'),
    ("{{ .Namespace | html }}",
     'forbidden template construct "{{.Namespace | html}}": pipelines, declarations, and functions are not allowed'),
    ("{{ $x := .Namespace }}",
     'forbidden template construct "{{$x := .Namespace}}": pipelines, declarations, and functions are not allowed'),
    ("{{ . }}", 'forbidden template construct "{{.}}": only field access is allowed'),
])
def test_template_rejections(F, query, text):
    """TestRenderRejections: the allowlist (template.go checkActionNode), as the webhook reports it
    (ForbiddenTemplateNode, validate.go), at the policy and at the component that uses it."""
    trigger = {"type": "cpu", "metadata": {"query": query}}
    objects = with_ref(F, policy("bad", {"class": "KEDA", "keda": {"triggers": [trigger]}}))
    assert errors_of(objects) == [
        policy_error("bad", f'ForbiddenTemplateNode: trigger 0 metadata "query": {text}'),
        isvc_error(f'engine: PolicyInvalid: policy bad: ForbiddenTemplateNode: trigger 0 metadata "query": {text}')]


def test_control_flow_is_refused():
    """TestRenderRejections "control flow" (the message quotes the opening action, where Go quotes the block)."""
    with pytest.raises(OmeError) as caught:
        compile_template(0, "query", "{{ if .Namespace }}x{{ end }}")
    assert caught.value.text == ('trigger 0 metadata "query": forbidden template construct "{{if .Namespace}}": only '
                                 "{{ .Var }} field access and literal text are allowed")


def test_an_unclosed_action_is_a_parse_error():
    with pytest.raises(OmeError) as caught:
        compile_template(1, "query", "sum(x)\n{{ .Namespace")
    assert caught.value.text == 'trigger 1 metadata "query": parse: template: t1/query:2: unclosed action'


@pytest.mark.parametrize("change, text", [
    (lambda s: s.update(enforcement="Required"),
     "EnforcementRequiredReserved: enforcement Required is a reserved shape and not implemented; use Default"),
    (lambda s: s["keda"]["triggers"][0]["metadata"].update(ServerAddress="http://attacker.invalid"),
     'ForbiddenMetadataKey: trigger 0: metadata key "ServerAddress" is provider-owned; bind endpoints via providerRef'),
    (lambda s: s["keda"]["triggers"][0]["metadata"].update(authModes="bearer"),
     'ForbiddenMetadataKey: trigger 0: metadata key "authModes" is provider-owned; bind endpoints via providerRef'),
    (lambda s: s["keda"]["triggers"][0].pop("providerRef"),
     "ProviderRefRequired: trigger 0 (prometheus): providerRef is required for endpoint trigger types"),
    (lambda s: s["keda"]["triggers"][0]["metadata"].pop("ignoreNullValues"),
     "IgnoreNullValuesMustBeExplicit: trigger 0 (prometheus): ignoreNullValues must be explicit — the KEDA default "
     "(true) silently treats no-series as a healthy zero"),
    (lambda s: s["keda"]["triggers"][0].update(queryReturnsDesiredReplicas=True, metricType="Value"),
     "DesiredCountRequiresAverageValue: trigger 0: queryReturnsDesiredReplicas requires metricType AverageValue — the "
     "HPA's Value math is ceil((metric/threshold) x readyPods), which breaks desired-count queries"),
    (lambda s: s.update(hpa={}),
     'spec: Invalid value: "object": class KEDA requires keda and forbids hpa; class HPA forbids keda'),
    (lambda s: s["keda"].update(fallback={"failureThreshold": 3, "replicas": {"value": 1, "fromComponent": "MinReplicas"}}),
     'spec.keda.fallback.replicas: Invalid value: "object": exactly one of value or fromComponent must be set'),
    (lambda s: s["keda"].update(triggers=[]),
     "spec.keda.triggers: Invalid value: 0: spec.keda.triggers in body should have at least 1 items"),
])
def test_policy_validation(F, change, text):
    """TestValidateSpec and TestValidateAutoscalerPolicySpec (the webhook's reasons), and the CRD's own rules,
    which the API server applies first."""
    spec = {"class": "KEDA", "keda": {"triggers": [prometheus_trigger()]}}
    change(spec)
    assert errors_of(list(F.values()) + [policy("queue-depth", spec)]) == [policy_error("queue-depth", text)]


def test_the_standard_policy_is_valid_until_it_meets_a_cluster(F):
    """TestValidateSpec: the standard fleet shape validates cleanly; only the missing binding stops its render."""
    spec = {"class": "KEDA", "keda": {
        "triggers": [prometheus_trigger(queryReturnsDesiredReplicas=True, metadata={
            "threshold": "1", "ignoreNullValues": "false",
            "query": '((sum({__name__=~"sglang:num_running_reqs|vllm:num_requests_running",namespace="{{ .Namespace }}",'
                     'inferenceservice="{{ .ISVCName }}",component=~"engine|decoder"}) > bool 0) * {{ .MaxReplicas }})'})],
        "fallback": {"failureThreshold": 3, "replicas": {"fromComponent": "MaxReplicas"}}}}
    objects = list(copy.deepcopy(F).values()) + [policy("request-activity-v1", spec)]
    assert ok(objects).lines == [CHART_DEFAULTS_INFO]


def test_the_rendered_block_meets_the_checks_of_an_inline_one(F):
    """ValidateSpec's note (render/validate.go): rendered output passes the validation an inline block faces."""
    bad = policy("idle", {"class": "KEDA", "keda": {"idleReplicaCount": 1, "triggers": [
        {"type": "cpu", "metadata": {"value": "50"}}]}})
    assert errors_of(with_ref(F, bad)) == [isvc_error(
        "engine: KedaIdleBelowMin: keda.idleReplicaCount (1) must be below minReplicas (1)")]
    metric = policy("odd", {"class": "HPA", "hpa": {"metrics": [{"type": "Pods"}]}})
    assert errors_of(with_ref(F, metric)) == [isvc_error(
        "engine: HPAMetricMalformed: policy odd: spec.hpa.metrics[0] of type Pods needs pods")]


def test_a_policy_copied_into_many_components_parses_its_templates_once():
    """A large templated value is parsed once, however many components render it (template.go caches per policy
    generation)."""
    from omerender.ome.workloads import autoscaler_policy
    text = "x{{ .Namespace }}" * 20_000
    autoscaler_policy._compiled.cache_clear()
    for _ in range(50):
        compile_template(0, "query", text)
    assert autoscaler_policy._compiled.cache_info().misses == 1


def test_printed_text_counts_against_the_renders_budget(F, monkeypatch):
    """What the templates print for every component shares the placeholders' budget of printed characters
    (yamlio/limits.py MAX_EXPANDED_CHARS), so one policy named by many components cannot print without bound."""
    from omerender.yamlio import limits
    monkeypatch.setattr(limits, "MAX_EXPANDED_CHARS", 100)
    trigger = {"type": "cpu", "metadata": {"value": "{{ .Namespace }}" * 11}}
    (line,) = errors_of(with_ref(F, policy("long", {"class": "KEDA", "keda": {"triggers": [trigger]}})))
    assert line == isvc_error("AutoscalerPolicy templates and placeholders print more than 100 characters or run more "
                              "than 200,000 actions across the render (here spec.keda.triggers[0].metadata.value); "
                              "render fewer InferenceServices at a time, or shorten the policy's metadata")
