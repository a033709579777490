"""OME parity found by differential reading of OME's reconcilers (components/base.go, utils): decryption
annotations from the base model, model-empty-dir for the fine-tuned adapter, merged fine-tuned weights
without the base model's mount, through the CLI."""
from conftest import container, env_pairs, render_objects, validate_k8s

ENGINE = "llama-3-2-3b-instruct-engine"
KEY, SECRET = "ome.io/base-model-decryption-key-name", "ome.io/base-model-decryption-secret-name"
MODEL_VOLUME = "llama-3-2-3b-instruct"


def ok(F):
    run = render_objects(list(F.values()))
    assert run.code == 0, run.stderr
    for obj in run.objects:
        validate_k8s(obj)
    return run


def pod_of(run):
    return run.find("Deployment", ENGINE)["spec"]["template"]["spec"]


def test_decryption_annotations_are_carried_from_the_base_model(F):
    F["model"]["metadata"]["annotations"] = {KEY: "vault-key", SECRET: "vault-secret", "unrelated": "x"}
    run = ok(F)
    deployment = run.find("Deployment", ENGINE)
    for annotations in (deployment["metadata"]["annotations"],
                        deployment["spec"]["template"]["metadata"]["annotations"],
                        run.find("Service", ENGINE)["metadata"]["annotations"],
                        run.find("Deployment", "llama-3-2-3b-instruct-router")["metadata"]["annotations"]):
        assert (annotations[KEY], annotations[SECRET]) == ("vault-key", "vault-secret")
        assert "unrelated" not in annotations


def test_the_base_models_decryption_key_wins_over_the_inference_services(F):
    F["model"]["metadata"]["annotations"] = {KEY: "from-model"}
    F["isvc"]["metadata"]["annotations"] = {KEY: "from-isvc", SECRET: "isvc-secret"}
    annotations = ok(F).find("Deployment", ENGINE)["metadata"]["annotations"]
    assert (annotations[KEY], annotations[SECRET]) == ("from-model", "isvc-secret")


def test_without_decryption_annotations_none_are_added(F):
    annotations = ok(F).find("Deployment", ENGINE)["metadata"]["annotations"]
    assert KEY not in annotations and SECRET not in annotations


def test_fine_tuned_adapter_needs_omes_pod_webhook(F):
    """The controller would add model-empty-dir for the adapter, but only OME's pod webhook adds the container that
    fills it, which omerender does not reproduce (render.md §17.4)."""
    F["isvc"]["metadata"]["annotations"] = {"ome.io/inject-fine-tuned-adapter": "my-adapter"}
    run = render_objects(list(F.values()))
    assert (run.code, run.stdout) == (1, "")
    assert run.lines == [
        "error: <stdin>: InferenceService llama-demo/llama-3-2-3b-instruct: engine pod: "
        "ome.io/inject-fine-tuned-adapter: \"my-adapter\" asks OME's pod webhook for the fine-tuned-adapter init "
        "container (the adapter from OCI Object Storage); omerender cannot add it; apply this InferenceService on a "
        "cluster that runs OME's controller manager (its pod webhook), or remove the annotation"]


def test_an_empty_adapter_name_adds_nothing(F):
    F["isvc"]["metadata"]["annotations"] = {"ome.io/inject-fine-tuned-adapter": ""}
    assert "model-empty-dir" not in [v["name"] for v in pod_of(ok(F))["volumes"]]


def test_merged_fine_tuned_weights_drop_model_path_and_the_model_mount(F):
    F["isvc"]["spec"]["engine"]["annotations"] = {"ome.io/fine-tuned-serving-with-merged-weights": "true"}
    run = ok(F)
    deployment = run.find("Deployment", ENGINE)
    runner = container(deployment)
    assert "MODEL_PATH" not in dict(env_pairs(runner))
    assert [m["name"] for m in runner["volumeMounts"]] == ["dshm"]
    pod = deployment["spec"]["template"]["spec"]
    # as in OME: the hostPath volume and the model-ready selector stay, no model-empty-dir
    assert [v["name"] for v in pod["volumes"]] == ["dshm", MODEL_VOLUME]
    assert pod["nodeSelector"] == {"models.ome.io/clusterbasemodel.llama-3-2-3b-instruct": "Ready"}
    assert any("$(MODEL_PATH) is referenced but MODEL_PATH is not set" in line for line in run.lines)


def test_merged_weights_only_when_exactly_true(F):
    F["isvc"]["spec"]["engine"]["annotations"] = {"ome.io/fine-tuned-serving-with-merged-weights": "True"}
    runner = container(ok(F).find("Deployment", ENGINE))
    assert dict(env_pairs(runner))["MODEL_PATH"] == "/raid/models/meta/llama-3-2-3b-instruct"
