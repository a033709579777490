"""The render's benchmark step: each BenchmarkJob's Job from what its InferenceService rendered (benchmarks.md),
with, under ``--model-weights download``, the tokenizer read from the model's claim."""
from __future__ import annotations

from omerender.errors import Message, OmeError
from ..load import Inputs, Obj
from ..weights.book import Book
from ..weights.download import mount_claim
from ..weights.source import is_pvc
from . import check_job_pod, render_benchmarks
from .endpoint import Rendered


def benchmark_jobs(inputs: Inputs, facts: dict, failed: set[tuple[str, str]], selector: bool,
                   book: Book | None) -> tuple[list[tuple[dict, Obj]], list[OmeError], list[Message]]:
    """Each BenchmarkJob's Job (which ``render_benchmarks`` checks as the render checks its own objects), its errors
    and its messages. ``facts`` maps each rendered InferenceService's (namespace, name) to what it rendered (its
    ``model`` and ``objects``); one in ``failed``, or missing (a render limit kept it from rendering), counts as
    failed. ``selector``: the Jobs get the model agent's node selector. ``book``: --model-weights download's claims,
    None in agent mode."""
    if not inputs.benchmarks:
        return [], [], []
    targets = {}
    for isvc in inputs.isvcs:
        key = (isvc.namespace, isvc.name)
        done = facts.get(key)
        targets[key] = (Rendered(isvc, done.model, done.objects, key in failed) if done is not None
                        else Rendered(isvc, failed=True))
    jobs, errors, messages = render_benchmarks(inputs, targets, selector)
    if book is not None:
        mounted = []
        for job, bench in jobs:
            job = _read_weights_from_claim(job, bench, targets, book)
            try:
                check_job_pod(job)   # again: the claim's mount and wait step changed the pod
            except OmeError as err:
                errors.append(err.located(bench.ref, bench.file))
                continue
            mounted.append((job, bench))
        jobs = mounted
    return jobs, errors, messages


def _read_weights_from_claim(job: dict, bench: Obj, targets: dict, book: Book) -> dict:
    """--model-weights download: the benchmark Job reads the tokenizer from the model's claim, as the serving pods
    do, not from the node's disk where OME's agent would have put it."""
    ref = (bench.spec.get("endpoint") or {}).get("inferenceService") or {}
    found = targets.get((ref.get("namespace"), ref.get("name")))
    model = found.model if found is not None else None
    if model is None or is_pvc(model):
        return job
    pod = job["spec"]["template"]["spec"]
    staged = book.stage(model, job["metadata"]["namespace"], model.name)
    job["spec"]["template"]["spec"] = mount_claim(pod, staged)
    return job
