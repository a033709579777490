"""``omerender diff`` arguments as git parses them, and the git trees a pull request can craft.

A name that is both a revision and a path is an error unless ``--`` separates the revisions from the PATHs (a
pull request can commit a ``HEAD/`` directory); every tree entry git can hold is read or is an ``error:`` line
naming the revision and the entry, never an internal error, and never the temporary copy's path.
"""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import FIXTURES, run_cli
from test_diff import BASE, git, repo, summary  # noqa: F401 - repo is the fixture

AMBIGUOUS = ('error: {side}: ambiguous argument "{name}": both the revision {name} and the path ./{name}; use -- to '
             'separate revisions from paths (omerender diff BASE HEAD -- [PATH]...), or write ./{name} for the path')


def mktree(repo: Path, *entries: str) -> str:
    """A tree of ``entries`` ("mode type id<TAB>name"), as ``git mktree`` writes it: it takes duplicates."""
    return subprocess.run(["git", "mktree"], cwd=repo, input="".join(f"{e}\n" for e in entries), text=True,
                          capture_output=True, check=True).stdout.strip()


def literal_tree(repo: Path, raw: bytes) -> str:
    """A tree written byte by byte, as a push can carry it (``git mktree`` would check the types)."""
    return subprocess.run(["git", "hash-object", "-t", "tree", "--literally", "-w", "--stdin"], cwd=repo, input=raw,
                          capture_output=True, check=True).stdout.decode().strip()


def commit_of(repo: Path, tree: str, name: str) -> str:
    """A commit of ``tree``, tagged ``name`` so that messages show a name, not an id."""
    commit = git(repo, "commit-tree", tree, "-m", name).strip()
    git(repo, "tag", name, commit)
    return name


def blob_of(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD:deploy/namespace.yaml").strip()


def nested(repo: Path, names: list[str], leaf: str) -> str:
    """A tree holding ``names[0]/names[1]/.../leaf``, one ``git mktree`` per level."""
    tree = mktree(repo, f"100644 blob {blob_of(repo)}\t{leaf}")
    for name in reversed(names):
        tree = mktree(repo, f"040000 tree {tree}\t{name}")
    return tree


def refused(*args: str) -> list[str]:
    run = run_cli("diff", *args)
    assert (run.code, run.stdout) == (2, ""), run.stderr
    assert "omerender-diff-" not in run.stderr and "internal error" not in run.stderr
    return run.lines


# ---------------------------------------------------------------- a path never shadows a revision

@pytest.fixture
def shadowed(repo) -> Path:
    """The pull request of the attack: deploy/ bumps the image, and a committed HEAD/deploy/ holds the old files."""
    shutil.copytree(BASE, repo / "HEAD" / "deploy")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "HEAD/")
    return repo


def test_a_directory_named_like_the_head_revision_is_ambiguous(shadowed, monkeypatch):
    monkeypatch.chdir(shadowed)
    assert refused("HEAD~2", "HEAD", "deploy/", "--exit-code") == [AMBIGUOUS.format(side="head", name="HEAD")]


def test_both_sides_ambiguous_are_both_named(shadowed, monkeypatch):
    shutil.copytree(BASE, shadowed / "main" / "deploy")
    monkeypatch.chdir(shadowed)
    assert refused("main", "HEAD", "deploy/") == [AMBIGUOUS.format(side="base", name="main"),
                                                  AMBIGUOUS.format(side="head", name="HEAD")]


def test_a_link_named_like_a_revision_is_ambiguous_too(repo, monkeypatch):
    (repo / "HEAD").symlink_to("nowhere")  # git looks at the name (lstat), not at what it leads to
    monkeypatch.chdir(repo)
    assert refused("HEAD~1", "HEAD") == [AMBIGUOUS.format(side="head", name="HEAD")]


def test_separator_reads_the_revisions_and_dot_slash_the_directory(shadowed, monkeypatch):
    monkeypatch.chdir(shadowed)
    run = run_cli("diff", "--exit-code", "--format", "json", "HEAD~2", "HEAD", "--", "deploy/")
    assert run.code == 1, run.stderr
    assert json.loads(run.stdout)["summary"] == summary(changed=3, unchanged=1, rollouts=3)
    directory = run_cli("diff", "--exit-code", "HEAD~2", "./HEAD", "deploy/")  # the committed HEAD/ itself
    assert (directory.code, directory.stderr) == (0, "")
    assert directory.stdout.endswith("No changes.\n")


def test_separator_keeps_directories_that_are_no_revision(repo, monkeypatch):
    monkeypatch.chdir(repo)
    run = run_cli("diff", "--format", "json", "HEAD~1", ".", "--", "deploy")
    assert run.code == 0, run.stderr
    assert json.loads(run.stdout)["summary"] == summary(changed=3, unchanged=1, rollouts=3)


def test_everything_after_the_separator_is_a_path(repo, monkeypatch):
    monkeypatch.chdir(repo)
    assert refused("HEAD~1", "HEAD", "--", "deploy", "--exit-code") == ["error: --exit-code: in neither HEAD~1 "
                                                                         "nor HEAD"]
    # a PATH before -- is a usage error, as git would read it as a third revision
    assert refused("HEAD~1", "HEAD", "deploy", "--", "x")[-1] == "Error: only BASE and HEAD go before --; put " \
                                                                 "deploy after it"
    assert refused("HEAD~1", "--", "HEAD")[-1] == "Error: Missing argument 'HEAD'."


def test_a_separator_as_the_value_of_an_option_is_that_value(shadowed, monkeypatch):
    monkeypatch.chdir(shadowed)
    # --lock takes "--" as its file name, so nothing separates the revisions and HEAD stays ambiguous
    assert refused("--lock", "--", "HEAD~2", "HEAD", "deploy") == [AMBIGUOUS.format(side="head", name="HEAD")]


def test_usage_and_help_show_the_separator():
    run = run_cli("diff", "--help")
    assert run.code == 0
    assert "Usage: cli diff [OPTIONS] BASE HEAD [--] [PATH]..." in run.stdout
    assert "  omerender diff origin/main HEAD -- deploy/\n" in run.stdout
    assert " ".join(run.stdout.split()).count("As in git, a name that is both a revision and a path is an error: "
                                               "put -- after HEAD to read it as the revision, or write ./NAME for "
                                               "the path.") == 1


# ---------------------------------------------------------------- crafted trees

def test_a_name_longer_than_a_file_system_takes(repo, monkeypatch):
    long = "a" * 295 + ".yaml"
    commit = commit_of(repo, nested(repo, ["deploy"], long), "long-name")
    monkeypatch.chdir(repo)
    assert refused("HEAD", commit) == [f"error: head: deploy/{long}: a name of 300 bytes in the git tree of revision "
                                       "long-name; file systems take at most 255 (git cannot check it out either): "
                                       "rename it"]


def test_a_long_name_that_is_not_yaml_is_not_read(repo, monkeypatch):
    tree = mktree(repo, f"040000 tree {git(repo, 'rev-parse', 'HEAD:deploy').strip()}\tdeploy",
                  f"100644 blob {blob_of(repo)}\t{'r' * 300}")
    commit = commit_of(repo, tree, "long-readme")
    monkeypatch.chdir(repo)
    run = run_cli("diff", "HEAD", commit, "--format", "json")
    assert run.code == 0, run.stderr
    assert json.loads(run.stdout)["summary"] == summary(unchanged=4)


def test_a_path_longer_than_a_file_system_takes(repo, monkeypatch):
    names = [f"{i:02d}" + "d" * 248 for i in range(17)]  # 17 names of 250 bytes: 4,273 bytes with the leaf
    commit = commit_of(repo, nested(repo, names, "x.yaml"), "long-path")
    monkeypatch.chdir(repo)
    path = "/".join([*names, "x.yaml"])
    assert refused("HEAD", commit) == [f"error: head: {path}: a path of 4,273 bytes in the git tree of revision "
                                       "long-path; file systems take at most 4,096 (git cannot check it out "
                                       "either): shorten it"]


def test_a_path_that_does_not_fit_beside_the_temporary_directory(repo, monkeypatch):
    names = [f"{i:02d}" + "d" * 252 for i in range(16)]  # 4,086 bytes: within the limit, too long once staged
    commit = commit_of(repo, nested(repo, names, "x.yaml"), "almost-too-long")
    monkeypatch.chdir(repo)
    path = "/".join([*names, "x.yaml"])
    assert len(path) == 4086
    assert refused("HEAD", commit) == [f"error: head: {path}: cannot copy this file of revision almost-too-long to "
                                       "read it: File name too long"]


def test_a_path_deeper_than_a_directory_walk_goes(repo, monkeypatch):
    commit = commit_of(repo, nested(repo, ["d"] * 101, "x.yaml"), "deep")
    monkeypatch.chdir(repo)
    assert refused("HEAD", commit) == [f"error: head: {'d/' * 101}x.yaml: a file 101 directories deep in the git "
                                       "tree of revision deep; omerender reads at most 100 levels: move it up"]
    at_the_limit = commit_of(repo, nested(repo, ["d"] * 100, "x.yaml"), "deep-enough")
    empty = commit_of(repo, mktree(repo), "empty")
    run = run_cli("diff", empty, at_the_limit, "--format", "json")
    assert run.code == 0, run.stderr
    assert [(o["kind"], o["change"]) for o in json.loads(run.stdout)["objects"]] == [("ConfigMap", "added"),
                                                                                    ("Namespace", "added")]


TWICE = ("(a malformed tree: git fsck reports duplicateEntries, and a checkout keeps only one); remove the "
         "duplicate")


def test_a_file_listed_twice(repo, monkeypatch):
    blob = blob_of(repo)
    commit = commit_of(repo, mktree(repo, f"100644 blob {blob}\tx.yaml", f"100644 blob {blob}\tx.yaml"), "twice")
    monkeypatch.chdir(repo)
    assert refused("HEAD", commit) == [f"error: head: x.yaml: the git tree of revision twice holds this file twice "
                                       f"{TWICE}"]


def test_a_directory_listed_twice(repo, monkeypatch):
    deploy = git(repo, "rev-parse", "HEAD:deploy").strip()
    commit = commit_of(repo, mktree(repo, f"040000 tree {deploy}\tdeploy", f"040000 tree {deploy}\tdeploy"),
                       "twice-dir")
    monkeypatch.chdir(repo)
    lines = refused("HEAD~1", commit, "deploy")
    assert lines == [f"error: head: deploy/classes.yaml: the git tree of revision twice-dir holds this file twice "
                     f"{TWICE}"]


@pytest.mark.parametrize("name", ["a.yaml", "notes"])
def test_a_file_and_a_directory_of_one_name(repo, monkeypatch, name):
    blob = blob_of(repo)
    inner = mktree(repo, f"100644 blob {blob}\tb.yaml")
    commit = commit_of(repo, mktree(repo, f"100644 blob {blob}\t{name}", f"040000 tree {inner}\t{name}"),
                       "file-and-dir")
    monkeypatch.chdir(repo)
    assert refused("HEAD", commit) == [f"error: head: {name}: the git tree of revision file-and-dir holds a file "
                                       f"and a directory of this name {TWICE}"]


def test_a_tree_object_with_the_mode_of_a_file(repo, monkeypatch):
    deploy = git(repo, "rev-parse", "HEAD:deploy").strip()
    commit = commit_of(repo, literal_tree(repo, b"100644 odd.yaml\0" + bytes.fromhex(deploy)), "odd")
    monkeypatch.chdir(repo)
    assert refused("HEAD", commit) == ["error: head: odd.yaml: revision odd lists a tree object as this file "
                                       "(a malformed tree; git fsck reports it)"]


def test_a_path_git_cannot_judge_is_an_error_naming_the_fix(repo, monkeypatch):
    shutil.copytree(BASE, repo / "main@{upstream}")  # git fails on the name (main has no upstream), not "no"
    monkeypatch.chdir(repo)
    assert refused("HEAD~1", "main@{upstream}") == [
        'error: head: cannot tell whether "main@{upstream}" is a revision or the path ./main@{upstream}: git: '
        "fatal: no upstream configured for branch 'main'; write ./main@{upstream} for the path"]
    run = run_cli("diff", "--format", "json", "HEAD", "./main@{upstream}")
    assert run.code == 0, run.stderr
    assert json.loads(run.stdout)["summary"] == summary(changed=3, unchanged=1, rollouts=3)


def test_a_blob_with_the_mode_of_a_directory(repo, monkeypatch):
    blob = blob_of(repo)
    commit = commit_of(repo, literal_tree(repo, b"40000 sub\0" + bytes.fromhex(blob)), "blob-as-dir")
    monkeypatch.chdir(repo)
    assert refused("HEAD", commit) == ["error: head: cannot list the git tree of revision blob-as-dir (a malformed "
                                       f"tree, or a shallow or partial clone?): git: error: Object {blob} not a tree"]


def test_a_directory_missing_from_the_repository(repo, monkeypatch):
    commit = commit_of(repo, literal_tree(repo, b"40000 gone\0" + b"\x11" * 20), "gone")
    monkeypatch.chdir(repo)
    assert refused("HEAD", commit) == ["error: head: cannot list the git tree of revision gone (a malformed tree, or "
                                       f"a shallow or partial clone?): git: error: Could not read {'11' * 20}"]


def test_where_git_fails_a_path_spelt_as_no_revision_still_reads(repo, tmp_path, monkeypatch):
    shutil.copytree(BASE, repo / "old")
    shutil.copytree(BASE, repo / "new")
    (tmp_path / "broken.gitconfig").write_text("[bad\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "broken.gitconfig"))  # every git command fails
    monkeypatch.chdir(repo)
    assert refused("old", "new/") == [
        f'error: base: cannot tell whether "old" is a revision or the path ./old: git: fatal: bad config line 1 in '
        f"file {tmp_path / 'broken.gitconfig'}; write ./old for the path"]
    run = run_cli("diff", "--format", "json", "./old", "new/")
    assert run.code == 0, run.stderr
    assert json.loads(run.stdout)["summary"] == summary(unchanged=4)
