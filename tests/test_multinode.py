"""Deployment modes (render.md §4) and MultiNode components as LeaderWorkerSets (§7.1, §8.3, §11):
the §16 examples 16, 17, 34 and one test per mode rule, through the CLI."""
import copy

import pytest

from catalog import completed_model, models
from conftest import CATALOG, CHART_DEFAULTS_INFO, load_yaml, render_objects
from omerender.ome.workloads.multinode import shared_leader_service_warnings
from schemas import validate_all

ISVC = "InferenceService llama-demo/llama-3-2-3b-instruct"
COMP = "llama-3-2-3b-instruct-engine"
LWS = "lws-llama-3-2-3b-instruct-engine"
IMPLICIT = ("has a leader and worker and no explicit deployment mode; OME v1.3 would run it as OMENative, omerender "
            "renders it as MultiNode (LeaderWorkerSet)")
MODEL_ANNOTATIONS = {"ome.io/base-model-format": "safetensors", "ome.io/base-model-format-version": "1.0.0",
                     "ome.io/base-model-name": "llama-3-2-3b-instruct", "ome.io/base-model-vendor": "meta",
                     "ome.io/serving-runtime": "srt-llama-3-2-3b-instruct"}
PROMETHEUS = {"prometheus.io/scrape": "true", "prometheus.io/port": "8080", "prometheus.io/path": "/metrics"}
# What OME's pod webhook writes on every pod from the chart's metricsAggregator (render.md §17)
WEBHOOK = {"ome.io/enable-metric-aggregation": "false", "ome.io/enable-prometheus-scraping": "false"}
L = {"team": "llm", "logging-forward": "enabled", "ome.io/inferenceservice": "llama-3-2-3b-instruct",
     "component": "engine", "serving-runtime": "srt-llama-3-2-3b-instruct", "fine-tuned-serving": "false",
     "base-model-name": "llama-3-2-3b-instruct", "base-model-size": "SMALL", "base-model-type": "Serving",
     "base-model-vendor": "meta"}


def ok(objects):
    run = render_objects(objects)
    assert run.code == 0, run.stderr
    validate_all(run.objects)
    return run


def failed(objects):
    run = render_objects(objects)
    assert run.code == 1, run.stdout
    assert run.stdout == ""
    return run


def leader_worker(F, size=1):
    engine = F["isvc"]["spec"]["engine"]
    engine["leader"] = {"runner": {"name": "ome-container", "image": "i"}}
    engine["worker"] = {"size": size, "runner": {"name": "ome-container", "image": "i"}}
    return engine


def example_16(F):
    engine = leader_worker(F)
    engine["annotations"] = {"ome.io/deploymentMode": "MultiNode"}
    return F


def templates(lws):
    group = lws["spec"]["leaderWorkerTemplate"]
    return group["leaderTemplate"], group["workerTemplate"]


def env_of(template, name):
    main = template["spec"]["containers"][-1]
    return next((e.get("value") for e in main.get("env", []) if e["name"] == name), None)


# ---------------------------------------------------------------- §16 example 16

def test_16_explicit_multinode_renders_a_leader_worker_set(F):
    run = ok(list(example_16(F).values()))
    assert run.lines == [CHART_DEFAULTS_INFO]
    lws = run.find("LeaderWorkerSet", LWS)
    spec = {k: v for k, v in lws["spec"].items() if k != "leaderWorkerTemplate"}
    assert spec == {"replicas": 1, "startupPolicy": "LeaderCreated", "networkConfig": {"subdomainPolicy": "Shared"},
                    "rolloutStrategy": {"type": "RollingUpdate",
                                        "rollingUpdateConfiguration": {"maxUnavailable": 1, "maxSurge": 1}}}
    group = lws["spec"]["leaderWorkerTemplate"]
    assert (group["size"], group["restartPolicy"]) == (2, "RecreateGroupOnPodRestart")
    leader, worker = templates(lws)
    assert "tolerations" not in leader["spec"]
    assert [v["name"] for v in leader["spec"]["volumes"]] == ["llama-3-2-3b-instruct"]
    assert leader["spec"]["containers"][0]["image"] == "i"
    assert "readinessProbe" not in leader["spec"]["containers"][0]
    assert "readinessProbe" not in worker["spec"]["containers"][0]
    service = run.find("Service", COMP)
    assert service["spec"]["selector"] == {"ray.io/node-type": "head"}
    assert service["spec"]["ports"] == [{"name": "ome-container", "port": 8080, "targetPort": 8080, "protocol": "TCP"}]
    engine_kinds = [kind for kind, name in run.kinds() if name in (COMP, LWS)]
    assert engine_kinds == ["LeaderWorkerSet", "Service"]
    assert not [o for o in run.objects if o["kind"] == "Deployment" and o["metadata"]["name"] == COMP]


def test_16_metadata_of_the_set_its_templates_and_service(F):
    example_16(F)
    F["runtime"]["spec"]["engineConfig"]["annotations"]["rdma.ome.io/profile"] = "oci-roce"
    F["isvc"]["metadata"]["annotations"] = {"ome.io/volcano-queue": "q1"}
    run = ok(list(F.values()))
    lws = run.find("LeaderWorkerSet", LWS)
    A = {**PROMETHEUS, "rdma.ome.io/profile": "oci-roce", "ome.io/volcano-queue": "q1",
         "ome.io/deploymentMode": "MultiNode", **MODEL_ANNOTATIONS}
    assert lws["metadata"] == {"name": LWS, "namespace": "llama-demo", "labels": L, "annotations": A}
    leader, worker = templates(lws)
    assert leader["metadata"] == {"name": COMP, "namespace": "llama-demo", "annotations": {**A, **WEBHOOK},
                                  "labels": {**L, "app": COMP, "ray.io/node-type": "head",
                                             "volcano.sh/queue-name": "q1"}}
    worker_annotations = {**{k: v for k, v in A.items() if not k.startswith("prometheus.io/")}, **WEBHOOK}
    assert worker["metadata"] == {"name": COMP, "namespace": "llama-demo", "annotations": worker_annotations,
                                  "labels": {**L, "volcano.sh/queue-name": "q1"}}
    service = run.find("Service", COMP)
    assert service["metadata"]["labels"] == L
    assert service["metadata"]["annotations"] == {k: v for k, v in A.items()
                                                  if not k.startswith(("prometheus.io/", "rdma.ome.io/"))}


@pytest.mark.parametrize("annotations, labels", [
    ({"ome.io/volcano-queue": "", "ome.io/dedicated-ai-cluster": "d"}, {"volcano.sh/queue-name": ""}),
    ({"ome.io/dedicated-ai-cluster": ""}, {"volcano.sh/queue-name": ""}),
    ({"ome.io/dedicated-ai-cluster": "", "kueue-enabled": ""},
     {"kueue.x-k8s.io/queue-name": "", "kueue.x-k8s.io/priority-class": "kueue-scheduling-high-priority"}),
])
def test_an_empty_queue_annotation_still_writes_its_label_as_ome_does(F, annotations, labels):
    example_16(F)
    F["isvc"]["metadata"]["annotations"] = annotations
    leader, worker = templates(ok(list(F.values())).find("LeaderWorkerSet", LWS))
    assert {k: v for k, v in leader["metadata"]["labels"].items() if "queue" in k or "priority" in k} == labels
    assert {k: v for k, v in worker["metadata"]["labels"].items() if "queue" in k or "priority" in k} == labels


# ---------------------------------------------------------------- §16 example 17 and mode rule 3

def test_17_leader_and_worker_without_a_mode_render_the_same_objects_with_an_info(F):
    explicit = ok(list(example_16(copy.deepcopy(F)).values()))
    leader_worker(F)
    run = ok(list(F.values()))
    assert run.lines == [CHART_DEFAULTS_INFO, f"info: <stdin>: {ISVC}: engine {IMPLICIT}"]
    assert run.kinds() == explicit.kinds()
    lws, expected = run.find("LeaderWorkerSet", LWS), explicit.find("LeaderWorkerSet", LWS)
    assert lws["spec"]["leaderWorkerTemplate"]["size"] == 2
    assert "ome.io/deploymentMode" not in lws["metadata"]["annotations"]
    assert templates(lws)[0]["spec"] == templates(expected)[0]["spec"]


def test_mode_rule_3_leader_and_worker_from_the_runtime(F):
    F["runtime"]["spec"]["engineConfig"]["leader"] = {"runner": {"name": "ome-container", "image": "i"}}
    F["runtime"]["spec"]["engineConfig"]["worker"] = {"runner": {"name": "ome-container", "image": "i"}}
    run = ok(list(F.values()))
    assert run.lines == [CHART_DEFAULTS_INFO, f"info: <stdin>: {ISVC}: engine {IMPLICIT}"]
    assert run.find("LeaderWorkerSet", LWS)["spec"]["leaderWorkerTemplate"]["size"] == 2


# ---------------------------------------------------------------- §16 example 34 (catalog)

def deepseek_rdma():
    return load_yaml(CATALOG / "runtimes" / "srt" / "deepseek-rdma-rt.yaml")[0]


def isvc_naming(runtime, model=None, decoder=False):
    spec = {"runtime": {"name": runtime["metadata"]["name"]}, "engine": {}, "router": {}}
    if decoder:
        spec["decoder"] = {}
    if model:
        spec["model"] = {"name": model}
    return {"apiVersion": "ome.io/v1beta1", "kind": "InferenceService",
            "metadata": {"name": "ds", "namespace": "serving"}, "spec": spec}


def test_34_catalog_deepseek_rdma_without_a_model(F):
    run = ok([deepseek_rdma(), isvc_naming(deepseek_rdma())])
    where = "info: <stdin>: InferenceService serving/ds: "
    warn = "warning: <stdin>: InferenceService serving/ds: "
    literal = "runner ome-container: $(MODEL_PATH) is referenced but MODEL_PATH is not set; the runner gets the literal text"
    # the leader's dshm and devinf mounts get their volumes from the oci-roce RDMA profile (render.md §17)
    assert run.lines == [CHART_DEFAULTS_INFO, f"{where}engine {IMPLICIT}", f"{warn}engine.leader {literal}", f"{warn}engine.worker {literal}"]
    lws = run.find("LeaderWorkerSet", "lws-ds-engine")
    assert lws["spec"]["leaderWorkerTemplate"]["size"] == 2
    leader, worker = templates(lws)
    assert env_of(leader, "PARALLELISM_SIZE") == env_of(worker, "PARALLELISM_SIZE") == "16"
    assert leader["spec"]["hostNetwork"] is True and leader["spec"]["dnsPolicy"] == "ClusterFirstWithHostNet"
    assert [v["name"] for v in worker["spec"]["volumes"]] == ["dshm", "devinf"]
    assert leader["spec"]["volumes"] == [{"name": "dshm", "emptyDir": {"medium": "Memory"}},
                                         {"name": "devinf", "hostPath": {"path": "/dev/infiniband"}}]
    assert run.find("Service", "ds-engine")["spec"]["selector"] == {"ray.io/node-type": "head"}
    assert run.find("Service", "ds")["spec"]["selector"] == {"ome.io/inferenceservice": "ds", "component": "router"}


@pytest.mark.parametrize("file,model,sizes", [
    ("deepseek-rdma-rt.yaml", "deepseek-v3", {"engine": 2}),
    ("deepseek-rdma-pd-rt.yaml", "deepseek-v3", {"engine": 2, "decoder": 2}),
    ("kimi-k2-pd-rt.yaml", "kimi-k2-instruct", {"engine": 4, "decoder": 12}),
])
def test_catalog_multinode_runtimes_render_valid_objects(file, model, sizes):
    runtime = load_yaml(CATALOG / "runtimes" / "srt" / file)[0]
    isvc = isvc_naming(runtime, model, decoder="decoderConfig" in runtime["spec"])
    run = ok([completed_model(models()[model], runtime), runtime, isvc])
    assert [line for line in run.lines if line.startswith("info:")] == [CHART_DEFAULTS_INFO] + [
        f"info: <stdin>: InferenceService serving/ds: {c} {IMPLICIT}" for c in sizes]
    for component, size in sizes.items():
        lws = run.find("LeaderWorkerSet", f"lws-ds-{component}")
        assert lws["spec"]["leaderWorkerTemplate"]["size"] == size
        gpus = int(templates(lws)[0]["spec"]["containers"][-1]["resources"]["limits"]["nvidia.com/gpu"])
        for template in templates(lws):
            assert env_of(template, "PARALLELISM_SIZE") == str(gpus * size)
            assert env_of(template, "MODEL_PATH") == models()[model]["spec"]["storage"]["path"]
        assert not [o for o in run.objects if o["metadata"]["name"] == f"ds-{component}"
                    and o["kind"] in ("HorizontalPodAutoscaler", "PodDisruptionBudget", "Deployment")]
    router = run.find("Deployment", "ds-router")
    assert router["spec"]["template"]["spec"]["serviceAccountName"] == "ds-router"


# ---------------------------------------------------------------- worker.size, worker without runner

@pytest.mark.parametrize("isvc_size,runtime_size,expected", [(None, None, 2), (None, 3, 4), (2, 3, 3), (0, 3, 1)])
def test_worker_size_from_the_isvc_then_the_runtime_then_one(F, isvc_size, runtime_size, expected):
    engine = leader_worker(F)
    for part in ("leader", "worker"):
        engine[part]["runner"]["resources"] = {"limits": {"nvidia.com/gpu": "2"}}
    if isvc_size is None:
        del engine["worker"]["size"]
    else:
        engine["worker"]["size"] = isvc_size
    if runtime_size is not None:
        F["runtime"]["spec"]["engineConfig"]["worker"] = {"size": runtime_size}
    lws = ok(list(F.values())).find("LeaderWorkerSet", LWS)
    assert lws["spec"]["leaderWorkerTemplate"]["size"] == expected
    for template in templates(lws):
        assert env_of(template, "PARALLELISM_SIZE") == str(2 * expected)


def test_worker_without_runner_uses_its_first_container_untouched(F):
    engine = leader_worker(F)
    engine["worker"] = {"size": 1, "containers": [{"name": "w", "image": "w:1",
                                                   "resources": {"limits": {"nvidia.com/gpu": "8"}}}]}
    worker = templates(ok(list(F.values())).find("LeaderWorkerSet", LWS))[1]
    (main,) = worker["spec"]["containers"]
    assert main == {"name": "w", "image": "w:1", "resources": {"limits": {"nvidia.com/gpu": "8"}},
                    "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
                    "imagePullPolicy": "IfNotPresent"}


def test_replicas_come_from_min_replicas(F):
    leader_worker(F)
    F["isvc"]["spec"]["engine"].update({"minReplicas": 2, "maxReplicas": 4})
    assert ok(list(F.values())).find("LeaderWorkerSet", LWS)["spec"]["replicas"] == 2


def test_long_names(F):
    name = "mixtral-8x7b-instruct-v0-1-chat-production-us-ashburn-region-1"
    F["isvc"]["metadata"]["name"] = name
    leader_worker(F)
    run = ok(list(F.values()))
    lws = run.find("LeaderWorkerSet", "lws-ct-v0-1-chat-production-us-ashburn-region-1-engine")
    short = "a2264bff-struct-v0-1-chat-production-us-ashburn-region-1-engine"
    assert templates(lws)[0]["metadata"]["labels"]["app"] == short
    assert templates(lws)[0]["metadata"]["name"] == f"{name}-engine"
    run.find("Service", short)


def test_configured_autoscaler_and_budget_are_ignored_with_warnings(F):
    leader_worker(F)
    F["isvc"]["spec"]["engine"].update({"autoscaler": {"class": "HPA"}, "minAvailable": 1})
    run = ok(list(F.values()))
    assert run.lines[2:] == [
        f"warning: <stdin>: {ISVC}: engine is MultiNode: its autoscaler is ignored (OME does not autoscale a "
        f"LeaderWorkerSet)",
        f"warning: <stdin>: {ISVC}: engine is MultiNode: minAvailable is ignored (OME makes no PodDisruptionBudget "
        f"for a LeaderWorkerSet)"]
    assert not [o for o in run.objects if o["metadata"]["name"] == COMP and o["kind"] != "Service"]


def test_autoscaler_blocks_are_still_validated_for_multinode(F):
    leader_worker(F)
    F["isvc"]["spec"]["engine"]["autoscaler"] = {"class": "KEDA"}
    assert failed(list(F.values())).lines == [
        f"error: <stdin>: {ISVC}: engine: KedaTriggersRequired: class=keda requires at least 1 trigger"]


# ---------------------------------------------------------------- mode rules (render.md §4)

def test_rule_1_runtime_annotation_multinode(F):
    leader_worker(F)
    F["runtime"]["spec"]["engineConfig"]["annotations"]["ome.io/deploymentMode"] = "MultiNode"
    run = ok(list(F.values()))
    assert run.lines == [CHART_DEFAULTS_INFO]
    run.find("LeaderWorkerSet", LWS)


def test_rule_1_isvc_annotation_wins_over_runtime_annotation(F):
    leader_worker(F)
    F["runtime"]["spec"]["engineConfig"]["annotations"]["ome.io/deploymentMode"] = "MultiNode"
    F["isvc"]["spec"]["engine"]["annotations"] = {"ome.io/deploymentMode": "RawDeployment"}
    run = ok(list(F.values()))
    # The first warning is selection's (selection.md): the runtime's mode differs from the requested one.
    assert run.lines[-1] == f"warning: <stdin>: {ISVC}: engine is RawDeployment; its leader and worker are ignored"
    assert run.find("Deployment", COMP)["spec"]["template"]["spec"]["containers"][0]["image"] == (
        "docker.io/lmsysorg/sglang:v0.5.5.post3-cu129-amd64")


def test_rule_1_annotation_wins_over_spec_deployment_mode(F):
    example_16(F)
    F["isvc"]["spec"]["deploymentMode"] = "RawDeployment"
    ok(list(F.values())).find("LeaderWorkerSet", LWS)


def test_rule_2_spec_raw_deployment_with_leader_and_worker(F):
    leader_worker(F)
    F["isvc"]["spec"]["deploymentMode"] = "RawDeployment"
    run = ok(list(F.values()))
    assert run.lines == [CHART_DEFAULTS_INFO, f"warning: <stdin>: {ISVC}: engine is RawDeployment; its leader and worker are ignored"]
    run.find("Deployment", COMP)


def test_rule_1_unknown_value_falls_through_to_rule_3(F):
    leader_worker(F)
    F["isvc"]["spec"]["engine"]["annotations"] = {"ome.io/deploymentMode": "MultiNodeRayVLLM"}
    run = ok(list(F.values()))
    assert run.lines == [CHART_DEFAULTS_INFO, 
        f"warning: <stdin>: {ISVC}: annotation ome.io/deploymentMode: \"MultiNodeRayVLLM\" is not RawDeployment, "
        "OMENative, MultiNode or VirtualDeployment: OME skips a mode it does not know, as if the annotation were absent",
        f"info: <stdin>: {ISVC}: engine {IMPLICIT}"]
    run.find("LeaderWorkerSet", LWS)


def test_explicit_omenative_annotation_is_an_error(F):
    leader_worker(F)
    F["isvc"]["spec"]["engine"]["annotations"] = {"ome.io/deploymentMode": "OMENative"}
    assert failed(list(F.values())).lines == [
        f"error: <stdin>: {ISVC}: engine requests deployment mode OMENative, which needs the OME controller "
        f"(InferenceReplica); omerender cannot render it, use RawDeployment or MultiNode"]


def test_virtual_deployment_from_the_runtime_config(F):
    F["runtime"]["spec"]["engineConfig"]["annotations"]["ome.io/deploymentMode"] = "VirtualDeployment"
    assert failed(list(F.values())).lines == [f"error: <stdin>: {ISVC}: invalid deployment mode for engine"]


def test_multinode_without_leader_and_worker(F):
    F["isvc"]["spec"]["engine"]["annotations"] = {"ome.io/deploymentMode": "MultiNode"}
    assert failed(list(F.values())).lines == [f"error: <stdin>: {ISVC}: engine: MultiNode needs leader and worker"]


def test_worker_without_leader_in_the_isvc(F):
    F["isvc"]["spec"]["engine"]["worker"] = {"size": 1, "runner": {"name": "ome-container"}}
    assert failed(list(F.values())).lines == [
        f"error: <stdin>: {ISVC}: InvalidLeaderWorkerPairing: engine sets worker without leader"]


def test_pairing_is_checked_on_the_merged_component(F):
    F["runtime"]["spec"]["engineConfig"]["leader"] = {"runner": {"name": "ome-container", "image": "i"}}
    assert failed(list(F.values())).lines == [
        f"error: <stdin>: {ISVC}: InvalidLeaderWorkerPairing: engine sets leader without worker"]


def test_decoder_mode_combination_with_omenative(F):
    F["isvc"]["spec"]["decoder"] = {"annotations": {"ome.io/deploymentMode": "OMENative"}}
    assert failed(list(F.values())).lines == [
        f'error: <stdin>: {ISVC}: InvalidDeploymentModeCombination: engine deploymentMode="" does not match decoder '
        f'deploymentMode="OMENative"; when either is OMENative, both must use the same value']


# ---------------------------------------------------------------- two LeaderWorkerSets in one namespace

def test_shared_leader_service_warning_per_namespace():
    def lws(name, namespace):
        return {"kind": "LeaderWorkerSet", "metadata": {"name": name, "namespace": namespace}}

    objects = [(lws("lws-b-engine", "n1"), "b"), (lws("lws-a-engine", "n1"), "a"), (lws("lws-c-engine", "n2"), "c"),
               ({"kind": "Service", "metadata": {"name": "x", "namespace": "n2"}}, "c")]
    assert shared_leader_service_warnings(objects) == [
        ("namespace n1 gets 2 LeaderWorkerSets (lws-a-engine, lws-b-engine); the Service of each selects "
         "ray.io/node-type: head, which matches the leader pods of all of them, as in OME", "a")]


def test_the_schemas_refuse_fields_the_crds_do_not_have(F):
    import jsonschema

    lws = ok(list(example_16(F).values())).find("LeaderWorkerSet", LWS)
    broken = copy.deepcopy(lws)
    broken["spec"]["leaderWorkerTemplate"]["sizes"] = 2
    with pytest.raises(jsonschema.ValidationError):
        validate_all([broken])
    broken = copy.deepcopy(lws)
    broken["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]["imageName"] = "x"
    with pytest.raises(Exception, match="imageName"):
        validate_all([broken])
    scaled = {"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject", "metadata": {"name": "s"},
              "spec": {"scaleTargetRef": {"name": "d"}, "triggers": [{"type": "cpu", "metadata": {"value": 5}}]}}
    with pytest.raises(jsonschema.ValidationError):
        validate_all([scaled])
