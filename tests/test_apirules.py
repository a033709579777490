"""What the API server would refuse is an error at render time, naming the input file, object and field
(issue 12: "Objects Kubernetes would reject render with exit 0"); a near miss of an OME kind or field is
never passed through silently (issue 13); a control character in a name cannot forge a message line."""
import re
import unicodedata

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import render_objects, run_cli, worked_example

ISVC = "error: <stdin>: InferenceService llama-demo/llama-3-2-3b-instruct: "
RUNTIME = "error: <stdin>: ClusterServingRuntime srt-llama-3-2-3b-instruct: "
LABEL_TEXT = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
              "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
              "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
SUBDOMAIN_TEXT = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
                  "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation "
                  "is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
QUALIFIED_TEXT = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                  "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
                  "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")


def render_we(edit=None, *extra):
    objs = worked_example()
    if edit is not None:
        edit(objs)
    return render_objects([objs["model"], objs["runtime"], objs["isvc"], *extra])


def failed(run) -> list[str]:
    assert run.code == 1 and run.stdout == "", run.stderr
    return run.lines


def engine_runner(objs):
    return objs["runtime"]["spec"]["engineConfig"]["runner"]


def configmap(name, namespace="apps", **meta):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace, **meta},
            "data": {"a": "1"}}


# ---------------------------------------------------------------- int32 and int64 fields

def test_max_replicas_beyond_int32_is_an_error_on_the_input_field():
    run = render_we(lambda o: o["isvc"]["spec"]["engine"].update(maxReplicas=2 ** 40))
    assert failed(run) == [ISVC + "spec.engine.maxReplicas: Invalid value: 1099511627776: must be a 32-bit integer "
                           "(from -2147483648 to 2147483647)"]
    # Past int64 the API server reads a JSON number as a float64, and so does omerender (tests/test_go_yaml.py).
    run = render_we(lambda o: o["isvc"]["spec"]["engine"].update(maxReplicas=10 ** 44))
    assert failed(run) == [ISVC + "spec.engine.maxReplicas: Invalid value: 1e+44: must be a non-negative integer"]


def test_int32_and_int64_pod_fields_are_checked_where_they_are_written():
    run = render_we(lambda o: engine_runner(o)["ports"][0].update(containerPort=2 ** 31))
    assert failed(run) == [RUNTIME + "spec.engineConfig.runner.ports[0].containerPort: Invalid value: 2147483648: "
                           "must be a 32-bit integer (from -2147483648 to 2147483647)"]
    run = render_we(lambda o: o["isvc"]["spec"]["engine"].update(terminationGracePeriodSeconds=2 ** 63))
    assert failed(run) == [ISVC + 'spec.engine.terminationGracePeriodSeconds: Invalid value: "number": must be of '
                           "type integer"]  # past int64: a float64, as the API server reads it


def test_largest_int32_still_renders():
    run = render_we(lambda o: o["isvc"]["spec"]["engine"].update(maxReplicas=2 ** 31 - 1))
    assert run.code == 0, run.stderr
    assert run.find("HorizontalPodAutoscaler")["spec"]["maxReplicas"] == 2 ** 31 - 1


# ---------------------------------------------------------------- quantities and env names

def gpu(value):
    def edit(objs):
        resources = engine_runner(objs)["resources"]
        resources["requests"]["nvidia.com/gpu"] = resources["limits"]["nvidia.com/gpu"] = value
    return edit


def test_negative_or_fractional_gpus_are_errors():
    assert failed(render_we(gpu("-1"))) == [
        RUNTIME + 'spec.engineConfig.runner.resources.requests.nvidia.com/gpu: Invalid value: "-1": must be greater '
        'than or equal to 0']
    assert failed(render_we(gpu("1.5"))) == [
        RUNTIME + 'spec.engineConfig.runner.resources.requests.nvidia.com/gpu: Invalid value: "1.5": must be an '
        'integer']


def test_fractional_cpu_is_fine_but_negative_memory_is_not():
    run = render_we(lambda o: engine_runner(o)["resources"]["requests"].update(cpu="500m"))
    assert run.code == 0, run.stderr
    run = render_we(lambda o: o["isvc"]["spec"]["engine"]["runner"].update(resources={"limits": {"memory": "-1Gi"}}))
    assert failed(run) == [ISVC + 'spec.engine.runner.resources.limits.memory: Invalid value: "-1Gi": must be greater '
                           'than or equal to 0']


def test_env_name_with_equals_sign_is_an_error():
    run = render_we(lambda o: o["isvc"]["spec"]["engine"]["runner"]["env"].append({"name": "A=B", "value": "1"}))
    assert failed(run) == [ISVC + 'spec.engine.runner.env[1].name: Invalid value: "A=B": a valid environment variable '
                           "name must consist only of printable ASCII characters other than '='"]


def test_env_names_kubernetes_allows_still_render():
    run = render_we(lambda o: o["isvc"]["spec"]["engine"]["runner"]["env"].append({"name": "my.var-1", "value": "1"}))
    assert run.code == 0, run.stderr


# ---------------------------------------------------------------- labels, annotations, names

def test_label_value_over_63_characters_is_an_error():
    run = render_we(lambda o: o["isvc"]["metadata"]["labels"].update(team="x" * 64))
    assert failed(run) == [ISVC + f'metadata.labels.team: Invalid value: "{"x" * 64}": must be no more than 63 '
                           "characters"]


def test_bad_label_keys_and_values_name_the_runtime_field():
    run = render_we(lambda o: o["runtime"]["spec"]["engineConfig"]["labels"].update({"team": "a b"}))
    assert failed(run) == [
        RUNTIME + 'spec.engineConfig.labels.team: Invalid value: "a b": a valid label must be an empty string or '
        "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character "
        "(e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
        "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"]
    run = render_we(lambda o: o["runtime"]["spec"]["engineConfig"]["labels"].update({"Example.com/team": "a"}))
    assert failed(run) == [RUNTIME + 'spec.engineConfig.labels: Invalid value: "Example.com/team": prefix part '
                           + SUBDOMAIN_TEXT]
    run = render_we(lambda o: o["runtime"]["spec"]["engineConfig"].update(nodeSelector={"-zone": "a"}))
    assert failed(run) == [RUNTIME + f'spec.engineConfig.nodeSelector: Invalid value: "-zone": {QUALIFIED_TEXT}']


def test_annotation_keys_follow_the_qualified_name_rule_and_values_are_free():
    run = render_we(lambda o: o["isvc"]["metadata"].update(annotations={"a/b/c": "x"}))
    assert failed(run) == [
        ISVC + 'metadata.annotations: Invalid value: "a/b/c": a qualified name must consist of alphanumeric '
        "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or "
        "'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an "
        "optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    run = render_we(lambda o: o["isvc"]["metadata"].update(annotations={"Note": "any text: 100% fine " * 20}))
    assert run.code == 0, run.stderr


def test_annotations_over_256_kib_in_total_are_an_error():
    big = {f"a{i}": "x" * 100_000 for i in range(3)}
    assert failed(render_objects([configmap("big", annotations=big)])) == [
        "error: <stdin>: ConfigMap apps/big: metadata.annotations: Too long: must have at most 262144 bytes"]


def test_passthrough_names_follow_the_rule_of_their_kind():
    assert failed(render_objects([configmap("Bad_Name")])) == [
        f'error: <stdin>: ConfigMap apps/Bad_Name: metadata.name: Invalid value: "Bad_Name": {SUBDOMAIN_TEXT}']
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "1st", "namespace": "apps"}}
    assert failed(render_objects([service])) == [
        'error: <stdin>: Service apps/1st: metadata.name: Invalid value: "1st": a DNS-1035 label must consist of lower '
        "case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric "
        "character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"]
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a.b"}}
    assert failed(render_objects([namespace])) == [
        f'error: <stdin>: Namespace a.b: metadata.name: Invalid value: "a.b": {LABEL_TEXT}']


def test_rbac_system_names_and_long_subdomains_are_valid():
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "system:controller:ome"}, "rules": []}
    long_name = ".".join(["a" * 63] * 3) + "." + "b" * 61  # 253 characters
    run = render_objects([role, configmap(long_name)])
    assert run.code == 0, run.stderr
    assert [o["metadata"]["name"] for o in run.objects] == ["system:controller:ome", long_name]
    bad_role = {**role, "metadata": {"name": "a/b"}}
    assert failed(render_objects([bad_role])) == [
        "error: <stdin>: ClusterRole a/b: metadata.name: Invalid value: \"a/b\": may not contain '/'"]


def test_a_namespace_that_is_not_a_dns_label_is_an_error():
    assert failed(render_objects([configmap("x", namespace="..")])) == [
        f'error: <stdin>: ConfigMap ../x: metadata.namespace: Invalid value: "..": {LABEL_TEXT}']
    run = render_we(lambda o: o["isvc"]["metadata"].update(namespace="Demo"))
    assert failed(run) == [
        f'error: <stdin>: InferenceService Demo/llama-3-2-3b-instruct: metadata.namespace: Invalid value: "Demo": '
        f"{LABEL_TEXT}"]


def test_a_rendered_name_over_253_characters_is_an_error_naming_the_rendered_object():
    name = "a" * 250
    run = render_we(lambda o: o["isvc"]["metadata"].update(name=name))
    assert failed(run) == [
        f"error: <stdin>: InferenceService llama-demo/{name}: rendered Deployment llama-demo/{name}-engine: "
        f'metadata.name: Invalid value: "{"a" * 80}... (257 characters)": must be no more than 253 characters']


# ---------------------------------------------------------------- one object twice

def test_two_inferenceservices_rendering_one_service_is_an_error_naming_both():
    def second(objs):
        other = yaml.safe_load(yaml.safe_dump(objs["isvc"]))
        other["metadata"]["name"] = "llama-3-2-3b-instruct-engine"
        objs["other"] = other
    objs = worked_example()
    second(objs)
    run = render_objects(list(objs.values()))
    assert failed(run) == [
        "error: <stdin>: InferenceService llama-demo/llama-3-2-3b-instruct-engine: Service "
        "llama-demo/llama-3-2-3b-instruct-engine would be written twice: rendered from InferenceService "
        "llama-demo/llama-3-2-3b-instruct (<stdin>) and rendered from InferenceService "
        "llama-demo/llama-3-2-3b-instruct-engine (<stdin>); the API server keeps one object per kind, namespace and "
        "name: rename one"]


def test_the_same_passthrough_object_twice_is_an_error_on_stdout_too(tmp_path):
    (tmp_path / "a.yaml").write_text(yaml.safe_dump(configmap("settings")))
    (tmp_path / "b.yaml").write_text(yaml.safe_dump(configmap("settings")))
    expected = [f"error: {tmp_path}/b.yaml: ConfigMap apps/settings: ConfigMap apps/settings would be written twice: "
                f"the input object in {tmp_path}/a.yaml and the input object in {tmp_path}/b.yaml; the API server "
                "keeps one object per kind, namespace and name: rename one"]
    assert failed(run_cli("render", str(tmp_path))) == expected
    out = tmp_path.parent / f"{tmp_path.name}-out"
    assert run_cli("render", str(tmp_path), "--output-dir", str(out)).lines == expected
    assert not out.exists()


def test_an_input_object_clashing_with_a_rendered_one_is_an_error():
    service = {"apiVersion": "v1", "kind": "Service",
               "metadata": {"name": "llama-3-2-3b-instruct-engine", "namespace": "llama-demo"}}
    assert failed(render_we(None, service)) == [
        ISVC + "Service llama-demo/llama-3-2-3b-instruct-engine would be written twice: the input object in <stdin> "
        "and rendered from InferenceService llama-demo/llama-3-2-3b-instruct (<stdin>); the API server keeps one "
        "object per kind, namespace and name: rename one"]


def test_same_name_in_other_kinds_groups_or_namespaces_is_fine():
    objs = [configmap("x"), configmap("x", namespace="other"), {**configmap("x"), "kind": "Secret"},
            {**configmap("x"), "apiVersion": "example.com/v1"}]
    run = render_objects(objs)
    assert run.code == 0, run.stderr
    assert len(run.objects) == 4


# ---------------------------------------------------------------- near misses (issue 13)

def test_unknown_kind_in_the_ome_group_is_an_error_with_the_nearest_kind():
    for kind in ("InferenceServices", "Inferenceservice"):
        isvc = {**worked_example()["isvc"], "kind": kind}
        assert failed(render_objects([isvc])) == [
            f'error: <stdin>: {kind} llama-demo/llama-3-2-3b-instruct: kind: Unsupported value: "{kind}": not a kind '
            'of the ome.io API group; did you mean "InferenceService"?']
    thing = {"apiVersion": "ome.io/v1beta1", "kind": "Frobnicator", "metadata": {"name": "x"}}
    assert failed(render_objects([thing])) == [
        'error: <stdin>: Frobnicator x: kind: Unsupported value: "Frobnicator": not a kind of the ome.io API group; '
        "the kinds of ome.io are AcceleratorClass, AcceleratorQuota, AutoscalerPolicy, BaseModel, BenchmarkJob, "
        "ClusterBaseModel, ClusterServingRuntime, FineTunedWeight, InferenceReplica, InferenceService, RolloutPolicy, "
        "ServingRuntime, TrafficMap, WorkloadCluster"]


def test_other_ome_kinds_pass_through_only_with_keep_inputs():
    """Issue 31: no kind of OME's API group passes through silently (tests/test_benchmark.py has the rest)."""
    weight = {"apiVersion": "ome.io/v1beta1", "kind": "FineTunedWeight", "metadata": {"name": "lora"},
              "spec": {"baseModelRef": {"name": "m"}}}
    assert failed(render_objects([weight])) == [
        "error: <stdin>: FineTunedWeight lora: omerender cannot render a FineTunedWeight (ome.io/v1beta1): it needs "
        "OME's controller; --keep-inputs passes it through, for a cluster that runs OME"]
    run = render_objects([weight], "--keep-inputs")
    assert run.code == 0 and run.lines == [] and run.objects == [weight]


def test_ome_kind_under_another_group_is_a_warning_and_passes_through():
    isvc = {**worked_example()["isvc"], "apiVersion": "ome.oracle.com/v1beta1"}
    run = render_objects([isvc])
    assert run.code == 0
    assert run.lines == [
        "warning: <stdin>: InferenceService llama-demo/llama-3-2-3b-instruct: apiVersion ome.oracle.com/v1beta1 is not "
        "OME's API group, so this InferenceService is passed through unrendered; to render it, use apiVersion: "
        "ome.io/v1beta1"]
    assert run.objects == [isvc]
    kserve = {**isvc, "apiVersion": "serving.kserve.io/v1beta1", "spec": {"predictor": {}}}
    run = render_objects([kserve])
    assert (run.code, run.lines) == (0, [])


def test_unknown_fields_in_runtime_model_and_class_specs_are_errors_with_the_path():
    run = render_we(lambda o: o["runtime"]["spec"].update(modelSizeRang={"min": "1B"}))
    assert failed(run) == [RUNTIME + 'spec.modelSizeRang: unknown field "modelSizeRang"; did you mean '
                           '"modelSizeRange"?']
    run = render_we(lambda o: o["runtime"]["spec"]["modelSizeRange"].update(maximum="4B"))
    assert failed(run) == [RUNTIME + 'spec.modelSizeRange.maximum: unknown field "maximum"']
    run = render_we(lambda o: o["runtime"]["spec"]["supportedModelFormats"][0].update(autoselect=True))
    assert failed(run) == [RUNTIME + 'spec.supportedModelFormats[0].autoselect: unknown field "autoselect"; did you '
                           'mean "autoSelect"?']
    run = render_we(lambda o: o["model"]["spec"]["storage"].update(storageURI="hf://x/y"))
    assert failed(run) == ['error: <stdin>: ClusterBaseModel llama-3-2-3b-instruct: spec.storage.storageURI: unknown '
                           'field "storageURI"; did you mean "storageUri"?']
    model = {"apiVersion": "ome.io/v1beta1", "kind": "BaseModel", "metadata": {"name": "m", "namespace": "a"},
             "spec": {"vendr": "meta"}}
    assert failed(render_objects([model])) == [
        'error: <stdin>: BaseModel a/m: spec.vendr: unknown field "vendr"; did you mean "vendor"?']
    cls = {"apiVersion": "ome.io/v1beta1", "kind": "AcceleratorClass", "metadata": {"name": "h100"},
           "spec": {"capabilities": {"memoryGb": "80Gi"}}}
    assert failed(render_objects([cls])) == [
        'error: <stdin>: AcceleratorClass h100: spec.capabilities.memoryGb: unknown field "memoryGb"; did you mean '
        '"memoryGB"?']
    run = render_we(lambda o: o["isvc"]["spec"].update(acceleratorSelector={"constraints": {"minMemmory": "40Gi"}}))
    assert failed(run) == [ISVC + 'spec.acceleratorSelector.constraints.minMemmory: unknown field "minMemmory"; did '
                           'you mean "minMemory"?']
    run = render_we(lambda o: o["isvc"]["spec"].update(engin={}))
    assert failed(run) == [ISVC + 'spec.engin: unknown field "engin"; did you mean "engine"?']


# ---------------------------------------------------------------- control characters in messages

def test_a_newline_in_a_name_cannot_forge_an_error_line():
    run = render_objects([configmap("x\nerror: all good\x1b[2K\r")])
    assert run.code == 1 and run.stdout == ""
    assert run.stderr.count("\n") == 1 and "\x1b" not in run.stderr and "\r" not in run.stderr
    assert run.lines == [
        'error: <stdin>: ConfigMap apps/x\\nerror: all good\\x1b[2K\\r: metadata.name: Invalid value: '
        f'"x\\nerror: all good\\x1b[2K\\r": {SUBDOMAIN_TEXT}']


def test_control_characters_in_file_names_and_warnings_are_escaped(tmp_path):
    folder = tmp_path / "a\u2028b"
    folder.mkdir()
    isvc = {**worked_example()["isvc"], "apiVersion": "ome.oracle.com/v1beta1"}
    (folder / "x\ny.yaml").write_text(yaml.safe_dump(isvc))
    run = run_cli("render", str(folder))
    assert run.code == 0
    assert run.stderr.count("\n") == 1
    assert run.lines[0].startswith(f"warning: {tmp_path}/a\\u2028b/x\\ny.yaml: InferenceService ")


def test_krm_result_messages_are_escaped():
    text = yaml.safe_dump({"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList",
                           "items": [configmap("x\ny")]})
    run = run_cli("fn", input=text)
    assert run.code == 1
    result = yaml.safe_load(run.stdout)["results"][0]
    assert result["message"].startswith('ConfigMap apps/x\\ny: metadata.name: Invalid value: "x\\ny": ')
    assert run.stderr.count("\n") == 1


def test_a_label_value_copied_from_the_model_names_its_source():
    run = render_we(lambda o: o["model"]["spec"].update(vendor="Meta AI"))
    assert failed(run) == [
        ISVC + "rendered Deployment llama-demo/llama-3-2-3b-instruct-engine: metadata.labels.base-model-vendor: "
        'Invalid value: "Meta AI": a valid label must be an empty string or consist of alphanumeric characters, '
        "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  "
        "or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?') (the value of the "
        "model's spec.vendor)"]


NAME_CHARS = st.sampled_from(list("ab-.Z_/%:= \n\r\t\x1b\x00\x7f\x85\u2028\u2029\u202e"))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.text(NAME_CHARS, min_size=1, max_size=12), namespace=st.text(NAME_CHARS, min_size=1, max_size=6),
       label=st.text(NAME_CHARS, max_size=6))
def test_any_name_gives_one_clean_line_per_message_and_only_valid_names_render(name, namespace, label):
    run = render_objects([configmap(name, namespace=namespace, labels={"k": label})])
    assert run.code in (0, 1)
    lines = run.stderr.splitlines()
    assert all(line.startswith(("error: ", "warning: ")) for line in lines)
    assert not any(unicodedata.category(c) == "Cc" or c in "\u2028\u2029\u202e" for c in run.stderr.replace("\n", ""))
    valid = (re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*", name)
             and re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", namespace)
             and re.fullmatch(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?", label))
    assert (run.code == 0) == bool(valid), run.stderr
    if run.code == 1:
        assert len(lines) == 1 and run.stdout == ""


def test_unknown_fields_deeper_in_runtime_model_and_class_specs_are_errors():
    def config(objs):
        objs["runtime"]["spec"]["supportedModelFormats"][0]["acceleratorConfig"] = {
            "nvidia-h100": {"tensorParallelismOverride": {"tensorParalellSize": 2}}}
    assert failed(render_we(config)) == [
        RUNTIME + "spec.supportedModelFormats[0].acceleratorConfig.nvidia-h100.tensorParallelismOverride."
        'tensorParalellSize: unknown field "tensorParalellSize"; did you mean "tensorParallelSize"?']
    run = render_we(lambda o: o["model"]["spec"].update(diffusionPipeline={"vae": {"libary": "diffusers"}}))
    assert failed(run) == ['error: <stdin>: ClusterBaseModel llama-3-2-3b-instruct: spec.diffusionPipeline.vae.libary: '
                           'unknown field "libary"; did you mean "library"?']
    cls = {"apiVersion": "ome.io/v1beta1", "kind": "AcceleratorClass", "metadata": {"name": "h100"},
           "spec": {"discovery": {"affinity": {"nodeAffinity": {"requiredDuringScheduling": {}}}}}}
    assert failed(render_objects([cls])) == [
        "error: <stdin>: AcceleratorClass h100: spec.discovery.affinity.nodeAffinity.requiredDuringScheduling: "
        'unknown field "requiredDuringScheduling"']


def test_a_runtime_entry_takes_v1_3_model_cache_providers_as_a_list_of_names():
    """api.md §6: supportedModelFormats[].modelCacheProviders is a v1.3 field with no effect yet; OME admits it."""
    def providers(value):
        return lambda o: o["runtime"]["spec"]["supportedModelFormats"][0].update(modelCacheProviders=value)
    assert render_we(providers(["node-cache"])).code == 0
    assert failed(render_we(providers("node-cache"))) == [
        RUNTIME + 'spec.supportedModelFormats[0].modelCacheProviders: Invalid value: "string": must be of type array']


def test_labels_and_annotations_must_be_strings_but_null_is_unset():
    assert failed(render_objects([configmap("x", labels={"replicas": 3})])) == [
        'error: <stdin>: ConfigMap apps/x: metadata.labels.replicas: Invalid value: "number": must be of type string']
    run = render_objects([configmap("x", labels={"a": None}, annotations={"b": None})])
    assert run.code == 0, run.stderr


def test_ports_outside_1_to_65535_are_errors():
    run = render_we(lambda o: engine_runner(o)["readinessProbe"]["httpGet"].update(port=0))
    assert failed(run) == [RUNTIME + "spec.engineConfig.runner.readinessProbe.httpGet.port: Invalid value: 0: must be "
                           "between 1 and 65535, inclusive"]
    run = render_we(lambda o: engine_runner(o)["ports"][0].update(containerPort=80800))
    assert failed(run) == [RUNTIME + "spec.engineConfig.runner.ports[0].containerPort: Invalid value: 80800: must be "
                           "between 1 and 65535, inclusive"]


def test_passthrough_workloads_get_the_same_checks_as_rendered_ones():
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "apps"},
                  "spec": {"replicas": 2 ** 40, "template": {"metadata": {"labels": {"app": "web"}}}}}
    assert failed(render_objects([deployment])) == [
        "error: <stdin>: Deployment apps/web: spec.replicas: Invalid value: 1099511627776: must be a 32-bit integer "
        "(from -2147483648 to 2147483647)"]
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "apps"},
               "spec": {"ports": [{"port": 80, "targetPort": 70000}]}}
    assert failed(render_objects([service])) == [
        "error: <stdin>: Service apps/web: spec.ports[0].targetPort: Invalid value: 70000: must be between 1 and "
        "65535, inclusive"]
    deployment["spec"].update(replicas=1, template={"metadata": {"labels": {"app": "web server"}}})
    assert failed(render_objects([deployment]))[0].startswith(
        'error: <stdin>: Deployment apps/web: spec.template.metadata.labels.app: Invalid value: "web server": a valid '
        "label must be")


def test_container_and_volume_names_are_dns_labels_and_env_prefixes_env_names():
    run = render_we(lambda o: engine_runner(o).update(name="Runner_1"))
    assert failed(run) == [RUNTIME + f'spec.engineConfig.runner.name: Invalid value: "Runner_1": {LABEL_TEXT}']
    run = render_we(lambda o: o["runtime"]["spec"]["engineConfig"]["volumes"][0].update(name="dev.shm"))
    assert failed(run) == [RUNTIME + f'spec.engineConfig.volumes[0].name: Invalid value: "dev.shm": {LABEL_TEXT}']
    run = render_we(lambda o: o["isvc"]["spec"]["engine"]["runner"].update(
        envFrom=[{"prefix": "A=", "configMapRef": {"name": "c"}}]))
    assert failed(run) == [ISVC + 'spec.engine.runner.envFrom[0].prefix: Invalid value: "A=": a valid environment '
                           "variable name must consist only of printable ASCII characters other than '='"]


def test_a_quantity_found_valid_once_is_not_taken_for_an_equal_value_of_another_type():
    # The checks remember valid quantities; 1 and true are equal in Python but not as quantities.
    assert render_we(gpu(1)).code == 0
    assert failed(render_we(gpu(True))) == [
        RUNTIME + 'spec.engineConfig.runner.resources.requests.nvidia.com/gpu: Invalid value: "boolean": must be of '
        'type quantity']
