"""Issue 5: the pinning scenario through the CLI — lock, change the runtime, render (pinned service unchanged,
drift warned), roll forward, render (changed)."""
import shutil

import yaml

from conftest import FIXTURES, run_cli


def _setup(tmp_path):
    folder = tmp_path / "repo"
    shutil.copytree(FIXTURES / "worked-example", folder)
    docs = list(yaml.safe_load_all((folder / "inputs.yaml").read_text()))
    docs[2]["spec"]["runtime"]["autoSync"] = False
    (folder / "inputs.yaml").write_text(yaml.safe_dump_all(docs, sort_keys=False))
    return folder, docs


def _image(run):
    return run.find("Deployment", "llama-3-2-3b-instruct-engine")["spec"]["template"]["spec"]["containers"][0]["image"]


def test_lock_change_render_roll_forward(tmp_path):
    folder, docs = _setup(tmp_path)
    assert run_cli("lock", "update", str(folder)).code == 0
    lock_text = (folder / "omerender.lock.yaml").read_text()
    assert "kind: RuntimeLock" in lock_text
    before = run_cli("render", str(folder))
    assert before.code == 0, before.stderr
    assert not [o for o in before.objects if o["kind"] == "RuntimeLock"]
    old_image = _image(before)

    docs[1]["spec"]["engineConfig"]["runner"]["image"] = "docker.io/lmsysorg/sglang:v0.6.0"
    (folder / "inputs.yaml").write_text(yaml.safe_dump_all(docs, sort_keys=False))
    pinned = run_cli("render", str(folder))
    assert pinned.code == 0
    assert _image(pinned) == old_image
    assert any("RuntimeDrifted (RevisionMismatch): pinned " in line and
               "live spec differs; bump ome.io/runtime-sync annotation to advance" in line for line in pinned.lines)
    assert pinned.stdout == before.stdout

    assert run_cli("render", "--locked", str(folder)).code == 0  # a held pin is not a stale lock

    docs[2]["metadata"]["annotations"] = {"ome.io/runtime-sync": "2026-12-02"}
    (folder / "inputs.yaml").write_text(yaml.safe_dump_all(docs, sort_keys=False))
    token = run_cli("render", str(folder))
    assert _image(token) == old_image
    assert any('ome.io/runtime-sync "2026-12-02" is new; run "omerender lock update" to advance from' in line
               for line in token.lines)
    stale = run_cli("render", "--locked", str(folder))
    assert stale.code == 1 and stale.stdout == ""
    assert any('omerender.lock.yaml is out of date' in line for line in stale.lines)

    assert run_cli("lock", "update", str(folder)).code == 0
    after = run_cli("render", "--locked", str(folder))
    assert after.code == 0, after.stderr
    assert _image(after) == "docker.io/lmsysorg/sglang:v0.6.0"


def test_advance_flag_rolls_forward(tmp_path):
    folder, docs = _setup(tmp_path)
    run_cli("lock", "update", str(folder))
    docs[1]["spec"]["engineConfig"]["runner"]["image"] = "docker.io/lmsysorg/sglang:v0.6.0"
    (folder / "inputs.yaml").write_text(yaml.safe_dump_all(docs, sort_keys=False))
    assert run_cli("lock", "update", "--advance", "llama-demo/llama-3-2-3b-instruct", str(folder)).code == 0
    assert _image(run_cli("render", str(folder))) == "docker.io/lmsysorg/sglang:v0.6.0"


def test_lock_is_not_rewritten_when_nothing_changed(tmp_path):
    folder, _ = _setup(tmp_path)
    run_cli("lock", "update", str(folder))
    lock = folder / "omerender.lock.yaml"
    stamp = lock.stat().st_mtime_ns
    text = lock.read_text()
    assert run_cli("lock", "update", str(folder)).code == 0
    assert lock.stat().st_mtime_ns == stamp and lock.read_text() == text
