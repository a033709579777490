"""The render as a KRM function: a ResourceList in, a ResourceList out (``omerender-fn``, ``omerender fn``).

The function config is ``apiVersion: omerender.io/v1alpha1``, ``kind: OMERender``
with options under ``spec`` (``keepInputs``, ``noModelNodeSelector``, ``locked``, ``podMonitors``, ``strict``,
``quiet`` (no info results), the
strings ``modelWeights``, ``weightsStorageClass``, ``weightsAccessMode``, ``downloaderImage``, the download Job's
``weightsNodeSelector``, ``weightsTolerations``, ``downloaderResources``, ``weightsWaitResources``,
``downloadDeadline``, ``downloaderEnv``, ``downloaderEnvFrom``, ``kubeVersion`` and ``apiVersions``, the target
cluster's, as ``render --kube-version`` and ``--api-versions`` take them, ``validate``; and ``allow``: the codes of
warnings ``strict`` accepts); a ConfigMap's ``data`` with the same keys (``"true"``/``"false"`` for the switches,
``allow`` comma-separated) works too, as kpt passes it. Each result's ``tags.code`` is its message's code.
"""
from __future__ import annotations

import os
from dataclasses import replace

import yaml

from omerender.codes import parse_allow
from omerender.errors import Message, OmeError, OmeErrors, run_guarded, strict_error
from omerender.kube.apiversions import parse_api_versions, parse_kube_version, unserved
from omerender.kube.k8stypes import kube_version_in_use, table_version
from omerender.kube.validation import rendered_errors
from omerender.ome.load import index
from omerender.ome.pinning.lockfile import lock_from_inputs
from omerender.ome.render import Options, render
from omerender.ome.frontend import CONFIG_FRONT, given_values, set_by_config
from omerender.ome.weights.options import KEYS as WEIGHTS_KEYS, weights_options
from omerender.yamlio import fastread, limits
from omerender.yamlio.marks import Origin
from omerender.yamlio.reading import STDIN, Doc, read_stream, too_many_objects
from omerender.yamlio.yamlread import Budget, YAMLLimitError, load_one, yaml_problem
from . import fnsource as provenance
from .fngiven import given_from_env

RESOURCE_LIST = ("config.kubernetes.io/v1", "ResourceList")
CONFIG_API = "omerender.io/v1alpha1"
CONFIG_KIND = "OMERender"
# The --model-weights settings, each named in an error as the config spells it.
WEIGHTS_FIELDS = {key: CONFIG_FRONT.name(key) for key in WEIGHTS_KEYS}
WEIGHTS_STRINGS = ("mode", "storage_class", "access_mode", "image")   # the rest: jobsettings reads each
SWITCHES = ("keep_inputs", "no_model_node_selector", "locked", "pod_monitors", "strict")
CLUSTER_FIELDS = ("kubeVersion", "apiVersions")
OPTION_FIELDS = ("allow", "keepInputs", "locked", "noModelNodeSelector", "podMonitors", "quiet", "strict",
                 *WEIGHTS_FIELDS.values(), *CLUSTER_FIELDS, "validate")
STRICT_SWITCH = "strict: true in the functionConfig"
PATH_ANNOTATIONS = ("internal.config.kubernetes.io/path", "config.kubernetes.io/path")
INDEX_ANNOTATIONS = ("internal.config.kubernetes.io/index", "config.kubernetes.io/index")
ORIGIN_ANNOTATION = "config.kubernetes.io/origin"  # kustomize's buildMetadata: [originAnnotations]
UNNAMED = "ResourceList items"  # an item kustomize gave no file name
NO_ITEMS = ("omerender received no resources to render, only its own config: kustomize gives a function listed "
            "under generators: nothing else; list it under transformers:")


def _is_config(item) -> bool:
    return isinstance(item, dict) and (item.get("apiVersion"), item.get("kind")) == (CONFIG_API, CONFIG_KIND)


def run(text: str) -> tuple[dict, int]:
    """The output ResourceList and the exit code for one ResourceList text."""
    resource_list, code, _ = run_with_lines(text)
    return resource_list, code


def run_with_lines(text: str) -> tuple[dict, int, list[str]]:
    """:func:`run`, and each message's line as the CLI prints it (``file:line:column`` and all)."""
    value, failures = run_guarded(lambda: _run(text))
    items, messages, code = value if failures is None else ([], failures, 1)
    lines = [(replace(m, file=None) if (m.file or "").startswith(UNNAMED) else m).line() for m in messages]
    return _resource_list(items, [_result(m) for m in messages]), code, lines


def _run(text: str) -> tuple[list, list[Message], int]:
    resource_list = _parse(text)
    config = resource_list.get("functionConfig")
    options = function_options(config, given_from_env(os.environ) if config is not None else ())
    items = resource_list.get("items") or []
    sources = provenance.function_sources(items)
    docs = []
    for i, item in enumerate(items):
        path = _item_path(item, i)
        docs.append(Doc(item, path, i, _item_origin(item, sources, path)))
    if resource_list.get("functionConfig") is not None and not [d for d in docs if not _is_config(d.data)]:
        raise OmeError(NO_ITEMS)
    def render_items():
        with kube_version_in_use(table_version(options.kube_version)):
            inputs = index(docs)
            result = render(inputs, options, lock_from_inputs(inputs))
        errors = unserved(result.objects, options.api_versions, options.kube_version,
                          "not in the functionConfig's apiVersions")
        if options.validate:
            errors += rendered_errors(result.objects, table_version(options.kube_version))
        if errors:
            raise OmeErrors(errors)
        return result

    value, failures = run_guarded(render_items)
    if failures:
        return [], failures, 1
    strict = strict_error(value.messages, STRICT_SWITCH, options.allow) if options.strict else None
    if strict is not None:
        return [], [*value.messages, strict], 1
    input_ids = {id(d.data) for d in docs}
    items = [o if id(o) in input_ids else _with_path(o) for o in value.objects]
    return items, [m for m in value.messages if not (options.quiet and m.severity == "info")], 0


def _parse(text: str) -> dict:
    try:
        data = load_resource_list(text) if text.strip() else None
    except yaml.YAMLError as err:
        raise OmeError(f"malformed ResourceList on stdin: {yaml_problem(err)}") from None
    if not isinstance(data, dict) or (data.get("apiVersion"), data.get("kind")) != RESOURCE_LIST:
        raise OmeError("stdin is not a ResourceList (apiVersion: config.kubernetes.io/v1, kind: ResourceList)")
    if "items" not in data:
        raise OmeError("ResourceList has no items field", field="items")
    if not isinstance(data["items"], list):
        raise OmeError("ResourceList items must be a list", field="items")
    return data


def load_resource_list(text: str):
    """The ResourceList as data: item by item where the text has kustomize's layout, else whole.

    kustomize and kpt write ``items:`` as a block sequence at column 0; loading one item at a time
    holds one item's YAML node graph instead of the whole fleet's (benchmarks/NOTES.md). The items share
    one budget: the limits hold for the whole ResourceList, not for each item.
    """
    fastread.setting()  # OMERENDER_YAML_FAST is one of its values
    try:
        by_item = _load_by_item(text, Budget())
    except YAMLLimitError:
        raise
    except yaml.YAMLError:
        by_item = None  # an alias across items, say: the whole load reports what is wrong
    return by_item if by_item is not None else load_one(text, Budget())


def _load_by_item(text: str, budget: Budget | None = None) -> dict | None:
    budget = budget if budget is not None else Budget()
    lines = text.splitlines(keepends=True)
    if "items:\n" not in lines:
        return None
    start = lines.index("items:\n")
    chunks: list[tuple[int, list[str]]] = []  # (line of the item's "- ", its lines)
    end = len(lines)
    for i in range(start + 1, len(lines)):
        line = lines[i]
        if line.startswith("- ") and line.strip() != "-":
            chunks.append((i, ["  " + line[2:]]))
        elif line.startswith("  ") or line == "\n":
            if not chunks:
                return None
            chunks[-1][1].append(line)
        else:
            end = i
            break
    if len(chunks) > limits.MAX_OBJECTS:  # before loading any: each costs a loader
        raise too_many_objects(None)
    head = _load_piece("".join(lines[:start] + ["items: []\n"] + lines[end:]), budget,
                       lambda line: (line + end - start - 1 if line > start else line, 0))
    if not isinstance(head, dict) or head.get("items") != []:
        return None
    head["items"] = []
    for first, chunk in chunks:
        head["items"].append(_load_piece("".join(line[2:] if line != "\n" else line for line in chunk), budget,
                                         lambda line, first=first: (first + line, 2)))
        budget.documents -= 1  # an item is no YAML document: index() counts it as an object
    return head


def _load_piece(text: str, budget: Budget, position):
    """One piece of the ResourceList; a limit error points at its line in the whole text (``position``
    maps a line of the piece to the whole text's line and the columns the piece lost)."""
    try:
        return load_one(text, budget)
    except YAMLLimitError as err:
        mark = err.problem_mark
        if mark is not None:
            line, columns = position(mark.line)
            err.problem_mark = yaml.Mark(mark.name, mark.index, line, mark.column + columns, None, None)
        raise


def function_options(config, beside: tuple = ()) -> Options:
    """The render options an OMERender config (or a kpt ConfigMap) sets, read as data, with the settings ``beside``
    it (:class:`~omerender.ome.frontend.Given` flags or Argo CD parameters, none of which the config sets: see
    :func:`~omerender.ome.frontend.set_by_config`) added: a download setting given beside a config that sets
    ``modelWeights: download`` applies, and one given where no mode is download is the same error either way."""
    if config is None:
        return Options()
    if not isinstance(config, dict):
        raise OmeError("functionConfig must be an object", field="functionConfig")
    if config.get("kind") == "ConfigMap":
        values = config.get("data") or {}
        if not isinstance(values, dict):
            raise OmeError("functionConfig data must be a map", field="functionConfig.data")
        where = "functionConfig.data"
    elif (config.get("apiVersion"), config.get("kind")) == (CONFIG_API, CONFIG_KIND):
        values = config.get("spec") or {}
        if not isinstance(values, dict):
            raise OmeError("functionConfig spec must be an object", field="functionConfig.spec")
        where = "functionConfig.spec"
    else:
        raise OmeError(f"functionConfig must be apiVersion {CONFIG_API}, kind {CONFIG_KIND} (or a ConfigMap), got "
                       f"{config.get('apiVersion')} {config.get('kind')}", field="functionConfig")
    unknown = sorted(set(values) - set(OPTION_FIELDS))
    if unknown:
        raise OmeError(f"functionConfig: unknown field(s) {', '.join(unknown)}; known: "
                       f"{', '.join(sorted(OPTION_FIELDS))}", field=f"{where}.{unknown[0]}")
    if where == "functionConfig.data":   # kpt fn eval's key=value arguments: every value is a string
        values = {k: v if k in WEIGHTS_FIELDS.values() or k in ("allow", *CLUSTER_FIELDS) else _bool_text(k, v)
                  for k, v in values.items()}
    values = dict(values)
    allow = _allow(values.pop("allow", None), config)
    kube_version, api_versions = _cluster(values.pop("kubeVersion", None), values.pop("apiVersions", None), where)
    for key, value in values.items():
        if key not in WEIGHTS_FIELDS.values() and not isinstance(value, bool):
            raise OmeError(f"functionConfig.spec.{key} must be true or false", field=f"functionConfig.spec.{key}")
    added, added_names = given_values(beside)
    twice = set_by_config(beside, values)   # the callers refuse these first, in their front end's words
    if twice:
        raise OmeError(f"{', '.join(twice)}: the OMERender config sets it too; set it in the config only",
                       field=f"{where}.{CONFIG_FRONT.name(twice[0].key)}")
    values.update({CONFIG_FRONT.name(key): True for key in added if key in SWITCHES})
    mode, settings = _weights(values, where, {key: added[key] for key in added if key in WEIGHTS_KEYS}, added_names)
    return Options(keep_inputs=values.get("keepInputs", False),
                   model_node_selector=not values.get("noModelNodeSelector", False),
                   locked=values.get("locked", False), strict=values.get("strict", False),
                   pod_monitors=values.get("podMonitors", False), model_weights=mode, weights=settings,
                   allow=allow, front=CONFIG_FRONT, quiet=values.get("quiet", False), kube_version=kube_version,
                   api_versions=api_versions, validate=values.get("validate", False))


def _cluster(kube_version, api_versions, where: str):
    """``kubeVersion`` (a string such as "1.30") and ``apiVersions`` (a list, or a comma-separated string), parsed."""
    if kube_version is not None and not isinstance(kube_version, str):  # 1.30 unquoted is the number 1.3
        raise OmeError(f"{where}.kubeVersion must be a string such as \"1.30\" (quoted)", field=f"{where}.kubeVersion")
    if isinstance(api_versions, str):
        api_versions = [api_versions]
    if api_versions is not None and not (isinstance(api_versions, list) and all(isinstance(v, str) for v in
                                                                                  api_versions)):
        raise OmeError(f"{where}.apiVersions must be a list of API versions", field=f"{where}.apiVersions")
    return (parse_kube_version(kube_version, f"{where}.kubeVersion"),
            parse_api_versions(api_versions or [], f"{where}.apiVersions"))


def _weights(values: dict, where: str, added: dict | None = None, added_names: dict | None = None):
    """The --model-weights mode and settings the config sets, with those ``added`` beside it (named as given there:
    ``added_names``; the mode, where neither sets it, as the front end that added settings spells it); a value of
    the wrong type is an error."""
    for option in WEIGHTS_STRINGS:
        key = WEIGHTS_FIELDS[option]
        if values.get(key) is not None and not isinstance(values[key], str):
            raise OmeError(f"{where}.{key} must be a string", field=f"{where}.{key}")
    names = {option: f"{where}.{key}" for option, key in WEIGHTS_FIELDS.items()}
    given = {option: values.get(key) for option, key in WEIGHTS_FIELDS.items()}
    if added:
        names.update({option: added_names[option] for option in added})
        given.update(added)
        if given.get("mode") is None:
            names["mode"] = added_names["mode"]
    return weights_options(given, names, CONFIG_FRONT)


def _allow(value, config: dict) -> frozenset[str]:
    """``spec.allow``: a list of codes (a ConfigMap's ``data.allow``: a comma-separated string)."""
    field = "functionConfig.data.allow" if config.get("kind") == "ConfigMap" else "functionConfig.spec.allow"
    if value is None:
        return frozenset()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(code, str) for code in value):
        raise OmeError(f"{field} must be a list of message codes (docs/reference/message-codes.md)", field=field)
    codes, unknown = parse_allow(value, field)
    if unknown:
        raise OmeError(unknown[0], field=field)
    return codes


def _bool_text(key: str, value) -> bool:
    if isinstance(value, bool):
        return value
    if str(value).lower() in ("true", "false"):
        return str(value).lower() == "true"
    raise OmeError(f"functionConfig data.{key} must be \"true\" or \"false\"", field=f"functionConfig.data.{key}")


def _item_path(item, position: int) -> str:
    meta = item.get("metadata") if isinstance(item, dict) else None
    annotations = meta.get("annotations") if isinstance(meta, dict) else None
    for key in PATH_ANNOTATIONS:
        if isinstance(annotations, dict) and isinstance(annotations.get(key), str):
            return annotations[key]
    origin = annotations.get(ORIGIN_ANNOTATION) if isinstance(annotations, dict) else None
    if isinstance(origin, str) and origin.startswith("path: "):
        return origin[len("path: "):].splitlines()[0].strip()
    return f"{UNNAMED}[{position}]"


def _item_origin(item, sources, path: str):
    """Where an item was written: the line of its file where kustomize's origin annotation or omerender's own
    reading of the kustomization finds it (:mod:`omerender.gitops.fnsource`), else which document of its file
    it is, as kpt and kustomize say it (their index annotation)."""
    meta = item.get("metadata") if isinstance(item, dict) else None
    annotations = meta.get("annotations") if isinstance(meta, dict) else None
    kpt = isinstance(annotations, dict) and any(key in annotations for key in PATH_ANNOTATIONS)
    if sources is not None and not kpt and isinstance(meta, dict):
        found = sources.origin_of(item, path)
        if found is not None:
            return found
    for key in INDEX_ANNOTATIONS:
        value = annotations.get(key) if isinstance(annotations, dict) else None
        if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) < 10:
            return Origin(None, int(value))
    return None


def _with_path(obj: dict) -> dict:
    meta = obj["metadata"]
    path = f"omerender/{meta.get('namespace') or '_cluster'}/{obj['kind'].lower()}_{meta['name']}.yaml"
    annotations = {**(meta.get("annotations") or {}), PATH_ANNOTATIONS[0]: path, PATH_ANNOTATIONS[1]: path,
                   "config.kubernetes.io/index": "0", "internal.config.kubernetes.io/index": "0"}
    return {**obj, "metadata": {**meta, "annotations": annotations}}


def _result(message: Message) -> dict:
    result = {"message": message.located_text(), "severity": message.severity}
    if message.code:
        result["tags"] = {"code": message.code}  # kyaml's Result has no code field; tags is its free map
    if message.ref is not None:
        ref = {"apiVersion": message.ref.api_version or "ome.io/v1beta1", "kind": message.ref.kind,
               "name": message.ref.name}
        if message.ref.namespace:
            ref["namespace"] = message.ref.namespace
        result["resourceRef"] = ref
    if message.field:
        result["field"] = {"path": message.field}
    if message.file:
        result["file"] = {"path": message.file}
        index = getattr(message.where(), "index", None)
        if index is not None:  # kyaml's framework.File has path and index, no line
            result["file"]["index"] = index
    return result


def _resource_list(items: list, results: list) -> dict:
    out = {"apiVersion": RESOURCE_LIST[0], "kind": RESOURCE_LIST[1], "items": items}
    if results:
        out["results"] = results
    return out


def read_input(stream) -> str:
    """The ResourceList text: it holds the whole kustomization, so the input's total limit applies."""
    return read_stream(stream, limits.MAX_TOTAL_BYTES, STDIN, "render fewer objects in one kustomization")


def run_input(stream) -> tuple[dict, int, list[str]]:
    """Read the ResourceList from ``stream`` and run the function on it (:func:`run_with_lines`); a read failure
    is an error result."""
    text, failures = run_guarded(lambda: read_input(stream))
    if failures:
        return _resource_list([], [_result(m) for m in failures]), 1, [m.line() for m in failures]
    return run_with_lines(text)
