"""Work shared across InferenceServices (issue 42 part 3, docs/explanation/performance.md): what depends only on
the runtime, the model, the class and the cluster's settings is computed once, yet each InferenceService gets the
messages of that work at its own file:line, and what one InferenceService changes in its objects never reaches
another's."""
from __future__ import annotations

import copy

import pytest
import yaml

from conftest import FIXTURES, run_cli
from omerender.errors import OmeError, Report
from omerender.kube.apirules import check_annotations, check_labels
from omerender.kube.shapes import check_pod
from omerender.ome import shared as shared_module
from omerender.ome.load import index
from omerender.ome.pinning import lock as lock_module
from omerender.ome.render import Options, render
from omerender.ome.workloads import parallel_flags
from omerender.yamlio.data import fingerprint
from omerender.yamlio.reading import read_paths

MODEL_AND_RUNTIME = (FIXTURES / "worked-example" / "inputs.yaml").read_text().split("\n---\n")[:2]
RUNTIME = "srt-llama-3-2-3b-instruct"
# A model of 70B parameters: the runtime (modelSizeRange 2B-4B) does not declare support for it, which selection
# warns about for every InferenceService that names the runtime with it.
BIG_MODEL = """\
apiVersion: ome.io/v1beta1
kind: ClusterBaseModel
metadata:
  name: big-model
spec:
  storage: {storageUri: "hf://meta-llama/Llama-3.3-70B-Instruct", path: /raid/models/big}
  modelFormat: {name: safetensors, version: "1.0.0"}
  modelFramework: {name: transformers, version: "4.45.0.dev0"}
  modelArchitecture: LlamaForCausalLM
  modelParameterSize: 70B
"""


def isvc(name: str, model: str = "big-model", engine: dict | None = None, namespace: str = "demo") -> str:
    return yaml.safe_dump({"apiVersion": "ome.io/v1beta1", "kind": "InferenceService",
                           "metadata": {"name": name, "namespace": namespace},
                           "spec": {"model": {"name": model}, "runtime": {"name": RUNTIME},
                                    "engine": engine or {"minReplicas": 1}}}, sort_keys=False)


@pytest.fixture
def repo(tmp_path, monkeypatch):
    (tmp_path / "runtime.yaml").write_text("\n---\n".join(MODEL_AND_RUNTIME) + "\n")
    (tmp_path / "big.yaml").write_text(BIG_MODEL)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def counting_resolve(monkeypatch) -> list:
    """Count the selections actually computed (the rest are shared)."""
    calls = []
    real = lock_module.resolve

    def counted(*args, **kwargs):
        calls.append(args[0].name)
        return real(*args, **kwargs)

    monkeypatch.setattr(lock_module, "resolve", counted)
    return calls


def test_a_shared_selection_warns_each_inferenceservice_at_its_own_line(repo, monkeypatch):
    (repo / "a.yaml").write_text("# two lines before the object\n# so that it starts on line 3\n" + isvc("a"))
    (repo / "b.yaml").write_text(isvc("b"))
    calls = counting_resolve(monkeypatch)
    run = run_cli("render", ".")
    assert run.code == 0, run.stderr
    assert calls == ["a"]  # b shares a's selection
    text = ('runtime "srt-llama-3-2-3b-instruct" does not declare support for model "big-model" (runtime '
            "srt-llama-3-2-3b-instruct does not support model safetensors: model size 70B is outside supported "
            "range [2B, 4B]); proceeding because the runtime was named explicitly [runtime-unsupported-model]")
    assert [line for line in run.printed.splitlines() if "runtime-unsupported-model" in line] == [
        f"warning: ./a.yaml:3:1: InferenceService demo/a: {text}",
        f"warning: ./b.yaml:1:1: InferenceService demo/b: {text}",
    ]


def test_a_named_selection_is_shared_across_namespaces_that_hold_the_same_for_it(repo, monkeypatch):
    """The runtime and model are cluster-scoped: a and b, in two namespaces, resolve alike and share one selection;
    c's namespace holds a BaseModel of the model's name, which shadows the ClusterBaseModel, so c resolves its own
    and alone gets the warning that says so."""
    shadow = BIG_MODEL.replace("kind: ClusterBaseModel", "kind: BaseModel").replace(
        "name: big-model\n", "name: big-model\n  namespace: third\n")
    (repo / "shadow.yaml").write_text(shadow)
    (repo / "a.yaml").write_text(isvc("a"))
    (repo / "b.yaml").write_text("# one line before\n" + isvc("b", namespace="other"))
    (repo / "c.yaml").write_text(isvc("c", namespace="third"))
    calls = counting_resolve(monkeypatch)
    run = run_cli("render", ".")
    assert run.code == 0, run.stderr
    assert calls == ["a", "c"]
    unsupported = [line.split(": InferenceService ")[1].split(":")[0] for line in run.printed.splitlines()
                   if "runtime-unsupported-model" in line]
    assert unsupported == ["demo/a", "other/b", "third/c"]
    assert [line.split(": InferenceService ")[0] for line in run.printed.splitlines()
            if "runtime-unsupported-model" in line] == ["warning: ./a.yaml:1:1", "warning: ./b.yaml:2:1",
                                                        "warning: ./c.yaml:1:1"]
    assert [line for line in run.printed.splitlines() if "basemodel-shadows-cluster" in line] == [
        "warning: ./c.yaml:1:1: InferenceService third/c: BaseModel third/big-model shadows ClusterBaseModel "
        "big-model; OME serves the BaseModel [basemodel-shadows-cluster]"]


def test_a_runtimes_support_of_a_model_is_judged_once_for_selections_that_differ_elsewhere(repo, monkeypatch):
    """a and b name the runtime with the model but select apart (b's engine brings its own runner image, which OME's
    admission check reads): each resolves its own selection, the format and size checks run once for the pair, and
    each gets the warning at its own place, with the size range the runtime gives that cannot be read said too."""
    from omerender.ome.selection import named
    runtime = (repo / "runtime.yaml").read_text()
    (repo / "runtime.yaml").write_text(runtime.replace("modelSizeRange: {min: 2B,", "modelSizeRange: {min: few,"))
    (repo / "a.yaml").write_text(isvc("a"))
    (repo / "b.yaml").write_text("# one line before\n" + isvc("b", engine={"runner": {"image": "own:1"}}))
    calls = counting_resolve(monkeypatch)
    judged = []
    real = named._format_reason
    monkeypatch.setattr(named, "_format_reason", lambda rt, model: judged.append(rt.obj.name) or real(rt, model))
    run = run_cli("render", ".")
    assert run.code == 0, run.stderr
    assert calls == ["a", "b"] and judged == [RUNTIME]
    assert [line.split(": InferenceService ")[0] for line in run.printed.splitlines()
            if "runtime-unsupported-model" in line] == ["warning: ./a.yaml:1:1", "warning: ./b.yaml:2:1"]
    assert all("model size 70B is outside supported range [few, 4B]" in line for line in run.printed.splitlines()
               if "runtime-unsupported-model" in line)
    assert [line.split(": ", 2)[2] for line in run.printed.splitlines() if "invalid-parameter-count" in line] == [
        f'ClusterServingRuntime {RUNTIME}: spec.modelSizeRange.min "few" is not a valid parameter count; OME reads '
        "it as 0 [invalid-parameter-count]"]


def test_a_cluster_runtimes_verdict_is_judged_once_and_warns_in_every_namespace(repo, monkeypatch):
    """Auto-selection in two namespaces judges the ClusterServingRuntime once for the model; the size range it cannot
    read is said to each selection, once, as before."""
    from omerender.ome.selection import evaluation
    from omerender.ome.selection.facts import _model_facts
    from omerender.ome.selection.request import Request
    runtime = (repo / "runtime.yaml").read_text()
    assert "autoSelect: false" in runtime and "modelSizeRange: {min: 2B," in runtime
    (repo / "runtime.yaml").write_text(runtime.replace("autoSelect: false", "autoSelect: true").replace(
        "modelSizeRange: {min: 2B,", "modelSizeRange: {min: few,"))
    (repo / "big.yaml").write_text(BIG_MODEL.replace("modelParameterSize: 70B", "modelParameterSize: 3B"))
    judged = []
    real = evaluation._verdict
    monkeypatch.setattr(evaluation, "_verdict", lambda rt, *args: judged.append(rt.obj.name) or real(rt, *args))
    inputs = index(read_paths(["."]))
    model = inputs.cluster_models["big-model"]
    found = [evaluation._fast_select(inputs, namespace, model, _model_facts(model), Request())
             for namespace in ("demo", "other")]
    assert judged == [RUNTIME]
    assert [result.winner.runtime.name for result in found] == [RUNTIME, RUNTIME]
    assert found[0].warnings == found[1].warnings == [
        ('spec.modelSizeRange.min "few" is not a valid parameter count; OME reads it as 0',
         inputs.cluster_runtimes[RUNTIME].ref, "./runtime.yaml")]


def test_a_shared_runner_check_warns_each_inferenceservice_at_its_own_line(repo, monkeypatch):
    """The runtime's runner asks for one GPU's tensor parallelism in pods of two GPUs: the parallelism check runs
    once for the runner both InferenceServices share, and each gets the warning at its own place."""
    runtime = (repo / "runtime.yaml").read_text().replace("nvidia.com/gpu: 1}", "nvidia.com/gpu: 2}")
    assert runtime.count("nvidia.com/gpu: 2}") == 2
    (repo / "runtime.yaml").write_text(runtime)
    (repo / "a.yaml").write_text(isvc("a", model="llama-3-2-3b-instruct"))
    (repo / "b.yaml").write_text("# a comment\n# and another\n# and a third\n" + isvc("b", model="llama-3-2-3b-instruct"))
    calls = []
    real = parallel_flags.check
    monkeypatch.setattr(parallel_flags, "check", lambda *args: calls.append(args[0]) or real(*args))
    run = run_cli("render", ".")
    assert run.code == 0, run.stderr
    assert calls == ["engine"]
    text = ("engine runner ome-container: --tp-size 1 use 1 GPUs and the pod holds 2: 1 sit idle; raise the flags to "
            "2 GPUs in all, or give the pods fewer GPUs [parallelism-gpu-mismatch]")
    assert [line for line in run.printed.splitlines() if "parallelism-gpu-mismatch" in line] == [
        f"warning: ./a.yaml:11:3: InferenceService demo/a: {text}",
        f"warning: ./b.yaml:14:3: InferenceService demo/b: {text}",
    ]


def test_an_error_is_never_shared(repo, monkeypatch):
    """A selection that fails is computed again by every InferenceService that reaches it, each with its error at
    its own spec.model.name."""
    (repo / "a.yaml").write_text(isvc("a", model="missing-model"))
    (repo / "b.yaml").write_text("# one line before\n" + isvc("b", model="missing-model"))
    calls = counting_resolve(monkeypatch)
    run = run_cli("render", ".")
    assert run.code == 1 and run.stdout == ""
    assert calls == ["a", "b"]
    errors = [line for line in run.printed.splitlines() if line.startswith("error:")]
    assert [e.split(": InferenceService")[0] for e in errors] == ["error: ./a.yaml:8:5", "error: ./b.yaml:9:5"]
    assert all('referenced model "missing-model" not found in namespace "demo"' in e for e in errors)


OVERRIDES = {"minReplicas": 1,
             "labels": {"tier": "gold"}, "annotations": {"note": "a only"},
             "nodeSelector": {"pool": "a-pool"},
             "tolerations": [{"key": "a-only", "operator": "Exists", "effect": "NoSchedule"}],
             "volumes": [{"name": "a-scratch", "emptyDir": {}}],
             "runner": {"args": ["--a-only"], "env": [{"name": "A_ONLY", "value": "1"}],
                        "volumeMounts": [{"name": "a-scratch", "mountPath": "/a"}],
                        "resources": {"requests": {"cpu": "3", "memory": "7Gi"},
                                      "limits": {"cpu": "3", "memory": "7Gi"}}}}


def objects_of(run, name: str) -> list[dict]:
    return [o for o in run.objects if o["metadata"]["name"].startswith(f"{name}-")]


def test_one_inferenceservices_overrides_do_not_reach_another_on_the_same_runtime(repo):
    """a (rendered first) lays overrides over the shared runtime spec; b, on the same runtime and model, renders
    exactly as it does alone, and a exactly as it does alone."""
    (repo / "b.yaml").write_text(isvc("b", model="llama-3-2-3b-instruct"))
    alone_b = run_cli("render", ".")
    (repo / "b.yaml").unlink()
    (repo / "a.yaml").write_text(isvc("a", model="llama-3-2-3b-instruct", engine=OVERRIDES))
    alone_a = run_cli("render", ".")
    (repo / "b.yaml").write_text(isvc("b", model="llama-3-2-3b-instruct"))
    both = run_cli("render", ".")
    assert alone_a.code == alone_b.code == both.code == 0, both.stderr
    assert objects_of(both, "a") == objects_of(alone_a, "a")
    assert objects_of(both, "b") == objects_of(alone_b, "b")
    pod_a = both.find("Deployment", "a-engine")["spec"]["template"]["spec"]
    pod_b = both.find("Deployment", "b-engine")["spec"]["template"]["spec"]
    assert pod_a["nodeSelector"]["pool"] == "a-pool" and "pool" not in (pod_b.get("nodeSelector") or {})
    assert "--a-only" in pod_a["containers"][0]["args"] and "--a-only" not in (pod_b["containers"][0].get("args") or [])
    assert pod_b["containers"][0]["resources"]["requests"]["cpu"] == "10"


def test_a_render_leaves_its_inputs_and_the_shared_runtime_specs_as_they_were(repo):
    """Auto-selected InferenceServices read the runtime's own spec, named ones its merged spec (its own spec too,
    when it inherits from none), both shared."""
    (repo / "a.yaml").write_text(isvc("a", model="llama-3-2-3b-instruct", engine=OVERRIDES))
    (repo / "b.yaml").write_text(isvc("b", model="llama-3-2-3b-instruct"))
    inputs = index(read_paths(["."]))
    before = [fingerprint(obj.data) for obj in inputs.objects]
    first = render(inputs, Options())
    assert [fingerprint(obj.data) for obj in inputs.objects] == before
    again = render(inputs, Options())
    assert again.objects == first.objects


def test_no_rendered_object_holds_a_map_or_list_of_the_inputs_or_of_another_inferenceservice(repo):
    """The component merge and the runtime's merged spec share the runtime's values (read only); what the render
    writes copies what it keeps, down to a deploymentStrategy's rollingUpdate. The one thing InferenceServices
    share is the pod spec of one build key (b and c here: they differ only in namespace), which nothing changes
    after its build (the tests of the pod build's key above)."""
    runtime = (repo / "runtime.yaml").read_text()
    assert runtime.count("  engineConfig:\n") == 1
    (repo / "runtime.yaml").write_text(runtime.replace("  engineConfig:\n", "  engineConfig:\n    deploymentStrategy:\n"
                                                       "      rollingUpdate: {maxSurge: 2, maxUnavailable: 0}\n"))
    (repo / "a.yaml").write_text(isvc("a", model="llama-3-2-3b-instruct", engine=OVERRIDES))
    (repo / "b.yaml").write_text(isvc("b", model="llama-3-2-3b-instruct"))
    (repo / "c.yaml").write_text(isvc("c", model="llama-3-2-3b-instruct", namespace="other"))
    inputs = index(read_paths(["."]))
    result = render(inputs, Options())
    held = {id(item) for obj in inputs.objects for item in _every_container(obj.data)}
    pods = {id(o["spec"]["template"]["spec"]): o["metadata"]["name"].split("-")[0]
            for o in result.objects if o["kind"] == "Deployment"}
    assert len(pods) == 2 and sorted(pods.values()) in (["a", "b"], ["a", "c"])   # b's and c's pod spec is one
    in_pods = {id(item) for o in result.objects if o["kind"] == "Deployment"
               for item in _every_container(o["spec"]["template"]["spec"])}
    owners: dict[int, str] = {}
    for obj in result.objects:
        if any(obj is source.data for source in inputs.objects):
            continue  # passed through as it is
        owner = obj["metadata"]["name"].split("-")[0]
        for item in _every_container(obj):
            assert id(item) not in held, (obj["kind"], owner)
            if id(item) not in in_pods:
                assert owners.setdefault(id(item), owner) == owner, (obj["kind"], owner)
    strategies = [o["spec"]["strategy"] for o in result.objects if o["kind"] == "Deployment"]
    assert [s["rollingUpdate"]["maxSurge"] for s in strategies] == [2, 2, 2]


class Owner:
    """Stands for the Inputs whose suggestion budget the shared work may spend."""


def test_shared_computes_once_replays_each_time_and_keeps_no_error():
    table: dict = {}
    owner = Owner()
    done = []

    def compute(report):
        done.append(1)
        report.warn("said while computing", field="spec.x", code="removed-field")
        return {"value": 1}

    first, second = Report(ref=None, file="first.yaml"), Report(ref=None, file="second.yaml")
    assert shared_module.shared(table, "k", first, compute, owner) == {"value": 1}
    assert shared_module.shared(table, "k", second, compute, owner) == {"value": 1}
    assert len(done) == 1
    assert [(m.text, m.file, m.field) for m in first.messages + second.messages] == [
        ("said while computing", "first.yaml", "spec.x"), ("said while computing", "second.yaml", "spec.x")]

    def failing(report):
        report.warn("before the error", code="removed-field")
        raise OmeError("it fails")

    for name in ("one.yaml", "two.yaml"):
        report = Report(file=name)
        with pytest.raises(OmeError, match="it fails"):
            shared_module.shared(table, "bad", report, failing, owner)
        assert [(m.text, m.file) for m in report.messages] == [("before the error", name)]
    assert "bad" not in table


def test_a_pod_found_valid_does_not_let_a_different_one_pass():
    """The pod check's cache tells values apart by type: "80" is no container port, True no string."""
    pod = {"containers": [{"name": "c", "image": "x", "ports": [{"containerPort": 80}]}]}
    check_pod(pod, "spec.template.spec")
    check_pod(copy.deepcopy(pod), "spec.template.spec")
    wrong = copy.deepcopy(pod)
    wrong["containers"][0]["ports"][0]["containerPort"] = "80"
    with pytest.raises(OmeError, match="containerPort"):
        check_pod(wrong, "spec.template.spec")
    check_pod(pod, "spec.template.spec", named=b"a build's key")
    with pytest.raises(OmeError, match="containerPort"):   # named otherwise, it is checked
        check_pod(wrong, "spec.template.spec", named=b"another build's key")
    labels = {"app": "x"}
    check_labels(labels, "metadata.labels")
    with pytest.raises(OmeError, match="must be of type string"):
        check_labels({"app": True}, "metadata.labels")
    check_annotations({"note": "x"}, "metadata.annotations")
    with pytest.raises(OmeError, match="Too long"):
        check_annotations({"note": "x" * 300_000}, "metadata.annotations")


def test_a_map_is_valid_by_its_items_only_where_each_item_was_and_the_whole_fits():
    """Label and annotation maps pass by items found valid in other maps; a new item is checked, and a map of
    items each found valid that together pass the annotations' size limit is refused."""
    check_labels({"app": "x"}, "metadata.labels")
    check_labels({"tier": "gold"}, "metadata.labels")
    check_labels({"tier": "gold", "app": "x"}, "metadata.labels")
    with pytest.raises(OmeError, match=r"metadata.labels.tier: Invalid value: \"-gold\""):
        check_labels({"app": "x", "tier": "-gold"}, "metadata.labels")
    with pytest.raises(OmeError, match="must be of type string"):
        check_labels({"app": "x", "tier": 1}, "metadata.labels")
    items = {f"note-{i:04d}": "v" * 240 for i in range(1100)}   # each fine alone, 275,000 bytes together
    for key, value in items.items():
        check_annotations({key: value}, "metadata.annotations")
    with pytest.raises(OmeError, match="Too long: must have at most 262144 bytes"):
        check_annotations(items, "metadata.annotations")


def _every_container(value) -> list:
    """Every dict and list in ``value``, itself included."""
    found, work = [], [value]
    while work:
        item = work.pop()
        if isinstance(item, (dict, list)):
            found.append(item)
            work.extend(item.values() if isinstance(item, dict) else item)
    return found


def test_an_overlay_shares_no_map_or_list_with_what_it_lays_over():
    """overlay copies the base's values only where the top does not replace them (once, not once per level): the
    result still holds no map or list of either input, so a pod build that changes it changes neither."""
    from omerender.ome.runtimes.merge import overlay
    base = {"containers": [{"name": "c", "env": [{"name": "A", "value": "1"}], "resources": {"limits": {"cpu": 1}}}],
            "nodeSelector": {"pool": "x"}, "tolerations": [{"key": "k"}], "volumes": []}
    top = {"containers": [{"name": "c", "env": [{"name": "B", "value": "2"}]}], "nodeSelector": {"zone": "z"},
           "affinity": {"nodeAffinity": {}}}
    before = copy.deepcopy((base, top))
    merged = overlay(base, top)
    inputs = {id(item) for item in _every_container(base) + _every_container(top)}
    assert not [item for item in _every_container(merged) if id(item) in inputs]
    assert merged["nodeSelector"] == {"pool": "x", "zone": "z"}
    assert [e["name"] for e in merged["containers"][0]["env"]] == ["B", "A"]   # strategic merge order
    merged["containers"][0]["resources"]["limits"]["cpu"] = 8
    merged["tolerations"][0]["key"] = "changed"
    assert (base, top) == before


# ---------------------------------------------------------------- the pod built once per key (ome.workloads.pods)

def pod_isvc(name: str, engine: dict | None = None, annotations: dict | None = None,
             model: str = "llama-3-2-3b-instruct", namespace: str = "demo") -> str:
    metadata = {"name": name, "namespace": namespace, **({"annotations": annotations} if annotations else {})}
    return yaml.safe_dump({"apiVersion": "ome.io/v1beta1", "kind": "InferenceService", "metadata": metadata,
                           "spec": {"model": {"name": model}, "runtime": {"name": RUNTIME},
                                    "engine": {"minReplicas": 1, **(engine or {})}}}, sort_keys=False)


# b differs from a in one part of what its pod is built from: each row is a part of the pod's key
POD_VARIANTS = {
    "runner env": {"engine": {"runner": {"env": [{"name": "B_ONLY", "value": "1"}]}}},
    "runner resources": {"engine": {"runner": {"resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "2"}}}}},
    "nodeSelector": {"engine": {"nodeSelector": {"pool": "b-pool"}}},
    "affinity": {"engine": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "b", "operator": "Exists"}]}]}}}}},
    "tolerations": {"engine": {"tolerations": [{"key": "b-only", "operator": "Exists"}]}},
    "model": {"model": "big-model"},
    "merged weights annotation": {"annotations": {"ome.io/fine-tuned-serving-with-merged-weights": "true"}},
    "webhook annotation": {"annotations": {"rdma.ome.io/auto-inject": "true"}},
    "placeholder": {"engine": {"runner": {"args": ["--tag={{.Name}}"]}}},
}


def rendered_by_isvc(options: Options = Options()) -> dict[str, list[dict]]:
    """Each InferenceService's objects after the whole render (what a later one did to a shared pod shows)."""
    result = render(index(read_paths(["."])), options)
    return {name: copy.deepcopy([o for o in result.objects if o["metadata"]["name"].startswith(f"{name}-")])
            for name in ("a", "b")}


def alone_and_together(repo, a: dict, b: dict, options: Options = Options()) -> tuple[dict, dict]:
    (repo / "a.yaml").write_text(pod_isvc("a", **a))
    (repo / "b.yaml").unlink(missing_ok=True)
    alone = {"a": rendered_by_isvc(options)["a"]}
    (repo / "a.yaml").unlink()
    (repo / "b.yaml").write_text(pod_isvc("b", **b))
    alone["b"] = rendered_by_isvc(options)["b"]
    (repo / "a.yaml").write_text(pod_isvc("a", **a))
    return alone, rendered_by_isvc(options)


def pod_of(objects: list[dict]) -> dict:
    return next(o for o in objects if o["kind"] == "Deployment")["spec"]["template"]["spec"]


def pod_builds(monkeypatch) -> list:
    from omerender.ome.workloads import pods
    calls = []
    real = pods._build_pod
    monkeypatch.setattr(pods, "_build_pod", lambda plan, *rest: calls.append(plan.path) or real(plan, *rest))
    return calls


def test_inferenceservices_with_one_pod_key_build_it_once_and_hold_the_same_spec(repo, monkeypatch):
    calls = pod_builds(monkeypatch)
    alone, both = alone_and_together(repo, {}, {})
    assert calls == ["engine", "engine", "engine"]   # a alone, b alone, then once for both
    deployments = [next(o for o in both[name] if o["kind"] == "Deployment") for name in ("a", "b")]
    assert deployments[0]["spec"]["template"]["spec"] == deployments[1]["spec"]["template"]["spec"]
    assert both == alone


@pytest.mark.parametrize("variant", POD_VARIANTS)
def test_inferenceservices_that_differ_in_a_part_of_the_pod_key_each_get_their_own_pod(repo, variant):
    alone, both = alone_and_together(repo, {}, POD_VARIANTS[variant])
    assert pod_of(alone["a"]) != pod_of(alone["b"])
    assert both["a"] == alone["a"]
    assert both["b"] == alone["b"]


KEYED = [name for name in POD_VARIANTS if name != "webhook annotation"]   # the webhook reads it after the build


@pytest.mark.parametrize("variant", KEYED)
def test_a_pod_key_that_left_out_the_part_would_fail_the_test_above(repo, monkeypatch, variant):
    """The check above can fail: with a key of the component alone, b gets a's pod."""
    from omerender.ome.workloads import pods
    monkeypatch.setattr(pods, "pod_key", lambda plan: ("only", plan.component, plan.role))
    alone, both = alone_and_together(repo, {}, POD_VARIANTS[variant])
    assert both["b"] != alone["b"]


def test_a_webhook_that_changed_the_shared_pod_in_place_would_fail_the_test_above(repo, monkeypatch):
    """The pod webhook copies a spec before it changes it; changed in place, a's pod (shared with b) would get b's
    RDMA profile."""
    from omerender.ome import podwebhook
    monkeypatch.setattr(podwebhook, "_changes_spec", lambda annotations, config: False)
    alone, both = alone_and_together(repo, {}, POD_VARIANTS["webhook annotation"])
    assert both["a"] != alone["a"]


def test_download_mode_shares_a_pod_where_the_claims_mounted_are_the_same(repo, monkeypatch):
    """--model-weights download mounts the model's claim and waits for its Job: a ClusterBaseModel's claim has one
    name in every namespace, so InferenceServices of two namespaces share the pod; another model's is another pod."""
    from omerender.ome.weights.settings import DOWNLOAD
    calls = pod_builds(monkeypatch)
    options = Options(model_weights=DOWNLOAD)
    alone, both = alone_and_together(repo, {}, {"namespace": "other"}, options)
    assert both == alone and len(calls) == 3
    calls.clear()
    alone, both = alone_and_together(repo, {}, {"model": "big-model"}, options)
    assert both == alone and len(calls) == 4
    volumes = [next(o for o in both[name] if o["kind"] == "Deployment")["spec"]["template"]["spec"]["volumes"]
               for name in ("a", "b")]
    assert volumes[0] != volumes[1]


def test_the_writer_writes_a_kept_map_once_and_each_place_it_is_held_as_before(monkeypatch):
    from omerender.yamlio import emit
    pod = {"containers": [{"name": "c", "image": "x:1", "args": ["--a", "yes"]}], "nodeSelector": {"k": "v"}}
    objects = [{"kind": "Deployment", "spec": {"template": {"spec": pod}}},
               {"kind": "Other", "spec": pod, "deeper": {"at": {"another": {"indent": pod}}}},
               {"kind": "Deployment", "spec": {"template": {"spec": pod}}}]
    plain = [emit.dump(copy.deepcopy(obj)) for obj in objects]
    written = []
    real = emit._mapping
    monkeypatch.setattr(emit, "_mapping", lambda data, *rest: (data is pod and written.append(rest[0]),
                                                               real(data, *rest))[1])
    with emit.kept_texts():
        emit.keep_text(pod)
        assert [emit.dump(obj) for obj in objects] == plain
    assert sorted(written) == sorted(["      ", "  ", "        "])   # once per indentation, not once per object
    assert not emit._KEPT
    emit.keep_text(pod)   # outside a render nothing is kept
    assert not emit._KEPT


def test_a_kept_map_the_writer_leaves_to_pyyaml_is_written_as_before():
    from omerender.yamlio import emit
    pod = {"containers": [{"name": "c", "command": ["line one\nline two"]}]}
    objects = [{"a": {"spec": pod}}, {"b": {"spec": pod}}]
    plain = [emit.dump(copy.deepcopy(obj)) for obj in objects]
    with emit.kept_texts():
        emit.keep_text(pod)
        assert [emit.dump(obj) for obj in objects] == plain


def test_the_output_of_inferenceservices_sharing_a_pod_is_each_ones_own(repo):
    """Written by the CLI (the writer reuses the shared pod's text): b's objects as when rendered alone."""
    (repo / "b.yaml").write_text(pod_isvc("b"))
    alone = run_cli("render", ".")
    (repo / "a.yaml").write_text(pod_isvc("a", **POD_VARIANTS["webhook annotation"]))
    (repo / "c.yaml").write_text(pod_isvc("c"))
    both = run_cli("render", ".")
    assert alone.code == both.code == 0, both.stderr
    assert objects_of(both, "b") == objects_of(alone, "b")
    pods = [both.find("Deployment", f"{name}-engine")["spec"]["template"]["spec"] for name in "abc"]
    assert pods[1] == pods[2] != pods[0]


def test_the_pods_kept_are_the_last_used_and_no_more_than_the_limit():
    from omerender.yamlio.data import Recent
    table = Recent(2)
    table.remember("a", 1)
    table.remember("b", 2)
    assert table.get("a") == 1   # a use: b is now the oldest
    table.remember("c", 3)
    assert list(table) == ["a", "c"] and table.get("b") is None and table.get("b", 0) == 0


def test_inferenceservices_on_two_accelerator_classes_each_get_their_classs_pod(tmp_path, monkeypatch):
    """The class is a part of the key: a (nvidia-h100) and b (nvidia-l40s) on one runtime and model."""
    from test_accelerators import H100, ISVC70, L40S, RT70
    from test_accelerators_render import MODEL70
    monkeypatch.chdir(tmp_path)
    common = [yaml.safe_load(H100), yaml.safe_load(L40S), yaml.safe_load(RT70), MODEL70]
    (tmp_path / "common.yaml").write_text(yaml.safe_dump_all(common))

    def isvc_on(name: str, cls: str) -> str:
        isvc = yaml.safe_load(ISVC70)
        isvc["metadata"]["name"] = name
        isvc["spec"]["acceleratorSelector"] = {"acceleratorClass": cls}
        return yaml.safe_dump(isvc)

    (tmp_path / "a.yaml").write_text(isvc_on("a", "nvidia-h100"))
    alone_a = rendered_by_isvc()["a"]
    (tmp_path / "a.yaml").unlink()
    (tmp_path / "b.yaml").write_text(isvc_on("b", "nvidia-l40s"))
    alone_b = rendered_by_isvc()["b"]
    (tmp_path / "a.yaml").write_text(isvc_on("a", "nvidia-h100"))
    both = rendered_by_isvc()
    assert pod_of(alone_a) != pod_of(alone_b) and both == {"a": alone_a, "b": alone_b}


def test_a_runtime_runner_with_placeholders_is_built_for_each_inferenceservice(repo):
    """The runtime's config is named by its digest in the pod's key: its "{{" still keeps the pod from being shared,
    since the placeholders read each InferenceService's own name."""
    runtime = (repo / "runtime.yaml").read_text().replace("--served-model-name,", "--served-model-name, '{{.Name}}',")
    assert "'{{.Name}}'" in runtime
    (repo / "runtime.yaml").write_text(runtime)
    alone, both = alone_and_together(repo, {}, {})
    assert both == alone
    assert [pod_of(both[name])["containers"][0]["command"][-2] for name in ("a", "b")] == ["a", "b"]


def test_routers_alike_build_their_pod_once_and_each_runs_as_its_own_account(tmp_path, monkeypatch):
    """A router's pod runs as its InferenceService's own account (``<name>-router``): the pod is built once for a and
    b, each gets a copy with its own account in place, exactly as rendered alone, and neither holds the other's."""
    from catalog import completed_model, models
    from test_pd import runtime as pd_runtime
    monkeypatch.chdir(tmp_path)
    rt = pd_runtime("mistral-7b-instruct-pd-rt.yaml")
    model = "mistral-7b-instruct-v0-2"
    (tmp_path / "common.yaml").write_text(yaml.safe_dump_all([completed_model(models()[model], rt), rt]))

    def router_isvc(name: str) -> str:
        return yaml.safe_dump({"apiVersion": "ome.io/v1beta1", "kind": "InferenceService",
                               "metadata": {"name": name, "namespace": "demo"},
                               "spec": {"model": {"name": model}, "runtime": {"name": rt["metadata"]["name"]},
                                        "engine": {}, "decoder": {}, "router": {}}})

    (tmp_path / "a.yaml").write_text(router_isvc("a"))
    alone_a = rendered_by_isvc()["a"]
    (tmp_path / "a.yaml").unlink()
    (tmp_path / "b.yaml").write_text(router_isvc("b"))
    alone_b = rendered_by_isvc()["b"]
    (tmp_path / "a.yaml").write_text(router_isvc("a"))
    calls = pod_builds(monkeypatch)
    result = render(index(read_paths(["."])), Options())
    both = {name: [o for o in result.objects if o["metadata"]["name"].startswith(f"{name}-")] for name in "ab"}
    assert calls.count("router") == 1
    assert both == {"a": alone_a, "b": alone_b}
    routers = [next(o for o in both[name] if o["kind"] == "Deployment" and o["metadata"]["name"] == f"{name}-router")
               ["spec"]["template"]["spec"] for name in "ab"]
    assert [pod["serviceAccountName"] for pod in routers] == ["a-router", "b-router"]
    assert routers[0] is not routers[1] and {**routers[0], "serviceAccountName": "b-router"} == routers[1]
    assert list(routers[0]) == list(next(o for o in alone_a if o["kind"] == "Deployment" and o["metadata"]["name"]
                                         == "a-router")["spec"]["template"]["spec"])   # the same key order


def test_a_models_storage_is_one_per_render_but_a_pvc_claim_is_judged_per_namespace(repo):
    """The pods of every InferenceService on a model mount the storage worked out once (each pod its own copy of the
    volume and mount); a ClusterBaseModel's pvc:// claim lives in one namespace, so an InferenceService of another
    still gets the error, each its own."""
    from omerender.ome.shared import shared_work
    from omerender.ome.workloads.storage import model_storage
    inputs = index(read_paths(["."]))
    model = inputs.cluster_models["big-model"]
    with shared_work():
        assert model_storage(model, "demo") is model_storage(model, "other")
    claimed = BIG_MODEL.replace('"hf://meta-llama/Llama-3.3-70B-Instruct", path: /raid/models/big',
                                '"pvc://demo:weights/big"')
    assert claimed != BIG_MODEL
    (repo / "big.yaml").write_text(claimed)
    (repo / "a.yaml").write_text(isvc("a"))
    (repo / "b.yaml").write_text(isvc("b", namespace="other"))
    (repo / "c.yaml").write_text(isvc("c", namespace="other"))
    run = run_cli("render", ".")
    assert run.code == 1
    errors = [line for line in run.printed.splitlines() if line.startswith("error:")]
    assert [line.split(": InferenceService ")[1].split(":")[0] for line in errors] == ["other/b", "other/c"]
    assert all('references PVC in namespace "demo", but InferenceService is in namespace "other"' in line
               for line in errors)



def test_each_pod_built_is_shape_checked_once_whatever_was_checked_before(repo, monkeypatch):
    """The pod check is remembered by the build's key: a's and b's pods (b sets an env entry) are each checked, once,
    and c's (a's key) not again."""
    from omerender.kube import shapes
    checked = []
    real = shapes._checkers

    class Counting:
        def __init__(self, version):
            self.checkers = real(version)

        def __getattr__(self, name):
            return getattr(self.checkers, name)

        def k8s(self, name, required):
            check = self.checkers.k8s(name, required)
            return lambda pod, path: (name == "PodSpec" and checked.append(pod["containers"][0].get("env")),
                                      check(pod, path))[1]

    monkeypatch.setattr(shapes, "_checkers", Counting)
    monkeypatch.setattr(shapes, "_VALID_PODS", shapes.BoundedSet())
    (repo / "a.yaml").write_text(pod_isvc("a"))
    (repo / "b.yaml").write_text(pod_isvc("b", **POD_VARIANTS["runner env"]))
    (repo / "c.yaml").write_text(pod_isvc("c"))
    render(index(read_paths(["."])), Options())
    assert len(checked) == 2 and checked[0] != checked[1]


def test_check_writes_a_pod_spec_inferenceservices_share_once_and_finds_the_directory_current(repo, monkeypatch):
    """check renders without streaming, then writes each file's text to compare: the pod spec two InferenceServices
    share is written once there too (its text kept, as render keeps it), and the files are what render wrote."""
    from omerender.yamlio import emit
    (repo / "in").mkdir()
    for name in ("a", "b"):
        (repo / "in" / f"{name}.yaml").write_text(pod_isvc(name))
    for name in ("runtime.yaml", "big.yaml"):
        (repo / name).rename(repo / "in" / name)
    assert run_cli("render", "in", "--output-dir", "out").code == 0
    pods_walked = []
    real = emit._mapping
    monkeypatch.setattr(emit, "_mapping", lambda data, indent, *rest: (
        pods_walked.append(indent) if "containers" in data else None, real(data, indent, *rest))[1])
    run = run_cli("check", "in", "out")
    assert (run.code, run.stdout) == (0, "")
    assert pods_walked == ["      "]   # the Deployments' template specs, one text for both
