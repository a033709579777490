"""What every command shares: printing messages and exiting with a status."""
from __future__ import annotations

import sys
from typing import Iterable

import click

from omerender.codes import parse_allow
from omerender.errors import Message, OmeError, relayed_warning, strict_error
from omerender.ome.render import Options
from omerender.ome.frontend import CLI_FRONT, FrontEnd
from omerender.ome.weights.options import weights_options
from omerender.ome.weights.settings import DEFAULT_IMAGE
from .workflow import annotate, github_line, guard_streams  # noqa: F401 - github_line: the form, for callers

_WEIGHTS = "omerender.weights"
WEIGHTS_FLAGS = (
    ("mode", dict(flag="--model-weights", type=click.Choice(["agent", "download"]),
     help="Who puts the model weights on the nodes: agent (default: OME's model agent runs on the nodes) or download "
          "(no OME at all: a PersistentVolumeClaim and a download Job per model and namespace; "
          "docs/how-to/model-weights.md). An overlay's OMERender config may set it instead (modelWeights): the "
          "download flags below then add to the config's settings.")),
    ("storage_class", dict(flag="--weights-storage-class", metavar="NAME",
     help="With --model-weights download: the claims' StorageClass (default: the cluster's default).")),
    ("access_mode", dict(flag="--weights-access-mode", metavar="MODE",
     help="With --model-weights download: the claims' access mode, ReadWriteOnce (default), ReadWriteMany or "
          "ReadWriteOncePod.")),
    ("image", dict(flag="--downloader-image", metavar="IMAGE",
     help=f"With --model-weights download: the image of the download Job and the pods' wait step (it needs python3 "
          f"and huggingface_hub; default {DEFAULT_IMAGE}).")),
    ("node_selector", dict(flag="--weights-node-selector", metavar="KEY=VALUE", multiple=True,
     help="With --model-weights download: run the download Jobs on nodes with this label (repeatable) instead of "
          "where the pods that mount each claim run.")),
    ("tolerations", dict(flag="--weights-toleration", metavar="KEY[=VALUE]:EFFECT", multiple=True,
     help="With --model-weights download: the download Jobs tolerate this taint (repeatable; as kubectl taint writes "
          "it) instead of the serving pods' tolerations.")),
    ("download_resources", dict(flag="--downloader-resources", metavar="LIST",
     help="With --model-weights download: the download container's requests and limits, e.g. "
          "requests.cpu=1,limits.memory=8Gi, over the defaults (requests cpu 500m, memory 1Gi; limits cpu 2, "
          "memory 4Gi).")),
    ("wait_resources", dict(flag="--weights-wait-resources", metavar="LIST",
     help="With --model-weights download: the pods' wait step's requests and limits, as --downloader-resources "
          "(defaults: requests cpu 10m, memory 64Mi; limits cpu 100m, memory 128Mi).")),
    ("deadline", dict(flag="--download-deadline", metavar="SECONDS",
     help="With --model-weights download: the download Job's activeDeadlineSeconds (default 28800, 8 hours).")),
    ("env", dict(flag="--downloader-env", metavar="NAME=VALUE", multiple=True,
     help="With --model-weights download: a variable of the downloader (repeatable), e.g. HF_ENDPOINT or "
          "HTTPS_PROXY; never a credential (use --downloader-env-from secret/NAME).")),
    ("env_from", dict(flag="--downloader-env-from", metavar="configmap/NAME|secret/NAME", multiple=True,
     help="With --model-weights download: every key of this ConfigMap or Secret as a variable of the downloader "
          "(repeatable).")),
)


CLUSTER_FLAGS = (
    click.option("-a", "--api-versions", "api_versions", multiple=True, metavar="LIST",
                 help="The API versions the target cluster serves (as kubectl api-versions prints them; comma-separated "
                      "or repeated, as helm template has it): an object of any other fails the render, naming what to "
                      "install."),
    click.option("--kube-version", metavar="VERSION",
                 help="The target cluster's Kubernetes version (e.g. 1.30.2; default: the newest omerender ships the "
                      "schemas of): input pod fields are checked against that version's schema, and an object of a "
                      "built-in API it is too old for fails the render."),
    click.option("--validate", "validate", is_flag=True,
                 help="Check every object written as `omerender validate` does (the schemas of --kube-version, the "
                      "pinned CRDs and their CEL rules): a problem fails the render; for CI."),
)


def cluster_flags(command):
    """``--api-versions`` and ``--kube-version``, on every command that renders."""
    for option in reversed(CLUSTER_FLAGS):
        command = option(command)
    return command


def for_cluster(kube_version: str | None, source: str = "--kube-version"):
    """A context in which inputs are checked against the schemas of ``kube_version`` (an error if it is none)."""
    from omerender.kube.apiversions import parse_kube_version
    from omerender.kube.k8stypes import kube_version_in_use, table_version
    return kube_version_in_use(table_version(parse_kube_version(kube_version, source)))


def check_cluster(objects: list[dict], api_versions: tuple[str, ...], kube_version: str | None,
                  validate: bool = False, inputs=None) -> None:
    """Raise the errors for objects the cluster that --api-versions and --kube-version describe doesn't serve (each
    placed on the input it came from, where ``inputs`` says), and with --validate for every problem its API server
    would find in them."""
    if not api_versions and not kube_version and not validate:
        return
    from omerender.errors import OmeErrors
    from omerender.kube.apiversions import parse_api_versions, parse_kube_version, unserved
    from omerender.ome.load import source_of
    served = parse_api_versions(list(api_versions), "--api-versions")
    version = parse_kube_version(kube_version, "--kube-version")
    errors = unserved(objects, served, version, "not in --api-versions", source_of(inputs))
    if validate:
        from omerender.kube.k8stypes import table_version
        from omerender.kube.validation import rendered_errors
        errors += rendered_errors(objects, table_version(version))
    if errors:
        raise OmeErrors(errors)


def weights_flags(command):
    """The ``--model-weights`` options, on ``render``, ``check``, ``diff`` and ``build``; their values are kept for
    :func:`render_options`."""
    for key, attrs in reversed(WEIGHTS_FLAGS):
        def keep(ctx, _param, value, key=key):
            ctx.meta.setdefault(_WEIGHTS, {})[key] = value if value != () else None
        attrs = dict(attrs)
        command = click.option(attrs.pop("flag"), **attrs, default=None, expose_value=False, callback=keep)(command)
    return command


def given_weights() -> dict:
    """The weights flags' values as given (None: not given)."""
    return dict(_meta(_WEIGHTS, {}))


def render_options(keep_inputs: bool, no_model_node_selector: bool, locked: bool,
                   pod_monitors: bool = False, overlay: bool = False) -> tuple[Options, tuple[str, ...]]:
    """The render options of ``render``, ``check``, ``diff`` and ``build``, and the flags that gave them (they add
    to what an overlay's OMERender config sets, which they may not contradict; ``check`` prints them in its fix).
    ``overlay``: the inputs are built, so a config may set the weights mode the flags' settings need."""
    weights = given_weights()
    mode, settings = cli_weights(weights, overlay)
    options = Options(keep_inputs=keep_inputs, model_node_selector=not no_model_node_selector, locked=locked,
                      pod_monitors=pod_monitors, model_weights=mode, weights=settings)
    given = (("keep_inputs", keep_inputs), ("no_model_node_selector", no_model_node_selector), ("locked", locked),
             ("pod_monitors", pod_monitors))
    return options, tuple(CLI_FRONT.given(key) for key, on in given if on) + weights_flag_names(weights)


def cli_weights(given: dict, overlay: bool = False):
    """The checked mode and settings; a bad value or a download setting without download is a usage error (with
    ``overlay``, the latter is the build's to decide: its OMERender config may set the mode)."""
    try:
        return weights_options(given, mode_elsewhere=overlay)
    except OmeError as err:
        raise click.UsageError(err.text) from None


def weights_flag_names(given: dict, front: FrontEnd = CLI_FRONT) -> tuple[str, ...]:
    """The weights settings as given, each with its value, as ``front`` writes it."""
    out = []
    for key, value in ((key, given.get(key)) for key, _ in WEIGHTS_FLAGS):
        for item in (value if isinstance(value, (list, tuple)) else [value]):
            if item is not None:
                out.append(front.given(key, item))
    return tuple(out)


CLUSTER_CONFIG_HELP = ("A file holding OME's ConfigMap inferenceservice-config (kubectl get configmap "
                       "inferenceservice-config -n ome -o yaml), read beside the inputs as the cluster configuration "
                       "(the Argo CD plugin's cluster-config parameter); an overlay's build gets it too. A ConfigMap "
                       "in another file among the inputs as well is an error (FILE itself among them is read once). "
                       "Without either, the Helm chart's defaults apply, and a render says so once.")


def cluster_config_option(command):
    """``--cluster-config FILE``, the same on every command that reads OME objects."""
    return click.option("--cluster-config", "cluster_config", metavar="FILE", help=CLUSTER_CONFIG_HELP)(command)


_ALLOW = "omerender.allow"
_FORM = "omerender.messages"
_QUIET = "omerender.quiet"
ALLOW_HELP = ("Accept the warnings of these codes under --strict (comma-separated or repeated; "
              "docs/reference/message-codes.md lists them).")
MESSAGES_HELP = ("How to print errors, warnings and infos on stderr: text (the default), or github for GitHub "
                 "Actions annotations (::warning file=...,line=...::...), shown on the pull request's lines; then any "
                 "other line that GitHub would read as a workflow command is fenced off with ::stop-commands::.")
QUIET_HELP = "Leave out info lines (::notice annotations with --messages github); errors and warnings are printed."


def allowed_codes(values: Iterable[str], where: str = "--allow") -> frozenset[str]:
    """The codes of ``--allow CODE[,CODE...]`` (repeatable); an unknown one is a usage error with the near miss."""
    codes, unknown = parse_allow(values, where)
    if unknown:
        raise click.UsageError(unknown[0])
    return codes


def allow_option(command):
    """``--allow CODE[,CODE...]`` on every command that takes ``--strict``."""
    def keep(ctx, _param, values):
        ctx.meta[_ALLOW] = allowed_codes(values)
    return click.option("--allow", metavar="CODE[,CODE...]", multiple=True, expose_value=False, callback=keep,
                        help=ALLOW_HELP)(command)


def messages_option(command):
    """``--messages text|github`` and ``-q/--quiet`` on every command that prints messages."""
    def keep(ctx, _param, value):
        set_messages(ctx, value)

    def keep_quiet(ctx, _param, value):
        ctx.meta[_QUIET] = value
    command = click.option("-q", "--quiet", is_flag=True, expose_value=False, callback=keep_quiet,
                           help=QUIET_HELP)(command)
    return click.option("--messages", type=click.Choice(["text", "github"]), default="text", show_default=True,
                        expose_value=False, callback=keep, help=MESSAGES_HELP)(command)


def set_messages(ctx: click.Context, form: str, quiet: bool | None = None) -> None:
    """Print messages in ``form`` from now on (github: stdout and stderr guarded until the command ends, see
    :mod:`.workflow`); ``quiet``, when given: leave out infos."""
    ctx.meta[_FORM] = form
    if quiet is not None:
        ctx.meta[_QUIET] = quiet
    if form == "github":
        ctx.call_on_close(guard_streams())


def _meta(key: str, default):
    ctx = click.get_current_context(silent=True)
    return ctx.meta.get(key, default) if ctx is not None else default


def github_mode() -> bool:
    """Whether messages are printed as GitHub Actions annotations (``--messages github``)."""
    return _meta(_FORM, "text") == "github"


def leave_out_infos(quiet: bool) -> None:
    """``quiet: true`` in the OMERender config a build read: print no infos from now on, as ``--quiet``."""
    ctx = click.get_current_context(silent=True)
    if quiet and ctx is not None:
        ctx.meta[_QUIET] = True


def allowed() -> frozenset[str]:
    """The codes this command's ``--allow`` accepts."""
    return _meta(_ALLOW, frozenset())


def say(message: Message) -> None:
    """Print one message on stderr in the form ``--messages`` asked for (an info not at all under ``--quiet``)."""
    if message.severity == "info" and _meta(_QUIET, False):
        return
    if github_mode():
        annotate(message)
    else:
        click.echo(message.line(), err=True)


_LINES_A_WRITE = 1000


def say_all(messages: Iterable[Message]) -> None:
    """:func:`say` for each message; in the text form the lines go to stderr a thousand at a time, not one write
    (and flush) each: a large render prints thousands, and holding them all would add to its peak memory."""
    if github_mode():
        for message in messages:
            say(message)
        return
    quiet = _meta(_QUIET, False)
    lines = []
    for message in messages:
        if not (quiet and message.severity == "info"):
            lines.append(message.line())
            if len(lines) == _LINES_A_WRITE:
                click.echo("\n".join(lines), err=True)
                lines = []
    if lines:
        click.echo("\n".join(lines), err=True)


def relay(tool_stderr: str) -> None:
    """Pass on what kustomize (and the omerender function it ran) wrote to stderr: as it was, or, with
    ``--messages github``, its warning lines as annotations."""
    if _meta(_FORM, "text") != "github":
        sys.stderr.write(tool_stderr)
        return
    for line in tool_stderr.splitlines():
        message = relayed_warning(line)
        if message is not None:
            say(message)
        else:
            click.echo(line, err=True)


def fail(messages: Iterable[Message], status: int = 1) -> None:
    """Print each message as its stderr line and exit with ``status`` (nothing goes to stdout)."""
    say_all(messages)
    sys.exit(status)


def fail_if_strict(strict: bool, messages: Iterable[Message], status: int = 1, switch: str = "--strict",
                   allow: frozenset[str] | None = None) -> None:
    """With ``--strict``, exit with ``status`` and one error line when ``messages`` hold a warning whose code
    ``--allow`` does not accept (the warnings themselves were printed already)."""
    error = strict_error(messages, switch, allowed() if allow is None else allow) if strict else None
    if error is not None:
        fail([error], status)


def report_run(notes: list[Message], failures: list[Message] | None, messages, strict: bool,
               switch: str = "--strict", allow: frozenset[str] | None = None) -> None:
    """What a render run says, in order: the notes made while reading its inputs, then its failures (exit 1),
    else its own ``messages``; then, with ``strict``, one error for any warning of either that ``allow`` does not
    accept (exit 1). ``messages`` is a callable, asked only when the run did not fail."""
    say_all(notes)
    if failures:
        fail(failures)
    own = list(messages())
    say_all(own)
    fail_if_strict(strict, [*notes, *own], switch=switch, allow=allow)


def deprecated_spelling(old: str, new: str, value: str | None, old_value: str | None) -> str | None:
    """The option's value from its new spelling, or from the old one with a deprecation warning: ``-o`` is the
    output format in every command from the next release on (as in explain, tree and model-info)."""
    if old_value is None:
        return value
    if value is not None:
        raise click.UsageError(f"{old} is the old spelling of {new}; give one of them")
    say(Message("warning", f"{old} is deprecated and goes away in the next release (-o will be the output format, "
                f"as in explain, tree and model-info); use: {new} {old_value}", code="deprecated-option"))
    return old_value


def built_overlay(*paths: str) -> bool:
    """Whether any of ``paths`` is a directory built with kustomize (an overlay, or ``build``'s DIR), where an
    OMERender config may set options beside the flags."""
    from omerender.gitops.overlays import is_overlay
    for path in paths:
        try:
            if is_overlay(path):
                return True
        except OmeError:   # not one to build (a link out of it, say): reading the PATHs says why, in its place
            continue
    return False
