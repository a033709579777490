"""``--strict`` (issue 25): any warning fails ``render``, ``check``, ``build`` and ``diff`` for CI, each warning
printed and then one error line, with nothing on stdout and nothing written. Infos never count."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from conftest import CHART_DEFAULTS_CODED, CHART_DEFAULTS_INFO, FIXTURES, run_cli

QUICKSTART = FIXTURES / "quickstart"
AUTO = ("InferenceService llama-demo/llama-3-2-3b-instruct: Runtime sglang-llama-3-2-3b will be auto-selected "
        "for model llama-3-2-3b-instruct")
STRICT = "error: 1 warning, and --strict makes every warning fail the run"


def omerender(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "omerender.cli", *args], capture_output=True, text=True,
                          cwd=cwd, check=False)


def named_runtime(tmp_path: Path) -> Path:
    """The quickstart with its InferenceService naming the runtime: no warning at all."""
    copy = tmp_path / "named"
    shutil.copytree(QUICKSTART, copy)
    isvc = copy / "isvc.yaml"
    isvc.write_text(isvc.read_text().replace("spec:\n", "spec:\n  runtime:\n    name: sglang-llama-3-2-3b\n", 1))
    return copy


def test_render_strict_fails_on_a_warning_with_nothing_on_stdout():
    run = run_cli("render", str(QUICKSTART), "--strict")
    assert (run.code, run.stdout) == (1, "")
    assert run.lines == [CHART_DEFAULTS_INFO, f"warning: {QUICKSTART}/isvc.yaml: {AUTO}", STRICT]
    assert run_cli("render", str(QUICKSTART)).code == 0


def test_render_strict_passes_without_warnings_and_ignores_infos(tmp_path):
    named = named_runtime(tmp_path)
    run_cli("render", str(named), "--output-dir", str(named / "rendered"))  # re-reading it gives an info
    run = run_cli("render", str(named), "--strict")
    assert run.code == 0, run.stderr
    assert run.lines and all(line.startswith("info: ") for line in run.lines)
    assert run.stdout == run_cli("render", str(named)).stdout


def test_render_strict_writes_no_output_dir(tmp_path):
    run = run_cli("render", str(QUICKSTART), "--strict", "--output-dir", str(tmp_path / "out"))
    assert (run.code, run.lines) == (1, [CHART_DEFAULTS_INFO, f"warning: {QUICKSTART}/isvc.yaml: {AUTO}", STRICT])
    assert not (tmp_path / "out").exists()


def test_check_strict_fails_on_a_warning_even_when_up_to_date(tmp_path):
    assert run_cli("render", str(QUICKSTART), "--output-dir", str(tmp_path / "out")).code == 0
    assert run_cli("check", str(QUICKSTART), str(tmp_path / "out")).code == 0
    run = run_cli("check", str(QUICKSTART), str(tmp_path / "out"), "--strict")
    assert (run.code, run.stdout, run.lines) == (1, "", [CHART_DEFAULTS_INFO, f"warning: {QUICKSTART}/isvc.yaml: "
                                                         f"{AUTO}", STRICT])


def test_diff_strict_fails_on_a_warning_of_head_with_exit_2(tmp_path):
    named = named_runtime(tmp_path)
    run = run_cli("diff", str(named), str(QUICKSTART), "--strict")
    assert (run.code, run.stdout) == (2, "")
    assert run.lines == [f"warning: head: {QUICKSTART}/isvc.yaml: {AUTO}", STRICT]
    reverse = run_cli("diff", str(QUICKSTART), str(named), "--strict")  # base's warnings don't ship
    assert reverse.code == 0, reverse.stderr
    assert reverse.stdout.startswith("InferenceServices: 0 added, 0 removed, 0 changed, 1 unchanged")


def test_build_strict_fails_on_the_pipeline_path(tmp_path):
    # run from the clone: a build names files relative to the working directory (wherever the clone is)
    done = omerender("build", "fixtures/quickstart", "--strict", "--output-file", str(tmp_path / "out.yaml"),
                     cwd=FIXTURES.parent)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.splitlines() == [CHART_DEFAULTS_CODED,
                                        f"warning: fixtures/quickstart/isvc.yaml:3:1: {AUTO} [auto-selected-runtime]",
                                        STRICT]
    assert not (tmp_path / "out.yaml").exists()
    assert omerender("build", "fixtures/quickstart", cwd=FIXTURES.parent).returncode == 0


def kustomize_repo(tmp_path: Path) -> Path:
    """The kustomize fixture in a Git work tree, its InferenceService auto-selecting its runtime (a warning)."""
    root = tmp_path / "repo"
    shutil.copytree(FIXTURES / "kustomize", root / "kustomize")
    (root / ".git").mkdir()
    isvc = root / "kustomize" / "base" / "isvc.yaml"
    isvc.write_text(isvc.read_text().replace("  runtime:\n    name: sglang-llama-3-2-3b\n", ""))
    return root


def test_build_strict_fails_on_the_function_path(tmp_path):
    root = kustomize_repo(tmp_path)
    above = root / "kustomize" / "overlays" / "above"
    above.mkdir()
    (above / "kustomization.yaml").write_text("resources: [../prod]\ncommonAnnotations: {team: llm}\n")
    plain = omerender("build", "-v", str(above), cwd=root)
    assert plain.returncode == 0, plain.stderr
    assert "info: function path:" in plain.stderr
    done = omerender("build", str(above), "--strict", cwd=root)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.splitlines()[-2:] == [  # the function names the base file's line, as the CLI does
        "warning: kustomize/base/isvc.yaml:2:1: InferenceService llama-prod/llama-3-2-3b-instruct: Runtime "
        "sglang-llama-3-2-3b will be "
        "auto-selected for model llama-3-2-3b-instruct [auto-selected-runtime]", STRICT]


def test_strict_in_the_omerender_config_fails_build_like_the_function(tmp_path):
    root = kustomize_repo(tmp_path)
    prod = root / "kustomize" / "overlays" / "prod"
    config = prod / "omerender.yaml"
    config.write_text(config.read_text().replace("spec:\n", "spec:\n  strict: true\n"))
    done = omerender("build", str(prod), cwd=root)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.splitlines() == [
        CHART_DEFAULTS_CODED, "warning: kustomize/base/isvc.yaml:2:1: InferenceService llama-prod/llama-3-2-3b-instruct: Runtime "
        "sglang-llama-3-2-3b will be auto-selected for model llama-3-2-3b-instruct [auto-selected-runtime]",
        "error: 1 warning, and strict: true in the OMERender config makes every warning fail the run"]
    kustomize = subprocess.run([shutil.which("kustomize"), "build", "--enable-alpha-plugins", "--enable-exec",
                                str(prod)], capture_output=True, text=True, check=False,
                               env={"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"})
    assert kustomize.returncode != 0
    assert ("error: 1 warning, and strict: true in the functionConfig makes every warning fail the run"
            in kustomize.stderr)


def test_strict_fails_ci_on_a_runner_that_gets_the_literal_model_path(F):
    """The issue's case: without --strict it passes CI with exit 0."""
    from conftest import render_objects
    F["isvc"]["spec"]["engine"]["annotations"] = {"ome.io/fine-tuned-serving-with-merged-weights": "true"}
    objects = list(F.values())
    assert render_objects(objects).code == 0
    run = render_objects(objects, "--strict")
    assert (run.code, run.stdout) == (1, "")
    assert "$(MODEL_PATH) is referenced but MODEL_PATH is not set" in run.lines[-2]
    assert run.lines[-1] == STRICT
