"""One render's downloads: each model's claim and Job once per namespace however many InferenceServices use it,
the pods that mount each claim (for the ReadWriteOnce warning) and where they run (the Job's placement), and each
model's size warning once."""
from __future__ import annotations

from dataclasses import dataclass, field

from omerender.errors import OmeError
from omerender.kube.podrules import object_refusal
from ..frontend import CLI_FRONT, FrontEnd
from ..load import Obj
from . import placement as placing
from .download import Staged, job, stage
from .settings import WeightsSettings

SINGLE_NODE_MODES = ("ReadWriteOnce", "ReadWriteOncePod")
SHOWN_USES = 3
PLACEMENT_FIX = (("node_selector", "KEY=VALUE"), ("tolerations", "KEY[=VALUE]:EFFECT"))


@dataclass
class _Claim:
    staged: Staged
    model: Obj
    uses: dict[str, None] = field(default_factory=dict)  # "<isvc>/<component>", in render order (a set, ordered)
    spread: list[str] = field(default_factory=list)    # "<isvc>/<component>: why its pods may be on several nodes"
    placements: dict[str, tuple[str, dict]] = field(default_factory=dict)  # placement key -> (first user, placement)
    priorities: dict[str, None] = field(default_factory=dict)  # the users' priority classes ("" for none)

    def placement(self) -> dict:
        """The first user's placement (render order), with the priority class all of them share."""
        chosen = dict(next(iter(self.placements.values()))[1]) if self.placements else {}
        if len(self.priorities) == 1 and next(iter(self.priorities)):
            chosen[placing.PRIORITY] = next(iter(self.priorities))
        return chosen


class Book:
    def __init__(self, settings: WeightsSettings, front: FrontEnd = CLI_FRONT):
        self.settings = settings
        self.front = front
        self._staged: dict[tuple, Staged | OmeError] = {}
        self._claims: dict[tuple[str, str], _Claim] = {}

    def stage(self, model: Obj, namespace: str, volume_name: str) -> Staged:
        """The model's weights in ``namespace``; a model's error is raised as the same object each time, so the
        render reports it once however many InferenceServices use the model."""
        key = (model.kind, model.namespace, model.name, namespace, volume_name)
        if key not in self._staged:
            try:
                self._staged[key] = stage(model, namespace, self.settings, volume_name, self.front)
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

    def place(self, staged: list[Staged], user: str, pods: list[dict]) -> None:
        """``user``'s pods (a component's pod specs) run there: each of the ``staged`` claims one of them mounts
        records its placement."""
        for claim in (self._claims[(s.namespace, s.claim)] for s in staged):
            for pod in pods:
                if placing.mounts_claim(pod, claim.staged.claim):
                    claim.placements.setdefault(placing.key(placing.of_pod(pod)), (user, placing.of_pod(pod)))
                    claim.priorities.setdefault(pod.get(placing.PRIORITY) or "")

    def objects(self) -> list[tuple[dict, Obj]]:
        """Each claim and Job with the model it downloads, by namespace, then name, claim before Job."""
        return [(obj, claim.model) for _, claim in sorted(self._claims.items())
                for obj in (*claim.staged.objects, self._job(claim))]

    def _job(self, claim: _Claim) -> dict:
        """The claim's Job, placed; it meets the pod rules every written pod meets (kube.podrules)."""
        made = job(claim.staged, self._placement(claim))
        found = object_refusal(made)
        if found is not None:
            meta = made["metadata"]
            raise claim.model.error(f"rendered Job {meta['namespace']}/{meta['name']}: {found[0]}.{found[1].text}",
                                    "spec.storage")
        return made

    def _placement(self, claim: _Claim) -> dict:
        return placing.from_settings(self.settings) if self.settings.placed else claim.placement()

    def placement_warnings(self) -> list[tuple[str, Obj]]:
        """(text, model): each claim whose pods run in different places, where the render doesn't place the Job."""
        if self.settings.placed:
            return []
        return [(_placement_warning(namespace, name, claim, self.front), claim.model)
                for (namespace, name), claim in sorted(self._claims.items()) if len(claim.placements) > 1]

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
        found = ((_access_warning(namespace, name, claim, self.front), claim.model)
                 for (namespace, name), claim in sorted(self._claims.items()))
        return [(text, model) for text, model in found if text]


def _placement_warning(namespace: str, name: str, claim: _Claim, front: FrontEnd) -> str:
    places = list(claim.placements.values())
    shown = "; ".join(f"{user}: {placing.described(where)}" for user, where in places[:SHOWN_USES])
    more = f"; and {len(places) - SHOWN_USES} more" if len(places) > SHOWN_USES else ""
    return (f"PersistentVolumeClaim {namespace}/{name} is mounted by pods placed differently ({shown}{more}): its "
            f"download Job runs where the first of them does ({places[0][0]}), and a WaitForFirstConsumer claim "
            f"binds there, where the others may not reach it; give the InferenceServices that run elsewhere a "
            f"namespace (and so a claim) of their own, or {front.set(*PLACEMENT_FIX)} for nodes every one of them reaches (a claim any node attaches, such as ReadWriteMany storage)")


def _access_warning(namespace: str, name: str, claim: _Claim, front: FrontEnd) -> str | None:
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
            f"mount it ({'; '.join(reasons[:SHOWN_USES])}{more}): a {mode} volume {limit} stay Pending; "
            f"{front.set(('access_mode', 'ReadWriteMany'), ('storage_class', 'CLASS'))}, a StorageClass that "
            f"supports it")
