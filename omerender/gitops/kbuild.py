"""Building a kustomization safely: which programs it would run, and which path renders it.

A kustomization tree can name programs for kustomize to run (exec and container KRM functions, legacy
exec plugins). On a repository nobody vetted (Argo CD) none of those may run, except omerender itself.
:func:`scan` walks the tree as kustomize would and refuses every other program reference;
:func:`decide` picks the path:

* **pipeline** (the default, and the fast one): ``kustomize build`` with every plugin kind off and the
  OMERender transformer entry dropped, then omerender's own render of the result. It gives the objects
  the function path gives when the OMERender transformer is the last transformer of the kustomization
  being built: kustomize applies that kustomization's built-in transformations (namespace, labels,
  patches, images, replicas…) and its earlier ``transformers:`` before it, and nothing after it.
* **function**: kustomize runs omerender inside the build, needed where something transforms the
  rendered objects: an overlay above the kustomization that lists OMERender, a transformer after it, or
  a rename (namePrefix, a generator's hash suffix…), since kustomize rewrites references to renamed
  objects after all transformers.
  The tree is staged in a temporary copy whose every OMERender reference names the installed omerender.

:func:`stage` writes that copy (only the kustomization directories the build reaches; symbolic links
leading outside the boundary are refused, never followed).
"""
from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass, field as dc_field

import yaml

from omerender.errors import ObjRef, OmeError
from omerender.yamlio import limits
from omerender.yamlio.emit import dump, dump_stream
from omerender.yamlio.paths import within
from omerender.yamlio.reading import find_kustomization, parse_text, read_paths
from omerender.yamlio.yamlread import SafeLoader
from . import namerefs
from .remote import LOCAL, fetched

CONFIG_API = "omerender.io/v1alpha1"
CONFIG_KIND = "OMERender"
FUNCTION_ANNOTATIONS = ("config.kubernetes.io/function", "config.k8s.io/function")
DIR_FIELDS = ("resources", "bases", "components")
PLUGIN_FIELDS = ("generators", "transformers", "validators")
FN_NAME = "omerender-fn"
# The image plugins/kustomize/omerender-container.yaml names, under any registry, with any tag or digest.
OMERENDER_IMAGE = re.compile(r"^([\w.-]+(:\d+)?/)*omerender(:[\w.-]+)?(@sha256:[0-9a-f]{64})?$")
ORIGIN = "originAnnotations"
LOCAL_CONFIG = "config.kubernetes.io/local-config"
# kustomize builtins that rename objects (their references are rewritten after every transformer).
RENAMING_BUILTINS = ("PrefixSuffixTransformer", "PrefixTransformer", "SuffixTransformer", "HashTransformer",
                     "ConfigMapGenerator", "SecretGenerator")
FIX = "only omerender's own function may run here: list plugins/kustomize/omerender-fn.yaml"


@dataclass
class ConfigRef:
    """One OMERender config that a kustomization lists under a plugin field."""

    kustomization: str  # the real path of the kustomization file that lists it
    field: str          # generators, transformers or validators
    entry: int          # its position in that field
    file: str | None    # the real path of the file holding it; None when inline
    doc: int            # its position among that entry's documents
    docs: int           # how many documents that entry holds
    config: dict
    nested: bool        # listed through a directory (a kustomization of configs)


@dataclass
class Tree:
    root: str                                   # the real path of the kustomization directory built
    boundary: str                               # nothing outside it is read
    hint: str = ""                              # how the caller widens the boundary, for messages
    dirs: list[str] = dc_field(default_factory=list)       # every kustomization directory reached, real paths
    kustomizations: dict[str, dict] = dc_field(default_factory=dict)  # kustomization file -> its data
    refs: list[ConfigRef] = dc_field(default_factory=list)
    remote: list[tuple[str, str]] = dc_field(default_factory=list)    # (kustomization file, entry)
    renames: list[str] = dc_field(default_factory=list)   # what renames objects ("<file> namePrefix")
    local_config: list[str] = dc_field(default_factory=list)  # files that mention LOCAL_CONFIG
    read_bytes: int = 0                         # what scan read, all files together (one budget)


@dataclass
class Plan:
    path: str            # "pipeline" or "function"
    reason: str
    config: dict | None  # the OMERender config whose spec gives the options (pipeline)
    warning: str | None = None


def shown(path: str) -> str:
    """A path as messages print it: relative to the working directory where the two share a folder below /
    (Argo CD runs in the app's directory: ``../../base/kustomization.yaml``)."""
    cwd = _resolved(os.getcwd())
    return os.path.relpath(path, cwd) if os.path.commonpath([path, cwd]) != os.path.sep else path


@functools.lru_cache(maxsize=4)  # each message of a build names its file: resolve the working directory once
def _resolved(cwd: str) -> str:
    return os.path.realpath(cwd)


# ---------------------------------------------------------------- walking the tree

def scan(directory: str, boundary: str, hint: str = "") -> Tree:
    """Every kustomization directory the build of ``directory`` reaches, and every OMERender config.

    Raises :class:`OmeError` for a reference that would run another program, or a path outside ``boundary``.
    """
    boundary = os.path.realpath(boundary)
    tree = Tree(os.path.realpath(directory), boundary, hint)
    _check_inside(tree, tree.root, directory, None)
    _visit(tree, tree.root, configs=False)
    return tree


def _visit(tree: Tree, directory: str, configs: bool) -> None:
    if directory in tree.dirs:
        return
    tree.dirs.append(directory)
    if len(tree.dirs) > limits.MAX_FILES:
        raise OmeError(f"more than {limits.MAX_FILES:,} kustomization directories", file=shown(tree.root))
    kfile = find_kustomization(directory)
    if kfile is None:
        return  # kustomize says what is missing
    data = _kustomization(tree, kfile)
    tree.kustomizations[kfile] = data
    tree.renames.extend(f"{shown(kfile)} {name}" for name in renaming_fields(data))
    for name in DIR_FIELDS:
        for entry in _entries(data, name, kfile):
            local = _local(tree, kfile, name, entry)
            if local is None:
                continue
            if os.path.isdir(local):
                _visit(tree, local, configs)
            elif configs and os.path.isfile(local):
                _check_docs(tree, kfile, name, 0, local, _file_docs(tree, local), nested=True)
    for name in PLUGIN_FIELDS:
        for position, entry in enumerate(_entries(data, name, kfile)):
            if "\n" in entry or ":" in entry and fetched(entry) is None:
                _check_docs(tree, kfile, name, position, None, _inline_docs(entry, kfile, name, position),
                            nested=configs)
                continue
            local = _local(tree, kfile, name, entry)
            if local is None:
                continue
            if os.path.isdir(local):
                _visit(tree, local, configs=True)
            elif os.path.isfile(local):
                _check_docs(tree, kfile, name, position, local, _file_docs(tree, local), nested=configs)


def _read(tree: Tree, file: str):
    tree.read_bytes += os.path.getsize(file)
    if tree.read_bytes > limits.MAX_TOTAL_BYTES:
        raise OmeError(f"the kustomizations and plugin configs are larger than "
                       f"{limits.MAX_TOTAL_BYTES // limits.MIB} MiB in total", file=shown(file))
    return read_paths([file])


def _kustomization(tree: Tree, kfile: str) -> dict:
    docs = _read(tree, kfile)
    data = docs[0].data if docs else {}
    if len(docs) > 1 or not isinstance(data, dict):
        raise OmeError("a kustomization is one YAML mapping", file=shown(kfile))
    return data


def _entries(data: dict, name: str, kfile: str) -> list[str]:
    value = data.get(name) or []
    if not isinstance(value, list) or not all(isinstance(e, str) for e in value):
        raise OmeError(f"{name} must be a list of strings", file=shown(kfile), field=name)
    return value


def _local(tree: Tree, kfile: str, name: str, entry: str) -> str | None:
    """The real path an entry names, checked to be inside the boundary; None for remote or missing ones.

    Also checked as spelled (joined and cleaned, as kustomize joins it on the staged copy, which mirrors the
    boundary): an entry kustomize takes as a path can then never leave the copy, missing here or not."""
    if os.path.isabs(entry):
        raise OmeError(f"{name} entry {entry!r} is an absolute path; use a path relative to the kustomization",
                       file=shown(kfile), field=name)
    kind = fetched(entry)
    if kind in LOCAL:
        raise OmeError(f"{name} entry {entry!r} is a git repository on this machine ({LOCAL[kind]}), outside the "
                       f"repository; copy what it holds into the repository and name it by a relative path, or name "
                       f"a repository over the network (https://host/org/repo, git@host:org/repo)",
                       file=shown(kfile), field=name)
    path = os.path.join(os.path.dirname(kfile), entry)
    _check_inside(tree, os.path.normpath(path), entry, kfile)
    if kind == "network":
        tree.remote.append((kfile, entry))  # kustomize fetches it, even where a directory of that name exists
        return None
    if not os.path.lexists(path):
        return None
    _check_inside(tree, os.path.realpath(path), entry, kfile)
    return os.path.realpath(path)


def _check_inside(tree: Tree, real: str, entry: str, kfile: str | None) -> None:
    if not within(real, tree.boundary):
        raise OmeError(f"{entry!r} leads to {real}, outside the repository {tree.boundary}; omerender builds "
                       f"only what is inside it{tree.hint}", file=shown(kfile) if kfile else None)


def _file_docs(tree: Tree, file: str) -> list[dict]:
    return [d.data for d in _read(tree, file)]


def _inline_docs(entry: str, kfile: str, name: str, position: int) -> list[dict]:
    try:
        return [d.data for d in parse_text(entry, shown(kfile), located=False)]  # its lines are not the file's
    except OmeError as err:
        err.field = f"{name}[{position}]"
        raise


def _check_docs(tree: Tree, kfile: str, name: str, position: int, file: str | None, docs: list,
                nested: bool) -> None:
    for index, doc in enumerate(docs):
        if check_config(doc, shown(file or kfile)):
            tree.refs.append(ConfigRef(kfile, name, position, file, index, len(docs), doc, nested))
        elif doc.get("kind") in RENAMING_BUILTINS:
            tree.renames.append(f"{shown(file or kfile)} {doc.get('kind')}")


def renaming_fields(data: dict) -> list[str]:
    """The fields of a kustomization that rename objects: kustomize rewrites references to a renamed object
    (a ConfigMap an InferenceService's env names, say) after all transformers, rendered objects included."""
    found = [name for name in ("namePrefix", "nameSuffix", "vars") if data.get(name)]
    hashed_by_default = not _disables_hash(data.get("generatorOptions"))
    for name in ("configMapGenerator", "secretGenerator"):
        generators = data.get(name) if isinstance(data.get(name), list) else []
        if any(not isinstance(g, dict) or not _disables_hash(g.get("options"), hashed_by_default)
               for g in generators):
            found.append(name)
    return found


def _disables_hash(options, default_hashed: bool = True) -> bool:
    value = options.get("disableNameSuffixHash") if isinstance(options, dict) else None
    return value is True or (value is None and not default_hashed)


def check_config(doc, file: str) -> bool:
    """True for an OMERender config, False for a kustomize builtin; an error for anything that runs a program."""
    if not isinstance(doc, dict):
        raise OmeError("a plugin config must be a Kubernetes object", file=file)
    meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    annotations = meta.get("annotations") if isinstance(meta.get("annotations"), dict) else {}
    ref = ObjRef(str(doc.get("kind")), str(meta.get("name")), meta.get("namespace"), doc.get("apiVersion"))
    is_omerender = (doc.get("apiVersion"), doc.get("kind")) == (CONFIG_API, CONFIG_KIND)
    for key in FUNCTION_ANNOTATIONS:
        if key in annotations:
            spec = _function_spec(annotations[key])
            if is_omerender and _runs_omerender(spec):
                continue
            raise OmeError(f"{describe(spec, annotations[key])} is a program this repository chooses; {FIX}",
                           ref, file, f"metadata.annotations.{key}")
    if is_omerender or doc.get("apiVersion") == "builtin":
        return is_omerender
    raise OmeError(f"legacy kustomize plugin {doc.get('apiVersion')} {doc.get('kind')} would run a program from "
                   f"the plugin home; only kustomize's builtin plugins (apiVersion: builtin) and omerender may run "
                   f"here", ref, file)


def _function_spec(text):
    try:
        spec = yaml.load(text, Loader=SafeLoader) if isinstance(text, str) else None
    except yaml.YAMLError:
        spec = None
    return spec if isinstance(spec, dict) else None


def _runs_omerender(spec: dict | None) -> bool:
    if spec is None or len(spec) != 1:
        return False
    (how, detail), = spec.items()
    if not isinstance(detail, dict):
        return False
    if how == "exec":
        return set(detail) <= {"path", "args"} and not detail.get("args") \
            and isinstance(detail.get("path"), str) and os.path.basename(detail["path"]) == FN_NAME
    if how == "container":
        return set(detail) == {"image"} and isinstance(detail["image"], str) \
            and bool(OMERENDER_IMAGE.match(detail["image"]))
    return False


def describe(spec: dict | None, raw) -> str:
    """How a function reference reads in a message: ``exec path ./evil.sh``, ``container image x``."""
    if spec and isinstance(spec.get("exec"), dict):
        return f"exec function path {spec['exec'].get('path')!r}"
    if spec and isinstance(spec.get("container"), dict):
        return f"container function image {spec['container'].get('image')!r}"
    if spec and "starlark" in spec:
        return "starlark function"
    return f"function {str(raw).strip()!r}"


# ---------------------------------------------------------------- choosing the path

def decide(tree: Tree) -> Plan:
    top = find_kustomization(tree.root)
    for ref in tree.refs:
        if ref.field == "generators":
            raise OmeError("OMERender is listed under generators:, where it would see no resources and render "
                           "nothing; list it under transformers:", file=shown(ref.kustomization),
                           field=f"generators[{ref.entry}]")
    if not tree.refs:
        warning = None if not tree.renames else (
            f"{', '.join(tree.renames)} renames objects; kustomize can't rewrite references to them inside "
            f"InferenceServices, so rendered objects would keep the old names: list omerender last under "
            f"transformers: (plugins/kustomize/omerender-fn.yaml) and kustomize rewrites them")
        return Plan("pipeline", "no OMERender transformer in the tree: kustomize build with plugins off, then "
                                "omerender render", None, warning)
    last = _last_transformer(tree, top)
    if last is None:
        return Plan("function", _why_function(tree, top), None)
    late = _late_steps(tree, top)
    if late:
        return Plan("function", f"{late}: kustomize runs the installed omerender function", None)
    return Plan("pipeline", f"OMERender is the last transformer of {shown(top)}: kustomize build with plugins off "
                            f"and without it, then omerender render (the same objects, faster)", last.config)


def _last_transformer(tree: Tree, top: str | None) -> ConfigRef | None:
    """The one OMERender config, when it is the last entry (a file or inline config of its own) of the
    top kustomization's transformers:."""
    ref = tree.refs[0]
    if len(tree.refs) != 1 or top is None or ref.kustomization != top or ref.field != "transformers" \
            or ref.nested or ref.docs != 1:
        return None
    return ref if ref.entry == len(tree.kustomizations[top]["transformers"]) - 1 else None


def _late_steps(tree: Tree, top: str) -> str | None:
    """What kustomize does after the top kustomization's transformers that reaches rendered objects too."""
    if tree.kustomizations[top].get("buildMetadata"):
        return f"{shown(top)} sets buildMetadata, which kustomize applies to every object it outputs, rendered ones too"
    configs = {shown(r.file or r.kustomization) for r in tree.refs}
    local = [f for f in tree.local_config if f not in configs]
    if local:
        return (f"{', '.join(local)} marks objects {LOCAL_CONFIG}, which kustomize drops only after its "
                f"transformers, so OMERender sees them")
    if tree.renames:
        return (f"{', '.join(tree.renames)} renames objects, and kustomize rewrites references to them after its "
                f"transformers, in rendered objects too")
    return None


def _why_function(tree: Tree, top: str | None) -> str:
    where = ", ".join(sorted({f"{shown(r.kustomization)} {r.field}[{r.entry}]" for r in tree.refs}))
    return (f"OMERender is listed at {where}, not only as the last transformer of {shown(top or tree.root)}: "
            f"what follows it transforms rendered objects, so kustomize runs the installed omerender function")


# ---------------------------------------------------------------- staging a copy

def copy_tree(tree: Tree, dest: str | None) -> str:
    """Copy every kustomization directory the build reaches under ``dest``, laid out as in the boundary; return
    the directory ``dest`` stands for (the boundary: an entry that stays inside it, checked as spelled, stays
    inside ``dest``). Notes the files marked local-config on the way (see :func:`decide`). With ``dest`` None,
    only checks what a copy would (its limits, its links) and notes those files."""
    base = tree.boundary
    outer = [d for d in tree.dirs if not any(d != o and within(d, o) for o in tree.dirs)]
    budget = {"files": 0, "bytes": 0}
    tree.local_config = []
    try:
        for directory in sorted(outer):
            target = None if dest is None else os.path.join(dest, os.path.relpath(directory, base))
            _copy_dir(tree, directory, target, budget)
    except OSError as err:
        if err.filename and within(os.path.realpath(err.filename), base):
            raise OmeError(f"cannot read: {err.strerror}", file=shown(err.filename)) from None
        raise OmeError(f"cannot copy the kustomization for kustomize: {err.strerror}") from None
    return base


def prepare(tree: Tree, plan: Plan, dest: str, base: str, function: dict | None) -> str:
    """Adapt the copy to ``plan``; return the staged directory to build.

    Pipeline: the OMERender entry is dropped from the top kustomization, which also asks kustomize for origin
    annotations (so messages can name each object's file). Function path: every OMERender config is rewritten
    to ``function`` (an annotation value), or made a legacy plugin config when None.
    """
    staged = lambda path: os.path.join(dest, os.path.relpath(path, base))  # noqa: E731
    top = find_kustomization(tree.root)
    if plan.path == "pipeline" and top is not None:
        _write(staged(top), dump(pipeline_kustomization(tree.kustomizations[top], plan.config is not None)))
    elif plan.path == "function":
        _rewrite_refs(tree, staged, function)
        namerefs.add_rules([staged(ref.kustomization) for ref in tree.refs])   # renames above keep references
    return staged(tree.root)


def pipeline_kustomization(data: dict, drop_last_transformer: bool) -> dict:
    data = dict(data)
    if drop_last_transformer:
        data["transformers"] = data["transformers"][:-1]
    metadata = data.get("buildMetadata") if isinstance(data.get("buildMetadata"), list) else []
    if ORIGIN not in metadata:
        data["buildMetadata"] = [*metadata, ORIGIN]
    return {k: v for k, v in data.items() if v != []}


def _rewrite_refs(tree: Tree, staged, function: dict | None) -> None:
    files: dict[str, list] = {}
    inline: dict[str, dict] = {}
    for ref in tree.refs:
        rewritten = _as_installed(ref.config, function)
        if ref.file is not None:
            files.setdefault(ref.file, _file_docs(tree, ref.file))[ref.doc] = rewritten
        else:
            data = inline.setdefault(ref.kustomization, dict(tree.kustomizations[ref.kustomization]))
            entries = list(data[ref.field])
            docs = _inline_docs(entries[ref.entry], ref.kustomization, ref.field, ref.entry)
            docs[ref.doc] = rewritten
            entries[ref.entry] = dump_stream(docs)
            data[ref.field] = entries
    for file, docs in files.items():
        _write(staged(file), dump_stream(docs))
    for kfile, data in inline.items():
        _write(staged(kfile), dump(data))


def _as_installed(config: dict, function: dict | None) -> dict:
    meta = dict(config.get("metadata") or {})
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k not in FUNCTION_ANNOTATIONS}
    if function is not None:
        annotations[FUNCTION_ANNOTATIONS[0]] = dump(function)
    meta["annotations"] = annotations
    return {**config, "metadata": meta}


def _copy_dir(tree: Tree, source: str, target: str | None, budget: dict) -> None:
    if target is not None:
        os.makedirs(target, exist_ok=True)
    with os.scandir(source) as found:
        entries = sorted(found, key=lambda e: e.name)
    for entry in entries:
        if entry.name == ".git":
            continue
        destination = None if target is None else os.path.join(target, entry.name)
        if entry.is_symlink():
            real = os.path.realpath(entry.path)
            if not within(real, tree.boundary):
                raise OmeError(f"symbolic link to {real}, outside the repository {tree.boundary}; omerender "
                               f"builds only what is inside it{tree.hint}", file=shown(entry.path))
            if not os.path.isfile(real):
                raise OmeError("symbolic link to something other than a file; omerender build follows links to "
                               "files only", file=shown(entry.path))
            _copy_file(tree, real, destination, budget, entry.path)
        elif entry.is_dir(follow_symlinks=False):
            _copy_dir(tree, entry.path, destination, budget)
        elif entry.is_file(follow_symlinks=False):
            _copy_file(tree, entry.path, destination, budget, entry.path)
        # FIFOs, sockets and devices are left out: kustomize reading one would hang or leak


def _copy_file(tree: Tree, source: str, target: str | None, budget: dict, name: str) -> None:
    budget["files"] += 1
    budget["bytes"] += os.path.getsize(source)
    if budget["files"] > limits.MAX_FILES or budget["bytes"] > limits.MAX_TOTAL_BYTES:
        raise OmeError(f"the kustomization directories hold more than {limits.MAX_FILES:,} files or "
                       f"{limits.MAX_TOTAL_BYTES // limits.MIB} MiB", file=shown(name))
    with open(source, "rb") as reader:
        data = reader.read(limits.MAX_TOTAL_BYTES + 1)
    if LOCAL_CONFIG.encode() in data:
        tree.local_config.append(shown(name))
    if target is not None:
        with open(target, "wb") as writer:
            writer.write(data)


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


# ---------------------------------------------------------------- kustomize's output order

# kustomize's default ("legacy") order: these kinds first and last, in this order; the rest between.
ORDER_FIRST = ("Namespace", "ResourceQuota", "StorageClass", "CustomResourceDefinition", "ServiceAccount",
               "PodSecurityPolicy", "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding", "ConfigMap", "Secret",
               "Endpoints", "Service", "LimitRange", "PriorityClass", "PersistentVolume", "PersistentVolumeClaim",
               "Deployment", "StatefulSet", "CronJob", "PodDisruptionBudget")
ORDER_LAST = ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")


def kustomize_order(objects: list[dict], kustomization: dict | None) -> list[dict]:
    """``objects`` in the order ``kustomize build`` prints them under the top kustomization's ``sortOptions``
    (default legacy), so the pipeline's output is the function path's, order included."""
    options = (kustomization or {}).get("sortOptions")
    options = options if isinstance(options, dict) else {}
    if options.get("order") == "fifo":
        return objects
    legacy = options.get("legacySortOptions") if isinstance(options.get("legacySortOptions"), dict) else {}
    first = legacy.get("orderFirst") or ORDER_FIRST
    last = legacy.get("orderLast") or ORDER_LAST
    ranks = {kind: i - len(first) for i, kind in enumerate(first)}
    ranks.update({kind: 1 + i for i, kind in enumerate(last)})
    ids = [_id(obj) for obj in objects]
    keys = {gvk: _gvk_key(gvk) for gvk in {x[:3] for x in ids}}
    if len(set(keys.values())) == len(keys) and sum(gvk[2] == "Namespace" for gvk in keys) <= 1:
        # _compare as a key (one sort key per object, not a Python call per comparison): the same order where
        # no two kinds share a key and no two Namespace kinds meet (kustomize compares those the other way round)
        order = sorted(range(len(objects)), key=lambda k: (ranks.get(ids[k][2], 0), keys[ids[k][:3]], _id_key(ids[k])))
        return [objects[k] for k in order]
    return sorted(objects, key=functools.cmp_to_key(lambda a, b: _compare(_id(a), _id(b), ranks)))


def _id(obj: dict) -> tuple[str, str, str, str, str]:
    api_version = str(obj.get("apiVersion") or "")
    group, version = (api_version.split("/", 1) if "/" in api_version else ("", api_version))
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    return group, version, str(obj.get("kind") or ""), str(meta.get("namespace") or ""), str(meta.get("name") or "")


def _compare(a: tuple, b: tuple, ranks: dict) -> int:
    if a[:3] != b[:3]:
        rank_a, rank_b = ranks.get(a[2], 0), ranks.get(b[2], 0)
        if rank_a != rank_b:
            return -1 if rank_a < rank_b else 1
        key_a, key_b = _gvk_key(a), _gvk_key(b)
        if a[2] == b[2] == "Namespace" and "" in (a[0], b[0]):
            key_a, key_b = key_b, key_a  # kustomize compares core Namespaces the other way round
        return (key_a > key_b) - (key_a < key_b)
    key_a, key_b = _id_key(a), _id_key(b)
    return (key_a > key_b) - (key_a < key_b)


def _gvk_key(x: tuple) -> str:
    return "_".join((x[0] or "~G", x[1] or "~V", x[2] or "~K"))


def _id_key(x: tuple) -> str:
    gvk = ".".join((x[2] or "[noKind]", x[1] or "[noVer]", x[0] or "[noGrp]"))
    return "|".join((gvk, x[3] or "~X", x[4] or "~N"))
