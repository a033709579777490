"""Messages that lead to the fix (issue 32): each asserts its exact text and its ``file:line:column``."""
from __future__ import annotations

import shutil

import pytest
import yaml

from conftest import FIXTURES, run_cli
from omerender.ome.cluster.configmap import ABSENT, CHART_FILE

CM_HEAD = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: inferenceservice-config
  namespace: ome
data:
"""
CM = "ConfigMap ome/inferenceservice-config"


def _render_with(tmp_path, data: str):
    app = tmp_path / "app"
    shutil.copytree(FIXTURES / "quickstart", app)
    (app / "cluster.yaml").write_text(CM_HEAD + data)
    return run_cli("render", str(app)), app / "cluster.yaml"


@pytest.mark.parametrize("data, line_column, error", [
    # a literal block: the line inside the block, the column of the character past "tru"
    ('  deploy: |\n    {\n      "defaultDeploymentMode": "RawDeployment",\n      "x": tru\n    }\n',
     "10:15", "data.deploy: unable to parse deploy config json: invalid character '\\n' in literal true "
              "(expecting 'e')"),
    # a one-line single-quoted value: the column of the comma
    ("  ingress: '{\"ingressGateway\": \"a/b\",, \"ingressService\": \"s\"}'\n", "7:38",
     "data.ingress: unable to parse ingress config json: invalid character ',' looking for beginning of object "
     "key string"),
    # the end of a block that stops inside the object
    ('  podDisruptionBudget: |\n    {"rawDeployment": {"minAvailable": 1}\n', "8:42",
     'data.podDisruptionBudget: unable to parse "podDisruptionBudget" config json: unexpected EOF'),
    # a double-quoted value with escapes: the key's line (its characters are not the file's)
    ('  deploy: "{\\"defaultDeploymentMode\\": x}"\n', "7:3",
     "data.deploy: unable to parse deploy config json: invalid character 'x' looking for beginning of value"),
])
def test_a_json_syntax_error_in_a_data_key_is_placed_inside_the_configmap_file(tmp_path, data, line_column, error):
    run, file = _render_with(tmp_path, data)
    assert (run.code, run.stdout) == (1, "")
    assert run.placed_lines == [f"error: {file}:{line_column}: {CM}: {error}"]


def test_unknown_fields_near_misses_first_each_with_did_you_mean(tmp_path):
    run, file = _render_with(tmp_path, '  ingress: |\n    {"ingressGateway": "a/b", "ingressService": "s", '
                                       '"enabelGatewayAPI": true, "foo": 1, "ingresDomain": "x", "bar": 2}\n')
    assert run.code == 0, run.stderr
    assert [line for line in run.placed_lines if CM in line and "Helm chart writes" not in line] == [
        f'warning: {file}:8:54: {CM}: data.ingress: unknown field enabelGatewayAPI is ignored, as OME ignores it; '
        'did you mean "enableGatewayAPI"?',
        f'warning: {file}:8:90: {CM}: data.ingress: unknown field ingresDomain is ignored, as OME ignores it; '
        'did you mean "ingressDomain"?',
        f"warning: {file}:8:80: {CM}: data.ingress: unknown fields foo, bar are ignored, as OME ignores them"]


def test_a_nested_near_miss_names_its_path(tmp_path):
    run, file = _render_with(tmp_path, '  deploy: |\n    {"defaultDeploymentMode": "RawDeployment", '
                                       '"replicas": {"defaultMinReplica": 2}}\n')
    assert run.code == 0, run.stderr
    assert [line for line in run.placed_lines if CM in line and "Helm chart writes" not in line] == [
        f'warning: {file}:8:61: {CM}: data.deploy: unknown field replicas.defaultMinReplica is ignored, as OME '
        'ignores it; did you mean "replicas.defaultMinReplicas"?']


def _quickstart(tmp_path):
    app = tmp_path / "app"
    shutil.copytree(FIXTURES / "quickstart", app)
    return app


def test_missing_model_metadata_is_named_at_the_model_file_with_model_info_as_the_fix(tmp_path):
    app = _quickstart(tmp_path)
    model = app / "model.yaml"
    model.write_text(model.read_text().replace("    name: safetensors\n", "").split("  modelFramework:")[0])
    run = run_cli("render", str(app))
    assert (run.code, run.stdout) == (1, "")
    assert run.placed_lines == [
        f"error: {model}:20:3: ClusterBaseModel llama-3-2-3b-instruct: no supporting runtime found for model "
        "llama-3-2-3b-instruct and engine does not have complete runner configuration: invalid model specification: "
        "modelFormat.name: model format name is required; OME's model agent records modelFormat (and "
        "modelFramework, modelArchitecture, modelParameterSize, also unset here) once it has read the model's "
        f"files: run omerender model-info --update {model} to fill them now (used by InferenceService "
        "llama-demo/llama-3-2-3b-instruct)"]


def test_no_containers_names_the_runtime_and_the_config_it_lacks(tmp_path):
    app = _quickstart(tmp_path)
    isvc = app / "isvc.yaml"
    isvc.write_text(isvc.read_text().replace("  engine:\n", "  runtime:\n    name: sglang-llama-3-2-3b\n"
                                                             "  decoder:\n    minReplicas: 1\n  engine:\n"))
    run = run_cli("render", str(app))
    assert (run.code, run.stdout) == (1, "")
    assert run.placed_lines == [
        f"error: {isvc}:13:3: InferenceService llama-demo/llama-3-2-3b-instruct: no containers found: "
        "ServingRuntime sglang-llama-3-2-3b has no decoderConfig, and spec.decoder sets no runner; name a "
        "runtime with a decoderConfig in spec.runtime.name, set spec.decoder.runner, or remove spec.decoder"]


CATALOG_MODELS = FIXTURES.parent / "tests" / "data" / "ome" / "models" / "meta"
MISSING_MODEL = """\
apiVersion: ome.io/v1beta1
kind: InferenceService
metadata:
  name: vision
  namespace: llm
spec:
  model:
    name: {name}
"""


@pytest.mark.parametrize("name, first", [
    ("llama3-2-90b-vision-fp8-dynamic", "llama-3-2-90b-vision-instruct-fp8"),   # the sample's file name
    ("llama-3-2-90b-fp8-dynamic", "llama-3-2-90b-vision-instruct-fp8"),         # the name the sample references
    ("llama-3-3-70b-instruct-fp8-dynamc", "llama-3-3-70b-instruct-fp8-dynamic"),  # a typo still comes first
])
def test_a_missing_model_is_matched_by_its_whole_name(tmp_path, name, first):
    app = tmp_path / "app"
    shutil.copytree(CATALOG_MODELS, app)
    (app / "isvc.yaml").write_text(MISSING_MODEL.format(name=name))
    run = run_cli("render", str(app))
    assert (run.code, run.stdout) == (1, "")
    [line] = run.placed_lines
    assert line.startswith(f'error: {app / "isvc.yaml"}:8:5: InferenceService llm/vision: referenced model "{name}" '
                           'not found in namespace "llm": ensure a BaseModel exists in this namespace or a '
                           f'ClusterBaseModel exists cluster-wide with this name; did you mean "{first}"')


def test_a_misspelled_runtime_is_placed_at_spec_runtime_name(tmp_path):
    app = _quickstart(tmp_path)
    isvc = app / "isvc.yaml"
    isvc.write_text(isvc.read_text().replace("  engine:\n", "  runtime:\n    name: sglang-llama-3-2-3\n  engine:\n"))
    run = run_cli("render", str(app))
    assert (run.code, run.stdout) == (1, "")
    assert run.placed_lines == [
        f"error: {isvc}:12:5: InferenceService llama-demo/llama-3-2-3b-instruct: runtime sglang-llama-3-2-3 does not "
        "support model llama-3-2-3b-instruct: runtime sglang-llama-3-2-3 not found in namespace llama-demo or at "
        'cluster scope; did you mean "sglang-llama-3-2-3b"?']


@pytest.mark.parametrize("text, line, column", [
    ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: x\n", 4, 1),            # PyYAML: cannot start any token
    ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: b\n\tc: d\n", 7, 1),  # violates indentation
    ("a:\n  b: 1\n  \tc: 2\n", 3, 3),
])
def test_a_tab_in_the_indentation_is_named_as_a_tab_at_its_column(tmp_path, text, line, column):
    file = tmp_path / "tabbed.yaml"
    file.write_text(text)
    run = run_cli("render", str(file))
    assert (run.code, run.stdout) == (1, "")
    assert run.placed_lines == [f"error: {file}:{line}:{column}: malformed YAML: a tab at line {line}, column {column}: "
                                "YAML does not allow tabs for indentation; indent with spaces"]


def test_a_tab_after_a_colon_is_still_fine(tmp_path):
    file = tmp_path / "ok.yaml"
    file.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name:\tx\n")
    assert run_cli("render", str(file)).code == 0


ISVC_V13 = """\
apiVersion: ome.io/v1beta1
kind: InferenceService
metadata: {name: llama-3-2-3b-instruct, namespace: llama-demo}
spec:
  model: {name: llama-3-2-3b-instruct}
  rollout: {groups: [{name: g, components: [engine]}]}
  placement: {clusters: [a]}
  routing: {enabled: true}
  engine:
    minReplicas: 1
    maxReplicas: 1
    topologyKey: kubernetes.io/hostname
    topologySpread: Required
    topologySpreadKey: topology.kubernetes.io/zone
"""


def test_v13_fields_a_render_cannot_act_on_are_accepted_with_one_warning_each(tmp_path):
    app = _quickstart(tmp_path)
    isvc = app / "isvc.yaml"
    isvc.write_text(ISVC_V13)
    run = run_cli("render", str(app))
    assert run.code == 0, run.stderr
    where = f"warning: {isvc}:{{}}: InferenceService llama-demo/llama-3-2-3b-instruct: "
    assert run.placed_lines[2:] == [
        where.format("6:3") + "spec.rollout is ignored: OME rolls the OMENative components of each rollout group "
        "out together, by canary, blue-green or rolling update; a render does not: its workloads roll out as "
        "Kubernetes updates them",
        where.format("7:3") + "spec.placement is ignored: OME's multi-cluster control plane (alpha) chooses the "
        "workload clusters that run this InferenceService; a render does not: its objects run on the cluster they "
        "are applied to",
        where.format("8:3") + "spec.routing is ignored: OME's multi-cluster control plane (alpha) weighs each "
        "workload cluster's share of the requests in a TrafficMap; a render writes no TrafficMap",
        where.format("12:5") + "spec.engine.topologyKey is ignored: OME keeps each OMENative Instance's pods in one "
        "topology domain of this node label; a render places pods as Kubernetes schedules them",
        where.format("13:5") + "spec.engine.topologySpread is ignored: OME spreads OMENative Instances across "
        "topology domains, Preferred or Required; a render places pods as Kubernetes schedules them",
        where.format("14:5") + "spec.engine.topologySpreadKey is ignored: OME spreads OMENative Instances across the "
        "topology domains of this node label; a render places pods as Kubernetes schedules them"]
    assert run.placed_lines[1].endswith("Runtime sglang-llama-3-2-3b will be auto-selected for model "
                                        "llama-3-2-3b-instruct")
    plain = _quickstart(tmp_path / "plain")
    assert run.stdout == run_cli("render", str(plain)).stdout   # the fields change nothing rendered


GATEWAY_CM = CM_HEAD + """\
  ingress: |
    {"enableGatewayAPI": true, "ingressDomain": "example.com", "ingressGateway": "istio-system/gw",
     "ingressService": "gw.istio-system.svc.cluster.local", "omeIngressGateway": "envoy-gateway-system/ome-gateway", "perISVCSubdomain": true}
"""


def _annotated(tmp_path, annotations: str):
    app = _quickstart(tmp_path)
    (app / "cluster.yaml").write_text(GATEWAY_CM)
    isvc = app / "isvc.yaml"
    isvc.write_text(isvc.read_text().replace("  namespace: llama-demo\n",
                                             f"  namespace: llama-demo\n  annotations:\n{annotations}"))
    return run_cli("render", str(app)), isvc


def test_annotation_values_ome_reads_otherwise_get_a_warning_saying_what_ome_does(tmp_path):
    run, isvc = _annotated(tmp_path, '    ome.io/ingress-disable-creation: "yes"\n'
                                     "    ome.io/ingress-gateway: other-gw\n"
                                     "    ome.io/ingress-per-isvc-subdomain: treu\n")
    assert run.code == 0, run.stderr
    where = f"warning: {isvc}:{{}}: InferenceService llama-demo/llama-3-2-3b-instruct: annotation "
    assert [line for line in run.placed_lines if ": annotation " in line] == [
        where.format("9:5") + 'ome.io/ingress-disable-creation: "yes" is not "true": OME reads only "true" as true, '
        'so ingress creation stays on for this InferenceService; write "true" or "false"',
        where.format("11:5") + 'ome.io/ingress-per-isvc-subdomain: "treu" is not "true": OME reads only "true" as '
        'true, so per-InferenceService subdomains are off for this InferenceService; write "true" or "false"',
        where.format("10:5") + 'ome.io/ingress-gateway: "other-gw" is not <namespace>/<name>: OME takes the first '
        "and the last part, the Gateway other-gw in namespace other-gw (other-gw/other-gw); write <namespace>/<name>"]
    route = run.find("HTTPRoute", "llama-3-2-3b-instruct")
    assert route["spec"]["parentRefs"][0]["namespace"] == route["spec"]["parentRefs"][0]["name"] == "other-gw"
    assert route["spec"]["hostnames"] == ["example.com"]   # per-isvc subdomains off, though the cluster turns them on


def test_well_formed_annotation_values_get_no_warning(tmp_path):
    run, _ = _annotated(tmp_path, '    ome.io/ingress-disable-creation: "false"\n'
                                  "    ome.io/ingress-gateway: gw-ns/gw\n"
                                  '    ome.io/ingress-per-isvc-subdomain: "true"\n')
    assert run.code == 0, run.stderr
    assert [line for line in run.lines if ": annotation " in line] == []
    route = run.find("HTTPRoute", "llama-3-2-3b-instruct")
    assert route["spec"]["hostnames"] == ["llama-3-2-3b-instruct.llama-demo.example.com"]


def test_a_configmap_lacking_keys_the_v13_chart_writes_gets_one_info_naming_the_defaults(tmp_path):
    run, file = _render_with(tmp_path, "  deploy: '{\"defaultDeploymentMode\": \"RawDeployment\"}'\n")
    assert run.code == 0, run.stderr
    assert [line for line in run.placed_lines if CM in line] == [
        f"info: {file}:6:1: {CM}: data: lacks ingress, podDisruptionBudget, acceleratorResources, metricsAggregator, "
        "which OME v1.3's Helm chart writes (this ConfigMap may come from an older OME): OME v1.3 uses its defaults "
        "instead: without ingress, ingress creation is on, with a Kubernetes Ingress at "
        "<name>.<namespace>.example.com; without podDisruptionBudget, a component that sets no budget gets no "
        "PodDisruptionBudget; without acceleratorResources, nvidia.com/gpu is the only resource counted as a GPU; "
        'without metricsAggregator, each pod gets ome.io/enable-metric-aggregation and '
        'ome.io/enable-prometheus-scraping set to ""']
    assert run.find("Ingress")["spec"]["rules"][0]["host"] == "llama-3-2-3b-instruct.llama-demo.example.com"


def test_the_keys_named_are_those_the_chart_writes():
    assert list(ABSENT) == list(yaml.safe_load(open(CHART_FILE))["data"])
