"""--model-weights download over the whole catalog (api.md §9.8's sweep): every runtime with its model renders
(exit 0), with nothing of OME left in the pods, every mount backed by a volume and every claim by a
PersistentVolumeClaim of the output, every object valid, and the same bytes twice."""
from collections import Counter

import pytest

from catalog import runtime_files
from conftest import CATALOG, render_objects, validate_k8s
from test_catalog_sweep import COHERE, _case

ALLOWED_GROUPS = ("", "apps", "batch", "policy", "autoscaling", "rbac.authorization.k8s.io", "networking.k8s.io",
                  "leaderworkerset.x-k8s.io", "keda.sh", "gateway.networking.k8s.io", "gateway.envoyproxy.io",
                  "monitoring.coreos.com")

@pytest.fixture(scope="module")
def sweep():
    results = {}
    for path in runtime_files():
        runtime, model, objects = _case(path)
        rel = str(path.relative_to(CATALOG / "runtimes"))
        results[rel] = (model, objects, render_objects(objects, "--model-weights", "download"))
    return results


def pod_specs(obj: dict) -> list[dict]:
    if obj["kind"] == "Deployment":
        return [obj["spec"]["template"]["spec"]]
    if obj["kind"] == "LeaderWorkerSet":
        group = obj["spec"]["leaderWorkerTemplate"]
        return [group["leaderTemplate"]["spec"], group["workerTemplate"]["spec"]]
    if obj["kind"] == "Job":
        return [obj["spec"]["template"]["spec"]]
    return []


def test_every_catalog_runtime_renders_in_download_mode(sweep):
    counts = Counter()
    for rel, (model, _, run) in sweep.items():
        if rel == COHERE:  # its chat template is an invalid placeholder in either mode (test_catalog_sweep)
            assert run.code == 1
            continue
        assert run.code == 0, f"{rel}: {run.stderr}"
        assert all(line.startswith(("warning: ", "info: ")) for line in run.lines), rel
        assert "models.ome.io/" not in run.stdout, rel
        claims = {o["metadata"]["name"] for o in run.objects if o["kind"] == "PersistentVolumeClaim"}
        for obj in run.objects:
            validate_k8s(obj)
            assert obj["apiVersion"].rpartition("/")[0] in ALLOWED_GROUPS, f"{rel}: {obj['kind']}"
            counts[obj["kind"]] += 1
            for pod in pod_specs(obj):
                volumes = {v["name"]: v for v in pod.get("volumes") or []}
                host = {name for name, v in volumes.items() if "hostPath" in v}  # the runtime's own (/dev/infiniband)
                for container in pod.get("initContainers", []) + pod["containers"]:
                    model_path = next((e.get("value") for e in container.get("env") or []
                                       if e["name"] == "MODEL_PATH"), None)
                    for mount in container.get("volumeMounts") or []:
                        assert mount["name"] in volumes, f"{rel}: {container['name']} mounts {mount['name']}"
                        if mount["mountPath"] == model_path:  # no weights from a node's disk
                            assert mount["name"] not in host, rel
                for volume in volumes.values():
                    if "persistentVolumeClaim" in volume:
                        assert volume["persistentVolumeClaim"]["claimName"] in claims, rel
                serves = (obj["metadata"].get("labels") or {}).get("component") in ("engine", "decoder")
                if model and serves:  # every pod that mounts the model waits for it first
                    assert pod["initContainers"][0]["name"] == f"wait-{model}", rel
                    assert [v for v in volumes.values() if "persistentVolumeClaim" in v], rel
                    assert "nodeSelector" not in pod or not [k for k in pod["nodeSelector"] if "models.ome.io" in k]
        if model:
            assert len(claims) == 1 and counts["Job"] > 0, rel
    print(f"\ncatalog sweep, download: {dict(sorted(counts.items()))}")
    assert counts["LeaderWorkerSet"] > 0 and counts["PersistentVolumeClaim"] == counts["Job"] == 201


def test_two_renders_are_byte_identical(sweep):
    for rel, (_, objects, run) in list(sweep.items())[::7]:
        assert render_objects(objects, "--model-weights", "download").stdout == run.stdout, rel


def test_every_ome_sample_that_renders_fits_a_cluster_without_ome_in_download_mode():
    """api.md §9.9's sweep: each of OME's samples that renders today renders with --model-weights download, with no
    models.ome.io/ placement, no weights on a node's disk, every mount backed, every claim in the output, every kind
    a cluster without OME serves, every object valid and a second render the same."""
    from samples import assert_samples_fit_a_cluster_without_ome
    assert_samples_fit_a_cluster_without_ome("--model-weights", "download")
