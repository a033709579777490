"""Work budgets (issue 24): inputs small in bytes that ask for work growing with a product of counts.

One test per shape of benchmarks/adversarial.py, at a small size, asserting what the user sees (the rendered
output, or the limit's error). Speed is measured by the benchmark, never asserted here. The copied-values shape
is tests/test_reliability.py::test_the_copied_values_limit_grows_with_the_input_and_is_charged_before_copying.
"""
from __future__ import annotations

import pytest

from conftest import render_objects
from omerender.yamlio import limits
from select_helpers import API, L3, NS, cbm, csr, isvc


def assert_fails(run, *expected_lines: str) -> None:
    assert run.code == 1, run.stderr
    assert run.stdout == ""
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr
    assert [line for line in run.lines if line.startswith("error:")] == list(expected_lines)


def runner(**fields) -> dict:
    return {"engineConfig": {"runner": {"name": "ome-container", "image": "img", **fields}}}


def engine_container(run, name: str) -> dict:
    return run.find("Deployment", f"{name}-engine")["spec"]["template"]["spec"]["containers"][0]


# ---------------------------------------------------------------- selection: runtimes x InferenceServices

def test_auto_selection_is_judged_once_per_model_and_request(monkeypatch):
    # 30 runtimes that all qualify and 40 InferenceServices of one model: 1,200 judgements if each InferenceService
    # judged every runtime, 30 when they share one. The closest size range wins for every one of them.
    runtimes = [csr(f"rt-{i:02d}", size=("1B", f"{4 + i}B")) for i in range(30)]
    isvcs = [isvc(f"s-{i:02d}") for i in range(40)]
    monkeypatch.setattr(limits, "MAX_SELECTION_JUDGEMENTS", 30)
    run = render_objects([*runtimes, cbm(), *isvcs])
    assert run.code == 0, run.stderr
    labels = {o["metadata"]["name"]: o["metadata"]["labels"]["serving-runtime"]
              for o in run.objects if o["kind"] == "Deployment"}
    assert labels == {f"s-{i:02d}-engine": "rt-00" for i in range(40)}


def test_auto_selection_stops_at_its_judgement_limit(monkeypatch):
    # Distinct models are judged apart: 3 models against 30 runtimes pass a limit of 75 at the third model.
    runtimes = [csr(f"rt-{i:02d}", size=("1B", f"{4 + i}B")) for i in range(30)]
    models = [cbm(f"m{i}") for i in range(3)]
    isvcs = [isvc(f"s-{i}", model=f"m{i}") for i in range(3)]
    monkeypatch.setattr(limits, "MAX_SELECTION_JUDGEMENTS", 75)
    assert_fails(render_objects([*runtimes, *models, *isvcs]),
                 f"error: <stdin>: InferenceService {NS}/s-2: automatic runtime selection has judged more than 75 "
                 "runtimes against models in this input (each distinct model, namespace and requested class or mode "
                 "is judged against every runtime whose supportedModelFormats can match it); name the runtime in "
                 "spec.runtime.name, use fewer distinct models or runtimes, or render fewer InferenceServices at a "
                 "time")


# ---------------------------------------------------------------- placeholders that print nothing

def test_placeholder_actions_are_counted_across_the_render_even_when_they_print_nothing(monkeypatch):
    runtime = csr("rt", **runner(args=['{{""}}' * 40 + "{{.Name}}"]))
    isvcs = [isvc(f"s-{i}", runtime="rt") for i in range(5)]
    monkeypatch.setattr(limits, "MAX_PLACEHOLDER_ACTIONS", 5 * 41)
    run = render_objects([runtime, cbm(), *isvcs])
    assert run.code == 0, run.stderr
    assert engine_container(run, "s-4")["args"] == ["s-4"]
    monkeypatch.setattr(limits, "MAX_PLACEHOLDER_ACTIONS", 5 * 41 - 1)
    assert_fails(render_objects([runtime, cbm(), *isvcs]),
                 f"error: <stdin>: InferenceService {NS}/s-4: placeholders in engine.runner.args[0] take the "
                 "actions run across the render past 204 (an action prints something or nothing, {{\"\"}} "
                 "included); use fewer placeholders, or render fewer InferenceServices at a time")


# ---------------------------------------------------------------- accelerator classes x InferenceServices

def accelerator_class(name: str, per_hour: str) -> dict:
    return {"apiVersion": API, "kind": "AcceleratorClass", "metadata": {"name": name},
            "spec": {"discovery": {"nodeSelector": {"gpu": name}}, "cost": {"perHour": per_hour}}}


def test_a_policy_over_a_large_pool_is_decided_per_pool_and_names_at_most_ten_missing_classes():
    # A disabled profile lists 12 classes the input lacks and 3 it has; the child inherits the pool (W-A4 per
    # missing class, once on the runtime). Every InferenceService gets the cheapest present class, and its
    # messages name 10 missing classes and count the rest.
    present = [accelerator_class("gpu-a", "3"), accelerator_class("gpu-b", "1"), accelerator_class("gpu-c", "2")]
    pool = [f"gone-{i:02d}" for i in range(12)] + ["gpu-a", "gpu-b", "gpu-c"]
    parent = csr("parent", disabled=True, classes=pool)
    parent["metadata"]["annotations"] = {"ome.io/runtime-profile": "true"}
    child = csr("child", disabled=False)
    child["spec"].pop("acceleratorRequirements", None)
    child["metadata"]["annotations"] = {"ome.io/inherit-from": "parent"}
    isvcs = [isvc(f"s-{i}", runtime="child", acceleratorSelector={"policy": "Cheapest"}) for i in range(3)]
    run = render_objects([*present, parent, child, cbm(), *isvcs])
    assert run.code == 0, run.stderr
    for i in range(3):
        pod = run.find("Deployment", f"s-{i}-engine")["spec"]["template"]["spec"]
        assert pod["nodeSelector"]["gpu"] == "gpu-b"
    infos = [line for line in run.lines if line.startswith(f"info: <stdin>: InferenceService {NS}/s-0:")]
    prefix = f"info: <stdin>: InferenceService {NS}/s-0: engine: "
    assert infos == [prefix + f"accelerator class gone-{i:02d} listed by runtime ClusterServingRuntime/child is "
                     "not in the input; policy Cheapest skips it" for i in range(10)] + [
        prefix + "2 more accelerator classes listed by runtime ClusterServingRuntime/child are not in the input; "
                 "policy Cheapest skips them",
        prefix + "accelerator class gpu-b from policy Cheapest in spec.acceleratorSelector.policy"]


# ---------------------------------------------------------------- quantities past what Kubernetes holds

@pytest.mark.parametrize("gpus", ["1E+5000", "1E+999999999", "9223372036854775808", "1e99999999999999999999"])
def test_a_gpu_quantity_past_2_63_is_refused_as_kubernetes_refuses_it(gpus):
    runtime = csr("rt", **runner(resources={"limits": {"nvidia.com/gpu": gpus}}))
    run = render_objects([runtime, cbm(), isvc("s", runtime="rt")])
    assert run.code == 1, run.stderr
    assert run.stdout == ""
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr
    errors = [line for line in run.lines if line.startswith("error:")]
    assert errors and all(f'Invalid value: "{gpus}": must be a Kubernetes quantity of at most 9223372036854775807 '
                          "(2^63-1) in magnitude" in line for line in errors), errors


def test_quantity_magnitudes_are_judged_before_any_power_is_computed():
    from fractions import Fraction

    from omerender.errors import OmeError
    from omerender.kube.quantities import parse_quantity
    assert parse_quantity("9223372036854775807", "q") == 2 ** 63 - 1
    assert parse_quantity("1e-999999999", "q") == Fraction(1, 10 ** 9)  # below 1n: 1n, as Kubernetes rounds it
    assert parse_quantity("-1e-20", "q") == -Fraction(1, 10 ** 9)
    assert parse_quantity("1.5e-9", "q") == Fraction(3, 2 * 10 ** 9)
    assert parse_quantity("80Gi", "q") == 80 * 2 ** 30
    for value, shown in (("8Ei", "8Ei"), ("1" * 5000, "1" * 60 + "... (5,000 characters)"),
                         (10 ** 5000, "<an integer of 16610 bits>")):
        with pytest.raises(OmeError) as raised:
            parse_quantity(value, "q")
        assert raised.value.text == (f'q: Invalid value: "{shown}": must be a Kubernetes quantity of at most '
                                     "9223372036854775807 (2^63-1) in magnitude")
