"""``--messages github`` (issues 40 and 41): every annotation placed (file, line, col, title), infos left out on
request in every front end, and no line any command prints, on stdout or stderr, read by GitHub Actions as a
workflow command it did not mean (a ``::`` line of the repository's, kustomize's, git's or the Hub's text)."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import ROOT, run_cli
from test_argocd import PLUGIN, environment, repo_copy, run_command
from test_krm import config, fn, resource_list, with_paths

QUICKSTART = ROOT / "fixtures" / "quickstart"
GATEWAY = ROOT / "fixtures" / "gateway-api" / "inputs.yaml"
# What a hostile repository writes: a line that stops GitHub reading commands, then a forged annotation.
FORGERY = "x\n::stop-commands::FORGED\n::error title=FORGED::forged\n::warning title=FORGED::forged too"
# ... after spaces, which the runner trims, and with carriage returns, at which it splits lines too
FORGERY_INDENTED = "x\n  ::stop-commands::FORGED\n\t::error title=FORGED::forged"
FORGERY_CR = "x\r::stop-commands::FORGED\r::error title=FORGED::forged"


def executed(log: str) -> list[tuple[str, str, str]]:
    """The workflow commands a GitHub Actions runner runs reading ``log`` (its ActionCommandManager: lines split
    at \\n, \\r and \\r\\n, each trimmed of leading whitespace; ``::stop-commands::TOKEN`` stops it until
    ``::TOKEN::``): (command, properties, data) of each."""
    commands, stopped = [], None
    for line in re.split(r"\r\n|\r|\n", log):
        line = line.lstrip()
        if not line.startswith("::"):
            continue
        end = line.find("::", 2)
        if end < 0:
            continue
        name, _, properties = line[2:end].partition(" ")
        data = line[end + 2:]
        if stopped is not None:
            if name == stopped and not properties:
                stopped = None
            continue
        if name == "stop-commands":
            stopped = data
        commands.append((name, properties, data))
    return commands


def assert_unforged(*logs: str) -> None:
    """No command the runner runs came from the repository: none has FORGED in its name or properties, and no
    stop-commands is the repository's (its token FORGED)."""
    for log in logs:
        for name, properties, data in executed(log):
            assert "FORGED" not in name + properties, (name, properties, data)
            assert not (name == "stop-commands" and "FORGED" in data), data
    assert not re.search(r"(?:\A|[\r\n])\s*::stop-commands::FORGED", "".join(logs)) or all(
        any(n == "stop-commands" for n, _, _ in executed(log)) for log in logs if "FORGED" in log)


def omerender(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env_path = f"{Path(sys.executable).parent}:{ROOT / '.tools' / 'bin'}:/usr/bin:/bin"
    return subprocess.run([sys.executable, "-m", "omerender.cli", *args], capture_output=True, text=True,
                          cwd=cwd or ROOT, env={"PATH": env_path, "HOME": "/tmp", "LANG": "C.UTF-8"},
                          check=False, timeout=120)


def hostile_copy(tmp_path: Path, name: str = "in") -> Path:
    """The quickstart (without its kustomization) whose InferenceService carries the forgery in an annotation."""
    copy = tmp_path / name
    shutil.copytree(QUICKSTART, copy)
    (copy / "kustomization.yaml").unlink()
    isvc = copy / "isvc.yaml"
    isvc.write_text(isvc.read_text().replace(
        "  namespace: llama-demo\n", f"  namespace: llama-demo\n  annotations:\n    note: {json.dumps(FORGERY)}\n", 1))
    return copy


# ---------------------------------------------------------------- the guard itself

def test_a_text_with_a_command_line_is_fenced_with_a_fresh_token():
    from omerender.cli.workflow import fenced
    assert fenced("ok\n  a :: b\n") == "ok\n  a :: b\n"
    for forgery in (FORGERY, FORGERY_INDENTED, FORGERY_CR):
        one, two = fenced(forgery), fenced(forgery)
        token = re.match(r"::stop-commands::([0-9a-f]{32})\n", one).group(1)
        assert one == f"::stop-commands::{token}\n{forgery}\n::{token}::\n"
        assert token not in two
        assert [name for name, _, _ in executed(one)] == ["stop-commands"]


def test_a_line_written_in_pieces_is_judged_whole():
    import io
    from omerender.cli.workflow import Guard
    out = io.StringIO()
    guard = Guard(out)
    for piece in ("a\n  :", ":error title=FORGED::x", "\nb\n"):
        guard.write(piece)
    guard.command("::warning title=ours::y")
    assert_unforged(out.getvalue())
    assert executed(out.getvalue())[-1] == ("warning", "title=ours", "y")


# ---------------------------------------------------------------- each command, fed "::" lines

def test_render_writes_no_command_line_in_its_yaml(tmp_path):
    copy = hostile_copy(tmp_path)
    for flags in ((), ("--messages", "github")):
        run = run_cli("render", "--keep-inputs", *flags, str(copy))
        assert run.code == 0, run.stderr
        assert not [line for line in run.stdout.splitlines() if line.lstrip().startswith("::")]
        isvc = next(o for o in yaml.safe_load_all(run.stdout) if o and o["kind"] == "InferenceService")
        assert isvc["metadata"]["annotations"]["note"] == FORGERY
        assert_unforged(run.stdout, run.stderr)


def test_check_prints_no_forged_command_in_its_diff(tmp_path):
    copy = hostile_copy(tmp_path)
    out = tmp_path / "rendered"
    assert run_cli("render", "--keep-inputs", "--output-dir", str(out), str(copy)).code == 0
    isvc = copy / "isvc.yaml"  # an edit beside the value: the diff's context holds it
    isvc.write_text(isvc.read_text().replace("  annotations:\n", "  annotations:\n    aaa: changed\n"))
    run = run_cli("check", "--keep-inputs", "--messages", "github", str(copy), str(out))
    assert run.code == 1
    assert "+    aaa: changed\n" in run.stdout and "FORGED" in run.stdout
    assert_unforged(run.stdout, run.stderr)


def test_diff_prints_no_forged_command(tmp_path):
    old = hostile_copy(tmp_path, "old")
    new = hostile_copy(tmp_path, "new")
    isvc = new / "isvc.yaml"
    isvc.write_text(isvc.read_text().replace("maxReplicas: 1", "maxReplicas: 2").replace(
        "note: ", f"other: {json.dumps(FORGERY + ' 2')}\n    note: "))
    for output in ("text", "markdown", "json"):
        run = run_cli("diff", "-U", "3", "--keep-inputs", "-o", output, "--messages", "github", str(old), str(new))
        assert run.code == 0, run.stderr
        assert_unforged(run.stdout, run.stderr)


def test_build_fences_what_kustomize_prints(tmp_path):
    app = tmp_path / "app"
    shutil.copytree(QUICKSTART, app)
    (app / "kustomization.yaml").write_text(f"resources:\n- namespace.yaml\n- {json.dumps(FORGERY)}\n")
    done = omerender("build", "--messages", "github", str(app))
    assert done.returncode == 1
    assert "::stop-commands::FORGED" in done.stderr  # kustomize's own words, fenced
    assert_unforged(done.stdout, done.stderr)
    assert executed(done.stderr)[-1][:2] == ("error", "title=omerender")


def test_config_and_explain_print_no_forged_command(tmp_path):
    copy = hostile_copy(tmp_path)
    text = GATEWAY.read_text().replace('"ingressDomain": "example.com"', f'"ingressDomain": {json.dumps(FORGERY)}')
    (copy / "config.yaml").write_text(text.split("\n---\n")[0] + "\n")
    for command in (["config", "--isvc", "llama-3-2-3b-instruct", "-n", "llama-demo"],
                    ["explain", "--isvc", "llama-3-2-3b-instruct", "-n", "llama-demo"]):
        for output in ("json", "table"):
            run = run_cli(*command, "-o", output, "--messages", "github", str(copy))
            assert_unforged(run.stdout, run.stderr)


def test_model_info_prints_no_forged_command(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": FORGERY, "architectures": [FORGERY]}))
    for output in ("yaml", "json"):
        run = run_cli("model-info", "-o", output, "--messages", "github", str(tmp_path))
        assert run.code == 0, run.stderr
        assert yaml.safe_load(run.stdout)["spec"]["modelType"] == FORGERY
        assert_unforged(run.stdout, run.stderr)


def test_the_argocd_plugin_fences_what_kustomize_prints(tmp_path):
    work = repo_copy(tmp_path)
    app = work / "apps" / "plain"
    (app / "kustomization.yaml").write_text(f"resources:\n- namespace.yaml\n- {json.dumps(FORGERY)}\n")
    environ = environment("apps/plain", {"MESSAGES": "github"}, [])
    done = run_command(PLUGIN["spec"]["generate"], app, environ)
    assert done.returncode == 1
    assert "::stop-commands::FORGED" in done.stderr
    assert_unforged(done.stdout, done.stderr)


@pytest.mark.parametrize("args", [["render", "--allow", FORGERY, "."], ["render", "--allow", FORGERY_CR, "."],
                                  ["render", "--allow", "y" * 100_000, "."]])
def test_allow_usage_errors_are_one_bounded_line(args):
    run = run_cli(*args)
    assert run.code == 2
    assert_unforged(run.stdout, run.stderr)
    assert run.stderr.splitlines()[-1].startswith("Error: --allow: unknown message code")
    assert len(run.stderr.splitlines()) == 4 and max(map(len, run.stderr.splitlines())) < 400, run.stderr[:500]


@pytest.mark.parametrize("name", ["STRICT", "ALLOW_EMPTY", "ALLOW", "QUIET", "MESSAGES"])
def test_argocd_parameter_errors_are_one_bounded_line(tmp_path, name):
    work = repo_copy(tmp_path)
    for value in (FORGERY, "y" * 100_000):
        done = run_command(PLUGIN["spec"]["generate"], work / "apps" / "plain",
                           environment("apps/plain", {name: value}, []))
        assert done.returncode == 1
        assert_unforged(done.stdout, done.stderr)
        assert done.stderr.count("\n") == 1 and len(done.stderr) < 400, done.stderr[:500]


# ---------------------------------------------------------------- every annotation placed

def annotations(stderr: str) -> list[dict]:
    return [dict(command=name, **dict(p.split("=", 1) for p in properties.split(",")), text=data)
            for name, properties, data in executed(stderr) if name in ("error", "warning", "notice")]


def placed(stderr: str) -> list[dict]:
    # chart-defaults is about the render as a whole, a ConfigMap the inputs lack, so it names no file: GitHub shows
    # it on the run's summary (and --quiet leaves it out); every other annotation names its place.
    found = [a for a in annotations(stderr) if a.get("title") != "chart-defaults"]
    assert found
    for annotation in found:
        assert {"file", "line", "col", "title"} <= set(annotation), annotation
    return found


def edited(tmp_path: Path, old: str, new: str, file: str = "isvc.yaml") -> Path:
    copy = tmp_path / "in"
    shutil.copytree(QUICKSTART, copy)
    (copy / "kustomization.yaml").unlink()
    (copy / file).write_text((copy / file).read_text().replace(old, new, 1))
    return copy


@pytest.mark.parametrize("old, new, line, col", [
    ("    minReplicas: 1", "    minReplica: 1", "12", "5"),                                  # unknown field
    ("spec:\n", "spec:\n  runtime:\n    name: sglang-llama-3-2-3bb\n", "10", "5"),          # runtime typo
    ("  namespace: llama-demo\n", "  namespace: llama-demo\n  annotations:\n    ome.io/deploymentMode: Multinode\n",
     "9", "5"),                                                                           # annotation value typo
    ("spec:\n", "spec: [\n", "10", "9"),                                                 # a YAML syntax error
])
def test_annotations_name_file_line_column_and_title(tmp_path, old, new, line, col):
    copy = edited(tmp_path, old, new)
    run = run_cli("render", "--messages", "github", str(copy))
    found = placed(run.stderr)
    assert (found[-1]["file"], found[-1]["line"], found[-1]["col"]) == (str(copy / "isvc.yaml"), line, col), found


def test_a_configmap_json_error_is_placed(tmp_path):
    bad = tmp_path / "inputs.yaml"
    bad.write_text(GATEWAY.read_text().replace('"disableIngressCreation": false,', '"disableIngressCreation": false,,'))
    run = run_cli("render", "--messages", "github", str(bad))
    assert run.code == 1
    [error] = placed(run.stderr)
    assert (error["file"], error["line"], error["title"]) == (str(bad), "13", "omerender"), error


def two_leader_worker_sets(tmp_path: Path) -> Path:
    copy = edited(tmp_path, "    maxReplicas: 1\n", "    maxReplicas: 1\n    leader:\n      runner: "
                  "{name: ome-container, image: i}\n    worker:\n      size: 1\n      runner: {name: ome-container, "
                  "image: i}\n")
    text = (copy / "isvc.yaml").read_text()
    (copy / "second.yaml").write_text(text.replace("  name: llama-3-2-3b-instruct\n  namespace", "  name: second\n"
                                                                                            "  namespace", 1))
    return copy


def test_a_warning_about_several_objects_names_the_first(tmp_path):
    copy = two_leader_worker_sets(tmp_path)
    run = run_cli("render", "--messages", "github", str(copy))
    assert run.code == 0, run.stderr
    [shared] = [a for a in placed(run.stderr) if a["title"] == "shared-leader-service"]
    assert (shared["file"], shared["line"], shared["col"]) == (str(copy / "isvc.yaml"), "3", "1")
    assert shared["text"].startswith("InferenceService llama-demo/llama-3-2-3b-instruct: namespace llama-demo gets 2 "
                                     "LeaderWorkerSets (lws-llama-3-2-3b-instruct-engine, lws-second-engine)")


# ---------------------------------------------------------------- infos left out, in every front end

def test_quiet_leaves_out_infos_in_every_command(tmp_path):
    copy = two_leader_worker_sets(tmp_path)
    run = run_cli("render", "--messages", "github", str(copy))
    assert "notice" in [a["command"] for a in annotations(run.stderr)]
    for flags in (["--messages", "github", "-q"], ["--quiet"]):
        run = run_cli("render", *flags, str(copy))
        assert run.code == 0
        assert "::notice" not in run.stderr and "info:" not in run.stderr
        assert "LeaderWorkerSets" in run.stderr
    for command in (["check"], ["config"], ["explain"], ["diff"], ["build"], ["model-info"], ["tree"],
                    ["lock", "update"]):
        assert "-q, --quiet" in run_cli(*command, "--help").stdout, command


def test_the_function_s_quiet_leaves_out_info_results(tmp_path):
    copy = two_leader_worker_sets(tmp_path)
    items = with_paths([yaml.safe_load(p.read_text()) for p in sorted(copy.glob("*.yaml"))])
    for quiet, severities in ((False, {"info", "warning"}), (True, {"warning"})):
        code, out, _ = fn(resource_list(items, config(quiet=quiet)))
        assert code == 0
        assert {r["severity"] for r in out["results"]} == severities


def test_the_argocd_plugin_s_quiet_leaves_out_infos(tmp_path):
    work = repo_copy(tmp_path)
    app = work / "apps" / "plain"
    shutil.rmtree(app)
    shutil.copytree(two_leader_worker_sets(tmp_path), app)
    for parameters, notices in (([], True), ([{"name": "quiet", "string": "true"}], False)):
        environ = environment("apps/plain", {"MESSAGES": "github"}, parameters)
        environ.update(KUBE_API_VERSIONS="", KUBE_VERSION="")  # a cluster that may lack LeaderWorkerSet's CRD
        done = run_command(PLUGIN["spec"]["generate"], app, environ)
        assert done.returncode == 0, done.stderr
        assert ("::notice" in done.stderr) is notices
        assert "title=shared-leader-service" in done.stderr


def test_diff_strict_annotations_keep_their_file(tmp_path):
    copy = edited(tmp_path, "x", "x")
    run = run_cli("diff", "--strict", "--messages", "github", str(copy), str(copy))
    assert run.code == 2
    [warning] = [a for a in annotations(run.stderr) if a["command"] == "warning"]
    assert (warning["file"], warning["line"], warning["title"]) == (str(copy / "isvc.yaml"), "3",
                                                                    "auto-selected-runtime")
    assert warning["text"].startswith("InferenceService llama-demo/llama-3-2-3b-instruct: head: Runtime")


def test_an_object_the_cluster_does_not_serve_is_placed_on_its_input(tmp_path):
    copy = two_leader_worker_sets(tmp_path)
    run = run_cli("render", "--api-versions", "v1,apps/v1,ome.io/v1beta1", "--messages", "github", str(copy))
    assert run.code == 1
    errors = [a for a in placed(run.stderr) if a["command"] == "error"]
    assert [(e["file"], e["line"], e["col"]) for e in errors] == [(str(copy / "isvc.yaml"), "3", "1"),
                                                                   (str(copy / "second.yaml"), "3", "1")]
    assert errors[0]["text"].startswith("LeaderWorkerSet llama-demo/lws-llama-3-2-3b-instruct-engine (of "
                                        "InferenceService llama-3-2-3b-instruct): the cluster doesn't serve")


def test_a_message_quoting_a_long_value_is_bounded(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "z" * 200_000, "architectures": ["ZForCausalLM"]}))
    for flags in ((), ("--messages", "github")):
        run = run_cli("model-info", *flags, str(tmp_path))
        assert run.code == 0, run.stderr[:300]
        [line] = run.printed.splitlines()
        assert 10_000 < len(line) < 10_300 and "characters left out) …" in line, line[-200:]
        assert line.endswith("or set it by hand [model-size-unknown]" if not flags else "or set it by hand")
