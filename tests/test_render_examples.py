"""render.md §16: each documented example, as the user sees it."""
import pytest

from conftest import CHART_DEFAULTS_INFO, container, env_pairs, render_objects, validate_k8s

ISVC = "InferenceService llama-demo/llama-3-2-3b-instruct"
MODEL_PATH = ("MODEL_PATH", "/raid/models/meta/llama-3-2-3b-instruct")


def engine_runner(F):
    return F["isvc"]["spec"]["engine"].setdefault("runner", {})


def rt_engine(F):
    return F["runtime"]["spec"]["engineConfig"]


def ok(F, *flags):
    run = render_objects(list(F.values()), *flags)
    assert run.code == 0, run.stderr
    for obj in run.objects:
        validate_k8s(obj)
    return run


def failed(F, *flags):
    run = render_objects(list(F.values()), *flags)
    assert run.code == 1
    assert run.stdout == ""
    return run


def engine(run):
    return run.find("Deployment", "llama-3-2-3b-instruct-engine")


# ---------------------------------------------------------------- merge (§3)

def test_01_env_merges_by_name_in_strategic_merge_order(F):
    rt_engine(F)["runner"]["env"] = [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
    engine_runner(F)["env"] = [{"name": "A", "value": "9"}, {"name": "C", "value": "3"}]
    assert env_pairs(container(engine(ok(F)))) == [("A", "9"), ("C", "3"), ("B", "2"), MODEL_PATH,
                                                   ("PARALLELISM_SIZE", "1")]


def test_02_isvc_items_keep_their_order_after_runtime_only_items_that_come_first(F):
    rt_engine(F)["runner"]["env"] = [{"name": n, "value": n.lower()} for n in "ABC"]
    engine_runner(F)["env"] = [{"name": "C", "value": "x"}, {"name": "A", "value": "y"}]
    assert env_pairs(container(engine(ok(F)))) == [("B", "b"), ("C", "x"), ("A", "y"), MODEL_PATH,
                                                   ("PARALLELISM_SIZE", "1")]


def test_03_new_volume_comes_before_runtime_volumes(F):
    F["isvc"]["spec"]["engine"]["volumes"] = [{"name": "cache", "emptyDir": {}}]
    volumes = engine(ok(F))["spec"]["template"]["spec"]["volumes"]
    assert volumes == [{"name": "cache", "emptyDir": {}}, {"name": "dshm", "emptyDir": {"medium": "Memory"}},
                       {"name": "llama-3-2-3b-instruct", "hostPath": {"path": "/raid/models/meta/llama-3-2-3b-instruct"}}]


def test_04_ports_merge_by_container_port_and_feed_the_service(F):
    engine_runner(F)["ports"] = [{"containerPort": 8080, "name": "web"}, {"containerPort": 9090, "name": "metrics"}]
    run = ok(F)
    assert container(engine(run))["ports"] == [{"containerPort": 8080, "name": "web", "protocol": "TCP"},
                                               {"containerPort": 9090, "name": "metrics", "protocol": "TCP"}]
    assert run.find("Service", "llama-3-2-3b-instruct-engine")["spec"]["ports"] == [
        {"name": "web", "port": 8080, "targetPort": 8080, "protocol": "TCP"},
        {"name": "metrics", "port": 9090, "targetPort": 9090, "protocol": "TCP"}]


def test_05_volume_mounts_merge_by_mount_path(F):
    engine_runner(F)["volumeMounts"] = [{"name": "dshm", "mountPath": "/shm"}]
    assert container(engine(ok(F)))["volumeMounts"] == [
        {"name": "dshm", "mountPath": "/shm"}, {"name": "dshm", "mountPath": "/dev/shm"},
        {"name": "llama-3-2-3b-instruct", "mountPath": "/raid/models/meta/llama-3-2-3b-instruct", "readOnly": True}]


def test_06_command_is_replaced_whole(F):
    command = ["python3", "-m", "sglang.launch_server", "--model-path", "$(MODEL_PATH)"]
    engine_runner(F)["command"] = command
    assert container(engine(ok(F)))["command"] == command


def test_06_isvc_args_add_to_runtime_command_and_replace_runtime_args(F):
    original = list(rt_engine(F)["runner"]["command"])
    rt_engine(F)["runner"]["args"] = ["--tp-size=1"]
    engine_runner(F)["args"] = ["--log-level=debug"]
    c = container(engine(ok(F)))
    assert c["command"] == original
    assert c["args"] == ["--log-level=debug"]


def test_07_tolerations_are_replaced_and_an_empty_list_keeps_the_runtime_ones(F):
    mine = [{"key": "dedicated", "operator": "Equal", "value": "llm", "effect": "NoSchedule"}]
    F["isvc"]["spec"]["engine"]["tolerations"] = mine
    assert engine(ok(F))["spec"]["template"]["spec"]["tolerations"] == mine
    F["isvc"]["spec"]["engine"]["tolerations"] = []
    assert engine(ok(F))["spec"]["template"]["spec"]["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]


def test_08_requests_merge_per_resource(F):
    engine_runner(F)["resources"] = {"requests": {"cpu": "8"}}
    resources = container(engine(ok(F)))["resources"]
    assert resources["requests"] == {"cpu": "8", "memory": "30Gi", "nvidia.com/gpu": "1"}
    assert resources["limits"] == {"cpu": "10", "memory": "30Gi", "nvidia.com/gpu": "1"}


def test_08_request_above_limit_is_an_error(F):
    engine_runner(F)["resources"] = {"requests": {"cpu": "12"}}
    run = failed(F)
    assert run.lines == [f"error: <stdin>: {ISVC}: engine pod template: containers[0].resources: request cpu=12 is "
                         f"above limit 10"]


def test_09_false_replaces_true(F):
    rt_engine(F)["hostNetwork"] = True
    F["isvc"]["spec"]["engine"]["hostNetwork"] = False
    assert engine(ok(F))["spec"]["template"]["spec"]["hostNetwork"] is False


def test_10_labels_merge_and_a_nameless_runner_keeps_the_runtime_name(F):
    F["isvc"]["spec"]["engine"]["labels"] = {"logging-forward": "disabled", "tier": "gold"}
    engine_runner(F)["image"] = "my/sglang:v1"
    deployment = engine(ok(F))
    assert deployment["metadata"]["labels"]["logging-forward"] == "disabled"
    assert deployment["metadata"]["labels"]["tier"] == "gold"
    assert container(deployment)["name"] == "ome-container"
    assert container(deployment)["image"] == "my/sglang:v1"


def test_11_node_selector_precedence(F):
    rt_engine(F)["nodeSelector"] = {"pool": "a", "zone": "z1"}
    F["runtime"]["spec"]["nodeSelector"] = {"pool": "b"}
    F["isvc"]["spec"]["engine"]["nodeSelector"] = {"zone": "z2"}
    run = ok(F)
    assert engine(run)["spec"]["template"]["spec"]["nodeSelector"] == {
        "models.ome.io/clusterbasemodel.llama-3-2-3b-instruct": "Ready", "pool": "b", "zone": "z2"}
    router = run.find("Deployment", "llama-3-2-3b-instruct-router")
    assert "nodeSelector" not in router["spec"]["template"]["spec"]


def test_12_runtime_wide_scheduler_name(F):
    F["runtime"]["spec"]["schedulerName"] = "volcano"
    F["isvc"]["spec"]["router"]["schedulerName"] = "default-scheduler"
    run = ok(F)
    assert engine(run)["spec"]["template"]["spec"]["schedulerName"] == "volcano"
    router = run.find("Deployment", "llama-3-2-3b-instruct-router")
    assert router["spec"]["template"]["spec"]["schedulerName"] == "default-scheduler"


def test_13_runtime_wide_containers_are_ignored_with_a_warning(F):
    F["runtime"]["spec"]["containers"] = [{"name": "ome-container", "resources": {"limits": {"cpu": "4"}}}]
    run = ok(F)
    assert container(engine(run))["resources"]["limits"]["cpu"] == "10"
    assert run.lines == [CHART_DEFAULTS_INFO, "warning: <stdin>: ClusterServingRuntime srt-llama-3-2-3b-instruct: spec.containers is not "
                         "used by OME v1.3 and ignored; set them in engineConfig, decoderConfig or routerConfig"]


def test_14_sidecar_comes_first_and_its_ports_feed_the_service(F):
    F["isvc"]["spec"]["engine"]["containers"] = [{"name": "sidecar", "image": "busybox"}]
    run = ok(F)
    names = [c["name"] for c in engine(run)["spec"]["template"]["spec"]["containers"]]
    assert names == ["sidecar", "ome-container"]
    assert run.find("Service", "llama-3-2-3b-instruct-engine")["spec"]["ports"] == [
        {"name": "sidecar", "port": 8080, "targetPort": 8080, "protocol": "TCP"}]


def test_15_runner_merges_into_a_same_named_container(F):
    engine_runner(F).update({"name": "ome-container", "args": ["--b"]})
    F["isvc"]["spec"]["engine"]["containers"] = [{"name": "ome-container", "args": ["--a"]}]
    containers = engine(ok(F))["spec"]["template"]["spec"]["containers"]
    assert [c["name"] for c in containers] == ["ome-container"]
    assert containers[0]["args"] == ["--a", "--b"]


# ---------------------------------------------------------------- modes (§4)

def test_18_explicit_omenative_is_an_error(F):
    F["isvc"]["spec"]["deploymentMode"] = "OMENative"
    assert failed(F).lines == [
        f"error: <stdin>: {ISVC}: engine requests deployment mode OMENative, which needs the OME controller "
        f"(InferenceReplica); omerender cannot render it, use RawDeployment or MultiNode"]


@pytest.mark.parametrize("component,mode", [("engine", "VirtualDeployment"), ("router", "MultiNode")])
def test_19_invalid_component_mode(F, component, mode):
    F["isvc"]["spec"][component]["annotations"] = {"ome.io/deploymentMode": mode}
    assert failed(F).lines == [f"error: <stdin>: {ISVC}: invalid deployment mode for {component}"]


def test_19_unknown_mode_value_is_skipped(F):
    F["isvc"]["spec"]["engine"]["annotations"] = {"ome.io/deploymentMode": "MultiNodeRayVLLM"}
    assert engine(ok(F))["kind"] == "Deployment"


def test_20_virtual_deployment_renders_nothing(F):
    F["isvc"]["metadata"]["annotations"] = {"ome.io/deploymentMode": "VirtualDeployment"}
    run = ok(F)
    assert run.objects == []
    assert run.lines == [CHART_DEFAULTS_INFO, f"info: <stdin>: {ISVC}: ome.io/deploymentMode is VirtualDeployment; nothing is rendered for "
                         f"this InferenceService"]


def test_21_leader_without_worker(F):
    F["isvc"]["spec"]["engine"]["leader"] = {"runner": {"name": "ome-container"}}
    assert failed(F).lines == [f"error: <stdin>: {ISVC}: InvalidLeaderWorkerPairing: engine sets leader without worker"]


# ---------------------------------------------------------------- placeholders (§5)

def test_22_name_placeholder_in_runtime_command(F):
    rt_engine(F)["runner"]["command"].append("--served-model-name={{.Name}}")
    assert container(engine(ok(F)))["command"][-1] == "--served-model-name=llama-3-2-3b-instruct"


def test_23_missing_label_in_field_and_index_form(F):
    engine_runner(F)["env"] = [{"name": "A", "value": "{{.Labels.owner}}"},
                               {"name": "B", "value": '{{index .Labels "owner"}}'}]
    assert env_pairs(container(engine(ok(F))))[:2] == [("A", "<no value>"), ("B", "")]


def test_24_index_form_for_keys_with_dots_and_slashes(F):
    F["isvc"]["metadata"]["labels"]["app.kubernetes.io/name"] = "chat"
    engine_runner(F)["env"] = [{"name": "X", "value": "{{index .Labels `app.kubernetes.io/name`}}"}]
    assert env_pairs(container(engine(ok(F))))[0] == ("X", "chat")
    engine_runner(F)["env"].append({"name": "Y", "value": "{{.Labels.app.kubernetes.io/name}}"})
    (line,) = failed(F).lines
    assert line.startswith(f"error: <stdin>: {ISVC}: invalid placeholder in engine.runner.env[1].value: ")


def test_25_values_are_not_escaped(F):
    F["isvc"]["metadata"]["annotations"] = {"owner": "a&b <c>"}
    engine_runner(F)["env"] = [{"name": "O", "value": "{{.Annotations.owner}}"}]
    assert env_pairs(container(engine(ok(F))))[0] == ("O", "a&b <c>")


def test_26_jinja_in_runtime_command_is_an_error_naming_the_field(F):
    rt_engine(F)["runner"]["command"].append("--chat-template={{ message['content'] }}")
    (line,) = failed(F).lines
    assert line.startswith(f"error: <stdin>: {ISVC}: invalid placeholder in engine.runner.command[17]: ")


# ---------------------------------------------------------------- model storage and env (§6, §7)

def test_27_pvc_base_model(F):
    F["model"]["kind"] = "BaseModel"
    F["model"]["metadata"]["namespace"] = "llama-demo"
    F["model"]["spec"]["storage"] = {"storageUri": "pvc://model-store/llama-3-2-3b"}
    F["isvc"]["spec"]["model"]["kind"] = "BaseModel"
    run = ok(F)
    pod = engine(run)["spec"]["template"]["spec"]
    assert pod["volumes"][-1] == {"name": "llama-3-2-3b-instruct",
                                  "persistentVolumeClaim": {"claimName": "model-store", "readOnly": True}}
    c = container(engine(run))
    assert c["volumeMounts"][-1] == {"name": "llama-3-2-3b-instruct", "mountPath": "/opt/ml/model",
                                     "subPath": "llama-3-2-3b", "readOnly": True}
    assert ("MODEL_PATH", "/opt/ml/model") in env_pairs(c)
    assert "nodeSelector" not in pod
    router_pod = run.find("Deployment", "llama-3-2-3b-instruct-router")["spec"]["template"]["spec"]
    assert "volumes" not in router_pod


def test_28_local_model_without_path(F):
    F["model"]["spec"]["storage"] = {"storageUri": "local:///mnt/models/llama"}
    run = ok(F)
    pod = engine(run)["spec"]["template"]["spec"]
    assert [v["name"] for v in pod["volumes"]] == ["dshm"]
    assert "MODEL_PATH" not in dict(env_pairs(container(engine(run))))
    assert pod["nodeSelector"] == {"models.ome.io/clusterbasemodel.llama-3-2-3b-instruct": "Ready"}
    assert run.lines == [CHART_DEFAULTS_INFO, f"warning: <stdin>: {ISVC}: engine runner ome-container: $(MODEL_PATH) is referenced but "
                         f"MODEL_PATH is not set; the runner gets the literal text"]


def test_29_runtime_only_isvc(F):
    del F["isvc"]["spec"]["model"]
    engine_runner(F)["env"] = [{"name": "MODEL_PATH", "value": "meta-llama/Llama-3.2-3B-Instruct"}]
    run = ok(F)
    deployment = engine(run)
    assert env_pairs(container(deployment)) == [("MODEL_PATH", "meta-llama/Llama-3.2-3B-Instruct"),
                                                ("PARALLELISM_SIZE", "1")]
    pod = deployment["spec"]["template"]["spec"]
    assert [v["name"] for v in pod["volumes"]] == ["dshm"]
    assert "nodeSelector" not in pod
    assert not any(k.startswith("base-model") for k in deployment["metadata"]["labels"])
    assert not any(k.startswith("ome.io/base-model") for k in deployment["metadata"]["annotations"])


def test_30_inject_model_init(F):
    """OME's pod webhook adds the model-init container, which omerender does not reproduce (render.md §17)."""
    F["isvc"]["spec"]["engine"]["annotations"] = {"ome.io/inject-model-init": "true"}
    assert failed(F).lines == [
        "error: <stdin>: InferenceService llama-demo/llama-3-2-3b-instruct: engine pod: ome.io/inject-model-init: "
        "\"true\" asks OME's pod webhook for the model-init init container (model decryption with OCI Vault); "
        "omerender cannot add it; apply this InferenceService on a cluster that runs OME's controller manager (its "
        "pod webhook), or remove the annotation"]


def test_32_model_name_must_be_a_dns_label(F):
    F["model"]["metadata"]["name"] = "llama-3.2-3b-instruct"
    F["isvc"]["spec"]["model"]["name"] = "llama-3.2-3b-instruct"
    (line,) = failed(F).lines
    assert "a lowercase RFC 1123 label must consist of" in line


def test_33_parallelism_size_replaces_the_users_value_in_place(F):
    engine_runner(F)["env"] = [{"name": "PARALLELISM_SIZE", "value": "4"}]
    assert env_pairs(container(engine(ok(F))))[:2] == [("PARALLELISM_SIZE", "1"), MODEL_PATH]


def test_33_no_parallelism_size_without_gpus(F):
    engine_runner(F)["resources"] = {"limits": {"nvidia.com/gpu": "0"}, "requests": {"nvidia.com/gpu": "0"}}
    assert "PARALLELISM_SIZE" not in dict(env_pairs(container(engine(ok(F)))))


def test_36_router_config_becomes_sorted_env(F):
    F["isvc"]["spec"]["router"]["config"] = {"b": "2", "a": "1"}
    router = ok(F).find("Deployment", "llama-3-2-3b-instruct-router")
    assert [n for n, _ in env_pairs(container(router))] == ["NAMESPACE", "INFERENCESERVICE_NAME", "a", "b"]
    assert env_pairs(container(router))[2:] == [("a", "1"), ("b", "2")]


# ---------------------------------------------------------------- names, autoscaling, PDB, Services (§8–§13)

def test_37_long_names(F):
    name = "mixtral-8x7b-instruct-v0-1-chat-production-us-ashburn-region-1"
    F["isvc"]["metadata"]["name"] = name
    run = ok(F)
    deployment = run.find("Deployment", f"{name}-engine")
    assert len(deployment["metadata"]["name"]) == 69
    short = "a2264bff-struct-v0-1-chat-production-us-ashburn-region-1-engine"
    assert deployment["metadata"]["labels"]["app"] == short
    run.find("Service", short)
    run.find("HorizontalPodAutoscaler", f"{name}-engine")


def test_38_hpa_metrics_from_the_isvc(F):
    metrics = [{"type": "Resource", "resource": {"name": "memory",
                                                 "target": {"type": "Utilization", "averageUtilization": 70}}}]
    F["isvc"]["spec"]["engine"]["autoscaler"] = {"class": "HPA", "hpa": {"metrics": metrics}}
    hpa = ok(F).find("HorizontalPodAutoscaler")
    assert hpa["spec"]["metrics"] == metrics
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (1, 2)


def test_39_external_autoscaler(F):
    F["isvc"]["spec"]["engine"]["autoscaler"] = {"class": "External"}
    run = ok(F)
    assert not [o for o in run.objects if o["kind"] == "HorizontalPodAutoscaler"]
    assert "replicas" not in engine(run)["spec"]


def test_40_legacy_target_utilization_annotation(F):
    F["isvc"]["metadata"]["annotations"] = {"ome.io/targetUtilizationPercentage": "60"}
    run = ok(F)
    hpa = run.find("HorizontalPodAutoscaler")
    assert hpa["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] == 60
    assert run.find("Deployment", "llama-3-2-3b-instruct-router")["spec"]["replicas"] == 1


def test_41_scale_to_zero_needs_keda(F):
    F["isvc"]["spec"]["engine"]["minReplicas"] = 0
    (line,) = failed(F).lines
    assert line.startswith(f"error: <stdin>: {ISVC}: engine: InvalidScaleToZero: ")


def test_41_keda_scaled_object(F):
    triggers = [{"type": "prometheus", "metadata": {"serverAddress": "http://prom:9090", "query": "q",
                                                    "threshold": "5"}}]
    F["isvc"]["spec"]["engine"].update({"minReplicas": 0, "autoscaler": {"class": "KEDA",
                                                                         "keda": {"triggers": triggers}}})
    run = ok(F)
    scaled = run.find("ScaledObject", "scaledobject-llama-3-2-3b-instruct-engine")
    assert scaled["spec"]["minReplicaCount"] == 0
    assert scaled["spec"]["maxReplicaCount"] == 2
    assert scaled["spec"]["triggers"] == triggers
    assert not [o for o in run.objects if o["kind"] == "HorizontalPodAutoscaler"]


def test_42_replica_defaults_after_the_merge(F):
    rt_engine(F)["minReplicas"] = 2
    for key in ("minReplicas", "maxReplicas"):
        del F["isvc"]["spec"]["engine"][key]
    F["isvc"]["spec"]["router"] = {}
    run = ok(F)
    engine_hpa = run.find("HorizontalPodAutoscaler", "llama-3-2-3b-instruct-engine")
    assert (engine_hpa["spec"]["minReplicas"], engine_hpa["spec"]["maxReplicas"]) == (2, 3)
    router_hpa = run.find("HorizontalPodAutoscaler", "llama-3-2-3b-instruct-router")
    assert (router_hpa["spec"]["minReplicas"], router_hpa["spec"]["maxReplicas"]) == (1, 2)


def test_43_pdb_min_available(F):
    F["isvc"]["spec"]["engine"]["minAvailable"] = "50%"
    pdb = ok(F).find("PodDisruptionBudget", "llama-3-2-3b-instruct-engine")
    assert pdb["spec"] == {"minAvailable": "50%", "selector": {"matchLabels": {"app": "llama-3-2-3b-instruct-engine"}}}
    rt_engine(F)["maxUnavailable"] = 1
    assert failed(F).lines == [f"error: <stdin>: {ISVC}: failed to resolve engine PodDisruptionBudget: runtime and "
                               f"InferenceService set different budget fields"]


def test_44_load_balancer_services(F):
    F["isvc"]["metadata"]["annotations"] = {"ome.io/service-type": "LoadBalancer",
                                            "service.beta.kubernetes.io/oci-load-balancer-shape": "flexible"}
    services = [o for o in ok(F).objects if o["kind"] == "Service"]
    assert len(services) == 3
    for service in services:
        assert service["spec"]["type"] == "LoadBalancer"
        assert service["metadata"]["annotations"]["service.beta.kubernetes.io/oci-load-balancer-shape"] == "flexible"


def test_45_no_router_declared(F):
    del F["isvc"]["spec"]["router"]
    run = ok(F)
    assert not [o for o in run.objects if o["metadata"]["name"].endswith("-router")]
    external = run.find("Service", "llama-3-2-3b-instruct")
    assert external["spec"]["selector"] == {"ome.io/inferenceservice": "llama-3-2-3b-instruct", "component": "engine"}


def test_45_cluster_local_has_no_external_service(F):
    F["isvc"]["metadata"]["labels"]["networking.knative.dev/visibility"] = "cluster-local"
    run = ok(F)
    assert not [o for o in run.objects if o["metadata"]["name"] == "llama-3-2-3b-instruct"
                and o["kind"] != "ClusterBaseModel"]
