"""OME's own kinds in ``omerender validate`` (issue 43): checked against OME's pinned CRDs (omerender/kube/crds/ome-*,
scripts/vendor_crds.py), as the API server checks a create under strict field validation, rather than with the input
shapes; a field OME v1.3 added, which those CRDs (of the commit tests/data/ome comes from) predate, against its
input shape. OME objects written here by hand, each breaking one rule of its CRD, get exactly their error with
file:line:column; the valid twin passes; OME's catalog rendered in both weights modes and with --keep-inputs
validates clean (the samples: tests/test_validate.py)."""
from __future__ import annotations

import gzip
import json

import pytest
import yaml

from catalog import completed_model, isvc_for, models, paired_model_name
from conftest import ROOT, render_objects, run_cli
from samples import catalog_runtimes

ISVC = """apiVersion: ome.io/v1beta1
kind: InferenceService
metadata:
  name: chat
  namespace: serving
spec:
  model:
    name: llama-3-2-3b-instruct
  runtime:
    name: srt-llama-3-2-3b-instruct
  acceleratorSelector:
    policy: BestFit
  engine:
    minReplicas: 1
    maxReplicas: 2
    runner:
      ports:
        - containerPort: 8080
"""
MODEL = """apiVersion: ome.io/v1beta1
kind: BaseModel
metadata:
  name: llama
  namespace: serving
spec:
  modelFormat:
    name: safetensors
  storage:
    storageUri: hf://meta-llama/Llama-3.2-3B-Instruct
    downloadPolicy: ReuseIfExists
"""
WEIGHTS = """apiVersion: ome.io/v1beta1
kind: FineTunedWeight
metadata:
  name: llama-lora
spec:
  baseModelRef:
    name: llama
  modelType: LoRA
  hyperParameters:
    rank: 8
  storage:
    storageUri: oci://n/ns/b/bucket/o/lora
"""
BENCHMARK = """apiVersion: ome.io/v1beta1
kind: BenchmarkJob
metadata:
  name: chat-bench
  namespace: serving
spec:
  endpoint:
    inferenceService:
      name: chat
      namespace: serving
  task: text-to-text
  maxTimePerIteration: 10
  maxRequestsPerIteration: 100
  serviceMetadata:
    engine: SGLang
    version: v0.5
    gpuType: H100
    gpuCount: 1
  outputLocation:
    storageUri: oci://n/ns/b/bucket/o/results
"""

# (the valid object, how to break it, the one error's text after "file:line:column: Kind name: ", its line:column:
# the field's key, or the nearest parent's where the field is missing)
CASES = {
    "unknown field": (ISVC, ("    maxReplicas: 2\n", "    maxReplicas: 2\n    maxReplica: 3\n"),
                      'spec.engine.maxReplica: unknown field "maxReplica"', (16, 5)),
    "enum": (ISVC, ("policy: BestFit", "policy: Fastest"),
             'spec.acceleratorSelector.policy: Unsupported value: "Fastest": supported values: "BestFit", '
             '"Cheapest", "MostCapable", "FirstAvailable"', (12, 5)),
    "type": (ISVC, ("minReplicas: 1", "minReplicas: one"),
             'spec.engine.minReplicas: Invalid value: "string": must be of type integer', (14, 5)),
    "format": (ISVC, ("containerPort: 8080", "containerPort: 80800000000"),
               "spec.engine.runner.ports[0].containerPort: Invalid value: 80800000000: must fit in int32", (18, 11)),
    "model enum": (MODEL, ("downloadPolicy: ReuseIfExists", "downloadPolicy: Always"),
                   'spec.storage.downloadPolicy: Unsupported value: "Always": supported values: "AlwaysDownload", '
                   '"ReuseIfExists"', (11, 5)),
    "required": (WEIGHTS, ("  modelType: LoRA\n", ""), "spec.modelType: Required value", (5, 1)),
    "benchmark enum": (BENCHMARK, ("gpuType: H100", "gpuType: B200"),
                       'spec.serviceMetadata.gpuType: Unsupported value: "B200": supported values: "H100", "A100", '
                       '"MI300", "A10"', (17, 5)),
    # a field OME v1.3 added is checked against its input shape: runtime.autoSync is a boolean
    "v1.3 field's type": (ISVC, ("    name: srt-llama-3-2-3b-instruct\n",
                                 "    name: srt-llama-3-2-3b-instruct\n    autoSync: maybe\n"),
                          'spec.runtime.autoSync: Invalid value: "string": must be of type boolean', (11, 5)),
}


def _validate(tmp_path, text: str, *flags: str):
    path = tmp_path / "ome.yaml"
    path.write_text(text)
    return run_cli("validate", str(path), "--strict", *flags)


@pytest.mark.parametrize("case", CASES)
def test_an_ome_object_breaking_its_crd_gets_exactly_its_error_and_the_valid_twin_passes(case, tmp_path):
    valid, (old, new), expected, (line, column) = CASES[case]
    passed = _validate(tmp_path, valid)
    assert (passed.code, passed.stdout, passed.printed) == (0, "", "")
    assert old in valid
    broken = _validate(tmp_path, valid.replace(old, new, 1))
    assert (broken.code, broken.stdout) == (1, "")
    meta = yaml.safe_load(valid)["metadata"]
    name = f"{meta['namespace']}/{meta['name']}" if "namespace" in meta else meta["name"]
    kind = yaml.safe_load(valid)["kind"]
    assert broken.placed_lines == [f"error: {tmp_path / 'ome.yaml'}:{line}:{column}: {kind} {name}: {expected}"]


def test_the_fields_ome_v1_3_added_pass_and_a_misspelt_one_is_an_unknown_field(tmp_path):
    v13 = ISVC.replace("  acceleratorSelector:\n", "  deploymentMode: RawDeployment\n  acceleratorSelector:\n").replace(
        "    maxReplicas: 2\n", "    maxReplicas: 2\n    autoscaler: {class: HPA}\n"
                               "    servicePortAppProtocols: {http: kubernetes.io/h2c}\n").replace(
        "    name: srt-llama-3-2-3b-instruct\n", "    name: srt-llama-3-2-3b-instruct\n    autoSync: false\n")
    assert _validate(tmp_path, v13).code == 0
    typo = _validate(tmp_path, v13.replace("deploymentMode", "deploymentMod"))
    assert typo.code == 1
    assert typo.placed_lines == [f"error: {tmp_path / 'ome.yaml'}:12:3: InferenceService serving/chat: "
                                 'spec.deploymentMod: unknown field "deploymentMod"']


def test_a_field_name_with_dots_never_reaches_into_a_v1_3_field(tmp_path):
    done = _validate(tmp_path, ISVC.replace("  engine:\n", '  "traffic.policy": {a: 1}\n  engine:\n'))
    assert done.code == 1 and "Traceback" not in done.printed
    assert done.placed_lines[0].endswith('spec.traffic.policy: unknown field "traffic.policy"')


def test_a_kind_ome_s_crds_have_but_omerender_never_read_is_checked_not_a_warning(tmp_path):
    # FineTunedWeight has no input shape: before its CRD shipped, it was a "no schema" warning
    done = _validate(tmp_path, WEIGHTS.replace("    rank: 8\n", "    rank: 8\n  rank: 8\n"))
    assert done.code == 1 and "[no-schema]" not in done.printed
    assert done.placed_lines == [f"error: {tmp_path / 'ome.yaml'}:11:3: FineTunedWeight llama-lora: "
                                 'spec.rank: unknown field "rank"']


def _catalog() -> list[dict]:
    """Every catalog runtime (the one OME installs of two with a name), its paired model completed as the model
    agent would, and an InferenceService naming it; less the runtime whose chat template is an invalid placeholder
    (test_catalog_sweep.py)."""
    objects, seen = [], set()
    for i, (_, runtime) in enumerate(sorted(catalog_runtimes().items())):
        if "{{ system_message }}" in str(runtime):
            continue
        model = paired_model_name(runtime)
        objects.append(runtime)
        if model and model not in seen:
            seen.add(model)
            objects.append(completed_model(models()[model], runtime))
        isvc = isvc_for(runtime, model)
        isvc["metadata"]["name"] = f"svc-{i:03d}"
        objects.append(isvc)
    return objects


@pytest.mark.parametrize("flags", [(), ("--model-weights", "download"), ("--keep-inputs",)])
def test_ome_s_catalog_rendered_in_both_weights_modes_and_with_its_inputs_validates_clean(flags, tmp_path):
    run = render_objects(_catalog(), *flags)
    assert run.code == 0, run.stderr[-2000:]
    kinds = {o["kind"] for o in run.objects}
    ome = {"ClusterBaseModel"} if not flags else set() if "download" in flags else {
        "ClusterBaseModel", "ClusterServingRuntime", "InferenceService"}
    assert {o["kind"] for o in run.objects if o["apiVersion"] == "ome.io/v1beta1"} == ome
    assert {"Deployment", "LeaderWorkerSet"} <= kinds
    path = tmp_path / "rendered.yaml"
    path.write_text(run.stdout)
    done = run_cli("validate", str(path), "--strict")
    assert (done.code, done.printed) == (0, "")


def test_ome_s_crds_given_with_schema_location_replace_the_pinned_ones_whole(tmp_path):
    # the pinned InferenceService CRD, less acceleratorSelector, as a cluster's own CRD: it alone decides
    pinned = json.loads(gzip.decompress((ROOT / "omerender" / "kube" / "crds" / "ome-inferenceservices.json.gz")
                                        .read_bytes()))
    schema = pinned["openAPIV3Schema"]
    del schema["properties"]["spec"]["properties"]["acceleratorSelector"]
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "inferenceservices.ome.io"},
           "spec": {"group": "ome.io", "names": {"kind": "InferenceService", "plural": "inferenceservices"},
                    "scope": "Namespaced",
                    "versions": [{"name": "v1beta1", "served": True, "storage": True,
                                  "schema": {"openAPIV3Schema": schema}}]}}
    (tmp_path / "ome-crds.yaml").write_text(yaml.safe_dump(crd))
    given = ("--schema-location", str(tmp_path / "ome-crds.yaml"))
    v13 = ISVC.replace("  acceleratorSelector:\n    policy: BestFit\n", "  deploymentMode: RawDeployment\n")
    assert _validate(tmp_path, v13).code == 0
    done = _validate(tmp_path, v13, *given)
    assert done.code == 1
    assert done.placed_lines == [f"error: {tmp_path / 'ome.yaml'}:11:3: InferenceService serving/chat: "
                                 'spec.deploymentMode: unknown field "deploymentMode"']
    refused = _validate(tmp_path, ISVC, *given)
    assert refused.code == 1 and 'spec.acceleratorSelector: unknown field "acceleratorSelector"' in refused.placed


def test_a_status_is_ignored_as_the_api_server_ignores_it_on_create(tmp_path):
    # `kubectl get -o yaml` writes it; the pinned CRDs were vendored without it
    assert _validate(tmp_path, MODEL + "status:\n  state: Ready\n").code == 0
    assert _validate(tmp_path, MODEL + "statuses: {}\n").code == 1


def test_below_a_field_the_input_shapes_take_as_any_value_the_crd_decides(tmp_path):
    # the shapes read spec.predictor as any value (it is ignored); its fields are the CRD's
    done = _validate(tmp_path, ISVC.replace("  engine:\n", "  predictor: {minReplicas: 1, replica: 2}\n  engine:\n"))
    assert done.code == 1
    assert [line.split(": ", 3)[3] for line in done.placed_lines] == ['spec.predictor.replica: unknown field "replica"']


def test_the_pod_fields_of_an_ome_object_are_those_of_ome_s_crd_not_of_the_kube_version(tmp_path):
    # OME's CRDs hold Kubernetes 1.33's pod fields: the API server of 1.30 takes an image volume in an
    # InferenceService (the render refuses it for 1.30, naming the pod OME would create: test_kube_versions.py)
    volume = ISVC.replace("    runner:\n", "    volumes:\n      - name: extra\n        image: {reference: "
                                            "registry.example/m:v1}\n    runner:\n")
    assert _validate(tmp_path, volume, "--kube-version", "1.30").code == 0
    done = _validate(tmp_path, volume.replace("image: {reference", "image: {refrence"), "--kube-version", "1.30")
    assert done.code == 1
    assert [line.split(": ", 3)[3] for line in done.placed_lines] == [
        'spec.engine.volumes[0].image.refrence: unknown field "refrence"']
