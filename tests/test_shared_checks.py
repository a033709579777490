"""The checks of what is rendered, done once where objects share what they check (issue 42,
docs/explanation/performance.md): a label or annotation map that several of one InferenceService's objects hold
is checked once, a pod spec shared by InferenceServices is judged once, and yet every object written passes the
same rules and a refusal names the same object as before."""
from __future__ import annotations

import copy

import pytest

from conftest import render_objects, worked_example
from omerender.errors import OmeError
from omerender.ome import podwebhook
from omerender.ome.output import check_rendered
from omerender.ome.shared import shared_work

ISVC = "error: <stdin>: InferenceService llama-demo/{}: "
ENGINE = "llama-3-2-3b-instruct-engine"
LABEL_VALUE_TEXT = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
                    "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
                    "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")


def obj(kind: str, name: str, labels: dict | None = None, annotations: dict | None = None) -> dict:
    meta = {"name": name, "namespace": "demo"}
    if labels is not None:
        meta["labels"] = labels
    if annotations is not None:
        meta["annotations"] = annotations
    return {"apiVersion": "apps/v1" if kind == "Deployment" else "v1", "kind": kind, "metadata": meta}


def refusal(objects: list[dict]) -> str:
    with pytest.raises(OmeError) as caught:
        check_rendered(objects)
    return caught.value.text


# ---------------------------------------------------------------- label and annotation maps

def test_a_shared_map_that_is_invalid_is_refused_naming_the_first_object_that_holds_it():
    labels = {"app": "x", "tier": "-gold"}
    deployment, service = obj("Deployment", "a", labels), obj("Service", "a", labels)
    expected = f'metadata.labels.tier: Invalid value: "-gold": {LABEL_VALUE_TEXT}'
    assert refusal([deployment, service]) == f"rendered Deployment demo/a: {expected}"
    assert refusal([service, deployment]) == f"rendered Service demo/a: {expected}"


def test_an_object_after_a_shared_valid_map_is_still_refused_for_its_own_map():
    labels = {"app": "x"}
    objects = [obj("Deployment", "a", labels, {"note": "x"}), obj("Service", "a", labels, {"b@d": "x"})]
    assert refusal(objects).startswith('rendered Service demo/a: metadata.annotations: Invalid value: "b@d": ')


def test_a_map_found_valid_as_annotations_is_still_checked_as_labels():
    """One dict held as one object's annotations and another's labels: valid annotations are no valid labels."""
    shared = {"vendor": "Meta AI"}
    objects = [obj("Deployment", "a", {"app": "x"}, shared), obj("Service", "a", shared)]
    assert refusal(objects) == f'rendered Service demo/a: metadata.labels.vendor: Invalid value: "Meta AI": ' \
                               f"{LABEL_VALUE_TEXT}"


def test_a_map_of_known_items_with_a_new_one_checks_the_new_one():
    check_rendered([obj("Deployment", "a", {"app": "x", "tier": "gold"})])
    assert refusal([obj("Deployment", "b", {"app": "x", "tier": "gold", "zone": "-a"})]) == \
        f'rendered Deployment demo/b: metadata.labels.zone: Invalid value: "-a": {LABEL_VALUE_TEXT}'
    assert refusal([obj("Deployment", "c", {"app": "x", "tier": 1})]) == \
        'rendered Deployment demo/c: metadata.labels.tier: Invalid value: "number": must be of type string'


def test_every_inferenceservice_whose_shared_maps_are_invalid_is_refused_at_its_own_deployment():
    """The component's labels are one dict for its Deployment, Service, autoscaler and budget; two
    InferenceServices on one model whose vendor is no label value are each refused, each naming its own object."""
    objs = copy.deepcopy(worked_example())
    objs["model"]["spec"]["vendor"] = "Meta AI"
    other = copy.deepcopy(objs["isvc"])
    other["metadata"]["name"] = "second"
    run = render_objects([objs["model"], objs["runtime"], objs["isvc"], other])
    assert (run.code, run.stdout) == (1, "")
    source = " (the value of the model's spec.vendor)"
    assert run.lines == [
        ISVC.format(name) + f"rendered Deployment llama-demo/{name}-engine: metadata.labels.base-model-vendor: "
                            f'Invalid value: "Meta AI": {LABEL_VALUE_TEXT}{source}'
        for name in ("llama-3-2-3b-instruct", "second")]


# ---------------------------------------------------------------- pod specs

POD = {"containers": [{"name": "c", "image": "x", "volumeMounts": [{"name": "v", "mountPath": "/v"}]}],
       "volumes": [{"name": "v", "emptyDir": {}}]}


def counting_refusals(monkeypatch) -> list:
    judged = []
    real = podwebhook.pod_refusal
    monkeypatch.setattr(podwebhook, "pod_refusal", lambda pod: judged.append(pod) or real(pod))
    return judged


def test_a_pod_spec_judged_valid_is_judged_again_when_its_content_differs(monkeypatch):
    judged = counting_refusals(monkeypatch)
    with shared_work():
        spec = copy.deepcopy(POD)
        podwebhook.check_template({"spec": spec}, "engine", as_built=True)
        podwebhook.check_template({"spec": spec}, "engine", as_built=True)
        assert len(judged) == 1   # the same dict, held unchanged: judged once
        other = copy.deepcopy(POD)
        other["containers"][0]["volumeMounts"][0]["name"] = "gone"
        with pytest.raises(OmeError) as caught:
            podwebhook.check_template({"spec": other}, "engine", as_built=True)
        assert caught.value.text == 'engine pod template: containers[0].volumeMounts[0].name: Not found: "gone"'
        podwebhook.check_template({"spec": copy.deepcopy(POD)}, "engine", as_built=True)
        assert len(judged) == 3


def test_a_spec_the_webhook_changed_is_judged_each_time(monkeypatch):
    judged = counting_refusals(monkeypatch)
    with shared_work():
        spec = copy.deepcopy(POD)
        for _ in range(2):
            podwebhook.check_template({"spec": spec}, "engine")
    assert len(judged) == 2


def test_a_spec_is_remembered_only_within_its_render(monkeypatch):
    judged = counting_refusals(monkeypatch)
    spec = copy.deepcopy(POD)
    for _ in range(2):
        with shared_work():
            podwebhook.check_template({"spec": spec}, "engine", as_built=True)
    assert len(judged) == 2


def minimal_isvc(name: str, engine: dict | None = None) -> dict:
    """An InferenceService of the worked example's model and runtime that sets nothing its pod is built from."""
    return {"apiVersion": "ome.io/v1beta1", "kind": "InferenceService",
            "metadata": {"name": name, "namespace": "llama-demo"},
            "spec": {"model": {"name": "llama-3-2-3b-instruct"}, "runtime": {"name": "srt-llama-3-2-3b-instruct"},
                     "engine": {"minReplicas": 1, "maxReplicas": 1, **(engine or {})}}}


def test_inferenceservices_sharing_a_pod_judge_it_once_and_one_that_differs_is_refused(monkeypatch):
    objs = worked_example()
    judged = counting_refusals(monkeypatch)
    fine = [minimal_isvc(f"fine-{i}") for i in range(3)]
    wrong = minimal_isvc("wrong", {"runner": {"volumeMounts": [{"name": "cache", "mountPath": "/cache"}]}})
    run = render_objects([objs["model"], objs["runtime"], *fine, wrong])
    assert (run.code, run.stdout) == (1, "")
    assert run.lines == [ISVC.format("wrong") + 'engine pod template: containers[0].volumeMounts[0].name: Not found: '
                                                '"cache"']
    assert len(judged) == 2   # one pod for the three alike, one for the one that differs
