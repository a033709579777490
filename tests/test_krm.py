"""``omerender fn``: the same render through a KRM ResourceList (issue 2)."""
import subprocess
import sys

import yaml

from conftest import ROOT, load_yaml, run_cli, worked_example

KUSTOMIZE_ANNOTATIONS = {"config.kubernetes.io/index": "0", "internal.config.kubernetes.io/index": "0",
                         "internal.config.kubernetes.io/path": "base/configmap.yaml",
                         "config.kubernetes.io/path": "base/configmap.yaml"}


def resource_list(items, config=None):
    rl = {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items}
    if config is not None:
        rl["functionConfig"] = config
    return yaml.safe_dump(rl, sort_keys=False)


def fn(text):
    run = run_cli("fn", input=text)
    return run.code, yaml.safe_load(run.stdout), run.stderr


def with_paths(objs):
    for i, obj in enumerate(objs):
        obj["metadata"].setdefault("annotations", {})["internal.config.kubernetes.io/path"] = f"inputs/{i}.yaml"
    return objs


def config(**spec):
    return {"apiVersion": "omerender.io/v1alpha1", "kind": "OMERender", "metadata": {"name": "render"},
            "spec": spec}


def strip_path(obj):
    annotations = obj["metadata"].get("annotations", {})
    for key in list(annotations):
        if key.startswith(("internal.config.kubernetes.io/", "config.kubernetes.io/")):
            del annotations[key]
    if not annotations:
        obj["metadata"].pop("annotations", None)
    return obj


def test_fn_renders_the_worked_example_like_the_cli():
    code, out, _ = fn(resource_list(with_paths(list(worked_example().values()))))
    assert code == 0
    assert [(r["severity"], r["tags"]["code"]) for r in out["results"]] == [("info", "chart-defaults")]
    expected = load_yaml(ROOT / "tests" / "data" / "worked-example.expected.yaml")
    assert [strip_path(o) for o in out["items"]] == expected


def test_rendered_items_get_a_path_of_their_own_and_passthrough_keeps_its_annotations():
    configmap = {"apiVersion": "v1", "kind": "ConfigMap",
                 "metadata": {"name": "c", "annotations": dict(KUSTOMIZE_ANNOTATIONS)}}
    code, out, _ = fn(resource_list(list(worked_example().values()) + [configmap]))
    assert code == 0
    assert out["items"][1] == configmap  # after the model, kept for OME's model agent (D3)
    engine = out["items"][2]
    assert engine["metadata"]["annotations"]["internal.config.kubernetes.io/path"] == \
        "omerender/llama-demo/deployment_llama-3-2-3b-instruct-engine.yaml"


def test_fn_errors_are_results_with_resource_ref_and_file():
    objs = with_paths(list(worked_example().values()))
    objs[2]["spec"]["runtime"]["name"] = "nope"
    code, out, stderr = fn(resource_list(objs))
    assert code == 1
    assert out["items"] == []
    assert out["results"] == [{
        "message": "InferenceService llama-demo/llama-3-2-3b-instruct: runtime nope does not support model "
                   "llama-3-2-3b-instruct: runtime nope not found in namespace llama-demo or at cluster scope",
        "severity": "error",
        "resourceRef": {"apiVersion": "ome.io/v1beta1", "kind": "InferenceService",
                        "name": "llama-3-2-3b-instruct", "namespace": "llama-demo"},
        "field": {"path": "spec.runtime.name"},
        "file": {"path": "inputs/2.yaml"}}]
    assert "runtime nope not found" in stderr


def test_fn_warnings_are_results():
    objs = worked_example()
    objs["runtime"]["spec"]["containers"] = [{"name": "x"}]
    code, out, _ = fn(resource_list(list(objs.values())))
    assert code == 0
    assert [r["severity"] for r in out["results"]] == ["info", "warning"]
    assert out["results"][1]["resourceRef"]["kind"] == "ClusterServingRuntime"


def test_function_config_options():
    code, out, _ = fn(resource_list(list(worked_example().values()), config(noModelNodeSelector=True,
                                                                            keepInputs=True)))
    assert code == 0
    kinds = [o["kind"] for o in out["items"]]
    assert "InferenceService" in kinds
    engine = next(o for o in out["items"] if o["kind"] == "Deployment")
    assert "nodeSelector" not in engine["spec"]["template"]["spec"]


def test_config_map_function_config():
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"noModelNodeSelector": "true"}}
    code, out, _ = fn(resource_list(list(worked_example().values()), cm))
    assert code == 0
    engine = next(o for o in out["items"] if o["kind"] == "Deployment")
    assert "nodeSelector" not in engine["spec"]["template"]["spec"]


def test_strict_function_config_fails_on_a_warning_as_an_error_result():
    objs = worked_example()
    objs["runtime"]["spec"]["containers"] = [{"name": "x"}]
    for strict in (config(strict=True), {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
                                         "data": {"strict": "true"}}):
        code, out, stderr = fn(resource_list(list(objs.values()), strict))
        assert (code, out["items"]) == (1, [])
        assert [r["severity"] for r in out["results"]] == ["info", "warning", "error"]
        assert out["results"][2] == {"message": "1 warning, and strict: true in the functionConfig makes every "
                                                "warning fail the run", "severity": "error"}
        assert stderr.splitlines()[-1] == ("error: 1 warning, and strict: true in the functionConfig makes every "
                                           "warning fail the run")
    code, out, _ = fn(resource_list(list(worked_example().values()), config(strict=True)))
    assert (code, len(out["items"])) == (0, 12)  # 11 rendered, the model (D3)
    assert [r["tags"]["code"] for r in out["results"]] == ["chart-defaults"]  # an info fails no strict run
    code, out, _ = fn(resource_list(list(objs.values()), config(strict=False)))
    assert (code, [r["severity"] for r in out["results"]]) == (0, ["info", "warning"])


def test_unknown_function_config_field_is_an_error_result():
    code, out, _ = fn(resource_list([], config(bogus=True)))
    assert code == 1
    assert out["results"][0]["message"] == (
        "functionConfig: unknown field(s) bogus; known: allow, apiVersions, downloadDeadline, downloaderEnv, "
        "downloaderEnvFrom, downloaderImage, downloaderResources, keepInputs, kubeVersion, locked, modelWeights, "
        "noModelNodeSelector, podMonitors, quiet, strict, validate, weightsAccessMode, weightsNodeSelector, "
        "weightsStorageClass, weightsTolerations, weightsWaitResources")


def test_malformed_resource_lists():
    for text, message in [
        ("a: [", "malformed ResourceList on stdin"),
        ("apiVersion: v1\nkind: List\nitems: []\n", "stdin is not a ResourceList"),
        ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n", "ResourceList has no items field"),
        ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: 5\n", "ResourceList items must be a list"),
    ]:
        code, out, _ = fn(text)
        assert code == 1
        assert out["results"][0]["severity"] == "error"
        assert out["results"][0]["message"].startswith(message)


def test_omerender_fn_console_script_is_the_same():
    text = resource_list(list(worked_example().values()))
    script = subprocess.run([sys.executable, "-c", "from omerender.cli.fn import main; main()"], input=text,
                            capture_output=True, text=True, check=False)
    assert script.returncode == 0
    assert yaml.safe_load(script.stdout) == fn(text)[1]


def test_streamed_resource_list_is_the_same_text_as_one_dump():
    from omerender.yamlio.emit import dump, dump_resource_list
    items = list(worked_example().values()) + [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "m"},
         "data": {"script": "line one\n\n  indented\nlast\n", "folded": "a " * 50, "quoted": "'x': y",
                  "empty": "", "number": "10", "bool": "true"}},
        {"apiVersion": "v1", "kind": "Unusual", "metadata": {"name": "u"}, "spec": {"ratio": 0.5, 1: "an int key"}}]
    rl = {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items,
          "results": [{"message": "m", "severity": "info"}]}
    assert dump_resource_list(rl) == dump(rl)
    assert yaml.safe_load(dump_resource_list(rl)) == rl


def test_resource_list_is_read_item_by_item_with_the_same_result():
    from omerender.yamlio.emit import dump
    from omerender.gitops.krm import _load_by_item, load_resource_list
    items = list(worked_example().values()) + [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "m"},
         "data": {"script": "a\n\n  b\nc\n", "list-like": "- x\n- y"}}]
    rl = {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items,
          "functionConfig": {"apiVersion": "omerender.io/v1alpha1", "kind": "OMERender", "metadata": {"name": "r"}}}
    text = dump(rl)
    assert _load_by_item(text) == rl == yaml.safe_load(text)
    assert _load_by_item("apiVersion: x\nitems: [a]\n") is None  # not kustomize's layout: read whole
    aliased = "apiVersion: x\nitems:\n- &a {k: 1}\n- *a\n"
    assert load_resource_list(aliased) == {"apiVersion": "x", "items": [{"k": 1}, {"k": 1}]}
