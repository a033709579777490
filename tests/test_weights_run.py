"""--model-weights download, run: the download Job's own container command (from the rendered YAML) against a
local fake Hugging Face Hub leaves the model's files where the serving pods mount them, and the pods' wait step
holds until then and passes after (docs/how-to/model-weights.md)."""
from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import CATALOG, render_objects

TINY = CATALOG / "modelconfig" / "tiny-random-PhiModel"
TOKEN = "hf_weights_test_token"
SECRET_VALUE = {"secretKeyRef": {"name": "hf-token", "key": "token"}}
COMMIT = "c" * 40


class FakeHub:
    """A repository served only with the right token, at any revision; what was asked is kept."""

    def __init__(self, repo: str):
        self.repo = repo
        self.files = {p.name: p.read_bytes() for p in TINY.iterdir()}
        self.revisions: list[str] = []
        self.refused = 0


def handler_for(hub: FakeHub):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _send(self, status: int, body: bytes = b"", headers: tuple = ()):
            self.send_response(status)
            for key, value in headers:
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def do_HEAD(self):
            self.do_GET()

        def do_GET(self):
            repo = re.escape(hub.repo)
            info = re.match(rf"^/api/models/{repo}/revision/([^/?]+)", self.path)
            tree = re.match(rf"^/api/models/{repo}/tree/{COMMIT}", self.path)
            resolve = re.match(rf"^/{repo}/resolve/{COMMIT}/([^?]+)$", self.path)
            if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                hub.refused += 1
                return self._send(401, b"{}", (("X-Error-Code", "RepoNotFound"),))
            if info:
                hub.revisions.append(info.group(1))
                body = {"id": hub.repo, "sha": COMMIT, "siblings": [{"rfilename": n} for n in sorted(hub.files)]}
                return self._send(200, json.dumps(body).encode(), (("Content-Type", "application/json"),))
            if tree:
                body = [{"type": "file", "path": n, "size": len(d), "oid": hashlib.sha1(d).hexdigest()}
                        for n, d in sorted(hub.files.items())]
                return self._send(200, json.dumps(body).encode(), (("Content-Type", "application/json"),))
            if resolve and resolve.group(1) in hub.files:
                data = hub.files[resolve.group(1)]
                return self._send(200, data, (("X-Repo-Commit", COMMIT),
                                              ("ETag", f'"{hashlib.sha1(data).hexdigest()}"')))
            return self._send(404, b"{}", (("X-Error-Code", "EntryNotFound"),))
    return Handler


@pytest.fixture
def hub():
    state = FakeHub("meta-llama/Llama-3.2-3B-Instruct")
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(state))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.endpoint = f"http://127.0.0.1:{server.server_address[1]}"
    yield state
    server.shutdown()
    server.server_close()


def _env(container: dict, root: str, claim_dir, endpoint: str) -> dict:
    """The container's environment with the claim's mount path moved to ``claim_dir`` (in values only) and the
    Secret's token in place of its reference; HF_ENDPOINT points at the fake Hub."""
    env = {}
    for entry in container["env"]:
        if "valueFrom" in entry:
            assert entry["valueFrom"] == SECRET_VALUE
            env[entry["name"]] = TOKEN
        else:
            value = entry["value"]
            env[entry["name"]] = str(claim_dir) + value[len(root):] if value.startswith(root + "/") else value
    return {**env, "HF_ENDPOINT": endpoint, "PATH": os.environ.get("PATH", ""), "HOME": str(claim_dir.parent)}


def _argv(container: dict) -> list[str]:
    assert container["command"][:2] == ["python3", "-c"] and "args" not in container
    return [sys.executable, *container["command"][1:]]  # the local python3 with the installed huggingface_hub


def _mount_root(container: dict, volume: str) -> str:
    (mount,) = [m for m in container["volumeMounts"] if m["name"] == volume]
    assert "subPath" not in mount
    return mount["mountPath"]


def test_the_job_downloads_where_the_pods_mount_and_the_wait_step_holds_until_then(F, hub, tmp_path):
    run = render_objects(list(F.values()), "--model-weights", "download")
    assert run.code == 0, run.stderr
    job = run.find("Job")
    claim_name = run.find("PersistentVolumeClaim")["metadata"]["name"]
    (download,) = job["spec"]["template"]["spec"]["containers"]
    job_volume, tmp_volume = job["spec"]["template"]["spec"]["volumes"]
    assert job_volume["persistentVolumeClaim"] == {"claimName": claim_name}
    assert tmp_volume == {"name": "tmp", "emptyDir": {}}
    pod = run.find("Deployment", "llama-3-2-3b-instruct-engine")["spec"]["template"]["spec"]
    wait = pod["initContainers"][0]
    (pod_volume,) = [v for v in pod["volumes"] if "persistentVolumeClaim" in v]
    assert pod_volume["persistentVolumeClaim"] == {"claimName": claim_name, "readOnly": True}
    (runner_mount,) = [m for m in pod["containers"][0]["volumeMounts"] if m["name"] == pod_volume["name"]]
    claim = tmp_path / "claim"   # stands for the claim's volume, which every container mounts
    claim.mkdir()
    wait_env = _env(wait, _mount_root(wait, pod_volume["name"]), claim, hub.endpoint)

    waiting = subprocess.Popen(_argv(wait), env=wait_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        time.sleep(1.5)
        assert waiting.poll() is None, "the wait step ended before the download"
    finally:
        waiting.kill()
        waiting.communicate()

    done = subprocess.run(_argv(download), env=_env(download, _mount_root(download, "weights"), claim, hub.endpoint),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert hub.revisions == ["main"] and hub.refused == 0
    # the runner sees the claim's subPath at its mountPath, which MODEL_PATH names
    served = claim / runner_mount["subPath"]
    assert {name: (served / name).read_bytes() for name in hub.files} == hub.files
    assert {"name": "MODEL_PATH", "value": runner_mount["mountPath"]} in pod["containers"][0]["env"]

    after = subprocess.run(_argv(wait), env=wait_env, capture_output=True, text=True, timeout=30)
    assert after.returncode == 0, after.stderr
    assert "the model weights are in place" in after.stdout


def test_a_pinned_revision_is_the_one_downloaded_and_a_second_run_downloads_nothing(F, hub, tmp_path):
    F["model"]["spec"]["storage"]["storageUri"] = "hf://meta-llama/Llama-3.2-3B-Instruct@v1.0"
    run = render_objects(list(F.values()), "--model-weights", "download")
    (download,) = run.find("Job")["spec"]["template"]["spec"]["containers"]
    claim = tmp_path / "claim"
    claim.mkdir()
    env = _env(download, _mount_root(download, "weights"), claim, hub.endpoint)
    first = subprocess.run(_argv(download), env=env, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr[-3000:]
    assert hub.revisions == ["v1.0"]
    second = subprocess.run(_argv(download), env=env, capture_output=True, text=True, timeout=60)
    assert second.returncode == 0 and "already downloaded" in second.stdout
    assert hub.revisions == ["v1.0"]


def test_without_the_token_the_job_fails_and_writes_no_marker(F, hub, tmp_path):
    run = render_objects(list(F.values()), "--model-weights", "download")
    (download,) = run.find("Job")["spec"]["template"]["spec"]["containers"]
    claim = tmp_path / "claim"
    claim.mkdir()
    env = _env(download, _mount_root(download, "weights"), claim, hub.endpoint)
    env.pop("HF_TOKEN")
    failed = subprocess.run(_argv(download), env=env, capture_output=True, text=True, timeout=120)
    assert failed.returncode != 0 and hub.refused > 0
    assert env["OMERENDER_MARKER"].startswith(str(claim) + "/")
    assert not any(p.name.startswith("download-complete") for p in claim.rglob("*"))


# ---------------------------------------------------------------- as the cluster runs it: not root

ROOT = os.geteuid() == 0   # root (CI's container) becomes the rendered users; anyone else is a non-root user already


def _as_user(uid: int, gid: int, groups: tuple[int, ...] = ()):
    """A preexec_fn that becomes ``uid``:``gid`` with ``groups`` (a pod's runAsUser, runAsGroup and fsGroup), under
    the container runtime's default umask; without root, the test's own user stays (it is not root either)."""
    def become():
        if ROOT:
            os.setgroups(list(groups))
            os.setgid(gid)
            os.setuid(uid)
        os.umask(0o022)
    return become


def _reachable(path: str) -> bool:
    """Whether any user may run ``path``: every directory above it searchable by others, the file executable."""
    real = os.path.realpath(path)
    parents = [os.path.dirname(real)]
    while parents[-1] != "/":
        parents.append(os.path.dirname(parents[-1]))
    return os.stat(real).st_mode & 0o001 and all(os.stat(d).st_mode & 0o001 for d in parents)


def _argv_as_others(container: dict) -> tuple[list[str], dict]:
    """The container's command with a python3 any user may run (this interpreter, or the system's of the same
    version where this one is in root's home), and the environment that gives it this one's packages."""
    import site
    import sysconfig
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    found = next((p for p in (sys.executable, f"/usr/local/bin/{version}", f"/usr/bin/{version}")
                  if os.path.exists(p) and _reachable(p)), None)
    assert found, f"no {version} that a non-root user may run"
    packages = os.pathsep.join([*site.getsitepackages(), sysconfig.get_paths()["purelib"]])
    assert all(_reachable(p) or os.path.isdir(p) for p in packages.split(os.pathsep))
    return [found, *container["command"][1:]], {"PYTHONPATH": packages}


def _kubelet_fs_group(path, gid: int) -> None:
    """What the kubelet does to a volume for a pod with fsGroup (pkg/volume/volume_linux.go SetVolumeOwnership):
    the group becomes ``gid``, group read and write, and directories setgid so new files keep the group."""
    os.chown(path, -1, gid if ROOT else os.getegid())
    os.chmod(path, 0o2775)


@pytest.fixture
def shared_dir():
    """A directory every user can reach (pytest's tmp_path is root's alone): the node's view of the volumes."""
    import shutil
    import tempfile
    base = tempfile.mkdtemp(prefix="omerender-weights-")
    os.chmod(base, 0o755)
    yield __import__("pathlib").Path(base)
    shutil.rmtree(base, ignore_errors=True)


def test_the_job_runs_as_its_non_root_user_and_the_serving_pods_read_what_it_wrote(F, hub, shared_dir):
    run = render_objects(list(F.values()), "--model-weights", "download")
    assert run.code == 0, run.stderr
    job_pod = run.find("Job")["spec"]["template"]["spec"]
    security = job_pod["securityContext"]
    uid, gid, fs_group = security["runAsUser"], security["runAsGroup"], security["fsGroup"]
    assert uid != 0 and security["runAsNonRoot"] is True
    (download,) = job_pod["containers"]
    claim = shared_dir / "claim"   # as the provisioner makes it: root's, not writable by others
    claim.mkdir(mode=0o755)
    _kubelet_fs_group(claim, fs_group)
    tmp = shared_dir / "tmp"       # the emptyDir at /tmp
    tmp.mkdir(mode=0o777)
    os.chmod(tmp, 0o1777)
    assert {"name": "HOME", "value": "/tmp"} in download["env"]
    env = {**_env(download, _mount_root(download, "weights"), claim, hub.endpoint), "HOME": str(tmp),
           "TMPDIR": str(tmp)}
    argv, extra = _argv_as_others(download)
    done = subprocess.run(argv, env={**env, **extra}, capture_output=True, text=True, timeout=120,
                          preexec_fn=_as_user(uid, gid, (fs_group,)))
    assert done.returncode == 0, done.stderr[-3000:]
    written = list(claim.rglob("*"))
    owner = (uid, fs_group) if ROOT else (os.geteuid(), os.getegid())
    assert written and all((p.stat().st_uid, p.stat().st_gid) == owner for p in written)

    pod = run.find("Deployment", "llama-3-2-3b-instruct-engine")["spec"]["template"]["spec"]
    wait = pod["initContainers"][0]
    wait_security = wait["securityContext"]
    assert not pod.get("securityContext")   # the serving pod runs as its image says; the wait step as it sets
    (runner_mount,) = [m for m in pod["containers"][0]["volumeMounts"] if m.get("subPath") == "model"]
    served = claim / runner_mount["subPath"]
    # the wait step, as its own user (no fsGroup in the serving pod), sees the marker
    wait_env = _env(wait, _mount_root(wait, runner_mount["name"]), claim, hub.endpoint)
    argv, extra = _argv_as_others(wait)
    waited = subprocess.run(argv, env={**wait_env, **extra}, capture_output=True, text=True, timeout=30,
                            preexec_fn=_as_user(wait_security["runAsUser"], wait_security["runAsGroup"]))
    assert waited.returncode == 0 and "the model weights are in place" in waited.stdout, waited.stderr
    # the serving container: the image's user (root in the catalog's images) or any other user, in no shared group
    for reader in ((0, 0), (54321, 54321)) if ROOT else ((os.geteuid(), os.getegid()),):
        read = subprocess.run([argv[0], "-c", "import os, sys; root = sys.argv[1]; print(sorted("
                               "(os.path.relpath(os.path.join(d, f), root), len(open(os.path.join(d, f), 'rb')"
                               ".read())) for d, _, fs in os.walk(root) for f in fs if '.cache' not in d))",
                               str(served)], capture_output=True, text=True, timeout=30,
                              preexec_fn=_as_user(*reader))
        assert read.returncode == 0, read.stderr
        assert read.stdout.strip() == str(sorted((name, len(data)) for name, data in hub.files.items()))
