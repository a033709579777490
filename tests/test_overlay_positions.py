"""Positions through an overlay (issue 40): a message about an object a kustomize build read names the line and
column of the base file it was written in, or of the patch that set the value (saying it came through the overlay),
in ``render``, ``build`` (pipeline and function paths), the Argo CD plugin and the KRM function's results; an
origin a repository writes itself never makes omerender read outside the repository."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from conftest import FIXTURES, run_cli
from omerender.gitops import krm
from test_argocd import PLUGIN, environment, run_command

CONFIG = """\
# OME's settings for this cluster (a document marker first: lines count from the file's start)
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: inferenceservice-config
  namespace: ome
data:
  ingress: |-
    {
        "ingressGateway": "istio-system/gw",
        "ingressService": "gw.istio-system.svc.cluster.local",
        "disableIngressCreation": true
    }
"""
PATCH = """\
patches:
  - patch: |
      apiVersion: ome.io/v1beta1
      kind: InferenceService
      metadata:
        name: llama-3-2-3b-instruct
      spec:
        engine:
          minReplicas: 2
"""
THROUGH = "(the value comes through the overlay: this patch sets it on InferenceService llama-3-2-3b-instruct of "


def repository(root: Path) -> Path:
    """A base (runtime, model, InferenceService, the cluster ConfigMap), prod (a patch, omerender last) and eu
    above it (a name prefix: the function path)."""
    shutil.copytree(FIXTURES / "kustomize" / "base", root / "base")
    (root / "base" / "config.yaml").write_text(CONFIG)
    (root / "base" / "kustomization.yaml").write_text("resources: [runtime.yaml, model.yaml, isvc.yaml, config.yaml]\n")
    (root / "prod").mkdir()
    shutil.copy(FIXTURES / "kustomize" / "overlays" / "prod" / "omerender.yaml", root / "prod" / "omerender.yaml")
    (root / "prod" / "kustomization.yaml").write_text("resources: [../base]\n" + PATCH + "transformers: [omerender.yaml]\n")
    (root / "eu").mkdir()
    (root / "eu" / "kustomization.yaml").write_text("resources: [../prod]\nnamePrefix: eu-\n")
    (root / ".git").mkdir()
    return root


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


BROKEN = {
    "unknown field": ("base/isvc.yaml", "maxReplicas: 2", "maxReplica: 2",
                      'base/isvc.yaml:13:5: InferenceService {ns}llama-3-2-3b-instruct: spec.engine.maxReplica: '
                      'unknown field "maxReplica"; did you mean "maxReplicas"?'),
    "runtime typo": ("base/runtime.yaml", "priority: 1", "priorty: 1",
                     'base/runtime.yaml:16:7: ClusterServingRuntime sglang-llama-3-2-3b: '
                     'spec.supportedModelFormats[0].priorty: unknown field "priorty"; did you mean "priority"?'),
    "annotation value": ("base/isvc.yaml", "  name: llama-3-2-3b-instruct\n",
                         "  name: llama-3-2-3b-instruct\n  annotations:\n    ome.io/deploymentMode: RawDeploymnt\n",
                         'base/isvc.yaml:7:5: InferenceService {ns}llama-3-2-3b-instruct: annotation '
                         'ome.io/deploymentMode: "RawDeploymnt" is not RawDeployment'),
    "configmap json": ("base/config.yaml", '"disableIngressCreation": true', '"disableIngressCreation": tru',
                       "base/config.yaml:13:38: ConfigMap {cm}inferenceservice-config: data.ingress: unable to parse "
                       "ingress config json"),
    "patch": ("prod/kustomization.yaml", "minReplicas: 2", "minReplica: 2",
              'prod/kustomization.yaml:10:11: InferenceService {ns}llama-3-2-3b-instruct: spec.engine.minReplica: '
              'unknown field "minReplica"; did you mean "minReplicas"? ' + THROUGH + "base/isvc.yaml)"),
}


def broken(tmp_path: Path, case: str) -> tuple[Path, str]:
    root = repository(tmp_path / "repo")
    file, old, new, expected = BROKEN[case]
    edit(root / file, old, new)
    return root, expected


def problem_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith(("error: ", "warning: "))]


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_render_of_an_overlay_names_the_base_files_line(tmp_path, monkeypatch, case):
    root, expected = broken(tmp_path, case)
    monkeypatch.chdir(root)
    run = run_cli("render", "prod")
    wanted = expected.format(ns="default/", cm="ome/")
    assert any(line.split(": ", 1)[1].startswith(wanted) for line in run.placed_lines), (wanted, run.placed_lines)


@pytest.mark.parametrize("case", sorted(BROKEN))
@pytest.mark.parametrize("overlay", ["prod", "eu"])
def test_build_names_the_base_files_line_on_both_paths(tmp_path, case, overlay):
    root, expected = broken(tmp_path, case)
    done = subprocess.run(["omerender", "build", overlay], cwd=root, capture_output=True, text=True, check=False)
    wanted = expected.format(ns="default/", cm="ome/")
    assert any(line.split(": ", 1)[1].startswith(wanted) for line in problem_lines(done.stderr)), \
        (wanted, done.stderr)


@pytest.mark.parametrize("case", ["unknown field", "patch", "configmap json"])
def test_the_argocd_plugin_names_the_base_files_line(tmp_path, case):
    root, expected = broken(tmp_path, case)
    environ = environment("prod", {}, [])
    assert run_command(PLUGIN["spec"]["init"], root / "prod", environ).returncode == 0
    done = run_command(PLUGIN["spec"]["generate"], root / "prod", environ)
    # Argo CD runs in the app's directory: paths are relative to it
    wanted = expected.format(ns="default/", cm="ome/").replace("base/", "../base/").replace("prod/", "")
    assert done.returncode == 1 and done.stdout == ""
    assert any(line.split(": ", 1)[1].startswith(wanted) for line in problem_lines(done.stderr)), \
        (wanted, done.stderr)


def test_the_output_is_byte_identical_with_no_provenance_left(tmp_path):
    root = repository(tmp_path / "repo")
    for overlay in ("prod", "eu"):
        done = subprocess.run(["omerender", "build", overlay], cwd=root, capture_output=True, text=True, check=True)
        assert "config.kubernetes.io/origin" not in done.stdout
        assert "alpha.config.kubernetes.io" not in done.stdout


def function_items(root: Path) -> list[dict]:
    """What kustomize hands the function in prod (no origin annotations asked for)."""
    items = []
    for name in ("runtime.yaml", "model.yaml", "isvc.yaml", "config.yaml"):
        items.extend(yaml.safe_load_all((root / "base" / name).read_text()))
    return [item for item in items if item]


def test_the_functions_results_carry_file_field_severity_and_code(tmp_path, monkeypatch):
    root, _ = broken(tmp_path, "unknown field")
    edit(root / "base" / "isvc.yaml", "  name: llama-3-2-3b-instruct\n",
         "  name: llama-3-2-3b-instruct\n  annotations:\n    ome.io/deploymentMode: RawDeploymnt\n")
    monkeypatch.chdir(root / "prod")
    text = yaml.safe_dump({"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList",
                           "items": function_items(root)})
    out, code, lines = krm.run_with_lines(text)
    assert code == 1
    (result,) = out["results"]
    assert result["file"] == {"path": "../base/isvc.yaml", "index": 0}
    assert result["field"] == {"path": "spec.engine.maxReplica"}
    assert result["severity"] == "error"
    assert result["message"].startswith("InferenceService default/llama-3-2-3b-instruct: spec.engine.maxReplica")
    assert lines[0].startswith("error: ../base/isvc.yaml:15:5: InferenceService default/llama-3-2-3b-instruct: "
                               + result["message"][len("InferenceService default/llama-3-2-3b-instruct: "):])
    edit(root / "base" / "isvc.yaml", "maxReplica: 2", "maxReplicas: 2")
    text = yaml.safe_dump({"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList",
                           "items": function_items(root)})
    out, code, lines = krm.run_with_lines(text)
    warning = next(r for r in out["results"] if r["severity"] == "warning")
    assert warning["tags"] == {"code": "unknown-deployment-mode"}
    assert warning["file"] == {"path": "../base/isvc.yaml", "index": 0}
    assert warning["field"]["path"].startswith("metadata.annotations")
    assert any(line.startswith("warning: ../base/isvc.yaml:7:5: ") for line in lines), lines


def test_the_function_under_kustomize_prints_the_clis_line(tmp_path):
    root, _ = broken(tmp_path, "patch")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fn = bin_dir / "omerender-fn"
    fn.write_text(f"#!/bin/sh\nexec {shutil.which('omerender')} fn\n")
    fn.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["kustomize", "build", "--enable-alpha-plugins", "--enable-exec", "."], cwd=root / "prod",
                          capture_output=True, text=True, check=False, env=env)
    assert ("error: kustomization.yaml:10:11: InferenceService default/llama-3-2-3b-instruct: spec.engine.minReplica: "
            'unknown field "minReplica"; did you mean "minReplicas"? ' + THROUGH + "../base/isvc.yaml)") \
        in done.stderr.splitlines(), done.stderr


def test_an_origin_the_repository_writes_is_never_read_outside_it(tmp_path, monkeypatch):
    root, _ = broken(tmp_path, "unknown field")
    outside = tmp_path / "outside.yaml"
    shutil.copy(root / "base" / "isvc.yaml", outside)
    items = function_items(root)
    isvc = next(item for item in items if item["kind"] == "InferenceService")
    isvc["metadata"]["annotations"] = {"config.kubernetes.io/origin": "path: ../../outside.yaml\n"}
    monkeypatch.chdir(root / "prod")
    out, code, lines = krm.run_with_lines(yaml.safe_dump({"apiVersion": "config.kubernetes.io/v1",
                                                          "kind": "ResourceList", "items": items}))
    assert code == 1
    assert lines[0].startswith("error: ../../outside.yaml: InferenceService"), lines  # named, never read
    assert "file" in out["results"][0] and "index" not in out["results"][0]["file"]


def test_a_symbolic_link_out_of_the_repository_is_not_followed(tmp_path, monkeypatch):
    root, _ = broken(tmp_path, "unknown field")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    shutil.move(root / "base" / "isvc.yaml", outside / "isvc.yaml")
    (root / "base" / "isvc.yaml").symlink_to(outside / "isvc.yaml")
    items = function_items(root)
    monkeypatch.chdir(root / "prod")
    out, code, lines = krm.run_with_lines(yaml.safe_dump({"apiVersion": "config.kubernetes.io/v1",
                                                          "kind": "ResourceList", "items": items}))
    assert code == 1
    assert not any(":13:5:" in line or ":16:5:" in line for line in lines), lines


def test_diff_of_two_revisions_names_the_repositorys_file_and_line(tmp_path, monkeypatch):
    root = repository(tmp_path / "repo")
    shutil.rmtree(root / ".git")
    git = ["git", "-c", "user.email=a@example.com", "-c", "user.name=a"]
    subprocess.run([*git, "init", "-q", "."], cwd=root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "base"], cwd=root, check=True)
    edit(root / "base" / "isvc.yaml", "maxReplicas: 2", "maxReplica: 2")
    subprocess.run([*git, "commit", "-qam", "typo"], cwd=root, check=True)
    monkeypatch.chdir(root)
    run = run_cli("diff", "HEAD~1", "HEAD", "prod")
    assert run.code == 2  # diff's exit status for an input it cannot render
    assert run.placed_lines == ['error: head: base/isvc.yaml:13:5: InferenceService default/llama-3-2-3b-instruct: '
                                'spec.engine.maxReplica: unknown field "maxReplica"; did you mean "maxReplicas"?']


def test_a_json_patch_in_its_own_file_is_pointed_at(tmp_path, monkeypatch):
    root = repository(tmp_path / "repo")
    (root / "prod" / "replicas.yaml").write_text("- op: add\n  path: /spec/engine/maxReplica\n  value: 3\n")
    edit(root / "prod" / "kustomization.yaml", "transformers:",
         "  - path: replicas.yaml\n    target: {kind: InferenceService, name: llama-3-2-3b-instruct}\ntransformers:")
    monkeypatch.chdir(root)
    run = run_cli("render", "prod")
    assert run.placed_lines == [
        'error: prod/replicas.yaml:3:3: InferenceService default/llama-3-2-3b-instruct: spec.engine.maxReplica: '
        'unknown field "maxReplica"; did you mean "maxReplicas"? ' + THROUGH + "base/isvc.yaml)"]


def test_objects_of_one_name_in_two_namespaces_of_one_file_are_told_apart(tmp_path, monkeypatch):
    root = repository(tmp_path / "repo")
    isvc = (root / "base" / "isvc.yaml").read_text()
    two = (isvc.replace("metadata:\n", "metadata:\n  namespace: a\n") + "---\n"
           + isvc.replace("metadata:\n", "metadata:\n  namespace: b\n").replace("maxReplicas: 2", "maxReplica: 2"))
    (root / "base" / "isvc.yaml").write_text(two)
    (root / "plain").mkdir()
    shutil.copy(root / "prod" / "omerender.yaml", root / "plain" / "omerender.yaml")
    (root / "plain" / "kustomization.yaml").write_text("resources: [../base]\ntransformers: [omerender.yaml]\n")
    monkeypatch.chdir(root)
    line = two.splitlines().index("    maxReplica: 2") + 1
    run = run_cli("render", "plain")
    assert [item for item in run.placed_lines if item.startswith("error:")] == [
        f'error: base/isvc.yaml:{line}:5: InferenceService b/llama-3-2-3b-instruct: spec.engine.maxReplica: '
        'unknown field "maxReplica"; did you mean "maxReplicas"?']


def test_a_patch_targets_pattern_the_repository_wrote_is_never_run_by_pythons_regex_engine(tmp_path):
    """kustomize reads target names as RE2 expressions (linear); Python's engine would take years on this one."""
    import time

    from omerender.gitops import kbuild, patches

    kfile = tmp_path / "kustomization.yaml"
    data = {"patches": [{"patch": "- op: add\n  path: /spec/x\n  value: 1\n",
                         "target": {"kind": "InferenceService", "name": "(a|aa)+$"}}]}
    kfile.write_text(yaml.safe_dump(data))
    tree = kbuild.Tree(str(tmp_path), str(tmp_path), kustomizations={str(kfile): data})
    start = time.monotonic()
    assert patches.finder(tree)("InferenceService", "a" * 60 + "b", "spec.x") is None
    assert time.monotonic() - start < 2
    data["patches"][0]["target"]["name"] = "llama-.*"
    kfile.write_text(yaml.safe_dump(data))
    found = patches.finder(tree)("InferenceService", "llama-3", "spec.x")
    assert found is not None and found[0].endswith("kustomization.yaml")


def test_an_origin_annotation_in_a_base_file_does_not_move_the_build_out_of_the_repository(tmp_path, monkeypatch):
    root, _ = broken(tmp_path, "unknown field")
    shutil.copy(root / "base" / "isvc.yaml", tmp_path / "secret.yaml")  # a matching object outside: never read
    edit(root / "base" / "isvc.yaml", "  name: llama-3-2-3b-instruct\n",
         "  name: llama-3-2-3b-instruct\n  annotations:\n    config.kubernetes.io/origin: 'path: ../../secret.yaml'\n")
    monkeypatch.chdir(root)
    run = run_cli("render", "prod")
    assert run.placed_lines == ['error: base/isvc.yaml:15:5: InferenceService default/llama-3-2-3b-instruct: '
                                'spec.engine.maxReplica: unknown field "maxReplica"; did you mean "maxReplicas"?']
