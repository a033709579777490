"""Message codes (issue 32, "--strict a team can live with"): every warning and info names a code of
omerender/codes.py, printed after its text; docs/reference/message-codes.md is the table of them; ``--allow CODE``
accepts those warnings under ``--strict`` (KRM ``spec.allow``, Argo CD ``allow``); ``--messages github`` prints GitHub
Actions annotations."""
from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import (CHART_DEFAULTS_CODED, CHART_DEFAULTS_INFO, CHART_DEFAULTS_NOTICE, FIXTURES, ROOT, run_cli,
                      worked_example)
from omerender.codes import CODES
from omerender.errors import Message, Report, strict_error

QUICKSTART = FIXTURES / "quickstart"
AUTO = ("InferenceService llama-demo/llama-3-2-3b-instruct: Runtime sglang-llama-3-2-3b will be auto-selected "
        "for model llama-3-2-3b-instruct")
GENERATOR = ROOT / "scripts" / "message_codes.py"


# ---------------------------------------------------------------- the registry and its table

def test_the_table_is_what_the_script_writes_from_the_registry():
    spec = __import__("importlib.util").util.spec_from_file_location("message_codes", GENERATOR)
    module = __import__("importlib.util").util.module_from_spec(spec)
    spec.loader.exec_module(module)
    committed = (ROOT / "docs" / "reference" / "message-codes.md").read_text()
    assert committed == module.table(), "docs/reference/message-codes.md is stale: run python scripts/message_codes.py"
    for name, code in CODES.items():
        assert f"| `{name}` | {code.severity} |" in committed


def test_the_messages_page_links_the_table():
    messages = (ROOT / "docs" / "reference" / "messages.md").read_text()
    assert "(message-codes.md)" in messages


def test_codes_are_kebab_case_with_a_meaning_and_a_fix():
    for name, code in CODES.items():
        assert re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", name), name
        assert code.severity in ("warning", "info", "warning, info"), name
        assert code.meaning.endswith(".") and code.fix.endswith("."), name


def test_a_warning_or_info_needs_a_code_of_the_registry():
    with pytest.raises(TypeError):
        Report().warn("no code")  # noqa: the test of the missing keyword
    with pytest.raises(ValueError, match="warning without a code of omerender.codes: 'no-such-code'"):
        Message("warning", "text", code="no-such-code")
    with pytest.raises(ValueError):
        Message("info", "text")
    assert Message("error", "errors have none").line() == "error: errors have none"


# ---------------------------------------------------------------- every call site names a code (AST)

def missing_codes(source: str, path: str) -> list[str]:
    """``path:line: ...`` for each warn/info call and each warning/info Message that names no registry code as a
    constant (a helper passing its own ``code`` parameter through is the one exception)."""
    problems = []
    tree = ast.parse(source)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        severity = _severity(node)
        if severity is None:
            continue
        code = next((k.value for k in node.keywords if k.arg == "code"), None)
        if isinstance(code, ast.Constant) and code.value in CODES and severity in CODES[code.value].severity:
            continue
        if isinstance(code, ast.Name) and code.id in _parameters(node, parents):
            continue
        shown = ast.unparse(code) if code is not None else "none"
        problems.append(f"{path}:{node.lineno}: {severity} with code {shown}; give code=\"...\" of "
                        f"omerender/codes.py (a new code is one entry there)")
    return problems


def _severity(call: ast.Call) -> str | None:
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr in ("warn", "info"):
        return "warning" if func.attr == "warn" else "info"
    if isinstance(func, ast.Name) and func.id == "Message":
        first = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "severity"), None)
        if isinstance(first, ast.Constant) and first.value in ("warning", "info"):
            return first.value
    return None


def _parameters(node: ast.AST, parents: dict) -> set[str]:
    while node in parents:
        node = parents[node]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return {a.arg for a in node.args.args + node.args.kwonlyargs}
    return set()


def test_every_warning_and_info_in_the_package_names_a_registry_code():
    problems = []
    for path in sorted((ROOT / "omerender").rglob("*.py")):
        problems += missing_codes(path.read_text(), str(path.relative_to(ROOT)))
    assert problems == []


def test_the_check_names_the_file_and_line_of_a_call_without_a_code():
    source = ('def f(report, ref):\n'
              '    report.warn("new warning", field="spec.x")\n'
              '    report.info("ok", code="pinned")\n'
              '    report.info("wrong severity", code="auto-selected-runtime")\n'
              '    return [Message("warning", "text", ref), Message("error", "fine"),\n'
              '            Message("info", "x", code="no-such-code")]\n')
    assert missing_codes(source, "omerender/new.py") == [
        'omerender/new.py:2: warning with code none; give code="..." of omerender/codes.py (a new code is one '
        'entry there)',
        "omerender/new.py:4: info with code 'auto-selected-runtime'; give code=\"...\" of omerender/codes.py (a new "
        "code is one entry there)",
        'omerender/new.py:5: warning with code none; give code="..." of omerender/codes.py (a new code is one '
        'entry there)',
        "omerender/new.py:6: info with code 'no-such-code'; give code=\"...\" of omerender/codes.py (a new code is "
        "one entry there)"]


# ---------------------------------------------------------------- printed with the message

def test_the_code_ends_the_message_line():
    run = run_cli("render", str(QUICKSTART))
    assert run.code == 0
    assert run.printed.splitlines() == [CHART_DEFAULTS_CODED,
                                        f"warning: {QUICKSTART}/isvc.yaml:3:1: {AUTO} [auto-selected-runtime]"]
    assert run.codes == ["chart-defaults", "auto-selected-runtime"]


# ---------------------------------------------------------------- --allow

def test_the_documented_ci_example_passes_on_the_quickstart():
    run = run_cli("render", "--strict", "--allow", "auto-selected-runtime", str(QUICKSTART))
    assert run.code == 0, run.stderr
    assert run.lines == [CHART_DEFAULTS_INFO, f"warning: {QUICKSTART}/isvc.yaml: {AUTO}"]
    assert run.objects == run_cli("render", str(QUICKSTART)).objects
    messages = (ROOT / "docs" / "reference" / "messages.md").read_text()
    assert "`omerender render --strict --allow auto-selected-runtime fixtures/quickstart` (exit 0)" in messages
    for page in ("how-to/review-a-change.md", "how-to/ci-strict.md"):   # the GitHub Action adds --messages github
        assert ("  command: render\n          args: --strict --allow auto-selected-runtime --quiet deploy/\n"
                in (ROOT / "docs" / page).read_text()), page


def test_allow_accepts_only_the_codes_it_names():
    run = run_cli("render", "--strict", "--allow", "removed-field,pinned", "--allow", "preset-image",
                  str(QUICKSTART))
    assert (run.code, run.stdout) == (1, "")
    assert run.lines == [CHART_DEFAULTS_INFO, f"warning: {QUICKSTART}/isvc.yaml: {AUTO}",
                         "error: 1 warning not allowed (--allow), and --strict makes every warning fail the run"]


def test_an_unknown_code_is_a_usage_error_with_the_near_miss():
    for command in (["render"], ["check", str(QUICKSTART), str(QUICKSTART)], ["build"], ["diff", "a", "b"]):
        run = run_cli(*command, "--strict", "--allow", "auto-selected-runtim", str(QUICKSTART))
        assert run.code == 2, command
        assert ('Error: --allow: unknown message code "auto-selected-runtim"; did you mean '
                '"auto-selected-runtime"?') in run.stderr
    run = run_cli("render", "--allow", "zzz", str(QUICKSTART))
    assert 'Error: --allow: unknown message code "zzz"; docs/reference/message-codes.md lists the codes' in run.stderr


def test_allow_is_on_every_strict_command_and_messages_on_every_printing_command():
    for command in ("render", "check", "build", "diff"):
        shown = run_cli(command, "--help").stdout
        assert "--strict" in shown and "--allow CODE[,CODE...]" in shown, command
    for command in (["render"], ["check"], ["build"], ["diff"], ["config"], ["explain"], ["tree"],
                    ["lock", "update"], ["model-info"]):
        assert "--messages [text|github]" in run_cli(*command, "--help").stdout, command


def test_check_and_diff_accept_allowed_warnings(tmp_path):
    rendered = tmp_path / "rendered"
    assert run_cli("render", str(QUICKSTART), "--output-dir", str(rendered)).code == 0
    assert run_cli("check", "--strict", str(QUICKSTART), str(rendered)).code == 1
    assert run_cli("check", "--strict", "--allow", "auto-selected-runtime", str(QUICKSTART), str(rendered)).code == 0
    assert run_cli("diff", "--strict", str(QUICKSTART), str(QUICKSTART)).code == 2
    run = run_cli("diff", "--strict", "--allow", "auto-selected-runtime", str(QUICKSTART), str(QUICKSTART))
    assert (run.code, run.stderr) == (0, "")


def test_build_accepts_allowed_warnings(tmp_path):
    def build(*flags):
        return subprocess.run([sys.executable, "-m", "omerender.cli", "build", "fixtures/quickstart", *flags],
                              capture_output=True, text=True, cwd=ROOT, check=False)
    assert build("--strict").returncode == 1
    done = build("--strict", "--allow", "auto-selected-runtime")
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [CHART_DEFAULTS_CODED,
                                        f"warning: fixtures/quickstart/isvc.yaml:3:1: {AUTO} [auto-selected-runtime]"]


def test_folded_warnings_are_allowed_by_their_own_codes():
    report = Report()
    for i in range(105):
        report.warn(f"w{i}", code="removed-field")
    for i in range(3):
        report.warn(f"p{i}", code="preset-image")
    assert report.messages[-1].line() == ("warning: 8 more warnings about this object are not shown: omerender "
                                          "prints at most 100 per object [more-messages]")
    assert strict_error(report.messages, "--strict").text == ("108 warnings, and --strict makes every warning fail "
                                                               "the run")
    assert strict_error(report.messages, "--strict", frozenset({"removed-field"})).text == (
        "3 warnings not allowed (--allow), and --strict makes every warning fail the run")
    assert strict_error(report.messages, "--strict", frozenset({"removed-field", "preset-image"})) is None


# ---------------------------------------------------------------- the KRM function and Argo CD

def resource_list(items, spec):
    return yaml.safe_dump({"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items,
                           "functionConfig": {"apiVersion": "omerender.io/v1alpha1", "kind": "OMERender",
                                              "metadata": {"name": "render"}, "spec": spec}}, sort_keys=False)


def quickstart_items():
    return [d for f in sorted(QUICKSTART.glob("*.yaml")) if f.name != "kustomization.yaml" for d in yaml.safe_load_all(f.read_text()) if d]


def test_function_results_carry_the_code_and_spec_allow_accepts_it():
    run = run_cli("fn", input=resource_list(quickstart_items(), {"strict": True}))
    out = yaml.safe_load(run.stdout)
    assert run.code == 1
    assert out["results"][0]["tags"] == {"code": "chart-defaults"}
    assert out["results"][1]["tags"] == {"code": "auto-selected-runtime"}
    assert out["results"][1]["message"] == AUTO
    run = run_cli("fn", input=resource_list(quickstart_items(), {"strict": True, "allow": ["auto-selected-runtime"]}))
    out = yaml.safe_load(run.stdout)
    assert run.code == 0, run.stderr
    assert [r["tags"]["code"] for r in out["results"]] == ["chart-defaults", "auto-selected-runtime"]
    assert out["items"]
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
                  "data": {"strict": "true", "allow": "removed-field, auto-selected-runtime"}}
    text = yaml.safe_dump({"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList",
                           "items": quickstart_items(), "functionConfig": config_map})
    assert run_cli("fn", input=text).code == 0


def test_function_spec_allow_with_an_unknown_code_is_an_error_result():
    for allow, message in [(["auto-selected-runtim"], 'functionConfig.spec.allow: unknown message code '
                                                      '"auto-selected-runtim"; did you mean "auto-selected-runtime"?'),
                           ([1], "functionConfig.spec.allow must be a list of message codes "
                                 "(docs/reference/message-codes.md)")]:
        run = run_cli("fn", input=resource_list(quickstart_items(), {"strict": True, "allow": allow}))
        out = yaml.safe_load(run.stdout)
        assert run.code == 1
        assert out["results"][0]["message"] == message


def argocd(tmp_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    app = tmp_path / "app"
    shutil.copytree(QUICKSTART, app)
    environ = {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}", "HOME": str(tmp_path),
               "ARGOCD_APP_SOURCE_PATH": "app", "PYTHONPATH": str(ROOT), **env}
    return subprocess.run([sys.executable, "-m", "omerender.cli", "argocd", "generate"], cwd=app, env=environ,
                          capture_output=True, text=True, check=False)


def test_argocd_allow_parameter(tmp_path):
    plugin = yaml.safe_load((ROOT / "plugins" / "argocd" / "plugin.yaml").read_text())
    allow = next(p for p in plugin["spec"]["parameters"]["static"] if p["name"] == "allow")
    assert (allow["string"], "itemType" in allow) == ("", False)
    assert argocd(tmp_path / "a", {"PARAM_STRICT": "true"}).returncode == 1
    done = argocd(tmp_path / "b", {"PARAM_STRICT": "true", "PARAM_ALLOW": "auto-selected-runtime"})
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [CHART_DEFAULTS_CODED, f"warning: isvc.yaml:3:1: {AUTO} [auto-selected-runtime]"]
    done = argocd(tmp_path / "c", {"PARAM_STRICT": "true", "ARGOCD_ENV_ALLOW": "zzz\nerror: x"})
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.splitlines() == ['error: ALLOW: unknown message code "zzz\\nerror: x"; '
                                        'docs/reference/message-codes.md lists the codes']


# ---------------------------------------------------------------- --messages github

def test_messages_github_prints_annotations_on_their_lines():
    run = run_cli("render", "--messages", "github", str(QUICKSTART))
    assert run.code == 0
    assert run.printed.splitlines() == [CHART_DEFAULTS_NOTICE, f"::warning file={QUICKSTART}/isvc.yaml,line=3,col=1,"
                                        f"title=auto-selected-runtime::{AUTO}"]
    run = run_cli("render", "--messages", "github", "--strict", str(QUICKSTART))
    assert (run.code, run.stdout) == (1, "")
    assert run.printed.splitlines()[2] == "::error title=omerender::1 warning, and --strict makes every warning fail the run"


def test_messages_github_escapes_as_the_actions_toolkit_does(tmp_path):
    odd = tmp_path / "a,b:c%d"
    shutil.copytree(QUICKSTART, odd)
    run = run_cli("render", "--messages", "github", str(odd / "isvc.yaml"), str(odd / "runtime.yaml"),
                  str(odd / "model.yaml"))
    file = str(odd).replace("%", "%25").replace(":", "%3A").replace(",", "%2C")
    assert run.printed.splitlines() == [CHART_DEFAULTS_NOTICE, f"::warning file={file}/isvc.yaml,line=3,col=1,"
                                        f"title=auto-selected-runtime::{AUTO}"]
    from omerender.cli.shell import github_line
    assert github_line(Message("info", "100% done\r\nnext", code="pinned")) == \
        "::notice title=pinned::100%25 done\\r\\nnext"  # control characters are already written as escapes


def test_messages_github_on_errors_of_other_commands(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: ome.io/v1beta1\nkind: InferenceService\nmetadata: {name: x, namespace: n}\n"
                   "spec: {model: {name: nope}}\n")
    for command in (["render"], ["config"], ["tree", "x"], ["lock", "update"]):
        run = run_cli(*command, "--messages", "github", str(bad))
        assert run.code == 1, command
        assert run.printed.startswith("::error"), (command, run.printed)


# ---------------------------------------------------------------- codes no other test reaches

def test_one_input_with_many_codes_and_strict_allowing_some(tmp_path):
    copy = tmp_path / "in"
    shutil.copytree(QUICKSTART, copy)
    (copy / "kustomization.yaml").unlink()
    isvc = copy / "isvc.yaml"
    text = isvc.read_text().replace("  namespace: llama-demo\n", "  namespace: llama-demo\n  annotations:\n"
                                    "    ome.io/service-type: Balanced\n", 1)
    text = text.replace("    name: llama-3-2-3b-instruct\n  engine:", "    name: llama-3-2-3b-instruct\n"
                        "    overlays:\n" + "".join(f"    - name: no-such-overlay-{i}\n" for i in range(102))
                        + "  engine:")
    isvc.write_text(text)
    run = run_cli("render", str(copy))
    at = f"{copy}/isvc.yaml:3:1: InferenceService llama-demo/llama-3-2-3b-instruct:"
    assert run.code == 0
    assert run.printed.splitlines()[2:4] == [
        f"warning: {at} overlay ClusterBaseModel no-such-overlay-0 in spec.model.overlays[0] is not in the inputs; it "
        "is skipped [overlay-skipped]",
        f"warning: {at} overlay ClusterBaseModel no-such-overlay-1 in spec.model.overlays[1] is not in the inputs; it "
        "is skipped [overlay-skipped]"]
    assert run.codes == ["chart-defaults", "auto-selected-runtime"] + ["overlay-skipped"] * 99 + ["more-messages"]
    assert run.placed_lines[-1] == (f"warning: {at} 4 more warnings about this object are not shown: omerender "
                                    "prints at most 100 per object")
    allowed = "auto-selected-runtime,invalid-service-type"
    run = run_cli("render", "--strict", "--allow", allowed, str(copy))
    assert run.lines[-1] == ("error: 102 warnings not allowed (--allow), and --strict makes every warning fail the "
                             "run")
    run = run_cli("render", "--strict", "--allow", allowed, "--allow", "overlay-skipped", str(copy))
    assert run.code == 0, run.lines[-1]


def test_model_info_without_an_estimate_says_so_with_its_code(tmp_path):
    (tmp_path / "config.json").write_text('{"model_type": "zzz", "architectures": ["ZzzForCausalLM"]}')
    run = run_cli("model-info", str(tmp_path))
    assert run.code == 0
    assert run.printed.splitlines() == [
        f"warning: {tmp_path}: modelParameterSize left out: no *.safetensors files in {tmp_path}, and OME has no "
        "estimate for model_type zzz; point SOURCE at the model's *.safetensors files or set it by hand "
        "[model-size-unknown]"]


def test_build_reads_back_the_code_of_the_function_s_warnings():
    from omerender.cli.build import function_warnings
    relayed = function_warnings("warning: InferenceService a/b: text [auto-selected-runtime]\nwarning: old line\n"
                                "info: not a warning [pinned]\n"
                                "warning: ../base/x.yaml:12:5: InferenceService a/b: text [auto-selected-runtime]\n")
    assert [(m.text, m.code) for m in relayed] == [("InferenceService a/b: text", "auto-selected-runtime"),
                                                   ("old line", "relayed-warning"),
                                                   ("InferenceService a/b: text", "auto-selected-runtime")]
    assert (relayed[2].file, relayed[2].position()) == ("../base/x.yaml", (12, 5))
    assert relayed[2].line() == "warning: ../base/x.yaml:12:5: InferenceService a/b: text [auto-selected-runtime]"


def test_build_relays_the_function_s_warnings_as_annotations(tmp_path):
    from test_strict import kustomize_repo, omerender
    root = kustomize_repo(tmp_path)
    above = root / "kustomize" / "overlays" / "above"
    above.mkdir()
    (above / "kustomization.yaml").write_text("resources: [../prod]\ncommonAnnotations: {team: llm}\n")
    done = omerender("build", "--messages", "github", str(above), cwd=root)
    assert done.returncode == 0, done.stderr
    assert ("::warning file=kustomize/base/isvc.yaml,line=2,col=1,title=auto-selected-runtime::InferenceService "
            "llama-prod/llama-3-2-3b-instruct: Runtime sglang-llama-3-2-3b will be auto-selected for model "
            "llama-3-2-3b-instruct") in done.stderr.splitlines()
    done = omerender("build", "--messages", "github", "--strict", "--allow", "auto-selected-runtime", str(above),
                     cwd=root)
    assert done.returncode == 0, done.stderr


def test_allow_in_the_omerender_config_accepts_warnings_on_both_build_paths(tmp_path):
    from test_strict import kustomize_repo, omerender
    root = kustomize_repo(tmp_path)
    prod = root / "kustomize" / "overlays" / "prod"
    config = prod / "omerender.yaml"
    config.write_text(config.read_text().replace("spec:\n", "spec:\n  strict: true\n"))
    above = root / "kustomize" / "overlays" / "above"
    above.mkdir()
    (above / "kustomization.yaml").write_text("resources: [../prod]\ncommonAnnotations: {team: llm}\n")
    assert [omerender("build", str(path), cwd=root).returncode for path in (prod, above)] == [1, 1]
    config.write_text(config.read_text().replace("spec:\n", "spec:\n  allow: [auto-selected-runtime]\n"))
    for path in (prod, above):
        done = omerender("build", str(path), cwd=root)
        assert done.returncode == 0, done.stderr
        assert done.stderr.endswith("will be auto-selected for model llama-3-2-3b-instruct [auto-selected-runtime]\n")
