"""Prefill-decode with a router (render.md §7.2, §12.1, §12.2, §13) and the ``ome.io/engine: sglang-pd``
preset (§12.3): the catalog's ``-pd`` runtimes through the CLI, the preset as data."""
import copy

import pytest

from catalog import completed_model, models
from conftest import CATALOG, CHART_DEFAULTS_INFO, load_yaml, render_objects
from omerender.errors import OmeError
from omerender.ome.load import Obj
from omerender.ome.runtimes.presets import preset_image_warnings, preset_spec, sglang_pd_preset
from schemas import validate_all

PD_RUNTIMES = {  # file under runtimes/srt → model (api.md §9.4)
    "deepseek-rdma-pd-rt.yaml": "deepseek-v3",
    "kimi-k2-pd-rt.yaml": "kimi-k2-instruct",
    "mistral-7b-instruct-pd-rt.yaml": "mistral-7b-instruct-v0-2",
    "mixtral-8x7b-instruct-pd-rt.yaml": "mixtral-8x7b-instruct-v0-1",
    "meta/llama-3-1-70b-instruct-pd-rt.yaml": "llama-3-1-70b-instruct",
    "meta/llama-3-2-1b-instruct-pd-rt.yaml": "llama-3-2-1b-instruct",
    "meta/llama-3-2-3b-instruct-pd-rt.yaml": "llama-3-2-3b-instruct",
    "meta/llama-3-3-70b-instruct-pd-rt.yaml": "llama-3-3-70b-instruct",
    "meta/llama-4-scout-17b-16e-instruct-pd-rt.yaml": "llama-4-scout-17b-16e-instruct",
    "meta/llama-4-maverick-17b-128e-instruct-fp8-pd-rt.yaml": "llama-4-maverick-17b-128e-instruct-fp8",
    "meta/llama-4-maverick-17b-128e-instruct-fp8-pd-grpc-rt.yaml": "llama-4-maverick-17b-128e-instruct-fp8",
}
NS, NAME = "pd", "chat"
ROUTER_SA = f"{NAME}-router"


def runtime(file):
    return load_yaml(CATALOG / "runtimes" / "srt" / file)[0]


def isvc(rt, model, **components):
    spec = {"model": {"name": model}, "runtime": {"name": rt["metadata"]["name"]}, "engine": {}, "decoder": {},
            "router": {}}
    spec.update(components)
    return {"apiVersion": "ome.io/v1beta1", "kind": "InferenceService",
            "metadata": {"name": NAME, "namespace": NS}, "spec": spec}


def render_pd(file, **components):
    rt = runtime(file)
    model = PD_RUNTIMES[file]
    run = render_objects([completed_model(models()[model], rt), rt, isvc(rt, model, **components)])
    assert run.code == 0, run.stderr
    validate_all(run.objects)
    return run


def workload_templates(run, component):
    """Pod templates of a component: the Deployment's, or the LeaderWorkerSet's leader and worker."""
    found = [o for o in run.objects if o["kind"] in ("Deployment", "LeaderWorkerSet")
             and o["metadata"]["labels"]["component"] == component]
    assert len(found) == 1
    spec = found[0]["spec"]
    if found[0]["kind"] == "Deployment":
        return [spec["template"]]
    return [spec["leaderWorkerTemplate"]["leaderTemplate"], spec["leaderWorkerTemplate"]["workerTemplate"]]


def command_text(template):
    main = template["spec"]["containers"][-1]
    return " ".join(main.get("command", []) + main.get("args", []))


# ---------------------------------------------------------------- the catalog's -pd runtimes

@pytest.mark.parametrize("file", sorted(PD_RUNTIMES))
def test_catalog_pd_runtime_renders_engine_decoder_and_router(file):
    run = render_pd(file)
    for component, mode in (("engine", "prefill"), ("decoder", "decode")):
        for template in workload_templates(run, component):
            labels = template["metadata"]["labels"]
            assert (labels["component"], labels["ome.io/inferenceservice"]) == (component, NAME)
        assert f"--disaggregation-mode {mode}" in command_text(workload_templates(run, component)[0])
    (router,) = workload_templates(run, "router")
    assert router["spec"]["serviceAccountName"] == ROUTER_SA
    assert "--pd-disaggregation" in command_text(router)
    external = run.find("Service", NAME)
    router_port = run.find("Service", f"{NAME}-router")["spec"]["ports"][0]["port"]
    assert external["spec"] == {"type": "ClusterIP", "selector": {"ome.io/inferenceservice": NAME,
                                                                  "component": "router"},
                                "ports": [{"name": "http", "port": router_port, "targetPort": router_port,
                                           "protocol": "TCP"}]}


def test_pd_objects_order_and_router_rbac():
    run = render_pd("meta/llama-3-2-3b-instruct-pd-rt.yaml")
    assert run.kinds() == [
        ("ClusterBaseModel", PD_RUNTIMES["meta/llama-3-2-3b-instruct-pd-rt.yaml"]),  # for OME's model agent (D3)
        ("Deployment", "chat-engine"), ("Service", "chat-engine"), ("HorizontalPodAutoscaler", "chat-engine"),
        ("PodDisruptionBudget", "chat-engine"),
        ("Deployment", "chat-decoder"), ("Service", "chat-decoder"), ("HorizontalPodAutoscaler", "chat-decoder"),
        ("PodDisruptionBudget", "chat-decoder"),
        ("ServiceAccount", ROUTER_SA), ("Role", ROUTER_SA), ("RoleBinding", ROUTER_SA),
        ("Deployment", "chat-router"), ("Service", "chat-router"), ("HorizontalPodAutoscaler", "chat-router"),
        ("PodDisruptionBudget", "chat-router"), ("Service", "chat")]
    router_labels = run.find("Deployment", "chat-router")["metadata"]["labels"]
    rbac_labels = {k: v for k, v in router_labels.items() if k != "app"}
    assert run.find("ServiceAccount")["metadata"] == {"name": ROUTER_SA, "namespace": NS, "labels": rbac_labels}
    role = run.find("Role")
    assert role["metadata"] == {"name": ROUTER_SA, "namespace": NS, "labels": rbac_labels}
    assert role["rules"] == [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}]
    binding = run.find("RoleBinding")
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": ROUTER_SA}
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": ROUTER_SA, "namespace": NS}]


def test_engine_and_decoder_are_merged_and_rendered_on_their_own():
    run = render_pd("meta/llama-3-2-3b-instruct-pd-rt.yaml",
                    engine={"runner": {"env": [{"name": "ROLE", "value": "p"}]}}, decoder={"minReplicas": 2})
    engine_env = run.find("Deployment", "chat-engine")["spec"]["template"]["spec"]["containers"][0]["env"]
    decoder_env = run.find("Deployment", "chat-decoder")["spec"]["template"]["spec"]["containers"][0]["env"]
    # the runtime asks for the oci-roce RDMA profile: its variables follow, in name order (render.md §17)
    rdma = ["GLOO_SOCKET_IFNAME", "HCOLL_ENABLE_MCAST_ALL", "IB_RX_QUEUE_LEN", "NCCL_CROSS_NIC", "NCCL_CUMEM_ENABLE",
            "NCCL_DEBUG", "NCCL_IB_GID_INDEX", "NCCL_IB_HCA", "NCCL_IB_QPS_PER_CONNECTION", "NCCL_IB_SL",
            "NCCL_IB_SPLIT_DATA_ON_QPS", "NCCL_IB_TC", "NCCL_IB_TIMEOUT", "NCCL_IGNORE_CPU_AFFINITY", "NCCL_NET_PLUGIN",
            "NCCL_SOCKET_IFNAME", "NCCL_SOCKET_NTHREADS", "RX_QUEUE_LEN", "coll_hcoll_enable"]
    assert [e["name"] for e in engine_env] == ["ROLE", "MODEL_PATH", "PARALLELISM_SIZE", *rdma]
    assert [e["name"] for e in decoder_env] == ["MODEL_PATH", "PARALLELISM_SIZE", *rdma]
    assert run.find("HorizontalPodAutoscaler", "chat-decoder")["spec"]["minReplicas"] == 2
    assert run.find("HorizontalPodAutoscaler", "chat-engine")["spec"]["minReplicas"] == 1
    affinity = run.find("Deployment", "chat-decoder")["spec"]["template"]["spec"]["affinity"]
    assert "affinity" not in run.find("Deployment", "chat-engine")["spec"]["template"]["spec"]
    assert affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]


def test_router_config_is_sorted_env_and_replaces_a_same_named_entry():
    run = render_pd("meta/llama-3-2-3b-instruct-pd-rt.yaml",
                    router={"config": {"Z_LAST": "z", "A_FIRST": "a", "NAMESPACE": "fixed"}})
    env = run.find("Deployment", "chat-router")["spec"]["template"]["spec"]["containers"][0]["env"]
    assert env == [{"name": "NAMESPACE", "value": "fixed"},
                   {"name": "INFERENCESERVICE_NAME",
                    "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['ome.io/inferenceservice']"}}},
                   {"name": "A_FIRST", "value": "a"}, {"name": "Z_LAST", "value": "z"}]


def test_router_service_account_is_always_the_router_one():
    rt = runtime("meta/llama-3-2-3b-instruct-pd-rt.yaml")
    doc = isvc(rt, "llama-3-2-3b-instruct", router={"serviceAccountName": "mine"})
    run = render_objects([completed_model(models()["llama-3-2-3b-instruct"], rt), rt, doc])
    assert run.code == 0, run.stderr
    assert run.lines == [CHART_DEFAULTS_INFO, f"warning: <stdin>: InferenceService {NS}/{NAME}: router: serviceAccountName mine is replaced "
                         f"by {ROUTER_SA}, which the router needs to find its pods"]
    assert run.find("Deployment", "chat-router")["spec"]["template"]["spec"]["serviceAccountName"] == ROUTER_SA


def test_decoder_without_decoder_config_has_no_containers(F):
    F["isvc"]["spec"]["decoder"] = {}
    run = render_objects(list(F.values()))
    assert run.code == 1
    assert run.lines == ["error: <stdin>: InferenceService llama-demo/llama-3-2-3b-instruct: no containers found: "
        "ClusterServingRuntime srt-llama-3-2-3b-instruct has no decoderConfig, and spec.decoder sets no runner; name a "
        "runtime with a decoderConfig in spec.runtime.name, set spec.decoder.runner, or remove spec.decoder"]


# ---------------------------------------------------------------- the sglang-pd preset (render.md §12.3)

def probe(path, port, period):
    return {"httpGet": {"path": path, "port": port}, "timeoutSeconds": 10, "failureThreshold": 5,
            "periodSeconds": period}


SERVER_ENV = [{"name": "PYTHONUNBUFFERED", "value": "1"},
              {"name": "SGLANG_HOST_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}]
SERVER_COMMAND = ["python3", "-m", "sglang.launch_server", "--host", "0.0.0.0", "--port", "30000", "--model-path",
                  "$(MODEL_PATH)", "--disaggregation-mode"]
PRESET = {
    "engineConfig": {"runner": {
        "name": "ome-container", "image": "lmsysorg/sglang:latest",
        "command": SERVER_COMMAND + ["prefill", "--disaggregation-transfer-backend", "nixl",
                                     "--disaggregation-bootstrap-port", "8998"],
        "env": SERVER_ENV,
        "ports": [{"name": "http", "containerPort": 30000, "protocol": "TCP"},
                  {"name": "bootstrap", "containerPort": 8998, "protocol": "TCP"}],
        "readinessProbe": probe("/health", 30000, 30), "livenessProbe": probe("/health", 30000, 60)}},
    "decoderConfig": {"runner": {
        "name": "ome-container", "image": "lmsysorg/sglang:latest",
        "command": SERVER_COMMAND + ["decode", "--disaggregation-transfer-backend", "nixl"],
        "env": SERVER_ENV,
        "ports": [{"name": "http", "containerPort": 30000, "protocol": "TCP"}],
        "readinessProbe": probe("/health", 30000, 30), "livenessProbe": probe("/health", 30000, 60)}},
    "routerConfig": {"runner": {
        "name": "router", "image": "lmsysorg/sglang-router:latest",
        "args": ["--port", "30080", "--k8s-namespace", "$(NAMESPACE)", "--prefill-label-selector",
                 "component=engine,ome.io/inferenceservice=$(INFERENCESERVICE_NAME)", "--decode-label-selector",
                 "component=decoder,ome.io/inferenceservice=$(INFERENCESERVICE_NAME)", "--k8s-engine-port", "30000",
                 "--bootstrap-port", "8998"],
        "env": [{"name": "NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
                {"name": "INFERENCESERVICE_NAME",
                 "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['ome.io/inferenceservice']"}}}],
        "ports": [{"name": "http", "containerPort": 30080, "protocol": "TCP"}],
        "readinessProbe": probe("/readiness", 30080, 30), "livenessProbe": probe("/liveness", 30080, 30)}},
}
FORMATS = [{"modelFormat": {"name": "safetensors", "version": "1.0.0"},
            "modelFramework": {"name": "transformers", "version": "4.45.0.dev0"},
            "modelArchitecture": "LlamaForCausalLM", "autoSelect": False, "priority": 1}]


def preset_runtime(spec=None, value="sglang-pd"):
    annotations = {} if value is None else {"ome.io/engine": value}
    data = {"apiVersion": "ome.io/v1beta1", "kind": "ClusterServingRuntime",
            "metadata": {"name": "srt-pd", "annotations": annotations},
            "spec": {"supportedModelFormats": FORMATS, **(spec or {})}}
    return Obj(data, "rt.yaml", 0)


def test_preset_fills_a_runtime_that_sets_nothing():
    assert sglang_pd_preset() == PRESET
    assert preset_spec(preset_runtime()) == {"supportedModelFormats": FORMATS, **PRESET}


def test_runtime_fields_win_maps_and_keyed_lists_merge_other_lists_are_replaced():
    rt = preset_runtime({"engineConfig": {
        "labels": {"tier": "gold"},
        "runner": {"image": "my/sglang:v1", "command": ["python3", "-m", "mine"], "args": [],
                   "env": [{"name": "PYTHONUNBUFFERED", "value": "0"}, {"name": "EXTRA", "value": "x"}],
                   "ports": [{"name": "metrics", "containerPort": 9000}],
                   "resources": {"limits": {"nvidia.com/gpu": "1"}}}}})
    before = copy.deepcopy(rt.data)
    engine = preset_spec(rt)["engineConfig"]
    assert rt.data == before
    assert engine["labels"] == {"tier": "gold"}
    runner = engine["runner"]
    assert (runner["name"], runner["image"], runner["command"]) == ("ome-container", "my/sglang:v1",
                                                                    ["python3", "-m", "mine"])
    assert "args" not in runner
    assert runner["env"] == [{"name": "PYTHONUNBUFFERED", "value": "0"}, {"name": "EXTRA", "value": "x"},
                             SERVER_ENV[1]]
    assert [p["containerPort"] for p in runner["ports"]] == [9000, 30000, 8998]
    assert runner["resources"] == {"limits": {"nvidia.com/gpu": "1"}}
    assert runner["readinessProbe"] == probe("/health", 30000, 30)


def test_runtime_empty_values_leave_the_preset_values():
    rt = preset_runtime({"routerConfig": {"runner": {"args": [], "env": []}}})
    assert preset_spec(rt)["routerConfig"] == PRESET["routerConfig"]


@pytest.mark.parametrize("value", [None, ""])
def test_no_preset_without_the_annotation_value(value):
    rt = preset_runtime({"engineConfig": {"runner": {"name": "ome-container", "image": "x"}}}, value=value)
    assert preset_spec(rt) == rt.spec


def test_other_engine_values_are_an_error():
    with pytest.raises(OmeError) as caught:
        preset_spec(preset_runtime(value="vllm"))
    assert caught.value.text == ('annotation ome.io/engine: unsupported value "vllm"; the only supported value is '
                                 'sglang-pd')


def test_runtime_filled_by_the_preset_renders_prefill_decode_and_router(F):
    """The preset's fields, rendered (GPUs added, as §12.3 advises): valid objects, the router's
    label selectors match the engine and decoder pods, and the latest images are reported."""
    rt = preset_runtime({"engineConfig": {"runner": {"resources": {"limits": {"nvidia.com/gpu": "2"}}}}})
    filled = {**rt.data, "metadata": {"name": "srt-pd"}, "spec": preset_spec(rt)}
    doc = isvc(filled, "llama-3-2-3b-instruct")
    run = render_objects([F["model"], filled, doc])
    assert run.code == 0, run.stderr
    validate_all(run.objects)
    engine = run.find("Deployment", "chat-engine")["spec"]["template"]
    decoder = run.find("Deployment", "chat-decoder")["spec"]["template"]
    for template, component in ((engine, "engine"), (decoder, "decoder")):
        selector = dict(part.split("=") for part in
                        f"component={component},ome.io/inferenceservice={NAME}".split(","))
        assert selector.items() <= template["metadata"]["labels"].items()
    engine_env = {e["name"]: e.get("value") for e in engine["spec"]["containers"][0]["env"]}
    assert engine_env["PARALLELISM_SIZE"] == "2"
    assert "PARALLELISM_SIZE" not in {e["name"] for e in decoder["spec"]["containers"][0]["env"]}
    assert run.find("Service", "chat-engine")["spec"]["ports"] == [
        {"name": "http", "port": 30000, "targetPort": 30000, "protocol": "TCP"},
        {"name": "bootstrap", "port": 8998, "targetPort": 8998, "protocol": "TCP"}]
    assert run.find("Service", NAME)["spec"]["ports"][0]["port"] == 30080
    router = run.find("Deployment", "chat-router")["spec"]["template"]["spec"]
    assert preset_image_warnings(router, "router") == [
        "router container router runs lmsysorg/sglang-router:latest, the ome.io/engine: sglang-pd preset's default; "
        "set the image explicitly"]
    assert preset_image_warnings({"containers": [{"name": "c", "image": "lmsysorg/sglang:v1"}]}, "engine") == []


def test_annotated_runtime_gets_the_preset_through_the_cli(F):
    """§12.3 wired into render: a runtime annotated ``ome.io/engine: sglang-pd`` renders the same objects as the
    runtime with the preset filled in by hand, and the latest images draw warnings."""
    rt = preset_runtime({"engineConfig": {"runner": {"resources": {"limits": {"nvidia.com/gpu": "2"}}}}})
    annotated = {**rt.data, "metadata": {**rt.data["metadata"], "name": "srt-pd"}}
    filled = {**rt.data, "metadata": {"name": "srt-pd"}, "spec": preset_spec(rt)}
    by_hand = render_objects([F["model"], filled, isvc(filled, "llama-3-2-3b-instruct")])
    wired = render_objects([F["model"], annotated, isvc(annotated, "llama-3-2-3b-instruct")])
    assert wired.code == 0, wired.stderr
    assert wired.stdout == by_hand.stdout
    latest = [line for line in wired.lines if "preset's default; set the image explicitly" in line]
    assert [line.split(": ", 3)[3].split(" container")[0] for line in latest] == ["engine", "decoder", "router"]
