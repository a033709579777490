"""Runtime inheritance (inheritance-and-pinning.md Part A, api.md §7.1 rows 1-4, §8.4).

The fixtures are the docs' examples (§20): PROFILE, CHILD, ISVC_I, PLAIN. test_lock.py and
test_tree.py load them from this file.
"""
import copy

import pytest
import yaml
from click.testing import CliRunner

from omerender.errors import OmeError, Report
from omerender.ome.load import index
from omerender.ome.runtimes.inherit import Chains, check_runner_names, validate_runtime_chain, warn_auto_selected
from omerender.ome.selection.resolve import resolve
from omerender.yamlio.reading import parse_text

PROFILE = """
apiVersion: ome.io/v1beta1
kind: ClusterServingRuntime
metadata:
  name: sglang-profile
  annotations:
    ome.io/runtime-profile: "true"
spec:
  disabled: true
  engineConfig:
    tolerations:
      - key: nvidia.com/gpu
        operator: Exists
        effect: NoSchedule
    volumes:
      - name: dshm
        emptyDir:
          medium: Memory
    runner:
      name: ome-container
      image: docker.io/lmsysorg/sglang:v0.5.5.post3-cu129-amd64
      command:
        - python3
        - -m
        - sglang.launch_server
        - --host=0.0.0.0
        - --port=8080
        - --model-path=$(MODEL_PATH)
        - "--served-model-name={{.Name}}"
      ports:
        - containerPort: 8080
          name: http1
          protocol: TCP
      volumeMounts:
        - name: dshm
          mountPath: /dev/shm
      readinessProbe:
        httpGet:
          path: /health_generate
          port: 8080
        periodSeconds: 60
        timeoutSeconds: 200
      startupProbe:
        httpGet:
          path: /health_generate
          port: 8080
        initialDelaySeconds: 60
        periodSeconds: 6
        timeoutSeconds: 30
        failureThreshold: 150
"""
CHILD = """
apiVersion: ome.io/v1beta1
kind: ServingRuntime
metadata:
  name: sglang-llama-3-2-3b
  namespace: llama-demo
  annotations:
    ome.io/inherit-from: sglang-profile
spec:
  disabled: false
  supportedModelFormats:
    - modelFormat:
        name: safetensors
        version: "1.0.0"
      modelFramework:
        name: transformers
        version: "4.45.0.dev0"
      modelArchitecture: LlamaForCausalLM
      autoSelect: false
  modelSizeRange:
    min: 2B
    max: 4B
  engineConfig:
    runner:
      name: ome-container
      args:
        - --tp-size=1
        - --mem-frac=0.9
      resources:
        requests:
          cpu: "10"
          memory: 30Gi
          nvidia.com/gpu: "1"
        limits:
          cpu: "10"
          memory: 30Gi
          nvidia.com/gpu: "1"
"""
PLAIN = """
apiVersion: ome.io/v1beta1
kind: ServingRuntime
metadata:
  name: sglang-llama-3-2-3b
  namespace: llama-demo
spec:
  supportedModelFormats:
    - modelFormat:
        name: safetensors
        version: "1.0.0"
      modelFramework:
        name: transformers
        version: "4.45.0.dev0"
      modelArchitecture: LlamaForCausalLM
      autoSelect: true
      priority: 1
  modelSizeRange:
    min: 2B
    max: 4B
  engineConfig:
    tolerations:
      - key: nvidia.com/gpu
        operator: Exists
        effect: NoSchedule
    volumes:
      - name: dshm
        emptyDir:
          medium: Memory
    runner:
      name: ome-container
      image: docker.io/lmsysorg/sglang:v0.5.5.post3-cu129-amd64
      command:
        - python3
        - -m
        - sglang.launch_server
      args:
        - --host=0.0.0.0
        - --port=8080
        - --model-path=$(MODEL_PATH)
        - "--served-model-name={{.Name}}"
        - --tp-size=1
        - --mem-frac=0.9
      ports:
        - containerPort: 8080
          name: http1
          protocol: TCP
      volumeMounts:
        - name: dshm
          mountPath: /dev/shm
      resources:
        requests:
          cpu: "10"
          memory: 30Gi
          nvidia.com/gpu: "1"
        limits:
          cpu: "10"
          memory: 30Gi
          nvidia.com/gpu: "1"
      readinessProbe:
        httpGet:
          path: /health_generate
          port: 8080
        periodSeconds: 60
        timeoutSeconds: 200
      startupProbe:
        httpGet:
          path: /health_generate
          port: 8080
        initialDelaySeconds: 60
        periodSeconds: 6
        timeoutSeconds: 30
        failureThreshold: 150
"""

MODEL = """
apiVersion: ome.io/v1beta1
kind: ClusterBaseModel
metadata:
  name: llama-3-2-3b-instruct
spec:
  vendor: meta
  disabled: false
  version: "1.0.0"
  modelFormat: {name: safetensors, version: "1.0.0"}
  modelFramework: {name: transformers, version: "4.45.0.dev0"}
  modelArchitecture: LlamaForCausalLM
  modelParameterSize: 3.21B
  storage:
    storageUri: hf://meta-llama/Llama-3.2-3B-Instruct
    path: /raid/models/meta/llama-3-2-3b-instruct
"""
ISVC_I = """
apiVersion: ome.io/v1beta1
kind: InferenceService
metadata:
  name: llama-3-2-3b-instruct
  namespace: llama-demo
spec:
  model:
    name: llama-3-2-3b-instruct
  runtime:
    name: sglang-llama-3-2-3b
  engine:
    minReplicas: 1
    maxReplicas: 1
"""


def build(*texts):
    """Index YAML texts as one input."""
    docs = []
    for text in texts:
        docs.extend(parse_text(text, "in.yaml", start=len(docs)))
    return index(docs)


def obj(kind, name, namespace=None, parent=None, spec=None, annotations=None):
    """A runtime (or other) object as YAML text."""
    meta = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    meta_annotations = dict(annotations or {})
    if parent is not None:
        meta_annotations["ome.io/inherit-from"] = parent
    if meta_annotations:
        meta["annotations"] = meta_annotations
    return yaml.safe_dump({"apiVersion": "ome.io/v1beta1", "kind": kind, "metadata": meta, "spec": spec or {}})


def csr(name, parent=None, spec=None, **kw):
    return obj("ClusterServingRuntime", name, None, parent, spec, **kw)


def sr(name, parent=None, spec=None, namespace="llama-demo", **kw):
    return obj("ServingRuntime", name, namespace, parent, spec, **kw)


def edit(text, change):
    """YAML text of ``text`` after ``change(data)``."""
    data = yaml.safe_load(text)
    change(data)
    return yaml.safe_dump(data)


def merged(*texts, head=None):
    inputs = build(*texts)
    rt = _head(inputs, head)
    return Chains(inputs, Report()).merged_spec(rt)


def _head(inputs, head):
    if head is None:
        return (list(inputs.runtimes.values()) + list(inputs.cluster_runtimes.values()))[-1]
    if "/" in head:
        ns, name = head.split("/")
        return inputs.runtimes[(ns, name)]
    return inputs.cluster_runtimes[head]


def chain_error(*texts, head):
    inputs = build(*texts)
    rt = _head(inputs, head)
    with pytest.raises(OmeError) as caught:
        validate_runtime_chain(rt, Chains(inputs, Report()))
    return caught.value


def runner(spec, component="engineConfig"):
    return spec[component]["runner"]


# ---------------------------------------------------------------- X1: the docs' example


def test_x1_child_inherits_profile_image_command_and_pod_fields():
    spec = merged(PROFILE, CHILD, head="llama-demo/sglang-llama-3-2-3b")
    run = runner(spec)
    assert spec["disabled"] is False
    assert run["image"] == "docker.io/lmsysorg/sglang:v0.5.5.post3-cu129-amd64"
    assert run["command"] == ["python3", "-m", "sglang.launch_server", "--host=0.0.0.0", "--port=8080",
                              "--model-path=$(MODEL_PATH)", "--served-model-name={{.Name}}"]
    assert run["args"] == ["--tp-size=1", "--mem-frac=0.9"]
    assert run["resources"]["limits"] == {"cpu": "10", "memory": "30Gi", "nvidia.com/gpu": "1"}
    assert run["ports"] == [{"containerPort": 8080, "name": "http1", "protocol": "TCP"}]
    assert run["readinessProbe"]["httpGet"]["path"] == "/health_generate"
    assert spec["engineConfig"]["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists",
                                                    "effect": "NoSchedule"}]
    assert spec["engineConfig"]["volumes"] == [{"name": "dshm", "emptyDir": {"medium": "Memory"}}]
    assert spec["modelSizeRange"] == {"min": "2B", "max": "4B"}


def test_x1_chain_is_leaf_first_and_default_kind_finds_the_servingruntime():
    inputs = build(PROFILE, CHILD, MODEL, ISVC_I)
    chains = Chains(inputs, Report())
    child = inputs.runtimes[("llama-demo", "sglang-llama-3-2-3b")]
    assert [rt.name for rt in chains.chain(child)] == ["sglang-llama-3-2-3b", "sglang-profile"]
    found = resolve(inputs.isvcs[0], inputs, Report(), merged_spec=chains.merged_spec)
    assert found.runtime is child


def test_x1_render_puts_profile_command_then_child_flags():
    from omerender.cli.app import cli
    import tempfile, os
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in (("profile.yaml", PROFILE), ("runtime.yaml", CHILD), ("model.yaml", MODEL),
                           ("isvc.yaml", ISVC_I)):
            with open(os.path.join(tmp, name), "w") as handle:
                handle.write(text)
        result = CliRunner().invoke(cli, ["render", tmp])
    assert result.exit_code == 0, result.output
    objects = [d for d in yaml.safe_load_all(result.stdout) if d]
    deployment = next(d for d in objects if d["kind"] == "Deployment")
    assert deployment["metadata"]["name"] == "llama-3-2-3b-instruct-engine"
    container = next(c for c in deployment["spec"]["template"]["spec"]["containers"] if c["name"] == "ome-container")
    assert container["image"] == "docker.io/lmsysorg/sglang:v0.5.5.post3-cu129-amd64"
    assert container["command"] + container.get("args", []) == [
        "python3", "-m", "sglang.launch_server", "--host=0.0.0.0", "--port=8080", "--model-path=$(MODEL_PATH)",
        "--served-model-name=llama-3-2-3b-instruct", "--tp-size=1", "--mem-frac=0.9"]
    assert container["args"] == ["--tp-size=1", "--mem-frac=0.9"]


# ---------------------------------------------------------------- X2, X3: errors on the ISVC


def test_x2_child_without_disabled_inherits_disabled_and_is_rejected():
    child = edit(CHILD, lambda d: d["spec"].pop("disabled"))
    inputs = build(PROFILE, child, MODEL, ISVC_I)
    chains = Chains(inputs, Report())
    with pytest.raises(OmeError) as caught:
        resolve(inputs.isvcs[0], inputs, Report(), merged_spec=chains.merged_spec)
    assert caught.value.text == ("runtime sglang-llama-3-2-3b does not support model llama-3-2-3b-instruct: "
                                 "namespace-scoped runtime sglang-llama-3-2-3b is disabled")


def test_x3_missing_parent_is_e_i1_on_the_runtime_and_e_i6_on_the_isvc():
    err = chain_error(CHILD, MODEL, ISVC_I, head="llama-demo/sglang-llama-3-2-3b")
    assert err.text == 'inherit-from parent "sglang-profile" not found (chain so far: [sglang-llama-3-2-3b])'
    assert err.message().line() == ('error: in.yaml:8:5: ServingRuntime llama-demo/sglang-llama-3-2-3b: inherit-from '
                                    'parent "sglang-profile" not found (chain so far: [sglang-llama-3-2-3b])')
    inputs = build(CHILD, MODEL, ISVC_I)
    chains = Chains(inputs, Report())
    with pytest.raises(OmeError) as caught:
        resolve(inputs.isvcs[0], inputs, Report(), merged_spec=chains.merged_spec)
    assert caught.value.text == ("runtime sglang-llama-3-2-3b does not support model llama-3-2-3b-instruct: "
                                 'inherit-from parent "sglang-profile" not found (chain so far: [sglang-llama-3-2-3b])')


def test_e_i6_without_model_is_the_chain_text_alone():
    isvc = edit(ISVC_I, lambda d: d["spec"].pop("model"))
    inputs = build(CHILD, isvc)
    with pytest.raises(OmeError) as caught:
        resolve(inputs.isvcs[0], inputs, Report(), merged_spec=Chains(inputs, Report()).merged_spec)
    assert caught.value.text == 'inherit-from parent "sglang-profile" not found (chain so far: [sglang-llama-3-2-3b])'


def test_broken_chain_above_is_an_error_for_runtimes_below():
    err = chain_error(csr("a", parent="b"), csr("b", parent="gone"), head="a")
    assert err.text == 'inherit-from parent "gone" not found (chain so far: [a b])'


# ---------------------------------------------------------------- X4, X5, X6: chain rules


def test_x4_names_alone_count_for_cycles():
    child = edit(CHILD, lambda d: d["metadata"]["annotations"].update({"ome.io/inherit-from": "sglang-llama-3-2-3b"}))
    err = chain_error(child, csr("sglang-llama-3-2-3b"), head="llama-demo/sglang-llama-3-2-3b")
    assert err.text == "inheritance cycle detected: [sglang-llama-3-2-3b sglang-llama-3-2-3b]"


def test_cycle_through_two_runtimes():
    err = chain_error(csr("a", parent="b"), csr("b", parent="a"), head="a")
    assert err.text == "inheritance cycle detected: [a b a]"


def test_x5_chain_of_six_fails_only_on_the_sixth():
    texts = [csr(f"r{i}", parent=f"r{i - 1}" if i > 1 else None) for i in range(1, 7)]
    err = chain_error(*texts, head="r6")
    assert err.text == "inheritance chain exceeds max depth 5: [r6 r5 r4 r3 r2 r1]"
    inputs = build(*texts)
    chains = Chains(inputs, Report())
    assert [rt.name for rt in chains.chain(inputs.cluster_runtimes["r5"])] == ["r5", "r4", "r3", "r2", "r1"]
    validate_runtime_chain(inputs.cluster_runtimes["r5"], chains)


def test_not_found_is_checked_before_depth():
    texts = [csr(f"r{i}", parent=f"r{i - 1}") for i in range(2, 7)]
    err = chain_error(*texts, head="r6")
    assert err.text == 'inherit-from parent "r1" not found (chain so far: [r6 r5 r4 r3 r2])'


def test_x6_profile_must_set_disabled_itself():
    profile = edit(PROFILE, lambda d: d["spec"].pop("disabled"))
    err = chain_error(profile, head="sglang-profile")
    assert err.message().line() == ('error: in.yaml:7:1: ClusterServingRuntime sglang-profile: runtimes carrying '
                                    'ome.io/runtime-profile="true" must also set spec.disabled: true')


def test_profile_rule_reads_the_own_spec_not_the_merged_one():
    base = csr("base", spec={"disabled": True})
    profile = csr("p", parent="base", annotations={"ome.io/runtime-profile": "true"})
    err = chain_error(base, profile, head="p")
    assert err.text == 'runtimes carrying ome.io/runtime-profile="true" must also set spec.disabled: true'


def test_only_exact_true_marks_a_profile_and_children_are_not_profiles():
    inputs = build(csr("p", annotations={"ome.io/runtime-profile": "True"}), PROFILE, CHILD)
    chains = Chains(inputs, Report())
    validate_runtime_chain(inputs.cluster_runtimes["p"], chains)
    validate_runtime_chain(inputs.runtimes[("llama-demo", "sglang-llama-3-2-3b")], chains)
    validate_runtime_chain(inputs.cluster_runtimes["sglang-profile"], chains)


def test_chain_errors_apply_to_profiles_too():
    profile = edit(PROFILE, lambda d: d["metadata"]["annotations"].update({"ome.io/inherit-from": "nope"}))
    err = chain_error(profile, head="sglang-profile")
    assert err.text == 'inherit-from parent "nope" not found (chain so far: [sglang-profile])'


def test_empty_inherit_from_means_no_parent():
    assert merged(csr("a", parent="", spec={"schedulerName": "s1"}), head="a") == {"schedulerName": "s1"}


# ---------------------------------------------------------------- X7, X8: where parents resolve


def test_x7_cluster_runtime_never_inherits_from_a_servingruntime():
    err = chain_error(csr("c", parent="p"), sr("p"), head="c")
    assert err.text == 'inherit-from parent "p" not found (chain so far: [c])'


def test_x7_servingruntime_parent_shadows_the_cluster_one():
    inputs = build(sr("s", parent="p"), sr("p", spec={"schedulerName": "s2"}), csr("p", spec={"schedulerName": "s3"}),
                   sr("p", namespace="other", spec={"schedulerName": "s4"}))
    chains = Chains(inputs, Report())
    chain = chains.chain(inputs.runtimes[("llama-demo", "s")])
    assert [str(rt.ref) for rt in chain] == ["ServingRuntime llama-demo/s", "ServingRuntime llama-demo/p"]
    assert chains.merged_spec(inputs.runtimes[("llama-demo", "s")]) == {"schedulerName": "s2"}


def test_servingruntime_falls_back_to_cluster_parent_not_other_namespaces():
    inputs = build(sr("s", parent="p"), csr("p", spec={"schedulerName": "s3"}), sr("p", namespace="other"))
    assert Chains(inputs, Report()).merged_spec(inputs.runtimes[("llama-demo", "s")]) == {"schedulerName": "s3"}


def test_x8_head_rule_applies_to_every_hop_and_warns_w_i1():
    inputs = build(sr("leaf", parent="mid"), csr("mid", parent="base"), csr("base"), sr("base"))
    report = Report()
    chains = Chains(inputs, report)
    leaf = inputs.runtimes[("llama-demo", "leaf")]
    assert [str(rt.ref) for rt in reversed(chains.chain(leaf))] == [
        "ServingRuntime llama-demo/base", "ClusterServingRuntime mid", "ServingRuntime llama-demo/leaf"]
    assert [m.line() for m in report.messages] == [
        "warning: in.yaml:1:1: ServingRuntime llama-demo/leaf: in the chain of ServingRuntime/llama-demo/leaf, "
        "ClusterServingRuntime/mid inherits from ServingRuntime/llama-demo/base, which shadows "
        "ClusterServingRuntime/base [inherit-shadowed-parent]"]
    mid_chain = chains.chain(inputs.cluster_runtimes["mid"])
    assert [str(rt.ref) for rt in mid_chain] == ["ClusterServingRuntime mid", "ClusterServingRuntime base"]
    assert len(report.messages) == 1


# ---------------------------------------------------------------- X9 - X13: merge rules


def test_x9_objects_merge_by_field_and_empty_child_values_are_unset():
    parent = csr("p", spec={"modelSizeRange": {"min": "1B", "max": "8B"}, "nodeSelector": {"pool": "gpu"},
                            "engineConfig": {"runner": {"name": "c", "image": "A", "args": ["a"]}}})
    child = csr("c", parent="p", spec={"modelSizeRange": {"max": "4B"}, "nodeSelector": {},
                                       "engineConfig": {"runner": {"name": "c", "image": "B", "args": []}}})
    spec = merged(parent, child, head="c")
    assert spec == {"modelSizeRange": {"min": "1B", "max": "4B"}, "nodeSelector": {"pool": "gpu"},
                    "engineConfig": {"runner": {"name": "c", "image": "B", "args": ["a"]}}}


def test_empty_values_are_unset_at_every_depth():
    parent = csr("p", spec={"engineConfig": {"runner": {"name": "c", "image": "A",
                                                        "env": [{"name": "X", "value": "1"}]}}})
    child = csr("c", parent="p", spec={"engineConfig": {"runner": {"name": "c", "image": "",
                                                                   "env": [{"name": "X", "value": ""}]},
                                                        "labels": None}})
    spec = merged(parent, child, head="c")
    assert spec == {"engineConfig": {"runner": {"name": "c", "image": "A", "env": [{"name": "X", "value": "1"}]}}}


def test_new_child_values_do_not_bring_empty_members():
    spec = merged(csr("p"), csr("c", parent="p", spec={"engineConfig": {"runner": {"name": "c", "image": ""},
                                                                         "nodeSelector": {}}}), head="c")
    assert spec == {"engineConfig": {"runner": {"name": "c"}}}


def test_false_and_zero_override_but_max_replicas_zero_is_unset():
    parent = csr("p", spec={"disabled": True, "engineConfig": {"minReplicas": 2, "maxReplicas": 4}})
    child = csr("c", parent="p", spec={"disabled": False, "engineConfig": {"minReplicas": 0, "maxReplicas": 0}})
    assert merged(parent, child, head="c") == {"disabled": False, "engineConfig": {"minReplicas": 0, "maxReplicas": 4}}


def test_x10_env_merges_by_name_in_strategic_merge_order():
    def env(*pairs):
        return {"engineConfig": {"runner": {"name": "c", "env": [{"name": n, "value": v} for n, v in pairs]}}}
    spec = merged(csr("p", spec=env(("A", "1"), ("B", "2"))), csr("c", parent="p", spec=env(("B", "3"), ("C", "4"))),
                  head="c")
    assert runner(spec)["env"] == [{"name": "A", "value": "1"}, {"name": "B", "value": "3"}, {"name": "C", "value": "4"}]
    spec = merged(csr("p", spec=env(("E1", "a"), ("E2", "b"))), csr("c", parent="p", spec=env(("E1", "x"), ("E3", "y"))),
                  head="c")
    assert [e["name"] + "=" + e["value"] for e in runner(spec)["env"]] == ["E1=x", "E3=y", "E2=b"]
    spec = merged(csr("p", spec=env(("A", "1"), ("B", "1"), ("C", "1"))),
                  csr("c", parent="p", spec=env(("C", "2"), ("A", "2"))), head="c")
    assert [e["name"] + "=" + e["value"] for e in runner(spec)["env"]] == ["B=1", "C=2", "A=2"]


@pytest.mark.parametrize("field, key, parent_items, child_items, expected", [
    ("ports", "containerPort", [{"containerPort": 8080, "name": "http1"}], [{"containerPort": 8080, "protocol": "TCP"},
                                                                           {"containerPort": 9090}],
     [{"containerPort": 8080, "name": "http1", "protocol": "TCP"}, {"containerPort": 9090}]),
    ("volumeMounts", "mountPath", [{"mountPath": "/dev/shm", "name": "dshm"}], [{"mountPath": "/dev/shm", "readOnly": True}],
     [{"mountPath": "/dev/shm", "name": "dshm", "readOnly": True}]),
])
def test_runner_keyed_lists(field, key, parent_items, child_items, expected):
    spec = merged(csr("p", spec={"engineConfig": {"runner": {"name": "c", field: parent_items}}}),
                  csr("c", parent="p", spec={"engineConfig": {"runner": {"name": "c", field: child_items}}}), head="c")
    assert runner(spec)[field] == expected


@pytest.mark.parametrize("field, parent_items, child_items, expected", [
    ("volumes", [{"name": "a", "emptyDir": {}}, {"name": "b", "emptyDir": {"medium": "Memory"}}],
     [{"name": "b", "emptyDir": {"sizeLimit": "1Gi"}}],
     [{"name": "a", "emptyDir": {}}, {"name": "b", "emptyDir": {"medium": "Memory", "sizeLimit": "1Gi"}}]),
    ("imagePullSecrets", [{"name": "a"}], [{"name": "b"}], [{"name": "b"}, {"name": "a"}]),
    ("containers", [{"name": "side", "image": "x"}], [{"name": "side", "args": ["--v"]}],
     [{"name": "side", "image": "x", "args": ["--v"]}]),
    ("initContainers", [{"name": "init", "image": "x"}], [{"name": "init", "image": "y"}], [{"name": "init", "image": "y"}]),
    ("topologySpreadConstraints", [{"topologyKey": "zone", "maxSkew": 1}], [{"topologyKey": "zone", "maxSkew": 2},
                                                                            {"topologyKey": "host", "maxSkew": 1}],
     [{"topologyKey": "zone", "maxSkew": 2}, {"topologyKey": "host", "maxSkew": 1}]),
    ("tolerations", [{"key": "t1"}], [{"key": "t2"}], [{"key": "t2"}]),
    ("hostAliases", [{"ip": "1.2.3.4", "hostnames": ["a"]}], [{"ip": "1.2.3.4", "hostnames": ["b"]}],
     [{"ip": "1.2.3.4", "hostnames": ["b"]}]),
])
def test_component_keyed_and_atomic_lists(field, parent_items, child_items, expected):
    spec = merged(csr("p", spec={"engineConfig": {field: parent_items}}),
                  csr("c", parent="p", spec={"engineConfig": {field: child_items}}), head="c")
    assert spec["engineConfig"][field] == expected


def test_x11_other_lists_are_replaced_whole():
    parent = csr("p", spec={"supportedModelFormats": [{"modelFormat": {"name": "safetensors"},
                                                       "acceleratorConfig": {"nvidia-h100": {"runtimeArgsOverride": ["--x"]}}}],
                            "protocolVersions": ["openAI"],
                            "acceleratorRequirements": {"acceleratorClasses": ["nvidia-h100"]},
                            "engineConfig": {"runner": {"name": "c", "command": ["a", "b"], "envFrom": [{"secretRef": {"name": "s"}}]}}})
    child = csr("c", parent="p", spec={"supportedModelFormats": [{"modelFormat": {"name": "gguf"}}],
                                       "acceleratorRequirements": {"acceleratorClasses": ["nvidia-l40s"]},
                                       "engineConfig": {"runner": {"name": "c", "command": ["z"],
                                                                   "envFrom": [{"configMapRef": {"name": "m"}}]}}})
    spec = merged(parent, child, head="c")
    assert spec["supportedModelFormats"] == [{"modelFormat": {"name": "gguf"}}]
    assert spec["acceleratorRequirements"] == {"acceleratorClasses": ["nvidia-l40s"]}
    assert spec["protocolVersions"] == ["openAI"]
    assert runner(spec)["command"] == ["z"]
    assert runner(spec)["envFrom"] == [{"configMapRef": {"name": "m"}}]


def test_x12_requests_and_limits_merge_by_key_independently():
    parent = csr("p", spec={"engineConfig": {"runner": {"name": "c", "resources": {"limits": {"cpu": "10", "memory": "30Gi"}}}}})
    child = csr("c", parent="p", spec={"engineConfig": {"runner": {"name": "c", "resources": {"limits": {"cpu": "8"},
                                                                                             "requests": {"cpu": "8"}}}}})
    assert runner(merged(parent, child, head="c"))["resources"] == {"limits": {"cpu": "8", "memory": "30Gi"},
                                                                    "requests": {"cpu": "8"}}


def test_x13_volume_sources_of_parent_and_child_end_up_together():
    parent = csr("p", spec={"engineConfig": {"volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory"}}]}})
    child = csr("c", parent="p", spec={"engineConfig": {"volumes": [{"name": "dshm", "hostPath": {"path": "/dev/shm"}}]}})
    assert merged(parent, child, head="c")["engineConfig"]["volumes"] == [
        {"name": "dshm", "emptyDir": {"medium": "Memory"}, "hostPath": {"path": "/dev/shm"}}]


def test_maps_merge_by_key_with_child_winning():
    parent = csr("p", spec={"nodeSelector": {"a": "1", "b": "1"}, "labels": {"x": "1"},
                            "engineConfig": {"annotations": {"k": "v"}, "nodeSelector": {"z": "1"}}})
    child = csr("c", parent="p", spec={"nodeSelector": {"b": "2"}, "labels": {"y": "2"},
                                       "engineConfig": {"annotations": {"k": "w"}}})
    assert merged(parent, child, head="c") == {"nodeSelector": {"a": "1", "b": "2"}, "labels": {"x": "1", "y": "2"},
                                               "engineConfig": {"annotations": {"k": "w"}, "nodeSelector": {"z": "1"}}}


def test_three_level_fold_from_the_root_down():
    texts = [csr("a", spec={"protocolVersions": 1, "schedulerName": "s1", "nodeSelector": {"a": "1"}}),
             csr("b", parent="a", spec={"protocolVersions": 2, "nodeSelector": {"b": "1"}}),
             csr("c", parent="b", spec={"schedulerName": "s3"})]
    assert merged(*texts, head="c") == {"protocolVersions": 2, "schedulerName": "s3", "nodeSelector": {"a": "1", "b": "1"}}


def test_disabled_parent_is_inherited_from_and_only_spec_is_inherited():
    inputs = build(csr("p", spec={"disabled": True, "protocolVersions": 5}, annotations={"team": "x"}), csr("c", parent="p"))
    chains = Chains(inputs, Report())
    child = inputs.cluster_runtimes["c"]
    assert chains.merged_spec(child) == {"disabled": True, "protocolVersions": 5}
    assert child.metadata == {"name": "c", "annotations": {"ome.io/inherit-from": "p"}}


def test_merged_spec_is_a_fresh_copy_and_inputs_are_not_mutated():
    inputs = build(PROFILE, CHILD)
    before = copy.deepcopy([o.data for o in inputs.objects])
    chains = Chains(inputs, Report())
    child = inputs.runtimes[("llama-demo", "sglang-llama-3-2-3b")]
    spec = chains.merged_spec(child)
    runner(spec)["command"].append("--oops")
    assert "--oops" not in runner(chains.merged_spec(child))["command"]
    assert [o.data for o in inputs.objects] == before


def test_own_spec_hook_fills_each_runtime_before_merging():
    inputs = build(csr("p", spec={"protocolVersions": 1}), csr("c", parent="p"))
    filled = Chains(inputs, Report(), own_spec=lambda rt: dict(rt.spec, schedulerName=f"from-{rt.name}"))
    assert filled.merged_spec(inputs.cluster_runtimes["c"]) == {"protocolVersions": 1, "schedulerName": "from-c"}


def test_placeholders_survive_the_merge():
    spec = merged(PROFILE, CHILD, head="llama-demo/sglang-llama-3-2-3b")
    assert runner(spec)["command"][-1] == "--served-model-name={{.Name}}"


# ---------------------------------------------------------------- E-I5, W-I2, X15


def test_e_i5_each_declared_runner_needs_a_name():
    inputs = build(csr("c", parent="p", spec={"engineConfig": {"runner": {"args": ["--x"]}}}),
                   csr("d", spec={"decoderConfig": {"worker": {"runner": {"image": "x"}}}}))
    with pytest.raises(OmeError) as caught:
        check_runner_names(inputs.cluster_runtimes["c"])
    assert caught.value.message().line() == ("error: in.yaml:9:5: ClusterServingRuntime c: "
                                             "spec.engineConfig.runner.name: Required value")
    with pytest.raises(OmeError) as caught:
        check_runner_names(inputs.cluster_runtimes["d"])
    assert caught.value.text == "spec.decoderConfig.worker.runner.name: Required value"
    check_runner_names(build(CHILD).runtimes[("llama-demo", "sglang-llama-3-2-3b")])


def test_x14_w_i2_for_an_auto_selected_inheriting_runtime():
    report = Report()
    inputs = build(CHILD, PROFILE)
    warn_auto_selected(inputs.runtimes[("llama-demo", "sglang-llama-3-2-3b")], report)
    warn_auto_selected(inputs.cluster_runtimes["sglang-profile"], report)
    assert [m.text for m in report.messages] == [
        "runtime ServingRuntime/llama-demo/sglang-llama-3-2-3b was auto-selected, so it is rendered from its own "
        'spec; its ome.io/inherit-from parent "sglang-profile" is not applied']


def test_x14_auto_selection_matches_and_renders_the_own_spec():
    from omerender.ome.pinning.lock import live_state
    child = edit(CHILD, lambda d: (d["spec"]["supportedModelFormats"][0].update({"autoSelect": True}),
                                   d["spec"]["engineConfig"]["runner"].update({"image": "child:1"})))
    isvc = edit(ISVC_I, lambda d: d["spec"].pop("runtime"))
    inputs = build(PROFILE, child, MODEL, isvc)
    report = Report()
    live = live_state(inputs.isvcs[0], inputs, Chains(inputs, report), report)
    assert live.selection == "Auto"
    assert runner(live.spec) == {"name": "ome-container", "image": "child:1", "args": ["--tp-size=1", "--mem-frac=0.9"],
                                 "resources": yaml.safe_load(CHILD)["spec"]["engineConfig"]["runner"]["resources"]}
    assert "tolerations" not in live.spec["engineConfig"]
    assert [m.text for m in report.messages] == [
        "Runtime sglang-llama-3-2-3b will be auto-selected for model llama-3-2-3b-instruct",
        "runtime ServingRuntime/llama-demo/sglang-llama-3-2-3b was auto-selected, so it is rendered from its own "
        'spec; its ome.io/inherit-from parent "sglang-profile" is not applied']


def test_x15_named_runtime_uses_the_merged_accelerator_pool():
    profile = edit(PROFILE, lambda d: d["spec"].update({"acceleratorRequirements": {"acceleratorClasses": ["nvidia-h100"]}}))
    spec = merged(profile, CHILD, head="llama-demo/sglang-llama-3-2-3b")
    assert spec["acceleratorRequirements"] == {"acceleratorClasses": ["nvidia-h100"]}
    assert "acceleratorRequirements" not in build(CHILD).runtimes[("llama-demo", "sglang-llama-3-2-3b")].spec
