"""`omerender build` bounded: no base from another repository on this machine (whatever the spelling
kustomize accepts), kustomize stopped after a time limit, and the staged copy removed when a signal stops
the build. Run through the real CLI, the real kustomize and git; a slow fake kustomize stands in where
kustomize must not finish."""
from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import run_cli
from test_safe_build import repo  # noqa: F401  the fixture: a Git work tree holding fixtures/kustomize
from omerender.gitops.remote import LOCAL, fetched
from omerender.yamlio import limits

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "fixtures" / "kustomize"
SECRET = "apiVersion: v1\nkind: Secret\nmetadata: {name: other-secret}\nstringData: {token: hunter2}\n"
FIX = ("copy what it holds into the repository and name it by a relative path, or name a repository over the "
       "network (https://host/org/repo, git@host:org/repo)")
FILE_WHY = "file:// names a directory on this machine"
PATH_WHY = "git reads a URL with no :// and no colon before its first slash as a directory on this machine"
TIMEOUT_FIX = ("a kustomization that needs longer can have it with omerender build --timeout SECONDS or "
               "OMERENDER_BUILD_TIMEOUT (on Argo CD's plugin sidecar, together with the repo-server's deadline, 60 s by "
               "default: controller.repo.server.timeout.seconds and server.repo.server.timeout.seconds in "
               "argocd-cmd-params-cm)")
# Stands in for kustomize: notes its own and its child's process ids, then sleeps in that child.
SLOW_KUSTOMIZE = '#!/bin/sh\nsleep 60 &\necho "$$ $!" > "{pids}"\nwait\n'


def env(extra: dict | None = None, path: str | None = None) -> dict:
    environ = dict(os.environ)
    environ["PATH"] = f"{path + os.pathsep if path else ''}{Path(sys.executable).parent}{os.pathsep}{environ['PATH']}"
    environ.pop("KUSTOMIZE_PLUGIN_HOME", None)
    environ.pop("OMERENDER_BUILD_TIMEOUT", None)
    environ.pop("OMERENDER_BUILD_REMOTE", None)
    environ.pop("ARGOCD_EXEC_TIMEOUT", None)
    return {**environ, **(extra or {})}


def omerender(*args: str, cwd: Path, extra: dict | None = None, path: str | None = None):
    return subprocess.run([sys.executable, "-m", "omerender.cli", *args], capture_output=True, text=True,
                          env=env(extra, path), cwd=cwd, check=False, timeout=120)


@pytest.fixture
def other(tmp_path) -> Path:
    """Another repository on this machine (a real git repository) whose kustomization holds a Secret."""
    other = tmp_path / "other"
    (other / "base").mkdir(parents=True)
    (other / "base" / "secret.yaml").write_text(SECRET)
    (other / "base" / "kustomization.yaml").write_text("resources: [secret.yaml]\n")
    (other / "kustomization.yaml").write_text("resources: [base]\n")
    git = ["git", "-C", str(other), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-q", "-m", "secret"]):
        subprocess.run(git + args, check=True, capture_output=True)
    return other


def add_resource(repo: Path, entry: str, field: str = "resources", where: str = "overlays/dev") -> Path:
    kustomization = repo / "kustomize" / where / "kustomization.yaml"
    text = kustomization.read_text()
    if f"\n{field}:\n" in text:
        text = text.replace(f"\n{field}:\n", f"\n{field}:\n  - {entry}\n")
    else:
        text += f"{field}:\n  - {entry}\n"
    kustomization.write_text(text)
    return kustomization


# ---------------------------------------------------------------- bases from this machine

LOCAL_SPELLINGS = ["file://{other}", "file://{other}?ref=main", "git::file://{other}", "FILE://{other}",
                   "GIT::File://{other}//base?ref=main", "file://{other}.git", "git::file://{other}?version=main"]


@pytest.mark.parametrize("spelling", LOCAL_SPELLINGS)
def test_a_git_repository_on_this_machine_is_refused_as_a_base(repo, other, spelling):
    entry = spelling.format(other=other)
    add_resource(repo, entry)
    done = omerender("build", "kustomize/overlays/dev", cwd=repo)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (f"error: kustomize/overlays/dev/kustomization.yaml: resources entry "
                           f"'{entry}' is a git repository on this machine ({FILE_WHY}), outside the repository; "
                           f"{FIX}\n")


@pytest.mark.parametrize("field", ["components", "transformers", "generators", "validators", "bases"])
def test_a_git_repository_on_this_machine_is_refused_in_every_field_kustomize_fetches(repo, other, field):
    entry = f"git::file://{other}"
    add_resource(repo, entry, field, where="base")
    done = omerender("build", "kustomize/overlays/dev", cwd=repo)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (f"error: kustomize/base/kustomization.yaml: {field} entry '{entry}' is a git "
                           f"repository on this machine ({FILE_WHY}), outside the repository; {FIX}\n")


def test_a_user_at_host_slash_spelling_git_reads_as_a_local_path_is_refused(repo):
    entry = "git@gitlab.example/org/repo"
    add_resource(repo, entry)
    done = omerender("build", "kustomize/overlays/dev", cwd=repo)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (f"error: kustomize/overlays/dev/kustomization.yaml: resources entry "
                           f"'{entry}' is a git repository on this machine ({PATH_WHY}), outside the repository; "
                           f"{FIX}\n")


def test_a_bare_absolute_path_is_refused_with_the_fix(repo, other):
    add_resource(repo, str(other))
    done = omerender("build", "kustomize/overlays/dev", cwd=repo)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (f"error: kustomize/overlays/dev/kustomization.yaml: resources entry "
                           f"'{other}' is an absolute path; use a path relative to the kustomization\n")


def test_a_network_base_that_git_redirects_to_this_machine_is_refused_by_git(repo, other):
    """A remote over the network keeps reaching kustomize; whatever git would then read from this machine
    (here an https URL rewritten to a local path, as a nested remote or a submodule could name one) is
    refused by git, so no other repository's objects come out."""
    add_resource(repo, "https://git.example/org/other//base?ref=main")
    rewrite = {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": f"url.{other.parent}/.insteadOf",
               "GIT_CONFIG_VALUE_0": "https://git.example/org/"}
    done = omerender("build", "kustomize/overlays/dev", cwd=repo,
                     extra={**rewrite, "GIT_ALLOW_PROTOCOL": "https:file"})
    assert (done.returncode, done.stdout) == (1, "")
    assert "transport 'file' not allowed" in done.stderr
    assert done.stderr.endswith("error: kustomize build kustomize/overlays/dev failed (exit 1)\n")
    assert "hunter2" not in done.stderr


def test_remote_bases_can_be_turned_off(repo):
    add_resource(repo, "https://github.com/org/repo//base?ref=v1")
    expected = ("error: kustomize/overlays/dev/kustomization.yaml: 'https://github.com/org/repo//base?ref=v1' is a "
                "remote base, and remote bases are off (OMERENDER_BUILD_REMOTE=off or --no-remote); copy it into "
                "the repository and name it by a relative path\n")
    for done in (omerender("build", "kustomize/overlays/dev", "--no-remote", cwd=repo),
                 omerender("build", "kustomize/overlays/dev", cwd=repo, extra={"OMERENDER_BUILD_REMOTE": "off"})):
        assert (done.returncode, done.stdout, done.stderr) == (1, "", expected)
    done = omerender("build", "kustomize/overlays/dev", cwd=repo, extra={"OMERENDER_BUILD_REMOTE": "no"})
    assert (done.returncode, done.stdout, done.stderr) == (
        1, "", 'error: OMERENDER_BUILD_REMOTE must be on or off, got "no"\n')


def test_a_missing_path_that_would_leave_the_staged_copy_is_refused(tmp_path):
    """The staged copy lies elsewhere than the repository: a path missing here must not lead, there, to
    another directory on this machine."""
    repo = tmp_path / "a" / "b" / "c" / "repo"
    shutil.copytree(FIXTURE, repo / "kustomize")
    (repo / ".git").mkdir()
    staging = tmp_path / "t"
    staging.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.yaml").write_text(SECRET)
    (outside / "kustomization.yaml").write_text("resources: [secret.yaml]\n")
    for ups in (5, 6):  # the staged overlay, in the old layout and in the new one, is that deep below tmp_path
        entry = "../" * ups + "outside"
        kustomization = repo / "kustomize" / "overlays" / "dev" / "kustomization.yaml"
        kustomization.write_text((FIXTURE / "overlays" / "dev" / "kustomization.yaml").read_text())
        add_resource(repo, entry)
        done = omerender("build", "kustomize/overlays/dev", cwd=repo, extra={"TMPDIR": str(staging)})
        leads = os.path.normpath(repo / "kustomize" / "overlays" / "dev" / entry)
        assert (done.returncode, done.stdout) == (1, "")
        assert done.stderr == (f"error: kustomize/overlays/dev/kustomization.yaml: '{entry}' leads to {leads}, "
                               f"outside the repository {repo}; omerender builds only what is inside it (the Git "
                               f"work tree holding DIR, else the working directory; --root DIR widens it)\n")


# ---------------------------------------------------------------- kustomize's time limit

def slow_kustomize(tmp_path: Path) -> tuple[str, Path]:
    bin_dir = tmp_path / "slow-bin"
    bin_dir.mkdir()
    pids = tmp_path / "kustomize.pids"
    script = bin_dir / "kustomize"
    script.write_text(SLOW_KUSTOMIZE.format(pids=pids))
    script.chmod(0o755)
    return str(bin_dir), pids


def gone(pids: Path) -> bool:
    """Whether the fake kustomize and its child have ended (a zombie awaiting its reaper counts as ended)."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        alive = []
        for pid in pids.read_text().split():
            try:
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except FileNotFoundError:
                continue
            alive += [pid] if state != "Z" else []
        if not alive:
            return True
        time.sleep(0.1)
    return False


def test_kustomize_is_stopped_after_the_time_limit(repo, tmp_path):
    path, pids = slow_kustomize(tmp_path)
    started = time.monotonic()
    done = omerender("build", "kustomize/overlays/dev", "--timeout", "2", cwd=repo, path=path)
    assert time.monotonic() - started < 20
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (f"error: kustomize build kustomize/overlays/dev did not finish within 2 s and was "
                           f"stopped; {TIMEOUT_FIX}\n")
    assert gone(pids)


def test_the_time_limit_comes_from_the_environment_and_the_flag_wins(repo, tmp_path):
    path, pids = slow_kustomize(tmp_path)
    done = omerender("build", "kustomize/overlays/dev", cwd=repo, path=path,
                     extra={"OMERENDER_BUILD_TIMEOUT": "1.5"})
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith("error: kustomize build kustomize/overlays/dev did not finish within 1.5 s")
    done = omerender("build", "kustomize/overlays/dev", "--timeout", "1", cwd=repo, path=path,
                     extra={"OMERENDER_BUILD_TIMEOUT": "1000"})
    assert done.stderr.startswith("error: kustomize build kustomize/overlays/dev did not finish within 1 s")
    assert gone(pids)


def test_argo_cds_exec_timeout_sets_the_default_limit_below_it(repo, tmp_path):
    path, pids = slow_kustomize(tmp_path)
    done = omerender("build", "kustomize/overlays/dev", cwd=repo, path=path, extra={"ARGOCD_EXEC_TIMEOUT": "4s"})
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith("error: kustomize build kustomize/overlays/dev did not finish within 2 s")
    assert gone(pids)


def test_a_real_build_finishes_within_the_default_limit(repo):
    done = omerender("build", "kustomize/overlays/dev", cwd=repo)
    assert done.returncode == 0, done.stderr
    assert "kind: Deployment" in done.stdout


@pytest.mark.parametrize("value", ["0", "-3", "soon", "nan", "inf", "1\nerror: all good"])
def test_a_bad_time_limit_is_an_error(repo, value):
    shown = value.replace("\n", "\\n")
    done = omerender("build", "kustomize/overlays/dev", "--timeout", value, cwd=repo)
    assert (done.returncode, done.stdout, done.stderr) == (
        1, "", f'error: --timeout must be a number of seconds above 0, got "{shown}"\n')
    done = omerender("build", "kustomize/overlays/dev", cwd=repo, extra={"OMERENDER_BUILD_TIMEOUT": value})
    assert (done.returncode, done.stdout, done.stderr) == (
        1, "", f'error: OMERENDER_BUILD_TIMEOUT must be a number of seconds above 0, got "{shown}"\n')


@pytest.mark.parametrize("limit, value", [("MAX_FILES", 3), ("MAX_TOTAL_BYTES", 1500)])
def test_the_staged_input_is_budgeted_before_kustomize_starts(repo, tmp_path, monkeypatch, limit, value):
    """Files and bytes of every kustomization directory the build reaches, all together."""
    path, pids = slow_kustomize(tmp_path)
    monkeypatch.setenv("PATH", f"{path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.chdir(repo)
    monkeypatch.setattr(limits, limit, value)
    done = run_cli("build", "kustomize/overlays/dev")
    budget = f"{limits.MAX_FILES:,} files or {limits.MAX_TOTAL_BYTES // limits.MIB} MiB"
    assert (done.code, done.stdout) == (1, "")
    assert done.stderr.startswith("error: kustomize/")
    assert done.stderr.endswith(f": the kustomization directories hold more than {budget}\n")
    assert not pids.exists()


# ---------------------------------------------------------------- stopped by a signal

def stop_build(argv: list[str], cwd: Path, environ: dict, pids: Path, signum: int) -> subprocess.CompletedProcess:
    """Start ``argv``, wait until the fake kustomize runs, send ``signum``; what the build then did."""
    process = subprocess.Popen(argv, cwd=cwd, env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not (pids.exists() and pids.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signum)
    stdout, stderr = process.communicate(timeout=30)
    return subprocess.CompletedProcess(argv, process.returncode, stdout, stderr)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_the_build_and_removes_its_staged_copy(repo, tmp_path, signum):
    path, pids = slow_kustomize(tmp_path)
    staging = tmp_path / "t"
    staging.mkdir()
    done = stop_build([sys.executable, "-m", "omerender.cli", "build", "kustomize/overlays/dev"], repo,
                      env({"TMPDIR": str(staging)}, path), pids, signum)
    name = signal.Signals(signum).name
    assert (done.returncode, done.stdout) == (128 + signum, "")
    assert done.stderr == f"error: stopped by {name}; the build's temporary copy was removed\n"
    assert list(staging.iterdir()) == []
    assert gone(pids)


def test_kustomize_dies_with_a_build_killed_outright(repo, tmp_path):
    """SIGKILL can't be caught (older Argo CD versions stop a plugin so): kustomize must not outlive the build."""
    path, pids = slow_kustomize(tmp_path)
    done = stop_build([sys.executable, "-m", "omerender.cli", "build", "kustomize/overlays/dev"], repo,
                      env(None, path), pids, signal.SIGKILL)
    assert done.returncode == -signal.SIGKILL
    kustomize = pids.read_text().split()[0]
    pids.write_text(kustomize)
    assert gone(pids)


# ---------------------------------------------------------------- omerender's remote rule is kustomize's

SCHEMES = ["", "git::", "GIT::"]
TRANSPORTS = ["", "file://", "FILE://", "ssh://", "SSH://", "file:"]
USERS = ["", "git@", "alice@", "1a@"]
HOSTS = ["", "github.com", "GitHub.com", "gitlab.example", ".", "tmp"]
SEPARATORS = [":", "/", "", "//"]
PATHS = ["org/repo", "repo", "org/repo//sub", "org/repo.git/sub", "_git/repo/sub", "../../x", "a/../../b", "a/b/../..",
         "org/repo/"]
QUERIES = ["", "?ref=main", "?version=v1&timeout=3"]


def kustomize_fetches(entry: str, where: Path) -> str | None:
    """What the real kustomize does with a ``resources:`` entry: the git transport it would fetch it with
    (``file`` for this machine's disk), or None when it takes it as a path. git may use no transport at all,
    so it fails at once, naming the one it was refused."""
    (where / "kustomization.yaml").write_text(f"resources:\n  - {json.dumps(entry)}\n")
    done = subprocess.run([shutil.which("kustomize"), "build", str(where)], capture_output=True, text=True,
                          env={**env(), "GIT_ALLOW_PROTOCOL": ""}, timeout=60, check=False)
    fetch = re.search(r"git fetch --depth=1 (\S+) ", done.stderr)
    refused = re.search(r"transport '([^']+)' not allowed", done.stderr)
    if fetch is None:
        return None
    if refused is None:  # git gave up before choosing a transport: a file:// URL without a path
        assert fetch.group(1).lower().startswith("file://"), done.stderr
        return "file"
    return refused.group(1)


def test_omerender_takes_an_entry_as_remote_exactly_where_kustomize_does(tmp_path):
    rng = random.Random(24)
    entries = {"".join(rng.choice(part) for part in (SCHEMES, TRANSPORTS, USERS, HOSTS, SEPARATORS, PATHS, QUERIES))
               for _ in range(150)}
    entries |= {"file:///tmp/x", "git@gitlab.example/org/repo", "ssh://x/../../../../y", "me@dir", "gitlab.com/a/b",
                "GitHub.com/a/b", "github.com:a/b", "alice@host:a/b", "file:/tmp/x", "git::git::file:///tmp/x"}
    mismatches = []
    for entry in sorted(entries):
        transport = kustomize_fetches(entry, tmp_path)
        expected = None if transport is None else ("file" if transport == "file" else "network")
        if re.match(r"(?i)(git::)?file://", entry):
            expected = "file"  # refused even where kustomize gives up on it as a repository (then a path)
        got = fetched(entry)
        got = "file" if got in LOCAL else got
        if got != expected:
            mismatches.append((entry, transport, fetched(entry)))
    assert mismatches == [], "\n".join(map(repr, mismatches))
