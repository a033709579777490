"""`render --output-dir DIR` and `check` on hostile input: every path part is a valid API-server name, nothing outside
DIR is read or written, links and special files in DIR are refused, DIR is replaced whole (crash, kill -9,
full disk, two renders at once), and only files omerender recorded writing are removed.

Each test runs the real `omerender` console script in a subprocess (with a timeout, so a hang fails)."""
from __future__ import annotations

import copy
import fcntl
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from conftest import unplaced  # positions: test_lines
from omerender.kube import apirules

ROOT = Path(__file__).resolve().parents[1]
QUICKSTART = ROOT / "fixtures" / "quickstart"
ISVC = "llama-3-2-3b-instruct"
DEPLOYMENT = f"llama-demo/deployment-{ISVC}-engine.yaml"
MARKER = ".omerender-rendered.yaml"
BIN = Path(sys.executable).parent
TIMEOUT = 60


def omerender(*args: str, cwd: Path | None = None, preexec_fn=None) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / "omerender"), *args], capture_output=True, text=True, env=_env(),
                          cwd=cwd, preexec_fn=preexec_fn, timeout=TIMEOUT, check=False)


def start(*args: str) -> subprocess.Popen:
    return subprocess.Popen([str(BIN / "omerender"), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=_env())


def _env() -> dict:
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    return env


def snapshot(folder: Path) -> dict[str, str]:
    """Every entry under ``folder`` (links as "-> target"), not following links."""
    found = {}
    for path in sorted(folder.rglob("*")):
        relative = str(path.relative_to(folder))
        if path.is_symlink():
            found[relative] = f"-> {os.readlink(path)}"
        elif path.is_file():
            found[relative] = path.read_text()
        elif path.is_dir():
            found[relative] = "/"
        else:
            found[relative] = "special"
    return found


def inputs_with(tmp_path: Path, *objects: dict) -> Path:
    """The quickstart inputs plus ``objects``, in a fresh folder."""
    folder = tmp_path / "in"
    shutil.copytree(QUICKSTART, folder)
    (folder / "extra.yaml").write_text(yaml.safe_dump_all(objects, sort_keys=False))
    return folder


def config_map(name: str, namespace: str | None = "llama-demo") -> dict:
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"a": "b"}}


def rendered_once(tmp_path: Path, *flags: str) -> Path:
    out = tmp_path / "work" / "out"
    done = omerender("render", str(QUICKSTART), *flags, "--output-dir", str(out))
    assert done.returncode == 0, done.stderr
    return out


LABEL = apirules.DNS1123_LABEL_TEXT
SUBDOMAIN = apirules.DNS1123_SUBDOMAIN_TEXT


def assert_refused(done: subprocess.CompletedProcess, *lines: str) -> None:
    assert (done.returncode, done.stdout, unplaced(done.stderr).splitlines()) == (1, "", list(lines))


# ---------------------------------------------------------------- names from object data

def test_a_namespace_of_dot_dot_is_an_error_naming_file_object_and_field(tmp_path):
    folder = tmp_path / "in"
    shutil.copytree(QUICKSTART, folder)
    isvc = folder / "isvc.yaml"
    isvc.write_text(isvc.read_text().replace("namespace: llama-demo", 'namespace: ".."'))
    model = folder / "model.yaml"
    model.write_text(model.read_text().replace("namespace: llama-demo", 'namespace: ".."'))
    runtime = folder / "runtime.yaml"
    runtime.write_text(runtime.read_text().replace("namespace: llama-demo", 'namespace: ".."'))
    (tmp_path / "work").mkdir()
    (tmp_path / ".pre-commit-config.yaml").write_text("mine\n")
    before = snapshot(tmp_path)
    done = omerender("render", str(folder), "--output-dir", str(tmp_path / "work" / "out"))
    assert_refused(done,
                   f"error: {isvc}: InferenceService ../{ISVC}: metadata.namespace: Invalid value: \"..\": {LABEL}",
                   f"error: {runtime}: ServingRuntime ../sglang-llama-3-2-3b: metadata.namespace: Invalid value: "
                   f"\"..\": {LABEL}")
    assert snapshot(tmp_path) == before


def test_a_passed_through_object_with_a_bad_namespace_or_name_is_refused(tmp_path):
    folder = inputs_with(tmp_path, config_map("x", ".."), config_map("a/../../b"), config_map("%2e%2e"))
    done = omerender("render", str(folder), "--output-dir", str(tmp_path / "out"))
    extra = folder / "extra.yaml"
    assert_refused(
        done,
        f"error: {extra}: ConfigMap ../x: metadata.namespace: Invalid value: \"..\": {LABEL}",
        f"error: {extra}: ConfigMap llama-demo/a/../../b: metadata.name: Invalid value: \"a/../../b\": {SUBDOMAIN}",
        f"error: {extra}: ConfigMap llama-demo/%2e%2e: metadata.name: Invalid value: \"%2e%2e\": {SUBDOMAIN}")
    assert not (tmp_path / "out").exists()
    odd_kind = inputs_with(tmp_path / "kind", {**config_map("y"), "kind": "../Config"})
    done = omerender("render", str(odd_kind), "--output-dir", str(tmp_path / "out"))
    assert_refused(done, f"error: {odd_kind / 'extra.yaml'}: ../Config llama-demo/y: kind: Invalid value: "
                         "\"../Config\": must be letters and digits, starting with a letter")
    assert not (tmp_path / "out").exists()


def test_a_newline_in_a_name_is_one_escaped_error_line(tmp_path):
    folder = inputs_with(tmp_path, config_map("a\nerror: forged"))
    done = omerender("render", str(folder), "--output-dir", str(tmp_path / "out"))
    assert_refused(done, f"error: {folder / 'extra.yaml'}: ConfigMap llama-demo/a\\nerror: forged: metadata.name: "
                         f"Invalid value: \"a\\nerror: forged\": {SUBDOMAIN}")


def test_a_253_character_name_gets_a_short_deterministic_file_name(tmp_path):
    name = ".".join(["a" * 63] * 4)[:253]
    assert len(name) == 253
    folder = inputs_with(tmp_path, config_map(name))
    out = tmp_path / "out"
    done = omerender("render", str(folder), "--output-dir", str(out))
    assert done.returncode == 0, done.stderr
    files = [f for f in snapshot(out) if f.startswith("llama-demo/configmap-")]
    assert len(files) == 1 and len(files[0]) < 120 and files[0].startswith("llama-demo/configmap-aaaa")
    assert yaml.safe_load((out / files[0]).read_text())["metadata"]["name"] == name
    again = tmp_path / "again"
    assert omerender("render", str(folder), "--output-dir", str(again)).returncode == 0
    assert snapshot(again) == snapshot(out)
    built = subprocess.run(["kustomize", "build", str(out)], capture_output=True, text=True, check=False,
                           timeout=TIMEOUT)
    assert built.returncode == 0, built.stderr
    assert name in [o["metadata"]["name"] for o in yaml.safe_load_all(built.stdout)]


def test_rbac_system_names_stay_valid_and_two_names_never_share_a_file(tmp_path):
    roles = [{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
              "metadata": {"name": name}, "rules": []} for name in ("system:ome:reader", "system_ome_reader")]
    folder = inputs_with(tmp_path, *roles)
    out = tmp_path / "out"
    done = omerender("render", str(folder), "--output-dir", str(out))
    assert done.returncode == 0, done.stderr
    files = sorted(f for f in snapshot(out) if f.startswith("_cluster/clusterrole-"))
    assert len(files) == 2
    assert {yaml.safe_load((out / f).read_text())["metadata"]["name"] for f in files} == {
        "system:ome:reader", "system_ome_reader"}


# ---------------------------------------------------------------- links and special files in DIR

@pytest.mark.parametrize("case", ["file", "dangling file", "folder", "dangling folder"])
def test_a_symlink_in_dir_is_refused_and_never_followed(tmp_path, case):
    out = rendered_once(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "deployment.yaml").write_text("secret\n")
    link, target = {
        "file": (out / DEPLOYMENT, outside / "deployment.yaml"),
        "dangling file": (out / DEPLOYMENT, outside / "new.yaml"),
        "folder": (out / "llama-demo", outside),
        "dangling folder": (out / "llama-demo", outside / "gone"),
    }[case]
    if link.is_dir():
        shutil.rmtree(link)
    else:
        link.unlink()
    link.symlink_to(target)
    before, outside_before = snapshot(out), snapshot(outside)
    done = omerender("render", str(QUICKSTART), "--no-model-node-selector", "--output-dir", str(out))
    assert_refused(done, f"error: {link}: a symbolic link in the output directory: omerender never follows or "
                         "replaces links there; remove it (or render into another directory)")
    assert (snapshot(out), snapshot(outside)) == (before, outside_before)


def test_dir_itself_a_symlink_is_refused(tmp_path):
    real = rendered_once(tmp_path)
    link = tmp_path / "link"
    link.symlink_to(real)
    done = omerender("render", str(QUICKSTART), "--output-dir", str(link))
    assert_refused(done, f"error: {link}: is a symbolic link: omerender never follows one; name the directory "
                         "itself")


def test_a_symlinked_lock_file_is_refused(tmp_path):
    out = rendered_once(tmp_path)
    lock = out.parent / ".out.omerender-lock"
    secret = tmp_path / "secret"
    secret.write_text("secret\n")
    lock.symlink_to(secret)
    done = omerender("render", str(QUICKSTART), "--output-dir", str(out))
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith(f"error: {lock}: cannot lock: ")
    assert secret.read_text() == "secret\n"


def test_a_fifo_in_dir_is_refused_without_hanging(tmp_path):
    out = rendered_once(tmp_path)
    (out / DEPLOYMENT).unlink()
    os.mkfifo(out / DEPLOYMENT)
    done = omerender("render", str(QUICKSTART), "--output-dir", str(out))  # the timeout fails a hang
    assert_refused(done, f"error: {out / DEPLOYMENT}: not a regular file (a FIFO, socket or device) in the output "
                         "directory: omerender never opens one; remove it")


# ---------------------------------------------------------------- only recorded files are removed

def test_a_kustomization_entry_never_causes_a_deletion(tmp_path):
    out = rendered_once(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.yaml").write_text("kept\n")
    (out / "README.yaml").write_text("mine\n")
    (out / "link").symlink_to(outside)
    kustomization = out / "kustomization.yaml"
    lines = kustomization.read_text().splitlines()
    kustomization.write_text("\n".join(lines + ["- link/x.yaml", "- README.yaml", "- ../outside/x.yaml", ""]))
    done = omerender("render", str(QUICKSTART), "--output-dir", str(out))
    assert done.returncode == 1
    assert (outside / "x.yaml").read_text() == "kept\n" and (out / "README.yaml").read_text() == "mine\n"
    (out / "link").unlink()
    done = omerender("render", str(QUICKSTART), "--output-dir", str(out))
    assert done.returncode == 0, done.stderr
    assert (outside / "x.yaml").read_text() == "kept\n" and (out / "README.yaml").read_text() == "mine\n"
    assert "README.yaml" not in yaml.safe_load(kustomization.read_text())["resources"]


def test_user_files_and_modes_are_carried_into_the_new_render(tmp_path):
    out = rendered_once(tmp_path)
    (out / "notes").mkdir()
    (out / "notes" / "run.sh").write_text("#!/bin/sh\n")
    (out / "notes" / "run.sh").chmod(0o750)
    (out / "empty").mkdir()
    (out / "llama-demo" / "patch.yaml").write_text("mine\n")
    out.chmod(0o750)
    done = omerender("render", str(QUICKSTART), "--no-model-node-selector", "--output-dir", str(out))
    assert done.returncode == 0, done.stderr
    assert (out / "notes" / "run.sh").read_text() == "#!/bin/sh\n"
    assert (out / "notes" / "run.sh").stat().st_mode & 0o777 == 0o750
    assert (out / "empty").is_dir() and (out / "llama-demo" / "patch.yaml").read_text() == "mine\n"
    assert out.stat().st_mode & 0o777 == 0o750
    assert "nodeSelector" not in (out / DEPLOYMENT).read_text()


# ---------------------------------------------------------------- environment faults

def test_dash_o_naming_a_file_or_a_path_under_a_file(tmp_path):
    file = tmp_path / "afile"
    file.write_text("mine\n")
    assert_refused(omerender("render", str(QUICKSTART), "--output-dir", str(file)),
                   f"error: {file}: exists and is not a directory: -o names the directory to write the render "
                   "into")
    assert_refused(omerender("render", str(QUICKSTART), "--output-dir", str(file / "out")),
                   f"error: {file}: is not a directory, so {file / 'out'} cannot be created in it")
    assert file.read_text() == "mine\n"


def test_a_read_only_dir_is_an_error_and_left_alone(tmp_path):
    out = rendered_once(tmp_path)
    before = snapshot(out)
    out.chmod(0o555)
    try:
        done = omerender("render", str(QUICKSTART), "--no-model-node-selector", "--output-dir", str(out))
    finally:
        out.chmod(0o755)
    assert_refused(done, f"error: {out}: is read-only; make it writable (chmod u+w) or render into another "
                         "directory")
    assert snapshot(out) == before


def test_a_read_only_folder_in_dir_is_an_error_for_render_but_check_reads_it(tmp_path):
    out = rendered_once(tmp_path)
    before = snapshot(out)
    (out / "llama-demo").chmod(0o555)
    try:
        done = omerender("render", str(QUICKSTART), "--no-model-node-selector", "--output-dir", str(out))
        checked = omerender("check", str(QUICKSTART), str(out))
    finally:
        (out / "llama-demo").chmod(0o755)
    assert_refused(done, f"error: {out / 'llama-demo'}: read-only folder in the output directory; make it writable "
                         "(chmod u+w) or render into another directory")
    assert snapshot(out) == before
    assert (checked.returncode, checked.stdout) == (0, ""), checked.stderr


def _file_size_limit(size: int):
    return lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))


def test_a_full_disk_leaves_the_old_render_whole(tmp_path):
    out = rendered_once(tmp_path, "--no-model-node-selector")
    before = snapshot(out)
    assert len((out / DEPLOYMENT).read_text()) > 1500  # the limit stops this file part way
    done = omerender("render", str(QUICKSTART), "--output-dir", str(out), preexec_fn=_file_size_limit(1500))
    assert_refused(done, f"error: {out / DEPLOYMENT}: cannot write: File too large; the file size limit was "
                         f"reached (the render in {out} is unchanged)")
    assert snapshot(out) == before
    assert sorted(p.name for p in out.parent.iterdir()) == ["out"]


def _many_isvcs(tmp_path: Path, count: int) -> Path:
    folder = tmp_path / "many"
    shutil.copytree(QUICKSTART, folder)
    isvc = yaml.safe_load((folder / "isvc.yaml").read_text())
    copies = []
    for i in range(count):
        one = copy.deepcopy(isvc)
        one["metadata"]["name"] = f"isvc-{i}"
        copies.append(one)
    (folder / "isvc.yaml").write_text(yaml.safe_dump_all(copies))
    return folder


def _written_since(tmp_path: Path, started: float) -> int:
    """How many files of the render into out/ (in it, or in a folder beside it) were written since ``started``."""
    count = 0
    for folder in [tmp_path / "out", *tmp_path.glob(".out.*")]:
        for sub in (folder / "llama-demo", folder):
            try:
                with os.scandir(sub) as entries:
                    count += sum(1 for e in entries if e.stat(follow_symlinks=False).st_mtime >= started)
            except (FileNotFoundError, NotADirectoryError):
                continue
    return count


def test_kill_9_mid_write_leaves_the_old_render_or_the_new_one_never_a_mix(tmp_path):
    inputs = _many_isvcs(tmp_path, 300)
    out = tmp_path / "out"
    assert omerender("render", str(inputs), "--no-model-node-selector", "--output-dir", str(out)).returncode == 0
    old = snapshot(out)
    new_dir = tmp_path / "new"
    assert omerender("render", str(inputs), "--output-dir", str(new_dir)).returncode == 0
    new = snapshot(new_dir)
    started = time.time()
    process = start("render", str(inputs), "--output-dir", str(out))
    seen_mid_write = False
    deadline = time.monotonic() + TIMEOUT
    while process.poll() is None and time.monotonic() < deadline and not seen_mid_write:
        seen_mid_write = _written_since(tmp_path, started) > 50
        time.sleep(0.002)
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=TIMEOUT)
    assert seen_mid_write, "the render finished before it could be killed mid-write"
    assert snapshot(out) in (old, new), "a mix of the old render and the new one"
    done = omerender("render", str(inputs), "--output-dir", str(out))
    assert done.returncode == 0, done.stderr
    assert snapshot(out) == new
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".out")] == []


def test_a_second_render_waits_for_the_lock(tmp_path):
    out = rendered_once(tmp_path)
    before = snapshot(out)
    with open(out.parent / ".out.omerender-lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        process = start("render", str(QUICKSTART), "--no-model-node-selector", "--output-dir", str(out))
        time.sleep(1.5)
        assert process.poll() is None and snapshot(out) == before
    stdout, stderr = process.communicate(timeout=TIMEOUT)
    assert (process.returncode, stdout) == (0, ""), stderr
    assert stderr.splitlines()[0] == (f"info: {out.parent / '.out.omerender-lock'}: another omerender render is "
                                      "writing this directory; waiting for it [waiting-for-lock]")
    assert snapshot(out) != before and "nodeSelector" not in (out / DEPLOYMENT).read_text()
    assert not (out.parent / ".out.omerender-lock").exists()  # removed once the render let go of it


def test_two_concurrent_renders_leave_one_whole_render(tmp_path):
    inputs = _many_isvcs(tmp_path, 60)
    expected = {}
    for flags in ((), ("--no-model-node-selector",)):
        solo = tmp_path / f"solo{len(flags)}"
        assert omerender("render", str(inputs), *flags, "--output-dir", str(solo)).returncode == 0
        expected[flags] = snapshot(solo)
    out = tmp_path / "out"
    first = start("render", str(inputs), "--output-dir", str(out))
    second = start("render", str(inputs), "--no-model-node-selector", "--output-dir", str(out))
    for process in (first, second):
        stdout, stderr = process.communicate(timeout=TIMEOUT)
        assert (process.returncode, stdout) == (0, ""), stderr
    assert snapshot(out) in list(expected.values())


# ---------------------------------------------------------------- check

def test_check_refuses_a_symlinked_file_and_never_prints_its_content(tmp_path):
    out = rendered_once(tmp_path)
    secret = tmp_path / "secrets.env"
    secret.write_text("TOKEN=hunter2\n")
    (out / DEPLOYMENT).unlink()
    (out / DEPLOYMENT).symlink_to(secret)
    (out / "leak.yaml").symlink_to(secret)
    done = omerender("check", str(QUICKSTART), str(out))
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.splitlines()[-1] == (
        f"error: {out / 'leak.yaml'}: a symbolic link in the output directory: omerender never follows or "
        "replaces links there; remove it (or render into another directory)")
    assert "hunter2" not in done.stderr


def test_check_refuses_a_fifo_without_hanging(tmp_path):
    out = rendered_once(tmp_path)
    (out / DEPLOYMENT).unlink()
    os.mkfifo(out / DEPLOYMENT)
    done = omerender("check", str(QUICKSTART), str(out))
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.splitlines()[-1].startswith(f"error: {out / DEPLOYMENT}: not a regular file")


def test_check_of_a_file_is_an_error(tmp_path):
    file = tmp_path / "afile"
    file.write_text("x\n")
    done = omerender("check", str(QUICKSTART), str(file))
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.splitlines()[-1] == (f"error: {file}: is not a directory (omerender never follows a link "
                                            "to one)")


# ---------------------------------------------------------------- render skips its own output

def test_render_with_no_path_in_a_flux_repo_root_skips_its_own_output(tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(QUICKSTART, repo / "omedeploy")
    assert omerender("render", "omedeploy", "--output-dir", "rendered", cwd=repo).returncode == 0
    alone = omerender("render", "omedeploy", cwd=repo)
    done = omerender("render", cwd=repo)
    assert (done.returncode, done.stdout) == (0, alone.stdout)
    assert done.stderr.splitlines()[0] == (f"info: ./rendered: skipped: `omerender render --output-dir` wrote this directory "
                                           f"(it holds {MARKER}); its objects are output, not input [rendered-dir-skipped]")
    assert done.stderr.splitlines()[1:] == [line.replace(" omedeploy/", " ./omedeploy/")
                                            for line in alone.stderr.splitlines()]
    direct = omerender("render", "rendered", cwd=repo)
    assert (direct.returncode, direct.stdout) == (0, "")
    assert direct.stderr.splitlines() == [f"info: rendered: skipped: `omerender render --output-dir` wrote this directory "
                                          f"(it holds {MARKER}); its objects are output, not input [rendered-dir-skipped]"]


def test_a_record_listing_paths_outside_dir_removes_nothing_there(tmp_path):
    out = rendered_once(tmp_path)
    outside = tmp_path / "work" / "x.yaml"
    outside.write_text("kept\n")
    record = out / MARKER
    record.write_text(record.read_text() + f"- ../x.yaml\n- {outside}\n- llama-demo/../../x.yaml\n")
    done = omerender("render", str(QUICKSTART), "--output-dir", str(out))
    assert done.returncode == 0, done.stderr
    assert outside.read_text() == "kept\n"
    assert "x.yaml" not in record.read_text()


def test_an_empty_output_dir_argument_is_refused(tmp_path):
    assert_refused(omerender("render", str(QUICKSTART), "--output-dir", "", cwd=tmp_path),
                   "error: --output-dir needs a directory name (for example --output-dir rendered/)")
    assert_refused(omerender("render", str(QUICKSTART), "--output-dir", "/"),
                   "error: /: cannot render into this path: name a directory (for example rendered/)")


def test_dir_under_a_linked_parent_the_user_named_is_written(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    done = omerender("render", str(QUICKSTART), "--output-dir", str(tmp_path / "link" / "out"))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "real" / "out" / DEPLOYMENT).is_file()


# ---------------------------------------------------------------- paths judged by where they resolve (issue 24)

def linked_out(tmp_path: Path) -> tuple[Path, Path]:
    """A repository whose ``deploy`` leads to ``../outside``; outside holds a render with a secret in it."""
    outside = tmp_path / "outside"
    outside.mkdir()
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "deploy").symlink_to("../outside")
    return repo, outside


@pytest.mark.parametrize("spelling", ["deploy/rendered", "deploy/rendered/", "./deploy/rendered",
                                      "deploy/./rendered/."])
def test_render_o_never_writes_through_a_parent_link_leading_out(tmp_path, spelling):
    repo, outside = linked_out(tmp_path)
    done = omerender("render", str(QUICKSTART), "--output-dir", spelling, cwd=repo)
    assert_refused(done, f"error: deploy/rendered: deploy is a symbolic link to {outside}, outside "
                         f"{repo}; omerender never writes through a link that leads out of the directory holding it")
    assert snapshot(outside) == {}


def test_render_o_through_a_parent_link_inside_its_directory_is_written(tmp_path):
    repo = tmp_path / "repo"
    (repo / "real").mkdir(parents=True)
    (repo / "deploy").symlink_to("real")
    done = omerender("render", str(QUICKSTART), "--output-dir", "deploy/rendered/", cwd=repo)
    assert done.returncode == 0, done.stderr
    assert (repo / "real" / "rendered" / DEPLOYMENT).is_file()


@pytest.mark.parametrize("spelling", ["rendered/", "rendered/.", "./rendered//"])
def test_check_never_reads_a_rendered_dir_that_is_a_link_however_spelled(tmp_path, spelling):
    repo, outside = linked_out(tmp_path)
    out = rendered_once(tmp_path)
    (out / DEPLOYMENT).write_text("TOKEN=hunter2\n")
    (repo / "rendered").symlink_to(out)
    done = omerender("check", str(QUICKSTART), spelling, cwd=repo)
    assert_refused(done, f"error: {spelling}: is not a directory (omerender never follows a link to one)")


def test_check_never_reads_a_rendered_dir_under_a_parent_link_leading_out(tmp_path):
    repo, outside = linked_out(tmp_path)
    shutil.copytree(rendered_once(tmp_path), outside / "rendered")
    (outside / "rendered" / DEPLOYMENT).write_text("TOKEN=hunter2\n")
    done = omerender("check", str(QUICKSTART), "deploy/rendered/", cwd=repo)
    assert_refused(done, f"error: deploy/rendered/: deploy is a symbolic link to {outside}, outside {repo}; "
                         "omerender reads only the files it is given")


def test_check_never_reads_an_input_dir_that_links_out(tmp_path):
    repo, outside = linked_out(tmp_path)
    shutil.copytree(QUICKSTART, outside / "in")
    (outside / "in" / "secret.yaml").write_text("apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: "
                                                "default}\nstringData: {token: hunter2}\n")
    (repo / "omedeploy").symlink_to("../outside/in")
    done = omerender("check", "omedeploy/", str(rendered_once(tmp_path)), cwd=repo)
    assert_refused(done, f"error: omedeploy/: symbolic link to {outside / 'in'}, outside {repo}; omerender reads "
                         "only the files it is given")


def test_check_reads_its_own_record_as_the_parse_does(tmp_path):
    """check compares the record with the one it would write and, where they are the same text, takes its list
    of files from what it writes instead of parsing it: the same set the parse gives, and a record edited by a
    byte is parsed (and its extra entry is a file check reports as stale)."""
    from omerender.gitops import outdir
    out = rendered_once(tmp_path)
    tree = outdir.scan(str(out))
    text = (out / MARKER).read_text()
    files = yaml.safe_load(text)["files"]
    expected = {name: "" for name in files} | {MARKER: text}
    assert outdir.recorded(str(out), tree, expected) == outdir.recorded(str(out), tree) == set(files)
    (out / "old.yaml").write_text("kind: X\n")
    (out / MARKER).write_text(text.rstrip("\n") + "\n- old.yaml\n")
    tree = outdir.scan(str(out))
    assert outdir.recorded(str(out), tree, expected) == outdir.recorded(str(out), tree) == {*files, "old.yaml"}
    done = omerender("check", str(QUICKSTART), str(out))
    assert done.returncode == 1
    assert f"--- {out}/old.yaml\n+++ /dev/null\n@@ -1 +0,0 @@\n-kind: X\n" in done.stdout


def test_check_reads_a_file_of_any_size_whole(tmp_path):
    """read_regular reads a file without a buffered file object: every byte up to the limit, an error past it."""
    from omerender.gitops import outdir
    for size in (0, 1, 4095, 4096, 65537, 1 << 20):
        path = tmp_path / f"f{size}"
        path.write_bytes(b"a" * size)
        assert outdir.read_regular(str(path), str(path)) == "a" * size
    assert outdir.read_regular(str(path), str(path), limit=1 << 20) == "a" * (1 << 20)
    with pytest.raises(outdir.OmeError, match="larger than 0 MiB"):
        outdir.read_regular(str(path), str(path), limit=(1 << 20) - 1)
