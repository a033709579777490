"""``omerender argocd generate``: the Argo CD Config Management Plugin's generate step.

plugins/argocd/plugin.yaml only calls it. It runs in the Application's directory of a repository
nobody vetted, so it runs no program the repository names (:mod:`omerender.gitops.kbuild`):

* a kustomization: the safe build (the pipeline, or the installed omerender function where needed);
* a plain directory of OME YAML: ``omerender render .``.

Options come from the OMERender config in the tree (read as data) or, where there is none, from the
Application's plugin env (``ARGOCD_ENV_<NAME>``) and parameters (``PARAM_<NAME>``, which win).
"""
from __future__ import annotations

import os
import sys

import click

from omerender.errors import OmeError
from omerender.gitops.argocd import FLAGS, cluster_config_path, flag_values, repo_root
from omerender.yamlio.paths import within
from omerender.ome.render import Options
from omerender.yamlio.emit import write_stream
from .shell import fail, fail_if_strict

@click.group("argocd", epilog="\b\nExample (plugins/argocd/plugin.yaml):\n  generate:\n"
                               "    command: [omerender, argocd, generate]")
def argocd():
    """The Argo CD Config Management Plugin's steps (plugins/argocd/plugin.yaml)."""


@argocd.command("generate", epilog="\b\nExample (what argocd-cmp-server runs in the app's directory):\n"
                                   "  ARGOCD_ENV_NO_MODEL_NODE_SELECTOR=true omerender argocd generate")
def generate():
    """Write the Application's manifests to stdout: a kustomization is built with no plugin the repository
    names (pipeline, or the installed omerender function where needed); a plain directory is rendered."""
    from omerender.gitops.buildrun import build, remote_setting, timeout_setting
    from omerender.gitops.kbuild import find_kustomization
    from .app import render_cmd
    from .build import built_or_fail, function_warnings

    environ = dict(os.environ)
    root = repo_root(".", environ.get("ARGOCD_APP_SOURCE_PATH"))
    try:
        values = flag_values(environ)
        cluster_config = cluster_config_path(environ, root)
    except OmeError as err:
        fail([err.message()])
    named = tuple(FLAGS[name] for name, on in values.items() if on)
    options = Options(keep_inputs=values["KEEP_INPUTS"], model_node_selector=not values["NO_MODEL_NODE_SELECTOR"],
                      strict=values["STRICT"], pod_monitors=values["POD_MONITORS"])
    if find_kustomization(".") is None:
        paths = (".",) if cluster_config is None or _read_anyway(cluster_config) else (".", cluster_config)
        click.get_current_context().invoke(render_cmd, paths=paths, keep_inputs=options.keep_inputs,
                                           no_model_node_selector=not options.model_node_selector,
                                           locked=False, lock_path=None, output_dir=None, old_output_dir=None,
                                           pod_monitors=options.pod_monitors,
                                           strict=values["STRICT"], debug=False)
        return
    built = built_or_fail(lambda: build(".", root, options if named else None, named,
                                        timeout=timeout_setting(None, environ),
                                        remote=remote_setting(False, environ),
                                        extra=(cluster_config,) if cluster_config else ()))
    sys.stderr.write(built.tool_stderr)
    for message in built.messages:
        click.echo(message.line(), err=True)
    fail_if_strict(built.strict, [*built.messages, *function_warnings(built.tool_stderr)],
                   switch="--strict" if values["STRICT"] else "strict: true in the OMERender config")
    if built.objects is not None:
        try:
            write_stream(built.objects, sys.stdout)
        except OmeError as err:  # a string the writer cannot write as UTF-8 (emit.not_utf8_error)
            fail([err.message()])
    else:
        sys.stdout.write(built.stream)



def _read_anyway(path: str) -> bool:
    """Whether rendering the app's directory reads ``path`` already (a YAML file below it)."""
    return path.endswith((".yaml", ".yml")) and within(os.path.realpath(path), os.path.realpath("."))
