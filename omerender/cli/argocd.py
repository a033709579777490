"""``omerender argocd generate``: the Argo CD Config Management Plugin's generate step.

plugins/argocd/plugin.yaml only calls it. It runs in the Application's directory of a repository
nobody vetted, so it runs no program the repository names (:mod:`omerender.gitops.kbuild`):

* a kustomization: the safe build (the pipeline, or the installed omerender function where needed);
* a plain directory of OME YAML: ``omerender render .``.

Options come from the OMERender config in the tree (read as data) and from the Application's plugin env
(``ARGOCD_ENV_<NAME>``) and parameters (``PARAM_<NAME>``, which win), which add to the config's: one the config sets
too is an error.
"""
from __future__ import annotations

import os
import sys

import click

from omerender.errors import OmeError
from omerender.gitops.argocd import (BESIDE_CONFIG, FLAGS, allow_codes, allow_empty, cluster_config_path,
                                     cluster_setting, empty_render, flag_values, messages_form, repo_root,
                                     split_config, switch, unapplied_marker, weights_values)
from omerender.kube.k8stypes import kube_version_in_use, table_version
from omerender.ome.frontend import ARGOCD_FRONT
from omerender.ome.render import Options
from omerender.yamlio.emit import write_stream
from .shell import (fail, fail_if_strict, leave_out_infos, relay, report_run, say, set_messages,
                    weights_flag_names)

@click.group("argocd", epilog="\b\nExample (plugins/argocd/plugin.yaml):\n  generate:\n"
                               "    command: [omerender, argocd, generate]")
def argocd():
    """The Argo CD Config Management Plugin's steps (plugins/argocd/plugin.yaml)."""


@argocd.command("generate", epilog="\b\nExample (what argocd-cmp-server runs in the app's directory):\n"
                                   "  ARGOCD_ENV_NO_MODEL_NODE_SELECTOR=true omerender argocd generate")
def generate():
    """Write the Application's manifests to stdout: a kustomization is built with no plugin the repository
    names (pipeline, or the installed omerender function where needed); a plain directory is rendered.

    A render of no objects fails (set ALLOW_EMPTY=true where an empty app is meant), as does an object the
    destination cluster doesn't serve (KUBE_API_VERSIONS, KUBE_VERSION, which Argo CD passes). QUIET=true leaves
    out info lines; MESSAGES=github prints messages as GitHub Actions annotations (as --messages github)."""
    from omerender.gitops.buildrun import build, remote_setting, timeout_setting
    from omerender.gitops.kbuild import find_kustomization
    from .build import built_or_fail, function_warnings

    environ = dict(os.environ)
    root = repo_root(".", environ.get("ARGOCD_APP_SOURCE_PATH"), environ)
    try:
        form, quiet = messages_form(environ)
    except OmeError as err:
        fail([err.message()])
    set_messages(click.get_current_context(), form, quiet)
    try:
        values = flag_values(environ)
        mode, settings, weights = weights_values(environ)
        cluster_config = cluster_config_path(environ, root)
        empty_ok = allow_empty(environ)
        allow = allow_codes(environ)
        cluster = cluster_setting(environ)
        table = table_version(cluster[1])
        validate = switch(environ, "VALIDATE")
    except OmeError as err:
        fail([err.message()])
    with kube_version_in_use(table):
        named = tuple(ARGOCD_FRONT.given(FLAGS[name]) for name, on in values.items()
                      if on and name not in BESIDE_CONFIG) + weights_flag_names(weights, ARGOCD_FRONT)
        options = Options(keep_inputs=values["KEEP_INPUTS"], model_node_selector=not values["NO_MODEL_NODE_SELECTOR"],
                          strict=values["STRICT"], pod_monitors=values["POD_MONITORS"], model_weights=mode,
                          weights=settings, allow=allow, front=ARGOCD_FRONT)
        if find_kustomization(".") is None:
            objects, inputs = _render_plain((".",), options, named, cluster_config)
            input_kinds = [obj.kind for obj in inputs.objects]
            if not objects and not empty_ok:
                fail([empty_render(input_kinds).message()])
            _fail_unserved(objects, cluster, inputs, validate and table)
            write_stream(objects, sys.stdout)
            return
        unapplied = built_or_fail(lambda: unapplied_marker(root))
        if unapplied is not None:
            fail([unapplied.message()])
        built = built_or_fail(lambda: build(".", root, options if named else None, named, default_options=options,
                                            timeout=timeout_setting(None, environ, sidecar=True),
                                            remote=remote_setting(False, environ),
                                            extra=(cluster_config,) if cluster_config else ()))
        leave_out_infos(built.quiet)
        relay(built.tool_stderr)
        for message in built.messages:
            say(message)
        fail_if_strict(built.strict or values["STRICT"], [*built.messages, *function_warnings(built.tool_stderr)],
                       allow=allow | built.allow,
                       switch="--strict" if values["STRICT"] else "strict: true in the OMERender config")
        if not empty_ok and _built_nothing(built):
            input_kinds = [obj.kind for obj in built.inputs.objects] if built.inputs else None
            fail([empty_render(input_kinds, kustomization=True).message()])
        _fail_unserved(built.objects if built.objects is not None else built.stream_objects, cluster, built.inputs,
                       validate and table)
        if built.objects is not None:
            try:
                write_stream(built.objects, sys.stdout)
            except OmeError as err:  # a string the writer cannot write as UTF-8 (emit.not_utf8_error)
                fail([err.message()])
        else:
            sys.stdout.write(built.stream)


def _render_plain(paths: tuple[str, ...], options: Options, named: tuple[str, ...],
                  cluster_config: str | None = None) -> tuple[list[dict], object]:
    """``omerender render PATHS --cluster-config CLUSTER_CONFIG`` with ``options`` (those of the directory's
    OMERender config where it holds one): the rendered objects and the inputs read. Messages are
    printed; errors (and, with strict, warnings) exit 1."""
    from omerender.errors import run_guarded
    from omerender.gitops.argocd import CLUSTER_CONFIG
    from omerender.gitops.overlays import read_with_cluster_config
    from omerender.ome.load import index
    from omerender.ome.pinning.lockfile import find_lock, lock_from_inputs, read_lock
    from omerender.ome.render import render
    notes: list = []
    used = [options, "--strict"]

    def run():
        docs, config_options = split_config(read_with_cluster_config(list(paths), cluster_config, notes,
                                                                     CLUSTER_CONFIG), named)
        if config_options is not None:
            used[:] = [config_options, "strict: true in the OMERender config"]
        inputs = index(docs)
        lock = lock_from_inputs(inputs) or read_lock(find_lock(list(paths), None))
        return render(inputs, used[0], lock), inputs

    done, failures = run_guarded(run)
    leave_out_infos(used[0].quiet)
    report_run(notes, failures, lambda: done[0].messages, used[0].strict or options.strict,
               switch="--strict" if options.strict else used[1],
               allow=options.allow | used[0].allow)
    result, inputs = done
    return result.objects, inputs


def _built_nothing(built) -> bool:
    """Whether a kustomization's build wrote no object (the function path's output is kustomize's text)."""
    if built.objects is not None:
        return not built.objects
    return not (built.stream or "").strip()


def _fail_unserved(objects: list[dict], cluster: tuple, inputs=None, validate: str | None = None) -> None:
    """Exit 1 naming each object the destination cluster doesn't serve (``cluster``: the KUBE_API_VERSIONS and
    KUBE_VERSION Argo CD passed, parsed; nothing is checked where both are empty), and with ``validate`` (the
    version of the field tables: VALIDATE=true) each problem its API server would find in them."""
    from omerender.errors import run_guarded
    from omerender.kube.apiversions import unserved
    from omerender.kube.validation import rendered_errors
    from omerender.ome.load import source_of
    served, version = cluster
    if served is None and version is None and not validate:
        return

    def check():
        errors = unserved(objects or [], served, version, "not in the KUBE_API_VERSIONS Argo CD passed",
                          source_of(inputs))
        return errors + (rendered_errors(objects or [], validate) if validate else [])

    errors, failures = run_guarded(check)
    if failures or errors:
        fail(failures or [err.message() for err in errors])
