"""Paths are judged by where they resolve, however they are spelled (omerender/yamlio/paths.py, issue 24)."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from conftest import FIXTURES, run_cli

QUICKSTART = FIXTURES / "quickstart"
SECRET = """\
apiVersion: v1
kind: Secret
metadata: {name: stolen, namespace: default}
stringData: {token: hunter2}
"""
READS = "omerender reads only the files it is given"


@pytest.fixture
def repo(tmp_path, monkeypatch) -> Path:
    """A repository (the working directory) whose ``omedeploy`` leads to ``../outside``, which holds a Secret."""
    outside = tmp_path / "outside"
    (outside / "apps").mkdir(parents=True)
    (outside / "secret.yaml").write_text(SECRET)
    (outside / "apps" / "secret.yaml").write_text(SECRET)
    repo = tmp_path / "repo"
    (repo / "a").mkdir(parents=True)
    os.symlink("../outside", repo / "omedeploy")
    os.symlink("omedeploy", repo / "again")  # a link to the link
    monkeypatch.chdir(repo)
    return repo


def assert_refused(run, line: str) -> None:
    assert (run.code, run.stdout, run.lines) == (1, "", [line])


@pytest.mark.parametrize("spelling", ["omedeploy", "omedeploy/", "omedeploy/.", "omedeploy//", "./omedeploy",
                                      "a/../omedeploy", "again", "again/"])
def test_a_link_out_of_its_directory_is_refused_however_it_is_spelled(repo, spelling):
    assert_refused(run_cli("render", spelling),
                   f"error: {spelling}: symbolic link to {repo.parent / 'outside'}, outside {repo}; {READS}")


def test_an_absolute_path_through_a_link_out_is_refused(repo):
    spelled = f"{repo}/omedeploy/"
    assert_refused(run_cli("render", spelled),
                   f"error: {spelled}: symbolic link to {repo.parent / 'outside'}, outside {repo}; {READS}")


@pytest.mark.parametrize("spelling", ["omedeploy/secret.yaml", "omedeploy/apps/", "./omedeploy/apps/."])
def test_a_parent_link_out_is_refused(repo, spelling):
    link = "./omedeploy" if spelling.startswith("./") else "omedeploy"
    assert_refused(run_cli("render", spelling),
                   f"error: {spelling}: {link} is a symbolic link to {repo.parent / 'outside'}, outside {repo}; "
                   f"{READS}")


def test_dot_dot_after_a_link_cannot_climb_above_the_links_directory(repo):
    os.symlink(".", repo / "here")  # inside its directory: allowed, but `here/..` is the repository's parent
    assert_refused(run_cli("render", "here/../outside/"),
                   f"error: here/../outside/: here/.. leads to {repo.parent}, above {repo}, the directory holding "
                   f"the symbolic link here; {READS}")


def test_the_lock_file_is_judged_by_where_it_resolves(repo):
    (repo / "in").mkdir()
    (repo / "in" / "isvc.yaml").write_text((QUICKSTART / "isvc.yaml").read_text())
    (repo.parent / "outside" / "omerender.lock.yaml").write_text(SECRET)
    assert_refused(run_cli("render", "in", "--lock", "omedeploy/omerender.lock.yaml"),
                   f"error: omedeploy/omerender.lock.yaml: omedeploy is a symbolic link to "
                   f"{repo.parent / 'outside'}, outside {repo}; {READS}")


@pytest.mark.parametrize("spelling", ["current", "current/", "current/.", "./current", "a/../current", "alias/"])
def test_a_link_the_user_names_inside_its_directory_is_read_however_spelled(repo, spelling):
    shutil.copytree(QUICKSTART, repo / "releases" / "v2")
    os.symlink("releases/v2", repo / "current")
    os.symlink("current", repo / "alias")
    expected = run_cli("render", str(QUICKSTART))
    assert expected.code == 0, expected.stderr
    got = run_cli("render", spelling)
    assert (got.code, got.stdout) == (0, expected.stdout), got.stderr


def test_a_single_file_is_never_written_through_a_parent_link_out(repo):
    # lock update, build -o and model-info --update all write through atomicdir.replace_file
    run = run_cli("lock", "update", str(QUICKSTART), "--lock", "omedeploy/omerender.lock.yaml")
    assert (run.code, run.stdout, run.lines[-1]) == (
        1, "", f"error: omedeploy/omerender.lock.yaml: omedeploy is a symbolic link to {repo.parent / 'outside'}, "
               f"outside {repo}; omerender never writes through a link that leads out of the directory holding it")
    assert sorted(os.listdir(repo.parent / "outside")) == ["apps", "secret.yaml"]


def test_one_function_says_which_files_the_walk_of_a_directory_reads(tmp_path):
    """``walk_skips`` is the walk's own answer (issue 33): for every file of a tree, it says None exactly for the
    files a render of the tree reads, and names why for the rest."""
    from omerender.yamlio.reading import paths_reading, read_paths, walk_skips
    tree = tmp_path / "app"
    files = ["a.yaml", "b.yml", "c.json", ".d.yaml", "kustomization.yaml", "sub/e.yaml", ".hidden/f.yaml",
             "sub/.g/h.yaml", "out/i.yaml", "out/deeper/j.yaml", "k/l.yaml"]
    for name in files:
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        (tree / name).write_text(f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: x{len(name)}}}\n")
    (tree / "out" / ".omerender-rendered.yaml").write_text("{}\n")
    (tree / "link.yaml").symlink_to("c.json")
    (tree / "k-link").symlink_to("k", target_is_directory=True)
    (tree / "kustomization.yaml").write_text("resources: []\n")
    read = {os.path.relpath(doc.file, tree) for doc in read_paths([str(tree)])}
    assert read == {"a.yaml", "b.yml", "sub/e.yaml", "k/l.yaml"}
    assert {name: walk_skips(str(tree / name), str(tree)) for name in files + ["link.yaml", "k-link/l.yaml"]} == {
        "a.yaml": None, "b.yml": None, "sub/e.yaml": None, "k/l.yaml": None, "k-link/l.yaml": None,
        "c.json": "c.json is not named .yaml or .yml", "link.yaml": "c.json is not named .yaml or .yml",
        ".d.yaml": ".d.yaml is a file whose name starts with a dot",
        "kustomization.yaml": "kustomization.yaml is a kustomization",
        ".hidden/f.yaml": "app/.hidden is a directory whose name starts with a dot",
        "sub/.g/h.yaml": "app/sub/.g is a directory whose name starts with a dot",
        "out/i.yaml": "app/out holds .omerender-rendered.yaml: `omerender render --output-dir` wrote it",
        "out/deeper/j.yaml": "app/out holds .omerender-rendered.yaml: `omerender render --output-dir` wrote it"}
    assert walk_skips(str(tmp_path / "elsewhere.yaml"), str(tree)) == f"outside {tree}"
    assert paths_reading([str(tree)], str(tree / "k-link" / "l.yaml")) == (str(tree),)
    assert paths_reading([str(tree)], str(tree / ".d.yaml")) == (str(tree), str(tree / ".d.yaml"))
    assert paths_reading(["-", str(tree / ".d.yaml")], str(tree / ".d.yaml")) == ("-", str(tree / ".d.yaml"))
