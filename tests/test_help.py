"""Help that answers: `omerender-fn --help` and `explain -n` (issue 13)."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import run_cli

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
                    "- {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: n}}\n")
    assert done.returncode == 0, done.stderr
    assert "kind: ResourceList" in done.stdout and "name: c" in done.stdout


def test_omerender_fn_subcommand_help_is_unchanged():
    run = run_cli("fn", "--help")
    assert run.code == 0 and "Run as a KRM function" in run.stdout


def test_explain_namespace_option_has_help():
    run = run_cli("explain", "--help")
    assert run.code == 0
    assert "-n, --namespace NS" in run.stdout and "Namespace of the InferenceService" in run.stdout


def test_explain_output_option_has_help():
    run = run_cli("explain", "--help")
    assert "one row per runtime on stdout, the decision on stderr" in " ".join(run.stdout.split())
