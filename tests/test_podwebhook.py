"""render.md §17: what OME v1.3's pod webhook does to each pod is in the rendered pod templates."""
from __future__ import annotations

import copy
import json

import pytest
import yaml

from catalog import completed_model, load_runtime, models, paired_model_name
from conftest import CATALOG, CHART_DEFAULTS_INFO, load_yaml, render_objects, run_cli, validate_k8s

# oci-roce as OME v1.3 defines it (rdma_injector.go), in the order the webhook appends it (by name)
OCI_ROCE = [
    ("GLOO_SOCKET_IFNAME", "eth0"), ("HCOLL_ENABLE_MCAST_ALL", "0"), ("IB_RX_QUEUE_LEN", "8192"),
    ("NCCL_CROSS_NIC", "2"), ("NCCL_CUMEM_ENABLE", "0"), ("NCCL_DEBUG", "INFO"), ("NCCL_IB_GID_INDEX", "3"),
    ("NCCL_IB_HCA", "=mlx5_0,mlx5_1,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7,mlx5_8,mlx5_9,mlx5_10,mlx5_12,mlx5_13,"
                    "mlx5_14,mlx5_15,mlx5_16,mlx5_17"),
    ("NCCL_IB_QPS_PER_CONNECTION", "16"), ("NCCL_IB_SL", "0"), ("NCCL_IB_SPLIT_DATA_ON_QPS", "0"),
    ("NCCL_IB_TC", "41"), ("NCCL_IB_TIMEOUT", "22"), ("NCCL_IGNORE_CPU_AFFINITY", "1"), ("NCCL_NET_PLUGIN", "none"),
    ("NCCL_SOCKET_IFNAME", "eth0"), ("NCCL_SOCKET_NTHREADS", "16"), ("RX_QUEUE_LEN", "8192"),
    ("coll_hcoll_enable", "0"),
]
CKS_GB_SGLANG = [("MC_TE_METRIC", "true"), ("NCCL_CUMEM_ENABLE", "1"), ("NCCL_IB_ADDR_FAMILY", "AF_INET6"),
                 ("NCCL_MNNVL_ENABLE", "1"), ("NCCL_SOCKET_FAMILY", "AF_INET6"), ("NCCL_SOCKET_IFNAME", "eth0")]
DSHM = {"name": "dshm", "emptyDir": {"medium": "Memory"}}
DEVINF = {"name": "devinf", "hostPath": {"path": "/dev/infiniband"}}
RDMA_MOUNTS = [{"name": "dshm", "mountPath": "/dev/shm"}, {"name": "devinf", "mountPath": "/dev/infiniband"}]
WHERE = "error: <stdin>: InferenceService llama-demo/llama-3-2-3b-instruct: "
DENIED = WHERE + "engine pod: OME's pod webhook denies the pod: "
RDMA_RUNTIMES = sorted(p.relative_to(CATALOG / "runtimes" / "srt").as_posix()
                       for p in (CATALOG / "runtimes" / "srt").rglob("*.yaml")
                       if "rdma.ome.io/" in p.read_text() or "devinf" in p.read_text())


# ---------------------------------------------------------------- helpers

OLDER = "which OME v1.3's Helm chart writes"  # the info of a ConfigMap lacking chart keys


def ok(objects):
    run = render_objects(objects)
    assert run.code == 0, run.stderr
    for obj in run.objects:
        validate_k8s(obj)
    return run


def failed(objects):
    run = render_objects(objects)
    assert (run.code, run.stdout) == (1, "")
    return run


def config_map(**data):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "inferenceservice-config",
                                                                  "namespace": "ome"}, "data": data}


def with_annotations(F, annotations, where="engine"):
    F["isvc"]["spec"].setdefault(where, {})["annotations"] = annotations
    return list(F.values())


def engine_pod(run):
    return run.find("Deployment", "llama-3-2-3b-instruct-engine")["spec"]["template"]


def main(template):
    return next(c for c in template["spec"]["containers"] if c["name"] == "ome-container")


def env(container):
    return [(e["name"], e.get("value")) for e in container.get("env") or []]


def pod_templates(run):
    for obj in run.objects:
        if obj["kind"] == "Deployment":
            yield obj["metadata"]["name"], obj["spec"]["template"]
        elif obj["kind"] == "LeaderWorkerSet":
            group = obj["spec"]["leaderWorkerTemplate"]
            yield f"{obj['metadata']['name']} leader", group["leaderTemplate"]
            yield f"{obj['metadata']['name']} worker", group["workerTemplate"]


def assert_every_mount_has_a_volume(run):
    for name, template in pod_templates(run):
        volumes = [v["name"] for v in template["spec"].get("volumes") or []]
        assert len(volumes) == len(set(volumes)), name
        for container in template["spec"]["containers"] + template["spec"].get("initContainers", []):
            for mount in container.get("volumeMounts") or []:
                assert mount["name"] in volumes, (name, container["name"], mount["name"])


def catalog_inputs(file, isvc_name="deepseek-r1", namespace="deepseek-r1", model_name=None):
    """The runtime with its model, and an InferenceService shaped like OME's sample
    config/samples/isvc/deepseek-ai/deepseek-r1.yaml (model and runtime by name, engine 1..1)."""
    runtime = load_runtime(CATALOG / "runtimes" / "srt" / file)
    model = completed_model(models()[model_name or paired_model_name(runtime)], runtime)
    spec = {"model": {"name": model["metadata"]["name"]}, "runtime": {"name": runtime["metadata"]["name"]},
            "engine": {"minReplicas": 1, "maxReplicas": 1}}
    for component, key in (("decoder", "decoderConfig"), ("router", "routerConfig")):
        if key in runtime["spec"]:
            spec[component] = {}
    isvc = {"apiVersion": "ome.io/v1beta1", "kind": "InferenceService",
            "metadata": {"name": isvc_name, "namespace": namespace}, "spec": spec}
    return [model, runtime, isvc]


# ---------------------------------------------------------------- the catalog's RDMA runtimes

def test_the_sample_deepseek_r1_on_srt_deepseek_rdma_gets_the_oci_roce_profile():
    run = ok(catalog_inputs("deepseek-rdma-rt.yaml", model_name="deepseek-r1"))
    assert run.lines == [CHART_DEFAULTS_INFO, "info: <stdin>: InferenceService deepseek-r1/deepseek-r1: engine has a leader and worker and "
                         "no explicit deployment mode; OME v1.3 would run it as OMENative, omerender renders it as "
                         "MultiNode (LeaderWorkerSet)"]
    group = run.find("LeaderWorkerSet")["spec"]["leaderWorkerTemplate"]
    leader, worker = group["leaderTemplate"], group["workerTemplate"]
    # the leader's runtime mounts dshm and devinf without volumes: the profile supplies them, after the model's
    assert [v["name"] for v in leader["spec"]["volumes"]] == ["deepseek-r1", "dshm", "devinf"]
    assert leader["spec"]["volumes"][1:] == [DSHM, DEVINF]
    # the worker's runtime defines both volumes itself: kept as written, not added twice
    assert [v["name"] for v in worker["spec"]["volumes"]] == ["dshm", "devinf", "deepseek-r1"]
    for template in (leader, worker):
        container = main(template)
        names = [name for name, _ in env(container)]
        assert len(names) == len(set(names))
        # the runtime's GLOO_SOCKET_IFNAME stays where it is; every other oci-roce variable follows the runtime's own
        added = [pair for pair in env(container) if pair[0] in dict(OCI_ROCE)]
        assert added == [("GLOO_SOCKET_IFNAME", "eth0")] + [p for p in OCI_ROCE if p[0] != "GLOO_SOCKET_IFNAME"]
        assert env(container)[-18:] == [p for p in OCI_ROCE if p[0] != "GLOO_SOCKET_IFNAME"]
        assert [m["name"] for m in container["volumeMounts"]] == ["dshm", "devinf", "deepseek-r1"]
        # the runtime's own capabilities and privileged stay; IPC_LOCK is there once
        assert container["securityContext"] == {"capabilities": {"add": ["IPC_LOCK", "CAP_SYS_ADMIN"]},
                                                "privileged": True}
        assert template["spec"]["hostNetwork"] is True
        assert template["metadata"]["annotations"]["ome.io/enable-metric-aggregation"] == "false"
    assert_every_mount_has_a_volume(run)


@pytest.mark.parametrize("file", RDMA_RUNTIMES)
def test_every_catalog_runtime_with_rdma_annotations_renders_pods_the_profile_completes(file):
    run = ok(catalog_inputs(file, "svc", "serving"))
    assert not [line for line in run.lines if "names no volume" in line]
    assert_every_mount_has_a_volume(run)
    injected = 0
    for name, template in pod_templates(run):
        annotations = template["metadata"].get("annotations") or {}
        if annotations.get("rdma.ome.io/auto-inject") != "true":
            continue
        injected += 1
        assert annotations["rdma.ome.io/profile"] == "oci-roce"
        volumes = {v["name"]: v for v in template["spec"]["volumes"]}
        assert "dshm" in volumes and volumes["devinf"] == DEVINF, name
        container = main(template)
        values = dict(env(container))
        assert len(values) == len(container["env"]), name
        assert all(name in values for name, _ in OCI_ROCE)
        mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
        assert mounts["dshm"] == "/dev/shm" and mounts["devinf"] == "/dev/infiniband"
        assert container["securityContext"]["capabilities"]["add"].count("IPC_LOCK") == 1
    runtime = load_runtime(CATALOG / "runtimes" / "srt" / file)
    asks = "rdma.ome.io/auto-inject" in json.dumps(runtime)
    assert (injected > 0) == asks


def test_a_pd_runtime_on_deployments_gets_devinf_and_ipc_lock_from_the_profile():
    run = ok(catalog_inputs("mistral-7b-instruct-pd-rt.yaml", "chat", "serving"))
    for component in ("engine", "decoder"):
        template = run.find("Deployment", f"chat-{component}")["spec"]["template"]
        container = main(template)
        assert [v for v in template["spec"]["volumes"] if v["name"] == "devinf"] == [DEVINF]
        assert {"name": "devinf", "mountPath": "/dev/infiniband"} in container["volumeMounts"]
        assert "IPC_LOCK" in container["securityContext"]["capabilities"]["add"]
        assert env(container)[-len(OCI_ROCE):] == OCI_ROCE


# ---------------------------------------------------------------- RDMA profiles, triggers, idempotence

def test_oci_roce_is_the_default_profile_and_adds_exactly_its_fields(F):
    F["runtime"]["spec"]["engineConfig"].pop("volumes")
    F["runtime"]["spec"]["engineConfig"]["runner"].pop("volumeMounts")
    template = engine_pod(ok(with_annotations(F, {"rdma.ome.io/auto-inject": "true"})))
    container = main(template)
    assert [v["name"] for v in template["spec"]["volumes"]] == ["llama-3-2-3b-instruct", "dshm", "devinf"]
    assert template["spec"]["volumes"][1:] == [DSHM, DEVINF]
    assert env(container)[-len(OCI_ROCE):] == OCI_ROCE
    assert container["volumeMounts"][-2:] == RDMA_MOUNTS
    assert container["securityContext"] == {"capabilities": {"add": ["IPC_LOCK"]}}


def test_cks_gb_sglang_adds_its_own_environment_and_the_same_mounts(F):
    F["runtime"]["spec"]["engineConfig"].pop("volumes")
    F["runtime"]["spec"]["engineConfig"]["runner"].pop("volumeMounts")
    template = engine_pod(ok(with_annotations(F, {"rdma.ome.io/auto-inject": "true",
                                                  "rdma.ome.io/profile": "cks-gb-sglang"})))
    container = main(template)
    assert env(container)[-len(CKS_GB_SGLANG):] == CKS_GB_SGLANG
    assert "NCCL_DEBUG" not in dict(env(container))
    assert template["spec"]["volumes"][-2:] == [DSHM, DEVINF]
    assert container["volumeMounts"][-2:] == RDMA_MOUNTS
    assert container["securityContext"] == {"capabilities": {"add": ["IPC_LOCK"]}}
    assert "privileged" not in container["securityContext"]


CKS_NETWORKS = [{"name": f"ibs{h}p{p}-macvlan", "namespace": "cw-multus"} for h in range(4) for p in range(4)]


def test_cks_gb_rdma_adds_only_the_sixteen_multus_attachments(F):
    run = ok(with_annotations(F, {"rdma.ome.io/auto-inject": "true", "rdma.ome.io/profile": "cks-gb-rdma"}))
    template = engine_pod(run)
    before = engine_pod(ok(with_annotations(copy.deepcopy(F), {})))
    assert template["spec"] == before["spec"]
    text = template["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"]
    assert json.loads(text) == CKS_NETWORKS
    assert text.startswith('[{"name":"ibs0p0-macvlan","namespace":"cw-multus"},{"name":"ibs0p1-macvlan"')
    # a pod-only key: the Service does not get it
    service = run.find("Service", "llama-3-2-3b-instruct-engine")
    assert "k8s.v1.cni.cncf.io/networks" not in (service["metadata"].get("annotations") or {})


def test_cks_gb_rdma_merges_into_the_networks_the_pod_asks_for(F):
    existing = '[{"name":"ibs0p0-macvlan","namespace":"cw-multus","interface":"net1"},{"name":"storage"}]'
    template = engine_pod(ok(with_annotations(F, {"rdma.ome.io/auto-inject": "true",
                                                  "rdma.ome.io/profile": "cks-gb-rdma",
                                                  "k8s.v1.cni.cncf.io/networks": existing})))
    merged = json.loads(template["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"])
    # decoded as OME decodes it ({name, namespace}: other fields dropped), kept first, then the profile's others
    assert merged == [{"name": "ibs0p0-macvlan", "namespace": "cw-multus"}, {"name": "storage"}] + CKS_NETWORKS[1:]


@pytest.mark.parametrize("value,error", [
    ("net1,net2", "invalid character 'e' in literal null (expecting 'u')"),
    ('{"name": "x"}', "json: cannot unmarshal object into Go value of type []pod.NetworkAttachment"),
])
def test_a_networks_annotation_ome_cannot_read_denies_the_pod(F, value, error):
    run = failed(with_annotations(F, {"rdma.ome.io/auto-inject": "true", "rdma.ome.io/profile": "cks-gb-rdma",
                                      "k8s.v1.cni.cncf.io/networks": value}))
    assert run.lines == [f"{DENIED}rdma-injector: k8s.v1.cni.cncf.io/networks annotation is not a valid JSON array: "
                         f"{error}"]


def test_an_unknown_rdma_profile_denies_the_pod(F):
    run = failed(with_annotations(F, {"rdma.ome.io/auto-inject": "true", "rdma.ome.io/profile": "oci-rocee"}))
    assert run.lines == [f'{DENIED}unknown RDMA profile: "oci-rocee" (rdma.ome.io/profile); OME v1.3 has oci-roce, '
                         f"cks-gb-sglang, cks-gb-rdma"]


@pytest.mark.parametrize("annotations", [
    {"rdma.ome.io/profile": "oci-roce"},                                    # no auto-inject
    {"rdma.ome.io/auto-inject": "True", "rdma.ome.io/profile": "bogus"},   # "true" exactly
    {"rdma.ome.io/auto-inject": "yes"},
    {"rdma.ome.io/auto-inject": "true", "rdma.ome.io/container-name": "sidecar"},   # no such container
])
def test_rdma_needs_auto_inject_true_and_the_target_container(F, annotations):
    baseline = engine_pod(ok(with_annotations(copy.deepcopy(F), {})))
    template = engine_pod(ok(with_annotations(F, annotations)))
    assert template["spec"] == baseline["spec"]


def test_the_container_name_annotation_picks_the_container(F):
    runner = F["runtime"]["spec"]["engineConfig"]["runner"]
    F["runtime"]["spec"]["engineConfig"]["containers"] = [{"name": "helper", "image": "busybox"}]
    runner["name"] = "ome-container"
    template = engine_pod(ok(with_annotations(F, {"rdma.ome.io/auto-inject": "true",
                                                  "rdma.ome.io/container-name": "helper"})))
    helper = next(c for c in template["spec"]["containers"] if c["name"] == "helper")
    assert env(helper) == OCI_ROCE
    assert "NCCL_DEBUG" not in dict(env(main(template)))


def test_what_the_runtime_defines_wins_and_nothing_is_added_twice(F):
    engine = F["runtime"]["spec"]["engineConfig"]
    engine["volumes"] = [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "64Gi"}},
                         {"name": "devinf", "hostPath": {"path": "/dev/infiniband", "type": "Directory"}}]
    engine["runner"]["volumeMounts"] = [{"name": "dshm", "mountPath": "/shm"}]
    engine["runner"]["env"] = [{"name": "NCCL_DEBUG", "value": "WARN"}]
    engine["runner"]["securityContext"] = {"capabilities": {"add": ["SYS_PTRACE", "IPC_LOCK"], "drop": ["NET_RAW"]},
                                           "privileged": False}
    template = engine_pod(ok(with_annotations(F, {"rdma.ome.io/auto-inject": "true"})))
    container = main(template)
    assert [v for v in template["spec"]["volumes"] if v["name"] in ("dshm", "devinf")] == engine["volumes"]
    assert [m for m in container["volumeMounts"] if m["name"] in ("dshm", "devinf")] == [
        {"name": "dshm", "mountPath": "/shm"}, {"name": "devinf", "mountPath": "/dev/infiniband"}]
    values = env(container)
    assert ("NCCL_DEBUG", "WARN") in values and [n for n, _ in values].count("NCCL_DEBUG") == 1
    assert container["securityContext"] == {"capabilities": {"add": ["SYS_PTRACE", "IPC_LOCK"], "drop": ["NET_RAW"]},
                                            "privileged": False}


def test_a_security_context_without_capabilities_gets_ipc_lock(F):
    F["runtime"]["spec"]["engineConfig"]["runner"]["securityContext"] = {"runAsUser": 1000}
    container = main(engine_pod(ok(with_annotations(F, {"rdma.ome.io/auto-inject": "true"}))))
    assert container["securityContext"] == {"runAsUser": 1000, "capabilities": {"add": ["IPC_LOCK"]}}


def test_rdma_annotations_on_the_inferenceservice_reach_every_pod_the_router_skips_itself(F):
    F["isvc"]["metadata"]["annotations"] = {"rdma.ome.io/auto-inject": "true"}
    run = ok(list(F.values()))
    assert "NCCL_DEBUG" in dict(env(main(engine_pod(run))))
    router = run.find("Deployment", "llama-3-2-3b-instruct-router")["spec"]["template"]
    assert "NCCL_DEBUG" not in dict(env(router["spec"]["containers"][0]))   # no ome-container: skipped


# ---------------------------------------------------------------- runtime profiles

def test_shm_profile_default_mounts_a_memory_emptydir(F):
    F["runtime"]["spec"]["engineConfig"].pop("volumes")
    F["runtime"]["spec"]["engineConfig"]["runner"].pop("volumeMounts")
    template = engine_pod(ok(with_annotations(F, {"runtime.ome.io/shm-profile": "default"})))
    assert template["spec"]["volumes"][-1] == DSHM
    assert main(template)["volumeMounts"][-1] == {"name": "dshm", "mountPath": "/dev/shm"}


def test_shm_profile_adds_nothing_the_runtime_has(F):
    baseline = engine_pod(ok(with_annotations(copy.deepcopy(F), {})))
    template = engine_pod(ok(with_annotations(F, {"runtime.ome.io/shm-profile": "default"})))
    assert template["spec"] == baseline["spec"]


def _probeless(F):
    runner = F["runtime"]["spec"]["engineConfig"]["runner"]
    for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
        runner.pop(probe)
    return F


@pytest.mark.parametrize("profile", ["sglang-http", "vllm-http"])
def test_probe_profile_adds_the_probes_the_container_lacks(F, profile):
    _probeless(F)["runtime"]["spec"]["engineConfig"]["runner"]["livenessProbe"] = {"tcpSocket": {"port": 8080}}
    container = main(engine_pod(ok(with_annotations(F, {"runtime.ome.io/probe-profile": profile,
                                                        "runtime.ome.io/probe-port": "8080"}))))
    assert container["livenessProbe"] == {"tcpSocket": {"port": 8080}}
    assert container["startupProbe"] == {"httpGet": {"path": "/health", "port": 8080}, "initialDelaySeconds": 60,
                                         "periodSeconds": 30, "timeoutSeconds": 30, "failureThreshold": 60}
    # OME's controller gives a RawDeployment container without one a TCP readiness probe first; the webhook keeps it
    assert container["readinessProbe"]["tcpSocket"] == {"port": 8080}


def test_probe_profile_readiness_where_the_controller_adds_none(F):
    runtime = load_runtime(CATALOG / "runtimes" / "srt" / "deepseek-rdma-rt.yaml")
    leader = runtime["spec"]["engineConfig"]["leader"]
    leader["runner"].pop("readinessProbe")
    runtime["spec"]["engineConfig"]["annotations"]["runtime.ome.io/probe-profile"] = "sglang-http"
    inputs = catalog_inputs("deepseek-rdma-rt.yaml", model_name="deepseek-r1")
    inputs[1] = runtime
    group = ok(inputs).find("LeaderWorkerSet")["spec"]["leaderWorkerTemplate"]
    container = main(group["leaderTemplate"])
    assert container["readinessProbe"] == {"httpGet": {"path": "/health", "port": 30000}, "initialDelaySeconds": 60,
                                           "periodSeconds": 30, "timeoutSeconds": 30, "failureThreshold": 5,
                                           "successThreshold": 1}
    assert container["livenessProbe"]["httpGet"] == {"path": "/health", "port": 8080}   # the runtime's own


def test_probe_profile_liveness_and_the_default_port(F):
    _probeless(F)
    container = main(engine_pod(ok(with_annotations(F, {"runtime.ome.io/probe-profile": "sglang-http"}))))
    assert container["livenessProbe"] == {"httpGet": {"path": "/health", "port": 30000}, "periodSeconds": 60,
                                          "timeoutSeconds": 30, "failureThreshold": 5}
    assert container["startupProbe"]["httpGet"] == {"path": "/health", "port": 30000}


@pytest.mark.parametrize("key", ["runtime.ome.io/probe-port", "runtime.ome.io/observability-port"])
@pytest.mark.parametrize("port", ["abc", "0", "70000", "-1", " 80", "1e3"])
def test_an_invalid_port_denies_the_pod(F, key, port):
    profile = "probe-profile" if "probe" in key else "observability-profile"
    value = "sglang-http" if "probe" in key else "prometheus"
    run = failed(with_annotations(F, {f"runtime.ome.io/{profile}": value, key: port}))
    assert run.lines == [f'{DENIED}invalid port "{port}" (annotation {key}); give a port from 1 to 65535']


def test_a_signed_port_is_read_as_go_reads_it(F):
    F["runtime"]["spec"]["engineConfig"].pop("annotations")
    run = ok(with_annotations(F, {"runtime.ome.io/observability-profile": "prometheus",
                                  "runtime.ome.io/observability-port": "+9100"}))
    assert engine_pod(run)["metadata"]["annotations"]["prometheus.io/port"] == "9100"


def test_observability_profile_sets_only_what_the_pod_lacks(F):
    run = ok(with_annotations(F, {"runtime.ome.io/observability-profile": "prometheus"}))
    annotations = engine_pod(run)["metadata"]["annotations"]
    # the runtime's prometheus.io/* (8080) win over the profile's default port
    assert (annotations["prometheus.io/scrape"], annotations["prometheus.io/port"],
            annotations["prometheus.io/path"]) == ("true", "8080", "/metrics")
    router = run.find("Deployment", "llama-3-2-3b-instruct-router")["spec"]["template"]["metadata"]["annotations"]
    assert "prometheus.io/scrape" not in router


def test_observability_profile_fills_an_unannotated_pod(F):
    F["runtime"]["spec"]["engineConfig"].pop("annotations")
    annotations = engine_pod(ok(with_annotations(F, {"runtime.ome.io/observability-profile": "prometheus"})))[
        "metadata"]["annotations"]
    assert (annotations["prometheus.io/scrape"], annotations["prometheus.io/port"],
            annotations["prometheus.io/path"]) == ("true", "30000", "/metrics")


@pytest.mark.parametrize("key,kind,known", [
    ("runtime.ome.io/shm-profile", "shm", "default"),
    ("runtime.ome.io/probe-profile", "probe", "sglang-http, vllm-http"),
    ("runtime.ome.io/observability-profile", "observability", "prometheus"),
])
def test_an_unknown_runtime_profile_denies_the_pod(F, key, kind, known):
    run = failed(with_annotations(F, {key: "bogus"}))
    assert run.lines == [f'{DENIED}unknown {kind} profile: "bogus" ({key}); OME v1.3 has {known}']


def test_runtime_profiles_skip_a_pod_without_the_target_container(F):
    _probeless(F)
    baseline = engine_pod(ok(with_annotations(copy.deepcopy(F), {})))
    template = engine_pod(ok(with_annotations(F, {"runtime.ome.io/probe-profile": "sglang-http",
                                                  "runtime.ome.io/container-name": "other"})))
    assert template["spec"] == baseline["spec"]


# ---------------------------------------------------------------- metrics aggregation and Prometheus defaults

DEFAULTS = {"ome.io/enable-metric-aggregation": "false", "ome.io/enable-prometheus-scraping": "false"}


def test_every_pod_gets_the_charts_metrics_defaults_and_no_service_does(F):
    run = ok(list(F.values()))
    for name, template in pod_templates(run):
        assert {k: template["metadata"]["annotations"][k] for k in DEFAULTS} == DEFAULTS, name
    for obj in run.objects:
        if obj["kind"] != "Deployment":
            assert not set(DEFAULTS) & set((obj["metadata"].get("annotations") or {})), obj["kind"]


def test_scraping_on_overwrites_the_prometheus_port_and_path(F):
    objects = list(F.values()) + [config_map(metricsAggregator='{"enablePrometheusScraping": "true"}')]
    annotations = engine_pod(ok(objects))["metadata"]["annotations"]
    assert {k: annotations[k] for k in ("ome.io/enable-metric-aggregation", "ome.io/enable-prometheus-scraping",
                                        "prometheus.io/port", "prometheus.io/path", "prometheus.io/scrape")} == {
        "ome.io/enable-metric-aggregation": "", "ome.io/enable-prometheus-scraping": "true",
        "prometheus.io/port": "9091", "prometheus.io/path": "/metrics", "prometheus.io/scrape": "true"}


def test_aggregation_configures_a_queue_proxy_container_and_moves_the_port(F):
    F["runtime"]["spec"]["engineConfig"]["containers"] = [
        {"name": "queue-proxy", "image": "qp", "env": [{"name": "AGGREGATE_PROMETHEUS_METRICS_PORT", "value": "1"}]}]
    F["runtime"]["spec"]["engineConfig"]["annotations"]["prometheus.ome.io/port"] = "30000"
    data = '{"enableMetricAggregation": "true", "enablePrometheusScraping": "true"}'
    template = engine_pod(ok(list(F.values()) + [config_map(metricsAggregator=data)]))
    assert template["metadata"]["annotations"]["prometheus.io/port"] == "9088"
    proxy = next(c for c in template["spec"]["containers"] if c["name"] == "queue-proxy")
    assert env(proxy) == [("AGGREGATE_PROMETHEUS_METRICS_PORT", "9088"), ("CONTAINER_PROMETHEUS_METRICS_PORT", "30000"),
                          ("CONTAINER_PROMETHEUS_METRICS_PATH", "/metrics")]
    assert proxy["ports"] == [{"name": "aggr-metric", "containerPort": 9088, "protocol": "TCP"}]


def test_the_pods_own_keys_win_over_the_configmap(F):
    objects = with_annotations(F, {"ome.io/enable-prometheus-scraping": "true"}) + [config_map(
        metricsAggregator='{"enableMetricAggregation": "false", "enablePrometheusScraping": "false"}')]
    annotations = engine_pod(ok(objects))["metadata"]["annotations"]
    assert (annotations["ome.io/enable-prometheus-scraping"], annotations["prometheus.io/port"]) == ("true", "9091")


def test_a_configmap_without_the_key_writes_empty_values(F):
    objects = list(F.values()) + [config_map(deploy='{"defaultDeploymentMode": "RawDeployment"}')]
    annotations = engine_pod(ok(objects))["metadata"]["annotations"]
    assert {k: annotations[k] for k in DEFAULTS} == {k: "" for k in DEFAULTS}


@pytest.mark.parametrize("text,error", [
    ('{"enableMetricAggregation": true}', "json: cannot unmarshal bool into Go struct field "
                                          "MetricsAggregator.enableMetricAggregation of type string "),
    ("{", "unexpected end of JSON input "),
    ("null", "null: give an object, or remove the key"),
])
def test_a_metrics_aggregator_key_ome_cannot_read_is_an_error_at_the_configmap(F, text, error):
    run = failed(list(F.values()) + [config_map(metricsAggregator=text)])
    assert run.lines == ["error: <stdin>: ConfigMap ome/inferenceservice-config: data.metricsAggregator: OME's pod "
                         f"webhook denies every pod: unable to unmarshall metricsAggregator json string due to {error}"]


# ---------------------------------------------------------------- what needs OME's webhook

NEEDS = ("omerender cannot add it; apply this InferenceService on a cluster that runs OME's controller manager (its "
         "pod webhook), or remove the annotation")


@pytest.mark.parametrize("key,value,what", [
    ("ome.io/inject-model-init", "true", "the model-init init container (model decryption with OCI Vault)"),
    ("ome.io/inject-fine-tuned-adapter", "my-adapter",
     "the fine-tuned-adapter init container (the adapter from OCI Object Storage)"),
    ("ome.io/inject-serving-sidecar", "true",
     "the serving-sidecar container (fine-tuned weights from OCI Object Storage)"),
])
def test_the_oci_agent_containers_are_an_error_naming_the_annotation(F, key, value, what):
    run = failed(with_annotations(F, {key: value}))
    assert run.lines == [f'{WHERE}engine pod: {key}: "{value}" asks OME\'s pod webhook for {what}; {NEEDS}']


@pytest.mark.parametrize("annotations", [
    {"ome.io/inject-model-init": "false"}, {"ome.io/inject-model-init": "TRUE"},
    {"ome.io/inject-serving-sidecar": "yes"}, {"ome.io/inject-fine-tuned-adapter": ""},
])
def test_the_oci_agent_triggers_are_exact(F, annotations):
    ok(with_annotations(F, annotations))


def test_a_pod_that_already_has_the_containers_needs_no_webhook(F):
    engine = F["runtime"]["spec"]["engineConfig"]
    engine["initContainers"] = [{"name": "model-init", "image": "agent"}]
    engine["containers"] = [{"name": "serving-sidecar", "image": "agent"}]
    ok(with_annotations(F, {"ome.io/inject-model-init": "true", "ome.io/inject-serving-sidecar": "true"}))


# ---------------------------------------------------------------- order, and hostile values

def test_the_first_injector_in_the_webhooks_order_reports(F):
    run = failed(with_annotations(F, {"ome.io/inject-model-init": "true", "rdma.ome.io/auto-inject": "true",
                                      "rdma.ome.io/profile": "bogus"}))
    assert len(run.lines) == 1 and "ome.io/inject-model-init" in run.lines[0]


def test_a_long_profile_value_is_quoted_short(F):
    value = "x" * 100_000
    run = failed(with_annotations(F, {"rdma.ome.io/auto-inject": "true", "rdma.ome.io/profile": value}))
    assert run.lines == [f'{DENIED}unknown RDMA profile: "{"x" * 64}..." (100,000 characters) (rdma.ome.io/profile); '
                         f"OME v1.3 has oci-roce, cks-gb-sglang, cks-gb-rdma"]


def test_control_characters_in_a_value_stay_on_one_line(F):
    run = failed(with_annotations(F, {"runtime.ome.io/shm-profile": "a\nerror: forged\x1b[31m"}))
    assert run.lines == [f'{DENIED}unknown shm profile: "a\\nerror: forged\\x1b[31m" (runtime.ome.io/shm-profile); '
                         f"OME v1.3 has default"]


def test_a_deeply_nested_networks_annotation_is_refused_without_a_traceback(F):
    bomb = "[" * 20_000 + "]" * 20_000
    run = failed(with_annotations(F, {"rdma.ome.io/auto-inject": "true", "rdma.ome.io/profile": "cks-gb-rdma",
                                      "k8s.v1.cni.cncf.io/networks": bomb}))
    assert len(run.lines) == 1
    assert run.lines[0].startswith(f"{DENIED}rdma-injector: k8s.v1.cni.cncf.io/networks annotation is not a valid "
                                   f"JSON array: ")
    assert "Traceback" not in run.stderr


def test_a_long_networks_annotation_is_merged_in_bounded_time(F):
    many = json.dumps([{"name": f"n{i}", "namespace": "ns"} for i in range(5_000)])   # within the 256 KiB limit
    template = engine_pod(ok(with_annotations(F, {"rdma.ome.io/auto-inject": "true",
                                                  "rdma.ome.io/profile": "cks-gb-rdma",
                                                  "k8s.v1.cni.cncf.io/networks": many})))
    assert len(json.loads(template["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"])) == 5_016


def test_go_escapes_html_characters_in_the_networks_annotation(F):
    existing = '[{"name":"a<b>&c"}]'
    template = engine_pod(ok(with_annotations(F, {"rdma.ome.io/auto-inject": "true",
                                                  "rdma.ome.io/profile": "cks-gb-rdma",
                                                  "k8s.v1.cni.cncf.io/networks": existing})))
    text = template["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"]
    assert text.startswith('[{"name":"a\\u003cb\\u003e\\u0026c"},')


def test_two_renders_are_identical():
    inputs = catalog_inputs("deepseek-rdma-rt.yaml", model_name="deepseek-r1")
    assert render_objects(inputs).stdout == render_objects(copy.deepcopy(inputs)).stdout


def test_the_inputs_are_not_changed_by_the_render():
    inputs = catalog_inputs("deepseek-rdma-rt.yaml", model_name="deepseek-r1")
    before = copy.deepcopy(inputs)
    ok(inputs)
    assert inputs == before
    assert load_yaml(CATALOG / "runtimes" / "srt" / "deepseek-rdma-rt.yaml")[0] == before[1]


def test_the_metrics_aggregator_key_gets_the_configmap_warnings(F):
    data = '{"enableMetricAggregaton": "true", "enableprometheusscraping": "true"}'
    run = ok(list(F.values()) + [config_map(metricsAggregator=data)])
    where = "warning: <stdin>: ConfigMap ome/inferenceservice-config: data.metricsAggregator: "
    assert [line for line in run.lines if OLDER not in line] == [f'{where}unknown field enableMetricAggregaton is ignored, as OME ignores it; did you mean '
                         '"enableMetricAggregation"?',
                         f"{where}enableprometheusscraping is read as enablePrometheusScraping (OME matches field "
                         f"names ignoring case); write enablePrometheusScraping"]
    annotations = engine_pod(run)["metadata"]["annotations"]
    assert (annotations["ome.io/enable-metric-aggregation"], annotations["ome.io/enable-prometheus-scraping"]) == (
        "", "true")


def test_config_shows_the_metrics_aggregator_settings(tmp_path):
    path = tmp_path / "cm.yaml"
    path.write_text(yaml.safe_dump(config_map(metricsAggregator='{"enablePrometheusScraping": "true"}')))
    run = run_cli("config", "-o", "json", str(path))
    assert run.code == 0
    rows = [r for r in json.loads(run.stdout)["settings"] if r["setting"].startswith("metricsAggregator.")]
    assert rows == [
        {"setting": "metricsAggregator.enableMetricAggregation", "value": "", "source": "OME default"},
        {"setting": "metricsAggregator.enablePrometheusScraping", "value": "true", "source": f"configmap {path}"}]
