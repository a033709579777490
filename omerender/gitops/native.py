"""The pipeline's ``kustomize build``, done by omerender itself where it gives the very same documents.

kustomize's cost grows about as n^2.1 with the objects it builds (16 s for 2,187 objects, 577 s for 12,187), far
past Argo CD's deadline, while what most OME apps ask of it is to list files. Where every kustomization the build
reaches uses only what is reproduced here exactly, :func:`documents` returns what omerender would read from
kustomize's output; anything else returns None and kustomize builds it as before. What is reproduced, for
kustomize 5 with plugins off and origin annotations on (what :func:`omerender.gitops.kbuild.prepare` asks):

* ``resources:`` entries that are files inside the kustomization's own directory or directories holding one
  kustomization (local bases), each built first, in entry order; kustomize's load restrictions and its refusal
  of two objects with one id send anything else to kustomize;
* ``namespace``, ``namePrefix``, ``nameSuffix``, ``commonLabels``, ``labels`` (``pairs``, ``includeSelectors``,
  ``includeTemplates``) and ``commonAnnotations``, on objects of the kinds for which kustomize changes
  ``metadata`` only and rewrites no name references (OME's kinds, ConfigMaps, Secrets); any other kind under one
  of them goes to kustomize;
* kustomize's document model: every mapping's keys sorted (it writes objects through JSON), an annotations
  mapping left empty dropped (the origin annotation omerender removes was its only entry), objects in its
  output order (:func:`omerender.gitops.kbuild.kustomize_order`), each named by the file it came from, and its
  warning for ``commonLabels``.

A document goes to kustomize when its text uses what kustomize could read differently (anchors, aliases,
tags, merge keys, directives, a ``List`` kind, a byte order mark) or its reading holds a value whose JSON round
trip could change (floats, integers past 2^53, keys that are not strings, kustomize's own annotations). The
containment rules are the build's: :func:`omerender.gitops.kbuild.scan` and ``copy_tree`` have run first, and
every path here must resolve where it is spelled (no symbolic link on the way).
"""
from __future__ import annotations

import os
import re

from omerender.errors import OmeError
from omerender.yamlio import limits
from omerender.yamlio.paths import within
from omerender.yamlio.reading import KUSTOMIZATION_FILES, Doc, parse_text, read_file
from omerender.yamlio.yamlread import Budget
from . import kbuild
from .remote import fetched

KUSTOMIZE_API = "kustomize.config.k8s.io/v1beta1"
FIELDS = frozenset(("apiVersion", "kind", "metadata", "resources", "namespace", "namePrefix", "nameSuffix",
                    "commonLabels", "labels", "commonAnnotations", "transformers"))
LABEL_ENTRY = frozenset(("pairs", "includeSelectors", "includeTemplates"))
COMMON_LABELS_WARNING = ("# Warning: 'commonLabels' is deprecated. Please use 'labels' instead. Run 'kustomize edit "
                         "fix' to update your Kustomization automatically.\n")
# Text kustomize may read otherwise than omerender: anchors, aliases, tags, merge keys, directives, List kinds.
RISKY_TEXT = re.compile(r"(?:^|[\s\[{,:?-])[&*!]|<<|^%|\A\ufeff|kind[\"']?\s*:\s*[\"']?[\w.-]*List\b", re.M)
# What each of RISKY_TEXT's branches needs somewhere in the text: a text without any of them can't match, and str's
# own search finds that about forty times faster than the pattern, which tries its first branch at every character.
RISKY_NEEDS = ("&", "*", "!", "<", "%", "\ufeff", "List")
# Annotations kustomize reads, adds or removes (config.kubernetes.io/local-config, its internal ones...).
KUSTOMIZE_KEYS = ("config.kubernetes.io/", "config.k8s.io/", "kustomize.config.k8s.io/", "kustomize.toolkit.fluxcd.io/")
SAFE_INT = 1 << 53
# Characters YAML writers escape, fold or drop in their own ways (controls, NEL, line separators, byte order
# marks, lone surrogates): a string holding one goes to kustomize.
RISKY_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]")


class Fallback(Exception):
    """What this module can't reproduce exactly: kustomize builds the tree."""


def documents(tree: kbuild.Tree, plan: kbuild.Plan) -> tuple[list[Doc], str] | None:
    """The documents (and kustomize's stderr) the pipeline would read from ``kustomize build`` of ``tree``, or None
    where only kustomize gives them exactly."""
    if tree.remote or (tree.refs and plan.config is None):
        return None
    try:
        state = _State(tree, plan)
        objects = state.build(tree.root)
    except Fallback:
        return None
    for obj in objects:
        _drop_empty_annotations(obj.data)
    top = kbuild.find_kustomization(tree.root)
    ordered = kbuild.kustomize_order([o.data for o in objects], tree.kustomizations.get(top))
    files = {id(o.data): o.file for o in objects}
    docs = [Doc(data, files[id(data)], position) for position, data in enumerate(ordered)]
    return docs, COMMON_LABELS_WARNING * state.common_labels


class _Object:
    __slots__ = ("data", "file", "ids")

    def __init__(self, data: dict, file: str):
        self.data, self.file = data, file
        self.ids = {_key(data)}  # every id it had: kustomize matches an object by its original id too


class _State:
    def __init__(self, tree: kbuild.Tree, plan: kbuild.Plan):
        self.tree, self.plan = tree, plan
        self.budget = Budget()
        self.count = 0
        self.common_labels = 0
        self.top = kbuild.find_kustomization(tree.root)

    def build(self, directory: str) -> list[_Object]:
        kfile = _only_kustomization(directory)
        data = self.tree.kustomizations.get(kfile)
        if not isinstance(data, dict) or not set(data) <= FIELDS or any(v is None for v in data.values()):
            raise Fallback
        self._check_header(kfile, data)
        objects: list[_Object] = []
        for entry in data.get("resources") or []:
            objects.extend(self._resource(directory, entry))
        _unique(objects)
        if "commonLabels" in data:
            self.common_labels += 1
        _transform(objects, data)
        _unique(objects)
        return objects

    def _check_header(self, kfile: str, data: dict) -> None:
        if data.get("apiVersion", KUSTOMIZE_API) != KUSTOMIZE_API or data.get("kind", "Kustomization") != \
                "Kustomization" or not isinstance(data.get("resources", []), list):
            raise Fallback
        transformers = data.get("transformers", [])
        dropped = 1 if kfile == self.top and self.plan.config is not None else 0
        if not isinstance(transformers, list) or len(transformers) != dropped:
            raise Fallback

    def _resource(self, directory: str, entry) -> list[_Object]:
        if not isinstance(entry, str) or not entry or os.path.isabs(entry) or fetched(entry) is not None \
                or os.path.normpath(entry) != entry:
            raise Fallback
        path = os.path.normpath(os.path.join(directory, entry))
        if os.path.realpath(path) != path or not within(path, self.tree.boundary):
            raise Fallback  # a symbolic link on the way, or outside: kustomize and today's rules decide
        if os.path.isdir(path):
            return self.build(path)
        if not os.path.isfile(path) or entry.startswith(".."):
            raise Fallback  # missing, or a file outside the kustomization's root (kustomize refuses it)
        return self._file(path)

    def _file(self, path: str) -> list[_Object]:
        try:
            text = read_file(path)
            if _risky(text):
                raise Fallback
            docs = parse_text(text, kbuild.shown(path), budget=self.budget, located=False)
        except OmeError:
            raise Fallback from None  # kustomize's output, read as today, gives today's message
        self.count += len(docs)
        if self.count > limits.MAX_OBJECTS:
            raise Fallback
        return [_Object(_checked_object(doc.data), doc.file) for doc in docs]


def _risky(text: str) -> bool:
    return any(needed in text for needed in RISKY_NEEDS) and RISKY_TEXT.search(text) is not None


def _only_kustomization(directory: str) -> str:
    found = [os.path.join(directory, n) for n in KUSTOMIZATION_FILES if os.path.isfile(os.path.join(directory, n))]
    if len(found) != 1:
        raise Fallback  # none (kustomize's error), or several (kustomize refuses to choose)
    return found[0]


def _checked_object(data) -> dict:
    if not isinstance(data, dict):
        raise Fallback
    data = _canonical(data)
    meta = data.get("metadata")
    if not (isinstance(data.get("apiVersion"), str) and data["apiVersion"] and isinstance(data.get("kind"), str)
            and data["kind"] and isinstance(meta, dict) and isinstance(meta.get("name"), str) and meta["name"]):
        raise Fallback
    if "namespace" in meta and not isinstance(meta["namespace"], str):
        raise Fallback
    for field in ("labels", "annotations"):
        if field in meta:
            pairs = meta[field]
            if not isinstance(pairs, dict) or not all(isinstance(v, str) for v in pairs.values()) \
                    or any(_kustomize_key(k) for k in pairs):
                raise Fallback
    return data


def _canonical(value):
    """``value`` as kustomize writes it back through JSON (every mapping's keys sorted); Fallback for what that
    round trip could change."""
    kind = type(value)
    if kind is str:
        if not (value.isascii() and value.isprintable()) and RISKY_CHARS.search(value):
            raise Fallback
        return value
    if kind is bool or value is None:
        return value
    if kind is int:
        if -SAFE_INT < value < SAFE_INT:
            return value
        raise Fallback
    if kind is dict:
        if not all(type(k) is str for k in value):
            raise Fallback
        return {k: _canonical(value[k]) for k in sorted(value)}
    if kind is list:
        return [_canonical(v) for v in value]
    raise Fallback  # floats, and anything else


def _key(data: dict) -> tuple:
    meta = data["metadata"]
    group = data["apiVersion"].rpartition("/")[0]
    return group, data["kind"], meta.get("namespace") or "default", meta["name"]


def _unique(objects: list[_Object]) -> None:
    """kustomize refuses two objects with one id (its message is today's): Fallback, ignoring versions."""
    seen: set = set()
    for obj in objects:
        obj.ids.add(_key(obj.data))
        if seen & obj.ids:
            raise Fallback
        seen |= obj.ids


# ---------------------------------------------------------------- builtin transformations

def _transform(objects: list[_Object], data: dict) -> None:
    namespace = data.get("namespace")
    prefix, suffix = data.get("namePrefix", ""), data.get("nameSuffix", "")
    labels = _labels(data)
    annotations = _pairs(data.get("commonAnnotations", {}))
    if not (namespace or prefix or suffix or labels or annotations or "namespace" in data):
        return
    if not (isinstance(namespace, str) and namespace or "namespace" not in data) \
            or not isinstance(prefix, str) or not isinstance(suffix, str):
        raise Fallback
    for obj in objects:
        if not _metadata_only(obj.data):
            raise Fallback
        meta = obj.data["metadata"]
        if namespace:
            meta["namespace"] = namespace
        if prefix or suffix:
            meta["name"] = prefix + meta["name"] + suffix
        for field, pairs in (("labels", labels), ("annotations", annotations)):
            if pairs:
                meta[field] = dict(sorted({**meta.get(field, {}), **pairs}.items()))
        obj.data["metadata"] = dict(sorted(meta.items()))


def _labels(data: dict) -> dict:
    pairs = _pairs(data.get("commonLabels", {}))
    entries = data.get("labels", [])
    if not isinstance(entries, list):
        raise Fallback
    for entry in entries:
        if not isinstance(entry, dict) or not set(entry) <= LABEL_ENTRY \
                or not all(isinstance(entry.get(k, False), bool) for k in ("includeSelectors", "includeTemplates")):
            raise Fallback
        more = _pairs(entry.get("pairs", {}))
        if any(pairs.get(k, v) != v for k, v in more.items()):
            raise Fallback  # one key, two values: which wins is kustomize's order
        pairs.update(more)
    return pairs


def _pairs(value) -> dict:
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) and k
                                              for k, v in value.items()):
        raise Fallback
    if any(_kustomize_key(k) for k in value):
        raise Fallback
    return dict(value)


def _kustomize_key(key: str) -> bool:
    return any(part in key for part in KUSTOMIZE_KEYS)


def _metadata_only(data: dict) -> bool:
    """Objects for which kustomize's namespace, name, label and annotation transformers change only ``metadata``
    and whose fields name nothing kustomize rewrites: its field specs and name references know no OME kind."""
    api = data["apiVersion"]
    group = api.rpartition("/")[0]
    return group == "ome.io" or group.endswith(".ome.io") or (api == "v1" and data["kind"] in ("ConfigMap", "Secret"))


def _drop_empty_annotations(data: dict) -> None:
    meta = data["metadata"]
    if meta.get("annotations") == {}:
        del meta["annotations"]
