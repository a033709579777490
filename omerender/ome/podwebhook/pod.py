"""The pod as OME's pod webhook sees it: a pod template (``metadata`` and ``spec``) and the small lookups every
injector shares (docs: reference/api/labels-and-annotations.md "Pods"; source: ome-projects/ome v1.3
pkg/webhook/admission/pod/runtime_profile_injector.go's helpers, rdma_injector.go's)."""
from __future__ import annotations

from dataclasses import dataclass

from omerender.errors import OmeError

MAIN_CONTAINER = "ome-container"   # constants.MainContainerName, the default target of every profile
SHOWN = 64   # characters of an annotation value a message quotes


@dataclass
class Pod:
    """One pod template being mutated: ``where`` names it in messages ("engine", "engine.leader")."""

    where: str
    metadata: dict
    spec: dict

    @property
    def annotations(self) -> dict:
        return self.metadata.setdefault("annotations", {})

    def annotation(self, key: str) -> str | None:
        value = (self.metadata.get("annotations") or {}).get(key)
        return value if isinstance(value, str) else None

    def container(self, name: str) -> dict | None:
        return next((c for c in self.spec.get("containers") or [] if c.get("name") == name), None)

    def has_volume(self, name: str) -> bool:
        return any(v.get("name") == name for v in self.spec.get("volumes") or [])

    def add_volume(self, volume: dict) -> None:
        """The volume, unless one of that name exists (the webhook never replaces a volume)."""
        if not self.has_volume(volume["name"]):
            self.spec.setdefault("volumes", []).append(dict(volume))

    def denied(self, text: str) -> OmeError:
        """The error for a pod OME's webhook would deny: its pods are never created."""
        return OmeError(f"{self.where} pod: OME's pod webhook denies the pod: {text}")


def add_mount(container: dict, name: str, path: str) -> None:
    """The mount, unless the container mounts a volume of that name already (at any path)."""
    if not any(m.get("name") == name for m in container.get("volumeMounts") or []):
        container.setdefault("volumeMounts", []).append({"name": name, "mountPath": path})


def shown(value: str) -> str:
    """An annotation value as a message quotes it: cut short, so a hostile value can't flood the output (the
    printer escapes control characters)."""
    return f'"{value}"' if len(value) <= SHOWN else f'"{value[:SHOWN]}..." ({len(value):,} characters)'
