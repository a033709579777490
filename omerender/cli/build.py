"""``omerender build DIR``: a kustomize build that runs no program the repository names (see
:mod:`omerender.gitops.kbuild`), falling back to ``kubectl kustomize``."""
from __future__ import annotations

import os
import sys

import click

from omerender.errors import Message, relayed_warning, run_guarded
from omerender.gitops.buildrun import (BOUNDARY_HINT, Interrupted, ToolFailed, build, default_boundary,
                                       remote_setting, timeout_setting, write_output)
from omerender.gitops.clusterfile import OPTION, checked
from omerender.yamlio.emit import dump_stream
from omerender.yamlio.reading import find_kustomization
from omerender.gitops.overlays import RENDER_FLAGS
from .shell import (allow_option, allowed, check_cluster, cluster_config_option, cluster_flags, deprecated_spelling,
                    fail, fail_if_strict, for_cluster, leave_out_infos, messages_option, relay, render_options, say,
                    weights_flags)


@click.command("build", epilog="\b\nExamples:\n  omerender build overlays/prod\n"
                               "  omerender build overlays/prod --verbose --output-file prod.yaml")
@click.argument("directory", metavar="DIR")
@click.option("--output-file", "output", metavar="FILE", help="Write the objects to FILE (atomically) instead of stdout.")
@click.option("-o", "--output", "old_output", metavar="FILE", hidden=True)
@click.option("--root", metavar="DIR", help="Read nothing outside this directory (default: the Git work tree "
                                            "holding DIR, else the working directory).")
@click.option("--timeout", metavar="SECONDS", help="Stop kustomize (and fail) after this long (default: "
                                                   "$OMERENDER_BUILD_TIMEOUT, else 10 s under "
                                                   "$ARGOCD_EXEC_TIMEOUT, else 80).")
@click.option("--no-remote", is_flag=True, help="Refuse remote bases (https://…, git@…) instead of letting "
                                                 "kustomize fetch them (also: OMERENDER_BUILD_REMOTE=off).")
@click.option("-v", "--verbose", is_flag=True, help="Say which path renders DIR, and why.")
@click.option("--strict", is_flag=True, help="Fail (exit 1, nothing written) when there is any warning; for CI.")
@cluster_flags
@cluster_config_option
@click.option("--debug", is_flag=True, help="Show a traceback for internal errors.")
@weights_flags
@allow_option
@messages_option
def build_cmd(directory, output, old_output, root, timeout, no_remote, verbose, strict, debug, api_versions=(),
              kube_version=None, validate=False, cluster_config=None):
    """Build the kustomization DIR and render its OME objects; run no program the repository names.

    The default (and fast) path: `kustomize build` with every plugin kind off and the OMERender
    transformer left out, then omerender's render of the result. Where something transforms the
    rendered objects (an overlay above the kustomization that lists OMERender, a transformer after
    it, a rename kustomize fixes last), kustomize runs the installed omerender function instead.

    Every function or plugin reference in the tree must be omerender's or a kustomize builtin;
    anything else is refused. A git repository on this machine (file://…) is refused as a base;
    remote bases over the network are fetched by kustomize. Uses kustomize, else `kubectl kustomize`."""
    output = deprecated_spelling("-o/--output FILE", "--output-file", output, old_output)
    options, named = render_options(False, False, False, overlay=find_kustomization(directory) is not None)

    def run():  # the flags add to the tree's OMERender configs, or stand alone where it holds none
        boundary = root or default_boundary(directory)
        if cluster_config is not None:
            checked(cluster_config, OPTION, boundary, f"{boundary}, what the build may read (--root)")
        with for_cluster(kube_version):
            built = build(directory, boundary, options if named else None, named, hint=BOUNDARY_HINT,
                          timeout=timeout_setting(timeout, os.environ), remote=remote_setting(no_remote, os.environ),
                          flags_from=RENDER_FLAGS, extra=(cluster_config,) if cluster_config else (),
                          extra_name=OPTION)
        check_cluster(built.objects if built.objects is not None else built.stream_objects or [], api_versions,
                      kube_version, validate)
        return built

    built = built_or_fail(run, debug)
    leave_out_infos(built.quiet)
    if verbose:
        say(Message("info", f"{built.plan.path} path: {built.plan.reason}", code="build-path"))
    relay(built.tool_stderr)
    for message in built.messages:
        say(message)
    text, failures = run_guarded(lambda: dump_stream(built.objects), debug) if built.objects is not None \
        else (built.stream, None)
    if failures:  # a string the writer cannot write as UTF-8 (emit.not_utf8_error)
        fail(failures)
    warnings = list(built.messages) + function_warnings(built.tool_stderr)
    fail_if_strict(strict or built.strict, warnings, allow=allowed() | built.allow,
                   switch="--strict" if strict else "strict: true in the OMERender config")
    if output:
        _, failures = run_guarded(lambda: write_output(output, text), debug)
        if failures:
            fail(failures)
    else:
        sys.stdout.write(text)


def function_warnings(tool_stderr: str) -> list[Message]:
    """The warnings omerender's function wrote to kustomize's stderr (the function path's only report of them)."""
    return [message for message in map(relayed_warning, tool_stderr.splitlines()) if message is not None]


def built_or_fail(action, debug: bool = False):
    """Run a build; on failure print kustomize's own stderr, then the error lines, and exit 1 (128 + the
    signal's number when a signal stopped it)."""
    tool_stderr, status = [], [1]

    def guarded():
        try:
            return action()
        except ToolFailed as err:
            tool_stderr.append(err.stderr)
            raise
        except Interrupted as err:
            status[0] = err.status
            raise

    value, failures = run_guarded(guarded, debug)
    if failures:
        sys.stderr.write("".join(tool_stderr))
        fail(failures, status[0])
    return value
