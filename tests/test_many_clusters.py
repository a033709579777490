"""The many-clusters example (fixtures/many-clusters, docs/how-to/many-clusters.md): one repository, two clusters
whose AcceleratorClasses, runtimes and OME ConfigMaps differ, rendered the three ways a user ships it: the CLI, the
Argo CD plugin through the ApplicationSet's per-cluster Application, and Flux's rendered directory per cluster."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from conftest import FIXTURES, load_yaml, run_cli, validate_k8s
from test_argocd import PLUGIN, environment, manifests, run_command

EXAMPLE = FIXTURES / "many-clusters"
CLUSTERS = ("east", "west")
MODEL_READY = {"models.ome.io/clusterbasemodel.llama-3-3-70b-instruct": "Ready"}
A100_AFFINITY = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
    {"matchExpressions": [{"key": "nvidia.com/gpu.product", "operator": "In",
                           "values": ["NVIDIA-A100-SXM4-80GB", "NVIDIA-A100-80GB-PCIe"]}]}]}}}
# What each cluster's pods get, per InferenceService: runtime, GPUs per pod, node selector, node affinity, the
# parallelism flags on the command line, the grace period of the cluster's ConfigMap.
EXPECTED = {
    "east": {
        "chat": ("srt-llama-3-3-70b-h100", "8", {**MODEL_READY, "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
                 None, ["--tp-size", "8"], [], 600),
        "batch": ("srt-llama-3-3-70b-h100", "8", {**MODEL_READY, "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
                  None, ["--tp-size", "8"], [], 600),
    },
    "west": {
        "chat": ("srt-llama-3-3-70b-a100-l40s", "4", MODEL_READY, A100_AFFINITY, ["--tp-size", "4"], [], 90),
        "batch": ("srt-llama-3-3-70b-a100-l40s", "8", {**MODEL_READY, "nvidia.com/gpu.product": "NVIDIA-L40S"},
                  None, ["--tp-size", "4"], ["--pp-size=2", "--mem-frac=0.85"], 90),
    },
}
KINDS = [("Namespace", "llm"), ("Service", "batch"), ("Service", "batch-engine"), ("Service", "chat"),
         ("Service", "chat-engine"), ("Deployment", "batch-engine"), ("Deployment", "chat-engine"),
         ("PodDisruptionBudget", "batch-engine"), ("PodDisruptionBudget", "chat-engine"),
         ("HorizontalPodAutoscaler", "batch-engine"), ("HorizontalPodAutoscaler", "chat-engine"),
         ("ClusterBaseModel", "llama-3-3-70b-instruct")]


@pytest.fixture
def repo(tmp_path, monkeypatch) -> Path:
    """The example as a repository of its own (its root is what Argo CD and Flux see), as the working directory."""
    root = tmp_path / "deploy"
    shutil.copytree(EXAMPLE, root)
    monkeypatch.chdir(root)
    return root


def seen(objects: list[dict]) -> dict[str, tuple]:
    """Per InferenceService, what its engine's pods get (the shape of EXPECTED)."""
    found = {}
    for obj in objects:
        if obj["kind"] != "Deployment":
            continue
        pod = obj["spec"]["template"]["spec"]
        runner = pod["containers"][0]
        assert runner["resources"]["requests"]["nvidia.com/gpu"] == runner["resources"]["limits"]["nvidia.com/gpu"]
        tp = runner["command"].index("--tp-size")
        found[obj["metadata"]["labels"]["ome.io/inferenceservice"]] = (
            obj["metadata"]["annotations"]["ome.io/serving-runtime"], runner["resources"]["limits"]["nvidia.com/gpu"],
            pod["nodeSelector"], pod.get("affinity"), runner["command"][tp:tp + 2], runner.get("args", []),
            pod["terminationGracePeriodSeconds"])
    return found


def render_cluster(cluster: str, *flags: str):
    return run_cli("render", f"clusters/{cluster}", "--cluster-config", f"clusters/{cluster}/inferenceservice-config.yaml",
                   *flags)


@pytest.mark.parametrize("cluster", CLUSTERS)
def test_each_cluster_renders_with_its_own_runtime_and_gpus(repo, cluster):
    done = render_cluster(cluster)
    assert done.code == 0, done.stderr
    assert done.kinds() == KINDS
    for obj in done.objects:
        validate_k8s(obj)
    assert seen(done.objects) == EXPECTED[cluster]
    runtime = EXPECTED[cluster]["chat"][0]
    classes = {"east": ("nvidia-h100", "nvidia-h100"), "west": ("nvidia-l40s", "nvidia-a100")}[cluster]
    assert done.lines == [
        f"warning: base/services.yaml: InferenceService llm/batch: Runtime {runtime} will be auto-selected for model "
        "llama-3-3-70b-instruct",
        f"info: base/services.yaml: InferenceService llm/batch: engine: accelerator class {classes[0]} from policy "
        "Cheapest in spec.acceleratorSelector.policy",
        f"warning: base/services.yaml: InferenceService llm/chat: Runtime {runtime} will be auto-selected for model "
        "llama-3-3-70b-instruct",
        f"info: base/services.yaml: InferenceService llm/chat: engine: accelerator class {classes[1]} from policy "
        "MostCapable in spec.acceleratorSelector.policy"]


def test_a_cluster_without_its_configmap_gets_the_charts_grace_period(repo):
    done = run_cli("render", "clusters/west")
    assert done.code == 0, done.stderr
    assert {name: shape[6] for name, shape in seen(done.objects).items()} == {"chat": 600, "batch": 600}


# ---------------------------------------------------------------- Argo CD: the ApplicationSet and the plugin

def application_set() -> dict:
    [appset] = load_yaml(EXAMPLE / "argocd" / "applicationset.yaml")
    return appset


def test_the_applicationset_has_the_shape_argo_cd_reads():
    appset = application_set()
    assert (appset["apiVersion"], appset["kind"]) == ("argoproj.io/v1alpha1", "ApplicationSet")
    assert appset["metadata"] == {"name": "ome-serving", "namespace": "argocd"}
    spec = appset["spec"]
    assert set(spec) == {"goTemplate", "goTemplateOptions", "generators", "template"}
    assert spec["goTemplate"] is True and spec["goTemplateOptions"] == ["missingkey=error"]
    assert spec["generators"] == [{"clusters": {"selector": {"matchLabels": {"omerender.io/serving": "true"}}}}]
    template = spec["template"]
    assert set(template) == {"metadata", "spec"}
    assert set(template["spec"]) == {"project", "source", "destination", "syncPolicy"}
    source = template["spec"]["source"]
    assert set(source) == {"repoURL", "targetRevision", "path", "plugin"}
    plugin_name = f"{PLUGIN['metadata']['name']}-{PLUGIN['spec']['version']}"
    assert source["plugin"]["name"] == plugin_name
    announced = {p["name"]: p for p in PLUGIN["spec"]["parameters"]["static"]}
    for parameter in source["plugin"]["parameters"]:
        assert set(parameter) == {"name", "string"} and parameter["name"] in announced
        assert "itemType" not in announced[parameter["name"]]  # a string parameter, given as string:
    assert template["spec"]["syncPolicy"] == {"automated": {"prune": True}}
    # the only template fields are the cluster generator's {{.name}} and {{.server}}
    fields = set(re.findall(r"\{\{(.*?)\}\}", yaml.safe_dump(template)))
    assert fields == {".name", ".server"}


def generated(cluster: str) -> dict:
    """The Application the cluster generator makes for a cluster secret named ``cluster`` (goTemplate: each
    ``{{.name}}`` and ``{{.server}}`` filled in, as text/template fills them)."""
    values = {"name": cluster, "server": f"https://{cluster}.k8s.example:6443"}
    text = re.sub(r"\{\{\.(name|server)\}\}", lambda m: values[m.group(1)], yaml.safe_dump(application_set()["spec"]["template"]))
    return {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", **yaml.safe_load(text)}


def test_the_applications_name_each_clusters_directory_and_server():
    for cluster in CLUSTERS:
        app = generated(cluster)
        assert app["metadata"]["name"] == f"ome-serving-{cluster}"
        assert app["spec"]["source"]["path"] == f"clusters/{cluster}"
        assert app["spec"]["destination"] == {"server": f"https://{cluster}.k8s.example:6443"}
        # discovery finds the plugin's marker there, and manifest-generate-paths names what the app reads
        app_dir = EXAMPLE / app["spec"]["source"]["path"]
        assert (app_dir / "omerender.yaml").is_file()
        paths = app["metadata"]["annotations"]["argocd.argoproj.io/manifest-generate-paths"].split(";")
        assert [(app_dir / p).resolve() for p in paths] == [app_dir, EXAMPLE / "base"]
        parameters = {p["name"]: p["string"] for p in app["spec"]["source"]["plugin"]["parameters"]}
        assert (app_dir / parameters["cluster-config"]).is_file()


@pytest.mark.parametrize("cluster", CLUSTERS)
def test_the_plugin_renders_each_clusters_application(repo, cluster):
    app = generated(cluster)
    source = app["spec"]["source"]
    app_dir = repo / source["path"]
    environ = environment(source["path"], {}, source["plugin"]["parameters"])
    assert environ["PARAM_CLUSTER_CONFIG"] == "inferenceservice-config.yaml"
    init = run_command(PLUGIN["spec"]["init"], app_dir, environ)
    assert init.returncode == 0, init.stderr
    done = run_command(PLUGIN["spec"]["generate"], app_dir, environ)
    assert done.returncode == 0, done.stderr
    objects = manifests(done.stdout)
    for obj in objects:
        validate_k8s(obj)
    assert seen(objects) == EXPECTED[cluster]
    assert objects == render_cluster(cluster).objects  # what review and CI see is what the plugin ships


def test_the_plugin_without_the_parameter_falls_back_to_the_charts_defaults(repo):
    environ = environment("clusters/west", {}, [])
    done = run_command(PLUGIN["spec"]["generate"], repo / "clusters" / "west", environ)
    assert done.returncode == 0, done.stderr
    assert {name: shape[6] for name, shape in seen(manifests(done.stdout)).items()} == {"chat": 600, "batch": 600}


# ---------------------------------------------------------------- Flux: one rendered directory per cluster

@pytest.mark.parametrize("cluster", CLUSTERS)
def test_flux_applies_each_clusters_rendered_directory(repo, cluster):
    [kustomization] = load_yaml(repo / "flux" / f"{cluster}.yaml")
    assert (kustomization["apiVersion"], kustomization["kind"]) == ("kustomize.toolkit.fluxcd.io/v1", "Kustomization")
    assert kustomization["spec"]["path"] == f"./rendered/{cluster}"
    assert kustomization["spec"]["prune"] is True
    done = render_cluster(cluster, "--output-dir", f"rendered/{cluster}")
    assert done.code == 0, done.stderr
    rendered = repo / kustomization["spec"]["path"]
    listed = yaml.safe_load((rendered / "kustomization.yaml").read_text())["resources"]
    objects = [obj for name in listed for obj in load_yaml(rendered / name)]
    for obj in objects:
        validate_k8s(obj)
    assert seen(objects) == EXPECTED[cluster]
    check = run_cli("check", f"clusters/{cluster}", f"rendered/{cluster}", "--cluster-config",
                    f"clusters/{cluster}/inferenceservice-config.yaml")
    assert check.code == 0, check.stderr
    # the other cluster's render is not this one's: check names the difference
    other = "west" if cluster == "east" else "east"
    stale = run_cli("check", f"clusters/{other}", f"rendered/{cluster}", "--cluster-config",
                    f"clusters/{other}/inferenceservice-config.yaml")
    assert stale.code == 1
    assert "nvidia.com/gpu" in stale.stdout + stale.stderr
