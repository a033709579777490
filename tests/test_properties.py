"""Issue 9, property-based: generated and mutated inputs never crash the render, errors say where, and the
output depends only on the set of input objects (not their order, layout or the run)."""
from __future__ import annotations

import copy
import os
import random
import re
import tempfile

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omerender.errors import escape

from conftest import render_objects, run_cli, validate_k8s, worked_example

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FIXTURE = worked_example()

dns_label = st.from_regex(r"[a-z]([a-z0-9-]{0,14}[a-z0-9])?", fullmatch=True)
label_key = st.one_of(dns_label, st.builds(lambda p, n: f"{p}.io/{n}", dns_label, dns_label))
label_value = st.from_regex(r"([a-z0-9]([a-z0-9._-]{0,14}[a-z0-9])?)?", fullmatch=True)
annotation_value = st.text(st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]), max_size=30)


@st.composite
def isvcs(draw) -> list[dict]:
    """InferenceServices for the fixture's runtime and model, with generated names, namespaces and metadata."""
    names = draw(st.lists(st.tuples(dns_label, dns_label), min_size=1, max_size=4, unique=True))
    out = []
    for namespace, name in names:
        isvc = copy.deepcopy(FIXTURE["isvc"])
        isvc["metadata"] = {"name": name, "namespace": namespace,
                            "labels": draw(st.dictionaries(label_key, label_value, max_size=3)),
                            "annotations": draw(st.dictionaries(label_key, annotation_value, max_size=3))}
        if draw(st.booleans()):
            del isvc["spec"]["router"]
        out.append(isvc)
    return out


@st.composite
def valid_inputs(draw) -> list[dict]:
    passthrough = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "llama-demo"},
                    "data": {"k": value}}
                   for name, value in draw(st.dictionaries(dns_label, label_value, max_size=3)).items()]
    return [FIXTURE["model"], FIXTURE["runtime"]] + draw(isvcs()) + passthrough


def shuffled(objects: list[dict], seed: int) -> list[dict]:
    copies = list(objects)
    random.Random(seed).shuffle(copies)
    return copies


def write_layout(directory: str, objects: list[dict], seed: int) -> None:
    """Spread the objects over files and sub-directories, several per file, in a seeded way."""
    rng = random.Random(seed)
    files: dict[str, list[dict]] = {}
    for obj in objects:
        path = os.path.join(*rng.sample(["a", "b", "c"], rng.randint(0, 2)), f"f{rng.randint(0, 3)}.yaml")
        files.setdefault(path, []).append(obj)
    for path, content in files.items():
        os.makedirs(os.path.join(directory, os.path.dirname(path)), exist_ok=True)
        with open(os.path.join(directory, path), "w") as handle:
            handle.write(yaml.safe_dump_all(content, sort_keys=rng.random() < 0.5))


def assert_clean(run, inputs=()) -> None:
    """No crash; errors are clean; every rendered object (not the ones passed through) is valid."""
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr, run.stderr
    for line in run.lines:
        assert line.startswith(("error: ", "warning: ", "info: ")), line
    if run.code:
        assert run.code == 1 and run.stdout == "", run.stderr
        assert run.lines and all(line.startswith(("error: <stdin>: ", "warning: ", "info: ")) for line in run.lines)
    else:
        for obj in run.objects:
            if obj not in inputs:
                validate_k8s(obj)


@SETTINGS
@given(valid_inputs(), st.integers(0, 2**32))
def test_valid_inputs_render_valid_objects_in_any_order_and_layout(objects, seed):
    first = render_objects(objects)
    assert first.code == 0, first.stderr
    assert_clean(first)
    assert render_objects(objects).stdout == first.stdout  # twice: the same bytes
    again = render_objects(shuffled(objects, seed))
    assert (again.stdout, again.stderr) == (first.stdout, first.stderr)
    with tempfile.TemporaryDirectory() as directory:
        write_layout(directory, objects, seed)
        from_files = run_cli("render", directory)
    assert from_files.stdout == first.stdout


# ---------------------------------------------------------------- mutations

JUNK = st.one_of(st.none(), st.booleans(), st.integers(-2**40, 2**40), st.floats(allow_nan=False),
                 st.text(max_size=12), st.sampled_from(["", "{{.Name}}", "{{ .Labels.x }}", "{{index .Labels \"a\"}}",
                                                        "{{.Env}}", "$(PARALLELISM_SIZE)", "-1", "0", "1e400", "8Gi"]),
                 st.lists(st.integers(0, 3), max_size=2), st.dictionaries(st.sampled_from(["name", "x"]),
                                                                          st.integers(0, 3), max_size=2))


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, prefix + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, prefix + (index,))


@st.composite
def mutated_inputs(draw) -> list[dict]:
    objects = copy.deepcopy([FIXTURE["model"], FIXTURE["runtime"], FIXTURE["isvc"]])
    for _ in range(draw(st.integers(1, 3))):
        target = draw(st.integers(0, len(objects) - 1))
        path = draw(st.sampled_from(list(_paths(objects[target]))[1:]))
        parent = objects[target]
        for step in path[:-1]:
            parent = parent[step]
        if draw(st.booleans()) and isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent[path[-1]] = draw(JUNK)
    if draw(st.booleans()):
        objects.append(copy.deepcopy(objects[draw(st.integers(0, 2))]))  # a duplicate
    return objects


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_inputs(), st.integers(0, 2**32))
def test_mutated_inputs_fail_cleanly_or_render_valid_objects(objects, seed):
    run = render_objects(objects)
    assert_clean(run, objects)
    again = render_objects(shuffled(objects, seed))
    assert (again.code, again.stdout) == (run.code, run.stdout)
    if run.code == 0:
        assert sorted(again.lines) == sorted(run.lines)


@SETTINGS
@given(mutated_inputs())
def test_errors_name_the_object_they_concern(objects):
    run = render_objects(objects)
    errors = [line for line in run.lines if line.startswith("error: ")]
    for line in errors:
        located = line.removeprefix("error: <stdin>: ")
        assert located != line, line
        # messages escape control characters, so a kind is looked for as it is printed
        named = any(f"{escape(o.get('kind'))} " in located.split(":")[0] for o in objects if isinstance(o, dict)
                    and isinstance(o.get("kind"), str))
        # an object that cannot be named (no kind or name) is reported by what is missing; YAML the readers
        # can't convert (a plain .inf) by its line and column, before there is an object
        assert named or "Required value" in located or "expected a Kubernetes object" in located or \
            located.split(":")[0] in ("apiVersion", "kind") or re.search(r"\(line \d+, column \d+\)$", located), line
