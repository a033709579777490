"""GitOps integrations.

* ``omerender build DIR``: a kustomize build that runs no program the repository names (see
  :mod:`omerender.kbuild`), falling back to ``kubectl kustomize``.
* ``python -m omerender.gitops kustomize-plugin CONFIG``: the legacy kustomize exec plugin contract
  (config file path as argument, resources as a YAML stream on stdin and stdout), adapted to the KRM function.
"""
from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import click
import yaml

from . import atomicdir
from .emit import dump, dump_stream
from .errors import OmeError
from .reading import read_file
from .yamlread import Budget, SafeLoader, load_all, load_one, yaml_error_text
from .shell import fail, run_guarded, without_cycle_collector

PLUGIN_API_VERSION = "omerender.io/v1alpha1"
PLUGIN_KIND = "OMERender"
OME_INPUT_KINDS = ("InferenceService",)
ISVC_LABEL = "ome.io/inferenceservice"


# ---------------------------------------------------------------- omerender build

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


BOUNDARY_HINT = " (the Git work tree holding DIR, else the working directory; --root DIR widens it)"


def default_boundary(directory: str) -> str:
    """What ``omerender build`` may read: the Git work tree holding DIR, else the working directory when DIR
    is inside it, else DIR itself."""
    real = os.path.realpath(directory)
    folder = real
    while True:
        if os.path.exists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    cwd = os.path.realpath(os.getcwd())
    return cwd if os.path.commonpath([real, cwd]) == cwd else real


def write_output(path: str, text: str) -> None:
    """``build -o FILE``: written atomically (:func:`atomicdir.replace_file`); a failure is an error line."""
    try:
        atomicdir.replace_file(path, text)
    except OSError as err:
        raise OmeError(f"cannot write {path}: {err.strerror}") from None


@click.command("build", epilog="\b\nExamples:\n  omerender build overlays/prod\n"
                               "  omerender build overlays/prod --verbose -o prod.yaml")
@click.argument("directory", metavar="DIR")
@click.option("-o", "--output", metavar="FILE", help="Write the objects to FILE (atomically) instead of stdout.")
@click.option("--root", metavar="DIR", help="Read nothing outside this directory (default: the Git work tree "
                                            "holding DIR, else the working directory).")
@click.option("-v", "--verbose", is_flag=True, help="Say which path renders DIR, and why.")
def build_cmd(directory, output, root, verbose):
    """Build the kustomization DIR and render its OME objects; run no program the repository names.

    The default (and fast) path: `kustomize build` with every plugin kind off and the OMERender
    transformer left out, then omerender's render of the result. Where something transforms the
    rendered objects (an overlay above the kustomization that lists OMERender, a transformer after
    it, a rename kustomize fixes last), kustomize runs the installed omerender function instead.

    Every function or plugin reference in the tree must be omerender's or a kustomize builtin;
    anything else is refused. Uses kustomize, else `kubectl kustomize`."""
    from .buildrun import build

    def run():
        return build(directory, root or default_boundary(directory), hint=BOUNDARY_HINT)

    built = built_or_fail(run)
    if verbose:
        click.echo(f"info: {built.plan.path} path: {built.plan.reason}", err=True)
    sys.stderr.write(built.tool_stderr)
    for message in built.messages:
        click.echo(message.line(), err=True)
    text = dump_stream(built.objects) if built.objects is not None else built.stream
    if built.objects is None:
        for isvc in unrendered_isvcs(text):
            click.echo(f"warning: InferenceService {isvc} was not rendered: no OMERender transformer saw it; list "
                       f"omerender under transformers: of the kustomization that holds it or of an overlay above",
                       err=True)
    if output:
        _, failures = run_guarded(lambda: write_output(output, text))
        if failures:
            fail(failures)
    else:
        sys.stdout.write(text)


def built_or_fail(action):
    """Run a build; on failure print kustomize's own stderr, then the error lines, and exit 1."""
    from .buildrun import ToolFailed
    tool_stderr = []

    def guarded():
        try:
            return action()
        except ToolFailed as err:
            tool_stderr.append(err.stderr)
            raise

    value, failures = run_guarded(guarded)
    if failures:
        sys.stderr.write("".join(tool_stderr))
        fail(failures)
    return value


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
    from .krm import result_line
    return result_line(result)


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
    without_cycle_collector()
    sys.exit(plugin_main(sys.argv[1:]))
