"""GPU sanity warnings (omerender/ome/accelerators/gpus.py): a runner asking for more GPUs than its accelerator class
has, through the CLI. The parallelism flags against GPUs per pod × pods are tested in
test_caught_before_the_cluster.py."""
from conftest import FIXTURES, load_yaml, render_objects

def gpus(n):
    return {"limits": {"nvidia.com/gpu": n}, "requests": {"nvidia.com/gpu": n}}


def warnings_of(objects):
    run = render_objects(objects)
    assert run.code == 0, run.stderr
    return [line for line in run.lines if "GPUs and the pod" in line or "more than the" in line]


def test_matching_tp_flag_and_gpus_gives_no_warning(F):
    assert warnings_of(list(F.values())) == []


def test_gpu_request_above_the_class():
    objects = load_yaml(FIXTURES / "accelerators-70b" / "classes.yaml")
    rest = [o for p in sorted((FIXTURES / "accelerators-70b").glob("*.yaml")) if p.name != "classes.yaml"
            and p.name != "kustomization.yaml" for o in load_yaml(p)]
    isvc = next(o for o in rest if o["kind"] == "InferenceService")
    isvc["spec"].setdefault("engine", {}).setdefault("runner", {})["resources"] = gpus(16)
    run = render_objects(objects + rest)
    assert run.code == 0, run.stderr
    over = [line for line in run.lines if "more than the" in line]
    assert len(over) == 1 and "engine runner ome-container: asks for 16 nvidia.com/gpu, more than the 8 of " \
        "accelerator class nvidia-" in over[0] and over[0].endswith(
        "; no node of that class can run the pod (lower the runner's resources or choose a larger class)")
    isvc["spec"]["engine"]["runner"]["resources"] = gpus(8)
    run = render_objects(objects + rest)
    assert [line for line in run.lines if "more than the" in line] == []
