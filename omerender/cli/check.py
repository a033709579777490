"""``omerender check DIR_IN DIR_RENDERED``: is a committed render (``render --output-dir``) up to date?"""
from __future__ import annotations

import os
import shlex
import sys

import click

from omerender.errors import Message, run_guarded
from omerender.gitops.outdir import missing_dir_message, origins, out_of_date
from omerender.gitops.overlays import read_inputs
from omerender.ome.pinning.lockfile import find_lock, lock_from_inputs, read_lock
from omerender.ome.render import render
from omerender.yamlio.emit import kept_texts
from .app import looks_like_file
from .shell import (allow_option, built_overlay, check_cluster, cluster_config_option, cluster_flags, fail,
                    for_cluster, messages_option, render_options, report_run, weights_flags)


@click.command("check", epilog="\b\nExample (CI):\n  omerender check omedeploy/ rendered/")
@click.argument("dir_in", metavar="DIR_IN")
@click.argument("dir_rendered", metavar="DIR_RENDERED")
@click.option("--keep-inputs", is_flag=True, help="Render as `render --keep-inputs --output-dir` did.")
@click.option("--no-model-node-selector", is_flag=True,
              help="Render as `render --no-model-node-selector --output-dir` did.")
@click.option("--locked", is_flag=True,
              help="Fail when omerender.lock.yaml is out of date (run \"omerender lock update\").")
@click.option("--pod-monitors", is_flag=True, help="Render as `render --pod-monitors --output-dir` did.")
@click.option("--lock", "lock_path", metavar="FILE",
              help="The lock file (default: omerender.lock.yaml in, or beside, DIR_IN), as render reads it.")
@click.option("--strict", is_flag=True, help="Fail (exit 1) when the render has any warning; for CI.")
@cluster_flags
@cluster_config_option
@click.option("--debug", is_flag=True, help="Show a traceback for internal errors.")
@weights_flags
@allow_option
@messages_option
def check_cmd(dir_in, dir_rendered, keep_inputs, no_model_node_selector, locked, lock_path, strict, debug,
              pod_monitors, api_versions=(), kube_version=None, validate=False, cluster_config=None):
    """Fail (exit 1, unified diff on stdout) when DIR_RENDERED is not what
    `omerender render DIR_IN --output-dir DIR_RENDERED` would write now.

    Reads only regular files inside DIR_RENDERED: a symbolic link or a special file there is an error."""
    if looks_like_file(dir_rendered):
        raise click.BadParameter(f"{dir_rendered} is named like a file, and this takes the directory that "
                                 f"`omerender render --output-dir` wrote", param_hint="'DIR_RENDERED'")
    options, named = render_options(keep_inputs, no_model_node_selector, locked, pod_monitors,
                                    built_overlay(dir_in))
    flags = "".join(f" {flag}" for flag in named if flag != "--locked")  # the fix re-renders; it need not lock
    flags += f" --lock {lock_path}" if lock_path else ""
    flags += f" --cluster-config {cluster_config}" if cluster_config else ""
    flags += "".join(f" --api-versions {shlex.quote(value)}" for value in api_versions)
    flags += f" --kube-version {shlex.quote(kube_version)}" if kube_version else ""
    notes: list[Message] = []

    def run():
        # kept_texts: the pod specs the render shares are written once each when the files are compared, as in render
        with for_cluster(kube_version), kept_texts():
            inputs, built = read_inputs([dir_in], cluster_config, notes, options, named, lock_path, inputs_only=False)
            if built is not None:  # built as render builds it
                result = built.result
            else:
                lock = lock_from_inputs(inputs) or read_lock(find_lock([dir_in], lock_path))
                result = render(inputs, options, lock)
            check_cluster(result.objects, api_versions, kube_version, validate)
            if not os.path.lexists(dir_rendered):
                return result, None
            return result, out_of_date(result.objects, dir_rendered, origins(inputs))

    value, failures = run_guarded(run, debug)
    report_run(notes, failures, lambda: value[0].messages, strict)
    result, diff = value
    if diff is None:
        fail([missing_dir_message(dir_in, dir_rendered, flags)])
    if diff:
        sys.stdout.write(diff)
        fail([Message("error", f"{dir_rendered} is out of date with {dir_in}; run: "
                               f"omerender render {dir_in}{flags} --output-dir {dir_rendered}")])
