"""``omerender tree RUNTIME [PATH]...``: the runtimes that inherit from a runtime and the
InferenceServices built on them."""
import importlib.util
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from omerender.cli.app import cli  # through the group, as users call it: a command invoked alone caches click's bare --help


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
    return CliRunner().invoke(cli, ['tree', *args, str(tmp_path)])


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


FORMS = ("<name>, or KIND/<name> for ClusterServingRuntime, AcceleratorClass or ClusterBaseModel, or "
         "KIND/<namespace>/<name> for ServingRuntime, BaseModel or AutoscalerPolicy")


def test_tree_errors(tmp_path):
    result = invoke(tmp_path, ["nope"], fx.PROFILE)
    assert result.exit_code == 1 and result.stderr == (
        'error: "nope" not found in the input: no runtime, AcceleratorClass, model or AutoscalerPolicy has that '
        "name\n")
    result = invoke(tmp_path, ["x"], fx.sr("x", namespace="a"), fx.sr("x", namespace="b"))
    assert result.exit_code == 1
    assert result.stderr == ('error: "x" is ambiguous: ServingRuntime/a/x, ServingRuntime/b/x; name it as '
                             "KIND/<name> or KIND/<namespace>/<name>\n")
    result = invoke(tmp_path, ["a/b"], fx.PROFILE)
    assert result.exit_code == 1
    assert result.stderr == f'error: "a/b" names no input tree can show: use {FORMS}\n'


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


# ---------------------------------------------------------------- an AcceleratorClass, a model, an AutoscalerPolicy

SEVENTY = Path(__file__).resolve().parents[1] / "fixtures" / "accelerators-70b"


def seventy(tmp_path, target, *extra, output=()):
    texts = [(SEVENTY / name).read_text() for name in ("classes.yaml", "model.yaml", "runtime-70b.yaml",
                                                       "isvc-70b.yaml")]
    return invoke(tmp_path, [target, *output], *texts, *extra)


def second_service(name, policy=None, cls=None):
    selector = {"policy": policy} if policy else {"acceleratorClass": cls}
    return fx.obj("InferenceService", name, "llama-demo",
                  spec={"model": {"name": "llama-3-3-70b-instruct"}, "runtime": {"name": "sglang-llama-3-3-70b"},
                        "acceleratorSelector": selector, "engine": {"minReplicas": 1}})


def test_tree_of_an_accelerator_class_lists_the_runtimes_and_services_it_reaches(tmp_path):
    result = seventy(tmp_path, "nvidia-l40s", second_service("on-h100", cls="nvidia-h100"),
                     second_service("cheapest", policy="Cheapest"))
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        "AcceleratorClass/nvidia-l40s [selected]\n"
        "`-- ClusterServingRuntime/sglang-llama-3-3-70b (lists it in acceleratorRequirements.acceleratorClasses)\n"
        "    |-- InferenceService/llama-demo/cheapest (engine gets it from policy Cheapest in "
        "spec.acceleratorSelector.policy)\n"
        "    `-- InferenceService/llama-demo/llama-3-3-70b-instruct (engine gets it from "
        "spec.acceleratorSelector.acceleratorClass)\n")
    h100 = seventy(tmp_path, "AcceleratorClass/nvidia-h100", second_service("on-h100", cls="nvidia-h100"),
                   second_service("cheapest", policy="Cheapest"), output=("-o", "json"))
    assert json.loads(h100.stdout) == {
        "target": "AcceleratorClass/nvidia-h100",
        "runtimes": [{"runtime": "ClusterServingRuntime/sglang-llama-3-3-70b",
                      "why": "lists it in acceleratorRequirements.acceleratorClasses",
                      "inferenceServices": [
                          {"namespace": "llama-demo", "name": "cheapest",
                           "how": "engine: its policy picks nvidia-l40s from a pool that holds it"},
                          {"namespace": "llama-demo", "name": "on-h100",
                           "how": "engine gets it from spec.acceleratorSelector.acceleratorClass"}]}]}


def test_tree_of_a_model_lists_the_runtimes_and_services_it_reaches(tmp_path):
    result = seventy(tmp_path, "ClusterBaseModel/llama-3-3-70b-instruct")
    assert result.exit_code == 0, result.output
    assert result.stdout == ("ClusterBaseModel/llama-3-3-70b-instruct [selected]\n"
                             "`-- ClusterServingRuntime/sglang-llama-3-3-70b\n"
                             "    `-- InferenceService/llama-demo/llama-3-3-70b-instruct (spec.model)\n")
    auto = tree_of(tmp_path, "llama-3-2-3b-instruct")
    assert auto.stdout == ("ClusterBaseModel/llama-3-2-3b-instruct [selected]\n"
                           "`-- ServingRuntime/llama-demo/sglang-llama-3-2-3b\n"
                           "    `-- InferenceService/llama-demo/llama-3-2-3b-instruct (spec.model: auto-selected this "
                           "runtime, an edit may move it)\n")


def test_tree_of_an_autoscaler_policy(tmp_path):
    policy = fx.obj("AutoscalerPolicy", "steady", "llama-demo", spec={"class": "HPA", "hpa": {}})
    service = second_service("scaled", cls="nvidia-h100").replace(
        "minReplicas: 1", "minReplicas: 1\n    autoscalerPolicyRef: {name: steady}")
    result = seventy(tmp_path, "AutoscalerPolicy/llama-demo/steady", policy, service)
    assert result.exit_code == 0, result.output
    assert result.stdout == ("AutoscalerPolicy/llama-demo/steady [selected]\n"
                             "`-- ClusterServingRuntime/sglang-llama-3-3-70b\n"
                             "    `-- InferenceService/llama-demo/scaled (engine autoscalerPolicyRef)\n")


def test_a_name_of_two_kinds_is_ambiguous_and_kind_slash_name_settles_it(tmp_path):
    same = fx.csr("nvidia-l40s")
    result = seventy(tmp_path, "nvidia-l40s", same)
    assert result.exit_code == 1
    assert result.stderr == ('error: "nvidia-l40s" is ambiguous: AcceleratorClass/nvidia-l40s, '
                             "ClusterServingRuntime/nvidia-l40s; name it as KIND/<name> or KIND/<namespace>/<name>\n")
    assert seventy(tmp_path, "AcceleratorClass/nvidia-l40s", same).stdout.startswith(
        "AcceleratorClass/nvidia-l40s [selected]\n")
    assert seventy(tmp_path, "ClusterServingRuntime/nvidia-l40s", same).stdout == (
        "ClusterServingRuntime/nvidia-l40s [selected]\n")


@pytest.mark.parametrize("argument,message", [
    ("AcceleratorClass/", f'error: "AcceleratorClass/" names no input tree can show: use {FORMS}'),
    ("BaseModel/llama-3-3-70b-instruct", f'error: "BaseModel/llama-3-3-70b-instruct" names no input tree can show: '
                                         f"use {FORMS}"),
    ("AcceleratorClass/a/b", f'error: "AcceleratorClass/a/b" names no input tree can show: use {FORMS}'),
    ("Secret/x", f'error: "Secret/x" names no input tree can show: use {FORMS}'),
    ("../../etc/passwd", f'error: "../../etc/passwd" names no input tree can show: use {FORMS}'),
    ("ClusterBaseModel/nope", "error: ClusterBaseModel/nope not found in the input"),
    ("BaseModel/llama-demo/llama-3-3-70b-instruct",
     "error: BaseModel/llama-demo/llama-3-3-70b-instruct not found in the input"),
    ("ClusterBaseModel/llama-3-3-70b-instruc",
     'error: ClusterBaseModel/llama-3-3-70b-instruc not found in the input; did you mean "llama-3-3-70b-instruct"?'),
    ("nvidia-l40\n::error::forged", 'error: "nvidia-l40\\n::error::forged" not found in the input: no runtime, '
                                    "AcceleratorClass, model or AutoscalerPolicy has that name"),
    ("x" * 100_000, f'error: "{"x" * 200}... (100,000 characters)" not found in the input: no runtime, '
                    "AcceleratorClass, model or AutoscalerPolicy has that name"),
])
def test_hostile_tree_arguments_are_refused_in_one_line(tmp_path, argument, message):
    result = seventy(tmp_path, argument)
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == message + "\n"
