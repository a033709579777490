"""What the Argo CD Config Management Plugin's generate step reads from its environment: the render options
(``PARAM_<NAME>``, else ``ARGOCD_ENV_<NAME>``) and the repository's root (``ARGOCD_APP_SOURCE_PATH``)."""
from __future__ import annotations

import os

from omerender.codes import parse_allow
from omerender.errors import OmeError
from omerender.ome.render import Options
from omerender.ome.frontend import ARGOCD_FRONT, env_name, in_config, set_by_config
from omerender.ome.weights.options import KEYS as WEIGHTS_KEYS, given_options, weights_options
from omerender.ome.weights.settings import WeightsSettings
from omerender.yamlio import paths
from . import clusterfile

# Option name -> the render setting it stands for (frontend.SETTINGS).
FLAGS = {"NO_MODEL_NODE_SELECTOR": "no_model_node_selector", "KEEP_INPUTS": "keep_inputs", "STRICT": "strict",
         "POD_MONITORS": "pod_monitors"}
# What an OMERender config beside them doesn't forbid: STRICT only adds a check, as --strict beside a config does.
BESIDE_CONFIG = ("STRICT",)
TRUE = ("true", "True", "TRUE", "1", "yes")
FALSE = ("false", "False", "FALSE", "0", "no", "")
# The --model-weights settings: plugin.env name -> setting (frontend.SETTINGS). Empty or unset: not given.
WEIGHTS = {env_name(ARGOCD_FRONT.name(key)): key for key in WEIGHTS_KEYS}
# Array parameters (PARAM_<NAME>_0, _1, ... as Argo CD passes them; ARGOCD_ENV_<NAME>_0, ... in plugin.env).
LISTS = ("node_selector", "tolerations", "env", "env_from")
MAX_ITEMS = 64
# a file holding OME's ConfigMap inferenceservice-config (docs/how-to/cluster-config-and-ingress.md)
CLUSTER_CONFIG = "CLUSTER_CONFIG"


def parameter(environ: dict, name: str, default: str = "") -> str:
    """A parameter's value: PARAM_<NAME> (the Application's plugin parameter), else ARGOCD_ENV_<NAME> (its plugin
    env), else ``default``."""
    return environ.get(f"PARAM_{name}", environ.get(f"ARGOCD_ENV_{name}", default))


def switch(environ: dict, name: str) -> bool:
    """An on/off parameter (false when unset); anything but the spellings of TRUE and FALSE is an error."""
    value = parameter(environ, name, "false")
    if value not in TRUE + FALSE:
        raise OmeError(f'{name} must be true or false, got "{shown(value)}"')
    return value in TRUE


def flag_values(environ: dict) -> dict[str, bool]:
    """Each option's value from PARAM_<NAME>, else ARGOCD_ENV_<NAME>, else false."""
    return {name: switch(environ, name) for name in FLAGS}


def weights_values(environ: dict) -> tuple[str, WeightsSettings, dict]:
    """The --model-weights mode and settings from PARAM_<NAME>, else ARGOCD_ENV_<NAME> (empty: not given; an array
    parameter's items PARAM_<NAME>_0, _1, ...), and the values given, by setting."""
    given = {}
    for name, key in WEIGHTS.items():
        value = array_parameter(environ, name) if key in LISTS else parameter(environ, name)
        if value not in ("", []):
            given[key] = value
    mode, settings = weights_options(given, {key: name for name, key in WEIGHTS.items()}, ARGOCD_FRONT,
                                     mode_elsewhere=True)   # an OMERender config may set it: split_config, the build
    return mode, settings, given


def array_parameter(environ: dict, name: str) -> list[str]:
    """An array parameter's items, in order: PARAM_<NAME>_<N> (Argo CD's form), else ARGOCD_ENV_<NAME>_<N>."""
    for prefix in (f"PARAM_{name}_", f"ARGOCD_ENV_{name}_"):
        found = {}
        for key, value in environ.items():
            index = key[len(prefix):] if key.startswith(prefix) else ""
            if index.isascii() and index.isdigit() and len(index) < 4:
                found[int(index)] = value
        if len(found) > MAX_ITEMS:
            raise OmeError(f"{name} has {len(found)} items; at most {MAX_ITEMS}")
        if found:
            return [found[i] for i in sorted(found)]
    return []


CMP_WORK_DIR = "_cmp_server"   # argocd-cmp-server unpacks each request's tree in <work dir>/_cmp_server/<request>


def repo_root(app_dir: str, source_path: str | None, environ: dict | None = None) -> str:
    """The root of the tree Argo CD sent: under argocd-cmp-server, the request's directory; elsewhere the app
    directory minus ARGOCD_APP_SOURCE_PATH. The app directory itself when that path is missing or doesn't match
    (nothing above it is then read)."""
    app_dir = os.path.realpath(app_dir)
    parts = [p for p in (source_path or "").split("/") if p not in ("", ".")]
    if ".." in parts:
        return app_dir
    sent = _cmp_tree(app_dir, parts, environ or {})
    if sent is not None:
        return sent
    root = app_dir
    for part in reversed(parts):
        if os.path.basename(root) != part:
            return app_dir
        root = os.path.dirname(root)
    return root


def _cmp_tree(app_dir: str, parts: list[str], environ: dict) -> str | None:
    """The tree argocd-cmp-server unpacked for this request (common.GetCMPWorkDir: $ARGOCD_CMP_WORKDIR, else Go's
    os.TempDir(), then _cmp_server/<request>): the whole repository, or, with manifest-generate-paths passed to
    plugins (reposerver.plugin.use.manifest.generate.paths), the common root of the annotation's paths
    (reposerver/repository getApplicationRootPath), where ``../base`` lives. The app's place in it must be a tail
    of ARGOCD_APP_SOURCE_PATH; None otherwise, or outside cmp-server."""
    base = environ.get("ARGOCD_CMP_WORKDIR") or environ.get("TMPDIR") or "/tmp"
    work = os.path.join(os.path.realpath(base), CMP_WORK_DIR)
    if not paths.within(app_dir, work) or app_dir == work:
        return None
    request, *inside = os.path.relpath(app_dir, work).split(os.sep)
    if inside and inside != parts[len(parts) - len(inside):]:
        return None
    return os.path.join(work, request)


ALLOW = "ALLOW"   # parameter allow: the codes of warnings STRICT accepts, comma-separated


def allow_codes(environ: dict) -> frozenset[str]:
    """ALLOW from PARAM_ALLOW, else ARGOCD_ENV_ALLOW: message codes (omerender.codes), comma-separated."""
    value = parameter(environ, ALLOW)
    codes, unknown = parse_allow([value], ALLOW)
    if unknown:
        raise OmeError(unknown[0])
    return codes


def cluster_config_path(environ: dict, root: str) -> str | None:
    """The file CLUSTER_CONFIG names (PARAM_, else ARGOCD_ENV_), relative to the app's directory (the working
    directory), checked to be a regular file inside the repository ``root``; None when unset."""
    value = parameter(environ, CLUSTER_CONFIG)
    if not value:
        return None
    if os.path.isabs(value):
        raise OmeError(f'{CLUSTER_CONFIG} must be a path relative to the app\'s directory, got "{shown(value)}"')
    return clusterfile.checked(value, CLUSTER_CONFIG, root, f"the repository {root}")


QUIET = "QUIET"         # parameter quiet: leave out info lines (omerender render --quiet)
MESSAGES = "MESSAGES"   # parameter messages: text (the default) or github (omerender render --messages github)


def messages_form(environ: dict) -> tuple[str, bool]:
    """MESSAGES (text or github; empty: text) and QUIET, from PARAM_<NAME>, else ARGOCD_ENV_<NAME>."""
    form = parameter(environ, MESSAGES) or "text"
    if form not in ("text", "github"):
        raise OmeError(f'{MESSAGES} must be text or github, got "{shown(form)}"')
    return form, switch(environ, QUIET)


def shown(value: str, most: int = 100) -> str:
    """A parameter's value as an error quotes it: on one line, all but printable ASCII escaped (a newline must not
    forge an error: line, nor a "::" line a workflow command), at most ``most`` characters of it."""
    text = value.encode("unicode_escape").decode("ascii")
    return text if len(text) <= most else text[:most] + f"… ({len(value):,} characters)"


# ---------------------------------------------------------------- never an empty sync by accident

ALLOW_EMPTY = "ALLOW_EMPTY"   # parameter allow-empty: an app that renders to no objects is meant to be empty
EMPTY_FIX = ("a sync of no objects would prune every resource the Application manages; check spec.source.path, "
             "or set the parameter allow-empty (ALLOW_EMPTY=true in the plugin env) where an empty app is meant")


def allow_empty(environ: dict) -> bool:
    """ALLOW_EMPTY from PARAM_ALLOW_EMPTY, else ARGOCD_ENV_ALLOW_EMPTY, else false."""
    return switch(environ, ALLOW_EMPTY)


def empty_render(input_kinds: list[str] | None, kustomization: bool = False) -> OmeError:
    """Why the app rendered to no objects: ``input_kinds`` are the kinds of the objects read (None where the
    build's output was all there was to see); ``kustomization``: they came from the app's kustomization."""
    if not input_kinds:
        where = "the kustomization builds no objects" if kustomization else \
            "the app's directory holds no Kubernetes objects to render (no YAML file with one)"
        return OmeError(f"{where}; {EMPTY_FIX}")
    count, kinds = len(input_kinds), ", ".join(sorted(set(input_kinds)))
    what = (f"its {count} objects ({kinds}) are OME inputs that create nothing by themselves" if count > 1 else
            f"its one object ({kinds}) is an OME input that creates nothing by itself")
    return OmeError(f"the app renders to no objects: {what} (an InferenceService is what becomes workloads, and "
                    f"inputs are not written without keep-inputs); {EMPTY_FIX}")


def cluster_setting(environ: dict) -> tuple:
    """The destination cluster's served API versions and Kubernetes version, from the KUBE_API_VERSIONS and
    KUBE_VERSION Argo CD passes every plugin (each None where empty: nothing is checked)."""
    from omerender.kube.apiversions import parse_api_versions, parse_kube_version
    return (parse_api_versions([environ.get("KUBE_API_VERSIONS", "")], "KUBE_API_VERSIONS"),
            parse_kube_version(environ.get("KUBE_VERSION"), "KUBE_VERSION"))


# ---------------------------------------------------------------- the app's OMERender config (discovery's marker)

MARKER = "omerender.yaml"   # plugin.yaml's discover.fileName: an OMERender config in the app's directory


def split_config(docs: list, flag_names: tuple[str, ...]) -> tuple[list, Options | None]:
    """A plain directory's documents without its OMERender config, and the options that config sets with the
    Application's options added (None when there is none, or an empty spec beside the Application's options:
    those apply alone). The config is read as data and never written out (no cluster serves its kind); an
    Application option the config's spec sets too is an error, so the two can't silently disagree."""
    from .krm import CONFIG_API, CONFIG_KIND, function_options
    configs = [d for d in docs if isinstance(d.data, dict)
               and (d.data.get("apiVersion"), d.data.get("kind")) == (CONFIG_API, CONFIG_KIND)]
    if len(configs) > 1:
        raise OmeError(f"{len(configs)} OMERender configs ({', '.join(d.file for d in configs)}); an app's "
                       f"directory holds one, {MARKER}")
    if not configs or (flag_names and not configs[0].data.get("spec")):   # none, or a bare marker
        given_options(flag_names)   # a download setting with no mode anywhere
        return [d for d in docs if not configs or d is not configs[0]], None
    config, rest = configs[0], [d for d in docs if d is not configs[0]]
    spec = config.data.get("spec")
    refused = set_by_config(flag_names, spec if isinstance(spec, dict) else {})
    if refused:
        raise OmeError(f"{', '.join(refused)}: this app's directory holds the OMERender config {config.file}; set "
                       f"{in_config(refused)} in that config's spec instead, not in the Application's plugin env "
                       f"or parameters")
    try:
        options = function_options(config.data, flag_names)
    except OmeError as err:
        raise err.located(None, config.file) from None
    return rest, options


def unapplied_marker(root: str) -> OmeError | None:
    """In a kustomization app: an error when the app's omerender.yaml sets options (a non-empty spec) that the
    build doesn't apply, because no kustomization it reaches lists that file (they would be silently ignored)."""
    from omerender.yamlio.reading import parse_text, read_named_file
    from . import kbuild
    from .krm import CONFIG_API, CONFIG_KIND
    if not os.path.isfile(MARKER):
        return None
    docs = parse_text(read_named_file(MARKER), MARKER)
    configs = [d.data for d in docs if isinstance(d.data, dict)
               and (d.data.get("apiVersion"), d.data.get("kind")) == (CONFIG_API, CONFIG_KIND)]
    if not any(c.get("spec") for c in configs):
        return None
    marker = os.path.realpath(MARKER)
    if any(ref.file == marker for ref in kbuild.scan(".", root).refs):
        return None
    return OmeError(f"its spec sets options, but no kustomization this app builds lists {MARKER}, so they would not "
                    f"apply; list it last under transformers: of kustomization.yaml, or leave its spec empty (then "
                    f"the Application's options apply)", file=MARKER)
