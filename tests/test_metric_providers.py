"""Metric providers of AutoscalerPolicy endpoint triggers (render.md §9.2.1): inferenceservice-config's
``autoscalerPolicy`` key, the trigger's serverAddress, and the KEDA TriggerAuthentication OME creates per namespace.

OME v1.3 sources (ome-projects/ome): pkg/controller/v1beta1/controllerconfig, the file of AutoscalerPolicyConfig
(parseAutoscalerPolicyConfig; commit 4ff3b6e3, no Go test of its own in the index), configmap.go's
getComponentConfig (4dfb96b1); pkg/autoscalerpolicy/render/render.go and render_test.go (2af192b3);
pkg/controller/v1beta1/inferenceservice/reconcilers/autoscaler/policy.go (ProviderBindingsFromConfig,
TriggerAuthenticationName, EnsureTriggerAuthentications). Docs: concepts/serving/autoscaler-policy.md, "Metric
providers"."""
from __future__ import annotations

import copy
import json

import pytest
import yaml

from conftest import ROOT, render_objects, run_cli, worked_example
from omerender.ome.cluster.configmap import parse_data
from omerender.ome.cluster.parse import ConfigError
from schemas import validate_all
from test_autoscaler_policy import isvc_error, policy, prometheus_trigger, with_ref

ADDRESS = "http://ome-prometheus.ome.svc:9090"
TOKEN = {"name": "prometheus-bearer", "key": "token"}
TA_NAME = "ome-metric-provider-cluster-prometheus"
CM_REF = "<stdin>: ConfigMap ome/inferenceservice-config"


def configmap(block) -> dict:
    text = block if isinstance(block, str) else json.dumps(block)
    meta = {"name": "inferenceservice-config", "namespace": "ome"}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"autoscalerPolicy": text}}


def providers(auth: bool = True, **more) -> dict:
    bound = {"serverAddress": ADDRESS, **({"authSecretRef": TOKEN} if auth else {})}
    return {"metricProviders": {"cluster-prometheus": bound, **more}}


def queue_depth(name="queue-depth", namespace="llama-demo", **trigger) -> dict:
    return policy(name, {"class": "KEDA", "keda": {"triggers": [prometheus_trigger(**trigger)]}}, namespace)


def ok(objects):
    run = render_objects(objects)
    assert run.code == 0, run.stderr
    validate_all(run.objects)
    return run


def of_kind(run, kind: str) -> list[dict]:
    return [o for o in run.objects if o["kind"] == kind]


def parsed(block):
    return parse_data({"autoscalerPolicy": block if isinstance(block, str) else json.dumps(block)}, "t", "t.yaml")[0]


def load_error(block) -> str:
    with pytest.raises(ConfigError) as caught:
        parsed(block)
    return caught.value.text


# ---------------------------------------------------------------- the key (parseAutoscalerPolicyConfig)

def test_the_key_parses_providers_and_fills_the_preflight_defaults():
    """parseAutoscalerPolicyConfig: bindings as written; a non-positive preflight tunable gets its default
    (DefaultPolicyMemberGetTimeoutSeconds 5, DefaultPolicySkewDeadlineSeconds 900)."""
    config = parsed({**providers(), "preflight": {"memberGetTimeoutSeconds": 0, "skewDeadlineSeconds": 60}})
    policy_config = config.autoscaler_policy
    (name, bound), = policy_config.metric_providers.items()
    assert (name, bound.server_address, bound.auth_secret_ref.name, bound.auth_secret_ref.key) == (
        "cluster-prometheus", ADDRESS, "prometheus-bearer", "token")
    assert (policy_config.member_get_timeout_seconds, policy_config.skew_deadline_seconds) == (5, 60)


def test_without_the_key_nothing_is_bound():
    """parseAutoscalerPolicyConfig: "Provider addresses have deliberately NO in-code default"."""
    config = parse_data({}, "t", "t.yaml")[0].autoscaler_policy
    assert (dict(config.metric_providers), config.member_get_timeout_seconds, config.skew_deadline_seconds) == (
        {}, 5, 900)


@pytest.mark.parametrize("block, text", [
    # getComponentConfig unmarshals a present key even when blank; its "due to %w " keeps the trailing space
    ("", "unable to parse autoscalerPolicy config json: unable to unmarshall autoscalerPolicy json string due to "
         "unexpected end of JSON input "),
    ('{"metricProviders": []}',
     "unable to parse autoscalerPolicy config json: unable to unmarshall autoscalerPolicy json string due to json: "
     "cannot unmarshal array into Go struct field AutoscalerPolicyConfig.metricProviders of type "
     "map[string]controllerconfig.AutoscalerPolicyMetricProvider "),
    ('{"preflight": {"skewDeadlineSeconds": 4294967296}}',
     "unable to parse autoscalerPolicy config json: unable to unmarshall autoscalerPolicy json string due to json: "
     "cannot unmarshal number 4294967296 into Go struct field AutoscalerPolicyPreflightConfig.preflight."
     "skewDeadlineSeconds of type int32 "),
    # a provider without serverAddress (null is a zero provider); OME names one at random, omerender the first
    ({"metricProviders": {"zeta": {}, "alpha": None}},
     'autoscalerPolicy config: metric provider "alpha" has no serverAddress'),
])
def test_what_the_loader_refuses(block, text):
    """parseAutoscalerPolicyConfig's errors, and getComponentConfig's wrapping of json.Unmarshal's."""
    assert load_error(block) == text


def test_a_refused_key_fails_the_render_at_the_configmap(F):
    """parseAutoscalerPolicyConfig "has no serverAddress", through the CLI: located at the ConfigMap and its key."""
    run = render_objects(list(F.values()) + [configmap({"metricProviders": {"p": {"serverAddress": ""}}})])
    assert (run.code, run.stdout) == (1, "")
    assert run.lines == [f'error: {CM_REF}: data.autoscalerPolicy: autoscalerPolicy config: metric provider "p" has '
                         f"no serverAddress"]


def test_unknown_fields_of_the_key_are_warnings(F):
    """json.Unmarshal skips them, as for the other keys (docs/how-to/cluster-config-and-ingress.md)."""
    run = ok(list(F.values()) + [configmap({"metricProviders": {}, "defaultProvider": "x"})])
    assert (f"warning: {CM_REF}: data.autoscalerPolicy: unknown field defaultProvider is ignored, as OME ignores it"
            in run.lines)


def test_config_shows_the_providers_and_the_preflight(tmp_path):
    """omerender config: the bindings as read, the preflight tunables as the loader filled them."""
    (tmp_path / "cm.yaml").write_text(yaml.safe_dump(configmap(providers())))
    run = run_cli("config", "-o", "json", str(tmp_path))
    assert run.code == 0, run.stderr
    rows = {r["setting"]: (r["value"], r["source"]) for r in json.loads(run.stdout)["settings"]}
    assert rows["autoscalerPolicy.metricProviders"] == (
        {"cluster-prometheus": {"serverAddress": ADDRESS, "authSecretRef": TOKEN}}, f"configmap {tmp_path}/cm.yaml")
    assert rows["autoscalerPolicy.preflight.memberGetTimeoutSeconds"] == (5, "OME default")
    assert rows["autoscalerPolicy.preflight.skewDeadlineSeconds"] == (900, "OME default")


def test_a_non_positive_preflight_value_shows_as_the_default(tmp_path):
    """parseAutoscalerPolicyConfig replaces it: the value shown is the loader's, and so is its source."""
    (tmp_path / "cm.yaml").write_text(yaml.safe_dump(configmap({"preflight": {"memberGetTimeoutSeconds": -1,
                                                                              "skewDeadlineSeconds": 60}})))
    run = run_cli("config", "-o", "json", str(tmp_path))
    rows = {r["setting"]: (r["value"], r["source"]) for r in json.loads(run.stdout)["settings"]}
    assert rows["autoscalerPolicy.preflight.memberGetTimeoutSeconds"] == (5, "OME default")
    assert rows["autoscalerPolicy.preflight.skewDeadlineSeconds"] == (60, f"configmap {tmp_path}/cm.yaml")
    assert rows["autoscalerPolicy.metricProviders"] == (None, "unset: OME fills nothing")


def test_an_auth_secret_ref_without_name_or_key_is_a_warning(F):
    """OME takes it (SecretKeySelector's fields are optional in JSON) and writes a TriggerAuthentication KEDA cannot
    use; omerender renders the same, and says so."""
    block = {"metricProviders": {"cluster-prometheus": {"serverAddress": ADDRESS, "authSecretRef": {"key": "t"}}}}
    run = ok(with_ref(F, queue_depth()) + [configmap(block)])
    assert run.lines[0] == (
        f'warning: {CM_REF}: data.autoscalerPolicy: metricProviders["cluster-prometheus"].authSecretRef needs a name '
        f"and a key: OME writes its TriggerAuthentication as given, and KEDA cannot read the token")
    auth, = of_kind(run, "TriggerAuthentication")
    assert auth["spec"]["secretTargetRef"] == [{"parameter": "bearerToken", "name": "", "key": "t"}]


def test_config_without_a_configmap_binds_nothing():
    run = run_cli("config", "-o", "json", "-", input="")
    rows = {r["setting"]: (r["value"], r["source"]) for r in json.loads(run.stdout)["settings"]}
    assert rows["autoscalerPolicy.metricProviders"] == (None, "chart default")


# ---------------------------------------------------------------- the trigger (render.go renderKeda)

def test_a_bound_provider_sets_the_server_address(F):
    """render_test.go TestRenderGolden: the binding's serverAddress; without authSecretRef no authenticationRef,
    no authModes and no TriggerAuthentication."""
    run = ok(with_ref(F, queue_depth()) + [configmap(providers(auth=False))])
    trigger, = run.find("ScaledObject")["spec"]["triggers"]
    assert trigger == {"type": "prometheus", "metricType": "AverageValue", "metadata": {
        "threshold": "5", "ignoreNullValues": "false", "serverAddress": ADDRESS,
        "query": 'sum(vllm:num_requests_waiting{namespace="llama-demo",inferenceservice="llama-3-2-3b-instruct",'
                 'component="engine"})'}}
    assert of_kind(run, "TriggerAuthentication") == []


def test_an_authenticated_provider_wires_its_trigger_authentication(F):
    """render.go renderKeda (authenticationRef, authModes "bearer") and policy.go EnsureTriggerAuthentications
    (the object: the provider's name, the consuming namespace, the secret key as bearerToken)."""
    run = ok(with_ref(F, queue_depth()) + [configmap(providers())])
    trigger, = run.find("ScaledObject")["spec"]["triggers"]
    assert trigger["authenticationRef"] == {"name": TA_NAME}
    assert (trigger["metadata"]["serverAddress"], trigger["metadata"]["authModes"]) == (ADDRESS, "bearer")
    assert of_kind(run, "TriggerAuthentication") == [{
        "apiVersion": "keda.sh/v1alpha1", "kind": "TriggerAuthentication",
        "metadata": {"name": TA_NAME, "namespace": "llama-demo"},
        "spec": {"secretTargetRef": [{"parameter": "bearerToken", "name": "prometheus-bearer", "key": "token"}]}}]


def test_one_trigger_authentication_per_namespace_and_provider(F):
    """EnsureTriggerAuthentications writes one object per provider and namespace, whichever InferenceServices and
    components use it: two InferenceServices (three components) in llama-demo share one, another namespace gets its
    own."""
    objects = with_ref(F, queue_depth()) + [configmap(providers())]
    router = F["isvc"]["spec"]["router"]
    del router["autoscaler"]   # the worked example's inline block would outrank the ref
    router["autoscalerPolicyRef"] = {"name": "queue-depth"}
    twin = copy.deepcopy(F["isvc"])
    twin["metadata"]["name"] = "llama-twin"
    elsewhere = copy.deepcopy(F["isvc"])
    elsewhere["metadata"]["namespace"] = "team-b"
    del elsewhere["spec"]["router"]["autoscalerPolicyRef"]
    run = ok(objects + [twin, elsewhere, queue_depth(namespace="team-b")])
    assert len(of_kind(run, "ScaledObject")) == 5
    assert [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in of_kind(run, "TriggerAuthentication")] == [
        ("llama-demo", TA_NAME), ("team-b", TA_NAME)]


def test_an_input_trigger_authentication_of_that_name_is_a_duplicate(F):
    """OME would overwrite its spec (EnsureTriggerAuthentications updates a differing one): two writers."""
    mine = {"apiVersion": "keda.sh/v1alpha1", "kind": "TriggerAuthentication",
            "metadata": {"name": TA_NAME, "namespace": "llama-demo"}, "spec": {}}
    run = render_objects(with_ref(F, queue_depth()) + [configmap(providers()), mine])
    assert run.code == 1
    assert any(f"TriggerAuthentication llama-demo/{TA_NAME} would be written twice" in line for line in run.lines)


def test_an_inline_trigger_referencing_the_name_gets_no_trigger_authentication(F):
    """componentreconciler dispatch: EnsureTriggerAuthentications runs only for a policy-rendered block."""
    F["isvc"]["spec"]["engine"]["autoscaler"] = {"class": "KEDA", "keda": {"triggers": [{
        "type": "prometheus", "authenticationRef": {"name": TA_NAME},
        "metadata": {"serverAddress": ADDRESS, "query": "up", "threshold": "1"}}]}}
    run = ok(list(F.values()) + [configmap(providers())])
    assert of_kind(run, "TriggerAuthentication") == []


def test_an_unbound_provider_names_where_to_bind_it(F):
    """render_test.go TestRenderRejections "unbound provider": OME holds with PolicyInvalid."""
    run = render_objects(with_ref(F, queue_depth(providerRef={"name": "nowhere"})) + [configmap(providers())])
    assert run.lines == [isvc_error(
        'engine: PolicyInvalid: policy queue-depth: trigger 0 (prometheus): metric provider "nowhere" is not bound on '
        f"this cluster (bind it in {CM_REF}: data.metricProviders, with its serverAddress)")]


def test_without_a_configmap_no_provider_is_bound(F):
    """TestRenderRejections "unbound provider" with the Helm chart's ConfigMap, which sets no autoscalerPolicy."""
    run = render_objects(with_ref(F, queue_depth()))
    assert run.lines == [isvc_error(
        'engine: PolicyInvalid: policy queue-depth: trigger 0 (prometheus): metric provider "cluster-prometheus" is '
        "not bound on this cluster (without an inferenceservice-config among the inputs omerender uses the Helm "
        "chart's, which binds no metric provider: add your cluster's ConfigMap, see "
        "docs/how-to/cluster-config-and-ingress.md)")]


def test_a_provider_name_that_cannot_name_an_object_is_an_error(F):
    """The API server would refuse OME's TriggerAuthentication, and the dispatch fails."""
    block = {"metricProviders": {"Prom_1": {"serverAddress": ADDRESS, "authSecretRef": TOKEN}}}
    run = render_objects(with_ref(F, queue_depth(providerRef={"name": "Prom_1"})) + [configmap(block)])
    assert run.code == 1
    assert any("rendered TriggerAuthentication llama-demo/ome-metric-provider-Prom_1:" in line for line in run.lines)


def test_the_worked_example_is_unchanged_by_an_unused_binding():
    """A binding no trigger uses writes nothing: the chart's ConfigMap with the key added renders as without it."""
    objects = list(copy.deepcopy(worked_example()).values())
    chart = yaml.safe_load((ROOT / "omerender" / "ome" / "cluster" / "chart_defaults.yaml").read_text())
    bound = configmap(providers())
    bound["data"] = {**chart["data"], **bound["data"]}
    assert ok(objects + [bound]).objects == ok(objects).objects


# ---------------------------------------------------------------- the top-level key (OME v1.3)

OTHER = "http://other-prometheus.monitoring.svc:9090"


def top_level(bindings: dict, nested: dict | None = None) -> dict:
    """canary-analysis.md "Metric provider bindings": the top-level metricProviders key of the ConfigMap."""
    cm = configmap(nested or {})
    cm["data"] = {"metricProviders": json.dumps(bindings), **({"autoscalerPolicy": json.dumps(nested)} if nested
                                                               else {})}
    return cm


def test_the_top_level_key_binds_the_providers(F):
    run = ok(with_ref(F, queue_depth()) + [top_level(providers()["metricProviders"])])
    trigger = run.find("ScaledObject")["spec"]["triggers"][0]
    assert trigger["metadata"]["serverAddress"] == ADDRESS
    assert trigger["authenticationRef"] == {"name": TA_NAME}
    assert run.find("TriggerAuthentication", TA_NAME)["spec"]["secretTargetRef"] == [
        {"parameter": "bearerToken", **TOKEN}]


def test_the_top_level_key_wins_over_the_nested_one(F):
    nested = {"metricProviders": {"cluster-prometheus": {"serverAddress": OTHER, "authSecretRef": TOKEN}}}
    run = ok(with_ref(F, queue_depth()) + [top_level({"cluster-prometheus": {"serverAddress": ADDRESS}}, nested)])
    trigger = run.find("ScaledObject")["spec"]["triggers"][0]
    assert trigger["metadata"]["serverAddress"] == ADDRESS and "authenticationRef" not in trigger
    assert [o for o in run.objects if o["kind"] == "TriggerAuthentication"] == []
    assert f"warning: {CM_REF}: data.autoscalerPolicy: metricProviders is not read: the top-level metricProviders " \
           "key binds the providers, and OME reads this one only while that key is absent; move the bindings " \
           "there" in run.lines


def test_a_blank_top_level_key_binds_none_even_beside_the_nested_one(F):
    cm = top_level({}, providers())
    cm["data"]["metricProviders"] = " "
    run = render_objects(with_ref(F, queue_depth()) + [cm])
    assert run.code == 1
    assert run.lines[-1].endswith('metric provider "cluster-prometheus" is not bound on this cluster (bind it in '
                                  f'{CM_REF}: data.metricProviders, with its serverAddress)')


def test_a_top_level_binding_without_an_address_is_an_error(F):
    run = render_objects(with_ref(F, queue_depth()) + [top_level({"cluster-prometheus": {"headers": {"a": "b"}}})])
    assert (run.code, run.stdout) == (1, "")
    assert run.lines == [f'error: {CM_REF}: data.metricProviders: metricProviders config: metric provider '
                         '"cluster-prometheus" has no serverAddress']


def test_a_policy_that_outranks_a_legacy_hpa_annotation_leaves_keda_on_the_scaled_object(F):
    """OME's buildComponentMeta: the legacy ome.io/autoscalerClass on the scaler names the class that won."""
    F["isvc"]["metadata"].setdefault("annotations", {})["ome.io/autoscalerClass"] = "hpa"
    del F["isvc"]["spec"]["router"]["autoscaler"]   # an inline block beside the annotation is a conflict
    run = ok(with_ref(F, queue_depth()) + [top_level(providers()["metricProviders"])])
    assert run.find("ScaledObject")["metadata"]["annotations"]["ome.io/autoscalerClass"] == "keda"
