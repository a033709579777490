"""What a render keeps of each InferenceService's objects when a sink takes them as they are rendered (render's
``sink``): enough to check the whole output at the end (each object's identity), and the objects a BenchmarkJob's
endpoint reads."""
from __future__ import annotations

from typing import Callable

from omerender.yamlio.emit import kept_within

from .load import Inputs, Obj
from .workloads.metric_providers import is_shared

Sink = Callable[[dict], None]


class Keep:
    """What the render keeps of each InferenceService's objects: all of them without a sink; with one, the objects
    go to it (each shared TriggerAuthentication once, as :func:`render._shared_once` does) and the render keeps a stand-in
    holding what the checks of the whole output read (apiVersion, kind, namespace, name)."""

    def __init__(self, inputs: Inputs, sink: Sink | None):
        self.sink = sink
        self.shared: set[tuple] = set()
        self.benchmarked = _benchmarked_names(inputs) if sink is not None else set()

    def objects_of(self, isvc: Obj) -> bool:
        """Whether ``IsvcFacts.objects`` keeps the InferenceService's objects (a BenchmarkJob's endpoint reads them)."""
        return self.sink is None or isvc.name in self.benchmarked

    def passed(self, objects: list[dict], isvc: Obj) -> list[tuple[dict, Obj]]:
        if self.sink is None:
            return [(obj, isvc) for obj in objects]
        kept = []
        with kept_within(_shared_metadata(objects)):
            for obj in objects:
                if is_shared(obj):
                    key = (obj["metadata"]["namespace"], obj["metadata"]["name"])
                    if key in self.shared:
                        continue
                    self.shared.add(key)
                self.sink(obj)
                kept.append((_stand_in(obj), isvc))
        return kept


def _shared_metadata(objects: list[dict]) -> list[dict]:
    """The labels and annotations of each Deployment among ``objects``: a component's labels are one map in its
    Deployment, pod template, Service, autoscaler and budget, its annotations one in its Deployment and budget, so
    the writer writes each once per indentation. Nothing changes them once the objects are passed."""
    held = []
    for obj in objects:
        if obj.get("kind") == "Deployment":
            meta = obj["metadata"]
            held += [data for data in (meta.get("labels"), meta.get("annotations")) if data]
    return held


def _stand_in(obj: dict) -> dict:
    meta = obj["metadata"]
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"],
            "metadata": {"namespace": meta.get("namespace"), "name": meta["name"]}}


def _benchmarked_names(inputs: Inputs) -> set:
    """The names of the InferenceServices the BenchmarkJobs' endpoints name (in any namespace: a superset)."""
    names = set()
    for bench in inputs.benchmarks:
        endpoint = bench.spec.get("endpoint") if isinstance(bench.spec, dict) else None
        ref = endpoint.get("inferenceService") if isinstance(endpoint, dict) else None
        if isinstance(ref, dict) and isinstance(ref.get("name"), str):
            names.add(ref["name"])
    return names
