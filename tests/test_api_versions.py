"""The cluster's API versions (issue 34): Argo CD's KUBE_API_VERSIONS and KUBE_VERSION in the plugin, and render's
--api-versions and --kube-version (omerender/kube/apiversions.py): an object the cluster doesn't serve fails,
naming what to install."""
from __future__ import annotations

from pathlib import Path

import yaml

from test_argocd import ROOT, manifests, repo_copy
from test_argocd_operator import generate_in


# ---------------------------------------------------------------- the cluster's API versions

KEDA_ENGINE = """  engine:
    minReplicas: 1
    maxReplicas: 3
    autoscaler:
      class: KEDA
      keda:
        triggers:
          - type: prometheus
            metadata: {serverAddress: "http://prometheus.monitoring:9090", query: "sum(q)", threshold: "5"}
"""


def keda_app(tmp_path: Path) -> tuple[Path, str]:
    work = repo_copy(tmp_path)
    isvc = work / "apps" / "plain" / "isvc.yaml"
    text = isvc.read_text()
    start = text.index("  engine:\n")
    end = text.index("\n", text.index("maxReplicas", start)) + 1
    isvc.write_text(text[:start] + KEDA_ENGINE + text[end:])
    return work, "apps/plain"


def test_a_keda_scaled_inferenceservice_fails_on_a_cluster_without_keda(tmp_path):
    from test_argocd import KUBE_API_VERSIONS
    work, app = keda_app(tmp_path)
    assert "keda.sh" not in KUBE_API_VERSIONS
    done = generate_in(work, app)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.endswith(
        "error: ./isvc.yaml:3:1: ScaledObject llama-demo/scaledobject-llama-3-2-3b-instruct-engine (of "
        "InferenceService "
        "llama-3-2-3b-instruct): the cluster doesn't serve keda.sh/v1alpha1 (not in the KUBE_API_VERSIONS Argo CD "
        "passed); install KEDA (https://keda.sh), which KEDA autoscaling needs\n")


def test_a_keda_scaled_inferenceservice_renders_where_keda_is_served(tmp_path):
    from test_argocd import KUBE_API_VERSIONS
    work, app = keda_app(tmp_path)
    done = generate_in(work, app, KUBE_API_VERSIONS=KUBE_API_VERSIONS + ",keda.sh/v1alpha1,keda.sh/v1alpha1/ScaledObject")
    assert done.returncode == 0, done.stderr
    assert "ScaledObject" in {o["kind"] for o in manifests(done.stdout)}


def test_without_api_versions_nothing_is_checked(tmp_path):
    work, app = keda_app(tmp_path)
    done = generate_in(work, app, KUBE_API_VERSIONS="", KUBE_VERSION="")
    assert done.returncode == 0, done.stderr


def test_a_kind_the_listed_group_version_lacks_is_named(tmp_path):
    from test_argocd import KUBE_API_VERSIONS
    work = repo_copy(tmp_path)
    served = KUBE_API_VERSIONS.replace("apps/v1/Deployment", "apps/v1/StatefulSet")
    done = generate_in(work, "apps/plain", KUBE_API_VERSIONS=served)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.endswith(
        "error: ./isvc.yaml:3:1: Deployment llama-demo/llama-3-2-3b-instruct-engine (of InferenceService "
        "llama-3-2-3b-instruct): the "
        "cluster doesn't serve apps/v1 Deployment (not in the KUBE_API_VERSIONS Argo CD passed), which Kubernetes "
        "itself provides: the cluster is older or has it turned off\n")


def test_an_old_kubernetes_is_named(tmp_path):
    work = repo_copy(tmp_path)
    done = generate_in(work, "apps/plain", KUBE_API_VERSIONS="", KUBE_VERSION="v1.22.17+k3s1")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.endswith("error: ./isvc.yaml:3:1: HorizontalPodAutoscaler "
                                "llama-demo/llama-3-2-3b-instruct-engine (of "
                                "InferenceService llama-3-2-3b-instruct): autoscaling/v2 needs Kubernetes 1.23 or "
                                "later; the cluster runs 1.22\n")


def test_hostile_api_versions_and_kube_version_are_refused_readably(tmp_path):
    work = repo_copy(tmp_path)
    done = generate_in(work, "apps/plain", KUBE_API_VERSIONS="v1,apps/v1\nerror: forged,$(rm -rf /)")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.endswith('error: KUBE_API_VERSIONS: "apps/v1\\nerror: forged" is no API version '
                                '(GROUP/VERSION, GROUP/VERSION/Kind, v1 or v1/Kind, as kubectl api-versions prints '
                                'them)\n')
    done = generate_in(work, "apps/plain", KUBE_VERSION="1.30; echo pwned")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.endswith('error: KUBE_VERSION: "1.30; echo pwned" is no Kubernetes version (MAJOR.MINOR[.PATCH], '
                                'e.g. 1.30.2)\n')


def test_a_crd_in_the_same_app_serves_its_kind():
    from omerender.kube.apiversions import parse_api_versions, unserved
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "x"},
           "spec": {"group": "keda.sh", "names": {"kind": "ScaledObject"}, "versions": [{"name": "v1alpha1"}]}}
    scaled = {"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject", "metadata": {"name": "s", "namespace": "n"}}
    served = parse_api_versions(["v1,apiextensions.k8s.io/v1"], "--api-versions")
    assert unserved([crd, scaled], served, None, "--api-versions") == []
    (error,) = unserved([scaled], served, None, "not in --api-versions")
    assert error.text == ("ScaledObject n/s: the cluster doesn't serve keda.sh/v1alpha1 (not in --api-versions); "
                          "install KEDA (https://keda.sh), which KEDA autoscaling needs")


def test_each_component_omerender_may_emit_is_named():
    from omerender.kube.apiversions import unserved
    emitted = {"keda.sh/v1alpha1": "KEDA", "leaderworkerset.x-k8s.io/v1": "LeaderWorkerSet",
               "gateway.networking.k8s.io/v1": "the Gateway API CRDs", "gateway.envoyproxy.io/v1alpha1": "Envoy Gateway",
               "monitoring.coreos.com/v1": "the Prometheus Operator's CRDs"}
    for api, component in emitted.items():
        (error,) = unserved([{"apiVersion": api, "kind": "K", "metadata": {"name": "n"}}], frozenset({"v1"}), None, "s")
        assert f"; install {component} (" in error.text or f"; install {component}," in error.text, error.text


def test_render_checks_the_api_versions_and_kube_version_it_is_given():
    from conftest import run_cli
    quickstart = str(ROOT / "fixtures" / "quickstart")
    served = ("v1,apps/v1", "-a", "autoscaling/v2,policy/v1,ome.io/v1beta1")  # the model, for OME's agent (D3)
    done = run_cli("render", quickstart, "-a", *served)
    assert done.code == 0, done.stderr
    assert {o["kind"] for o in yaml.safe_load_all(done.stdout)} >= {"Deployment", "HorizontalPodAutoscaler"}
    done = run_cli("render", quickstart, "--api-versions", "v1,apps/v1,autoscaling/v2,ome.io/v1beta1")
    assert (done.code, done.stdout) == (1, "")
    assert done.stderr.endswith(
        f"error: {quickstart}/isvc.yaml: PodDisruptionBudget llama-demo/llama-3-2-3b-instruct-engine (of "
        "InferenceService "
        "llama-3-2-3b-instruct): the cluster doesn't serve policy/v1 (not in --api-versions), which Kubernetes itself "
        "provides: the cluster is older or has it turned off\n")
    done = run_cli("render", quickstart, "--kube-version", "1.22")
    assert (done.code, done.stdout) == (1, "")
    assert f"error: {quickstart}/isvc.yaml: HorizontalPodAutoscaler llama-demo/llama-3-2-3b-instruct-engine (of " \
           "InferenceService " \
           "llama-3-2-3b-instruct): autoscaling/v2 needs Kubernetes 1.23 or later; the cluster runs 1.22\n" in done.stderr
    done = run_cli("render", quickstart, "--kube-version", "latest\nerror: x")
    assert (done.code, done.stdout) == (1, "")
    assert done.stderr.endswith('error: --kube-version: "latest\\nerror: x" is no Kubernetes version '
                                '(MAJOR.MINOR[.PATCH], e.g. 1.30.2)\n')


def test_the_argo_cd_plugin_validates_with_validate_true(tmp_path):
    from test_argocd_operator import app_with
    from test_validate import DEPLOYMENT
    from conftest import FIXTURES
    files = {name: (FIXTURES / "quickstart" / name).read_text()
             for name in ("namespace.yaml", "model.yaml", "runtime.yaml", "isvc.yaml")}
    files["omerender.yaml"] = "apiVersion: omerender.io/v1alpha1\nkind: OMERender\nmetadata: {name: omerender}\n"
    files["deployment.yaml"] = DEPLOYMENT.replace("  replicas: 2\n", "  replicas: 2\n  paused: maybe\n")
    work, app = app_with(tmp_path, files)
    assert generate_in(work, app).returncode == 0
    refused = generate_in(work, app, {"VALIDATE": "true"}, KUBE_VERSION="v1.31.2")
    assert (refused.returncode, refused.stdout) == (1, "")
    assert ('error: Deployment serving/chat-engine: spec.paused: Invalid value: "string": must be of type boolean (in '
            'the rendered object; Kubernetes 1.31)') in refused.stderr
