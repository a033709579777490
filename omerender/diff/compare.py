"""Match the objects of two renders and name what changed, per InferenceService and for pass-through objects."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from omerender.errors import Message
from .sides import Side
from .why import accelerator_changes, edited_inputs, runtime_change

# The pod template of each workload kind: a change under it replaces the pods.
POD_TEMPLATES = {"Deployment": "spec.template", "LeaderWorkerSet": "spec.leaderWorkerTemplate"}
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PLAIN_VALUE = re.compile(r"[A-Za-z0-9_/-][A-Za-z0-9_./-]*")
MISSING = object()  # a key one side of a change does not have


@dataclass
class ObjectChange:
    api_version: str
    kind: str
    namespace: str | None
    name: str
    change: str                      # "added", "removed" or "changed"
    changes: list[tuple]             # (path, base's value, head's value) of each changed field: field_changes
    base: dict | None
    head: dict | None
    origin: str | None = None        # a generated object: what it is, for which input (generated_changes)

    @property
    def fields(self) -> list[str]:
        return [path for path, _, _ in self.changes]


@dataclass
class IsvcDiff:
    namespace: str
    name: str
    status: str                      # "added", "removed", "changed" or "unchanged"
    rollout: bool
    runtime: dict                    # {"base", "head", "reason"}
    accelerators: list[dict]         # [{"component", "base", "head"}]
    objects: list[ObjectChange] = field(default_factory=list)
    causes: list[dict] = field(default_factory=list)  # edited inputs it renders from, but its runtime (why.py)


@dataclass
class Diff:
    isvcs: list[IsvcDiff]
    objects: list[ObjectChange]      # pass-through objects
    gpus: list[dict]
    new_warnings: list[Message] = field(default_factory=list)   # head's render gives them, base's does not
    gone_warnings: list[Message] = field(default_factory=list)  # and the reverse
    cluster: list[dict] = field(default_factory=list)  # cluster settings that differ: {setting, base, head}
    generated: list[ObjectChange] = field(default_factory=list)  # objects rendered for a model or a BenchmarkJob

    @property
    def changed(self) -> bool:
        return bool(self.objects or self.generated) or any(i.status != "unchanged" for i in self.isvcs)


def compare_isvcs(base: Side, head: Side, cluster: list[dict] = ()) -> list[IsvcDiff]:
    """Each InferenceService of either side; ``cluster``: the cluster settings that differ (a cause of every
    change)."""
    keys = sorted(set(base.result.isvcs) | set(head.result.isvcs))
    objs = {(i.namespace, i.name): i for i in head.inputs.isvcs}
    diffs = [_isvc_diff(base, head, key) for key in keys]
    for isvc in diffs:
        if isvc.status == "changed":
            key = (isvc.namespace, isvc.name)
            isvc.causes = edited_inputs(base, head, objs.get(key), base.result.isvcs[key], head.result.isvcs[key],
                                        list(cluster))
    return diffs


# What an InferenceService's object is, where its kind alone doesn't say (a route, a trigger's credentials).
ROLES = {"HTTPRoute": "the InferenceService's route", "Ingress": "the InferenceService's route",
         "BackendTrafficPolicy": "the route's traffic policy",
         "TriggerAuthentication": "the KEDA credentials of its autoscaler policy"}


def _isvc_diff(base: Side, head: Side, key: tuple[str, str]) -> IsvcDiff:
    old, new = base.result.isvcs.get(key), head.result.isvcs.get(key)
    objects = compare_objects(old.objects if old else [], new.objects if new else [])
    for change in objects:
        change.origin = ROLES.get(change.kind)
    runtime = runtime_change(base, head, key)
    classes = accelerator_changes(old, new)
    if old is None or new is None:
        status = "added" if old is None else "removed"
    elif objects or runtime["base"] != runtime["head"] or any(c["base"] != c["head"] for c in classes):
        status = "changed"
    else:
        status = "unchanged"
        runtime["reason"] = None  # an edit of its runtime that changes nothing here is not news here
    rollout = status == "changed" and _rolls_out(objects)
    return IsvcDiff(key[0], key[1], status, rollout, runtime, classes, objects)


def _rolls_out(objects: list[ObjectChange]) -> bool:
    """A workload's pod template changed, or a workload was replaced by one of another kind."""
    workloads = [o for o in objects if o.kind in POD_TEMPLATES]
    if any(o.change == "added" for o in workloads) and any(o.change == "removed" for o in workloads):
        return True
    return any(o.change == "changed" and any(_under(f, POD_TEMPLATES[o.kind]) for f in o.fields)
               for o in workloads)


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith((prefix + ".", prefix + "["))


def passthrough(side: Side) -> list[dict]:
    """The objects of a render that no input rendered: neither an InferenceService nor a model or BenchmarkJob."""
    rendered = {id(o) for facts in side.result.isvcs.values() for o in facts.objects}
    return [o for o in side.result.objects if id(o) not in rendered and id(o) not in side.result.origins]


def generated_changes(base: Side, head: Side) -> list[ObjectChange]:
    """The objects rendered for a model (the weights claim and download Job of --model-weights download) or a
    BenchmarkJob (its Job), compared, each named as what it is and for which input."""
    sides = [[o for o in side.result.objects if id(o) in side.result.origins] for side in (base, head)]
    changes = compare_objects(*sides)
    for change in changes:
        side, obj = (head, change.head) if change.head is not None else (base, change.base)
        change.origin = _origin(change.kind, side.result.origins[id(obj)])
    return changes


def _origin(kind: str, owner) -> str:
    """``the weights claim of ClusterBaseModel llama-3-1-8b-instruct``."""
    what = {"PersistentVolumeClaim": "the weights claim", "Job": "the weights download Job"}.get(kind, f"a {kind}") \
        if owner.kind in ("BaseModel", "ClusterBaseModel") else f"the {kind}"
    where = f"{owner.namespace}/{owner.name}" if owner.namespace else owner.name
    return f"{what} of {owner.kind} {where}"


def compare_objects(base: list[dict], head: list[dict]) -> list[ObjectChange]:
    """Added, removed and changed objects, matched by apiVersion, kind, namespace and name; head's order first,
    then the removed ones in base's order. Objects with the same key are matched in order."""
    old = _keyed(base)
    changes = []
    for key, obj in _keyed(head).items():
        before = old.pop(key, None)
        if before is None:
            changes.append(_change(key, "added", [], None, obj))
        elif before != obj:
            changes.append(_change(key, "changed", field_changes(before, obj), before, obj))
    changes.extend(_change(key, "removed", [], obj, None) for key, obj in old.items())
    return changes


def _keyed(objects: list[dict]) -> dict[tuple, dict]:
    keyed: dict[tuple, dict] = {}
    for obj in objects:
        meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        key = (str(obj.get("apiVersion", "")), str(obj.get("kind", "")), meta.get("namespace") or None,
               str(meta.get("name", "")), 0)
        while key in keyed:
            key = key[:4] + (key[4] + 1,)
        keyed[key] = obj
    return keyed


def _change(key: tuple, change: str, changes: list[tuple], base: dict | None, head: dict | None) -> ObjectChange:
    return ObjectChange(key[0], key[1], key[2], key[3], change, changes, base, head)


def field_changes(base, head, path: str = "", key=None) -> list[tuple[str, object, object]]:
    """(path, base's value, head's value) where ``head`` differs from ``base``: a map key by key, a list that
    Kubernetes merges by a key (:data:`MERGE_KEYS`) item by item under that key, another list of the same length
    item by item, anything else (a list that grew or shrank, a changed value or type) as a whole. A key or an
    item on one side only has ``MISSING`` on the other. ``key``: the map key ``base`` and ``head`` are under."""
    if isinstance(base, dict) and isinstance(head, dict):
        changes = []
        for name in sorted(set(base) | set(head), key=str):
            before, after = base.get(name, MISSING), head.get(name, MISSING)
            if before is MISSING or after is MISSING:
                changes.append((_join(path, name), before, after))
            elif before != after:
                changes.extend(field_changes(before, after, _join(path, name), name))
        return changes
    if isinstance(base, list) and isinstance(head, list):
        merge_key = _merge_key(key, base, head)
        if merge_key is not None:
            return _keyed_changes(base, head, path, key, merge_key)
        if len(base) == len(head):
            return [c for i, (a, b) in enumerate(zip(base, head)) if a != b
                    for c in field_changes(a, b, f"{path}[{i}]")]
    return [(path or ".", base, head)]


# The lists of a pod template and a Service that Kubernetes merges by a key of their items (the patchMergeKey of
# the Kubernetes API: strategic merge patch and server-side apply): list field -> the keys tried in order.
MERGE_KEYS = {"containers": ("name",), "initContainers": ("name",), "ephemeralContainers": ("name",),
              "env": ("name",), "volumes": ("name",), "volumeMounts": ("mountPath",),
              "ports": ("containerPort", "port"), "imagePullSecrets": ("name",)}
# env items are shown by the variable's name alone (env[PARALLELISM_SIZE]), the others as [key=value]
BARE_KEY = {"env"}


def _merge_key(field, base: list, head: list) -> str | None:
    """The key that tells the items of both sides apart, when ``field`` is merged by key and every item has it,
    once per side."""
    for merge_key in MERGE_KEYS.get(field, ()) if isinstance(field, str) else ():
        sides = [[item.get(merge_key) if isinstance(item, dict) else None for item in side] for side in (base, head)]
        if all(None not in keys and len(set(map(_text, keys))) == len(keys) for keys in sides):
            return merge_key
    return None


def _keyed_changes(base: list, head: list, path: str, field: str, merge_key: str) -> list[tuple]:
    """Items matched by ``merge_key``: head's order, then the items only base has."""
    before = {_text(item[merge_key]): item for item in base}
    after = {_text(item[merge_key]): item for item in head}
    changes = []
    for value in list(after) + [v for v in before if v not in after]:
        old, new = before.get(value, MISSING), after.get(value, MISSING)
        where = f"{path}[{_key_text(value, None if field in BARE_KEY else merge_key)}]"
        if old is MISSING or new is MISSING:
            changes.append((where, old, new))
        elif old != new:
            changes.extend(field_changes(old, new, where))
    return changes


def _text(value) -> str:
    """A key's value as text, whatever YAML made of it (a number, a map, a timestamp)."""
    return value if isinstance(value, str) else json.dumps(value, default=str, sort_keys=True)


def _key_text(value: str, merge_key: str | None) -> str:
    """A key's value as a path shows it: plain when it can't be mistaken for path syntax, else in JSON quotes."""
    shown = value if _PLAIN_VALUE.fullmatch(value) else json.dumps(value)
    return shown if merge_key is None else f"{merge_key}={shown}"


def _join(path: str, key) -> str:
    text = str(key)
    if _PLAIN_KEY.fullmatch(text):
        return f"{path}.{text}" if path else text
    return f"{path}[{json.dumps(text)}]"


def compare_warnings(base: Side, head: Side) -> tuple[list[Message], list[Message]]:
    """The warnings only head's render gives, and those only base's gives, in render order. A warning is the
    same on both sides when its object and text are: the two sides' files have different names."""
    def keyed(side: Side) -> dict:
        return {(str(m.ref or ""), m.text): m for m in side.result.messages if m.severity == "warning"}
    before, after = keyed(base), keyed(head)
    return [m for key, m in after.items() if key not in before], [m for key, m in before.items() if key not in after]
