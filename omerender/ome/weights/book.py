"""One render's downloads: each model's claim and Job once per namespace however many InferenceServices use it,
the pods that mount each claim (for the ReadWriteOnce warning), and each model's size warning once."""
from __future__ import annotations

from dataclasses import dataclass, field

from omerender.errors import OmeError
from ..load import Obj
from .download import Staged, stage
from .settings import WeightsSettings

SINGLE_NODE_MODES = ("ReadWriteOnce", "ReadWriteOncePod")
SHOWN_USES = 3


@dataclass
class _Claim:
    staged: Staged
    model: Obj
    uses: dict[str, None] = field(default_factory=dict)  # "<isvc>/<component>", in render order (a set, ordered)
    spread: list[str] = field(default_factory=list)    # "<isvc>/<component>: why its pods may be on several nodes"


class Book:
    def __init__(self, settings: WeightsSettings):
        self.settings = settings
        self._staged: dict[tuple, Staged | OmeError] = {}
        self._claims: dict[tuple[str, str], _Claim] = {}

    def stage(self, model: Obj, namespace: str, volume_name: str) -> Staged:
        """The model's weights in ``namespace``; a model's error is raised as the same object each time, so the
        render reports it once however many InferenceServices use the model."""
        key = (model.kind, model.namespace, model.name, namespace, volume_name)
        if key not in self._staged:
            try:
                self._staged[key] = stage(model, namespace, self.settings, volume_name)
            except OmeError as err:
                self._staged[key] = err
        found = self._staged[key]
        if isinstance(found, OmeError):
            raise found
        self._claims.setdefault((namespace, found.claim), _Claim(found, model))
        return found

    def use(self, staged: Staged, user: str, spread: str | None) -> None:
        """``user``'s pods mount the claim; ``spread`` says why they may run on several nodes at once."""
        claim = self._claims[(staged.namespace, staged.claim)]
        claim.uses.setdefault(user)
        if spread:
            claim.spread.append(f"{user}: {spread}")

    def objects(self) -> list[tuple[dict, Obj]]:
        """Each claim and Job with the model it downloads, by namespace, then name, claim before Job."""
        return [(obj, claim.model) for _, claim in sorted(self._claims.items()) for obj in claim.staged.objects]

    def size_warnings(self) -> list[tuple[str, Obj]]:
        """(text, model): each model's size warning (an estimate or the default), once."""
        out, seen = [], set()
        for _, claim in sorted(self._claims.items()):
            model = claim.model
            if claim.staged.size_warning and model.ref not in seen:
                seen.add(model.ref)
                out.append((claim.staged.size_warning, model))
        return out

    def access_warnings(self) -> list[tuple[str, Obj]]:
        """(text, model): each claim's access-mode warning, where pods may mount it from several nodes."""
        found = ((_access_warning(namespace, name, claim), claim.model)
                 for (namespace, name), claim in sorted(self._claims.items()))
        return [(text, model) for text, model in found if text]


def _access_warning(namespace: str, name: str, claim: _Claim) -> str | None:
    mode = claim.staged.access_mode
    reasons = list(claim.spread)
    if len(claim.uses) > 1:
        reasons.insert(0, f"{len(claim.uses)} components mount it ({', '.join(list(claim.uses)[:SHOWN_USES])}"
                          f"{', ...' if len(claim.uses) > SHOWN_USES else ''})")
    if mode not in SINGLE_NODE_MODES or not reasons:
        return None
    more = f"; and {len(reasons) - SHOWN_USES} more" if len(reasons) > SHOWN_USES else ""
    limit = "is mounted by one pod at a time, so the others" if mode == "ReadWriteOncePod" else \
        "attaches to one node, so pods elsewhere"
    return (f"PersistentVolumeClaim {namespace}/{name} is {mode}, and pods that may run on different nodes at once "
            f"mount it ({'; '.join(reasons[:SHOWN_USES])}{more}): a {mode} volume {limit} stay Pending; render with "
            f"--weights-access-mode ReadWriteMany and a --weights-storage-class that supports it")
