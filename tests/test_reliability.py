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
from omerender import limits
from omerender.krm import run as krm_run

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
    from omerender.load import parse_text
    docs = parse_text("a: &x {k: [1]}\nb: *x\nc: {<<: *x}\n", "f.yaml")
    data = docs[0].data
    assert data == {"a": {"k": [1]}, "b": {"k": [1]}, "c": {"k": [1]}}
    assert data["a"] is not data["b"] and data["a"]["k"] is not data["b"]["k"] and data["a"]["k"] is not data["c"]["k"]


# ---------------------------------------------------------------- nesting

# libyaml 0.2.6 (PyYAML 6.0.4) refuses flow nesting past 1,000 levels while scanning ahead, before the events
# reach omerender's own check; either way the user reads one message, at the position where it stopped.
TOO_DEEP = "error: <stdin>: nesting deeper than 100 levels (line 1, column {})"


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
                        r"\(line 3, column (108|1007)\)", result["message"]), result["message"]


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


def test_stdin_over_the_file_limit_is_refused(monkeypatch):
    monkeypatch.setattr(limits, "MAX_FILE_BYTES", 1000)
    assert_fails(run_cli("render", "-", input="# " + "x" * 1000 + "\n"),
                 "error: <stdin>: larger than 0 MiB; split it into several files")


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


def test_file_count_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "MAX_FILES", 2)
    for i in range(3):
        write(tmp_path / f"d{i}" / "x.yaml", "")
    assert_fails(run_cli("render", str(tmp_path)),
                 f"error: {tmp_path}: more than 2 YAML files; render fewer files at a time")


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
    from omerender.load import index, read_paths
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


def test_dates_stay_strings_as_kubernetes_reads_them():
    objects = worked_example()
    objects["isvc"]["metadata"]["annotations"] = {"deployed": "2024-01-01"}
    text = yaml.safe_dump_all(list(objects.values()), sort_keys=False).replace("'2024-01-01'", "2024-01-01")
    assert "deployed: 2024-01-01\n" in text
    run = run_cli("render", "-", input=text)
    assert run.code == 0, run.stderr
    assert run.find("Deployment", "llama-3-2-3b-instruct-engine")["metadata"]["annotations"]["deployed"] == "2024-01-01"


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
    assert_fails(run_cli("render", "/dev/zero", str(missing), "-", input="a: ["),
                 "error: /dev/zero: not a regular file; omerender reads only files, directories and -",
                 f"error: no such file or directory: {missing}",
                 "error: <stdin>: malformed YAML: did not find expected node content (line 2, column 1)")


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
