"""GPU sanity warnings (omerender/gpus.py): a runner asking for more GPUs than its accelerator class has, and a
tensor-parallel flag that disagrees with GPUs per pod × pods, through the CLI."""
import copy

import pytest

from conftest import FIXTURES, load_yaml, render_objects

ISVC = "warning: <stdin>: InferenceService llama-demo/llama-3-2-3b-instruct: "


def gpus(n):
    return {"limits": {"nvidia.com/gpu": n}, "requests": {"nvidia.com/gpu": n}}


def warnings_of(objects):
    run = render_objects(objects)
    assert run.code == 0, run.stderr
    return [line for line in run.lines if "GPUs it gets" in line or "more than the" in line]


def test_matching_tp_flag_and_gpus_gives_no_warning(F):
    assert warnings_of(list(F.values())) == []


def test_more_gpus_than_the_tp_flag(F):
    F["isvc"]["spec"]["engine"]["runner"]["resources"] = gpus(2)
    assert warnings_of(list(F.values())) == [
        ISVC + "engine runner ome-container: --tp-size 1 does not match the 2 GPUs it gets (2 nvidia.com/gpu); set "
        "the flag to 2 or change the GPU count"]


@pytest.mark.parametrize("args, flag", [(["--tp", "4"], "--tp 4"), (["--tp=4"], "--tp 4"),
                                        (["--tensor-parallel-size=4"], "--tensor-parallel-size 4"),
                                        (["--tp-size", "4"], "--tp-size 4")])
def test_each_flag_in_both_forms(F, args, flag):
    command = F["runtime"]["spec"]["engineConfig"]["runner"]["command"]
    at = command.index("--tp-size")
    del command[at:at + 2]
    F["isvc"]["spec"]["engine"]["runner"]["args"] = args
    assert warnings_of(list(F.values())) == [
        ISVC + f"engine runner ome-container: {flag} does not match the 1 GPUs it gets (1 nvidia.com/gpu); set the "
        "flag to 1 or change the GPU count"]


def test_multiline_args_are_read(F):
    command = F["runtime"]["spec"]["engineConfig"]["runner"]["command"]
    at = command.index("--tp-size")
    del command[at:at + 2]
    F["isvc"]["spec"]["engine"]["runner"]["args"] = ["--port 8080 \\\n  --tp 2 \\\n  --mem-frac 0.9"]
    (line,) = warnings_of(list(F.values()))
    assert "--tp 2 does not match the 1 GPUs it gets" in line


def test_pipeline_parallel_counts_and_data_parallel_skips(F):
    F["isvc"]["spec"]["engine"]["runner"]["resources"] = gpus(2)
    F["isvc"]["spec"]["engine"]["runner"]["args"] = ["--pp-size", "2"]
    assert warnings_of(list(F.values())) == []
    F["isvc"]["spec"]["engine"]["runner"]["args"] = ["--dp", "2"]
    assert warnings_of(list(F.values())) == []


def test_non_numeric_flag_value_is_not_judged(F):
    F["isvc"]["spec"]["engine"]["runner"]["resources"] = gpus(4)
    F["isvc"]["spec"]["engine"]["runner"]["args"] = ["--tp-size", "$(PARALLELISM_SIZE)"]
    assert warnings_of(list(F.values())) == []


def test_multinode_counts_leader_and_workers(F):
    engine = F["isvc"]["spec"]["engine"]
    engine["annotations"] = {"ome.io/deploymentMode": "MultiNode"}
    runner = {"name": "ome-container", "image": "i", "resources": gpus(8), "args": ["--tp", "8"]}
    engine["leader"] = {"runner": copy.deepcopy(runner)}
    engine["worker"] = {"size": 1, "runner": copy.deepcopy(runner)}
    lines = warnings_of(list(F.values()))
    assert ISVC + ("engine.leader runner ome-container: --tp 8 does not match the 16 GPUs it gets (8 nvidia.com/gpu "
                   "per pod × 2 pods); set the flag to 16 or change the GPU count") in lines
    engine["leader"]["runner"]["args"] = ["--tp", "16"]
    engine["worker"]["runner"]["args"] = ["--tp", "16"]
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
