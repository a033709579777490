"""Messages name ``file:line:column`` (issue 25): the line of the field a message is about, of its nearest parent
the object has when the field is absent, else of the object; 1-based, as editors, kubectl and CI annotators
read them. Only where the line is the user's: stdin and git revisions have them, kustomize's output and a
KRM ResourceList do not (a KRM result says which document of its file, ``file.index``)."""
from __future__ import annotations

import shutil

import pytest

import yaml

from conftest import CHART_DEFAULTS_INFO, FIXTURES, run_cli
from omerender.gitops import krm
from test_overlays import git, write

MODEL = """\
apiVersion: ome.io/v1beta1
kind: ClusterBaseModel
metadata:
  name: m
spec:
  modelFormat: {name: safetensors}
  storage: {storageUri: "hf://org/m"}
"""

TYPO = """\
# two InferenceServices; the second has a typo
apiVersion: ome.io/v1beta1
kind: InferenceService
metadata:
  name: fine
spec:
  model: {name: m}
---
apiVersion: ome.io/v1beta1
kind: InferenceService
metadata:
  name: typo
spec:
  model:
    name: m
  engine:
    maxReplica: 3
"""


def test_an_unknown_field_is_named_at_its_line_and_column(tmp_path):
    (tmp_path / "isvcs.yaml").write_text(TYPO)
    run = run_cli("render", str(tmp_path / "isvcs.yaml"))
    assert run.code == 1
    assert run.placed_lines == [f'error: {tmp_path / "isvcs.yaml"}:17:5: InferenceService default/typo: '
                                'spec.engine.maxReplica: unknown field "maxReplica"; did you mean "maxReplicas"?']


def test_stdin_has_lines_too():
    run = run_cli("render", "-", input=TYPO)
    assert run.placed_lines[0].startswith("error: <stdin>:17:5: InferenceService default/typo: spec.engine.")


def test_a_field_after_non_ascii_text_and_an_absent_field_under_a_list_item():
    typo = TYPO.replace("    maxReplica: 3", '    runner: {name: ok, image: "é✓ü", imag: x}')
    column = typo.splitlines()[16].index("imag:") + 1  # characters, not bytes
    assert run_cli("render", "-", input=typo).placed_lines[0].startswith(
        f"error: <stdin>:17:{column}: InferenceService default/typo: spec.engine.runner.imag: unknown field")
    absent = TYPO.replace("    maxReplica: 3", "    runner:\n      env:\n        - name: A\n          value: x\n"
                                                "        - value: B")
    (line,) = run_cli("render", "-", input=absent).placed_lines
    assert line == "error: <stdin>:21:11: InferenceService default/typo: spec.engine.runner.env[1].name: Required value"


def test_a_missing_field_points_at_its_nearest_parent():
    text = TYPO.split("---\n")[1].replace("  model:\n    name: m\n", "").replace("maxReplica:", "maxReplicas:")
    run = run_cli("render", "-", input=text)
    assert run.placed_lines == ["error: <stdin>:5:1: InferenceService default/typo: at least one of spec.model or "
                                "spec.runtime must be set"]


def test_a_missing_name_points_at_metadata_and_a_missing_kind_at_the_object():
    run = run_cli("render", "-", input="a: 1\n---\n\n# no name\napiVersion: v1\nkind: ConfigMap\nmetadata:\n"
                                     "  labels: {}\n")
    assert run.placed_lines == [
        "error: <stdin>:1:1: apiVersion: Required value: every object needs apiVersion and kind",
        "error: <stdin>:7:1: ConfigMap: metadata.name: Required value"]


def test_an_error_without_a_field_points_at_its_object():
    text = MODEL + "---\n" + MODEL.replace("kind:", "# again\nkind:")
    run = run_cli("render", "-", input=text)
    assert run.placed_lines == ["error: <stdin>:9:1: ClusterBaseModel m: duplicate ClusterBaseModel m in the "
                                "inputs (first in <stdin>)"]


def test_a_warning_names_the_line_of_its_field():
    text = MODEL + "---\n" + TYPO.split("---\n")[0].replace("ome.io/v1beta1", "ome.oracle.com/v1beta1")
    run = run_cli("render", "-", input=text)
    assert run.code == 0, run.placed
    assert run.placed_lines == [
        "warning: <stdin>:10:1: InferenceService fine: apiVersion ome.oracle.com/v1beta1 is not OME's API "
        "group, so this InferenceService is passed through unrendered; to render it, use apiVersion: ome.io/v1beta1"]


def test_an_item_of_a_list_document_and_windows_line_ends():
    listed = {"apiVersion": "v1", "kind": "List", "items": [
        yaml.safe_load(MODEL), {"apiVersion": "ome.io/v1beta1", "kind": "ClusterBaseModel",
                                "metadata": {"name": "n"}, "spec": {"modelFormat": {"name": "x"}, "storag": {}}}]}
    text = yaml.safe_dump(listed, sort_keys=False).replace("\n", "\r\n")
    run = run_cli("render", "-", input=text)
    line_of_typo = text.split("\r\n").index("    storag: {}") + 1
    assert run.placed_lines[0].startswith(f'error: <stdin>:{line_of_typo}:5: ClusterBaseModel n: spec.storag: '
                                          'unknown field "storag"'), run.placed


def test_dotted_keys_and_bracketed_paths_are_walked_as_written():
    from omerender.yamlio.marks import walk  # here: the other tests run against any omerender
    node = yaml.compose("metadata:\n  annotations:\n    ome.io/a.b: x\nspec:\n  args: [a, b, c]\n")
    assert walk(node, "metadata.annotations.ome.io/a.b").line == 2
    assert walk(node, 'metadata.annotations["ome.io/a.b"]').line == 2
    assert (walk(node, "spec.args[2]").line, walk(node, "spec.args[2]").column) == (4, 15)
    assert walk(node, "spec.args[7].x").line == 4  # the nearest parent present: args
    assert walk(node, "status.x") is None


def test_messages_of_the_environment_name_no_position(tmp_path):
    run = run_cli("render", str(tmp_path / "missing.yaml"))
    assert run.placed_lines == [f"error: no such file or directory: {tmp_path / 'missing.yaml'}"]


def test_a_krm_result_names_the_document_index_and_no_line():
    item = yaml.safe_load(TYPO.split("---\n")[1])
    item["metadata"]["annotations"] = {"config.kubernetes.io/path": "apps/isvcs.yaml",
                                       "config.kubernetes.io/index": "1"}
    out, code = krm.run(yaml.safe_dump({"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList",
                                        "items": [yaml.safe_load(MODEL), item]}))
    assert code == 1
    (result,) = out["results"]
    assert result["file"] == {"path": "apps/isvcs.yaml", "index": 1}
    assert result["field"] == {"path": "spec.engine.maxReplica"}
    assert result["message"].startswith("InferenceService default/typo: spec.engine.maxReplica: unknown field")


def test_an_overlays_objects_have_the_lines_of_their_base_file(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    shutil.copytree(FIXTURES / "kustomize" / "base", root / "base")
    isvc = root / "base" / "isvc.yaml"
    isvc.write_text(isvc.read_text().replace("maxReplicas: 2", "maxReplica: 2"))
    write(root / "prod" / "kustomization.yaml", "resources: [../base]\nnamespace: prod\n")
    monkeypatch.chdir(root)
    run = run_cli("render", "prod")
    assert run.code == 1
    (line,) = run.placed_lines
    # kustomize's origin annotation names the file; omerender finds the object and its field in it
    assert line.startswith("error: base/isvc.yaml:13:5: InferenceService prod/llama-3-2-3b-instruct: "
                           "spec.engine.maxReplica: unknown field"), line


def test_a_git_revision_in_diff_has_the_lines_of_its_file(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    write(root / "deploy" / "model.yaml", MODEL)
    write(root / "deploy" / "isvcs.yaml", TYPO)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "commit", "-qm", "typo")
    write(root / "deploy" / "isvcs.yaml", "# fixed\n\n" + TYPO.replace("maxReplica:", "maxReplicas:"))
    git(root, "commit", "-qam", "fixed")
    monkeypatch.chdir(root)
    run = run_cli("diff", "HEAD~1", "HEAD")
    assert run.code == 2
    lines = run.placed_lines
    assert 'error: base: deploy/isvcs.yaml:17:5: InferenceService default/typo: spec.engine.maxReplica: unknown ' \
        'field "maxReplica"; did you mean "maxReplicas"?' in lines, run.placed
    # head's text starts with two more lines: its objects are named at their lines in head's blob
    assert [line.split(": InferenceService")[0] for line in lines if line.startswith("error: head:")] == \
        ["error: head: deploy/isvcs.yaml:4:1", "error: head: deploy/isvcs.yaml:11:1"], run.placed
    assert "omerender-diff-" not in run.placed


def test_warnings_about_removed_fields_point_at_them(F):
    F["isvc"]["spec"]["engine"]["scaleMetric"] = "cpu"
    F["isvc"]["spec"]["kedaConfig"] = {"enableKeda": True}
    text = yaml.safe_dump_all(list(F.values()), sort_keys=False)
    lines = text.splitlines()
    first = next(i for i, line in enumerate(lines) if line == "kind: InferenceService") + 1
    keda = lines.index("  kedaConfig:", first) + 1
    metric = lines.index("    scaleMetric: cpu", first) + 1
    run = run_cli("render", "-", input=text)
    assert run.code == 0, run.placed
    isvc = "InferenceService llama-demo/llama-3-2-3b-instruct"
    assert run.placed_lines == [
        CHART_DEFAULTS_INFO, f"warning: <stdin>:{keda}:3: {isvc}: spec.kedaConfig was removed in OME v1.3 and is ignored",
        f"warning: <stdin>:{metric}:5: {isvc}: spec.engine.scaleMetric was removed in OME v1.3 and is ignored"]


def test_an_error_about_one_object_located_at_anothers_file_has_no_position():
    """A raiser that names another object but no file gets the file of the object being rendered: the line of
    its own object would be a line of another file."""
    from omerender.errors import OmeError
    from omerender.ome.load import index
    from omerender.yamlio.reading import parse_text
    inputs = index(parse_text(MODEL, "model.yaml") + parse_text(TYPO.split("---\n")[0], "isvc.yaml", start=1))
    model, isvc = inputs.cluster_models["m"], inputs.isvcs[0]
    assert model.error("x", "spec.storage").message().line() == "error: model.yaml:7:3: ClusterBaseModel m: x"
    assert OmeError("x", model.ref).located(isvc.ref, isvc.file).message().line() == \
        "error: isvc.yaml: ClusterBaseModel m: x"


def test_a_document_too_large_to_compose_again_names_its_objects_line(monkeypatch):
    from omerender.yamlio import marks
    monkeypatch.setattr(marks, "MAX_COMPOSED_CHARS", 100)
    run = run_cli("render", "-", input=TYPO)
    assert run.placed_lines[0].startswith("error: <stdin>:9:1: InferenceService default/typo: spec.engine.maxReplica")


RUNTIME = """\
apiVersion: ome.io/v1beta1
kind: ClusterServingRuntime
metadata:
  name: rt
spec:
  supportedModelFormats:
  - {modelFormat: {name: safetensors}, modelFramework: {name: transformers}, autoSelect: true}
  engineConfig: {runner: {name: ome-container, image: img}}
---
"""


@pytest.mark.parametrize("severity", ["warning", "error"])
def test_messages_alternating_between_two_list_documents_compose_each_document_once(monkeypatch, severity):
    """Messages that alternate between two ``kind: List`` documents, each larger than the trees kept for the next
    message, cost one composition per document (issue 33), not one per message: warnings of a render, and the
    errors of one that fails (no runtime)."""
    from omerender.yamlio import marks
    monkeypatch.setattr(marks, "CACHED_CHARS", 1_000)
    composed = []
    compose = marks.Source._compose
    monkeypatch.setattr(marks.Source, "_compose", lambda self, root, start, end: (
        composed.append(root.line), compose(self, root, start, end))[1])

    def isvc(i: int) -> dict:
        return {"apiVersion": "ome.io/v1beta1", "kind": "InferenceService",
                "metadata": {"name": f"s-{i:03d}", "annotations": {"ome.io/ingress-domian": "a.io"}},
                "spec": {"model": {"name": "m"}, "engine": {"minReplicas": 1}}}
    lists = [{"apiVersion": "v1", "kind": "List", "items": [isvc(i) for i in range(first, 60, 2)]}
             for first in (0, 1)]
    model = MODEL.replace("spec:\n", "spec:\n  modelFramework: {name: transformers}\n")
    text = (RUNTIME if severity == "warning" else "") + model + "---\n" + yaml.safe_dump_all(lists, sort_keys=False)
    run = run_cli("render", "-", input=text)
    assert run.code == (0 if severity == "warning" else 1), run.placed
    lines = [line for line in run.placed_lines if line.startswith(f"{severity}: <stdin>:") and "auto-sel" not in line]
    assert len(lines) == 60
    assert [line.split(": ")[2] for line in lines[:2]] == ["InferenceService default/s-000",
                                                           "InferenceService default/s-001"]
    first, second = (int(line.split(":")[2]) for line in lines[:2])
    assert first < 100 < second  # the lines are those of two documents, alternating
    assert len(composed) == 2 and len(set(composed)) == 2, composed


# ---------------------------------------------------------------- documents placed from their lines

PLAIN_TRIPS = [
    "a: 1\nb:\n  c: x\n  c: y\nb:\n  d: 2\n",                 # a repeated key: the first is placed, as composed
    "a:\n  # a comment\n\n  b: x:y\n  c: 'q: #x'\n  d: \"e\"\nf: a -b @c\n---\ng: 1\n",
    "a:\n    b: 1\n    c:\n      d: 1\ne: ~\n",
    "a: 1\n...\n",                                           # not the plainest style: composed
    "a: [1]\nb: {c: d}\n",
    "a: &x 1\nb: *x\n",
    "a: |\n  b: 1\n",
    "a: x\n  continued\n",
    "a:\n- b: 1\n",
    "a: 1 # comment\n",
    "a: 1\r\nb: 2\r\n",
    "'a': 1\nb: 2\n",
    "a:\n\tb: 1\n",
    "x.y: 1\nx:\n  y: 2\n",
]


def _key_paths(node, prefix: str = ""):
    """Every key path of a composed document, with a missing tail and a bracketed step after each."""
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                path = f"{prefix}.{key.value}" if prefix else key.value
                yield from (path, f"{path}.missing", f"{path}[0]", f"[{path}]")
                yield from _key_paths(value, path)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            yield from _key_paths(item, f"{prefix}[{i}]")


def _plain_and_composed(text: str) -> tuple[int, int]:
    """(documents of ``text``, those read from their lines); every field of those is placed as composing does."""
    from omerender.yamlio import marks
    loader = marks._Composer(text)
    roots = []
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is not None:
                roots.append(node.start_mark)
    except yaml.YAMLError:
        return 0, 0
    finally:
        loader.dispose()
    source, plain = marks.Source(text, roots), 0
    for index, root in enumerate(roots):
        keys = source._plain(index)
        if keys is None:
            continue
        plain += 1
        composed = source.document(index)
        fields = [None, "missing", "[0]", *(_key_paths(composed[0]) if composed else [])]
        assert [marks._locate(root, keys, None, f) for f in fields] == \
            [marks._locate(root, composed, None, f) for f in fields], (text, index)
    return len(roots), plain


def test_a_document_in_the_plainest_block_style_is_placed_from_its_lines_as_composing_it_places_it():
    """Messages about a document of keys and one-line scalars alone (an InferenceService, most often) place their
    fields from its lines, without composing it (marks._plain_keys): on every document of the tests' and fixtures'
    YAML files, and on some written to trip it, each key path is placed where the composed document places it."""
    root = FIXTURES.parent
    texts = [p.read_text(errors="replace") for folder in ("tests", "fixtures") for p in (root / folder).rglob("*.y*ml")]
    counts = [_plain_and_composed(text) for text in texts + PLAIN_TRIPS]
    assert sum(plain for _, plain in counts) >= 150   # read from their lines, so compared
    assert [plain for _, plain in counts[-len(PLAIN_TRIPS):]] == [1, 2, 1] + [0] * 10 + [1]
