"""The many-clusters example (fixtures/many-clusters, docs/how-to/many-clusters.md): one repository, two clusters
whose AcceleratorClasses, runtimes and OME ConfigMaps differ, rendered the three ways a user ships it: the CLI, the
Argo CD plugin through the ApplicationSet's per-cluster Application, and Flux's rendered directory per cluster."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from omerender.diff import bypath

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
    return run_cli("render", f"clusters/{cluster}", "--cluster-config",
                   f"clusters/{cluster}/inferenceservice-config.yaml", *flags)


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
    # the only template fields are parameters the cluster generator gives
    fields = set(re.findall(r"\{\{(.*?)\}\}", yaml.safe_dump(template)))
    assert fields == {".name", ".nameNormalized", ".server"}


def generated(cluster: str) -> dict:
    """The Application the cluster generator makes for a cluster secret named ``cluster`` (goTemplate: each
    ``{{.name}}``, ``{{.nameNormalized}}`` and ``{{.server}}`` filled in, as text/template fills them)."""
    values = {"name": cluster, "nameNormalized": cluster, "server": f"https://{cluster}.k8s.example:6443"}
    text = re.sub(r"\{\{\.(name|nameNormalized|server)\}\}", lambda m: values[m.group(1)],
                  yaml.safe_dump(application_set()["spec"]["template"]))
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


# ---------------------------------------------------------------- diff: which clusters a change reaches

CONFIGS = ("--cluster-config", "clusters/east/inferenceservice-config.yaml",
           "--cluster-config", "clusters/west/inferenceservice-config.yaml")
OLD_IMAGE, NEW_IMAGE = "sglang:v0.5.5.post3-cu129-amd64", "sglang:v0.5.6-cu129-amd64"


def git(root: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(root)}
    subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


@pytest.fixture
def committed(repo) -> Path:
    """The example committed as main, the working directory its work tree."""
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "two clusters")
    return repo


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def commit_edit(root: Path, path: str, old: str, new: str) -> None:
    edit(root / path, old, new)
    git(root, "commit", "-qam", f"edit {path}")


WEST_IMAGE_TEXT = f"""\
Changes in 1 of 2 PATHs: clusters/west

== clusters/east ==
InferenceServices: 0 added, 0 removed, 0 changed, 2 unchanged; 0 roll out
GPUs at min / max replicas:
  nvidia.com/gpu (nvidia-h100): 16 at min, 24 at max
No changes.

== clusters/west ==
InferenceServices: 0 added, 0 removed, 2 changed, 0 unchanged; 2 roll out
GPUs at min / max replicas:
  nvidia.com/gpu (nvidia-a100): 4 at min, 8 at max
  nvidia.com/gpu (nvidia-l40s): 8 at min, 8 at max

InferenceService llm/batch: changed, pods roll out
  runtime: srt-llama-3-3-70b-a100-l40s (edited: ClusterServingRuntime srt-llama-3-3-70b-a100-l40s)
  accelerator class of engine: nvidia-l40s
  ~ apps/v1 Deployment batch-engine
      spec.template.spec.containers[name=ome-container].image: docker.io/lmsysorg/{OLD_IMAGE} -> docker.io/lmsysorg/{NEW_IMAGE}

InferenceService llm/chat: changed, pods roll out
  runtime: srt-llama-3-3-70b-a100-l40s (edited: ClusterServingRuntime srt-llama-3-3-70b-a100-l40s)
  accelerator class of engine: nvidia-a100
  ~ apps/v1 Deployment chat-engine
      spec.template.spec.containers[name=ome-container].image: docker.io/lmsysorg/{OLD_IMAGE} -> docker.io/lmsysorg/{NEW_IMAGE}
"""


def test_diff_names_the_one_cluster_a_runtime_edit_reaches(committed):
    commit_edit(committed, "clusters/west/runtimes.yaml", OLD_IMAGE, NEW_IMAGE)
    run = run_cli("diff", *CONFIGS, "--exit-code", "HEAD~1", "HEAD", "--", "clusters/east", "clusters/west")
    assert (run.code, run.stderr) == (1, "")
    assert run.stdout == WEST_IMAGE_TEXT
    # each section is, byte for byte, the diff of that PATH alone
    for cluster in CLUSTERS:
        alone = run_cli("diff", "--cluster-config", f"clusters/{cluster}/inferenceservice-config.yaml", "HEAD~1",
                        "HEAD", f"clusters/{cluster}")
        assert alone.code == 0, alone.stderr
        assert f"== clusters/{cluster} ==\n{alone.stdout}" in run.stdout


WEST_IMAGE_MARKDOWN = f"""\
### omerender diff

Changes in 1 of 2 PATHs: `clusters/west`

#### `clusters/east`

| InferenceServices added | Removed | Changed | Unchanged | Pods roll out in |
| --- | --- | --- | --- | --- |
| 0 | 0 | 0 | 2 | 0 |

No changes.

| Resource | Accelerator class | At minReplicas | At maxReplicas |
| --- | --- | --- | --- |
| `nvidia.com/gpu` | nvidia-h100 | 16 | 24 |

#### `clusters/west`

| InferenceServices added | Removed | Changed | Unchanged | Pods roll out in |
| --- | --- | --- | --- | --- |
| 0 | 0 | 2 | 0 | 2 |

| InferenceService | Status | Rollout | Runtime | Accelerator class | Objects |
| --- | --- | --- | --- | --- | --- |
| `llm/batch` | changed | yes | `srt-llama-3-3-70b-a100-l40s` | engine: `nvidia-l40s` | 1 changed |
| `llm/chat` | changed | yes | `srt-llama-3-3-70b-a100-l40s` | engine: `nvidia-a100` | 1 changed |

| Resource | Accelerator class | At minReplicas | At maxReplicas |
| --- | --- | --- | --- |
| `nvidia.com/gpu` | nvidia-a100 | 4 | 8 |
| `nvidia.com/gpu` | nvidia-l40s | 8 | 8 |

<details><summary>llm/batch: changed, pods roll out</summary>

- runtime: `srt-llama-3-3-70b-a100-l40s` (edited: ClusterServingRuntime srt-llama-3-3-70b-a100-l40s)
- accelerator class of engine: `nvidia-l40s`
- changed `apps/v1 Deployment batch-engine`: `spec.template.spec.containers[name=ome-container].image` `docker.io/lmsysorg/{OLD_IMAGE}` → `docker.io/lmsysorg/{NEW_IMAGE}`

</details>

<details><summary>llm/chat: changed, pods roll out</summary>

- runtime: `srt-llama-3-3-70b-a100-l40s` (edited: ClusterServingRuntime srt-llama-3-3-70b-a100-l40s)
- accelerator class of engine: `nvidia-a100`
- changed `apps/v1 Deployment chat-engine`: `spec.template.spec.containers[name=ome-container].image` `docker.io/lmsysorg/{OLD_IMAGE}` → `docker.io/lmsysorg/{NEW_IMAGE}`

</details>
"""


def test_diff_markdown_gives_each_cluster_its_section(committed):
    commit_edit(committed, "clusters/west/runtimes.yaml", OLD_IMAGE, NEW_IMAGE)
    run = run_cli("diff", *CONFIGS, "--format", "markdown", "HEAD~1", "HEAD", "--", "clusters/east", "clusters/west")
    assert (run.code, run.stderr) == (0, "")
    assert run.stdout == WEST_IMAGE_MARKDOWN


def test_diff_markdown_leaves_out_the_clusters_a_comment_cannot_hold(committed, monkeypatch):
    """With room for one cluster's section only, the second is left out, saying so; the headline names both."""
    commit_edit(committed, "clusters/west/runtimes.yaml", OLD_IMAGE, NEW_IMAGE)
    east = WEST_IMAGE_MARKDOWN.split("#### `clusters/west`")[0]
    monkeypatch.setattr(bypath, "COMMENT_LIMIT", len(east) + 400)
    run = run_cli("diff", *CONFIGS, "--format", "markdown", "HEAD~1", "HEAD", "--", "clusters/east", "clusters/west")
    assert (run.code, run.stderr) == (0, "")
    assert run.stdout == east + (f"_1 more PATHs left out: a comment holds at most {len(east) + 400:,} characters. "
                                 "`omerender diff` prints them all._\n")


def test_diff_json_lists_each_cluster_with_its_own_report(committed):
    commit_edit(committed, "clusters/west/runtimes.yaml", OLD_IMAGE, NEW_IMAGE)
    run = run_cli("diff", *CONFIGS, "-o", "json", "HEAD~1", "HEAD", "--", "clusters/east", "clusters/west")
    assert (run.code, run.stderr) == (0, "")
    found = json.loads(run.stdout)
    assert list(found) == ["changed", "paths"]
    assert found["changed"] == ["clusters/west"]
    assert [entry["path"] for entry in found["paths"]] == ["clusters/east", "clusters/west"]
    for entry, cluster in zip(found["paths"], CLUSTERS):
        alone = run_cli("diff", "--cluster-config", f"clusters/{cluster}/inferenceservice-config.yaml", "-o", "json",
                        "HEAD~1", "HEAD", f"clusters/{cluster}")
        assert entry == {"path": f"clusters/{cluster}", **json.loads(alone.stdout)}
    west = found["paths"][1]
    assert west["summary"] == {"inferenceServices": {"added": 0, "removed": 0, "changed": 2, "unchanged": 0},
                               "rollouts": 2}
    engine = [{"component": "engine", "base": "nvidia-l40s", "head": "nvidia-l40s"}], \
        [{"component": "engine", "base": "nvidia-a100", "head": "nvidia-a100"}]
    assert [(i["name"], i["runtime"]["head"], i["accelerators"]) for i in west["inferenceServices"]] == [
        ("batch", "srt-llama-3-3-70b-a100-l40s", engine[0]), ("chat", "srt-llama-3-3-70b-a100-l40s", engine[1])]


def test_diff_of_a_shared_base_names_every_cluster_it_reaches(committed):
    commit_edit(committed, "base/services.yaml", "maxReplicas: 2", "maxReplicas: 3")
    run = run_cli("diff", *CONFIGS, "--exit-code", "HEAD~1", "HEAD", "--", "clusters/east", "clusters/west")
    assert (run.code, run.stderr) == (1, "")
    assert run.stdout.splitlines()[0] == "Changes in 2 of 2 PATHs: clusters/east, clusters/west"
    # each cluster's GPUs at maxReplicas grow by its own class's count: 8 H100s, 4 A100s
    assert "  nvidia.com/gpu (nvidia-h100): 16 at min, 24 -> 32 (+8) at max\n" in run.stdout
    assert "  nvidia.com/gpu (nvidia-a100): 4 at min, 8 -> 12 (+4) at max\n" in run.stdout


def test_diff_of_a_work_tree_without_changes(committed):
    run = run_cli("diff", *CONFIGS, "--exit-code", "HEAD", ".", "clusters/east", "clusters/west")
    assert (run.code, run.stderr) == (0, "")
    assert run.stdout.startswith("No changes in 2 PATHs.\n\n== clusters/east ==\n")
    assert run.stdout.count("No changes.\n") == 2


def test_a_cluster_config_change_reaches_only_its_cluster(committed):
    edit(committed / "clusters/west/inferenceservice-config.yaml", '"terminationGracePeriodSeconds": 90',
         '"terminationGracePeriodSeconds": 120')
    run = run_cli("diff", *CONFIGS, "HEAD", ".", "clusters/east", "clusters/west")
    assert (run.code, run.stderr) == (0, "")
    assert run.stdout.splitlines()[0] == "Changes in 1 of 2 PATHs: clusters/west"
    assert "  deploy.terminationGracePeriodSeconds: 90 -> 120\n" in run.stdout


def test_a_cluster_added_in_head_is_all_added(committed):
    shutil.copytree(committed / "clusters" / "west", committed / "clusters" / "north")
    run = run_cli("diff", "--cluster-config", "clusters/north/inferenceservice-config.yaml", "HEAD", ".",
                  "clusters/east", "clusters/north")
    assert (run.code, run.stderr) == (0, "")
    assert run.stdout.splitlines()[:4] == ["Changes in 1 of 2 PATHs: clusters/north", "", "== clusters/east ==",
                                           "InferenceServices: 0 added, 0 removed, 0 changed, 2 unchanged; 0 roll out"]
    assert "== clusters/north ==\nInferenceServices: 2 added, 0 removed, 0 changed, 0 unchanged; 0 roll out\n" in \
        run.stdout


def test_one_cluster_config_outside_every_path_serves_them_all(committed):
    shutil.copy(committed / "clusters/west/inferenceservice-config.yaml", committed / "shared-config.yaml")
    git(committed, "add", "shared-config.yaml")
    git(committed, "commit", "-qm", "one ConfigMap for every cluster")
    edit(committed / "shared-config.yaml", '"terminationGracePeriodSeconds": 90',
         '"terminationGracePeriodSeconds": 120')
    run = run_cli("diff", "--cluster-config", "shared-config.yaml", "-o", "json", "HEAD", ".", "clusters/east",
                  "clusters/west")
    assert (run.code, run.stderr) == (0, "")
    found = json.loads(run.stdout)
    assert found["changed"] == ["clusters/east", "clusters/west"]
    assert [entry["clusterConfig"] for entry in found["paths"]] == [
        [{"setting": "deploy.terminationGracePeriodSeconds", "base": 90, "head": 120}]] * 2


@pytest.mark.parametrize("args, error", [
    (("--cluster-config", "elsewhere.yaml", "--cluster-config", "clusters/west/inferenceservice-config.yaml"),
     "error: --cluster-config elsewhere.yaml: inside none of the PATHs (clusters/east, clusters/west); with several, "
     "give each PATH's ConfigMap file inside it, or one file for every PATH"),
    (("--cluster-config", "clusters/west/inferenceservice-config.yaml", "--cluster-config",
      "clusters/west/../west/inferenceservice-config.yaml"),
     "error: --cluster-config clusters/west/../west/inferenceservice-config.yaml: clusters/west has another, "
     "clusters/west/inferenceservice-config.yaml; give one file per PATH"),
    (("--cluster-config", "clusters/east/../../../outside.yaml", "--cluster-config",
      "clusters/west/inferenceservice-config.yaml"),
     "error: --cluster-config clusters/east/../../../outside.yaml: inside none of the PATHs (clusters/east, "
     "clusters/west); with several, give each PATH's ConfigMap file inside it, or one file for every PATH"),
])
def test_cluster_configs_that_name_no_one_path_are_refused(committed, args, error):
    run = run_cli("diff", *args, "HEAD", ".", "clusters/east", "clusters/west")
    assert (run.code, run.stdout, run.lines) == (2, "", [error])


def test_a_path_given_twice_is_refused(committed):
    run = run_cli("diff", "HEAD", ".", "clusters/east", "clusters/east")
    assert (run.code, run.stdout, run.lines) == (2, "", ["error: clusters/east: given twice as a PATH"])
    forged = "clusters/x\nerror: forged"
    shutil.copytree(committed / "clusters" / "west", committed / forged)
    run = run_cli("diff", "HEAD", ".", "clusters/east", forged, forged)
    assert (run.code, run.stdout, run.lines) == (2, "", ["error: clusters/x\\nerror: forged: given twice as a PATH"])


def test_cluster_config_twice_needs_several_overlay_paths(committed):
    run = run_cli("diff", *CONFIGS, "HEAD", ".", "clusters/west")
    assert (run.code, run.stdout, run.lines) == (2, "", [
        "error: --cluster-config is given 2 times: give it once, or give several PATHs with an overlay among them, "
        "each diffed on its own with the FILE it holds"])


def test_a_cluster_config_link_leading_out_of_the_repository_is_refused(committed, tmp_path):
    secret = tmp_path / "secret.yaml"
    secret.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: inferenceservice-config, namespace: ome}\n")
    (committed / "clusters/west/inferenceservice-config.yaml").unlink()
    (committed / "clusters/west/inferenceservice-config.yaml").symlink_to(secret)
    run = run_cli("diff", *CONFIGS, "HEAD", ".", "clusters/east", "clusters/west")
    assert (run.code, run.stdout) == (2, "")
    assert "outside" in run.stderr and "secret" not in run.stdout
    assert all(line.startswith("error: ") for line in run.lines)


def test_a_path_outside_the_repository_is_refused(committed):
    run = run_cli("diff", "HEAD~0", "HEAD", "--", "clusters/east", "../elsewhere")
    assert (run.code, run.stdout) == (2, "")
    assert run.lines == ["error: base: ../elsewhere: outside the git repository; give a path inside it",
                         "error: head: ../elsewhere: outside the git repository; give a path inside it"]


@pytest.mark.parametrize("path", ["../elsewhere", "clusters/../../elsewhere", "/etc"])
def test_a_directory_side_path_leading_out_is_refused(committed, tmp_path, path):
    other = tmp_path / "other"
    shutil.copytree(committed, other, ignore=shutil.ignore_patterns(".git"))
    run = run_cli("diff", ".", str(other), "clusters/east", path)
    assert (run.code, run.stdout) == (2, "")
    assert run.lines == [f"error: base: {path}: PATH must be relative and inside .",
                         f"error: head: {path}: PATH must be relative and inside {other}"]


def test_a_linked_cluster_directory_leading_out_is_refused(committed, tmp_path):
    outside = tmp_path / "outside"
    shutil.copytree(committed / "clusters" / "west", outside)
    (committed / "clusters" / "south").symlink_to(outside)
    other = tmp_path / "other"
    shutil.copytree(committed, other, ignore=shutil.ignore_patterns(".git"), symlinks=True)
    run = run_cli("diff", ".", str(other), "clusters/east", "clusters/south")
    assert (run.code, run.stdout) == (2, "")
    assert run.lines == [
        f"error: base: ./clusters/south: symbolic link to {outside}, outside {committed}/clusters; omerender reads "
        "only the files it is given",
        f"error: head: {other}/clusters/south: symbolic link to {outside}, outside {other}/clusters; omerender reads "
        "only the files it is given"]


def test_a_linked_cluster_directory_in_a_revision_is_not_followed(committed, tmp_path):
    outside = tmp_path / "outside"
    shutil.copytree(committed / "clusters" / "west", outside)
    (committed / "clusters" / "south").symlink_to(outside)
    git(committed, "add", ".")
    git(committed, "commit", "-qm", "a link")
    run = run_cli("diff", "HEAD~1", "HEAD", "--", "clusters/east", "clusters/south")
    assert (run.code, run.stdout, run.lines) == (2, "", ["error: clusters/south: in neither HEAD~1 nor HEAD"])


def test_strict_fails_on_a_warning_of_any_clusters_head(committed):
    run = run_cli("diff", *CONFIGS, "--strict", "HEAD", ".", "clusters/east", "clusters/west")
    assert (run.code, run.stdout) == (2, "")
    assert run.lines == [
        f"warning: head (clusters/{cluster}): base/services.yaml: InferenceService llm/{name}: Runtime {runtime} will "
        "be auto-selected for model llama-3-3-70b-instruct"
        for cluster, runtime in (("east", "srt-llama-3-3-70b-h100"), ("west", "srt-llama-3-3-70b-a100-l40s"))
        for name in ("batch", "chat")] + ["error: 4 warnings, and --strict makes every warning fail the run"]
    allowed = run_cli("diff", *CONFIGS, "--strict", "--allow", "auto-selected-runtime", "HEAD", ".", "clusters/east",
                      "clusters/west")
    assert (allowed.code, allowed.stderr) == (0, "")
    assert allowed.stdout.startswith("No changes in 2 PATHs.\n")


def test_a_cluster_directory_named_with_control_characters_is_shown_escaped(committed):
    name = "clusters/red\x1b[31m"
    shutil.copytree(committed / "clusters" / "west", committed / name)
    text = run_cli("diff", "HEAD", ".", "clusters/east", name)
    assert (text.code, text.stderr) == (0, "")
    assert "\x1b" not in text.stdout
    assert text.stdout.splitlines()[0] == "Changes in 1 of 2 PATHs: clusters/red\\x1b[31m"
    assert "\n== clusters/red\\x1b[31m ==\n" in text.stdout
    markdown = run_cli("diff", "-o", "markdown", "HEAD", ".", "clusters/east", name)
    assert markdown.code == 0 and "\x1b" not in markdown.stdout
    assert json.loads(run_cli("diff", "-o", "json", "HEAD", ".", "clusters/east", name).stdout)["changed"] == [name]


def test_diff_markdown_cap_holds_with_twenty_long_cluster_paths(committed):
    """issue 41: twenty changed PATHs with long names would make the headline alone longer than a comment; it
    names those that fit and counts the rest, and the comment stays within 65,536 characters."""
    paths, configs = [], []
    for i in range(20):
        parts = ["clusters", *(f"{c * 200}-{i:02d}" for c in "abcdefghijklmno")]
        path = Path(*parts)
        shutil.copytree(committed / "clusters" / "east", committed / path)
        base = os.path.relpath(committed / "base", committed / path)
        edit(committed / path / "kustomization.yaml", "../../base", base)
        paths.append(str(path))
        configs += ["--cluster-config", str(path / "inferenceservice-config.yaml")]
    git(committed, "add", ".")
    git(committed, "commit", "-qm", "twenty clusters")
    for path in paths:
        edit(committed / path / "runtimes.yaml", OLD_IMAGE, NEW_IMAGE)
    git(committed, "commit", "-qam", "new image everywhere")
    run = run_cli("diff", *configs, "--format", "markdown", "HEAD~1", "HEAD", "--", *paths)
    assert run.code == 0, run.stderr
    assert len(run.stdout) <= 65_536
    headline = run.stdout.splitlines()[2]
    assert headline.startswith("Changes in 20 of 20 PATHs: `clusters/")
    shown = headline.count("`clusters/")
    assert 0 < shown < 20 and headline.endswith(f", and {20 - shown} more")
    assert run.stdout.endswith("more PATHs left out: a comment holds at most 65,536 characters. `omerender diff` "
                               "prints them all._\n")
