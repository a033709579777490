"""``omerender diff``: each kind of change of issue 15, through the CLI, on directories and on git revisions.

fixtures/diff/base is a small fleet; each other directory of fixtures/diff holds the files that replace base's
to make one kind of change (the head side).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from fractions import Fraction
from pathlib import Path

import pytest

from conftest import FIXTURES, run_cli, unplaced
from omerender.yamlio import limits

BASE = FIXTURES / "diff" / "base"
NO_CLASS = "nvidia.com/gpu", None
UNCHANGED_GPUS = [
    {"resource": "nvidia.com/gpu", "class": None, "base": {"min": 4, "max": 7}, "head": {"min": 4, "max": 7}},
    {"resource": "nvidia.com/gpu", "class": "nvidia-l40s", "base": {"min": 8, "max": 32},
     "head": {"min": 8, "max": 32}},
]
L40S = [{"component": "engine", "base": "nvidia-l40s", "head": "nvidia-l40s"}]


NO_WARNINGS = {"new": [], "gone": []}


def auto_selected(file, name: str, runtime: str) -> dict:
    return {"file": str(file), "object": f"InferenceService llm/{name}",
            "text": f"Runtime {runtime} will be auto-selected for model llama-3-1-8b-instruct",
            "code": "auto-selected-runtime"}


def head_of(tmp_path: Path, scenario: str) -> Path:
    head = tmp_path / "head"
    shutil.copytree(BASE, head)
    for file in (FIXTURES / "diff" / scenario).iterdir():
        shutil.copy(file, head / file.name)
    return head


def diff_json(*args, values: bool = False) -> dict:
    """The JSON report; without ``values``, each object's ``changes`` (the fields' values, tested on their own
    in the tests of values) left out."""
    run = run_cli("diff", *args, "--format", "json")
    assert run.code == 0, run.stderr
    result = json.loads(run.stdout)
    if not values:
        for obj in result["objects"] + [o for i in result["inferenceServices"] for o in i["objects"]]:
            del obj["changes"]
    return result


def unchanged(name: str, runtime: str = "sglang-8b", accelerators=()) -> dict:
    return {"namespace": "llm", "name": name, "status": "unchanged", "rollout": False,
            "runtime": {"base": runtime, "head": runtime, "reason": None}, "accelerators": list(accelerators),
            "edited": [], "objects": []}


def deployment(name: str, *fields: str) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "name": name, "change": "changed", "fields": list(fields)}


def summary(added=0, removed=0, changed=0, unchanged=0, rollouts=0) -> dict:
    return {"inferenceServices": {"added": added, "removed": removed, "changed": changed, "unchanged": unchanged},
            "rollouts": rollouts}


# ---------------------------------------------------------------- each kind of change

def test_runtime_image_bump_rolls_every_inference_service_on_it(tmp_path):
    result = diff_json(str(BASE), str(head_of(tmp_path, "image-bump")))
    edited = {"base": "sglang-8b", "head": "sglang-8b", "reason": "edited: ClusterServingRuntime sglang-8b"}

    def rolled(name):
        return {"namespace": "llm", "name": name, "status": "changed", "rollout": True, "runtime": edited,
                "accelerators": [], "edited": [],
                "objects": [deployment(f"{name}-engine", "spec.template.spec.containers[name=ome-container].image")]}

    assert result == {"summary": summary(changed=3, unchanged=1, rollouts=3),
                      "inferenceServices": [unchanged("big", "sglang-70b", L40S), rolled("chat-a"),
                                            rolled("chat-b"), rolled("chat-c")],
                      "gpus": UNCHANGED_GPUS, "objects": [], "generated": [], "warnings": NO_WARNINGS}


RELABELLED = ['metadata.annotations["ome.io/serving-runtime"]', 'metadata.labels["serving-runtime"]']


def switched(name: str, reason: str) -> dict:
    objects = [deployment(f"{name}-engine", *RELABELLED,
                          'spec.template.metadata.annotations["ome.io/serving-runtime"]',
                          'spec.template.metadata.labels["serving-runtime"]',
                          "spec.template.spec.containers[name=ome-container].args", "spec.template.spec.containers[name=ome-container].command[2]",
                          "spec.template.spec.containers[name=ome-container].image")]
    objects += [{"apiVersion": api, "kind": kind, "name": f"{name}-engine", "change": "changed",
                 "fields": RELABELLED}
                for api, kind in (("v1", "Service"), ("autoscaling/v2", "HorizontalPodAutoscaler"),
                                  ("policy/v1", "PodDisruptionBudget"))]
    return {"namespace": "llm", "name": name, "status": "changed", "rollout": True,
            "runtime": {"base": "sglang-8b", "head": "vllm-8b", "reason": reason}, "accelerators": [],
            "edited": [], "objects": objects}


def test_priority_edit_flips_auto_selection_with_the_deciding_rule(tmp_path):
    head = head_of(tmp_path, "priority-flip")
    result = diff_json(str(BASE), str(head))
    reason = "auto-selection chose vllm-8b: higher score: 4 over 2 of sglang-8b (Cluster)"
    # chat-c names sglang-8b, so the new preference does not reach it.
    assert result == {"summary": summary(changed=2, unchanged=2, rollouts=2),
                      "inferenceServices": [unchanged("big", "sglang-70b", L40S), switched("chat-a", reason),
                                            switched("chat-b", reason), unchanged("chat-c")],
                      "gpus": UNCHANGED_GPUS, "objects": [], "generated": [],
                      "warnings": {"new": [auto_selected(head / "services.yaml", n, "vllm-8b") for n in ("chat-a", "chat-b")],
                                   "gone": [auto_selected(BASE / "services.yaml", n, "sglang-8b")
                                            for n in ("chat-a", "chat-b")]}}


def test_size_range_edit_flips_auto_selection_and_says_why_the_old_runtime_lost(tmp_path):
    head = head_of(tmp_path, "size-range")
    result = diff_json(str(BASE), str(head))
    reason = ("auto-selection chose vllm-8b: only compatible runtime; sglang-8b: model size 8.03B is outside "
              "supported range [7B, 8B]")
    assert result["inferenceServices"] == [unchanged("big", "sglang-70b", L40S), switched("chat-a", reason),
                                           switched("chat-b", reason), unchanged("chat-c")]
    # chat-c keeps the runtime it names, which no longer declares the model's size: the review must show it.
    outside = ('runtime "sglang-8b" does not declare support for model "llama-3-1-8b-instruct" (runtime sglang-8b '
               "does not support model safetensors: model size 8.03B is outside supported range [7B, 8B]); "
               "proceeding because the runtime was named explicitly")
    assert result["warnings"]["new"][2] == {"file": str(head / "services.yaml"),
                                            "object": "InferenceService llm/chat-c", "text": outside,
                                            "code": "runtime-unsupported-model"}
    text = unplaced(run_cli("diff", str(BASE), str(head)).stdout)  # positions: test_lines
    assert "Warnings: 3 new, 2 gone\n" in text
    assert f"Warnings new in head:\n  warning: {head / 'services.yaml'}: InferenceService llm/chat-a: Runtime " \
           "vllm-8b will be auto-selected" in text
    assert (f"  warning: {head / 'services.yaml'}: InferenceService llm/chat-c: {outside} "
            "[runtime-unsupported-model]\n") in text
    assert text.endswith(f"Warnings gone from base:\n  warning: {BASE / 'services.yaml'}: InferenceService llm/chat-a: "
                         "Runtime sglang-8b will be auto-selected for model llama-3-1-8b-instruct "
                         "[auto-selected-runtime]\n"
                         f"  warning: {BASE / 'services.yaml'}: InferenceService llm/chat-b: "
                         "Runtime sglang-8b will be auto-selected for model llama-3-1-8b-instruct "
                         "[auto-selected-runtime]\n")


def test_max_replicas_edit_changes_only_the_hpa_and_the_gpus_at_max(tmp_path):
    head = head_of(tmp_path, "max-replicas")
    result = diff_json(str(BASE), str(head))
    assert result == {
        "summary": summary(changed=1, unchanged=3),
        "inferenceServices": [
            unchanged("big", "sglang-70b", L40S), unchanged("chat-a"),
            {"namespace": "llm", "name": "chat-b", "status": "changed", "rollout": False,
             "runtime": {"base": "sglang-8b", "head": "sglang-8b", "reason": None}, "accelerators": [], "edited": [],
             "objects": [{"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "name": "chat-b-engine",
                          "change": "changed", "fields": ["spec.maxReplicas"]}]},
            unchanged("chat-c")],
        "gpus": [{"resource": "nvidia.com/gpu", "class": None, "base": {"min": 4, "max": 7},
                  "head": {"min": 4, "max": 11}}, UNCHANGED_GPUS[1]],
        "objects": [], "generated": [], "warnings": NO_WARNINGS}
    run = run_cli("diff", str(BASE), str(head))
    assert run.code == 0 and run.stderr == ""
    assert run.stdout == """\
InferenceServices: 0 added, 0 removed, 1 changed, 3 unchanged; 0 roll out
GPUs at min / max replicas:
  nvidia.com/gpu (no accelerator class): 4 at min, 7 -> 11 (+4) at max
  nvidia.com/gpu (nvidia-l40s): 8 at min, 32 at max

InferenceService llm/chat-b: changed
  ~ autoscaling/v2 HorizontalPodAutoscaler chat-b-engine
      spec.maxReplicas: 4 -> 8
"""


def test_unified_diff_of_the_yaml_with_U(tmp_path):
    run = run_cli("diff", "-U", "1", str(BASE), str(head_of(tmp_path, "max-replicas")))
    assert run.code == 0
    assert run.stdout.split("\n\n")[1] == """\
InferenceService llm/chat-b: changed
  ~ autoscaling/v2 HorizontalPodAutoscaler chat-b-engine
      spec.maxReplicas: 4 -> 8
    --- base/HorizontalPodAutoscaler/llm/chat-b-engine
    +++ head/HorizontalPodAutoscaler/llm/chat-b-engine
    @@ -23,3 +23,3 @@
     spec:
    -  maxReplicas: 4
    +  maxReplicas: 8
       metrics:
"""


def test_unified_diff_in_json_with_U(tmp_path):
    head = head_of(tmp_path, "max-replicas")
    [hpa] = diff_json(str(BASE), str(head), "-U", "1")["inferenceServices"][2]["objects"]
    assert hpa["unified"] == ["--- base/HorizontalPodAutoscaler/llm/chat-b-engine",
                              "+++ head/HorizontalPodAutoscaler/llm/chat-b-engine", "@@ -23,3 +23,3 @@", " spec:",
                              "-  maxReplicas: 4", "+  maxReplicas: 8", "   metrics:"]
    assert "unified" not in diff_json(str(BASE), str(head))["inferenceServices"][2]["objects"][0]


def test_accelerator_class_change_moves_gpus_between_classes(tmp_path):
    result = diff_json(str(BASE), str(head_of(tmp_path, "accelerator-class")))
    big = result["inferenceServices"][0]
    assert big == {"namespace": "llm", "name": "big", "status": "changed", "rollout": True,
                   "runtime": {"base": "sglang-70b", "head": "sglang-70b", "reason": None},
                   "accelerators": [{"component": "engine", "base": "nvidia-l40s", "head": "nvidia-h100"}],
                   "edited": [], "objects": [deployment("big-engine", 'spec.template.spec.nodeSelector["nvidia.com/gpu.product"]')]}
    assert result["gpus"] == [
        UNCHANGED_GPUS[0],
        {"resource": "nvidia.com/gpu", "class": "nvidia-h100", "base": {"min": 0, "max": 0},
         "head": {"min": 8, "max": 32}},
        {"resource": "nvidia.com/gpu", "class": "nvidia-l40s", "base": {"min": 8, "max": 32},
         "head": {"min": 0, "max": 0}}]


def test_gpu_count_change_in_a_runtime(tmp_path):
    result = diff_json(str(BASE), str(head_of(tmp_path, "gpu-count")))
    assert result["summary"] == summary(changed=3, unchanged=1, rollouts=3)
    assert result["inferenceServices"][1]["objects"] == [deployment(
        "chat-a-engine", "spec.template.spec.containers[name=ome-container].args[3]", "spec.template.spec.containers[name=ome-container].env[PARALLELISM_SIZE].value",
        'spec.template.spec.containers[name=ome-container].resources.limits["nvidia.com/gpu"]',
        'spec.template.spec.containers[name=ome-container].resources.requests["nvidia.com/gpu"]')]
    assert result["gpus"] == [
        {"resource": "nvidia.com/gpu", "class": None, "base": {"min": 4, "max": 7}, "head": {"min": 8, "max": 14}},
        UNCHANGED_GPUS[1]]


ADDED_REMOVED_MARKDOWN = """\
### omerender diff

| InferenceServices added | Removed | Changed | Unchanged | Pods roll out in |
| --- | --- | --- | --- | --- |
| 1 | 1 | 0 | 3 | 0 |

| InferenceService | Status | Rollout | Runtime | Accelerator class | Objects |
| --- | --- | --- | --- | --- | --- |
| `llm/chat-c` | removed | no | `sglang-8b` → none | - | 5 removed |
| `llm/chat-d` | added | no | none → `sglang-8b` | - | 5 added |

| Resource | Accelerator class | At minReplicas | At maxReplicas |
| --- | --- | --- | --- |
| `nvidia.com/gpu` | none | 4 | 7 → 9 (**+2**) |
| `nvidia.com/gpu` | nvidia-l40s | 8 | 32 |

<details><summary>llm/chat-c: removed</summary>

- runtime: `sglang-8b` → none
- removed `apps/v1 Deployment chat-c-engine`
- removed `v1 Service chat-c-engine`
- removed `autoscaling/v2 HorizontalPodAutoscaler chat-c-engine`
- removed `policy/v1 PodDisruptionBudget chat-c-engine`
- removed `v1 Service chat-c`

</details>

<details><summary>llm/chat-d: added</summary>

- runtime: none → `sglang-8b`
- added `apps/v1 Deployment chat-d-engine`
- added `v1 Service chat-d-engine`
- added `autoscaling/v2 HorizontalPodAutoscaler chat-d-engine`
- added `policy/v1 PodDisruptionBudget chat-d-engine`
- added `v1 Service chat-d`

</details>
"""


def test_added_and_removed_inference_services_as_a_pull_request_comment(tmp_path):
    head = head_of(tmp_path, "added-removed")
    run = run_cli("diff", str(BASE), str(head), "--format", "markdown")
    assert run.code == 0
    escaped = str(head / "services.yaml").replace("_", "\\_")
    assert run.stdout == ADDED_REMOVED_MARKDOWN + f"""
<details><summary>Warnings: 1 new, 0 gone</summary>

- new: warning: {escaped}:25:1: InferenceService llm/chat-d: Runtime sglang-8b will be auto-selected for model \
llama-3-1-8b-instruct \\[auto-selected-runtime\\]

</details>
"""
    result = diff_json(str(BASE), str(head_of(tmp_path / "again", "added-removed")))
    assert [(i["name"], i["status"], i["runtime"]) for i in result["inferenceServices"]] == [
        ("big", "unchanged", {"base": "sglang-70b", "head": "sglang-70b", "reason": None}),
        ("chat-a", "unchanged", {"base": "sglang-8b", "head": "sglang-8b", "reason": None}),
        ("chat-b", "unchanged", {"base": "sglang-8b", "head": "sglang-8b", "reason": None}),
        ("chat-c", "removed", {"base": "sglang-8b", "head": None, "reason": None}),
        ("chat-d", "added", {"base": None, "head": "sglang-8b", "reason": None})]
    assert result["inferenceServices"][4]["objects"][0] == {
        "apiVersion": "apps/v1", "kind": "Deployment", "name": "chat-d-engine", "change": "added", "fields": []}


def test_multinode_gpus_count_the_leader_and_every_worker(tmp_path):
    head = head_of(tmp_path, "max-replicas")
    with open(head / "services.yaml", "a") as handle:
        handle.write("""---
apiVersion: ome.io/v1beta1
kind: InferenceService
metadata: {name: multi, namespace: llm}
spec:
  model: {name: llama-3-1-8b-instruct}
  runtime: {name: sglang-8b}
  engine:
    annotations: {ome.io/deploymentMode: MultiNode}
    minReplicas: 2
    maxReplicas: 2
    leader:
      runner: {name: ome-container, resources: {limits: {nvidia.com/gpu: "4"}, requests: {nvidia.com/gpu: "4"}}}
    worker:
      size: 3
      runner: {name: ome-container, resources: {limits: {nvidia.com/gpu: "2"}, requests: {nvidia.com/gpu: "2"}}}
""")
    result = diff_json(str(BASE), str(head))
    # two groups of one leader (4 GPUs) and three workers (2 each): 20 more at min and at max
    assert result["gpus"][0] == {"resource": "nvidia.com/gpu", "class": None, "base": {"min": 4, "max": 7},
                                 "head": {"min": 24, "max": 31}}
    assert [o["kind"] for o in result["inferenceServices"][4]["objects"]] == ["LeaderWorkerSet", "Service",
                                                                             "Service"]


def test_pass_through_objects_are_reported_at_the_top_level(tmp_path):
    head = head_of(tmp_path, "max-replicas")
    (head / "namespace.yaml").write_text((BASE / "namespace.yaml").read_text().replace('"4096"', '"8192"'))
    result = diff_json(str(BASE), str(head))
    assert result["objects"] == [{"apiVersion": "v1", "kind": "ConfigMap", "name": "chat-settings",
                                  "namespace": "llm", "change": "changed", "fields": ['data["max-tokens"]']}]


# ---------------------------------------------------------------- exit status and errors

def test_exit_code_only_with_the_flag(tmp_path):
    head = head_of(tmp_path, "max-replicas")
    assert run_cli("diff", str(BASE), str(head)).code == 0
    assert run_cli("diff", str(BASE), str(head), "--exit-code").code == 1
    same = run_cli("diff", str(BASE), str(BASE), "--exit-code")
    assert same.code == 0
    assert same.stdout == """\
InferenceServices: 0 added, 0 removed, 0 changed, 4 unchanged; 0 roll out
GPUs at min / max replicas:
  nvidia.com/gpu (no accelerator class): 4 at min, 7 at max
  nvidia.com/gpu (nvidia-l40s): 8 at min, 32 at max
No changes.
"""


def test_a_side_that_fails_to_render_is_named_and_exits_2(tmp_path, monkeypatch):
    head = head_of(tmp_path, "broken")
    monkeypatch.chdir(tmp_path)
    run = run_cli("diff", str(BASE), "head", "--exit-code")
    assert (run.code, run.stdout) == (2, "")
    assert run.lines == [
        "error: head: head/services.yaml: InferenceService llm/chat-a: runtime sglang-9b does not support model "
        "llama-3-1-8b-instruct: runtime sglang-9b not found in namespace llm or at cluster scope; "
        "did you mean \"sglang-8b\" or \"sglang-70b\"?"]
    both = run_cli("diff", "head", str(head), "--format", "json")
    assert both.code == 2 and both.stdout == ""
    assert [line.split(": ")[1] for line in both.lines] == ["base", "head"]


def test_missing_side_and_file_side_with_paths(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run = run_cli("diff", str(BASE), str(BASE / "services.yaml"), "namespace.yaml")
    assert run.code == 2
    assert run.lines == [f"error: head: {BASE / 'services.yaml'} is a file: PATH arguments need two directories "
                         "or two git revisions"]
    outside = run_cli("diff", str(BASE), str(BASE), "../x")
    assert outside.code == 2
    assert outside.lines == [f"error: base: ../x: PATH must be relative and inside {BASE}",
                             f"error: head: ../x: PATH must be relative and inside {BASE}"]


# ---------------------------------------------------------------- git revisions

def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(repo)}
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path) -> Path:
    """A repository whose first commit has the base fleet under deploy/ and whose second bumps the image."""
    root = tmp_path / "repo"
    shutil.copytree(BASE, root / "deploy")
    (root / "README.md").write_text("not YAML\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "commit", "-qm", "base")
    shutil.copy(FIXTURES / "diff" / "image-bump" / "runtime-sglang-8b.yaml", root / "deploy")
    git(root, "commit", "-qam", "bump")
    return root


def test_git_revisions_match_the_directory_diff_and_leave_the_work_tree_alone(repo, tmp_path, monkeypatch):
    monkeypatch.chdir(repo)
    temp = tmp_path / "temp"   # its own temporary directory: other tests' diffs may run meanwhile (pytest-xdist)
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    from_git = diff_json("HEAD~1", "HEAD", "deploy")
    assert from_git == diff_json(str(BASE), str(head_of(tmp_path, "image-bump")))
    assert diff_json("main~1", "main") == from_git  # no PATH: the whole tree
    assert git(repo, "status", "--porcelain") == ""
    assert not list(temp.iterdir())


def test_a_revision_against_the_work_tree_and_from_a_subdirectory(repo, monkeypatch):
    (repo / "deploy" / "services.yaml").write_text(
        (FIXTURES / "diff" / "max-replicas" / "services.yaml").read_text())
    monkeypatch.chdir(repo / "deploy")
    result = diff_json("HEAD", ".")
    assert result["summary"] == summary(changed=1, unchanged=3)
    assert diff_json("HEAD~1", "HEAD", ".")["summary"] == summary(changed=3, unchanged=1, rollouts=3)
    assert diff_json("HEAD~1", "HEAD", "namespace.yaml") == {"summary": summary(), "inferenceServices": [],
                                                             "gpus": [], "objects": [], "generated": [], "warnings": NO_WARNINGS}


def test_warnings_of_a_revision_name_the_file_as_the_repository_does(repo, monkeypatch):
    shutil.copy(FIXTURES / "diff" / "priority-flip" / "runtime-vllm-8b.yaml", repo / "deploy")
    git(repo, "commit", "-qam", "prefer vllm")
    monkeypatch.chdir(repo)
    warnings = diff_json("HEAD~1", "HEAD")["warnings"]
    assert warnings == {"new": [auto_selected("deploy/services.yaml", n, "vllm-8b") for n in ("chat-a", "chat-b")],
                        "gone": [auto_selected("deploy/services.yaml", n, "sglang-8b") for n in ("chat-a", "chat-b")]}


def test_errors_in_a_revision_name_the_file_as_the_repository_does(repo, monkeypatch):
    shutil.copy(FIXTURES / "diff" / "broken" / "services.yaml", repo / "deploy")
    git(repo, "commit", "-qam", "broken")
    monkeypatch.chdir(repo)
    run = run_cli("diff", "HEAD~1", "HEAD")
    assert run.code == 2
    assert run.lines == [
        "error: head: deploy/services.yaml: InferenceService llm/chat-a: runtime sglang-9b does not support model "
        "llama-3-1-8b-instruct: runtime sglang-9b not found in namespace llm or at cluster scope; "
        "did you mean \"sglang-8b\" or \"sglang-70b\"?"]


@pytest.mark.parametrize("name", ["--output=/tmp/omerender-diff-pwned", "-x", "--end-of-options"])
def test_hostile_revision_names_are_refused(repo, monkeypatch, name):
    monkeypatch.chdir(repo)
    as_option = run_cli("diff", name, "HEAD")
    assert as_option.code == 2 and as_option.stdout == ""
    before_separator = run_cli("diff", "--", name, "HEAD")  # before --, as in git, there are no revisions
    assert (before_separator.code, before_separator.stdout) == (2, "")
    assert before_separator.lines[-1] == "Error: Missing argument 'BASE'."
    as_path = run_cli("diff", "HEAD~1", "HEAD", "--", name)  # after --, a PATH whatever it looks like
    assert (as_path.code, as_path.stdout) == (2, "")
    assert as_path.lines == [f"error: {name}: in neither HEAD~1 nor HEAD"]
    assert not os.path.exists("/tmp/omerender-diff-pwned")


def test_unknown_revision_and_path_outside_the_repository(repo, monkeypatch):
    monkeypatch.chdir(repo)
    run = run_cli("diff", "no-such-branch", "HEAD", "--format", "markdown")
    assert run.code == 2
    assert run.lines == ['error: base: "no-such-branch" is neither a directory, a file nor a commit of the git '
                         'repository here']
    outside = run_cli("diff", "HEAD~1", "HEAD", "../elsewhere")
    assert outside.lines == ["error: base: ../elsewhere: outside the git repository; give a path inside it",
                             "error: head: ../elsewhere: outside the git repository; give a path inside it"]


def test_symbolic_links_in_a_revision_are_not_followed(repo, monkeypatch):
    (repo / "deploy" / "secret.yaml").symlink_to("/etc/passwd")
    (repo / "deploy" / "again.yaml").symlink_to("services.yaml")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "links")
    monkeypatch.chdir(repo)
    assert diff_json("HEAD~1", "HEAD")["summary"] == summary(unchanged=4)
    # the same links in a directory: the one leading out is refused, as render refuses it
    run = run_cli("diff", "HEAD", "deploy")
    assert run.code == 2
    assert run.lines == ["error: head: deploy/secret.yaml: symbolic link to /etc/passwd, outside deploy; omerender "
                         "reads only the files it is given"]


def test_input_limits_hold_for_a_revision(repo, monkeypatch):
    monkeypatch.chdir(repo)
    monkeypatch.setattr(limits, "MAX_FILE_BYTES", 1000)
    run = run_cli("diff", "HEAD~1", "HEAD")
    assert run.code == 2
    assert run.lines == ["error: base: deploy/classes.yaml: larger than 0 MiB; split it into several files",
                         "error: head: deploy/classes.yaml: larger than 0 MiB; split it into several files"]
    monkeypatch.setattr(limits, "MAX_FILE_BYTES", 32 * limits.MIB)
    monkeypatch.setattr(limits, "MAX_FILES", 3)
    many = run_cli("diff", "HEAD~1", "HEAD")
    assert many.lines[0] == "error: base: more than 3 YAML files; diff fewer files at a time"


# ---------------------------------------------------------------- hostile names in the output

def test_names_from_the_repository_cannot_change_the_markdown_or_the_terminal(tmp_path):
    head = head_of(tmp_path, "max-replicas")
    (head / "odd.yaml").write_text('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "a|`b`<i>\\e[31m"}\n')
    refused = run_cli("diff", str(BASE), str(head), "--format", "markdown")
    assert refused.code == 2 and refused.stdout == "" and "\x1b" not in refused.stderr
    assert "ConfigMap a|`b`<i>\\x1b[31m" in refused.stderr   # a name Kubernetes refuses, escaped
    (head / "odd.yaml").write_text('apiVersion: example.com/v1\nkind: Odd\nmetadata: {name: odd}\n'
                                   'spec: {"k|`b`<i>\\e[2J": v}\n')
    edited = tmp_path / "edited"
    shutil.copytree(head, edited)
    (edited / "odd.yaml").write_text('apiVersion: example.com/v1\nkind: Odd\nmetadata: {name: odd}\n'
                                     'spec: {"k|`b`<i>\\e[2J": w}\n')
    markdown = run_cli("diff", str(head), str(edited), "--format", "markdown").stdout
    # the key stays inside a code span (no HTML, no table cell break) and the escape is text
    assert "\x1b" not in markdown and '``spec["k\\|`b`<i>\\u001b[2J"]``' in markdown
    text = run_cli("diff", str(head), str(edited)).stdout
    assert "\x1b" not in text and "Odd odd" in text

def test_help_shows_an_example():
    run = run_cli("diff", "--help")
    assert run.code == 0
    assert "omerender diff origin/main HEAD deploy/" in run.stdout


def test_a_crafted_tree_cannot_write_outside_the_temporary_directory(repo, monkeypatch):
    blob = git(repo, "rev-parse", "HEAD:deploy/namespace.yaml").strip()
    inner = subprocess.run(["git", "mktree"], cwd=repo, input=f"100644 blob {blob}\tevil.yaml\n", text=True,
                           capture_output=True, check=True).stdout.strip()
    tree = subprocess.run(["git", "mktree"], cwd=repo, input=f"040000 tree {inner}\t..\n", text=True,
                          capture_output=True, check=True).stdout.strip()
    evil = git(repo, "commit-tree", tree, "-m", "evil").strip()
    monkeypatch.chdir(repo)
    run = run_cli("diff", "HEAD", evil)
    assert (run.code, run.stdout) == (2, "")
    assert run.lines == [f'error: head: path "../evil.yaml" in the git tree of revision {evil} is not a plain '
                         'relative path']


def test_a_blob_missing_from_the_repository_is_an_error(repo, monkeypatch):
    blob = git(repo, "rev-parse", "HEAD:deploy/namespace.yaml").strip()
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    monkeypatch.chdir(repo)
    run = run_cli("diff", "HEAD~1", "HEAD")
    assert run.code == 2
    assert run.lines == [f"error: {side}: deploy/namespace.yaml: git: blob {blob} of revision {revision} is missing "
                         "from the repository (a shallow or partial clone?)"
                         for side, revision in (("base", "HEAD~1"), ("head", "HEAD"))]


PROFILE = """\
apiVersion: ome.io/v1beta1
kind: ClusterServingRuntime
metadata:
  name: sglang-defaults
  annotations: {ome.io/runtime-profile: "true"}
spec:
  disabled: true
  engineConfig:
    runner:
      name: ome-container
      env:
        - {name: SGLANG_LOG_LEVEL, value: info}
"""


def test_edited_parent_runtime_and_a_renamed_runtime(tmp_path):
    """An edit of a parent reaches the InferenceService that names the child (not the auto-selected ones, which
    OME renders from the child's own spec); naming another runtime says so."""
    base = tmp_path / "base"
    shutil.copytree(BASE, base)
    (base / "profile.yaml").write_text(PROFILE)
    child = (base / "runtime-sglang-8b.yaml").read_text()
    inherit = "  name: sglang-8b\n  annotations: {ome.io/inherit-from: sglang-defaults}\n"
    (base / "runtime-sglang-8b.yaml").write_text(
        child.replace("  name: sglang-8b\n", inherit).replace("\nspec:\n", "\nspec:\n  disabled: false\n"))
    head = tmp_path / "head"
    shutil.copytree(base, head)
    (head / "profile.yaml").write_text(PROFILE.replace("value: info", "value: debug"))
    result = diff_json(str(base), str(head))
    assert result["summary"] == summary(changed=1, unchanged=3, rollouts=1)
    assert result["inferenceServices"][3] == {
        "namespace": "llm", "name": "chat-c", "status": "changed", "rollout": True,
        "runtime": {"base": "sglang-8b", "head": "sglang-8b",
                    "reason": "edited: ClusterServingRuntime sglang-defaults, which sglang-8b inherits from"},
        "accelerators": [], "edited": [],
        "objects": [deployment("chat-c-engine", "spec.template.spec.containers[name=ome-container].env[SGLANG_LOG_LEVEL].value")]}
    services = head / "services.yaml"
    services.write_text(services.read_text().replace("runtime: {name: sglang-8b}", "runtime: {name: vllm-8b}"))
    renamed = diff_json(str(base), str(head))["inferenceServices"][3]
    assert renamed["runtime"] == {"base": "sglang-8b", "head": "vllm-8b", "reason": "spec.runtime names vllm-8b"}


def test_the_console_script_in_a_repository(repo):
    """The installed ``omerender`` as a process: exit statuses as ``git diff --exit-code`` has them."""
    omerender = str(Path(sys.executable).parent / "omerender")
    changed = subprocess.run([omerender, "diff", "HEAD~1", "HEAD", "--exit-code"], cwd=repo, capture_output=True,
                             text=True)
    assert (changed.returncode, changed.stderr) == (1, "")
    assert changed.stdout.splitlines()[0] == "InferenceServices: 0 added, 0 removed, 3 changed, 1 unchanged; 3 roll out"
    same = subprocess.run([omerender, "diff", "HEAD", "HEAD", "--exit-code", "--format", "json"], cwd=repo,
                          capture_output=True, text=True)
    assert same.returncode == 0
    assert json.loads(same.stdout)["summary"] == summary(unchanged=4)


def test_a_revision_outside_a_repository(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    run = run_cli("diff", "main", str(BASE))
    assert (run.code, run.stdout) == (2, "")
    assert run.lines == [f'error: base: "main" is neither a directory nor a file, and {tmp_path} is not in a git '
                         "repository"]


def test_without_git_a_revision_is_an_error_naming_the_fix(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path))
    run = run_cli("diff", "main", str(BASE))
    assert (run.code, run.stdout) == (2, "")
    assert run.lines == ["error: base: cannot run git: No such file or directory; install git, or compare two "
                         "directories"]


@pytest.mark.parametrize("lock", [(), ("--lock", "pins.lock")])
def test_each_revision_renders_with_its_own_lock(tmp_path, monkeypatch, lock):
    """chat-c is pinned (autoSync: false): the image bump reaches only the auto-selected services, and
    --locked finds head's lock stale for them."""
    root = tmp_path / "pinned"
    shutil.copytree(BASE, root)
    services = root / "services.yaml"
    services.write_text(services.read_text().replace("runtime: {name: sglang-8b}",
                                                     "runtime: {name: sglang-8b, autoSync: false}"))
    monkeypatch.chdir(root)
    assert run_cli("lock", "update", ".", *lock).code == 0
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-qm", "pinned")
    shutil.copy(FIXTURES / "diff" / "image-bump" / "runtime-sglang-8b.yaml", root)
    git(root, "commit", "-qam", "bump")
    result = diff_json("HEAD~1", "HEAD", *lock)
    assert [(i["name"], i["status"]) for i in result["inferenceServices"]] == [
        ("big", "unchanged"), ("chat-a", "changed"), ("chat-b", "changed"), ("chat-c", "unchanged")]
    locked = run_cli("diff", "HEAD~1", "HEAD", "--locked", *lock)
    assert locked.code == 2
    assert [line.split(": ")[1:4] for line in locked.lines] == [
        ["head", "services.yaml", "InferenceService llm/chat-a"],
        ["head", "services.yaml", "InferenceService llm/chat-b"]]


def _fleet(tmp_path: Path, max_replicas, runtime=lambda i: "sglang-8b") -> Path:
    """fixtures/diff/base plus 400 InferenceServices svc-000 ... svc-399 (on sglang-8b unless ``runtime``)."""
    side = tmp_path / f"side-{len(list(tmp_path.iterdir()))}"
    shutil.copytree(BASE, side)
    (side / "many.yaml").write_text("".join(
        f"---\napiVersion: ome.io/v1beta1\nkind: InferenceService\nmetadata: {{name: svc-{i:03d}, namespace: llm}}\n"
        f"spec:\n  model: {{name: llama-3-1-8b-instruct}}\n  runtime: {{name: {runtime(i)}}}\n"
        f"  engine: {{minReplicas: 1, maxReplicas: {max_replicas(i)}}}\n" for i in range(400)))
    return side


SVCS = [f"llm/svc-{i:03d}" for i in range(400)]


def test_a_fleet_wide_change_is_one_section(tmp_path):
    """One runtime edit reaching 403 InferenceServices: the same changes in each, so one row and one section
    naming the other 402; JSON still lists every one, and -U shows each object's own diff."""
    base = _fleet(tmp_path, lambda i: 1)
    head = _fleet(tmp_path, lambda i: 1)
    shutil.copy(FIXTURES / "diff" / "image-bump" / "runtime-sglang-8b.yaml", head)
    others = ["llm/chat-b", "llm/chat-c", *SVCS]
    run = run_cli("diff", str(base), str(head))
    assert run.code == 0
    assert run.stdout.split("\n\n", 1)[1] == f"""\
InferenceService llm/chat-a: changed, pods roll out
  the same changes in 402 more: {", ".join(others)}
  runtime: sglang-8b (edited: ClusterServingRuntime sglang-8b)
  ~ apps/v1 Deployment chat-a-engine
      spec.template.spec.containers[name=ome-container].image: docker.io/lmsysorg/sglang:v0.5.5.post3-cu129-amd64 -> \
docker.io/lmsysorg/sglang:v0.5.6-cu129-amd64
"""
    comment = run_cli("diff", str(base), str(head), "--format", "markdown").stdout
    assert [line for line in comment.splitlines() if line.startswith("| `llm/")] == [
        "| `llm/chat-a` and 402 more | changed | yes | `sglang-8b` | - | 1 changed |"]
    assert comment.endswith(f"""\
<details><summary>llm/chat-a and 402 more: changed, pods roll out</summary>

- the same changes in: {", ".join(f"`{name}`" for name in others)}
- runtime: `sglang-8b` (edited: ClusterServingRuntime sglang-8b)
- changed `apps/v1 Deployment chat-a-engine`: `spec.template.spec.containers[name=ome-container].image` \
`docker.io/lmsysorg/sglang:v0.5.5.post3-cu129-amd64` → `docker.io/lmsysorg/sglang:v0.5.6-cu129-amd64`

</details>
""")
    result = diff_json(str(base), str(head))
    assert result["summary"] == summary(changed=403, unchanged=1, rollouts=403)
    assert [i["name"] for i in result["inferenceServices"] if i["status"] == "changed"] == [
        "chat-a", "chat-b", "chat-c", *(name.split("/")[1] for name in SVCS)]
    sections = run_cli("diff", "-U", "0", str(base), str(head)).stdout.split("\n\n")[1:]
    assert [s.split("\n")[0] for s in sections] == [
        f"InferenceService {name}: changed, pods roll out" for name in ["llm/chat-a", *others]]


def test_changes_alike_but_for_a_value_stay_apart(tmp_path):
    """The same field changes in each InferenceService, to 2 in the even ones and to 3 in the odd ones: two
    sections, each naming its own."""
    base = _fleet(tmp_path, lambda i: 1)
    head = _fleet(tmp_path, lambda i: 2 + i % 2)
    run = run_cli("diff", str(base), str(head))
    assert run.stdout.split("\n\n")[1:] == [
        f"InferenceService llm/svc-00{first}: changed\n"
        f"  the same changes in 199 more: {', '.join(SVCS[first + 2::2])}\n"
        f"  ~ autoscaling/v2 HorizontalPodAutoscaler svc-00{first}-engine\n"
        f"      spec.maxReplicas: 1 -> {2 + first}" + ("\n" if first else "") for first in (0, 1)]


def _sections(run) -> list[str]:
    assert run.code == 0
    return run.stdout.split("\n\n")[1:]


FLEET_OBJECTS = ["apps/v1 Deployment {}-engine", "v1 Service {}-engine",
                 "autoscaling/v2 HorizontalPodAutoscaler {}-engine", "policy/v1 PodDisruptionBudget {}-engine",
                 "v1 Service {}"]


def test_inference_services_added_or_removed_alike_are_one_section_each(tmp_path):
    """400 services added on one runtime are one section and one table row naming the other 399; removing
    them again is one section too; each object is named with the first service's name."""
    fleet = _fleet(tmp_path, lambda i: 1 + i % 3)

    def section(status: str, sign: str, runtime: str) -> str:
        return (f"InferenceService llm/svc-000: {status}\n  the same changes in 399 more: {', '.join(SVCS[1:])}\n"
                f"  runtime: {runtime}\n" + "".join(f"  {sign} {o.format('svc-000')}\n" for o in FLEET_OBJECTS))
    assert _sections(run_cli("diff", str(BASE), str(fleet))) == [section("added", "+", "none -> sglang-8b")]
    assert _sections(run_cli("diff", str(fleet), str(BASE))) == [section("removed", "-", "sglang-8b -> none")]
    comment = run_cli("diff", str(BASE), str(fleet), "--format", "markdown").stdout
    assert [line for line in comment.splitlines() if line.startswith("| `llm/")] == [
        "| `llm/svc-000` and 399 more | added | no | none → `sglang-8b` | - | 5 added |"]
    assert "<details><summary>llm/svc-000 and 399 more: added</summary>\n\n- the same changes in: `llm/svc-001`, " \
        in comment
    result = diff_json(str(BASE), str(fleet))
    assert [i["name"] for i in result["inferenceServices"] if i["status"] == "added"] == [
        name.split("/")[1] for name in SVCS]


def test_inference_services_added_on_other_runtimes_stay_apart(tmp_path):
    """The even services on sglang-8b, the odd ones on vllm-8b: a section for each runtime."""
    fleet = _fleet(tmp_path, lambda i: 1, lambda i: ("sglang-8b", "vllm-8b")[i % 2])
    assert [s.split("\n")[:3] for s in _sections(run_cli("diff", str(BASE), str(fleet)))] == [
        [f"InferenceService llm/svc-00{first}: added", f"  the same changes in 199 more: "
         f"{', '.join(SVCS[first + 2::2])}", f"  runtime: none -> {runtime}"]
        for first, runtime in ((0, "sglang-8b"), (1, "vllm-8b"))]


def test_the_documented_example_comment(tmp_path):
    """The pull-request comment of docs/how-to/review-a-change.md: the 70B service moved to H100s, chat-b scaled to 8
    replicas, and a new image
    in sglang-8b, which chat-a and chat-c get alike (chat-b changes more)."""
    head = head_of(tmp_path, "image-bump")
    services = (FIXTURES / "diff" / "accelerator-class" / "services.yaml").read_text()
    chat_b = "  engine: {minReplicas: 2, maxReplicas: 4}\n"
    assert services.count(chat_b) == 1
    (head / "services.yaml").write_text(services.replace(chat_b, chat_b.replace("4}", "8}")))
    page = (FIXTURES.parent / "docs" / "how-to" / "review-a-change.md").read_text()
    example = page.split("````markdown\n", 1)[1].split("````\n", 1)[0]
    run = run_cli("diff", str(BASE), str(head), "--format", "markdown")
    assert run.code == 0
    assert run.stdout == example


def test_markdown_stays_within_a_github_comment(tmp_path):
    """400 different changes: every table row and folded detail that fits, then how many were left out."""
    base = _fleet(tmp_path, lambda i: 1)
    head = _fleet(tmp_path, lambda i: 2 + i)
    run = run_cli("diff", str(base), str(head), "--format", "markdown")
    assert run.code == 0
    comment = run.stdout
    assert len(comment) <= 65_536
    assert comment.startswith("### omerender diff\n\n| InferenceServices added | Removed | Changed | Unchanged | "
                              "Pods roll out in |\n| --- | --- | --- | --- | --- |\n| 0 | 0 | 400 | 4 | 0 |\n\n")
    rows = [line for line in comment.splitlines() if line.startswith("| `llm/")]
    details = comment.count("<details>")
    assert rows == [f"| `{name}` | changed | no | `sglang-8b` | - | 1 changed |" for name in SVCS]
    assert 0 < details < 400
    assert "| `nvidia.com/gpu` | none | 404 | 407 → 80607 (**+80200**) |" in comment
    assert comment.endswith(f"\n\n_{400 - details} more details left out: a comment holds at most 65,536 "
                            "characters. `omerender diff` prints them all._\n")


def test_keep_inputs_compares_the_ome_objects_too(tmp_path):
    result = diff_json(str(BASE), str(head_of(tmp_path, "image-bump")), "--keep-inputs")
    assert result["objects"] == [{"apiVersion": "ome.io/v1beta1", "kind": "ClusterServingRuntime", "name": "sglang-8b",
                                  "namespace": None, "change": "changed",
                                  "fields": ["spec.engineConfig.runner.image"]}]


def test_a_path_in_neither_revision_is_an_error(repo, monkeypatch):
    monkeypatch.chdir(repo)
    run = run_cli("diff", "HEAD~1", "HEAD", "deplyo", "deploy")
    assert (run.code, run.stdout) == (2, "")
    assert run.lines == ["error: deplyo: in neither HEAD~1 nor HEAD"]
    # a directory only one side has reads as empty on the other
    (repo / "team-b").mkdir()
    shutil.copy(BASE / "namespace.yaml", repo / "team-b" / "objects.yaml")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "team-b")
    added = diff_json("HEAD~1", "HEAD", "team-b")
    assert [(o["kind"], o["change"]) for o in added["objects"]] == [("ConfigMap", "added"), ("Namespace", "added")]


# ---------------------------------------------------------------- directory sides judged by where they resolve

SECRET = "apiVersion: v1\nkind: Secret\nmetadata: {name: stolen, namespace: llm}\nstringData: {token: hunter2}\n"


@pytest.mark.parametrize("spelling", ["head/", "head/.", "./head//"])
def test_a_directory_side_linking_out_is_refused_however_spelled(tmp_path, monkeypatch, spelling):
    outside = tmp_path / "outside"
    shutil.copytree(BASE, outside)
    (outside / "secret.yaml").write_text(SECRET)
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "head").symlink_to("../outside")
    monkeypatch.chdir(tmp_path / "repo")
    run = run_cli("diff", str(BASE), spelling, "--exit-code")
    assert (run.code, run.stdout) == (2, "")
    assert run.lines == [f"error: head: {spelling}: symbolic link to {outside}, outside {tmp_path / 'repo'}; "
                         "omerender reads only the files it is given"]


def test_a_path_argument_through_a_link_out_of_the_side_is_refused(tmp_path, monkeypatch):
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.yaml").write_text(SECRET)
    head = tmp_path / "head"
    shutil.copytree(BASE, head)
    (head / "apps").symlink_to("../outside")
    (head / "here").symlink_to(".")
    monkeypatch.chdir(tmp_path)
    run = run_cli("diff", str(BASE), "head", "apps/")
    assert (run.code, run.stdout) == (2, "")
    assert run.lines == [f"error: base: no such file or directory: {BASE}/apps/",
                         f"error: head: head/apps/: symbolic link to {tmp_path / 'outside'}, outside {head}; "
                         "omerender reads only the files it is given"]
    climbs = run_cli("diff", "head", "head", "here/../outside/")
    assert (climbs.code, climbs.stdout) == (2, "")
    assert climbs.lines == [f"error: {side}: head/here/../outside/: head/here/.. leads to {tmp_path}, above {head}, "
                            "the directory holding the symbolic link head/here; omerender reads only the files it is "
                            "given" for side in ("base", "head")]


def test_revisions_diff_when_the_temporary_directory_is_reached_through_a_link(repo, tmp_path, monkeypatch):
    (tmp_path / "scratch").mkdir()
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "tmp").symlink_to(tmp_path / "scratch")  # TMPDIR=~/tmp -> /scratch: not the input
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "home" / "tmp"))
    monkeypatch.chdir(repo)
    assert diff_json("HEAD~1", "HEAD", "deploy") == diff_json(str(BASE), str(head_of(tmp_path, "image-bump")))


def test_markdown_cap_holds_with_a_runtime_of_1500_extended_resources(tmp_path):
    """issue 41: the GPU table is cut like the sections, with a row counting what was left out."""
    head = tmp_path / "head"
    shutil.copytree(BASE, head)
    names = [f"vendor-{i:04d}.example.com/accelerator-with-a-rather-long-resource-name-{i:04d}" for i in range(1500)]
    many = ", ".join(f"{name}: \"1\"" for name in names)
    runtime = head / "runtime-sglang-8b.yaml"
    runtime.write_text(runtime.read_text().replace('nvidia.com/gpu: "1"}', f'nvidia.com/gpu: "1", {many}}}'))
    run = run_cli("diff", str(BASE), str(head), "--format", "markdown")
    assert run.code == 0, run.stderr
    comment = run.stdout
    assert len(comment) <= 65_536
    rows = [line for line in comment.splitlines() if line.startswith("| `vendor-")]
    assert 0 < len(rows) < 1500
    assert f"| {1500 - len(rows)} more rows left out | | | |" in comment.splitlines()
    assert "| `llm/chat-a` and 2 more | changed | yes |" in comment  # the InferenceService table keeps its rows


# ---------------------------------------------------------------- issue 40: what each change is and why

def _edited_class_and_revision(tmp_path: Path) -> Path:
    """base with nvidia-l40s's node selector edited and llama-3-1-8b-instruct pinned to a revision."""
    head = tmp_path / "head"
    shutil.copytree(BASE, head)
    classes, models = head / "classes.yaml", head / "models.yaml"
    classes.write_text(classes.read_text().replace("{nvidia.com/gpu.product: NVIDIA-L40S}",
                                                   "{nvidia.com/gpu.product: NVIDIA-L40S-48GB}"))
    models.write_text(models.read_text().replace("hf://meta-llama/Llama-3.1-8B-Instruct\n",
                                                 "hf://meta-llama/Llama-3.1-8B-Instruct@" + "0123456789" * 4 + "\n"))
    return head


def test_an_accelerator_class_edit_is_named_as_the_reason(tmp_path):
    head = _edited_class_and_revision(tmp_path)
    result = diff_json(str(BASE), str(head))
    big = result["inferenceServices"][0]
    assert big["name"] == "big" and big["rollout"] is True
    assert big["edited"] == [{"kind": "AcceleratorClass", "namespace": None, "name": "nvidia-l40s"}]
    text = run_cli("diff", str(BASE), str(head)).stdout
    assert ("InferenceService llm/big: changed, pods roll out\n  accelerator class of engine: nvidia-l40s\n"
            "  edited: AcceleratorClass nvidia-l40s\n") in text
    comment = run_cli("diff", str(BASE), str(head), "--format", "markdown").stdout
    assert "\n- edited: AcceleratorClass nvidia-l40s\n" in comment


def test_a_download_mode_model_revision_names_the_new_claim_and_job_as_generated_for_the_model(tmp_path):
    head = _edited_class_and_revision(tmp_path)
    run = run_cli("diff", "--model-weights", "download", str(BASE), str(head))
    assert run.code == 0, run.stderr
    model = "ClusterBaseModel llama-3-1-8b-instruct"
    lines = run.stdout.splitlines()
    # the class edit moves the 70B model's Job too: the Job's pod is placed where the serving pods run (its class's
    # node selector), and a Job's template can't change in place, so it is a new Job on the same claim
    other = "ClusterBaseModel llama-3-3-70b-instruct"
    assert "Generated objects: 3 added, 3 removed" in lines and "Pass-through objects" not in run.stdout
    generated = lines[lines.index("Generated objects:") + 1:lines.index("Generated objects:") + 7]
    assert [line.split(" (", 1)[1] for line in generated] == [
        f"the weights claim of {model})", f"the weights download Job of {model})",
        f"the weights download Job of {other})",
        f"the weights claim of {model})", f"the weights download Job of {model})",
        f"the weights download Job of {other})"]
    assert [line.split()[:3] for line in generated] == [["+", "v1", "PersistentVolumeClaim"], ["+", "batch/v1", "Job"],
                                                        ["+", "batch/v1", "Job"],
                                                        ["-", "v1", "PersistentVolumeClaim"], ["-", "batch/v1", "Job"],
                                                        ["-", "batch/v1", "Job"]]
    assert f"  edited: {model}" in lines  # the InferenceServices on it name the model as the reason
    result = diff_json("--model-weights", "download", str(BASE), str(head))
    assert [(o["kind"], o["change"], o["origin"]) for o in result["generated"]] == [
        ("PersistentVolumeClaim", "added", f"the weights claim of {model}"),
        ("Job", "added", f"the weights download Job of {model}"),
        ("Job", "added", f"the weights download Job of {other}"),
        ("PersistentVolumeClaim", "removed", f"the weights claim of {model}"),
        ("Job", "removed", f"the weights download Job of {model}"),
        ("Job", "removed", f"the weights download Job of {other}")]
    assert result["objects"] == []
    comment = run_cli("diff", "--model-weights", "download", str(BASE), str(head), "--format", "markdown").stdout
    assert "<summary>Generated objects: 3 added, 3 removed</summary>" in comment
    assert f"(the weights download Job of {model})`" in comment


def test_a_cluster_setting_edit_is_named_for_the_services_it_changes(tmp_path):
    head = tmp_path / "head"
    shutil.copytree(BASE, head)
    chart = (Path(__file__).resolve().parents[1] / "omerender" / "ome" / "cluster" / "chart_defaults.yaml").read_text()
    (head / "cluster.yaml").write_text(chart.replace('"terminationGracePeriodSeconds": 600', '"terminationGracePeriodSeconds": 300'))
    result = diff_json(str(BASE), str(head))
    changed = [i for i in result["inferenceServices"] if i["status"] == "changed"]
    assert changed and all(i["edited"] == [{"kind": "ConfigMap", "namespace": "ome", "name": "inferenceservice-config",
                                            "settings": [c["setting"] for c in result["clusterConfig"]]}]
                           for i in changed)
    assert "  edited: ConfigMap ome/inferenceservice-config (" in run_cli("diff", str(BASE), str(head)).stdout


def test_an_inference_services_routes_are_named_as_what_they_are(tmp_path):
    """An HTTPRoute (or Ingress, BackendTrafficPolicy, TriggerAuthentication) changed under an InferenceService says
    what it is, in text and JSON, beside the ConfigMap key edited."""
    base, head = tmp_path / "base", tmp_path / "head"
    text = (FIXTURES / "gateway-api" / "inputs.yaml").read_text()
    for side, domain in ((base, "example.com"), (head, "example.net")):
        side.mkdir()
        (side / "inputs.yaml").write_text(text.replace('"ingressDomain": "example.com"', f'"ingressDomain": "{domain}"', 1))
    run = run_cli("diff", str(base), str(head))
    assert run.code == 0, run.stderr
    assert "  edited: ConfigMap ome/inferenceservice-config (ingress.ingressDomain)" in run.stdout.splitlines()
    assert "  ~ gateway.networking.k8s.io/v1 HTTPRoute llama-chat (the InferenceService's route)" in run.stdout.splitlines()
    result = diff_json(str(base), str(head))
    (isvc,) = result["inferenceServices"]
    assert {(o["kind"], o.get("origin")) for o in isvc["objects"]} == {("HTTPRoute", "the InferenceService's route")}


def test_gpu_capacity_counts_exactly_with_quantities_read_once():
    """gpus.capacity reads each quantity text once (kube.quantities remembers it) and sums whole counts as ints:
    the totals are the exact sums, a fraction stays a fraction (0.5 shown as 0.5), and a value that is no quantity
    counts nothing."""
    from types import SimpleNamespace
    from omerender.diff import gpus

    def deployment(name, replicas, gpu, init=None):
        pod = {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": gpu, "cpu": "1"}}}]}
        if init is not None:
            pod["initContainers"] = [{"name": "i", "resources": {"requests": {"nvidia.com/gpu": init}}}]
        return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "n"},
                "spec": {"replicas": replicas, "template": {"spec": pod}}}

    objects = [deployment("a", 2, "8"), deployment("b", 3, 8), deployment("c", 1, "500m"), deployment("d", 4, "x"),
               deployment("e", 1, "1", init="2"), deployment("f", 5, [1]),
               {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"namespace": "n"},
                "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "a"}, "minReplicas": 1, "maxReplicas": 6}}]
    side = SimpleNamespace(result=SimpleNamespace(isvcs={}, objects=objects))
    low, high = gpus.capacity(side)[("nvidia.com/gpu", None)]
    assert (low, high) == (8 + 24 + Fraction(1, 2) + 2, 48 + 24 + Fraction(1, 2) + 2)
    shown = gpus.compare({}, gpus.capacity(side))
    assert shown == [{"resource": "nvidia.com/gpu", "class": None, "base": {"min": 0, "max": 0},
                      "head": {"min": 34.5, "max": 74.5}}]


@pytest.mark.parametrize("scenario", ["image-bump", "accelerator-class", "gpu-count", "max-replicas", "cluster",
                                      "download"])
def test_head_renders_in_a_diff_as_it_renders_alone(tmp_path, scenario):
    """diff's two renders share the pods they build (``across_renders``): a pod built for base serves head only
    where everything its build reads is the same, so head's objects and messages are those of head rendered alone,
    whatever the change (a runtime's image, a class, GPUs, the cluster's grace period, the weights mode)."""
    from omerender.diff.sides import read_side
    from omerender.ome.render import Options
    from omerender.ome.shared import across_renders
    from omerender.ome.weights.settings import DOWNLOAD

    if scenario == "cluster":
        head = tmp_path / "head"
        shutil.copytree(BASE, head)
        chart = (Path(__file__).resolve().parents[1] / "omerender" / "ome" / "cluster" / "chart_defaults.yaml")
        (head / "cluster.yaml").write_text(chart.read_text().replace('"terminationGracePeriodSeconds": 600',
                                                                     '"terminationGracePeriodSeconds": 300'))
    else:
        head = head_of(tmp_path, "image-bump" if scenario == "download" else scenario)
    base_options = Options(model_weights=DOWNLOAD) if scenario == "download" else Options()
    with across_renders():
        base = read_side("base", str(BASE), [], base_options, None)
        in_diff = read_side("head", str(head), [], Options(), None)
    alone = read_side("head", str(head), [], Options(), None)
    assert base.result.objects != in_diff.result.objects
    assert in_diff.result.objects == alone.result.objects
    assert in_diff.result.messages == alone.result.messages
