"""Renames keep references: kustomize's name-reference rules for the kinds omerender writes that kustomize does not
know, and the check, after ``omerender build``'s function path, that every reference of a rendered object resolves.

kustomize rewrites a reference to an object renamed by ``namePrefix``, ``nameSuffix`` or a generator's hash only in
the fields its nameReference configuration lists: a Deployment's claims, not a LeaderWorkerSet's; an HPA's
``scaleTargetRef``, not a KEDA ScaledObject's. ``namerefs.yaml`` (shipped for users as
plugins/kustomize/omerender-namerefs.yaml) lists the others; kustomize merges a kustomization's ``configurations:``
into every overlay above it, so listing it beside the OMERender transformer covers them. ``omerender build`` adds it
to each kustomization that lists an OMERender config, on its staged copy (docs/tutorials/kustomize.md, "Renames").
"""
from __future__ import annotations

import os
import re
from importlib import resources

import yaml

from omerender.errors import OmeError
from omerender.yamlio.emit import dump
from omerender.yamlio.yamlread import SafeLoader

STAGED_NAME = "omerender-namerefs.staged.yaml"   # the file omerender build writes beside each such kustomization
PLUGIN_FILE = "plugins/kustomize/omerender-namerefs.yaml"
ISVC_LABEL = "ome.io/inferenceservice"
WEIGHTS_LABEL = ("app.kubernetes.io/component", "model-weights")
MANAGED_BY = ("app.kubernetes.io/managed-by", "ome-controller")   # the BackendTrafficPolicy's (ome.ingress)
WEIGHTS_CLAIM = re.compile(r".*-weights-[0-9a-f]{10}")   # weights.download.claim_name
TEMPLATES = {"Deployment": ("spec.template",), "Job": ("spec.template",),
             "LeaderWorkerSet": ("spec.leaderWorkerTemplate.leaderTemplate",
                                 "spec.leaderWorkerTemplate.workerTemplate")}
SHOWN = 3


def rules_text() -> str:
    return resources.files("omerender.gitops").joinpath("namerefs.yaml").read_text(encoding="utf-8")


def add_rules(staged_kustomizations: list[str]) -> None:
    """Each staged kustomization file (a copy) lists the rules under ``configurations:``."""
    text = rules_text()
    for kfile in sorted(set(staged_kustomizations)):
        with open(kfile, encoding="utf-8") as handle:
            data = yaml.load(handle, Loader=SafeLoader) or {}
        _write(os.path.join(os.path.dirname(kfile), STAGED_NAME), text)
        if "configurations" not in data:
            # appended as text, so every line above keeps its number: the function's messages name the lines of
            # the staged copy, which must be the user's (an inline patch's value, say)
            with open(kfile, encoding="utf-8") as handle:
                original = handle.read()
            appended = original + ("" if original.endswith("\n") else "\n") + f"configurations:\n- {STAGED_NAME}\n"
            if _block_mapping(original) and _reads_as(appended, {**data, "configurations": [STAGED_NAME]}):
                _write(kfile, appended)
                continue
        configurations = data.get("configurations") if isinstance(data.get("configurations"), list) else []
        if STAGED_NAME not in configurations:
            data["configurations"] = [*configurations, STAGED_NAME]
        _write(kfile, dump(data))


def _reads_as(text: str, wanted: dict) -> bool:
    try:
        return yaml.load(text, Loader=SafeLoader) == wanted
    except yaml.YAMLError:
        return False


def _block_mapping(text: str) -> bool:
    """Whether the file's one document is a block mapping a key can be appended to: no flow mapping at the top,
    no document end or second document."""
    lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return bool(lines) and not lines[0].lstrip().startswith(("{", "[", "---", "%")) and not any(
        line.startswith(("---", "...")) for line in lines)


def _write(path: str, text: str) -> None:
    """Into the staged copy only (regular files, no links: kbuild.copy_tree); a directory of that name is an error."""
    if os.path.isdir(path) or os.path.islink(path):
        raise OmeError(f"{os.path.basename(path)} is a name omerender build writes beside a kustomization that lists "
                       f"OMERender (the name-reference rules); rename the directory that has it")
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o644)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(text)


# ---------------------------------------------------------------- every reference resolves

def broken_references(objects: list[dict]) -> list[str]:
    """What an object of the build's output names that the output does not hold, where the name was renamed: a
    rendered object's reference (a weights claim of a pod template, a ScaledObject's target and
    TriggerAuthentications, the router's Role, ServiceAccount and RoleBinding subject), or any HTTPRoute's Service,
    BackendTrafficPolicy's HTTPRoute or pod template's claim whose name the output holds with a prefix or suffix
    added. A reference to an object outside the build (a Gateway, a claim of a pvc:// model) is left alone."""
    held: dict[tuple, set] = {}
    for obj in objects:
        if isinstance(obj, dict):
            held.setdefault((obj.get("kind"), _ns(obj)), set()).add((obj.get("metadata") or {}).get("name"))
    found = []
    for obj in objects:
        if not isinstance(obj, dict):
            continue
        rendered = _rendered(obj)
        for field, kind, namespace, name in _references(obj, rendered):
            names = held.get((kind, namespace), set())
            if name in names or not (rendered or _renamed(name, names)):
                continue
            found.append(f"{obj.get('kind')} {_ns(obj)}/{(obj.get('metadata') or {}).get('name')}: {field} names "
                         f"{kind} {namespace}/{name}, which the build's output does not hold")
    return found


def _renamed(name, names: set) -> bool:
    """Whether the output holds ``name`` with a prefix or suffix added (namePrefix, nameSuffix, a hash)."""
    return isinstance(name, str) and bool(name) and any(
        isinstance(n, str) and n != name and (n.endswith(name) or n.startswith(name)) for n in names)


def check_references(objects: list[dict]) -> None:
    found = broken_references(objects)
    if found:
        more = f"; and {len(found) - SHOWN} more" if len(found) > SHOWN else ""
        raise OmeError(f"a rename broke references: {'; '.join(found[:SHOWN])}{more}: kustomize "
                       f"rewrites references only in fields it knows; list {PLUGIN_FILE} under configurations: of the "
                       f"kustomization that lists the OMERender transformer (omerender build adds it; this reference "
                       f"is in a field it does not cover), or rename before omerender renders")


def _rendered(obj: dict) -> bool:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return isinstance(labels, dict) and (ISVC_LABEL in labels or labels.get(WEIGHTS_LABEL[0]) == WEIGHTS_LABEL[1]
                                         or labels.get(MANAGED_BY[0]) == MANAGED_BY[1])


def _ns(obj: dict) -> str:
    return str((obj.get("metadata") or {}).get("namespace") or "default")


def _references(obj: dict, rendered: bool):
    """(field, kind, namespace, name) of each reference ``obj`` makes to a kind omerender writes."""
    kind, namespace, spec = obj.get("kind"), _ns(obj), obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    for path in TEMPLATES.get(kind, ()):
        yield from _claims(_at(obj, path), path, namespace, rendered)
    if kind == "ScaledObject":
        target = spec.get("scaleTargetRef") or {}
        yield "spec.scaleTargetRef.name", target.get("kind") or "Deployment", namespace, target.get("name")
        for i, trigger in enumerate(spec.get("triggers") or []):
            ref = (trigger or {}).get("authenticationRef") or {}
            if ref.get("name") and ref.get("kind") in (None, "TriggerAuthentication"):
                yield f"spec.triggers[{i}].authenticationRef.name", "TriggerAuthentication", namespace, ref["name"]
    if kind == "HTTPRoute":
        for i, rule in enumerate(spec.get("rules") or []):
            for j, ref in enumerate((rule or {}).get("backendRefs") or []):
                if (ref or {}).get("kind", "Service") == "Service" and not (ref or {}).get("group"):
                    yield (f"spec.rules[{i}].backendRefs[{j}].name", "Service", ref.get("namespace") or namespace,
                           ref.get("name"))
    if kind == "BackendTrafficPolicy":
        for i, ref in enumerate(spec.get("targetRefs") or []):
            if (ref or {}).get("kind") == "HTTPRoute":
                yield f"spec.targetRefs[{i}].name", "HTTPRoute", namespace, ref.get("name")
    if kind == "RoleBinding":
        role = obj.get("roleRef") or {}
        yield "roleRef.name", role.get("kind") or "Role", namespace, role.get("name")
        for i, subject in enumerate(obj.get("subjects") or []):
            if (subject or {}).get("kind") == "ServiceAccount":
                yield (f"subjects[{i}].name", "ServiceAccount", subject.get("namespace") or namespace,
                       subject.get("name"))
    if kind == "Deployment" and (_at(obj, "spec.template.spec") or {}).get("serviceAccountName"):
        account = obj["spec"]["template"]["spec"]["serviceAccountName"]
        if ((obj.get("metadata") or {}).get("labels") or {}).get("component") == "router":   # the render writes it
            yield "spec.template.spec.serviceAccountName", "ServiceAccount", namespace, account


def _claims(template, path: str, namespace: str, rendered: bool):
    """A rendered pod's weights claims (no other claim of it is the render's); any pod's claims otherwise (kept
    only where renamed)."""
    spec = template.get("spec") if isinstance(template, dict) else None
    for i, volume in enumerate((spec or {}).get("volumes") or []):
        claim = ((volume or {}).get("persistentVolumeClaim") or {}).get("claimName") \
            if isinstance(volume, dict) and isinstance(volume.get("persistentVolumeClaim"), dict) else None
        if isinstance(claim, str) and (WEIGHTS_CLAIM.fullmatch(claim) or not rendered):
            yield (f"{path}.spec.volumes[{i}].persistentVolumeClaim.claimName", "PersistentVolumeClaim", namespace,
                   claim)


def _at(obj, path: str):
    for key in path.split("."):
        obj = obj.get(key) if isinstance(obj, dict) else None
    return obj
