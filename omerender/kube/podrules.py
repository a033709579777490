"""What the API server refuses in a pod spec beyond its schema: one check for every pod template omerender writes.

The rules and texts are Kubernetes' ValidatePodSpec (k8s.io/kubernetes pkg/apis/core/validation/validation.go):
validateVolumes (names unique: ``Duplicate value``; one source per volume), validateContainers and
validateInitContainers (names unique across init and app containers), ValidateVolumeMounts (every mount names a
volume of the pod: ``Not found``; a ``mountPath`` once per container: ``must be unique``; ``subPath`` and
``subPathExpr`` through validateLocalDescendingPath: ``must be a relative path``, ``must not contain '..'``),
ValidateResourceRequirements (quantities in resource.ParseQuantity's grammar, requests at most the limits, an
extended resource's request equal to its limit), validateEnv, validateProbe and validateLifecycle (one handler
each). The texts of the last rules are those inheritance-and-pinning.md E-I8 gives them.

:func:`pod_refusal` returns the first refusal, with its path inside the pod spec; the callers (each writer of a
pod template) add the object and the input it came from.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from omerender.errors import OmeError
from .apirules import is_extended_resource, shown
from .quantities import known_quantity

PROBE_HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc")
LIFECYCLE_HANDLERS = ("exec", "httpGet", "tcpSocket", "sleep")
PROBES = ("readinessProbe", "livenessProbe", "startupProbe")
CONTAINER_GROUPS = ("containers", "initContainers", "ephemeralContainers")   # validateContainers' order
SUB_PATHS = ("subPath", "subPathExpr")


@dataclass(frozen=True)
class Refusal:
    """``path``: the field inside the pod spec (``containers[0].volumeMounts[1].mountPath``); ``problem``: the API
    server's words; ``detail``: what clashed with what, when the problem names two items."""

    path: str
    problem: str
    detail: str = ""

    @property
    def text(self) -> str:
        return f"{self.path}: {self.problem}" + (f" ({self.detail})" if self.detail else "")


def pod_refusal(pod: dict) -> Refusal | None:
    """The first rule ``pod`` (a pod spec, as omerender writes it) breaks, None when it breaks none.

    Nothing is remembered by content here: a digest of a pod spec costs more than these rules (pickling it took
    some 35 microseconds a serving pod, the rules some 30). A pod spec shared by InferenceServices is judged once by
    whoever holds it (ome.podwebhook: by identity)."""
    if not isinstance(pod, dict):
        return None
    return _first_refusal(pod)


def _first_refusal(pod: dict) -> Refusal | None:
    volumes = [v for v in pod.get("volumes") or [] if isinstance(v, dict)]
    found = _volumes(volumes)
    if found:
        return found
    names = {v.get("name") for v in volumes}
    found = _container_names(pod)
    if found:
        return found
    for group in CONTAINER_GROUPS:
        for i, container in enumerate(pod.get(group) or []):
            if isinstance(container, dict):
                found = _container(container, f"{group}[{i}]", names)
                if found:
                    return found
    return None


# ---------------------------------------------------------------- volumes and names

def _volumes(volumes: list[dict]) -> Refusal | None:
    seen: set = set()
    for i, volume in enumerate(volumes):
        name = volume.get("name")
        if name in seen:
            return Refusal(f"volumes[{i}].name", f'Duplicate value: "{shown(name)}"')
        seen.add(name)
        sources = sorted(k for k in volume if k != "name")
        if len(sources) > 1:
            return Refusal(f"volumes[{i}]", f"more than one volume source ({', '.join(sources)})")
        size = (volume.get("emptyDir") or {}).get("sizeLimit") if isinstance(volume.get("emptyDir"), dict) else None
        if size is not None:
            found = _quantity(size, f"volumes[{i}].emptyDir.sizeLimit")
            if isinstance(found, Refusal):
                return found
    return None


def _container_names(pod: dict) -> Refusal | None:
    """Unique across app, init and ephemeral containers; a later one is the duplicate, app containers first."""
    seen: set = set()
    for group in CONTAINER_GROUPS:
        for i, container in enumerate(pod.get(group) or []):
            name = container.get("name") if isinstance(container, dict) else None
            if name is None:
                continue
            if name in seen:
                return Refusal(f"{group}[{i}].name", f'Duplicate value: "{shown(name)}"')
            seen.add(name)
    return None


# ---------------------------------------------------------------- one container

def _container(c: dict, path: str, volumes: set) -> Refusal | None:
    return (_mounts(c.get("volumeMounts") or [], f"{path}.volumeMounts", volumes)
            or _env(c.get("env") or [], f"{path}.env") or _handlers(c, path)
            or _resources(c.get("resources"), f"{path}.resources"))


def _mounts(mounts: list, path: str, volumes: set) -> Refusal | None:
    at: dict = {}   # mountPath -> the volume first mounted there
    for j, mount in enumerate(mounts):
        if not isinstance(mount, dict):
            continue
        here = f"{path}[{j}]"
        name = mount.get("name")
        if name not in volumes:
            return Refusal(f"{here}.name", f'Not found: "{shown(name)}"')
        target = mount.get("mountPath")
        if target in at:
            return Refusal(f"{here}.mountPath", f'Invalid value: "{shown(target)}": must be unique',
                           f"{shown(name)} is mounted where {shown(at[target])} is")
        at[target] = name
        for key in SUB_PATHS:
            found = _descending(mount.get(key), f"{here}.{key}")
            if found:
                return found
    return None


def _descending(value, path: str) -> Refusal | None:
    """validateLocalDescendingPath: relative, and no element ``..`` (the API server splits at ``/``)."""
    if not isinstance(value, str) or not value:
        return None
    if value.startswith("/"):
        return Refusal(path, f'Invalid value: "{shown(value)}": must be a relative path')
    if ".." in value.split("/"):
        return Refusal(path, f"Invalid value: \"{shown(value)}\": must not contain '..'")
    return None


def _env(env: list, path: str) -> Refusal | None:
    for j, entry in enumerate(env):
        if isinstance(entry, dict) and entry.get("value") is not None and entry.get("valueFrom") is not None:
            return Refusal(f"{path}[{j}]", "both value and valueFrom are set")
    return None


def _handlers(c: dict, path: str) -> Refusal | None:
    for probe in PROBES:
        value = c.get(probe)
        handlers = [h for h in PROBE_HANDLERS if isinstance(value, dict) and value.get(h) is not None]
        if len(handlers) > 1:
            return Refusal(f"{path}.{probe}", f"more than one probe handler ({', '.join(handlers)})")
    lifecycle = c.get("lifecycle") if isinstance(c.get("lifecycle"), dict) else {}
    for hook in ("postStart", "preStop"):
        value = lifecycle.get(hook)
        handlers = [h for h in LIFECYCLE_HANDLERS if isinstance(value, dict) and value.get(h) is not None]
        if len(handlers) > 1:
            return Refusal(f"{path}.lifecycle.{hook}", f"more than one lifecycle handler ({', '.join(handlers)})")
    return None


def _resources(resources, path: str) -> Refusal | None:
    if not isinstance(resources, dict):
        return None
    parsed: dict = {}
    for part in ("limits", "requests"):
        values = resources.get(part)
        if not isinstance(values, dict):
            continue
        for name, value in values.items():
            if value is None:
                continue
            found = _quantity(value, f"{path}.{part}.{name}")
            if isinstance(found, Refusal):
                return found
            parsed[(part, name)] = found
    for (part, name), request in parsed.items():
        limit = parsed.get(("limits", name))
        if part != "requests" or limit is None:
            continue
        shown_r, shown_l = resources["requests"][name], resources["limits"][name]
        if request > limit:
            return Refusal(path, f"request {name}={shown_r} is above limit {shown_l}")
        if is_extended_resource(str(name)) and "." in str(name).split("/")[0] and request != limit:
            return Refusal(path, f"request {name}={shown_r} differs from limit {shown_l}")
    return None


def _quantity(value, path: str) -> Fraction | Refusal:
    try:
        return known_quantity(value, path)
    except OmeError as err:
        return Refusal(path, err.text[len(path) + 2:])


# ---------------------------------------------------------------- the pod templates of an object

TEMPLATE_PATHS = {
    "Deployment": (("spec", "template"),),
    "Job": (("spec", "template"),),
    "LeaderWorkerSet": (("spec", "leaderWorkerTemplate", "leaderTemplate"),
                        ("spec", "leaderWorkerTemplate", "workerTemplate")),
}


def object_refusal(obj: dict) -> tuple[str, Refusal] | None:
    """(the template's path, its first refusal) for the first pod template of ``obj`` that breaks a rule."""
    for keys in TEMPLATE_PATHS.get(obj.get("kind"), ()):
        template = obj
        for key in keys:
            template = template.get(key) if isinstance(template, dict) else None
        if isinstance(template, dict):
            found = pod_refusal(template.get("spec"))
            if found:
                return ".".join(keys) + ".spec", found
    return None
