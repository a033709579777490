"""scripts/refresh-ome-data.py: refreshes tests/data/ome from a checkout of OME and says what changed."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

SCRIPT = ROOT / "scripts" / "refresh-ome-data.py"
GIT = ("git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main")


def git(repo: Path, *args: str) -> str:
    return subprocess.run([*GIT, "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def refresh(checkout: Path, dest: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), str(checkout), "--dest", str(dest)],
                          capture_output=True, text=True)


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A tiny OME: its module line, the four folders the tests read, its LICENSE, one commit."""
    ome = tmp_path / "ome"
    write(ome, {"go.mod": "module github.com/sgl-project/ome\n\ngo 1.24\n",
                "LICENSE": "Apache License 2.0\n",
                "config/runtimes/srt/a-rt.yaml": "kind: ClusterServingRuntime # a\n",
                "config/runtimes/kustomization.yaml": "resources: [srt/a-rt.yaml]\n",
                "config/models/meta/m.yaml": "kind: ClusterBaseModel # new\n",
                "pkg/hfutil/modelconfig/testdata/llama.json": "{}\n",
                "config/samples/isvc/meta/s.yaml": "kind: InferenceService\n",
                "config/samples/benchmark/b.yaml": "kind: BenchmarkJob\n",
                "pkg/agent/main.go": "package main\n"})
    git(ome, "init", "-q")
    git(ome, "add", ".")
    git(ome, "commit", "-qm", "c", "--date=2026-04-02T10:00:00Z")
    return ome


def test_refresh_copies_the_folders_and_says_what_changed(checkout, tmp_path):
    dest = tmp_path / "data"
    write(dest, {"runtimes/srt/a-rt.yaml": "kind: ClusterServingRuntime # old\n",
                 "runtimes/kustomization.yaml": "resources: [srt/a-rt.yaml]\n",
                 "runtimes/vllm/gone-rt.yaml": "kind: ClusterServingRuntime\n",
                 "modelconfig/README.md": "ours\n",
                 "PROVENANCE.md": "old\n"})
    run = refresh(checkout, dest)
    assert (run.returncode, run.stderr) == (0, "")
    assert run.stdout == ("M runtimes/srt/a-rt.yaml\n"
                          "D runtimes/vllm/gone-rt.yaml\n"
                          "A models/meta/m.yaml\n"
                          "A modelconfig/llama.json\n"
                          "A samples/benchmark/b.yaml\n"
                          "A samples/isvc/meta/s.yaml\n"
                          "A LICENSE\n"
                          "7 files changed: 5 added, 1 modified, 1 removed\n")
    assert (dest / "runtimes/srt/a-rt.yaml").read_text() == "kind: ClusterServingRuntime # a\n"
    assert not (dest / "runtimes/vllm").exists()
    assert (dest / "modelconfig/README.md").read_text() == "ours\n"
    assert not (dest / "agent").exists() and not (dest / "go.mod").exists()
    provenance = (dest / "PROVENANCE.md").read_text()
    assert f"`sgl-project/ome`, commit `{git(checkout, 'rev-parse', 'HEAD')}`" in provenance
    assert "(committed " in provenance and "(2 files)" in provenance and "(1 file)" in provenance
    assert ("| `samples/` | `config/samples/` | OME's sample InferenceServices (`isvc/`) and BenchmarkJobs "
            "(`benchmark/`) (2 files) |") in provenance
    assert (dest / "samples/isvc/meta/s.yaml").read_text() == "kind: InferenceService\n"

    again = refresh(checkout, dest)
    assert (again.returncode, again.stdout) == (0, "no change: the data already matches this commit\n")


def test_refresh_refuses_a_bare_repository(checkout, tmp_path):
    bare = tmp_path / "ome.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(checkout), str(bare)], check=True)
    run = refresh(bare, tmp_path / "data")
    assert run.returncode == 1 and run.stdout == ""
    assert run.stderr == (f"error: {bare} is a bare git repository; clone it into a work tree first: "
                          f"git clone {bare} /tmp/ome-checkout\n")
    assert not (tmp_path / "data").exists()


def test_refresh_refuses_a_directory_that_is_not_ome(tmp_path):
    other = tmp_path / "other"
    write(other, {"go.mod": "module github.com/kserve/kserve\n", "config/runtimes/x.yaml": "{}\n"})
    run = refresh(other, tmp_path / "data")
    assert (run.returncode, run.stdout) == (1, "")
    assert run.stderr == (f"error: {other} is not a checkout of OME: its go.mod does not declare OME's module "
                          "(github.com/sgl-project/ome)\n")


def test_refresh_refuses_uncommitted_changes_in_the_copied_folders(checkout, tmp_path):
    (checkout / "config/models/meta/m.yaml").write_text("edited\n")
    run = refresh(checkout, tmp_path / "data")
    assert (run.returncode, run.stdout) == (1, "")
    assert run.stderr == (f"error: {checkout} has uncommitted changes in the folders copied "
                          "(M config/models/meta/m.yaml...); commit or discard them first\n")


def test_the_vendored_data_names_its_source_and_license():
    data = ROOT / "tests" / "data" / "ome"
    provenance = (data / "PROVENANCE.md").read_text()
    assert "`sgl-project/ome`, commit `" in provenance and "What was trimmed" in provenance
    assert (data / "LICENSE").read_text().lstrip().startswith("Apache License")


def test_refresh_refuses_a_symbolic_link_in_the_checkout_or_the_data_and_writes_nothing(checkout, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("not OME's\n")
    (checkout / "config/models/meta/leak.yaml").symlink_to(secret)
    git(checkout, "add", ".")
    git(checkout, "commit", "-qm", "a link")
    run = refresh(checkout, tmp_path / "data")
    assert (run.returncode, run.stdout) == (1, "")
    assert run.stderr == (f"error: {checkout}/config/models/meta/leak.yaml is a symbolic link; the data holds regular "
                          "files only: remove it\n")
    assert not (tmp_path / "data").exists()
    git(checkout, "rm", "-q", "config/models/meta/leak.yaml")
    git(checkout, "commit", "-qm", "no link")
    data = tmp_path / "data2"
    (data / "models").mkdir(parents=True)
    (data / "models" / "out.yaml").symlink_to(secret)
    run = refresh(checkout, data)
    assert (run.returncode, run.stdout) == (1, "")
    assert run.stderr == (f"error: {data}/models/out.yaml is a symbolic link; the data holds regular files only: "
                          "remove it\n")
    assert secret.read_text() == "not OME's\n"


def test_refresh_refuses_a_checkout_without_the_samples(checkout, tmp_path):
    git(checkout, "rm", "-rq", "config/samples")
    git(checkout, "commit", "-qm", "no samples")
    run = refresh(checkout, tmp_path / "data")
    assert (run.returncode, run.stdout) == (1, "")
    assert run.stderr == (f"error: {checkout} is not a checkout of OME with the data the tests read: "
                          "missing config/samples\n")
    assert not (tmp_path / "data").exists()


def _link_in_checkout(checkout: Path, rel: str, target: Path) -> Path:
    """Commit ``rel`` in the checkout as a symbolic link to ``target`` (replacing what was there)."""
    link = checkout / rel
    if link.exists():
        git(checkout, "rm", "-rq", rel)
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)
    git(checkout, "add", "-A")
    git(checkout, "commit", "-qm", "a link")
    return link


@pytest.mark.parametrize("rel", ["config/samples/isvc/meta/leak.yaml", "config/samples/isvc", "config/samples",
                                 "LICENSE"])
def test_refresh_refuses_a_sample_folder_or_file_of_the_checkout_that_is_a_link(checkout, tmp_path, rel):
    outside = tmp_path / "outside"
    (outside / "isvc").mkdir(parents=True)
    (outside / "isvc" / "secret.yaml").write_text("not OME's\n")
    target = outside / "isvc" / "secret.yaml" if rel.endswith((".yaml", "LICENSE")) else outside
    link = _link_in_checkout(checkout, rel, target)
    run = refresh(checkout, tmp_path / "data")
    assert (run.returncode, run.stdout) == (1, "")
    assert run.stderr == f"error: {link} is a symbolic link; the data holds regular files only: remove it\n"
    assert not (tmp_path / "data").exists()


@pytest.mark.parametrize("rel", ["samples/isvc/out.yaml", "samples/isvc", "samples", "LICENSE", "PROVENANCE.md"])
def test_refresh_refuses_a_link_in_the_data_folder_and_writes_nothing_through_it(checkout, tmp_path, rel):
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.txt"
    secret.write_text("not OME's\n")
    data = tmp_path / "data"
    link = data / rel
    link.parent.mkdir(parents=True)
    link.symlink_to(secret if "." in link.name else outside)
    run = refresh(checkout, data)
    assert (run.returncode, run.stdout) == (1, "")
    assert run.stderr == f"error: {link} is a symbolic link; the data holds regular files only: remove it\n"
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"] and secret.read_text() == "not OME's\n"
    assert sorted(p.relative_to(data).as_posix() for p in data.rglob("*")) == sorted(
        p.relative_to(data).as_posix() for p in link.parents if data in p.parents) + [rel]


def outside(tmp_path: Path) -> Path:
    """A folder outside the checkout and the data, shaped like both: what a link out would reach."""
    out = tmp_path / "outside"
    write(out, {"LICENSE": "not OME's\n", "PROVENANCE.md": "not ours\n", "secret.yaml": "kind: Secret\n",
                "config/runtimes/s.yaml": "kind: Secret\n", "config/models/s.yaml": "kind: Secret\n"})
    return out


def contents(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): p.read_text() for p in sorted(folder.rglob("*"))
            if p.is_file() and not p.is_symlink()}


@pytest.mark.parametrize("link, target", [
    ("LICENSE", "LICENSE"),                              # a file read from outside the checkout
    ("config/models", "config/models"),                  # a copied folder that is a link out
    ("config", "config"),                                # the parent of copied folders
    ("pkg/hfutil", "config"),                            # a folder further up the way to one
])
def test_refresh_refuses_a_link_on_the_way_out_of_the_checkout(checkout, tmp_path, link, target):
    """A link anywhere between the checkout and what is read from it is refused, committed or not, before anything
    is written (issue 33): the folder itself, a folder above it, LICENSE."""
    out = outside(tmp_path)
    moved = checkout / link
    (shutil.rmtree if moved.is_dir() else Path.unlink)(moved)
    moved.symlink_to(out / target)
    git(checkout, "add", "-A")
    git(checkout, "commit", "-qm", "a link out")
    run = refresh(checkout, tmp_path / "data")
    assert (run.returncode, run.stdout) == (1, "")
    assert run.stderr == f"error: {checkout}/{link} is a symbolic link; the data holds regular files only: remove it\n"
    assert not (tmp_path / "data").exists()


@pytest.mark.parametrize("link", ["LICENSE", "PROVENANCE.md", "runtimes", "modelconfig"])
def test_refresh_refuses_a_link_on_the_way_out_of_the_data_and_writes_nothing(checkout, tmp_path, link):
    """The data folder's LICENSE, PROVENANCE.md and copied folders are never written through a link (issue 33)."""
    out = outside(tmp_path)
    before = contents(out)
    data = tmp_path / "data"
    write(data, {"models/meta/m.yaml": "kind: ClusterBaseModel # old\n"})
    (data / link).symlink_to(out / ("config/runtimes" if link in ("runtimes", "modelconfig") else link))
    run = refresh(checkout, data)
    assert (run.returncode, run.stdout) == (1, "")
    assert run.stderr == f"error: {data}/{link} is a symbolic link; the data holds regular files only: remove it\n"
    assert contents(out) == before
    assert contents(data) == {"models/meta/m.yaml": "kind: ClusterBaseModel # old\n"}


def test_git_runs_no_program_the_checkouts_config_names(checkout, tmp_path):
    """``core.fsmonitor`` in the checkout's .git/config names a program: it never runs (issue 33), and neither do
    those of the machine's and the user's config."""
    marker = tmp_path / "FSMONITOR-RAN"
    program = tmp_path / "monitor.sh"
    program.write_text(f"#!/bin/sh\ntouch '{marker}'\n")
    program.chmod(0o755)
    git(checkout, "config", "core.fsmonitor", str(program))
    home = tmp_path / "home"
    write(home, {".gitconfig": f"[core]\n\tfsmonitor = {program}\n"})
    run = subprocess.run([sys.executable, str(SCRIPT), str(checkout), "--dest", str(tmp_path / "data")],
                         capture_output=True, text=True, env={"PATH": os.environ["PATH"], "HOME": str(home)})
    assert (run.returncode, run.stderr) == (0, ""), run.stderr
    assert run.stdout.endswith("7 files changed: 7 added, 0 modified, 0 removed\n")
    assert not marker.exists()


def test_refresh_refuses_an_untracked_or_deleted_file_in_the_copied_folders(checkout, tmp_path):
    (checkout / "config/models/meta/new.yaml").write_text("kind: ClusterBaseModel\n")
    run = refresh(checkout, tmp_path / "data")
    assert (run.returncode, run.stdout) == (1, "")
    assert run.stderr == (f"error: {checkout} has uncommitted changes in the folders copied "
                          "(?? config/models/meta/new.yaml...); commit or discard them first\n")
    (checkout / "config/models/meta/new.yaml").unlink()
    (checkout / "config/runtimes/srt/a-rt.yaml").unlink()
    run = refresh(checkout, tmp_path / "data")
    assert run.stderr == (f"error: {checkout} has uncommitted changes in the folders copied "
                          "(D config/runtimes/srt/a-rt.yaml...); commit or discard them first\n")
    assert not (tmp_path / "data").exists()


def test_refresh_leaves_out_the_sample_secret_holding_a_token_shaped_value(checkout, tmp_path):
    """OME's ``config/samples/benchmark/huggingface-secret.yaml`` holds a value shaped like a Hugging Face token:
    never copied (a secret scanner would flag every clone), and removed where an older refresh copied it."""
    write(checkout, {"config/samples/benchmark/huggingface-secret.yaml": "kind: Secret\n"})
    git(checkout, "add", ".")
    git(checkout, "commit", "-qm", "the sample secret")
    dest = tmp_path / "data"
    write(dest, {"samples/benchmark/huggingface-secret.yaml": "kind: Secret\n"})
    run = refresh(checkout, dest)
    assert run.returncode == 0, run.stderr
    assert "D samples/benchmark/huggingface-secret.yaml\n" in run.stdout
    assert not (dest / "samples/benchmark/huggingface-secret.yaml").exists()
    assert ("What was trimmed: `samples/benchmark/huggingface-secret.yaml`, a Secret holding a Hugging Face "
            "token-shaped value.") in (dest / "PROVENANCE.md").read_text()
