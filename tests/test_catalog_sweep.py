"""api.md §9.8: every catalog runtime, with a model that fits it and an InferenceService naming it,
renders, and every rendered object validates against the Kubernetes schema."""
from collections import Counter

import pytest

from catalog import completed_model, isvc_for, load_runtime, models, paired_model_name, runtime_files
from conftest import CATALOG, render_objects, validate_k8s

COHERE = "srt/CohereForAI/c4ai-command-r-v01-rt.yaml"


def _case(path):
    runtime = load_runtime(path)
    name = paired_model_name(runtime)
    objects = [runtime]
    if name:
        objects.append(completed_model(models()[name], runtime))
    return runtime, name, objects + [isvc_for(runtime, name)]


@pytest.fixture(scope="module")
def sweep():
    results = {}
    for path in runtime_files():
        runtime, model, objects = _case(path)
        results[str(path.relative_to(CATALOG / "runtimes"))] = (runtime, model, render_objects(objects))
    return results


def test_catalog_has_207_runtime_files():
    assert len(runtime_files()) == 207


def test_every_catalog_runtime_renders_and_validates(sweep):
    counts = Counter()
    for rel, (runtime, model, run) in sweep.items():
        if rel == COHERE:
            continue
        assert run.code == 0, f"{rel}: {run.stderr}"
        assert run.objects, rel
        for obj in run.objects:
            validate_k8s(obj)
            counts[obj["kind"]] += 1
        counts["runtimes"] += 1
        counts["with model" if model else "runtime-only"] += 1
    print(f"\ncatalog sweep: {dict(sorted(counts.items()))}")
    assert counts["runtimes"] == 206
    assert counts["runtime-only"] == 5  # api.md §9.4: no catalog model for five runtimes


def test_cohere_chat_template_is_an_invalid_placeholder_with_an_escape_hint(sweep):
    _, _, run = sweep[COHERE]
    assert run.code == 1 and run.stdout == ""
    (line,) = run.lines
    assert line.startswith("error: <stdin>: InferenceService sweep/svc: invalid placeholder in engine.runner.command[")
    assert 'write {{"{{"}} and {{"}}"}}' in line


def test_sweep_messages_are_only_the_expected_kinds(sweep):
    for rel, (_, _, run) in sweep.items():
        if rel == COHERE:
            continue
        for line in run.lines:
            assert line.startswith(("warning: ", "info: ")), f"{rel}: {line}"


# Issue 39, item 5: the checks of a cluster's mistakes find none in OME's own runtimes, served as written. Each
# exception would be listed here with its reason; there is none.
NEW_CHECKS = ("[accelerator-class-gpus]", "[parallelism-gpu-mismatch]", "[unknown-annotation]", " GPUs and the pod",
              " GPUs and the LeaderWorkerSet's")
NEW_CHECK_EXCEPTIONS: dict[str, str] = {}


def test_no_catalog_runtime_gets_the_new_checks_messages(sweep):
    found = {rel: [line for line in run.printed.splitlines() if any(mark in line for mark in NEW_CHECKS)]
             for rel, (_, _, run) in sweep.items()}
    assert {rel: lines for rel, lines in found.items() if lines} == {
        rel: found.get(rel) for rel in NEW_CHECK_EXCEPTIONS}
