"""The ``omerender`` command line."""
from __future__ import annotations

import importlib
import os
import sys

import click

from omerender import __version__, version_text, without_cycle_collector
from omerender.errors import Message, run_guarded, strict_error
from omerender.gitops.overlays import read_inputs
from omerender.ome.pinning.lockfile import find_lock, lock_from_inputs, read_lock
from omerender.ome.render import render
from omerender.yamlio.emit import Spool, write_spliced, write_stream
from .shell import (allow_option, allowed, built_overlay, check_cluster, cluster_config_option, cluster_flags,
                    deprecated_spelling, fail, for_cluster, leave_out_infos, messages_option, relay, render_options,
                    report_run, say, weights_flags)

RENDER_EXAMPLE = """
\b
Examples:
  omerender render fixtures/quickstart
  omerender render runtimes/ models/ isvc.yaml > rendered.yaml
  cat all.yaml | omerender render - --no-model-node-selector
"""


class _LazyGroup(click.Group):
    """Imports a command's module when that command runs (or help lists it): ``render`` and ``fn`` start
    without the modules of the other commands, which a render at scale pays for on every call."""

    LAZY = {"explain": ("explain", "explain"), "lock": ("lock", "lock"), "tree": ("tree", "tree"),
            "build": ("build", "build_cmd"), "check": ("check", "check_cmd"),
            "model-info": ("modelinfo", "model_info"), "diff": ("diff", "diff_cmd"),
            "argocd": ("argocd", "argocd"), "config": ("config", "config_cmd"),
            "validate": ("validate", "validate_cmd")}

    def list_commands(self, ctx):
        return sorted({*super().list_commands(ctx), *self.LAZY})

    def get_command(self, ctx, name):
        if name in self.LAZY and name not in self.commands:
            module, attribute = self.LAZY[name]
            self.add_command(getattr(importlib.import_module(f"{__package__}.{module}"), attribute), name)
        return super().get_command(ctx, name)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]},
             epilog="\b\nExample:\n  omerender render fixtures/quickstart | kubectl apply -f -")
@click.version_option(__version__, prog_name="omerender", message=version_text("%(prog)s").rstrip("\n"))
def cli():
    """Render OME serving objects (runtimes, models, InferenceServices) into the
    Kubernetes objects the OME controller would create."""


@cli.command("render", epilog=RENDER_EXAMPLE)
@click.argument("paths", nargs=-1, metavar="[PATH]...")
@click.option("--keep-inputs", is_flag=True, help="Keep the OME input objects in the output.")
@click.option("--no-model-node-selector", is_flag=True,
              help="Leave out the model-ready node selector (for clusters without the OME model agent).")
@click.option("--locked", is_flag=True,
              help="Fail when omerender.lock.yaml is out of date (run \"omerender lock update\").")
@click.option("--pod-monitors", is_flag=True,
              help="Render the PodMonitor OME v1.3 creates for each component (clusters with the Prometheus "
                   "Operator's PodMonitor CRD, which OME v1.3 needs).")
@click.option("--lock", "lock_path", metavar="FILE",
              help="The lock file (default: omerender.lock.yaml in, or beside, the first PATH).")
@click.option("--output-dir", metavar="DIR",
              help="Write one file per object plus a kustomization.yaml listing them into DIR (rendered manifests "
                   "for Flux) instead of stdout.")
@click.option("-o", "old_output_dir", metavar="DIR", hidden=True)
@click.option("--strict", is_flag=True, help="Fail (exit 1, nothing written) when there is any warning; for CI.")
@cluster_flags
@cluster_config_option
@click.option("--debug", is_flag=True, help="Show a traceback for internal errors.")
@weights_flags
@allow_option
@messages_option
def render_cmd(paths, keep_inputs, no_model_node_selector, locked, lock_path, output_dir, old_output_dir, strict,
               debug, pod_monitors=False, api_versions=(), kube_version=None, validate=False, cluster_config=None):
    """Render YAML files, directories (recursively) or - (stdin); no PATH means ".".

    A directory whose kustomization changes what it lists (an overlay: patches, components,
    namespace, a base elsewhere...) is built as `omerender build` builds it, and is the only PATH.

    Writes the rendered objects to stdout as one YAML stream; errors, warnings and
    notices go to stderr. Exit status 1 on any error (with --strict, on any warning too),
    with nothing on stdout.
    """
    paths = paths or (".",)
    options, flags = render_options(keep_inputs, no_model_node_selector, locked, pod_monitors,
                                    built_overlay(*paths))
    output_dir = output_dir_option(output_dir, old_output_dir)
    notes: list[Message] = []
    config_strict: list = []   # an overlay's OMERender config's (strict, allow), which --strict beside it adds to
    # each InferenceService's objects are dumped as they are rendered (held compressed until the render succeeds)
    # for stdout or --output-dir, unless a check of the whole output needs them as objects
    streams = not (api_versions or kube_version or validate)
    sinks: list = []

    def run():
        with for_cluster(kube_version):
            inputs, built = read_inputs(list(paths), cluster_config, notes, options, flags, lock_path,
                                        inputs_only=False)
            if built is not None:
                result = built.result
                leave_out_infos(built.quiet)
                relay(built.tool_stderr)
                config_strict.append((built.strict, built.allow))
            else:
                lock = lock_from_inputs(inputs) or read_lock(find_lock(list(paths), lock_path))
                if streams:
                    sinks.append(Spool() if output_dir is None else _dir_spool(inputs))
                result = render(inputs, options, lock, sinks[0] if sinks else None)
        check_cluster(result.objects, api_versions, kube_version, validate, inputs)
        if output_dir is not None and not (strict and strict_error([*notes, *result.messages], "--strict", allowed())):
            from omerender.gitops.outdir import origins, write_files, write_rendered_dir
            if result.streamed_at is None:
                write_rendered_dir(result.objects, output_dir, origins(inputs), _waiting)
            else:
                at = result.streamed_at
                write_files(sinks[0].files(result.objects[:at], result.objects[at:]), output_dir, _waiting)
        return result

    result, failures = run_guarded(run, debug)
    by_config, config_allow = config_strict[0] if config_strict else (False, frozenset())
    report_run(notes, failures, lambda: result.messages, strict or by_config, allow=allowed() | config_allow,
               switch="--strict" if strict else "strict: true in the OMERender config")
    if output_dir is None:
        _, failures = run_guarded(lambda: _write(result, sinks[0] if sinks else None, sys.stdout), debug)
        if failures:  # a string the writer cannot write as UTF-8 (emit.not_utf8_error)
            fail(failures)


def _dir_spool(inputs):
    from omerender.gitops.outdir import origins
    from omerender.gitops.outspool import DirSpool
    return DirSpool(origins(inputs))


def _write(result, spool: Spool | None, out) -> None:
    if result.streamed_at is None:
        write_stream(result.objects, out)
    else:
        at = result.streamed_at
        write_spliced(result.objects[:at], spool, result.objects[at:], out)


def output_dir_option(output_dir: str | None, old_output_dir: str | None) -> str | None:
    """``--output-dir DIR``, or the deprecated ``-o DIR`` with a warning; a DIR named like a file is an error
    (``-o out.yaml`` once made a directory named out.yaml)."""
    output_dir = deprecated_spelling("-o DIR", "--output-dir", output_dir, old_output_dir)
    if output_dir is not None and looks_like_file(output_dir):
        raise click.BadParameter(f"{output_dir} is named like a file, and this takes a directory; for one YAML "
                                 f"stream in a file run: omerender render [PATH]... > {output_dir}",
                                 param_hint="'--output-dir'")
    return output_dir


def looks_like_file(path: str) -> bool:
    """A path named like a YAML or JSON file that is not an existing directory."""
    return path.lower().endswith((".yaml", ".yml", ".json")) and not os.path.isdir(path)


render_cmd.name = "render"


def _waiting(lock_file: str) -> None:
    say(Message("info", "another omerender render is writing this directory; waiting for it", file=lock_file,
                code="waiting-for-lock"))


@cli.command("fn", add_help_option=False, context_settings={"ignore_unknown_options": True},
             epilog="\b\nExample:\n  kustomize build --enable-alpha-plugins --enable-exec overlays/prod")
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def fn_cmd(args):
    """Run as a KRM function: a ResourceList on stdin, a ResourceList on stdout."""
    from .fn import main as fn_main
    fn_main(list(args), prog="omerender fn")  # its help is omerender-fn's, in full


def main():
    without_cycle_collector()
    cli(prog_name="omerender")


if __name__ == "__main__":
    main()
