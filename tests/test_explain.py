"""omerender explain (selection.md §5, §6.5, §8.6 #54-55, §8.7)."""
from __future__ import annotations

import json

import yaml
from click.testing import CliRunner

from omerender.cli.app import cli  # through the group, as users call it: a command invoked alone caches click's bare --help

from select_helpers import L3, bm, cbm, csr, entry, isvc, sr

TABLE_47 = """\
RUNTIME           SCOPE        COMPATIBLE   PRIORITY   WEIGHT   REASON
team-llama        Namespaced   Yes          1          2        -
vllm-llama        Cluster      Yes          2          6        -
srt-llama-small   Cluster      Yes          3          6        -
srt-llama-large   Cluster      Yes          3          6        -
"""

TABLE_54 = """\
RUNTIME        SCOPE        COMPATIBLE   PRIORITY   WEIGHT   REASON
team-llama     Namespaced   Yes          1          2        -
vllm-llama     Cluster      Yes          2          6        -
srt-llama-1b   Cluster      No           -          -        model size 3.21B is outside supported range [500M, 2B]
vllm-base      Cluster      No           -          -        supports the model but has no supportedModelFormats[].autoSelect=true entry, so automatic selection skips it (pin it explicitly via spec.runtime.name instead)
vllm-legacy    Cluster      No           -          -        runtime is disabled
"""


def invoke(objects, *args):
    runner = CliRunner()
    text = yaml.safe_dump_all(list(objects), sort_keys=False)
    return runner.invoke(cli, ["explain", *args, "-"], input=text)


def example_47():
    return (bm(L3), sr("team-llama", entries=[entry(auto=True)]),
            csr("vllm-llama", entries=[entry(fmt_w=2, priority=2, auto=True)]),
            csr("srt-llama-small", entries=[entry(priority=3, auto=True)], size=("1B", "8B")),
            csr("srt-llama-large", entries=[entry(priority=3, auto=True)], size=("1B", "70B")))


def example_54():
    return (bm(L3, ns="team-a"), sr("team-llama", ns="team-a", entries=[entry(auto=True)]),
            csr("vllm-llama", entries=[entry(fmt_w=2, priority=2, auto=True)]),
            csr("srt-llama-1b", size=("500M", "2B")), csr("vllm-base", entries=[entry()]),
            csr("vllm-legacy", disabled=True), sr("other-ns", ns="elsewhere"))


def test_47_table():
    result = invoke(example_47(), "--model", L3, "-n", "llama-demo")
    assert result.exit_code == 0
    assert result.stdout == TABLE_47
    assert result.stderr == ("Selected: team-llama (Namespaced): ServingRuntimes in the namespace come before "
                             "ClusterServingRuntimes (vllm-llama (Cluster))\n")


def test_54_table_with_exclusions():
    result = invoke(example_54(), "--model", L3, "-n", "team-a")
    assert result.exit_code == 0 and result.stdout == TABLE_54


def test_48_score_decides_among_cluster_runtimes():
    objects = [o for o in example_47() if o["kind"] != "ServingRuntime"]
    objects[2]["spec"]["supportedModelFormats"][0]["priority"] = 4
    objects = [cbm(L3)] + objects[1:]
    result = invoke(objects, "--model", L3, "-n", "llama-demo")
    assert [line.split()[0] for line in result.stdout.splitlines()[1:]] == [
        "srt-llama-small", "vllm-llama", "srt-llama-large"]
    assert result.stderr == "Selected: srt-llama-small (Cluster): higher score: 8 over 6 of vllm-llama (Cluster)\n"


def test_ties_by_range_and_by_name():
    same = dict(entries=[entry(auto=True)])
    result = invoke((cbm(L3, size="7B"), csr("a", size=("6.9B", "100B"), **same), csr("b", size=("1B", "10B"), **same)),
                    "--model", L3)
    assert result.stdout.splitlines()[1].startswith("b ")
    assert result.stderr == ("Selected: b (Cluster): size range closer to the model size 7B: distance 9000000000 "
                             "against 93100000000 of a (Cluster)\n")
    result = invoke((cbm(L3), csr("runtime-b", **same), csr("runtime-a", **same)), "--model", L3)
    assert result.stderr == "Selected: runtime-a (Cluster): name order: runtime-a before runtime-b (Cluster)\n"


def test_exclusions_of_each_kind_with_an_isvc():
    objects = (
        cbm(L3),
        isvc("svc", ns="default", acceleratorSelector={"acceleratorClass": "nvidia-h100"}, deploymentMode="RawDeployment"),
        csr("a-disabled", disabled=True, classes=["nvidia-h100"]),
        csr("b-class", classes=["nvidia-a100"]),
        csr("c-mode", classes=["nvidia-h100"], engine_mode="MultiNode"),
        csr("d-format", classes=["nvidia-h100"], entries=[entry(arch="MistralForCausalLM", auto=True)]),
        csr("e-size", classes=["nvidia-h100"], size=("7B", "9B")),
        csr("f-no-auto", classes=["nvidia-h100"], entries=[entry()]),
        csr("g-not-matching-auto", classes=["nvidia-h100"],
            entries=[entry(auto=False), entry(fmt="onnx", fw="onnxruntime", fw_v="1.10.0", auto=True)]),
        csr("h-zero", classes=["nvidia-h100"], entries=[entry(fmt_w=-5, auto=True)]),
    )
    result = invoke(objects, "--isvc", "svc")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    start = lines[0].index("REASON")
    reasons = {line.split()[0]: line[start:] for line in lines[1:]}
    assert [line.split()[0] for line in result.stdout.splitlines()[1:]] == [
        "a-disabled", "b-class", "c-mode", "d-format", "e-size", "f-no-auto", "g-not-matching-auto", "h-zero"]
    assert reasons == {
        "a-disabled": "runtime is disabled",
        "b-class": "runtime does not support the required accelerator class",
        "c-mode": "runtime engine deployment mode MultiNode does not match requested engine deployment mode "
                  "RawDeployment",
        "d-format": "model format 'mt:safetensors:1.0.0:LlamaForCausalLM:transformers:4.45.0.dev0' not in supported "
                    "formats: architecture mismatch (model=LlamaForCausalLM, runtime=MistralForCausalLM)",
        "e-size": "model size 3.21B is outside supported range [7B, 9B]",
        "f-no-auto": "supports the model but has no supportedModelFormats[].autoSelect=true entry, so automatic "
                     "selection skips it (pin it explicitly via spec.runtime.name instead)",
        "g-not-matching-auto": "matching format safetensors is not autoSelect-enabled (a different "
                               "supportedModelFormats entry on this runtime has autoSelect=true, but not the one that "
                               "matches this model)",
        "h-zero": "auto-select score is 0",
    }
    assert result.stderr == "Selected: none (no compatible runtime)\n"


def test_model_mode_ignores_classes_and_modes():
    objects = (cbm(L3), csr("b-class", classes=["nvidia-a100"]), csr("c-mode", engine_mode="MultiNode"))
    result = invoke(objects, "--model", L3)
    assert [line.split()[2] for line in result.stdout.splitlines()[1:]] == ["Yes", "Yes"]


def test_json_output():
    result = invoke(example_54(), "--model", L3, "-n", "team-a", "-o", "json")
    assert result.exit_code == 0 and result.stderr == ""
    data = json.loads(result.stdout)
    assert data["namespace"] == "team-a" and data["model"] == {"kind": "BaseModel", "name": L3}
    assert data["rows"][0] == {"runtime": "team-llama", "scope": "Namespaced", "compatible": True, "priority": 1,
                               "weight": 2, "score": 2, "reason": None, "pinned": False}
    assert data["pinned"] is False
    assert data["rows"][2] == {"runtime": "srt-llama-1b", "scope": "Cluster", "compatible": False, "priority": None,
                               "weight": None, "score": 2,
                               "reason": "model size 3.21B is outside supported range [500M, 2B]", "pinned": False}
    assert data["selected"] == {"runtime": "team-llama", "scope": "Namespaced", "pinned": False,
                                "tieBreak": "ServingRuntimes in the namespace come before ClusterServingRuntimes "
                                            "(vllm-llama (Cluster))"}


def test_55_both_or_neither_option():
    result = invoke(example_47(), "--model", L3, "--isvc", "svc")
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr == "error: exactly one of --model or --isvc is required\n"
    assert invoke(example_47()).stderr == "error: exactly one of --model or --isvc is required\n"


def test_55_isvc_without_model():
    result = invoke((isvc("svc", ns="default", model=None, runtime="rt"), csr("rt")), "--isvc", "svc")
    assert result.exit_code == 1
    assert result.stderr == 'error: InferenceService "svc" has no spec.model; pass --model instead\n'


def test_55_no_runtimes():
    result = invoke((cbm(L3),), "--model", L3)
    assert result.exit_code == 0 and result.stdout == ""
    assert result.stderr == "No serving runtimes found in the selected namespace or at cluster scope.\n"


PINNED_47 = """\
RUNTIME           SCOPE        COMPATIBLE   PRIORITY   WEIGHT   REASON
vllm-llama        Cluster      Pinned       2          6        -
team-llama        Namespaced   Yes          1          2        -
srt-llama-small   Cluster      Yes          3          6        -
srt-llama-large   Cluster      Yes          3          6        -
"""


def test_55_isvc_naming_a_runtime_selects_it_and_ranks_the_others():
    result = invoke((isvc("svc", ns="llama-demo", model={"name": L3, "kind": "BaseModel"}, runtime="vllm-llama"),
                     *example_47()), "--isvc", "svc", "-n", "llama-demo")
    assert result.exit_code == 0 and result.stdout == PINNED_47
    assert result.stderr.splitlines() == [
        "Note: spec.runtime.name pins vllm-llama; the other rows rank as automatic selection would if it were not "
        "pinned.",
        "Selected: vllm-llama (Cluster): pinned by spec.runtime.name"]


def test_pinned_runtime_without_auto_select_is_selected_not_excluded():
    objects = (cbm(L3), isvc("svc", ns="default", runtime="vllm-base"), csr("vllm-base", entries=[entry()]),
               csr("vllm-auto", entries=[entry(auto=True)]))
    result = invoke(objects, "--isvc", "svc")
    assert result.exit_code == 0
    assert result.stdout.splitlines()[1:] == [
        "vllm-base   Cluster   Pinned       -          -        -",
        "vllm-auto   Cluster   Yes          1          2        -"]
    assert result.stderr.splitlines()[-1] == "Selected: vllm-base (Cluster): pinned by spec.runtime.name"
    data = json.loads(invoke(objects, "--isvc", "svc", "-o", "json").stdout)
    assert data["pinned"] is True
    assert data["selected"] == {"runtime": "vllm-base", "scope": "Cluster", "pinned": True, "warning": None}
    assert [(r["runtime"], r["pinned"]) for r in data["rows"]] == [("vllm-base", True), ("vllm-auto", False)]


def test_pinned_runtime_is_checked_as_the_webhook_checks_it():
    # a named runtime whose size range misses the model: OME admits it with a warning (selection.md §4)
    objects = (cbm(L3), isvc("svc", ns="default", runtime="small"), csr("small", size=("500M", "2B")))
    result = invoke(objects, "--isvc", "svc")
    assert result.stdout.splitlines()[1].split()[2] == "Pinned"
    warning = ('runtime "small" does not declare support for model "llama-3-2-3b-instruct" (runtime small does not '
               "support model safetensors: model size 3.21B is outside supported range [500M, 2B]); proceeding "
               "because the runtime was named explicitly")
    assert result.stderr.splitlines()[-1] == f"Selected: small (Cluster): pinned by spec.runtime.name; {warning}"
    # disabled or missing: the webhook refuses it, and explain says so
    objects = (cbm(L3), isvc("svc", ns="default", runtime="off"), csr("off", disabled=True))
    result = invoke(objects, "--isvc", "svc")
    assert result.exit_code == 0
    assert result.stderr.splitlines()[-1] == (
        "Selected: none (spec.runtime.name pins off, which OME refuses: runtime off does not support model "
        "llama-3-2-3b-instruct: cluster-scoped runtime off is disabled)")
    data = json.loads(invoke(objects, "--isvc", "svc", "-o", "json").stdout)
    assert data["selected"]["pinned"] is True and data["selected"]["scope"] is None
    assert data["rows"][0]["pinned"] is False
    result = invoke((cbm(L3), isvc("svc", ns="default", runtime="gone"), csr("there")), "--isvc", "svc")
    assert "Selected: none (spec.runtime.name pins gone, which OME refuses: runtime gone does not support model " \
           "llama-3-2-3b-instruct: runtime gone not found in namespace default or at cluster scope" in result.stderr


def test_isvc_lookup_ignores_the_model_kind():
    # the ISVC says ClusterBaseModel (the default) but only a BaseModel exists: explain still finds it
    result = invoke((isvc("svc", ns="llama-demo"), *example_47()), "--isvc", "svc", "-n", "llama-demo")
    assert result.exit_code == 0 and result.stdout == TABLE_47


def test_not_found_messages():
    assert invoke(example_47(), "--model", "nope").stderr == 'error: clusterbasemodels.ome.io "nope" not found\n'
    assert invoke(example_47(), "--isvc", "nope").stderr == 'error: inferenceservices.ome.io "nope" not found\n'


def test_model_without_format():
    result = invoke((cbm(L3, fmt=None), csr("rt")), "--model", L3)
    assert result.exit_code == 1
    assert result.stderr == (
        f"error: <stdin>:5:1: ClusterBaseModel {L3}: invalid model specification: modelFormat.name: model format name "
        "is required; OME's model agent records modelFormat once it has read the model's files: run omerender "
        "model-info --update <model file> to fill them now\n")


def test_input_errors_are_printed_with_their_location():
    result = CliRunner().invoke(cli, ['explain', "--model", L3, "-"], input="a: [\n")
    assert result.exit_code == 1 and result.stderr.startswith("error: <stdin>:2:1: malformed YAML:")


def test_servingruntime_and_cluster_runtime_of_one_name_are_two_rows():
    result = invoke((cbm(L3), sr("same", ns="default", disabled=True), csr("same", disabled=True)), "--model", L3)
    assert result.stdout.splitlines()[1:] == [
        "same      Namespaced   No           -          -        runtime is disabled",
        "same      Cluster      No           -          -        runtime is disabled"]


def test_explain_names_the_runtime_every_pinning_ome_sample_uses():
    """issue 40: each of OME's sample InferenceServices that sets spec.runtime.name, explained with what it renders
    with (tests/samples.py), names that runtime as selected, pinned."""
    from conftest import run_cli
    from samples import sample_files, sample_input, sample_inputs
    checked = 0
    for rel in sample_files():
        for obj in sample_inputs(rel):
            runtime = ((obj.get("spec") or {}).get("runtime") or {}).get("name")
            if obj.get("kind") != "InferenceService" or not runtime or not (obj["spec"].get("model") or {}).get("name"):
                continue
            meta = obj["metadata"]
            run = run_cli("explain", "--isvc", meta["name"], "-n", meta.get("namespace", "default"), "-o", "json",
                          "-", input=sample_input(rel))
            assert run.code == 0, (rel, run.stderr)
            selected = json.loads(run.stdout)["selected"]
            assert (selected["runtime"], selected["pinned"], selected.get("refusal")) == (runtime, True, None), rel
            checked += 1
    assert checked > 20
