"""OME's cluster configuration, the ConfigMap inferenceservice-config, as an input (issue 26).

Cases ported from OME v1.3 name their Go test: ome-projects/ome at commit 4dfb96b1a473d68f5c0da4ccdc17b313069d59bb,
pkg/controller/v1beta1/controllerconfig/configmap_test.go (here "configmap_test.go") and
pkg/controller/v1beta1/inferenceservice/specdefaults/specdefaults_test.go ("specdefaults_test.go").
"""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml

from catalog import completed_model, isvc_for, load_runtime, models, paired_model_name, runtime_files
from conftest import CHART_DEFAULTS_INFO, FIXTURES, ROOT, load_yaml, render_objects, run_cli, validate_k8s
from omerender.ome.cluster import CHART_DEFAULTS
from omerender.ome.cluster.configmap import parse_data
from omerender.ome.cluster.parse import ConfigError

CHART_FILE = ROOT / "omerender" / "ome" / "cluster" / "chart_defaults.yaml"
QUICKSTART = [o for p in sorted((FIXTURES / "quickstart").glob("*.yaml")) if p.name != "kustomization.yaml"
              for o in load_yaml(p)]
CM_REF = "<stdin>: ConfigMap ome/inferenceservice-config"
CHART_DATA = yaml.safe_load(CHART_FILE.read_text())["data"]


OLDER_OME = "which OME v1.3's Helm chart writes"  # the info of a ConfigMap lacking chart keys


def configmap(data: dict | None, namespace: str | None = "ome", name: str = "inferenceservice-config",
              **extra) -> dict:
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, **({"data": data} if data is not None else {}),
            **extra}


def deploy(**fields) -> str:
    return json.dumps({"defaultDeploymentMode": "RawDeployment", **fields})


def quickstart(engine: dict | None = None, runtime_engine: dict | None = None) -> list[dict]:
    objects = copy.deepcopy(QUICKSTART)
    for obj in objects:
        if obj["kind"] == "InferenceService":
            obj["spec"]["engine"] = engine if engine is not None else {}
        if obj["kind"] == "ServingRuntime" and runtime_engine:
            obj["spec"]["engineConfig"].update(runtime_engine)
    return objects


def render(objects: list[dict], data: dict | None = None, *flags: str):
    return render_objects(objects + ([configmap(data)] if data is not None else []), *flags)


def parse(data: dict):
    return parse_data(data, "test", "test.yaml")[0]


def parse_error(data: dict) -> str:
    with pytest.raises(ConfigError) as err:
        parse_data(data, "test", "test.yaml")
    return err.value.text


# ---------------------------------------------------------------- the chart's ConfigMap is today's behaviour

def _catalog_inputs() -> list[dict]:
    """Every catalog runtime with its model and an InferenceService, in one input (models renamed per runtime)."""
    objects, seen = [], set()
    for i, path in enumerate(runtime_files()):
        runtime = load_runtime(path)
        if runtime["metadata"]["name"] in seen | {"srt-c4ai-command-r-v01"}:
            continue  # a name in two files; an invalid placeholder in its chat template (test_catalog_sweep)
        seen.add(runtime["metadata"]["name"])
        name = paired_model_name(runtime)
        objects.append(runtime)
        if name:
            model = completed_model(models()[name], runtime)
            name = model["metadata"]["name"] = f"{name}-{i}"
            objects.append(model)
        objects.append(isvc_for(runtime, name, namespace=f"sweep-{i}"))
    return objects


def test_the_whole_catalog_renders_the_same_with_the_chart_configmap_given_explicitly():
    objects = _catalog_inputs()
    without = render_objects(objects)
    with_chart = render_objects(objects + [load_yaml(CHART_FILE)[0]])
    assert without.code == 0, without.stderr
    assert with_chart.code == 0, with_chart.stderr
    assert with_chart.stdout == without.stdout
    # the same output; only the render without a ConfigMap says that the chart's defaults apply (issue 40)
    assert [CHART_DEFAULTS_INFO] + with_chart.lines == without.lines
    assert len(with_chart.objects) > 1000


def test_chart_defaults_are_the_values_omerender_hard_coded():
    deploy_config = CHART_DEFAULTS.deploy
    assert (deploy_config.min_replicas(), deploy_config.max_replicas("engine"), deploy_config.max_replicas("decoder"),
            deploy_config.max_replicas("router")) == (1, 3, 3, 2)
    assert deploy_config.termination_grace_period_seconds == 600
    assert CHART_DEFAULTS.pod_disruption_budget.raw_deployment.as_spec() == {"maxUnavailable": 1}
    assert CHART_DEFAULTS.accelerator_resources == ("nvidia.com/gpu",)
    assert CHART_DEFAULTS.source == "the Helm chart's defaults"


def test_the_configmap_is_never_written_even_with_keep_inputs():
    for flags in ((), ("--keep-inputs",)):
        run = render(quickstart(), CHART_DATA, *flags)
        assert run.code == 0, run.stderr
        assert all(o["kind"] != "ConfigMap" for o in run.objects)


def test_server_fields_of_a_copied_configmap_are_accepted():
    copied = configmap(CHART_DATA)
    copied["metadata"].update({
        "resourceVersion": "482913", "uid": "0b4ab6a2-8d5e-4c3e-9d7e-3f1f3c2b9a11",
        "creationTimestamp": "2026-01-05T10:00:00Z",
        "managedFields": [{"manager": "helm", "operation": "Update", "apiVersion": "v1",
                           "time": "2026-01-05T10:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {}}}],
        "annotations": {"kubectl.kubernetes.io/last-applied-configuration": json.dumps(copied),
                        "meta.helm.sh/release-name": "ome"},
        "labels": {"app.kubernetes.io/managed-by": "Helm"}})
    run = render_objects(quickstart() + [copied])
    assert run.code == 0, run.stderr
    assert run.stdout == render_objects(quickstart()).stdout


def test_keys_omerender_does_not_read_are_not_refused():
    """configmap.go: canaryAnalysis, lifecycle, coordination, ... are read by other loaders, never here."""
    data = dict(CHART_DATA, canaryAnalysis='{"queryTimeout": 5}', lifecycle="not json at all",
                kedaConfig='{"enableKeda": true}', multicluster="{}")
    run = render(quickstart(), data)
    assert run.code == 0, run.stderr
    assert "ConfigMap" not in run.stderr


# ---------------------------------------------------------------- deploy: replicas and grace (specdefaults.go)

def _engine(run) -> tuple[dict, dict]:
    return (run.find("HorizontalPodAutoscaler", "llama-3-2-3b-instruct-engine")["spec"],
            run.find("Deployment", "llama-3-2-3b-instruct-engine")["spec"]["template"]["spec"])


def test_unset_bounds_come_from_config():
    """specdefaults_test.go TestEngine_ReplicaBounds "unset bounds come from config"."""
    run = render(quickstart(), {"deploy": deploy(replicas={"defaultMinReplicas": 2,
                                                           "defaultMaxReplicas": {"engine": 7}})})
    hpa, _ = _engine(run)
    assert (hpa["minReplicas"], hpa["maxReplicas"]) == (2, 7)


def test_authored_bounds_are_kept():
    """specdefaults_test.go TestEngine_ReplicaBounds "authored bounds are kept"."""
    run = render(quickstart({"minReplicas": 2, "maxReplicas": 8}),
                 {"deploy": deploy(replicas={"defaultMinReplicas": 1, "defaultMaxReplicas": {"engine": 3}})})
    hpa, _ = _engine(run)
    assert (hpa["minReplicas"], hpa["maxReplicas"]) == (2, 8)


def test_filled_max_is_raised_to_an_authored_min_above_it():
    """specdefaults_test.go TestEngine_ReplicaBounds "filled max is raised to an authored min above it"."""
    run = render(quickstart({"minReplicas": 5}), {"deploy": deploy(replicas={"defaultMaxReplicas": {"engine": 3}})})
    hpa, _ = _engine(run)
    assert (hpa["minReplicas"], hpa["maxReplicas"]) == (5, 5)


def test_runtime_bounds_win_over_the_config():
    """specdefaults.go: filled after the runtime merge, only where neither the InferenceService nor the runtime set
    them (the runtime's maxReplicas stays, the config's min fills the unset min)."""
    run = render(quickstart(runtime_engine={"maxReplicas": 6}),
                 {"deploy": deploy(replicas={"defaultMinReplicas": 2, "defaultMaxReplicas": {"engine": 3}})})
    hpa, _ = _engine(run)
    assert (hpa["minReplicas"], hpa["maxReplicas"]) == (2, 6)


def test_no_replica_config_leaves_the_bounds_to_omes_hpa_floor():
    """specdefaults_test.go TestEngine_ReplicaBounds "no config leaves bounds unset"; the HPA then gets min 1 and
    max 1 (hpa_reconciler_test.go TestCreateHPAFromComponentExt "predictor default hpa")."""
    run = render(quickstart(), {"deploy": deploy()})
    hpa, pod = _engine(run)
    assert (hpa["minReplicas"], hpa["maxReplicas"]) == (1, 1)
    assert pod["terminationGracePeriodSeconds"] == 30


def test_decoder_and_router_take_their_own_max():
    """specdefaults_test.go TestDecoderAndRouter_ReplicaBounds (router part)."""
    objects = quickstart()
    objects[[o["kind"] for o in objects].index("InferenceService")]["spec"]["router"] = {
        "runner": {"name": "router", "image": "ghcr.io/moirai-internal/sgl-router:0.1.9"}}
    run = render(objects, {"deploy": deploy(replicas={"defaultMinReplicas": 1, "defaultMaxReplicas": {
        "engine": 3, "decoder": 4, "router": 2}})})
    assert run.code == 0, run.stderr
    assert run.find("HorizontalPodAutoscaler", "llama-3-2-3b-instruct-router")["spec"]["maxReplicas"] == 2


def test_grace_period_fills_the_component_pod_spec():
    """specdefaults_test.go TestEngine_TerminationGracePeriod "fills the component pod spec"."""
    _, pod = _engine(render(quickstart(), {"deploy": deploy(terminationGracePeriodSeconds=900)}))
    assert pod["terminationGracePeriodSeconds"] == 900


def test_an_authored_grace_period_is_kept():
    """specdefaults_test.go TestEngine_TerminationGracePeriod "authored value is kept" (here from the runtime)."""
    run = render(quickstart(runtime_engine={"terminationGracePeriodSeconds": 1200}),
                 {"deploy": deploy(terminationGracePeriodSeconds=900)})
    _, pod = _engine(run)
    assert pod["terminationGracePeriodSeconds"] == 1200


# ---------------------------------------------------------------- podDisruptionBudget per deployment mode

def test_the_rawdeployment_policy_gives_every_component_its_pdb():
    """configmap_test.go TestInferenceServicesConfigFromConfigMapParsesPodDisruptionBudget "per mode policies"."""
    run = render(quickstart({"minReplicas": 2, "maxReplicas": 4}),
                 {"podDisruptionBudget": '{"rawDeployment": {"minAvailable": "50%"}, '
                                         '"omeNative": {"maxUnavailable": 1}}'})
    assert run.find("PodDisruptionBudget")["spec"]["minAvailable"] == "50%"


@pytest.mark.parametrize("text", ['{"rawDeployment": null, "omeNative": null}', " \n\t", None])
def test_no_rawdeployment_policy_means_no_pdb(text):
    """configmap_test.go TestInferenceServicesConfigFromConfigMapParsesPodDisruptionBudget "explicitly null modes",
    "empty key", "missing key"."""
    run = render(quickstart(), {"podDisruptionBudget": text} if text is not None else {})
    assert run.code == 0, run.stderr
    assert "PodDisruptionBudget" not in [o["kind"] for o in run.objects]


def test_a_component_budget_still_gives_a_pdb_without_a_policy():
    run = render(quickstart({"maxUnavailable": "25%"}), {})
    assert run.find("PodDisruptionBudget")["spec"]["maxUnavailable"] == "25%"


# ---------------------------------------------------------------- which ConfigMap, and its shape

def test_a_configmap_in_another_namespace_is_used_with_a_warning():
    run = render_objects(quickstart() + [configmap({"deploy": deploy(terminationGracePeriodSeconds=45)},
                                                   namespace="llm")])
    assert run.code == 0
    assert ("warning: <stdin>: ConfigMap llm/inferenceservice-config: OME reads inferenceservice-config from "
            "namespace ome, not llm; omerender uses this one as the cluster configuration") in run.lines
    assert _engine(run)[1]["terminationGracePeriodSeconds"] == 45


def test_two_configmaps_are_an_error_naming_both(tmp_path):
    for name in ("a.yaml", "b.yaml"):
        (tmp_path / name).write_text(yaml.safe_dump(configmap({})))
    run = run_cli("render", str(tmp_path))
    assert (run.code, run.stdout) == (1, "")
    assert run.lines == [
        f"error: {tmp_path}/b.yaml: ConfigMap ome/inferenceservice-config: two ConfigMaps inferenceservice-config "
        f"in the inputs: ConfigMap ome/inferenceservice-config ({tmp_path}/a.yaml) and ConfigMap "
        f"ome/inferenceservice-config ({tmp_path}/b.yaml); OME reads one, in namespace ome: keep one"]


def test_of_two_configmaps_the_one_in_namespace_ome_is_used():
    run = render_objects(quickstart() + [configmap({"deploy": deploy(terminationGracePeriodSeconds=45)}),
                                         configmap({}, namespace="llm")])
    assert run.code == 0
    assert ("warning: <stdin>: ConfigMap llm/inferenceservice-config: ConfigMap inferenceservice-config is not "
            "used: OME reads the one in namespace ome (<stdin>)") in run.lines
    assert _engine(run)[1]["terminationGracePeriodSeconds"] == 45


def test_a_near_miss_name_is_passed_through_with_a_warning():
    run = render_objects(quickstart() + [configmap({"deploy": "{}"}, name="inferenceservices-config")])
    assert run.code == 0
    assert ('warning: <stdin>: ConfigMap ome/inferenceservices-config: ConfigMap inferenceservices-config is not '
            'OME\'s cluster configuration, which is named "inferenceservice-config" (namespace ome): omerender '
            'passes it through and does not read it; did you mean "inferenceservice-config"?') in run.lines
    assert run.find("ConfigMap", "inferenceservices-config")


def test_a_data_value_that_is_not_a_string_is_an_error():
    run = render_objects(quickstart() + [configmap({"deploy": {"defaultDeploymentMode": "RawDeployment"}})])
    assert (run.code, run.stdout) == (1, "")
    assert run.lines == [f'error: {CM_REF}: data.deploy: Invalid value: "object": a ConfigMap\'s data values are '
                         "strings; write the JSON as a block (`deploy: |`)"]


def test_binary_data_is_an_error():
    run = render_objects(quickstart() + [configmap({}, binaryData={"deploy": "e30="})])
    assert run.lines == [f"error: {CM_REF}: binaryData: OME reads only data; move the keys to data, as strings"]
    assert run.code == 1


def test_a_configmap_without_data_configures_nothing():
    """configmap_test.go TestNewInferenceServicesConfig "valid empty config", TestNewDeployConfig "empty config":
    OME's own unconfigured behaviour, not the chart's."""
    run = render_objects(quickstart() + [configmap(None)])
    hpa, pod = _engine(run)
    assert (hpa["minReplicas"], hpa["maxReplicas"], pod["terminationGracePeriodSeconds"]) == (1, 1, 30)
    assert "PodDisruptionBudget" not in [o["kind"] for o in run.objects]


def test_unknown_duplicate_and_case_variant_json_keys_are_warnings():
    text = '{"defaultDeploymentMode": "RawDeployment", "TerminationGracePeriodSeconds": 50, "replica": {}, ' \
           '"terminationGracePeriodSeconds": 70, "terminationGracePeriodSeconds": 80}'
    run = render(quickstart(), {"deploy": text, "podDisruptionBudgets": "{}"})
    assert run.code == 0
    assert [line for line in run.lines if "ConfigMap" in line and OLDER_OME not in line] == [
        f"warning: {CM_REF}: data.deploy: terminationGracePeriodSeconds is given more than once; OME uses the last "
        "one",
        f'warning: {CM_REF}: data.deploy: unknown field replica is ignored, as OME ignores it; did you mean '
        '"replicas"?',
        f"warning: {CM_REF}: data.deploy: TerminationGracePeriodSeconds is read as terminationGracePeriodSeconds "
        "(OME matches field names ignoring case); write terminationGracePeriodSeconds",
        f'warning: {CM_REF}: data.podDisruptionBudgets: OME does not read a key podDisruptionBudgets; did you mean '
        '"podDisruptionBudget"?']
    assert _engine(run)[1]["terminationGracePeriodSeconds"] == 80


# ---------------------------------------------------------------- OME's load errors, exact (configmap.go)

def _render_error(data: dict) -> list[str]:
    run = render(quickstart(), data)
    assert (run.code, run.stdout) == (1, "")
    return run.lines


def test_a_load_error_names_the_file_the_configmap_and_the_key():
    """configmap_test.go TestNewDeployConfig "invalid json"."""
    assert _render_error({"deploy": "invalid json"}) == [
        f"error: {CM_REF}: data.deploy: unable to parse deploy config json: invalid character 'i' looking for "
        "beginning of value"]


@pytest.mark.parametrize("text, message", [
    # configmap_test.go TestNewDeployConfig "zero replica default rejected at config-load"
    (deploy(replicas={"defaultMinReplicas": 0}),
     "invalid deploy config, replicas.defaultMinReplicas must be > 0, got 0"),
    # configmap_test.go TestNewDeployConfig "negative per-component max default rejected at config-load"
    (deploy(replicas={"defaultMaxReplicas": {"router": -2}}),
     "invalid deploy config, replicas.defaultMaxReplicas.router must be > 0, got -2"),
    # configmap_test.go TestNewDeployConfig "zero termination grace rejected at config-load"
    (deploy(terminationGracePeriodSeconds=0),
     "invalid deploy config, terminationGracePeriodSeconds must be > 0, got 0"),
    # configmap_test.go TestNewDeployConfig "negative termination grace rejected at config-load"
    (deploy(terminationGracePeriodSeconds=-1),
     "invalid deploy config, terminationGracePeriodSeconds must be > 0, got -1"),
    ("{}", "invalid deploy config, defaultDeploymentMode is required"),
    ('{"defaultDeploymentMode": "OMENative"}', "invalid deployment mode. Supported default mode is RawDeployment"),
    (deploy(terminationGracePeriodSeconds="600"), "unable to parse deploy config json: json: cannot unmarshal string "
     "into Go struct field DeployConfig.terminationGracePeriodSeconds of type int64"),
    (deploy(replicas={"defaultMinReplicas": 1.5}), "unable to parse deploy config json: json: cannot unmarshal number "
     "1.5 into Go struct field ReplicasDefaultsConfig.replicas.defaultMinReplicas of type int"),
    (deploy(minReadySeconds=-1), "invalid deploy config, minReadySeconds must be >= 0, got -1"),
    ("", "unable to parse deploy config json: unexpected end of JSON input"),
])
def test_deploy_errors(text, message):
    """configmap_test.go TestNewDeployConfig (the cases named beside each row), and parseDeployConfig's other
    refusals."""
    assert parse_error({"deploy": text}) == message


def test_deploy_values_parsed():
    """configmap_test.go TestNewDeployConfig "replicas block parsed with per-component max defaults", "partial
    replicas block leaves omitted fields unconfigured", "termination grace default parsed", "omitted termination
    grace stays unconfigured"."""
    full = parse({"deploy": deploy(replicas={"defaultMinReplicas": 1, "defaultMaxReplicas": {
        "engine": 3, "decoder": 3, "router": 2}}, terminationGracePeriodSeconds=600)}).deploy
    assert (full.min_replicas(), full.max_replicas("engine"), full.max_replicas("decoder"),
            full.max_replicas("router"), full.termination_grace_period_seconds) == (1, 3, 3, 2, 600)
    partial = parse({"deploy": deploy(replicas={"defaultMaxReplicas": {"engine": 3}})}).deploy
    assert (partial.min_replicas(), partial.max_replicas("engine"), partial.max_replicas("decoder"),
            partial.max_replicas("router"), partial.termination_grace_period_seconds) == (None, 3, None, None, None)
    empty = parse({}).deploy
    assert (empty.default_deployment_mode, empty.replicas, empty.min_replicas()) == ("", None, None)


@pytest.mark.parametrize("text, message", [
    # configmap_test.go TestInferenceServicesConfigFromConfigMapRejectsInvalidPodDisruptionBudget, case by case
    ("{not-json", 'unable to parse "podDisruptionBudget" config json: invalid character \'n\' looking for beginning of '
                  "object key string"),
    ('{"rawDeployment": {"minAvailable": 1, "maxUnavailable": 1}}',
     "exactly one of podDisruptionBudget.rawDeployment.minAvailable or podDisruptionBudget.rawDeployment.maxUnavailable"
     " must be set"),
    ('{"omeNative": {"maxUnavailable": "101%"}}',
     "podDisruptionBudget.omeNative.maxUnavailable must be a non-negative integer or a percentage from 0% to 100%"),
    ('{"rawDeployment": {"maxUnavailable": 1}, "unexpected": {}}',
     'unable to parse "podDisruptionBudget" config json: json: unknown field "unexpected"'),
    ('{"rawDeployment": {"maxUnavailable": 1, "unexpected": 2}}',
     'unable to parse "podDisruptionBudget" config json: json: unknown field "unexpected"'),
    ('{"rawDeployment": {}}', "exactly one of podDisruptionBudget.rawDeployment.minAvailable or "
                              "podDisruptionBudget.rawDeployment.maxUnavailable must be set"),
    ('{"omeNative": {"maxUnavailable": null}}', "exactly one of podDisruptionBudget.omeNative.minAvailable or "
                                                "podDisruptionBudget.omeNative.maxUnavailable must be set"),
    ('{"rawDeployment": {"maxUnavailble": 1}}',
     'unable to parse "podDisruptionBudget" config json: json: unknown field "maxUnavailble"'),
    ('{"RawDeployment": {"maxUnavailable": 1}}',
     'unable to parse "podDisruptionBudget" config json: json: unknown field "RawDeployment"'),
    ('{"rawDeployment": {"MaxUnavailable": 1}}',
     'unable to parse "podDisruptionBudget" config json: json: unknown field "MaxUnavailable"'),
    ('{"rawDeployment": {"maxUnavailable": 1}, "rawDeployment": {"maxUnavailable": 2}}',
     'unable to parse "podDisruptionBudget" config json: json: duplicate field "rawDeployment"'),
    ('{"rawDeployment": {"maxUnavailable": 1, "maxUnavailable": 2}}',
     'unable to parse "podDisruptionBudget" config json: json: duplicate field "maxUnavailable"'),
    ('{"rawDeployment": {"maxUnavailable": 1}} {}', 'unable to parse "podDisruptionBudget" config json: multiple JSON '
                                                    "values"),
    ('{"rawDeployment": {"maxUnavailable": true}}', 'unable to parse "podDisruptionBudget" config json: json: cannot '
     "unmarshal bool into Go struct field PodDisruptionBudgetPolicy.rawDeployment.maxUnavailable of type int32"),
    ("[]", 'unable to parse "podDisruptionBudget" config json: expected JSON object'),
    ('{"rawDeployment": 3}', 'unable to parse "podDisruptionBudget" config json: expected JSON object or null'),
    ('{"rawDeployment": {"maxUnavailable": -1}}',
     "podDisruptionBudget.rawDeployment.maxUnavailable must be a non-negative integer or a percentage from 0% to 100%"),
])
def test_pdb_errors(text, message):
    """configmap_test.go TestInferenceServicesConfigFromConfigMapRejectsInvalidPodDisruptionBudget, each case with the
    whole message where the Go test checks a part of it."""
    assert parse_error({"podDisruptionBudget": text}) == message


@pytest.mark.parametrize("data, names", [
    # configmap_test.go TestInferenceServicesConfigFromConfigMapParsesAcceleratorResources and
    # TestAcceleratorResourceNames: absent, blank and empty fall back to nvidia.com/gpu
    ({}, ("nvidia.com/gpu",)),
    ({"acceleratorResources": " \n\t"}, ("nvidia.com/gpu",)),
    ({"acceleratorResources": "[]"}, ("nvidia.com/gpu",)),
    ({"acceleratorResources": '["nvidia.com/gpu", "amd.com/gpu", "google.com/tpu"]'},
     ("nvidia.com/gpu", "amd.com/gpu", "google.com/tpu")),
    ({"acceleratorResources": '["amd.com/gpu"]'}, ("amd.com/gpu",)),
])
def test_accelerator_resources(data, names):
    """configmap_test.go TestInferenceServicesConfigFromConfigMapParsesAcceleratorResources and
    TestAcceleratorResourceNames."""
    assert parse(data).accelerator_resources == names


def test_malformed_accelerator_resources():
    """configmap_test.go TestInferenceServicesConfigFromConfigMapParsesAcceleratorResources "malformed json"."""
    assert parse_error({"acceleratorResources": "not-json"}) == (
        "unable to parse \"acceleratorResources\" config json: invalid character 'o' in literal null (expecting 'u')")
    assert parse_error({"acceleratorResources": '"nvidia.com/gpu"'}) == (
        'unable to parse "acceleratorResources" config json: json: cannot unmarshal string into Go value of type '
        "[]string")


def test_ingress_valid_config():
    """configmap_test.go TestNewIngressConfig "valid config" (unknown localGateway keys are skipped, as Go does)."""
    ingress = parse({"ingress": json.dumps({
        "ingressGateway": "istio-ingress", "ingressService": "istio-ingress", "localGateway": "cluster-local-gateway",
        "localGatewayService": "cluster-local-gateway", "ingressDomain": "example.com", "ingressClassName": "nginx",
        "additionalIngressDomains": ["extra.example.com"],
        "domainTemplate": "{{ .Name }}.{{ .Namespace }}.{{ .IngressDomain }}", "urlScheme": "https",
        "pathTemplate": "/{{ .Namespace }}/{{ .Name }}", "perISVCSubdomain": True, "sharedHostPrefix": "serving",
        "omeIngressGatewayClass": "internal", "additionalIngressGateways": [
            {"omeIngressGateway": "envoy-gateway-system/ext-gw", "ingressDomain": "ext.example.com",
             "class": "external"}]})}).ingress
    assert (ingress.ingress_gateway, ingress.ingress_service, ingress.ingress_domain, ingress.ingress_class_name,
            ingress.url_scheme, ingress.per_isvc_subdomain, ingress.shared_host_prefix,
            ingress.ome_ingress_gateway_class) == ("istio-ingress", "istio-ingress", "example.com", "nginx", "https",
                                                   True, "serving", "internal")
    assert ingress.additional_ingress_domains == ("extra.example.com",)
    (gateway,) = ingress.additional_ingress_gateways
    assert (gateway.gateway, gateway.domain, gateway.gateway_class) == ("envoy-gateway-system/ext-gw",
                                                                        "ext.example.com", "external")


def test_ingress_default_values():
    """configmap_test.go TestNewIngressConfig "default values"."""
    ingress = parse({}).ingress
    assert (ingress.domain_template, ingress.ingress_domain, ingress.url_scheme, ingress.per_isvc_subdomain,
            ingress.shared_host_prefix, ingress.consistent_hash_headers) == (
        "{{ .Name }}.{{ .Namespace }}.{{ .IngressDomain }}", "example.com", "http", False, "", ("x-routing-key",))


LABEL_RULE = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
              "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
              "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')")


@pytest.mark.parametrize("extra, message", [
    # configmap_test.go TestNewIngressConfig "invalid primary gateway class rejected"
    ({"omeIngressGatewayClass": "Internal"},
     f'invalid ingress config - omeIngressGatewayClass "Internal" must be an RFC-1123 label: {LABEL_RULE}'),
    # "invalid additional gateway class rejected"
    ({"additionalIngressGateways": [{"omeIngressGateway": "envoy-gateway-system/ext-gw",
                                     "ingressDomain": "ext.example.com", "class": "ext_gw"}]},
     f'invalid ingress config - additionalIngressGateways[0].class "ext_gw" must be an RFC-1123 label: {LABEL_RULE}'),
    # "invalid per-namespace gateway class rejected"
    ({"namespaceIngressGateways": {"prod": {"primary": {
        "omeIngressGateway": "istio-system/prod-int-gw", "ingressDomain": "int.example.com",
        "class": "prod internal"}}}},
     'invalid ingress config - namespaceIngressGateways["prod"].primary.class "prod internal" must be an RFC-1123 '
     f"label: {LABEL_RULE}"),
    # "invalid path template": no ingressDomain beside it
    ({"pathTemplate": "{{ .Invalid }}"}, "invalid ingress config - ingressDomain is required if pathTemplate is given"),
    ({"pathTemplate": "/{{ .Name", "ingressDomain": "example.com"},
     "invalid ingress config, unable to parse pathTemplate: template: path-template:1: unclosed action"),
    ({"additionalIngressGateways": [{"class": 5}]},
     "unable to parse ingress config json: json: cannot unmarshal number into Go struct field "
     "IngressGatewaySpec.additionalIngressGateways.class of type string"),
])
def test_ingress_errors(extra, message):
    """configmap_test.go TestNewIngressConfig (the cases named beside each row)."""
    text = json.dumps({"ingressGateway": "istio-ingress", "ingressService": "istio-ingress", **extra})
    assert parse_error({"ingress": text}) == message


def test_ingress_missing_required_fields():
    """configmap_test.go TestNewIngressConfig "missing required fields"."""
    assert parse_error({"ingress": '{"ingressDomain": "example.com"}'}) == (
        "invalid ingress config - ingressGateway and ingressService are required")


def test_pod_monitor():
    monitor = parse({"podMonitor": json.dumps({"labels": {"scrape": "cluster"}, "relabelings": [
        {"sourceLabels": ["__meta_kubernetes_namespace"], "targetLabel": "k8s_namespace_name"}]})}).pod_monitor
    assert dict(monitor.labels) == {"scrape": "cluster"}
    assert monitor.relabelings[0].source_labels == ("__meta_kubernetes_namespace",)
    assert parse_error({"podMonitor": '{"labels": {"a": 1}}'}) == (
        'unable to parse "podMonitor" config json: json: cannot unmarshal number into Go struct field '
        "PodMonitorConfig.labels of type string")


# ---------------------------------------------------------------- Go's encoding/json, as OME's loader meets it

@pytest.mark.parametrize("text, message", [
    ('{"a" 1}', "invalid character '1' after object key"),
    ('{"a":1 "b"}', "invalid character '\"' after object key:value pair"),
    ("[1 2]", "invalid character '2' after array element"),
    ('{"a":tru}', "invalid character '}' in literal true (expecting 'e')"),
    ('{"a":-}', "invalid character '}' in numeric literal"),
    ('{"a":1.}', "invalid character '}' after decimal point in numeric literal"),
    ('{"a":1e}', "invalid character '}' in exponent of numeric literal"),
    ('{"a":"\\q"}', "invalid character 'q' in string escape code"),
    ('{"a":"\t"}', "invalid character '\\t' in string literal"),
    ('{"a":01}', "invalid character '1' after object key:value pair"),
    ('{"a":1}x', "invalid character 'x' after top-level value"),
    ('{"a":1,}', "invalid character '}' looking for beginning of object key string"),
    ("[1,]", "invalid character ']' looking for beginning of value"),
    ('{"a":"é', "unexpected end of JSON input"),
    ("{\"a\":'x'}", "invalid character '\\'' looking for beginning of value"),
    ("[" * 10001, "invalid character '[' exceeded max depth"),
])
def test_json_syntax_errors_are_gos(text, message):
    """configmap_test.go TestGetComponentConfig "invalid json", with the scanner's exact message (encoding/json
    scanner.go) for each kind of malformed input."""
    assert parse_error({"deploy": text}) == f"unable to parse deploy config json: {message}"


def test_json_keys_match_fields_ignoring_case_and_a_repeated_object_merges():
    deploy_config = parse({"deploy": '{"DEFAULTDEPLOYMENTMODE": "RawDeployment", '
                                     '"replicas": {"defaultMinReplicas": 2}, '
                                     '"replicas": {"defaultMaxReplicas": {"engine": 4}}}'}).deploy
    assert (deploy_config.min_replicas(), deploy_config.max_replicas("engine")) == (2, 4)


def test_a_deeply_nested_value_is_refused_quickly():
    text = '{"x":' * 5000 + "1" + "}" * 5000
    config = parse({"deploy": '{"defaultDeploymentMode": "RawDeployment", "y": ' + text + "}"})
    assert config.deploy.default_deployment_mode == "RawDeployment"


# ---------------------------------------------------------------- the shells: KRM function, build, diff

def test_the_krm_function_reads_the_configmap_among_its_items():
    items = quickstart() + [configmap({"deploy": deploy(terminationGracePeriodSeconds=45)})]
    resource_list = {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items}
    run = run_cli("fn", input=yaml.safe_dump(resource_list))
    assert run.code == 0, run.stderr
    out = yaml.safe_load(run.stdout)
    kinds = [o["kind"] for o in out["items"]]
    assert "ConfigMap" not in kinds
    deployment = next(o for o in out["items"] if o["kind"] == "Deployment")
    assert deployment["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] == 45


def _write(directory: Path, objects: list[dict]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "all.yaml").write_text(yaml.safe_dump_all(objects))
    return directory


def test_diff_shows_a_configmap_change_as_its_effect_on_every_inferenceservice(tmp_path):
    base = _write(tmp_path / "base", quickstart() + [configmap(CHART_DATA)])
    head_data = dict(CHART_DATA, deploy=deploy(replicas={"defaultMinReplicas": 1, "defaultMaxReplicas": {
        "engine": 6}}, terminationGracePeriodSeconds=600))
    head = _write(tmp_path / "head", quickstart() + [configmap(head_data)])
    run = run_cli("diff", str(base), str(head), "--format", "json")
    assert run.code == 0, run.stderr
    report = json.loads(run.stdout)
    (isvc,) = report["inferenceServices"]
    assert (isvc["namespace"], isvc["name"], isvc["status"], isvc["rollout"]) == (
        "llama-demo", "llama-3-2-3b-instruct", "changed", False)
    (changed,) = isvc["objects"]
    assert changed["kind"] == "HorizontalPodAutoscaler"
    assert "spec.maxReplicas" in json.dumps(changed)
    assert report["objects"] == []
    assert report["clusterConfig"] == [{"setting": "deploy.replicas.defaultMaxReplicas.engine", "base": 3, "head": 6},
                                       {"setting": "deploy.replicas.defaultMaxReplicas.decoder", "base": 3,
                                        "head": None},
                                       {"setting": "deploy.replicas.defaultMaxReplicas.router", "base": 2,
                                        "head": None}]
    text = run_cli("diff", str(base), str(head))
    assert text.stdout.endswith("\nCluster configuration (inferenceservice-config):\n"
                                "  deploy.replicas.defaultMaxReplicas.engine: 3 -> 6\n"
                                "  deploy.replicas.defaultMaxReplicas.decoder: 3 -> none\n"
                                "  deploy.replicas.defaultMaxReplicas.router: 2 -> none\n")
    markdown = run_cli("diff", str(base), str(head), "--format", "markdown").stdout
    assert ("<details><summary>Cluster configuration (inferenceservice-config): 3 settings differ</summary>\n\n"
            "- `deploy.replicas.defaultMaxReplicas.engine`: `3` → `6`\n") in markdown


def test_diff_without_a_cluster_change_has_no_cluster_section(tmp_path):
    base = _write(tmp_path / "base", quickstart())
    head = _write(tmp_path / "head", quickstart() + [configmap(CHART_DATA)])
    run = run_cli("diff", str(base), str(head), "--format", "json")
    assert "clusterConfig" not in json.loads(run.stdout)
    assert "Cluster configuration" not in run_cli("diff", str(base), str(head)).stdout


def test_rendered_objects_with_a_configured_cluster_validate():
    run = render(quickstart({"minReplicas": 2}), {
        "deploy": deploy(replicas={"defaultMaxReplicas": {"engine": 3}}, terminationGracePeriodSeconds=900),
        "podDisruptionBudget": '{"rawDeployment": {"minAvailable": 1}}'})
    assert run.code == 0, run.stderr
    for obj in run.objects:
        validate_k8s(obj)


def _parallelism(run) -> list:
    runner = _engine(run)[1]["containers"][0]
    return [e for e in runner.get("env") or [] if e["name"] == "PARALLELISM_SIZE"]


def test_accelerator_resources_decide_what_counts_as_gpus_for_parallelism_size():
    """OME v1.3 GetGpuCountFromContainer (pkg/utils): the first configured name the runner has, limits before
    requests; the quickstart runner asks for nvidia.com/gpu only."""
    assert _parallelism(render(quickstart(), {})) == [{"name": "PARALLELISM_SIZE", "value": "1"}]
    assert _parallelism(render(quickstart(), {"acceleratorResources": '["amd.com/gpu"]'})) == []
    two = {"limits": {"amd.com/gpu": "2", "nvidia.com/gpu": "1"}, "requests": {"amd.com/gpu": "2",
                                                                               "nvidia.com/gpu": "1"}}
    run = render(quickstart(runtime_engine={"runner": {**_runner(), "resources": two}}),
                 {"acceleratorResources": '["amd.com/gpu", "nvidia.com/gpu"]'})
    assert _parallelism(run) == [{"name": "PARALLELISM_SIZE", "value": "2"}]


def _runner() -> dict:
    runtime = next(o for o in QUICKSTART if o["kind"] == "ServingRuntime")
    return copy.deepcopy(runtime["spec"]["engineConfig"]["runner"])


# ---------------------------------------------------------------- omerender config

def _config_json(*args: str, input: str | None = None) -> dict:
    run = run_cli("config", "-o", "json", *args, input=input)
    assert run.code == 0, run.stderr
    return json.loads(run.stdout)


def test_config_without_a_configmap_shows_the_chart_defaults():
    shown = _config_json(str(FIXTURES / "quickstart"))
    assert (shown["source"], shown["file"]) == ("the Helm chart's defaults", None)
    rows = {r["setting"]: (r["value"], r["source"]) for r in shown["settings"]}
    assert rows["deploy.terminationGracePeriodSeconds"] == (600, "chart default")
    assert rows["deploy.replicas.defaultMaxReplicas.router"] == (2, "chart default")
    assert rows["podDisruptionBudget.rawDeployment"] == ({"maxUnavailable": 1}, "chart default")


def test_config_names_the_configmap_file_for_what_it_sets(tmp_path):
    (tmp_path / "cm.yaml").write_text(yaml.safe_dump(configmap({
        "deploy": deploy(replicas={"defaultMinReplicas": 2}),
        "ingress": '{"ingressGateway": "a/b", "ingressService": "svc"}'})))
    rows = {r["setting"]: (r["value"], r["source"]) for r in _config_json(str(tmp_path))["settings"]}
    source = f"configmap {tmp_path}/cm.yaml"
    assert rows["deploy.replicas.defaultMinReplicas"] == (2, source)
    assert rows["deploy.replicas.defaultMaxReplicas.engine"] == (None, "unset: OME fills nothing")
    assert rows["deploy.terminationGracePeriodSeconds"] == (None, "unset: OME fills nothing")
    assert rows["ingress.ingressGateway"] == ("a/b", source)
    assert rows["ingress.ingressDomain"] == ("example.com", "OME default")
    assert rows["acceleratorResources"] == (["nvidia.com/gpu"], "OME default")


def test_config_table_and_ingress_annotation_overrides(tmp_path):
    objects = quickstart()
    isvc = next(o for o in objects if o["kind"] == "InferenceService")
    isvc["metadata"]["annotations"] = {"ome.io/ingress-domain": "other.example.com", "unrelated": "x"}
    (tmp_path / "all.yaml").write_text(yaml.safe_dump_all(objects))
    run = run_cli("config", "--isvc", "llama-3-2-3b-instruct", "-n", "llama-demo", str(tmp_path))
    assert run.code == 0, run.stderr
    assert run.lines == ["Cluster configuration: the Helm chart's defaults"]
    lines = run.stdout.splitlines()
    assert lines[0].split() == ["SETTING", "VALUE", "SOURCE"]
    assert lines[6].split() == ["deploy.terminationGracePeriodSeconds", "600", "chart", "default"]
    assert lines[-1].split()[:2] == ["ome.io/ingress-domain", "other.example.com"]
    assert lines[-1].endswith(f"annotation on InferenceService llama-demo/llama-3-2-3b-instruct ({tmp_path}/all.yaml),"
                              " over the cluster's ingress settings")


def test_config_of_a_missing_isvc_and_of_a_bad_configmap_fail():
    run = run_cli("config", "--isvc", "nope", str(FIXTURES / "quickstart"))
    assert (run.code, run.stdout, run.lines) == (1, "", ["error: no InferenceService default/nope in the inputs"])
    run = run_cli("config", "-", input=yaml.safe_dump(configmap({"deploy": "{"})))
    assert (run.code, run.stdout) == (1, "")
    assert run.lines == [f"error: {CM_REF}: data.deploy: unable to parse deploy config json: unexpected end of JSON "
                         "input"]


def test_config_help_has_an_example():
    run = run_cli("config", "--help")
    assert run.code == 0
    assert "omerender config --isvc llama-3-2-3b-instruct -n llama-demo deploy/" in run.stdout


def test_build_reads_the_configmap_a_kustomization_lists(tmp_path):
    app = tmp_path / "app"
    app.mkdir()
    for name in ("namespace.yaml", "model.yaml", "runtime.yaml", "isvc.yaml"):
        (app / name).write_text((FIXTURES / "quickstart" / name).read_text())
    (app / "cluster.yaml").write_text(yaml.safe_dump(configmap({"deploy": deploy(terminationGracePeriodSeconds=45)})))
    (app / "kustomization.yaml").write_text(yaml.safe_dump({
        "apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "commonAnnotations": {"team": "a"},
        "resources": ["namespace.yaml", "model.yaml", "runtime.yaml", "isvc.yaml", "cluster.yaml"]}))
    run = run_cli("build", str(app), "--root", str(tmp_path))
    assert run.code == 0, run.stderr
    assert "ConfigMap" not in [o["kind"] for o in run.objects]
    assert run.find("Deployment")["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] == 45


def test_a_flood_of_unknown_fields_is_one_warning():
    text = "{" + ",".join(f'"k{i}": 1' for i in range(1000)) + ', "defaultDeploymentMode": "RawDeployment"}'
    run = render(quickstart(), {"deploy": text})
    assert run.code == 0
    assert [line for line in run.lines if "ConfigMap" in line and OLDER_OME not in line] == [
        f"warning: {CM_REF}: data.deploy: unknown fields k0, k1, k2, k3, k4, k5, k6, k7, k8, k9 and 990 more are ignored, as OME ignores them"]


def test_a_megabyte_of_json_in_a_data_value_is_read_or_refused():
    big = '{"defaultDeploymentMode": "RawDeployment", "x": [' + ",".join(['{"a": [1, "b"]}'] * 60000) + "]}"
    assert parse({"deploy": big}).deploy.default_deployment_mode == "RawDeployment"
    assert parse_error({"deploy": '{"defaultDeploymentMode": "RawDeployment", "terminationGracePeriodSeconds": '
                                  + "9" * 1_000_000 + "}"}) == (
        "unable to parse deploy config json: json: cannot unmarshal number 99999999999999999999999999999999... "
        "(1000000 characters) into Go struct field DeployConfig.terminationGracePeriodSeconds of type int64")


def test_a_configmap_of_another_api_version_is_not_read():
    odd = configmap({"deploy": "{"}, apiVersion="v2")
    odd["apiVersion"] = "v2"
    run = render_objects(quickstart() + [odd])
    assert run.code == 0, run.stderr
    assert ("warning: <stdin>: ConfigMap ome/inferenceservice-config: ConfigMap inferenceservice-config has apiVersion "
            "v2, not v1: omerender passes it through and does not read it as OME's cluster configuration") in run.lines


def test_config_prints_the_configmaps_warnings():
    run = run_cli("config", "-", input=yaml.safe_dump(configmap({"deploy": deploy(replica=1)}, namespace="llm")))
    assert run.code == 0, run.stderr
    assert [line for line in run.lines if OLDER_OME not in line] == [
        "warning: <stdin>: ConfigMap llm/inferenceservice-config: OME reads inferenceservice-config from namespace "
        "ome, not llm; omerender uses this one as the cluster configuration",
        "warning: <stdin>: ConfigMap llm/inferenceservice-config: data.deploy: unknown field replica is ignored, as "
        'OME ignores it; did you mean "replicas"?',
        "Cluster configuration: <stdin>: ConfigMap llm/inferenceservice-config"]


# The data of ome-projects/ome config/configmap/inferenceservice.yaml (commit 4bb220e4c3094c10d9c9bdfe3d9355b366d7ff82),
# the ConfigMap of a cluster installed from manifests rather than the Helm chart (keys omerender reads, and two it
# does not).
MANIFESTS_DATA = {
    "ingress": '{"ingressGateway" : "knative-serving/knative-ingress-gateway", "ingressService" : '
               '"istio-ingressgateway.istio-system.svc.cluster.local", "omeIngressGateway" : "", "ingressDomain"  : '
               '"svc.cluster.local", "ingressClassName" : "istio", "additionalIngressDomains" : null, '
               '"domainTemplate": "{{ .Name }}.{{ .Namespace }}.{{ .IngressDomain }}", "urlScheme": "http", '
               '"disableIstioVirtualHost": false, "pathTemplate": "", "disableIngressCreation": true, '
               '"enableGatewayAPI": false}',
    "deploy": '{"defaultDeploymentMode": "RawDeployment"}',
    "kedaConfig": '{"enableKeda" : true, "scalingThreshold": "10"}',
    "lifecycle": '{"scaleUpPodBatchSize": 100, "instanceReadyTimeout": "30m"}',
}


def test_a_cluster_installed_from_manifests_gets_no_replica_grace_or_pdb_defaults():
    """The issue's case: the same InferenceService on a cluster whose ConfigMap sets no deploy.replicas,
    terminationGracePeriodSeconds or podDisruptionBudget gets OME's unconfigured objects, not the chart's."""
    run = render(quickstart(), MANIFESTS_DATA)
    assert run.code == 0, run.stderr
    hpa, pod = _engine(run)
    assert (hpa["minReplicas"], hpa["maxReplicas"], pod["terminationGracePeriodSeconds"]) == (1, 1, 30)
    assert "PodDisruptionBudget" not in [o["kind"] for o in run.objects]
    # the keys the v1.3 chart writes and a manifests install lacks: one info naming what OME v1.3 does without them
    assert [line for line in run.lines if "ConfigMap" in line] == [
        f"info: {CM_REF}: data: lacks podDisruptionBudget, acceleratorResources, metricsAggregator, which OME v1.3's "
        "Helm chart writes (this ConfigMap may come from an older OME): OME v1.3 uses its defaults instead: without "
        "podDisruptionBudget, a component that sets no budget gets no PodDisruptionBudget; without "
        "acceleratorResources, nvidia.com/gpu is the only resource counted as a GPU; without metricsAggregator, each "
        'pod gets ome.io/enable-metric-aggregation and ome.io/enable-prometheus-scraping set to ""']


def test_config_isvc_shows_the_ingress_settings_in_effect_and_their_sources():
    """`config --isvc` answers "what will this InferenceService get, and why": the annotation wins over the
    ConfigMap's ingressDomain, the rest comes from the ConfigMap, and the objects it renders are named."""
    text = (FIXTURES / "gateway-api" / "inputs.yaml").read_text().replace(
        "annotations: {example.com/owner: search-team}",
        "annotations: {example.com/owner: search-team, ome.io/ingress-domain: corp.example.net}")
    run = run_cli("config", "-o", "json", "--isvc", "llama-chat", "-n", "llama-demo", "-", input=text)
    assert run.code == 0, run.stderr
    rows = {r["setting"]: (r["value"], r["source"]) for r in json.loads(run.stdout)["settings"]}
    isvc = "InferenceService llama-demo/llama-chat"
    assert rows[f"{isvc}: renders"][0] == "HTTPRoutes and a BackendTrafficPolicy"
    assert rows[f"{isvc}: domain"] == ("corp.example.net", "annotation ome.io/ingress-domain")
    assert rows[f"{isvc}: sharedHostPrefix"] == ("llm", "configmap <stdin>")
    assert rows[f"{isvc}: gateway[0]"] == ("envoy-gateway-system/internal-gateway (corp.example.net)",
                                          "configmap <stdin>")
    assert rows[f"{isvc}: gateway[1]"] == ("envoy-gateway-system/external-gateway (example.org)", "configmap <stdin>")
    plain = run_cli("config", "-o", "json", "--isvc", "llama-3-2-3b-instruct", "-n", "llama-demo",
                    str(FIXTURES / "quickstart"))
    rows = {r["setting"]: (r["value"], r["source"]) for r in json.loads(plain.stdout)["settings"]}
    assert rows["InferenceService llama-demo/llama-3-2-3b-instruct: renders"][0] == "the external Service"
    assert rows["InferenceService llama-demo/llama-3-2-3b-instruct: ingress creation"] == ("off", "chart default")
    local = (FIXTURES / "quickstart" / "isvc.yaml").read_text().replace(
        "metadata:\n", "metadata:\n  labels: {networking.knative.dev/visibility: cluster-local}\n", 1)
    texts = [p.read_text() for p in sorted((FIXTURES / "quickstart").glob("*.yaml")) if p.name not in ("isvc.yaml", "kustomization.yaml")]
    run = run_cli("config", "-o", "json", "--isvc", "llama-3-2-3b-instruct", "-n", "llama-demo", "-",
                  input="\n---\n".join([*texts, local]))
    assert run.code == 0, run.stderr
    rows = {r["setting"]: r["value"] for r in json.loads(run.stdout)["settings"]}
    assert rows["InferenceService llama-demo/llama-3-2-3b-instruct: renders"] == "nothing (cluster-local)"
