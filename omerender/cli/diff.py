"""``omerender diff BASE HEAD [--] [PATH]...``: the review of a change to runtimes, models or InferenceServices."""
from __future__ import annotations

import functools
import sys
from dataclasses import replace

import click

from omerender.diff import diff
from omerender.diff.bypath import (as_json_by_path, as_markdown_by_path, as_text_by_path, changed_paths,
                                   cluster_configs_by_path)
from omerender.diff.markdown import as_markdown
from omerender.diff.report import as_json, as_text
from omerender.diff.sides import SideError, overlays_among, read_side
from omerender.diff.values import printable
from omerender.errors import Message, OmeError, run_guarded
from omerender.ome.shared import across_renders
from .shell import (CLUSTER_CONFIG_HELP, allow_option, allowed, built_overlay, check_cluster, cluster_flags, fail,
                    fail_if_strict, for_cluster, github_mode, messages_option, render_options, say, weights_flags)

EXIT_CHANGED, EXIT_ERROR = 1, 2
EXAMPLE = """
\b
Examples:
  omerender diff origin/main HEAD deploy/
  omerender diff origin/main HEAD -- deploy/
  omerender diff main . --format markdown > comment.md
  omerender diff old/ new/ --format json --exit-code
  omerender diff -U 3 HEAD~1 HEAD
  omerender diff origin/main HEAD -- clusters/east clusters/west
"""


class _GitArguments(click.Command):
    """``BASE HEAD -- PATH...`` as git reads it: click drops the ``--``, so where it stood is found here. What
    follows it is PATHs whatever they look like, and ``separated`` tells the sides that BASE and HEAD are
    revisions where they name one."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        at = _separator(args, self.params)
        if at is None:
            rest = super().parse_args(ctx, args)
            ctx.params["separated"] = False
            return rest
        rest = super().parse_args(ctx, args[:at])
        if ctx.params["paths"]:
            ctx.fail(f"only BASE and HEAD go before --; put {ctx.params['paths'][0]} after it")
        ctx.params.update(paths=tuple(args[at + 1:]), separated=True)
        return rest


def _separator(args: list[str], params: list[click.Parameter]) -> int | None:
    """Where ``--`` stands among ``args``, passing over the values of options (``--lock --`` names a file)."""
    valued = {name for param in params if isinstance(param, click.Option) and not param.is_flag
              for name in param.opts}
    index = 0
    while index < len(args):
        if args[index] == "--":
            return index
        index += 2 if args[index] in valued else 1
    return None


@click.command("diff", cls=_GitArguments, epilog=EXAMPLE)
@click.argument("base")
@click.argument("head")
@click.argument("paths", nargs=-1, metavar="[--] [PATH]...")
@click.option("-o", "--output", "--format", "output_format", type=click.Choice(["text", "markdown", "json"]),
              default="text", show_default=True, help="text for terminals, markdown for a pull-request comment, json for tools.")
@click.option("-U", "--unified", "context", type=click.IntRange(0, 1000), metavar="N",
              help="Add unified diffs of the changed objects' YAML with N lines of context, each InferenceService "
                   "on its own (without -U, those with the same changes share one section; in JSON: each "
                   "object's unified, a list of lines).")
@click.option("--exit-code", is_flag=True, help="Exit 1 when something changes, 0 when nothing does.")
@click.option("--keep-inputs", is_flag=True, help="Compare the OME input objects too (as pass-through objects).")
@click.option("--no-model-node-selector", is_flag=True,
              help="Leave out the model-ready node selector (for clusters without the OME model agent).")
@click.option("--locked", is_flag=True, help="Fail when a side's omerender.lock.yaml is out of date.")
@click.option("--pod-monitors", is_flag=True,
              help="Render the PodMonitor OME v1.3 creates for each component (clusters with the Prometheus "
                   "Operator's PodMonitor CRD, which OME v1.3 needs).")
@click.option("--lock", "lock_path", metavar="FILE",
              help="The lock file (default: omerender.lock.yaml in, or beside, the first PATH); for a revision, "
                   "FILE as it is in that revision.")
@click.option("--strict", is_flag=True,
              help="Fail (exit 2, nothing on stdout) when head's render has any warning, each printed; for CI.")
@click.option("--cluster-config", "cluster_configs", metavar="FILE", multiple=True,
              help=CLUSTER_CONFIG_HELP + " For a revision, FILE as it is in that revision; for two directories, "
                                         "the same FILE serves both. With several PATHs diffed each on its own "
                                         "(an overlay among them), repeat it: each FILE serves the PATH that "
                                         "holds it (one FILE outside every PATH serves them all).")
@cluster_flags
@click.option("--debug", is_flag=True, help="Show a traceback for internal errors.")
@weights_flags
@allow_option
@messages_option
def diff_cmd(base, head, paths, output_format, context, exit_code, keep_inputs, no_model_node_selector, locked,
             lock_path, strict, debug, separated, pod_monitors, api_versions=(), kube_version=None, validate=False,
             cluster_configs=()):
    """Render BASE and HEAD and report what changes for each InferenceService: objects and fields (a changed
    scalar as old -> new, a value over 60 characters shortened around "…"; -U for whole objects), pod
    rollouts, runtime (and why it changed), accelerator class, and the fleet's GPUs at min and max replicas.

    BASE and HEAD are git revisions of the repository around the current directory, or two directories or
    files. PATH limits both sides ("." if none). As in git, a name that is both a revision and a path is an
    error: put -- after HEAD to read it as the revision, or write ./NAME for the path. A revision is read
    from git without touching the work tree. A PATH that is a kustomize overlay is built on both sides as
    `omerender build` builds it. Several PATHs with an overlay among them (one per cluster, say) are each built
    and diffed on their own: the report names the PATHs that change, then gives each PATH's report under its
    name; repeat --cluster-config to give each PATH the FILE inside it.

    Exit status: 0, or with --exit-code 1 when something changes; 2 on any error, with the side named
    (with --strict, on any warning of head's render too: what would ship).
    """
    options, flags = render_options(keep_inputs, no_model_node_selector, locked, pod_monitors,
                                    built_overlay(base, head, *paths))
    read = functools.partial(_read_sides, base, head, options=options, lock_path=lock_path, debug=debug,
                             separated=separated, flags=flags)
    each = _each_on_its_own(base, head, paths, separated)
    cluster, failures = run_guarded(lambda: for_cluster(kube_version), debug)
    if failures:
        fail(failures, EXIT_ERROR)
    with cluster, across_renders():   # base's pods serve head wherever their build reads the same
        if each:  # each warning named with its PATH under --strict: a shared file's warning may differ per cluster
            renders = [(f"head ({printable(path)})", path, read([path], config))
                       for path, config in _cluster_config_of_each(paths, cluster_configs).items()]
        else:
            renders = [("head", None, read(list(paths), _one_cluster_config(cluster_configs)))]
    _, failures = run_guarded(lambda: [check_cluster(sides[1].result.objects, api_versions, kube_version, validate)
                                       for _, _, sides in renders], debug)
    if failures:
        fail(failures, EXIT_ERROR)
    if strict:
        _fail_on_warnings(*[(side, sides[1].result.messages) for side, _, sides in renders])
    results, messages = run_guarded(lambda: [(path, diff(*sides)) for _, path, sides in renders], debug)
    if messages:
        fail(messages, EXIT_ERROR)
    if each:
        show = {"json": as_json_by_path, "markdown": as_markdown_by_path}.get(output_format, as_text_by_path)
        sys.stdout.write(show(results, context))
    else:
        show = {"json": as_json, "markdown": as_markdown}.get(output_format, as_text)
        sys.stdout.write(show(results[0][1], context))
    sys.exit(EXIT_CHANGED if exit_code and changed_paths(results) else 0)


def _read_sides(base: str, head: str, paths: list[str], cluster_config: str | None, *, options, lock_path: str | None,
                debug: bool, separated: bool, flags: tuple[str, ...]) -> list:
    """Both sides rendered (exit 2 naming the side on any error, or a PATH in neither)."""
    failures = []
    sides = []
    for label, source in (("base", base), ("head", head)):
        try:
            sides.append(read_side(label, source, paths, options, lock_path, debug, separated, flags,
                                   cluster_config))
        except SideError as err:
            failures += err.messages
    if failures:
        fail(failures, EXIT_ERROR)
    nowhere = [path for path in sides[0].missing if path in sides[1].missing]
    if nowhere:  # a misspelt PATH would otherwise read as "no changes"
        fail([Message("error", f"{path}: in neither {base} nor {head}") for path in nowhere], EXIT_ERROR)
    return sides


def _each_on_its_own(base: str, head: str, paths: tuple[str, ...], separated: bool) -> bool:
    """Several PATHs with a kustomize overlay among them, on either side: each is built and diffed on its own
    (an overlay is built alone, and which cluster a change reaches is what the review asks)."""
    if len(paths) < 2:
        return False
    failures = []
    for label, source in (("base", base), ("head", head)):
        try:
            if overlays_among(label, source, list(paths), separated):
                return True
        except SideError as err:
            failures += err.messages
    if failures:
        fail(failures, EXIT_ERROR)
    return False


def _one_cluster_config(cluster_configs: tuple[str, ...]) -> str | None:
    """The one --cluster-config FILE of a diff of one render per side, if given."""
    if len(cluster_configs) > 1:
        fail([Message("error", f"--cluster-config is given {len(cluster_configs)} times: give it once, or give "
                               "several PATHs with an overlay among them, each diffed on its own with the FILE "
                               "it holds")], EXIT_ERROR)
    return cluster_configs[0] if cluster_configs else None


def _cluster_config_of_each(paths: tuple[str, ...], cluster_configs: tuple[str, ...]) -> dict[str, str | None]:
    """Each PATH diffed on its own, with the --cluster-config FILE it holds (exit 2 on a PATH given twice, or
    FILEs that don't pair with the PATHs)."""
    twice = sorted({p for p in paths if paths.count(p) > 1})
    if twice:
        fail([Message("error", f"{printable(twice[0])}: given twice as a PATH")], EXIT_ERROR)
    try:
        return cluster_configs_by_path(list(paths), list(cluster_configs))
    except OmeError as err:
        fail([err.message()], EXIT_ERROR)


def _named(message: Message, side: str) -> Message:
    """``message`` named as its render's: before its file, or, as an annotation, whose ``file=`` must stay the
    file, before its text."""
    if github_mode() and message.file:
        return replace(message, text=f"{side}: {message.text}")
    return replace(message, file=f"{side}: {message.file}" if message.file else side)


def _fail_on_warnings(*renders: tuple[str, list[Message]]) -> None:
    """--strict: print head's warnings, each named as its render's (``head``, or ``head (PATH)``), and exit 2 when
    there is one."""
    warnings = [_named(m, side) for side, messages in renders
                for m in messages if m.severity == "warning" and (m.code not in allowed() or m.folded_codes)]
    for message in warnings:
        say(message)
    fail_if_strict(True, warnings, EXIT_ERROR)
