"""Issue 9: hostile or oversized input gives a clear error (exit 1, empty stdout), never a crash or a hang."""
from __future__ import annotations

import copy
import io
import os
import re
import subprocess
import sys
import time

import pytest
import yaml

from conftest import ROOT, render_objects, run_cli, worked_example
from omerender.gitops.krm import run as krm_run
from omerender.ome.runtimes.inherit import Chains
from omerender.yamlio import limits
from omerender.yamlio.data import count_values
from select_helpers import L3, NS, cbm, csr, isvc

BOMB = """\
a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]
f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]
g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]
h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]
i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]
"""


def fixture_text() -> str:
    return yaml.safe_dump_all(list(worked_example().values()), sort_keys=False)


def write(path, text: str):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def assert_fails(run, *expected_lines: str) -> None:
    assert run.code == 1, run.stderr
    assert run.stdout == ""
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr
    assert run.lines == list(expected_lines)


def deep_object(depth: int) -> dict:
    """A pass-through object whose deepest map sits ``depth`` levels down (the object itself is level 1)."""
    value: dict = {"leaf": "x"}
    for _ in range(depth - 2):
        value = {"n": value}
    return {"apiVersion": "example.com/v1", "kind": "Deep", "metadata": {"name": "deep"}, "spec": value}


# ---------------------------------------------------------------- YAML bombs and aliases

def test_billion_laughs_is_refused_quickly():
    started = time.monotonic()
    run = run_cli("render", "-", input=BOMB)
    assert time.monotonic() - started < 2
    assert_fails(run, "error: <stdin>: aliases expand to more than 1,000,000 nodes (a YAML alias bomb?) "
                      "(line 7, column 8)")


def test_billion_laughs_in_a_krm_resource_list_is_an_error_result():
    text = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nbomb:\n" + \
           "".join("  " + line + "\n" for line in BOMB.splitlines())
    resource_list, code = krm_run(text)
    assert code == 1 and resource_list["items"] == []
    assert resource_list["results"][0]["severity"] == "error"
    assert "aliases expand to more than 1,000,000 nodes" in resource_list["results"][0]["message"]


def test_recursive_alias_is_refused():
    assert_fails(run_cli("render", "-", input="a: &a\n  b: *a\n"),
                 "error: <stdin>: alias *a refers to a value that contains it (recursive alias) (line 2, column 6)")


def test_alias_limit_counts_expanded_nodes(monkeypatch):
    monkeypatch.setattr(limits, "MAX_ALIAS_NODES", 5)
    under = "a: &x [1, 2]\nb: [*x, *x]\n"  # each alias adds 3 nodes: 6 > 5
    assert_fails(run_cli("render", "-", input=under),
                 "error: <stdin>: aliases expand to more than 5 nodes (a YAML alias bomb?) (line 2, column 9)")


def test_ordinary_anchors_render_like_the_expanded_text():
    objects = worked_example()
    second = copy.deepcopy(objects["isvc"])
    second["metadata"]["name"] = "second"
    both = {"apiVersion": "v1", "kind": "List",
            "items": [dict(objects["isvc"], spec=dict(objects["isvc"]["spec"], engine="FIRST")),
                      dict(second, spec=dict(second["spec"], engine="SECOND"))]}
    engine = yaml.safe_dump({"engine": objects["isvc"]["spec"]["engine"]}).replace("engine:\n", "engine: &engine\n")
    text = yaml.safe_dump_all([objects["model"], objects["runtime"], both], sort_keys=False)
    text = text.replace("engine: FIRST\n", "".join("    " + line + "\n" for line in engine.splitlines()).lstrip())
    text = text.replace("engine: SECOND", "engine: *engine")
    assert "*engine" in text and "&engine" in text
    aliased = run_cli("render", "-", input=text)
    assert aliased.code == 0, aliased.stderr
    assert aliased.stdout == render_objects(list(objects.values()) + [second]).stdout
    assert "&" not in aliased.stdout and "*engine" not in aliased.stdout


def test_aliased_values_are_separate_objects():
    from omerender.yamlio.reading import parse_text
    docs = parse_text("a: &x {k: [1]}\nb: *x\nc: {<<: *x}\n", "f.yaml")
    data = docs[0].data
    assert data == {"a": {"k": [1]}, "b": {"k": [1]}, "c": {"k": [1]}}
    assert data["a"] is not data["b"] and data["a"]["k"] is not data["b"]["k"] and data["a"]["k"] is not data["c"]["k"]


# ---------------------------------------------------------------- nesting

# libyaml 0.2.6 (PyYAML 6.0.4) refuses flow nesting past 1,000 levels while scanning ahead, before the events
# reach omerender's own check; either way the user reads one message, at the position where it stopped.
TOO_DEEP = "error: <stdin>:1:{0}: nesting deeper than 100 levels (line 1, column {0})"


@pytest.mark.parametrize("text, columns", [("[" * 100_000 + "]" * 100_000, (101, 1001)),
                                           ("- " * 100_000 + "x\n", (201,)),
                                           ("{a: " * 100_000 + "1" + "}" * 100_000, (401,)),
                                           ("[" * 500 + "]" * 500, (101,))],
                         ids=["flow", "block", "map", "flow-500"])
def test_deep_nesting_is_refused_without_crashing(text, columns):
    # libyaml's composer used to crash the whole process (SIGSEGV) near 30,000 levels: run it in a child.
    child = subprocess.run([sys.executable, "-m", "omerender.cli", "render", "-"], input=text, cwd=ROOT,
                           capture_output=True, text=True, timeout=60, check=False)
    assert (child.returncode, child.stdout) == (1, "")
    assert child.stderr in [TOO_DEEP.format(column) + "\n" for column in columns]


def test_deep_nesting_in_a_krm_resource_list_is_an_error_result():
    text = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: " + "[" * 50_000 + "]" * 50_000
    child = subprocess.run([sys.executable, "-m", "omerender.cli", "fn"], input=text, cwd=ROOT,
                           capture_output=True, text=True, timeout=60, check=False)
    assert child.returncode == 1
    [result] = yaml.safe_load(child.stdout)["results"]
    assert result["severity"] == "error"
    assert re.fullmatch(r"malformed ResourceList on stdin: nesting deeper than 100 levels "
                        r"\(line 3, column (107|1007)\)", result["message"]), result["message"]


# PyYAML without libyaml (no wheel for the platform): the same input gives the same message.
HIDE_LIBYAML = ("import runpy, sys, yaml\n"
                "for name in [n for n in dir(yaml) if n.startswith('C') and n[1:2].isupper()]:\n"
                "    delattr(yaml, name)\n"
                "sys.argv = ['omerender', 'render', '-']\n"
                "runpy.run_module('omerender.cli', run_name='__main__')\n")


@pytest.mark.parametrize("text", ["[" * 500 + "]" * 500, "- " * 10_000 + "x\n", BOMB, "a: 1\nb: 2\na: 3\n",
                                  "a: &a\n  b: *a\n", "a: [\n"],
                         ids=["flow-nesting", "block-nesting", "alias-bomb", "duplicate-key", "recursive-alias",
                              "unclosed"])
def test_pyyaml_without_libyaml_refuses_alike(text):
    def run(*args):
        return subprocess.run([sys.executable, *args], input=text, cwd=ROOT, capture_output=True, text=True,
                              timeout=120, check=False)
    with_c, pure = run("-m", "omerender.cli", "render", "-"), run("-c", HIDE_LIBYAML)
    assert (pure.returncode, pure.stdout) == (with_c.returncode, with_c.stdout) == (1, "")
    if text != "a: [\n":  # the parsers word syntax errors differently; limits and our checks alike
        assert pure.stderr == with_c.stderr
    assert re.match(r"error: <stdin>:\d+:\d+: ", pure.stderr) and pure.stderr.count("\n") == 1


# A text without "*" holds no alias, so the loader composes it without the event scan and checks depth and
# document count on the nodes (libyaml 0.2.6 bounds the composer's own nesting). Same data, same counts.
def _scanned(text: str) -> tuple[list, int]:
    from omerender.yamlio.yamlread import Budget, SafeLoader
    budget = Budget()
    loader = SafeLoader(text, budget)
    try:
        return [loader.get_data() for _ in iter(loader.check_data, False)], budget.documents
    finally:
        loader.dispose()


def _corpus() -> list:
    from conftest import CATALOG
    paths = sorted([*CATALOG.rglob("*.yaml"), *(ROOT / "fixtures").rglob("*.yaml")])
    assert len(paths) > 100
    return [p.read_text() for p in paths]


def test_texts_without_aliases_load_as_the_scanned_path_does():
    from omerender.yamlio.yamlread import Budget, load_all
    texts = _corpus() + ["", "---\n", "---\n---\n", "a: 1\nb: '1'\nc: 2024-01-01T00:00:00Z\nd: ~\ne: ''\nf: 0o7\ng: 1e3\n",
                         "- [x, {z: [1, 2]}]\n", "k: &anchor v\n"]
    from omerender.yamlio.yamlread import _COMPOSER_BOUNDED, _load_unscanned
    for text in texts:
        budget = Budget()
        assert (load_all(text, budget), budget.documents) == _scanned(text)
        unscanned = _load_unscanned(text, Budget(), single=False) is not None
        assert unscanned == (_COMPOSER_BOUNDED and "*" not in text)


def test_the_document_limit_spans_texts_on_either_path(monkeypatch):
    from omerender.yamlio.yamlread import Budget, YAMLLimitError, load_all
    monkeypatch.setattr(limits, "MAX_OBJECTS", 3)
    budget = Budget()
    load_all("a: 1\n---\nb: 2\n", budget)  # no alias: not scanned
    with pytest.raises(YAMLLimitError, match=r"more than 3 YAML documents"):
        load_all("c: &x 3\nd: *x\n---\ne: 1\n", budget)  # an alias: scanned
    budget = Budget()
    load_all("c: &x 3\nd: *x\n---\ne: 1\n", budget)
    with pytest.raises(YAMLLimitError, match=r"more than 3 YAML documents"):
        load_all("a: 1\n---\nb: 2\n", budget)


def test_nesting_at_the_limit_renders_and_one_more_level_fails():
    objects = list(worked_example().values())
    run = render_objects(objects + [deep_object(limits.MAX_DEPTH)])
    assert run.code == 0, run.stderr
    assert run.find("Deep", "deep") == deep_object(limits.MAX_DEPTH)
    run = render_objects(objects + [deep_object(limits.MAX_DEPTH + 1)])
    assert run.code == 1 and run.stdout == ""
    assert run.lines[0].startswith("error: <stdin>: nesting deeper than 100 levels (line ")


# ---------------------------------------------------------------- sizes and counts

def test_a_50_mb_file_is_refused_without_reading_it(tmp_path):
    big = tmp_path / "fleet.yaml"
    isvc = yaml.safe_dump(worked_example()["isvc"])
    with big.open("w") as handle:
        for i in range(50 * 1024 * 1024 // len(isvc) + 1):
            handle.write("---\n" + isvc.replace("name: llama-3-2-3b-instruct\n  namespace", f"name: s{i}\n  namespace"))
    assert big.stat().st_size > 50_000_000
    started = time.monotonic()
    run = run_cli("render", str(big))
    assert time.monotonic() - started < 2
    assert_fails(run, f"error: {big}: larger than 32 MiB; split it into several files")


def test_stdin_holds_a_whole_input_up_to_the_total_limit(monkeypatch):
    # `kustomize build . | omerender render -` puts everything on stdin: the one-file limit does not apply.
    monkeypatch.setattr(limits, "MAX_FILE_BYTES", 1000)
    assert run_cli("render", "-", input="# " + "x" * 1000 + "\n").code == 0
    monkeypatch.setattr(limits, "MAX_TOTAL_BYTES", 1000)
    assert_fails(run_cli("render", "-", input="# " + "x" * 1000 + "\n"),
                 "error: <stdin>: larger than 0 MiB; render fewer objects at a time")


def test_total_input_size_limit(tmp_path, monkeypatch):
    text = fixture_text()
    write(tmp_path / "a.yaml", text)
    write(tmp_path / "b.yaml", text.replace("kind: ", "kind: ", 1))
    monkeypatch.setattr(limits, "MAX_TOTAL_BYTES", len(text) + 10)
    assert_fails(run_cli("render", str(tmp_path)),
                 f"error: {tmp_path / 'b.yaml'}: the inputs are larger than 0 MiB in total; render fewer files at a time")


def test_object_count_limit_counts_documents_and_list_items(tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "MAX_OBJECTS", 3)
    configmaps = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}"}} for i in range(4)]
    assert_fails(render_objects(configmaps),
                 "error: <stdin>: more than 3 YAML documents in the inputs (line 15, column 1)")
    as_list = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": configmaps})
    assert_fails(run_cli("render", "-", input=as_list),
                 "error: <stdin>: more than 3 objects in the inputs; render fewer files at a time")
    write(tmp_path / "a.yaml", yaml.safe_dump_all(configmaps[:2]))
    write(tmp_path / "b.yaml", yaml.safe_dump_all(configmaps[2:]))
    assert_fails(run_cli("render", str(tmp_path)),
                 f"error: {tmp_path / 'b.yaml'}: more than 3 YAML documents in the inputs (line 5, column 1)")


def test_a_stream_of_empty_documents_is_bounded(monkeypatch):
    monkeypatch.setattr(limits, "MAX_OBJECTS", 1000)
    assert_fails(run_cli("render", "-", input="---\n" * 5000),
                 "error: <stdin>: more than 1,000 YAML documents in the inputs (line 1001, column 1)")


def test_a_runtime_copied_by_many_inference_services_is_bounded_across_the_render(monkeypatch):
    # Each InferenceService copies its runtime's spec: one large runtime named many times must not multiply.
    objects = worked_example()
    isvcs = [copy.deepcopy(objects["isvc"]) for _ in range(3)]
    for i, isvc in enumerate(isvcs):
        isvc["metadata"]["name"] = f"s{i}"
    per_isvc = count_values(objects["runtime"]["spec"])
    inputs = [objects["model"], objects["runtime"], *isvcs]
    monkeypatch.setattr(limits, "COPIES_PER_INPUT_VALUE", 0)  # the floor alone
    monkeypatch.setattr(limits, "COPIED_VALUES_FREE", 3 * per_isvc)
    assert render_objects(inputs).code == 0
    monkeypatch.setattr(limits, "COPIED_VALUES_FREE", 3 * per_isvc - 1)
    assert_fails(render_objects(inputs),
                 f"error: <stdin>: InferenceService llama-demo/s2: the InferenceServices rendered so far "
                 f"copy more than {3 * per_isvc - 1:,} values of runtime specs, policies and cluster settings in all (this one {per_isvc:,}, from "
                 f"ClusterServingRuntime/srt-llama-3-2-3b-instruct); the limit is 0 times the values of the input, "
                 f"at least {3 * per_isvc - 1:,} and at most 20,000,000; render fewer InferenceServices at a time, "
                 "or make the runtime smaller")


def test_the_copied_values_limit_grows_with_the_input_and_is_charged_before_copying(monkeypatch):
    # One runtime of 2,000 env entries named by 300 InferenceServices: 1.8 million values to copy from an input of
    # about 10,000 (the floor lowered below 8 times that). The render stops at the InferenceService that would pass 8 times the input, before copying it.
    env = [{"name": f"E{i}", "value": "v"} for i in range(2_000)]
    runtime = csr("big", engineConfig={"runner": {"name": "ome-container", "image": "img", "env": env}})
    isvcs = [isvc(f"s{i:03d}", model=L3, runtime="big") for i in range(300)]
    in_input = sum(count_values(o) for o in [runtime, cbm(), *isvcs])
    per_isvc = count_values(runtime["spec"])
    monkeypatch.setattr(limits, "COPIED_VALUES_FREE", 10_000)
    limit = 8 * in_input
    first_over = limit // per_isvc  # 0-based index of the InferenceService that passes it
    copied = []
    merged_spec = Chains.merged_spec
    monkeypatch.setattr(Chains, "merged_spec", lambda self, rt: copied.append(1) or merged_spec(self, rt))
    assert_fails(render_objects([runtime, cbm(), *isvcs]),
                 f"error: <stdin>: InferenceService {NS}/s{first_over:03d}: the InferenceServices rendered so far "
                 f"copy more than {limit:,} values of runtime specs, policies and cluster settings in all (this one {per_isvc:,}, from "
                 f"ClusterServingRuntime/big); the limit is 8 times the values of the input, at least 10,000 and at "
                 f"most 20,000,000; render fewer InferenceServices at a time, or make the runtime smaller")
    assert len(copied) <= first_over  # the one that passed the limit was never copied


def test_file_count_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "MAX_FILES", 2)
    for i in range(3):
        write(tmp_path / f"d{i}" / "x.yaml", "")
    assert_fails(run_cli("render", str(tmp_path)),
                 f"error: {tmp_path}: more than 2 YAML files in the inputs; render fewer files at a time")


def test_file_count_limit_spans_every_path(tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "MAX_FILES", 2)
    for name in ("a", "b"):
        write(tmp_path / name / "x.yaml", "")
        write(tmp_path / name / "y.yaml", "")
    assert run_cli("render", str(tmp_path / "a")).code == 0
    assert_fails(run_cli("render", str(tmp_path / "a"), str(tmp_path / "b")),
                 f"error: {tmp_path / 'b'}: more than 2 YAML files in the inputs; render fewer files at a time")
    assert_fails(run_cli("render", str(tmp_path / "a"), str(tmp_path / "b" / "x.yaml")),
                 f"error: {tmp_path / 'b' / 'x.yaml'}: more than 2 YAML files in the inputs; render fewer files at a "
                 "time")


def test_total_size_counts_bytes_not_characters(tmp_path, monkeypatch):
    text = "a: " + "é" * 600 + "\n"  # 603 characters, 1,203 bytes
    write(tmp_path / "a.yaml", text)
    monkeypatch.setattr(limits, "MAX_TOTAL_BYTES", 1000)
    assert_fails(run_cli("render", str(tmp_path / "a.yaml")),
                 f"error: {tmp_path / 'a.yaml'}: the inputs are larger than 0 MiB in total; render fewer files at a "
                 "time")


def test_a_fleet_of_2000_runtimes_and_10000_inferenceservices_loads(tmp_path):
    objects = worked_example()
    runtime, isvc = yaml.safe_dump(objects["runtime"]), yaml.safe_dump(objects["isvc"])
    for part in range(4):
        with (tmp_path / f"runtimes-{part}.yaml").open("w") as handle:
            for i in range(part * 500, part * 500 + 500):
                handle.write("---\n" + runtime.replace("name: srt-llama-3-2-3b-instruct\n", f"name: rt-{i}\n", 1))
        with (tmp_path / f"isvcs-{part}.yaml").open("w") as handle:
            for i in range(part * 2500, part * 2500 + 2500):
                handle.write("---\n" + isvc.replace("  name: llama-3-2-3b-instruct\n  namespace",
                                                    f"  name: svc-{i}\n  namespace", 1))
    from omerender.ome.load import index
    from omerender.yamlio.reading import read_paths
    inputs = index(read_paths([str(tmp_path)]))
    assert (len(inputs.cluster_runtimes), len(inputs.isvcs)) == (2000, 10_000)


# ---------------------------------------------------------------- only plain YAML

def test_python_tags_never_run_anything(tmp_path):
    marker = tmp_path / "ran"
    text = f"!!python/object/apply:os.system ['touch {marker}']\n"
    run = run_cli("render", "-", input=text)
    assert not marker.exists()
    assert_fails(run, "error: <stdin>: malformed YAML: could not determine a constructor for the tag "
                      "'tag:yaml.org,2002:python/object/apply:os.system' (line 1, column 1)")


@pytest.mark.parametrize("tag, value", [("binary", "aGk="), ("set", "{a}"), ("omap", "[{a: 1}]"),
                                        ("pairs", "[{a: 1}]"), ("timestamp", "2024-01-01")])
def test_tags_for_types_kubernetes_lacks_are_refused(tag, value):
    assert_fails(run_cli("render", "-", input=f"a: !!{tag} {value}\n"),
                 f"error: <stdin>: malformed YAML: unsupported YAML tag !!{tag}; use plain maps, lists, strings, "
                 "numbers, booleans and null (line 1, column 4)")


def test_times_stay_strings_as_kubernetes_reads_them():
    """A time both Go readers write back as its own text; a date alone is a time to kustomize only
    (tests/test_go_yaml.py)."""
    objects = worked_example()
    objects["isvc"]["metadata"]["annotations"] = {"deployed": "2024-01-01T10:00:00Z"}
    text = yaml.safe_dump_all(list(objects.values()), sort_keys=False).replace("'2024-01-01T10:00:00Z'",
                                                                              "2024-01-01T10:00:00Z")
    assert "deployed: 2024-01-01T10:00:00Z\n" in text
    run = run_cli("render", "-", input=text)
    assert run.code == 0, run.stderr
    engine = run.find("Deployment", "llama-3-2-3b-instruct-engine")
    assert engine["metadata"]["annotations"]["deployed"] == "2024-01-01T10:00:00Z"


@pytest.mark.parametrize("key, shown", [("1", "1"), ("true", "true"), ("~", "~"), ("[a]", "of a map or list")])
def test_mapping_keys_must_be_strings(key, shown):
    assert_fails(run_cli("render", "-", input=f"metadata:\n  {key}: x\n"),
                 f"error: <stdin>: malformed YAML: mapping key {shown} is not a string; quote it (line 2, column 3)")


NOT_UTF8 = "is not valid UTF-8; save it as UTF-8 (Kubernetes YAML is UTF-8)"


def test_binary_input_is_refused(tmp_path):
    write(tmp_path / "bad.yaml", "")
    (tmp_path / "bad.yaml").write_bytes(b"\xff\xfe\x00garbage")
    assert_fails(run_cli("render", str(tmp_path / "bad.yaml")),
                 f"error: {tmp_path / 'bad.yaml'}: not UTF-8 text: byte 0xff at offset 0 {NOT_UTF8}")


def test_latin1_file_names_the_offset_of_the_first_bad_byte(tmp_path):
    bad = tmp_path / "latin1.yaml"
    bad.write_bytes("kind: ConfigMap\ndata: {city: Zürich}\n".encode("latin-1"))
    assert_fails(run_cli("render", str(bad)), f"error: {bad}: not UTF-8 text: byte 0xfc at offset 30 {NOT_UTF8}")


def test_non_utf8_stdin_is_an_error_line_not_an_internal_error():
    assert_fails(run_cli("render", "-", input=b"a: \xc3(\n"),
                 f"error: <stdin>: not UTF-8 text: byte 0xc3 at offset 3 {NOT_UTF8}")


def test_non_utf8_stdin_of_the_krm_function_is_an_error_result():
    run = run_cli("fn", input=b"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n# \xff\n")
    assert run.code == 1
    assert yaml.safe_load(run.stdout) == {
        "apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": [],
        "results": [{"message": f"not UTF-8 text: byte 0xff at offset 67 {NOT_UTF8}", "severity": "error",
                     "file": {"path": "<stdin>"}}]}
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr


# ---------------------------------------------------------------- paths and symbolic links

def test_symlink_leaving_the_directory_is_refused(tmp_path):
    secret = write(tmp_path / "outside" / "secret.yaml", fixture_text())
    repo = tmp_path / "repo"
    write(repo / "ok.yaml", "")
    os.symlink(secret, repo / "stolen.yaml")
    assert_fails(run_cli("render", str(repo)),
                 f"error: {repo / 'stolen.yaml'}: symbolic link to {secret}, outside {repo}; omerender reads only "
                 "the files it is given")


def test_symlinked_directory_leaving_the_directory_is_refused(tmp_path):
    write(tmp_path / "outside" / "secret.yaml", fixture_text())
    repo = tmp_path / "repo"
    (repo / "apps").mkdir(parents=True)
    os.symlink("../../outside", repo / "apps" / "more")
    assert_fails(run_cli("render", str(repo)),
                 f"error: {repo / 'apps' / 'more'}: symbolic link to {tmp_path / 'outside'}, outside {repo}; "
                 "omerender reads only the files it is given")


def test_explicit_symlink_leaving_its_directory_is_refused(tmp_path):
    secret = write(tmp_path / "outside" / "secret.yaml", fixture_text())
    (tmp_path / "repo").mkdir()
    link = tmp_path / "repo" / "link.yaml"
    os.symlink(secret, link)
    assert_fails(run_cli("render", str(link)),
                 f"error: {link}: symbolic link to {secret}, outside {tmp_path / 'repo'}; omerender reads only "
                 "the files it is given")


def test_symlinks_inside_the_directory_are_not_read_twice(tmp_path):
    real = write(tmp_path / "repo" / "real.yaml", fixture_text())
    os.symlink("real.yaml", tmp_path / "repo" / "alias.yaml")
    os.symlink(".", tmp_path / "repo" / "loop")
    run = run_cli("render", str(tmp_path / "repo"))
    assert run.code == 0, run.stderr
    assert run.stdout == run_cli("render", str(real)).stdout
    assert run_cli("render", str(tmp_path / "repo" / "alias.yaml")).stdout == run.stdout


@pytest.mark.parametrize("path", ["/dev/zero", "/dev/urandom"])
def test_devices_are_refused_not_read(path):
    assert_fails(run_cli("render", path), f"error: {path}: not a regular file; omerender reads only files, "
                                          "directories and -")


def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    assert_fails(run_cli("render", str(tmp_path)), f"error: {fifo}: not a regular file; omerender reads only files, "
                                                   "directories and -")


def test_every_unreadable_path_is_reported(tmp_path):
    missing = tmp_path / "missing.yaml"
    assert_fails(run_cli("render", "/dev/zero", str(missing), "-", input="a: !!binary aGk=\n"),
                 "error: /dev/zero: not a regular file; omerender reads only files, directories and -",
                 f"error: no such file or directory: {missing}",
                 "error: <stdin>: malformed YAML: unsupported YAML tag !!binary; use plain maps, lists, strings, "
                 "numbers, booleans and null (line 1, column 4)")


# ---------------------------------------------------------------- crashes found by fuzzing (fixes belong in krm.py)

@pytest.mark.parametrize("extra", ["items: [{metadata: x}]", "items: [{metadata: {annotations: x}}]",
                                   "items: []\nfunctionConfig: {kind: ConfigMap, data: x}",
                                   "items: []\nfunctionConfig: {kind: ConfigMap, data: [1]}"],
                         ids=["metadata-string", "annotations-string", "configmap-data-string", "configmap-data-list"])
def test_krm_non_map_fields_are_error_results_not_internal_errors(extra):
    resource_list, code = krm_run("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n" + extra)
    assert code == 1 and resource_list["items"] == []
    messages = [r["message"] for r in resource_list["results"]]
    assert messages and not any("internal error" in m for m in messages), messages


# ---------------------------------------------------------------- limits hold across a whole input (issue 12)

def bomb_item(i: int) -> str:
    """One ResourceList item (kustomize's layout) whose aliases expand to 472,392 nodes: under the limit alone."""
    return (f"- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: c{i}\n  data:\n"
            "    a: &a [x, x, x, x, x, x, x, x, x]\n    b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
            "    c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n    d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
            "    e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n    f: [*e, *e, *e, *e, *e, *e, *e, *e]\n")


def test_the_alias_budget_spans_every_item_of_a_resource_list():
    text = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + "".join(map(bomb_item, range(5)))
    assert 1600 < len(text) < 1800
    started = time.monotonic()
    run = run_cli("fn", input=text)
    assert time.monotonic() - started < 3
    assert run.code == 1
    assert yaml.safe_load(run.stdout) == {
        "apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": [],
        "results": [{"message": "malformed ResourceList on stdin: aliases expand to more than 1,000,000 nodes "
                                "(a YAML alias bomb?) (line 25, column 25)", "severity": "error"}]}
    assert text.splitlines()[24][24:] == "*e, *e, *e, *e]"  # in the second item, already past the limit


def test_one_item_under_the_alias_budget_still_renders():
    text = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + bomb_item(0)
    resource_list, code = krm_run(text)
    assert code == 0, resource_list.get("results")
    assert len(resource_list["items"][0]["data"]["f"]) == 8


def test_the_alias_budget_spans_every_file_of_a_render(tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "MAX_ALIAS_NODES", 5)
    write(tmp_path / "a.yaml", "a: &x [1, 2]\nb: *x\n")  # 3 nodes
    write(tmp_path / "b.yaml", "a: &x [1, 2]\nb: *x\n")  # 3 more: 6 > 5
    assert_fails(run_cli("render", str(tmp_path)),
                 f"error: {tmp_path / 'b.yaml'}: aliases expand to more than 5 nodes (a YAML alias bomb?) "
                 "(line 2, column 4)")
    assert_fails(run_cli("render", str(tmp_path / "a.yaml"), "-", input="c: &y [1, 2]\nd: *y\n"),
                 "error: <stdin>: aliases expand to more than 5 nodes (a YAML alias bomb?) (line 2, column 4)")


def test_the_alias_budget_spans_items_aliased_across_each_other(monkeypatch):
    # An alias from one item to another defeats the item-by-item reading: the whole text is read at once.
    monkeypatch.setattr(limits, "MAX_ALIAS_NODES", 5)
    text = ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"
            "- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}, data: &d {k: v}}\n"
            "- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}, data: *d}\n"
            "- {apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: *d}\n")
    resource_list, code = krm_run(text)
    assert code == 1
    assert resource_list["results"][0]["message"] == (
        "malformed ResourceList on stdin: aliases expand to more than 5 nodes (a YAML alias bomb?) (line 6, column 64)")
    assert text.splitlines()[5][63:] == "*d}"
    monkeypatch.setattr(limits, "MAX_ALIAS_NODES", 6)
    resource_list, code = krm_run(text)
    assert code == 0, resource_list.get("results")
    assert [item["data"] for item in resource_list["items"]] == [{"k": "v"}] * 3


@pytest.mark.parametrize("layout", ["kustomize", "flow"])
def test_items_of_a_resource_list_count_as_objects_in_either_layout(monkeypatch, layout):
    monkeypatch.setattr(limits, "MAX_OBJECTS", 3)
    items = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}"}} for i in range(4)]
    text = yaml.safe_dump({"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items},
                          sort_keys=False, default_flow_style=True if layout == "flow" else False)
    assert ("items:\n- " in text) == (layout == "kustomize")
    resource_list, code = krm_run(text)
    assert code == 1
    assert [r["message"] for r in resource_list["results"]] == [
        "more than 3 objects in the inputs; render fewer files at a time"]
    monkeypatch.setattr(limits, "MAX_OBJECTS", 4)
    assert krm_run(text)[1] == 0


def annotated_fleet(value: str, args: int, count: int = 1) -> list[dict]:
    objects = worked_example()
    isvcs = []
    for i in range(count):
        isvc = copy.deepcopy(objects["isvc"])
        isvc["metadata"]["name"] = f"svc-{i}"
        isvc["metadata"]["annotations"] = {"a": value}
        isvc["spec"]["engine"]["runner"]["args"] = ["{{.Annotations.a}}"] * args
        isvcs.append(isvc)
    return [objects["model"], objects["runtime"]] + isvcs


def test_placeholder_output_is_capped_across_the_render():
    # A 250 kB annotation (the API server allows 256 KiB of them) printed by 1,500 args would be 375 MB of
    # output per InferenceService; the 269th arg passes the cap (268 x 250,000 < 64 Mi < 269 x 250,000).
    started = time.monotonic()
    run = render_objects(annotated_fleet("x" * 250_000, 1500))
    assert time.monotonic() - started < 20
    assert_fails(run, "error: <stdin>: InferenceService llama-demo/svc-0: placeholders in engine.runner.args[268] take "
                      "the text they print past 67,108,864 characters across the render; print shorter labels and "
                      "annotations, or fewer of them")


def test_the_placeholder_cap_spans_inferenceservices_and_is_reported_once(monkeypatch):
    monkeypatch.setattr(limits, "MAX_EXPANDED_CHARS", 2500)
    assert render_objects(annotated_fleet("x" * 100, 12, count=2)).code == 0  # 2,400 characters
    run = render_objects(annotated_fleet("x" * 100, 12, count=5))
    assert_fails(run, "error: <stdin>: InferenceService llama-demo/svc-2: placeholders in engine.runner.args[0] take "
                      "the text they print past 2,500 characters across the render; print shorter labels and "
                      "annotations, or fewer of them")


def test_the_placeholder_cap_starts_afresh_for_each_render(monkeypatch):
    monkeypatch.setattr(limits, "MAX_EXPANDED_CHARS", 2500)
    for _ in range(3):
        assert render_objects(annotated_fleet("x" * 100, 12, count=2)).code == 0


class Endless(io.RawIOBase):
    """A stdin that never ends: reading it in full would hang."""

    def readable(self):
        return True

    def readinto(self, buffer):
        buffer[:] = b"#" * len(buffer)
        return len(buffer)


def endless_stdin():
    return io.BufferedReader(Endless())


def test_render_stdin_is_refused_while_reading(monkeypatch):
    monkeypatch.setattr(limits, "MAX_TOTAL_BYTES", 1000)
    assert_fails(run_cli("render", "-", input=endless_stdin()),
                 "error: <stdin>: larger than 0 MiB; render fewer objects at a time")


def test_krm_stdin_is_refused_while_reading(monkeypatch):
    monkeypatch.setattr(limits, "MAX_TOTAL_BYTES", 1000)
    run = run_cli("fn", input=endless_stdin())
    assert run.code == 1
    assert yaml.safe_load(run.stdout)["results"] == [
        {"message": "larger than 0 MiB; render fewer objects in one kustomization", "severity": "error",
         "file": {"path": "<stdin>"}}]


@pytest.mark.parametrize("command, fix", [("render -", "error: <stdin>: larger than 256 MiB; render fewer objects "
                                                              "at a time"),
                                          ("fn", "error: <stdin>: larger than 256 MiB; render fewer objects in one "
                                                 "kustomization")], ids=["render", "fn"])
def test_stdin_of_256_mib_is_refused_without_reading_further(command, fix):
    # The real limit, through the real command: /dev/zero never ends.
    with open("/dev/zero", "rb") as zero:
        child = subprocess.run([sys.executable, "-m", "omerender.cli", *command.split()], stdin=zero, cwd=ROOT,
                               capture_output=True, text=True, timeout=60, check=False)
    assert child.returncode == 1
    assert child.stderr == fix + "\n"
    if command == "fn":
        assert yaml.safe_load(child.stdout) == {
            "apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": [],
            "results": [{"message": fix[len("error: <stdin>: "):], "severity": "error", "file": {"path": "<stdin>"}}]}
    else:
        assert child.stdout == ""


# ---------------------------------------------------------------- the lock file is read like any input

def fixture_file(tmp_path):
    """An input file; render looks for omerender.lock.yaml beside it (a directory input reads it as an input)."""
    return write(tmp_path / "repo" / "inputs.yaml", fixture_text())


def test_a_lock_symlinked_to_dev_zero_is_an_error_not_a_hang(tmp_path):
    inputs = fixture_file(tmp_path)
    lock = inputs.parent / "omerender.lock.yaml"
    os.symlink("/dev/zero", lock)
    started = time.monotonic()
    run = run_cli("render", str(inputs))
    assert time.monotonic() - started < 5
    assert_fails(run, f"error: {lock}: symbolic link to /dev/zero, outside {inputs.parent}; "
                      "omerender reads only the files it is given")


@pytest.mark.parametrize("command", [("render",), ("lock", "update")])
def test_a_lock_that_is_a_device_or_fifo_is_refused(tmp_path, command):
    inputs = fixture_file(tmp_path)
    os.mkfifo(tmp_path / "fifo.yaml")
    for lock in ("/dev/zero", str(tmp_path / "fifo.yaml")):
        assert_fails(run_cli(*command, str(inputs), "--lock", lock),
                     f"error: {lock}: not a regular file; omerender reads only files, directories and -")


@pytest.mark.parametrize("command", [("render",), ("lock", "update")])
def test_a_lock_linking_out_of_its_directory_is_not_read(tmp_path, command):
    secret = write(tmp_path / "secret.yaml", "password: hunter2\n")
    inputs = fixture_file(tmp_path)
    lock = inputs.parent / "omerender.lock.yaml"
    os.symlink(secret, lock)
    assert_fails(run_cli(*command, str(inputs)), f"error: {lock}: symbolic link to {secret}, outside {inputs.parent}; "
                                                 "omerender reads only the files it is given")
    assert secret.read_text() == "password: hunter2\n"


def test_a_dangling_lock_link_is_an_error_not_a_missing_lock(tmp_path):
    inputs = fixture_file(tmp_path)
    os.symlink("gone.yaml", inputs.parent / "omerender.lock.yaml")
    assert_fails(run_cli("render", str(inputs)),
                 f"error: {inputs.parent / 'omerender.lock.yaml'}: cannot read file: No such file or directory")


def test_a_lock_over_the_size_limit_or_not_utf8_is_refused(tmp_path, monkeypatch):
    inputs = fixture_file(tmp_path)
    lock = inputs.parent / "omerender.lock.yaml"
    lock.write_bytes(b"kind: RuntimeLock # \xe9\n")
    assert_fails(run_cli("render", str(inputs)), f"error: {lock}: not UTF-8 text: byte 0xe9 at offset 20 {NOT_UTF8}")
    monkeypatch.setattr(limits, "MAX_FILE_BYTES", len(fixture_text()))
    lock.write_text("#" * (len(fixture_text()) + 1))
    assert_fails(run_cli("render", str(inputs)), f"error: {lock}: larger than 0 MiB; split it into several files")


def test_a_lock_alias_bomb_is_refused(tmp_path):
    inputs = fixture_file(tmp_path)
    lock = write(inputs.parent / "omerender.lock.yaml", BOMB)
    assert_fails(run_cli("render", str(inputs)),
                 f"error: {lock}: omerender.lock.yaml: aliases expand to more than 1,000,000 nodes (a YAML alias "
                 "bomb?) (line 7, column 8)")


# ---------------------------------------------------------------- duplicate mapping keys (issue 13)

def isvc_text() -> str:
    objects = worked_example()
    return yaml.safe_dump_all([objects["model"], objects["runtime"]], sort_keys=False) + "---\n" + \
        yaml.safe_dump(objects["isvc"], sort_keys=False)


def test_two_engine_blocks_are_an_error_naming_the_line():
    text = isvc_text() + "  engine:\n    maxReplicas: 10\n"
    lines = text.splitlines()
    first = next(i for i, line in enumerate(lines) if line == "  engine:") + 1
    assert_fails(run_cli("render", "-", input=text),
                 f'error: <stdin>: malformed YAML: mapping key "engine" already defined at line {first}; remove one '
                 f"of them (line {len(lines) - 1}, column 3)")


def test_a_second_namespace_is_an_error_in_a_file(tmp_path):
    text = isvc_text().replace("  namespace: llama-demo\n", "  namespace: llama-demo\n  namespace: kube-system\n")
    line = text.splitlines().index("  namespace: kube-system") + 1
    path = write(tmp_path / "isvc.yaml", text)
    assert_fails(run_cli("render", str(path)),
                 f'error: {path}: malformed YAML: mapping key "namespace" already defined at line {line - 1}; '
                 f"remove one of them (line {line}, column 3)")


@pytest.mark.parametrize("text, shown, line, column", [
    ("a: {k: 1, k: 2}\n", '"k"', 1, 11),
    ("a: 1\n'a': 2\n", '"a"', 2, 1),
    ('"x\\ny": 1\n"x\\ny": 2\n', '"x\\ny"', 2, 1),
    (f"{'k' * 70}: 1\n{'k' * 70}: 2\n", '"' + "k" * 60 + '..."', 2, 1),
], ids=["flow", "quoted", "newline-escaped", "long-key-cut"])
def test_duplicate_keys_are_refused_in_every_style(text, shown, line, column):
    assert_fails(run_cli("render", "-", input=text),
                 f"error: <stdin>: malformed YAML: mapping key {shown} already defined at line 1; remove one of them "
                 f"(line {line}, column {column})")


def test_merge_keys_may_be_overridden_by_the_mapping_s_own_keys():
    from omerender.yamlio.reading import parse_text
    docs = parse_text("base: &b {p: 1, q: 2}\nmerged:\n  <<: *b\n  q: 3\n", "f.yaml")
    assert docs[0].data["merged"] == {"p": 1, "q": 3}


def test_duplicate_keys_in_a_resource_list_item_are_an_error_result():
    text = ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"
            "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a\n    name: b\n")
    resource_list, code = krm_run(text)
    assert code == 1
    assert resource_list["results"][0]["message"] == (
        'malformed ResourceList on stdin: mapping key "name" already defined at line 7; remove one of them '
        "(line 8, column 5)")


# ---------------------------------------------------------------- the legacy exec plugin (kubectl kustomize)

def test_legacy_plugin_limits_span_its_config_and_resources(monkeypatch):
    from omerender.gitops.legacy import legacy_plugin
    monkeypatch.setattr(limits, "MAX_ALIAS_NODES", 5)
    config = "apiVersion: omerender.io/v1alpha1\nkind: OMERender\nmetadata: {name: r}\nspec: &s {}\nx: [*s, *s, *s]\n"
    configmap = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: &x {k: v}\n"
    assert legacy_plugin(config, configmap)[2] == 0  # 3 alias nodes in the config
    assert legacy_plugin("apiVersion: omerender.io/v1alpha1\nkind: OMERender\nmetadata: {name: r}\n",
                         configmap + "extra: [*x]\n")[2] == 0  # 3 in the resources
    assert legacy_plugin(config, configmap + "extra: [*x]\n") == (
        "", ["error: YAML from kustomize: aliases expand to more than 5 nodes (a YAML alias bomb?) (line 5, column 9)"], 1)


def run_legacy_plugin(monkeypatch, capsys, config: str, stdin) -> tuple[int, str, str]:
    from omerender.gitops.legacy import plugin_main
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(stdin))
    code = plugin_main(["kustomize-plugin", config])
    out, err = capsys.readouterr()
    return code, out, err


def test_legacy_plugin_stdin_is_refused_while_reading(monkeypatch, capsys, tmp_path):
    config = write(tmp_path / "config.yaml", "apiVersion: omerender.io/v1alpha1\nkind: OMERender\nmetadata: {name: r}\n")
    monkeypatch.setattr(limits, "MAX_TOTAL_BYTES", 1000)
    assert run_legacy_plugin(monkeypatch, capsys, str(config), endless_stdin()) == (
        1, "", "error: <stdin>: larger than 0 MiB; render fewer objects in one kustomization\n")


def test_legacy_plugin_config_is_read_like_any_input(monkeypatch, capsys):
    assert run_legacy_plugin(monkeypatch, capsys, "/dev/zero", io.BytesIO(b"")) == (
        1, "", "error: /dev/zero: not a regular file; omerender reads only files, directories and -\n")
