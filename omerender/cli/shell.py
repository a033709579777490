"""What every command shares: printing messages and exiting with a status."""
from __future__ import annotations

import sys
from typing import Iterable

import click

from omerender.codes import parse_allow
from omerender.errors import Message, OmeError, relayed_warning, strict_error
from omerender.ome.render import Options
from omerender.ome.weights.settings import CLI_NAMES, DEFAULT_IMAGE, weights_options

WEIGHTS_FLAGS = (
    click.option("--model-weights", type=click.Choice(["agent", "download"]), default=None,
                 help="Who puts the model weights on the nodes: agent (default: OME's model agent runs on the "
                      "nodes) or download (no OME at all: a PersistentVolumeClaim and a download Job per model and "
                      "namespace; docs/how-to/model-weights.md)."),
    click.option("--weights-storage-class", metavar="NAME", default=None,
                 help="With --model-weights download: the claims' StorageClass (default: the cluster's default)."),
    click.option("--weights-access-mode", metavar="MODE", default=None,
                 help="With --model-weights download: the claims' access mode, ReadWriteOnce (default), "
                      "ReadWriteMany or ReadWriteOncePod."),
    click.option("--downloader-image", metavar="IMAGE", default=None,
                 help=f"With --model-weights download: the image of the download Job and the pods' wait step (it "
                      f"needs python3 and huggingface_hub; default {DEFAULT_IMAGE})."),
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
                  validate: bool = False) -> None:
    """Raise the errors for objects the cluster that --api-versions and --kube-version describe doesn't serve, and
    with --validate for every problem its API server would find in them."""
    if not api_versions and not kube_version and not validate:
        return
    from omerender.errors import OmeErrors
    from omerender.kube.apiversions import parse_api_versions, parse_kube_version, unserved
    served = parse_api_versions(list(api_versions), "--api-versions")
    version = parse_kube_version(kube_version, "--kube-version")
    errors = unserved(objects, served, version, "not in --api-versions")
    if validate:
        from omerender.kube.k8stypes import table_version
        from omerender.kube.validation import rendered_errors
        errors += rendered_errors(objects, table_version(version))
    if errors:
        raise OmeErrors(errors)


def weights_flags(command):
    """The ``--model-weights`` options, on ``render``, ``check``, ``diff`` and ``build``."""
    for option in reversed(WEIGHTS_FLAGS):
        command = option(command)
    return command


def render_options(keep_inputs: bool, no_model_node_selector: bool, locked: bool,
                   pod_monitors: bool = False, weights: tuple = (None, None, None, None)
                   ) -> tuple[Options, tuple[str, ...]]:
    """The render options of ``render``, ``check`` and ``diff``, and the flags that gave them (an overlay's
    OMERender config may not be contradicted by flags; ``check`` prints them in its fix). ``weights`` is
    (``--model-weights``, ``--weights-storage-class``, ``--weights-access-mode``, ``--downloader-image``), None
    where not given."""
    mode, settings = cli_weights(*weights)
    options = Options(keep_inputs=keep_inputs, model_node_selector=not no_model_node_selector, locked=locked,
                      pod_monitors=pod_monitors, model_weights=mode, weights=settings)
    given = (("--keep-inputs", keep_inputs), ("--no-model-node-selector", no_model_node_selector), ("--locked", locked),
             ("--pod-monitors", pod_monitors))
    return options, tuple(flag for flag, on in given if on) + weights_flag_names(*weights)


def cli_weights(mode=None, storage_class=None, access_mode=None, image=None):
    """The checked mode and settings; a bad value or a download setting without download is a usage error."""
    try:
        return weights_options(mode, storage_class, access_mode, image)
    except OmeError as err:
        raise click.UsageError(err.text) from None


def weights_flag_names(mode=None, storage_class=None, access_mode=None, image=None) -> tuple[str, ...]:
    """The weights flags as given, each with its value (checked already: no spaces)."""
    values = {"mode": mode, "storage_class": storage_class, "access_mode": access_mode, "image": image}
    return tuple(f"{CLI_NAMES[key]} {value}" for key, value in values.items() if value is not None)


CLUSTER_CONFIG_HELP = ("A file holding OME's ConfigMap inferenceservice-config (kubectl get configmap "
                       "inferenceservice-config -n ome -o yaml), read beside the inputs as the cluster configuration "
                       "(the Argo CD plugin's cluster-config parameter); an overlay's build gets it too. A ConfigMap "
                       "among the inputs as well is an error.")


def cluster_config_option(command):
    """``--cluster-config FILE``, the same on every command that reads OME objects."""
    return click.option("--cluster-config", "cluster_config", metavar="FILE", help=CLUSTER_CONFIG_HELP)(command)


_ALLOW = "omerender.allow"
_FORM = "omerender.messages"
ALLOW_HELP = ("Accept the warnings of these codes under --strict (comma-separated or repeated; "
              "docs/reference/message-codes.md lists them).")
MESSAGES_HELP = ("How to print errors, warnings and infos on stderr: text (the default), or github for GitHub "
                 "Actions annotations (::warning file=...,line=...::...), shown on the pull request's lines.")


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
    """``--messages text|github`` on every command that prints messages."""
    def keep(ctx, _param, value):
        ctx.meta[_FORM] = value
    return click.option("--messages", type=click.Choice(["text", "github"]), default="text", show_default=True,
                        expose_value=False, callback=keep, help=MESSAGES_HELP)(command)


def _meta(key: str, default):
    ctx = click.get_current_context(silent=True)
    return ctx.meta.get(key, default) if ctx is not None else default


def allowed() -> frozenset[str]:
    """The codes this command's ``--allow`` accepts."""
    return _meta(_ALLOW, frozenset())


def say(message: Message) -> None:
    """Print one message on stderr in the form ``--messages`` asked for."""
    click.echo(github_line(message) if _meta(_FORM, "text") == "github" else message.line(), err=True)


_COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}


def github_line(message: Message) -> str:
    """``message`` as a GitHub Actions workflow command (escaped as actions/toolkit's core/src/command.ts does):
    ``::warning file=F,line=L,col=C,title=CODE::TEXT``."""
    properties = []
    if message.file:
        properties.append(("file", message.file))
        position = message.position()
        if position:
            properties += [("line", str(position[0])), ("col", str(position[1]))]
    if message.code:
        properties.append(("title", message.code))
    said = ",".join(f"{key}={_escape_property(value)}" for key, value in properties)
    return f"::{_COMMANDS[message.severity]}{' ' + said if said else ''}::{_escape_data(message.located_text())}"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


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
    for message in messages:
        say(message)
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
    for message in notes:
        say(message)
    if failures:
        fail(failures)
    own = list(messages())
    for message in own:
        say(message)
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
