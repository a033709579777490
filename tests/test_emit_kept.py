"""The writer writes a map several objects hold once per indentation (a component's labels, held by its Deployment,
pod template, Service, autoscaler and budget; its annotations, by its Deployment and budget), and a name-like
string without asking every reader how it resolves: the output stays what each object's own dump gives."""
from __future__ import annotations

import copy
import string

import pytest
import yaml

from conftest import FIXTURES
from omerender.ome.keep import _shared_metadata
from omerender.ome.load import index
from omerender.ome.render import Options, render
from omerender.yamlio import emit
from omerender.yamlio.reading import read_paths


def _render_counting(monkeypatch, folder) -> tuple[list[dict], list[tuple[int, str]], emit.Spool]:
    """The objects a streamed render of ``folder`` gives, the (map id, indentation) of every map the writer walked,
    and the spool it wrote to."""
    walked: list[tuple[int, str]] = []
    real = emit._mapping
    monkeypatch.setattr(emit, "_mapping", lambda data, indent, *rest: (walked.append((id(data), indent)),
                                                                        real(data, indent, *rest))[1])
    objects: list[dict] = []
    spool = emit.Spool()

    def sink(obj):
        objects.append(obj)
        spool(obj)
    render(index(read_paths([str(folder)])), Options(), None, sink)
    return objects, walked, spool


def test_a_components_labels_are_walked_once_per_indentation_and_every_object_reads_as_its_own(monkeypatch):
    objects, walked, spool = _render_counting(monkeypatch, FIXTURES / "quickstart")
    by_kind = {obj["kind"]: obj for obj in objects}
    labels = by_kind["Deployment"]["metadata"]["labels"]
    holders = [obj for obj in objects if obj["metadata"].get("labels") is labels]
    assert {obj["kind"] for obj in holders} >= {"Deployment", "Service", "PodDisruptionBudget"}
    assert by_kind["Deployment"]["spec"]["template"]["metadata"]["labels"] is labels
    assert sorted(indent for key, indent in walked if key == id(labels)) == ["    ", "        "]
    annotations = by_kind["Deployment"]["metadata"]["annotations"]
    assert by_kind["PodDisruptionBudget"]["metadata"]["annotations"] is annotations
    assert [indent for key, indent in walked if key == id(annotations)] == ["    "]
    text = "".join(spool.texts())
    assert text == "".join("---\n" + emit.dump(copy.deepcopy(obj)) for obj in objects)
    assert list(yaml.safe_load_all(text)) == objects


def test_the_maps_kept_for_one_inferenceservice_are_let_go_after_it_and_leave_the_kept_pods_alone():
    pod = {"containers": [{"name": "c", "image": "x:1"}]}
    labels = {"app": "a", "component": "engine"}
    objects = [{"kind": "Deployment", "metadata": {"name": "a", "labels": labels},
                "spec": {"template": {"metadata": {"labels": labels}, "spec": pod}}},
               {"kind": "Service", "metadata": {"name": "a", "labels": labels}}]
    plain = [emit.dump(copy.deepcopy(obj)) for obj in objects]
    with emit.kept_texts():
        emit.keep_text(pod)
        with emit.kept_within(_shared_metadata(objects)):
            assert set(emit._KEPT) == {id(pod), id(labels)}
            assert [emit.dump(obj) for obj in objects] == plain
        assert set(emit._KEPT) == {id(pod)}
        labels["app"] = "b"   # changed once its objects are written: the next write is of the map as it is now
        assert emit.dump(objects[1]) == "kind: Service\nmetadata:\n  labels:\n    app: b\n    component: engine\n" \
                                        "  name: a\n"
    assert not emit._KEPT
    with emit.kept_within([labels]):   # outside a render nothing is kept
        assert not emit._KEPT


def test_a_render_without_a_sink_leaves_no_kept_text_behind():
    """Without a sink the objects are written after the render, which has let every kept map go: a caller that
    changes a rendered object's labels before writing it writes the changed labels."""
    result = render(index(read_paths([str(FIXTURES / "quickstart")])), Options())
    deployment = next(obj for obj in result.objects if obj["kind"] == "Deployment")
    service = next(obj for obj in result.objects if obj["kind"] == "Service"
                   and obj["metadata"].get("labels") is deployment["metadata"]["labels"])
    assert "team: new" not in emit.dump(service)
    deployment["metadata"]["labels"]["team"] = "new"
    assert "    team: new\n" in emit.dump(service)
    assert not emit._KEPT


# every first character, followed by what makes some reader take a text for a bool, null, number or date
_TAILS = ["", "es", "ES", "o", "ull", "ULL", "rue", "alse", "n", "ff", "FF", "1", "-1", ".5", "e5", "_1", "x1F",
          "0:20", "-12-14", ":", ":x", "=", "<", "~", "a-b.c/d"]


@pytest.mark.parametrize("first", sorted(set(string.ascii_letters + string.digits + "._/=+-~<")))
def test_a_text_the_writer_writes_by_its_first_letter_is_what_pyyaml_writes_with_every_readers_rules(first):
    """The shortcuts (a first letter no reader's rules look at: plain; any other text the plain pattern allows that
    some reader retypes: single-quoted) give what PyYAML writes asking PyYAML's and go-yaml's rules, for texts that
    start with every character the plain pattern allows."""
    for text in (first + tail for tail in _TAILS):
        dumped = emit._dumped({"k": text})
        assert emit._safe_text(text) == (dumped[3:-1] if emit._SAFE_PLAIN.match(text) else None), text
        assert emit._value_line(text) == dumped[3:]
        assert emit._key_text(text) == emit._dumped({text: 0})[:-4]
