"""What the Argo CD Config Management Plugin's generate step reads from its environment: the render options
(``PARAM_<NAME>``, else ``ARGOCD_ENV_<NAME>``) and the repository's root (``ARGOCD_APP_SOURCE_PATH``)."""
from __future__ import annotations

import os

from omerender.errors import OmeError
from omerender.ome.weights.settings import WeightsSettings, weights_options
from omerender.yamlio import paths

# Option name -> the render flag it stands for.
FLAGS = {"NO_MODEL_NODE_SELECTOR": "--no-model-node-selector", "KEEP_INPUTS": "--keep-inputs",
         "STRICT": "--strict", "POD_MONITORS": "--pod-monitors"}
TRUE = ("true", "True", "TRUE", "1", "yes")
FALSE = ("false", "False", "FALSE", "0", "no", "")
# The --model-weights settings (strings; empty or unset: not given) -> how weights_options names each.
WEIGHTS = {"MODEL_WEIGHTS": "mode", "WEIGHTS_STORAGE_CLASS": "storage_class", "WEIGHTS_ACCESS_MODE": "access_mode",
           "DOWNLOADER_IMAGE": "image"}
WEIGHTS_FLAGS = {"MODEL_WEIGHTS": "--model-weights", "WEIGHTS_STORAGE_CLASS": "--weights-storage-class",
                 "WEIGHTS_ACCESS_MODE": "--weights-access-mode", "DOWNLOADER_IMAGE": "--downloader-image"}
CLUSTER_CONFIG = "CLUSTER_CONFIG"   # a file holding OME's ConfigMap inferenceservice-config (docs/cluster-config-and-ingress.md)


def flag_values(environ: dict) -> dict[str, bool]:
    """Each option's value from PARAM_<NAME>, else ARGOCD_ENV_<NAME>, else false."""
    values = {}
    for name in FLAGS:
        value = environ.get(f"PARAM_{name}", environ.get(f"ARGOCD_ENV_{name}", "false"))
        if value not in TRUE + FALSE:
            shown = value.encode("unicode_escape").decode("ascii")  # a newline must not forge an error: line
            raise OmeError(f'{name} must be true or false, got "{shown}"')
        values[name] = value in TRUE
    return values


def weights_values(environ: dict) -> tuple[str, WeightsSettings, dict[str, str]]:
    """The --model-weights mode and settings from PARAM_<NAME>, else ARGOCD_ENV_<NAME> (empty: not given), and the
    values given, by variable name."""
    given = {name: environ.get(f"PARAM_{name}", environ.get(f"ARGOCD_ENV_{name}", "")) for name in WEIGHTS}
    given = {name: value for name, value in given.items() if value != ""}
    values = {option: given.get(name) for name, option in WEIGHTS.items()}
    mode, settings = weights_options(values["mode"], values["storage_class"], values["access_mode"], values["image"],
                                     {option: name for name, option in WEIGHTS.items()})
    return mode, settings, given


def repo_root(app_dir: str, source_path: str | None) -> str:
    """The repository's root: the app directory minus ARGOCD_APP_SOURCE_PATH; the app directory itself when
    that path is missing or doesn't match (nothing above it is then read)."""
    app_dir = os.path.realpath(app_dir)
    parts = [p for p in (source_path or "").split("/") if p not in ("", ".")]
    if ".." in parts:
        return app_dir
    root = app_dir
    for part in reversed(parts):
        if os.path.basename(root) != part:
            return app_dir
        root = os.path.dirname(root)
    return root


def cluster_config_path(environ: dict, root: str) -> str | None:
    """The file CLUSTER_CONFIG names (PARAM_, else ARGOCD_ENV_), relative to the app's directory (the working
    directory), checked to be a regular file inside the repository ``root``; None when unset."""
    value = environ.get(f"PARAM_{CLUSTER_CONFIG}", environ.get(f"ARGOCD_ENV_{CLUSTER_CONFIG}", ""))
    if not value:
        return None
    shown = value.encode("unicode_escape").decode("ascii")  # a newline must not forge an error: line
    if os.path.isabs(value):
        raise OmeError(f'{CLUSTER_CONFIG} must be a path relative to the app\'s directory, got "{shown}"')
    resolved = paths.resolve(value)
    if not paths.within(resolved, os.path.realpath(root)):
        raise OmeError(f'{CLUSTER_CONFIG} "{shown}" leads to {resolved}, outside the repository {root}; '
                       f"{paths.READS}")
    problem = _not_a_file(value)
    if problem:
        raise OmeError(f'{CLUSTER_CONFIG} "{shown}": {problem}')
    return value


def _not_a_file(value: str) -> str | None:
    """What keeps ``value`` (as spelled: ``cm.yaml/`` is no file) from being read as the ConfigMap's file."""
    if os.path.isdir(value):
        return "is a directory; name the file that holds the ConfigMap inferenceservice-config"
    if not os.path.exists(value):
        return "no such file"
    if not os.path.isfile(value):
        return "is not a regular file (a FIFO, socket or device is never read)"
    return None
