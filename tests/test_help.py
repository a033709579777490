"""Help that answers: `omerender-fn --help` and `explain -n` (issue 13)."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import run_cli
from omerender import version_text

BIN = Path(sys.executable).parent


def fn(*args, stdin=""):
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    exe = shutil.which("omerender-fn", path=env["PATH"])
    assert exe, "omerender-fn is not installed next to this Python"
    return subprocess.run([exe, *args], input=stdin, capture_output=True, text=True, env=env, timeout=60)


def test_omerender_fn_help_is_help_not_a_resource_list_error():
    for flag in ("--help", "-h"):
        done = fn(flag)
        assert done.returncode == 0 and done.stderr == ""
        assert done.stdout.startswith("Usage: omerender-fn [-h | --help | --version]\n")
        assert "apiVersion omerender.io/v1alpha1, kind OMERender" in done.stdout
        assert "kustomize build --enable-alpha-plugins --enable-exec overlays/prod" in done.stdout


def test_omerender_fn_version():
    done = fn("--version")
    assert done.returncode == 0 and done.stdout.startswith("omerender-fn, version ")


def test_omerender_fn_without_arguments_still_reads_stdin():
    done = fn(stdin="apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"
                    "- {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: ns}}\n")
    assert done.returncode == 0, done.stderr
    assert "kind: ResourceList" in done.stdout and "name: c" in done.stdout


def test_omerender_fn_subcommand_help_is_the_functions_full_help():
    for flag in ("--help", "-h"):
        run = run_cli("fn", flag)
        assert run.code == 0
        assert run.stdout == fn("--help").stdout.replace("Usage: omerender-fn ", "Usage: omerender fn ", 1)
    assert "strict: true makes any warning fail the function" in run.stdout
    assert run_cli("fn", "--version").stdout.startswith("omerender fn, version ")
    assert "Run as a KRM function" in run_cli("--help").stdout


def test_help_is_uniform_across_commands():
    """Every command that reads input names it PATH, and every one has --debug; check reads the lock as render."""
    for command in (["render"], ["explain"], ["tree"], ["diff"], ["lock", "update"]):
        usage = run_cli(*command, "--help").stdout.splitlines()[0]
        assert usage.endswith("[PATH]..."), usage
    for command in ("render", "explain", "tree", "diff", "check", "build"):
        assert "--debug" in run_cli(command, "--help").stdout, command
    check = run_cli("check", "--help").stdout
    assert "--locked" in check and "--lock FILE" in check
    for command in ("render", "check", "build", "diff"):
        assert "--strict" in run_cli(command, "--help").stdout, command


def test_usage_errors_exit_2_as_documented():
    for args in (["render", "--no-such-flag"], ["explain", "--output", "yaml"], ["diff", "only-one"]):
        run = run_cli(*args)
        assert (run.code, run.stdout) == (2, ""), args
        assert run.stderr.startswith("Usage: ") and "\nError: " in run.stderr, args


def test_explain_namespace_option_has_help():
    run = run_cli("explain", "--help")
    assert run.code == 0
    assert "-n, --namespace NS" in run.stdout and "Namespace of the InferenceService" in run.stdout


def test_explain_output_option_has_help():
    run = run_cli("explain", "--help")
    assert "one row per runtime on stdout, the decision on stderr" in " ".join(run.stdout.split())


# `render` and `fn` run once per build in a pipeline: they start without the other commands' modules
# (model-info's ruamel.yaml, diff, Argo CD), which help still lists and which still run.
IMPORTED_BY_RENDER = ("import runpy, sys\n"
                      "sys.argv = ['omerender'] + sys.argv[1:]\n"
                      "try:\n"
                      "    runpy.run_module('omerender.cli', run_name='__main__')\n"
                      "finally:\n"
                      "    print(sorted(m for m in sys.modules if m.startswith(('ruamel', 'omerender.diff', "
                      "'omerender.modelinfo', 'omerender.cli.diff', 'omerender.cli.modelinfo', 'omerender.cli.argocd', "
                      "'omerender.gitops.argocd', 'omerender.gitops.outdir'))), file=sys.stderr)\n")


def test_render_does_not_import_the_other_commands():
    done = subprocess.run([sys.executable, "-c", IMPORTED_BY_RENDER, "render", "-"], input="", capture_output=True,
                          text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "[]\n")
    done = subprocess.run([sys.executable, "-c", IMPORTED_BY_RENDER, "--help"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0
    listed = [line.split()[0] for line in done.stdout.split("Commands:\n")[1].splitlines() if line.startswith("  ")]
    assert listed[:11] == ["argocd", "build", "check", "config", "diff", "explain", "fn", "lock", "model-info", "render",
                           "tree"]
    assert run_cli("model-info", "--help").code == 0 and run_cli("diff", "--help").code == 0


def test_every_module_entry_point_runs_the_command_it_names():
    """`python -m omerender` and `python -m omerender.cli` are the CLI; `python -m omerender.gitops` is the entry
    the installed legacy kustomize plugin calls (plugins/kustomize-legacy), whose usage it prints on a bad call."""
    for module in ("omerender", "omerender.cli"):
        done = subprocess.run([sys.executable, "-m", module, "--version"], capture_output=True, text=True,
                              timeout=60)
        assert (done.returncode, done.stdout, done.stderr) == (0, version_text("omerender"), "")
    done = subprocess.run([sys.executable, "-m", "omerender.gitops"], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == "usage: python -m omerender.gitops kustomize-plugin CONFIG_FILE < resources.yaml\n"
