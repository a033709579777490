"""``omerender tree RUNTIME [PATH]...``: the runtimes that inherit from a runtime and the
InferenceServices built on them."""
import importlib.util
import json
from pathlib import Path

from click.testing import CliRunner

from omerender.cli.tree import tree

_spec = importlib.util.spec_from_file_location("inherit_fixtures", Path(__file__).with_name("test_inherit.py"))
fx = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fx)


def isvc(name, runtime, namespace="llama-demo", **runtime_fields):
    return fx.obj("InferenceService", name, namespace, spec={"runtime": dict({"name": runtime}, **runtime_fields),
                                                             "engine": {"minReplicas": 1}})


def auto_isvc(name):
    return fx.obj("InferenceService", name, "llama-demo", spec={"model": {"name": "m"}, "engine": {}})


def invoke(tmp_path, args, *texts):
    (tmp_path / "in.yaml").write_text("---\n".join(texts))
    return CliRunner().invoke(tree, args + [str(tmp_path)])


def family():
    return [fx.PROFILE, fx.CHILD, fx.csr("vllm-base"), fx.csr("mid", parent="sglang-profile"),
            fx.sr("leaf", parent="mid", namespace="team-b"),
            isvc("llama-3-2-3b-instruct", "sglang-llama-3-2-3b"),
            isvc("pinned", "sglang-llama-3-2-3b", kind="ServingRuntime", autoSync=False),
            isvc("direct", "sglang-profile", namespace="team-a"),
            isvc("on-leaf", "leaf", namespace="team-b"),
            isvc("other", "vllm-base"), auto_isvc("auto")]


def test_tree_of_a_profile_lists_descendants_and_isvcs(tmp_path):
    result = invoke(tmp_path, ["sglang-profile"], *family())
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        "ClusterServingRuntime/sglang-profile [selected]\n"
        "|-- InferenceService/team-a/direct\n"
        "|-- ClusterServingRuntime/mid\n"
        "|   `-- ServingRuntime/team-b/leaf\n"
        "|       `-- InferenceService/team-b/on-leaf\n"
        "`-- ServingRuntime/llama-demo/sglang-llama-3-2-3b\n"
        "    |-- InferenceService/llama-demo/llama-3-2-3b-instruct\n"
        "    `-- InferenceService/llama-demo/pinned (autoSync: false)\n")


def test_tree_of_a_child_shows_its_chain_root_first(tmp_path):
    result = invoke(tmp_path, ["ServingRuntime/team-b/leaf"], *family())
    assert result.exit_code == 0, result.output
    assert result.stdout == ("ClusterServingRuntime/sglang-profile\n"
                             "`-- ClusterServingRuntime/mid\n"
                             "    `-- ServingRuntime/team-b/leaf [selected]\n"
                             "        `-- InferenceService/team-b/on-leaf\n")


def test_tree_json(tmp_path):
    result = invoke(tmp_path, ["mid", "-o", "json"], *family())
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {
        "target": "ClusterServingRuntime/mid",
        "chain": ["ClusterServingRuntime/sglang-profile", "ClusterServingRuntime/mid"],
        "tree": {"runtime": "ClusterServingRuntime/mid", "inferenceServices": [], "autoSelected": [],
                 "children": [{"runtime": "ServingRuntime/team-b/leaf",
                               "inferenceServices": [{"namespace": "team-b", "name": "on-leaf", "autoSync": True}],
                               "autoSelected": [], "children": []}]}}


def test_isvcs_are_attributed_by_their_runtime_lookup(tmp_path):
    texts = [fx.csr("x"), fx.sr("x"), isvc("default-kind", "x"), isvc("sr-kind", "x", kind="ServingRuntime")]
    result = invoke(tmp_path, ["ClusterServingRuntime/x"], *texts)
    assert result.stdout == "ClusterServingRuntime/x [selected]\n`-- InferenceService/llama-demo/default-kind\n"
    result = invoke(tmp_path, ["ServingRuntime/llama-demo/x"], *texts)
    assert result.stdout == "ServingRuntime/llama-demo/x [selected]\n`-- InferenceService/llama-demo/sr-kind\n"


def test_tree_includes_runtimes_whose_chain_breaks_above_the_target(tmp_path):
    texts = [fx.csr("base"), fx.csr("a", parent="base"), fx.csr("b", parent="a"),
             fx.csr("c", parent="b", annotations={}), fx.csr("loop1", parent="loop2"), fx.csr("loop2", parent="loop1")]
    result = invoke(tmp_path, ["a"], *texts)
    assert result.stdout == ("ClusterServingRuntime/base\n`-- ClusterServingRuntime/a [selected]\n"
                             "    `-- ClusterServingRuntime/b\n        `-- ClusterServingRuntime/c\n")


def test_tree_errors(tmp_path):
    result = invoke(tmp_path, ["nope"], fx.PROFILE)
    assert result.exit_code == 1 and result.stderr == 'error: runtime "nope" not found in the input\n'
    result = invoke(tmp_path, ["x"], fx.sr("x", namespace="a"), fx.sr("x", namespace="b"))
    assert result.exit_code == 1
    assert result.stderr == ('error: runtime "x" is ambiguous: ServingRuntime/a/x, ServingRuntime/b/x; name it as '
                             "ServingRuntime/<namespace>/<name>\n")
    result = invoke(tmp_path, ["a/b"], fx.PROFILE)
    assert result.exit_code == 1
    assert result.stderr == ('error: "a/b" is not a runtime: use <name>, ClusterServingRuntime/<name> or '
                             "ServingRuntime/<namespace>/<name>\n")


QUICKSTART = Path(__file__).resolve().parents[1] / "fixtures" / "quickstart"
AUTO = "InferenceService/llama-demo/llama-3-2-3b-instruct (auto-selected: {why}; moves if an edit changes that)"


def tree_of(tmp_path, runtime, *extra, output=()):
    """``tree RUNTIME`` of the quickstart (its InferenceService auto-selects sglang-llama-3-2-3b) plus ``extra``."""
    texts = [(QUICKSTART / name).read_text() for name in ("namespace.yaml", "model.yaml", "runtime.yaml", "isvc.yaml")]
    return invoke(tmp_path, [runtime, *output], *texts, *extra)


def rival(name, priority, parent=None):
    """A copy of the quickstart's runtime under another name and priority (optionally a child of ``parent``)."""
    text = (QUICKSTART / "runtime.yaml").read_text().replace("name: sglang-llama-3-2-3b", f"name: {name}")
    text = text.replace("priority: 1", f"priority: {priority}")
    if parent:
        text = text.replace(f"  name: {name}\n", f"  name: {name}\n  annotations:\n    ome.io/inherit-from: {parent}\n")
    return text


def test_tree_shows_the_inference_services_that_auto_select_the_runtime(tmp_path):
    result = tree_of(tmp_path, "sglang-llama-3-2-3b")
    assert result.exit_code == 0, result.output
    assert result.stdout == ("ServingRuntime/llama-demo/sglang-llama-3-2-3b [selected]\n"
                             "`-- " + AUTO.format(why="only compatible runtime") + "\n")


def test_an_auto_selected_service_is_under_the_winner_only_with_the_deciding_rule(tmp_path):
    winner = tree_of(tmp_path, "sglang-b", rival("sglang-b", 5))
    assert winner.stdout == ("ServingRuntime/llama-demo/sglang-b [selected]\n`-- " + AUTO.format(
        why="higher score: 10 over 2 of sglang-llama-3-2-3b (Namespaced)") + "\n")
    loser = tree_of(tmp_path, "sglang-llama-3-2-3b", rival("sglang-b", 5))
    assert loser.stdout == "ServingRuntime/llama-demo/sglang-llama-3-2-3b [selected]\n"


def test_an_edit_of_a_parent_never_reaches_what_auto_selects_its_child(tmp_path):
    child = rival("sglang-child", 5, parent="sglang-llama-3-2-3b")
    parent = tree_of(tmp_path, "sglang-llama-3-2-3b", child)
    assert parent.stdout == ("ServingRuntime/llama-demo/sglang-llama-3-2-3b [selected]\n"
                             "`-- ServingRuntime/llama-demo/sglang-child\n")
    assert tree_of(tmp_path, "sglang-child", child).stdout.endswith("`-- " + AUTO.format(
        why="higher score: 10 over 2 of sglang-llama-3-2-3b (Namespaced)") + "\n")


def test_tree_json_lists_auto_selected_services_apart(tmp_path):
    result = tree_of(tmp_path, "sglang-llama-3-2-3b", output=("-o", "json"))
    assert json.loads(result.stdout)["tree"] == {
        "runtime": "ServingRuntime/llama-demo/sglang-llama-3-2-3b", "inferenceServices": [],
        "autoSelected": [{"namespace": "llama-demo", "name": "llama-3-2-3b-instruct", "why": "only compatible runtime"}],
        "children": []}


def test_a_service_whose_auto_selection_fails_is_left_out(tmp_path):
    broken = rival("sglang-llama-3-2-3b", 1).replace("autoSelect: true", "autoSelect: false")
    texts = [(QUICKSTART / name).read_text() for name in ("namespace.yaml", "model.yaml", "isvc.yaml")]
    result = invoke(tmp_path, ["sglang-llama-3-2-3b"], *texts, broken)
    assert (result.exit_code, result.stdout) == (0, "ServingRuntime/llama-demo/sglang-llama-3-2-3b [selected]\n")
