"""The PodMonitor OME v1.3 creates for each RawDeployment and MultiNode component (issue 26), rendered with
``--pod-monitors`` (``podMonitors`` in the OMERender config): ported Go tests of
sgl-project/ome pkg/controller/v1beta1/inferenceservice/reconcilers/podmonitor/ (commit bb4fa1ee) and the
docs' rules (getting-started/install.md "The PodMonitor CRD", reference/api/labels-and-annotations.md)."""
import pytest
import yaml

from conftest import CHART_DEFAULTS_INFO, render_objects, run_cli
from omerender.errors import Report
from omerender.ome.monitoring.podmonitor import extra_endpoints, metrics_port_name
from schemas import validate_all

ISVC = "InferenceService llama-demo/llama-3-2-3b-instruct"
ENGINE = "llama-3-2-3b-instruct-engine"
ROUTER = "llama-3-2-3b-instruct-router"
KEY = "prometheus.ome.io/extra-endpoints"


OLDER = "which OME v1.3's Helm chart writes"  # the info of a ConfigMap lacking chart keys


def rendered(F, *flags):
    run = render_objects(list(F.values()), "--pod-monitors", *flags)
    assert run.code == 0, run.stderr
    validate_all(run.objects)
    return run


def monitor(name, port, *extra):
    endpoints = [{"interval": "10s", "path": "/metrics", "port": port}]
    endpoints += [{"interval": "10s", "path": path, "port": p} for p, path in extra]
    return {"apiVersion": "monitoring.coreos.com/v1", "kind": "PodMonitor",
            "metadata": {"labels": {"app": name}, "name": name, "namespace": "llama-demo"},
            "spec": {"namespaceSelector": {"matchNames": ["llama-demo"]}, "podMetricsEndpoints": endpoints,
                     "selector": {"matchLabels": {"app": name}}}}


def pod(*ports):
    return {"containers": [{"name": "main", "ports": list(ports)}]}


@pytest.mark.parametrize("spec, expected", [
    (None, "http"),
    ({}, "http"),
    ({"containers": [{"name": "main"}]}, "http"),
    (pod({"containerPort": 30000, "name": "http"}), "http"),
    (pod({"containerPort": 30080, "name": "http"}, {"containerPort": 9090, "name": "metrics"}), "metrics"),
    (pod({"containerPort": 9090, "name": "metrics"}, {"containerPort": 30080, "name": "http"}), "metrics"),
    (pod({"containerPort": 8080}), "http"),
    (pod({"containerPort": 8080, "name": "grpc"}), "grpc"),
])
def test_metrics_port_name(spec, expected):
    """TestMetricsPortName (podmonitor_reconciler_test.go), plus a first port with another name."""
    assert metrics_port_name(spec) == expected


def ep(port, path):
    return {"port": port, "path": path, "interval": "10s"}


@pytest.mark.parametrize("value, expected", [
    (None, []),
    ("", []),
    ("   ", []),
    ("http:/engine_metrics", [ep("http", "/engine_metrics")]),
    ("http:/a,metrics:/b", [ep("http", "/a"), ep("metrics", "/b")]),
    ("  http : /engine_metrics , metrics:/b ", [ep("http", "/engine_metrics"), ep("metrics", "/b")]),
    ("http:/a:b", [ep("http", "/a:b")]),
    (",http:/a,,", [ep("http", "/a")]),
])
def test_extra_endpoints(value, expected):
    """TestParseExtraEndpoints (extra_endpoints_test.go): the well-formed cases."""
    report = Report()
    assert extra_endpoints({} if value is None else {KEY: value}, report) == expected
    assert report.messages == []


@pytest.mark.parametrize("value, kept, bad", [
    ("nocolon", [], "nocolon"),
    ("http:noslash", [], "http:noslash"),
    (":/x", [], ":/x"),
    ("http:/a,bad,metrics:/b", [ep("http", "/a"), ep("metrics", "/b")], "bad"),
])
def test_malformed_extra_endpoints_are_skipped_with_a_warning(value, kept, bad):
    """TestParseExtraEndpoints (extra_endpoints_test.go): the malformed cases, skipped as OME skips them; OME only
    logs them, omerender warns."""
    report = Report()
    assert extra_endpoints({KEY: value}, report) == kept
    assert [m.text for m in report.messages] == [f'{KEY} entry "{bad}" is not "<port-name>:/<path>"; OME skips it']


def test_each_raw_component_gets_a_pod_monitor(F):
    """TestPodMonitorReconciler_Create: named like the workload, labelled and selecting app=<name> in its own
    namespace, scraping /metrics every 10 s on the first container's named port (the engine's runner has only
    http1; the router's, http). Each comes last among its component's objects."""
    run = rendered(F)
    assert run.find("PodMonitor", ENGINE) == monitor(ENGINE, "http1")
    assert run.find("PodMonitor", ROUTER) == monitor(ROUTER, "http")
    kinds = run.kinds()
    assert kinds.index(("PodMonitor", ENGINE)) == kinds.index(("PodDisruptionBudget", ENGINE)) + 1
    assert kinds.index(("PodMonitor", ROUTER)) == kinds.index(("PodDisruptionBudget", ROUTER)) + 1


def test_a_port_named_metrics_wins(F):
    """TestPodMonitorReconciler_Create_RouterWithMetricsPort."""
    F["runtime"]["spec"]["routerConfig"]["runner"]["ports"].append({"containerPort": 9090, "name": "metrics"})
    assert rendered(F).find("PodMonitor", ROUTER) == monitor(ROUTER, "metrics")


def test_extra_endpoints_annotation_appends_endpoints(F):
    """TestPodMonitorReconciler_Create_ExtraEndpoints: the default endpoint first, then the annotation's, which
    comes from the component's annotations (here the InferenceService's, which every component gets)."""
    F["isvc"]["metadata"]["annotations"] = {KEY: "http:/engine_metrics"}
    run = rendered(F)
    assert run.find("PodMonitor", ROUTER) == monitor(ROUTER, "http", ("http", "/engine_metrics"))
    assert run.find("PodMonitor", ENGINE) == monitor(ENGINE, "http1", ("http", "/engine_metrics"))


def test_a_malformed_entry_is_a_warning_naming_the_inference_service(F):
    F["isvc"]["spec"]["engine"]["annotations"] = {KEY: "http:/a,http"}
    run = rendered(F)
    assert run.lines == [CHART_DEFAULTS_INFO, f'warning: <stdin>: {ISVC}: {KEY} entry "http" is not "<port-name>:/<path>"; OME skips it']
    assert run.find("PodMonitor", ENGINE) == monitor(ENGINE, "http1", ("http", "/a"))
    assert render_objects(list(F.values()), "--pod-monitors", "--strict").code == 1


def test_without_the_option_there_is_none(F):
    run = render_objects(list(F.values()))
    assert run.code == 0 and "PodMonitor" not in {kind for kind, _ in run.kinds()}


def test_a_multinode_component_gets_one_for_its_leaders(F):
    """The MultiNode reconciler builds its PodMonitor from the leader pod (multinode reconciler, sgl-project/ome
    eb2686d2); the leader pods carry app=<name>."""
    engine = F["isvc"]["spec"]["engine"]
    engine["annotations"] = {"ome.io/deploymentMode": "MultiNode"}
    engine["leader"] = {"runner": {"name": "ome-container", "image": "i",
                                   "ports": [{"containerPort": 30000, "name": "serve"}]}}
    engine["worker"] = {"size": 1, "runner": {"name": "ome-container", "image": "i"}}
    run = rendered(F)
    assert run.find("PodMonitor", ENGINE) == monitor(ENGINE, "serve")
    leader = run.find("LeaderWorkerSet")["spec"]["leaderWorkerTemplate"]["leaderTemplate"]
    assert leader["metadata"]["labels"]["app"] == ENGINE
    kinds = run.kinds()
    assert kinds[kinds.index(("LeaderWorkerSet", f"lws-{ENGINE}")):][:3] == [
        ("LeaderWorkerSet", f"lws-{ENGINE}"), ("Service", ENGINE), ("PodMonitor", ENGINE)]


def test_a_long_name_keeps_its_name_and_selects_the_shortened_app_label(F):
    """createPodMonitor: metadata.name is the workload's name, the app label its 63-character form."""
    name = "a" * 60
    F["isvc"]["metadata"]["name"] = name
    run = rendered(F)
    pm = run.find("PodMonitor", f"{name}-engine")
    deployment = run.find("Deployment", f"{name}-engine")
    app = deployment["spec"]["selector"]["matchLabels"]["app"]
    assert len(app) == 63
    assert pm["metadata"]["labels"] == {"app": app} and pm["spec"]["selector"]["matchLabels"] == {"app": app}


def test_the_function_config_turns_them_on(F):
    items = list(F.values())
    config = {"apiVersion": "omerender.io/v1alpha1", "kind": "OMERender", "metadata": {"name": "render"},
              "spec": {"podMonitors": True}}
    text = yaml.safe_dump({"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items,
                           "functionConfig": config}, sort_keys=False)
    run = run_cli("fn", input=text)
    assert run.code == 0, run.stderr
    kinds = [(o["kind"], o["metadata"]["name"]) for o in yaml.safe_load(run.stdout)["items"]]
    assert ("PodMonitor", ENGINE) in kinds and ("PodMonitor", ROUTER) in kinds


def test_the_configmaps_pod_monitor_key_does_not_reach_them(F):
    """docs guides/operate-ome/metrics.md: "ome.podMonitor applies only to OMENative components"; the Raw and
    MultiNode PodMonitor (createPodMonitor) carries only app=<name>, and omerender says so once."""
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "inferenceservice-config", "namespace": "ome"},
              "data": {"podMonitor": '{"labels": {"release": "prometheus"}, "metricRelabelings": '
                                     '[{"sourceLabels": ["__name__"], "regex": "vllm_(.+)", "action": "replace"}]}'}}
    run = render_objects(list(F.values()) + [config], "--pod-monitors")
    assert run.code == 0, run.stderr
    assert run.find("PodMonitor", ENGINE) == monitor(ENGINE, "http1")
    assert [line for line in run.lines if OLDER not in line] == ["info: <stdin>: ConfigMap ome/inferenceservice-config: podMonitor applies only to OMENative "
                         "components in OME v1.3; the PodMonitors of RawDeployment and MultiNode components get neither "
                         "its labels nor its relabelings"]


def test_argo_cd_env_turns_them_on(F, tmp_path, monkeypatch):
    """The Argo CD plugin's POD_MONITORS (ARGOCD_ENV_POD_MONITORS) on a plain directory: render --pod-monitors."""
    (tmp_path / "inputs.yaml").write_text(yaml.safe_dump_all(list(F.values()), sort_keys=False))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ARGOCD_ENV_POD_MONITORS", "true")
    run = run_cli("argocd", "generate")
    assert run.code == 0, run.stderr
    assert ("PodMonitor", ENGINE) in [(o["kind"], o["metadata"]["name"]) for o in yaml.safe_load_all(run.stdout) if o]
