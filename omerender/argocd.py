"""``omerender argocd generate``: the Argo CD Config Management Plugin's generate step.

plugins/argocd/plugin.yaml only calls it. It runs in the Application's directory of a repository
nobody vetted, so it runs no program the repository names (:mod:`omerender.kbuild`):

* a kustomization: the safe build (the pipeline, or the installed omerender function where needed);
* a plain directory of OME YAML: ``omerender render .``.

Options come from the OMERender config in the tree (read as data) or, where there is none, from the
Application's plugin env (``ARGOCD_ENV_<NAME>``) and parameters (``PARAM_<NAME>``, which win).
"""
from __future__ import annotations

import os
import sys

import click

from .emit import write_stream
from .errors import OmeError
from .render import Options
from .shell import fail

# Option name -> the render flag it stands for.
FLAGS = {"NO_MODEL_NODE_SELECTOR": "--no-model-node-selector", "KEEP_INPUTS": "--keep-inputs"}
TRUE = ("true", "True", "TRUE", "1", "yes")
FALSE = ("false", "False", "FALSE", "0", "no", "")


def flag_values(environ: dict) -> dict[str, bool]:
    """Each option's value from PARAM_<NAME>, else ARGOCD_ENV_<NAME>, else false."""
    values = {}
    for name in FLAGS:
        value = environ.get(f"PARAM_{name}", environ.get(f"ARGOCD_ENV_{name}", "false"))
        if value not in TRUE + FALSE:
            shown = value.encode("unicode_escape").decode("ascii")  # a newline must not forge an error: line
            raise OmeError(f'{name} must be true or false, got "{shown}"')
        values[name] = value in TRUE
    return values


def repo_root(app_dir: str, source_path: str | None) -> str:
    """The repository's root: the app directory minus ARGOCD_APP_SOURCE_PATH; the app directory itself when
    that path is missing or doesn't match (nothing above it is then read)."""
    app_dir = os.path.realpath(app_dir)
    parts = [p for p in (source_path or "").split("/") if p not in ("", ".")]
    if ".." in parts:
        return app_dir
    root = app_dir
    for part in reversed(parts):
        if os.path.basename(root) != part:
            return app_dir
        root = os.path.dirname(root)
    return root


@click.group("argocd", epilog="\b\nExample (plugins/argocd/plugin.yaml):\n  generate:\n"
                               "    command: [omerender, argocd, generate]")
def argocd():
    """The Argo CD Config Management Plugin's steps (plugins/argocd/plugin.yaml)."""


@argocd.command("generate", epilog="\b\nExample (what argocd-cmp-server runs in the app's directory):\n"
                                   "  ARGOCD_ENV_NO_MODEL_NODE_SELECTOR=true omerender argocd generate")
def generate():
    """Write the Application's manifests to stdout: a kustomization is built with no plugin the repository
    names (pipeline, or the installed omerender function where needed); a plain directory is rendered."""
    from .buildrun import build
    from .cli import render_cmd
    from .gitops import built_or_fail
    from .kbuild import find_kustomization

    environ = dict(os.environ)
    try:
        values = flag_values(environ)
    except OmeError as err:
        fail([err.message()])
    named = tuple(FLAGS[name] for name, on in values.items() if on)
    options = Options(keep_inputs=values["KEEP_INPUTS"], model_node_selector=not values["NO_MODEL_NODE_SELECTOR"])
    if find_kustomization(".") is None:
        click.get_current_context().invoke(render_cmd, paths=(".",), keep_inputs=options.keep_inputs,
                                           no_model_node_selector=not options.model_node_selector,
                                           locked=False, lock_path=None, output_dir=None, debug=False)
        return
    root = repo_root(".", environ.get("ARGOCD_APP_SOURCE_PATH"))
    built = built_or_fail(lambda: build(".", root, options if named else None, named))
    sys.stderr.write(built.tool_stderr)
    for message in built.messages:
        click.echo(message.line(), err=True)
    if built.objects is not None:
        write_stream(built.objects, sys.stdout)
    else:
        sys.stdout.write(built.stream)

