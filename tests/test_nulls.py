"""A ``null`` in an OME object's spec is no value (render.md §3.2): the API server deletes it before OME reads the
object (k8s.io/apiextensions-apiserver schema/defaulting/prunenulls.go), so ``cpu: null`` renders as no cpu
quantity, never ``cpu: null`` (which the Kubernetes schema refuses) nor Go's zero quantity ``"0"``."""

from conftest import CHART_DEFAULTS_INFO, container, render_objects, validate_k8s

ISVC = "error: <stdin>: InferenceService llama-demo/llama-3-2-3b-instruct: "


def rendered(F):
    run = render_objects([F["model"], F["runtime"], F["isvc"]])
    assert (run.code, run.lines) == (0, [CHART_DEFAULTS_INFO]), run.stderr
    for obj in run.objects:
        validate_k8s(obj)
    assert " null" not in run.stdout
    return run


def resources(run, name: str) -> dict:
    return container(run.find("Deployment", name))["resources"]


def test_a_null_quantity_in_a_runtime_router_runner_is_no_limit(F):
    F["runtime"]["spec"]["routerConfig"]["runner"]["resources"] = {"limits": {"cpu": None, "memory": "2Gi"},
                                                                    "requests": {"cpu": None}}
    run = rendered(F)
    assert resources(run, "llama-3-2-3b-instruct-router") == {"limits": {"memory": "2Gi"}}


def test_a_null_quantity_in_an_isvc_engine_runner_keeps_the_runtime_value_or_none(F):
    F["runtime"]["spec"]["engineConfig"]["runner"]["resources"] = {"limits": {"cpu": 10}}
    F["isvc"]["spec"]["engine"]["runner"]["resources"] = {"requests": {"cpu": None}, "limits": {"cpu": None,
                                                                                                "memory": None}}
    run = rendered(F)
    assert resources(run, "llama-3-2-3b-instruct-engine") == {"limits": {"cpu": "10"}}


def test_a_null_quantity_over_a_runtime_request_keeps_the_request(F):
    F["isvc"]["spec"]["engine"]["runner"]["resources"] = {"requests": {"cpu": None, "memory": "40Gi"},
                                                          "limits": {"memory": "40Gi"}}
    run = rendered(F)
    assert resources(run, "llama-3-2-3b-instruct-engine") == {
        "requests": {"cpu": "10", "memory": "40Gi", "nvidia.com/gpu": "1"},
        "limits": {"cpu": "10", "memory": "40Gi", "nvidia.com/gpu": "1"}}


def test_null_quantities_in_leader_and_worker_runners(F):
    engine = F["isvc"]["spec"]["engine"]
    quantities = {"requests": {"cpu": None, "memory": "1Gi"}, "limits": {"cpu": None, "memory": "1Gi"}}
    for role in ("leader", "worker"):
        engine[role] = {"runner": {"name": "ome-container", "image": "i", "resources": quantities}}
    run = render_objects([F["model"], F["runtime"], F["isvc"]])
    assert run.code == 0, run.stderr
    assert " null" not in run.stdout
    group = run.find("LeaderWorkerSet")["spec"]["leaderWorkerTemplate"]
    for template in (group["leaderTemplate"], group["workerTemplate"]):
        assert template["spec"]["containers"][-1]["resources"] == {"requests": {"memory": "1Gi"},
                                                                   "limits": {"memory": "1Gi"}}


def test_kept_inputs_are_written_without_their_nulls_as_the_api_server_stores_them(F):
    F["isvc"]["spec"]["engine"]["runner"]["resources"] = {"limits": {"cpu": None}}
    run = render_objects([F["model"], F["runtime"], F["isvc"]], "--keep-inputs")
    assert run.code == 0, run.stderr
    assert run.find("InferenceService")["spec"]["engine"]["runner"] == {
        "env": [{"name": "SERVICE_ID", "value": "{{.Namespace}}/{{.Name}}"}], "resources": {"limits": {}}}


def test_a_misspelt_field_is_named_even_when_null(F):
    F["isvc"]["spec"]["engine"]["runner"]["resource"] = None
    run = render_objects([F["model"], F["runtime"], F["isvc"]])
    assert (run.code, run.stdout) == (1, "")
    assert run.lines == [ISVC + 'spec.engine.runner.resource: unknown field "resource"; did you mean "resources"?']


def test_a_model_configuration_keeps_its_nulls(F):
    F["model"]["spec"]["modelConfiguration"] = {"rope_scaling": None}
    run = render_objects([F["model"], F["runtime"], F["isvc"]], "--keep-inputs")
    assert run.code == 0, run.stderr
    model = run.find("ClusterBaseModel")
    assert model["spec"]["modelConfiguration"] == {"rope_scaling": None}


def test_nulls_below_fields_of_any_value_are_pruned_and_null_list_items_kept(F):
    """The shape check finds the nulls it prunes on its own pass, also below the fields it does not check
    (``storage.parameters`` takes any map); a null list item is no null of a map and is kept as written."""
    F["model"]["spec"]["storage"]["parameters"] = {"region": None, "nested": {"tier": None, "keep": "x"}}
    F["model"]["spec"]["modelCapabilities"] = ["TEXT_TO_TEXT", None]
    run = render_objects([F["model"], F["runtime"], F["isvc"]], "--keep-inputs")
    assert run.code == 0, run.stderr
    spec = run.find("ClusterBaseModel")["spec"]
    assert spec["storage"]["parameters"] == {"nested": {"keep": "x"}}
    assert spec["modelCapabilities"] == ["TEXT_TO_TEXT", None]


def test_an_object_whose_only_null_is_a_list_item_keeps_its_place_for_messages(tmp_path):
    from omerender.kube.shapes import check_spec, without_nulls
    from omerender.ome.load import index
    from omerender.yamlio.reading import read_paths
    spec = {"vendor": "x", "modelCapabilities": ["TEXT_TO_TEXT", None], "storage": {"parameters": [[None]]}}
    assert check_spec("ClusterBaseModel", spec) is False and without_nulls("ClusterBaseModel", spec) is spec
    (tmp_path / "model.yaml").write_text("apiVersion: ome.io/v1beta1\nkind: ClusterBaseModel\nmetadata:\n  name: m\n"
                                         "spec:\n  modelCapabilities: [TEXT_TO_TEXT, null]\n")
    (model,) = index(read_paths([str(tmp_path / "model.yaml")])).cluster_models.values()
    assert model.origin is not None and model.spec["modelCapabilities"] == ["TEXT_TO_TEXT", None]
