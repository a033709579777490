"""The CLI contract of issue 2: paths, output stream, options, exit codes and error lines."""
import random
import shutil
import subprocess
import sys
import tomllib
from importlib import metadata

import yaml

from conftest import CHART_DEFAULTS_INFO, FIXTURES, ROOT, render_objects, run_cli, worked_example

from omerender import __version__

WORKED = FIXTURES / "worked-example"


def test_version_and_help():
    assert run_cli("--version").stdout == (
        f"omerender, version {__version__}\nrenders OME v1.3\nfollows the OME v1.3 documentation "
        "(github.com/ome-projects/ome-docs), then OME's Go source (github.com/ome-projects/ome) where the docs are "
        "silent; without a cluster ConfigMap, the defaults of OME's Helm chart ome-resources (docs/spec/README.md)\n")
    pyproject = tomllib.loads((FIXTURES.parent / "pyproject.toml").read_text())
    assert "version" not in pyproject["project"]   # one version, in omerender/__init__.py, which pyproject reads
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "omerender.__version__"}
    assert metadata.version("omerender") == __version__   # as this (editable) install's metadata has it
    help_text = run_cli("--help").stdout
    for command in ("render", "fn", "explain", "tree", "build", "check", "lock"):
        assert command in help_text
    for command in (["render"], ["fn"], ["explain"], ["tree"], ["build"], ["check"], ["lock"], ["lock", "update"]):
        assert "Example" in run_cli(*command, "--help").stdout, command


def test_quickstart_renders_the_seed_example_with_auto_selection():
    run = run_cli("render", str(FIXTURES / "quickstart"))
    assert run.code == 0
    assert run.lines == [CHART_DEFAULTS_INFO, "warning: " + str(FIXTURES / "quickstart" / "isvc.yaml") + ": InferenceService "
                         "llama-demo/llama-3-2-3b-instruct: Runtime sglang-llama-3-2-3b will be auto-selected for model "
                         "llama-3-2-3b-instruct"]
    assert run.kinds() == [("ClusterBaseModel", "llama-3-2-3b-instruct"), ("Namespace", "llama-demo"),
                           ("Deployment", "llama-3-2-3b-instruct-engine"),
                           ("Service", "llama-3-2-3b-instruct-engine"),
                           ("HorizontalPodAutoscaler", "llama-3-2-3b-instruct-engine"),
                           ("PodDisruptionBudget", "llama-3-2-3b-instruct-engine"),
                           ("Service", "llama-3-2-3b-instruct")]
    deployment = run.find("Deployment")
    assert deployment["metadata"]["labels"]["serving-runtime"] == "sglang-llama-3-2-3b"
    runner = deployment["spec"]["template"]["spec"]["containers"][0]
    assert runner["args"] == ["--host=0.0.0.0", "--port=8080", "--model-path=$(MODEL_PATH)",
                              "--served-model-name=llama-3-2-3b-instruct", "--tp-size=1", "--mem-frac=0.9"]
    assert runner["env"] == [{"name": "MODEL_PATH", "value": "/raid/models/meta/llama-3-2-3b-instruct"},
                             {"name": "PARALLELISM_SIZE", "value": "1"}]
    hpa = run.find("HorizontalPodAutoscaler")
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (1, 1)


def test_no_path_means_current_directory(tmp_path, monkeypatch):
    shutil.copytree(WORKED, tmp_path / "in")
    monkeypatch.chdir(tmp_path / "in")
    assert run_cli("render").stdout == run_cli("render", str(WORKED)).stdout


def test_kustomization_files_are_not_resources(tmp_path):
    shutil.copytree(WORKED, tmp_path / "in")
    for name in ("kustomization.yaml", "kustomization.yml", "Kustomization"):
        (tmp_path / "in" / name).write_text("resources: [inputs.yaml]\n")
    run = run_cli("render", str(tmp_path / "in"))
    assert run.code == 0, run.stderr


def test_list_kind_and_multi_document_input():
    objs = list(worked_example().values())
    as_list = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objs})
    assert run_cli("render", "-", input=as_list).stdout == run_cli("render", str(WORKED)).stdout


def test_other_objects_pass_through_unchanged_and_inputs_are_dropped():
    configmap = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "llama-demo"},
                 "data": {"b": "2", "a": "1"}}
    run = render_objects(list(worked_example().values()) + [configmap])
    assert run.objects[1] == configmap
    # the model stays, for OME's model agent (--model-weights agent); the runtime and InferenceService go
    assert [o["kind"] for o in run.objects if o["apiVersion"] == "ome.io/v1beta1"] == ["ClusterBaseModel"]


def test_keep_inputs():
    objs = list(worked_example().values())
    run = render_objects(objs, "--keep-inputs")
    kept = [o for o in run.objects if o["apiVersion"] == "ome.io/v1beta1"]
    assert sorted(o["kind"] for o in kept) == ["ClusterBaseModel", "ClusterServingRuntime", "InferenceService"]


def test_no_model_node_selector():
    run = render_objects(list(worked_example().values()), "--no-model-node-selector")
    assert "nodeSelector" not in run.find("Deployment", "llama-3-2-3b-instruct-engine")["spec"]["template"]["spec"]


def test_output_is_identical_for_any_file_order_and_layout(tmp_path):
    objs = list(worked_example().values())
    second = {**objs[2], "metadata": {**objs[2]["metadata"], "name": "second"}}
    extra = [objs[0], objs[1], objs[2], second,
             {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "z"}},
             {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}]
    outputs = set()
    for seed in range(4):
        order = list(extra)
        random.Random(seed).shuffle(order)
        folder = tmp_path / f"layout{seed}"
        for i, obj in enumerate(order):
            sub = folder / ("deep" if i % 2 else "") / f"{seed}-{i}.yaml"
            sub.parent.mkdir(parents=True, exist_ok=True)
            sub.write_text(yaml.safe_dump(obj))
        run = run_cli("render", str(folder))
        assert run.code == 0, run.stderr
        outputs.add(run.stdout)
        files = sorted(str(p) for p in folder.rglob("*.yaml"))
        random.Random(seed).shuffle(files)
        outputs.add(run_cli("render", *files).stdout)
    assert len(outputs) == 1


def _error_lines(text, *args):
    run = run_cli("render", "-", *args, input=text)
    assert run.code == 1
    assert run.stdout == ""
    return run.lines


def test_malformed_yaml():
    assert _error_lines("a: [1\n") == ["error: <stdin>: malformed YAML: did not find expected ',' or ']' "
                                       "(line 2, column 1)"]


def test_unknown_ome_version():
    text = "apiVersion: ome.io/v1alpha1\nkind: InferenceService\nmetadata: {name: x, namespace: ns}\n"
    assert _error_lines(text) == ['error: <stdin>: InferenceService ns/x: apiVersion: Unsupported value: '
                                  '"ome.io/v1alpha1": supported values: "ome.io/v1beta1"']


def test_missing_kind_and_name():
    assert _error_lines("apiVersion: v1\n") == [
        "error: <stdin>: kind: Required value: every object needs apiVersion and kind"]
    assert _error_lines("apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n") == [
        "error: <stdin>: ConfigMap: metadata.name: Required value"]


def test_wrong_types_name_the_field():
    text = ("apiVersion: ome.io/v1beta1\nkind: InferenceService\nmetadata: {name: x, namespace: ns}\n"
            "spec: {engine: 5, runtime: {name: r}}\n")
    assert _error_lines(text) == ['error: <stdin>: InferenceService ns/x: spec.engine: Invalid value: "number": '
                                  'must be of type object']


def test_duplicate_objects():
    objs = list(worked_example().values())
    text = yaml.safe_dump_all(objs + [objs[1]])
    (line,) = _error_lines(text)
    assert line == ("error: <stdin>: ClusterServingRuntime srt-llama-3-2-3b-instruct: duplicate ClusterServingRuntime "
                    "srt-llama-3-2-3b-instruct in the inputs (first in <stdin>)")


def test_errors_in_several_files_are_all_reported(tmp_path):
    (tmp_path / "a.yaml").write_text("a: [1\n")
    (tmp_path / "b.yaml").write_text("b: {\n")
    run = run_cli("render", str(tmp_path))
    assert run.code == 1 and run.stdout == ""
    assert [line.split(":")[1].strip() for line in run.lines] == [str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml")]


def test_missing_path():
    run = run_cli("render", str(ROOT / "no-such-dir"))
    assert (run.code, run.stdout, run.lines) == (1, "", [f"error: no such file or directory: {ROOT / 'no-such-dir'}"])


def test_neither_model_nor_runtime():
    isvc = worked_example()["isvc"]
    del isvc["spec"]["model"], isvc["spec"]["runtime"]
    run = render_objects([isvc])
    assert run.lines == ["error: <stdin>: InferenceService llama-demo/llama-3-2-3b-instruct: at least one of spec.model "
                         "or spec.runtime must be set"]


def test_missing_runtime_and_disabled_model():
    objs = worked_example()
    objs["isvc"]["spec"]["runtime"]["name"] = "nope"
    run = render_objects(list(objs.values()))
    assert run.lines == ["error: <stdin>: InferenceService llama-demo/llama-3-2-3b-instruct: runtime nope does not "
                         "support model llama-3-2-3b-instruct: runtime nope not found in namespace llama-demo or at "
                         "cluster scope"]
    objs = worked_example()
    objs["model"]["spec"]["disabled"] = True
    run = render_objects(list(objs.values()))
    assert run.lines == ["error: <stdin>: InferenceService llama-demo/llama-3-2-3b-instruct: model "
                         "llama-3-2-3b-instruct is disabled"]


def test_missing_model():
    objs = worked_example()
    run = render_objects([objs["runtime"], objs["isvc"]])
    assert run.lines == ['error: <stdin>: InferenceService llama-demo/llama-3-2-3b-instruct: referenced model '
                         '"llama-3-2-3b-instruct" not found in namespace "llama-demo": ensure a BaseModel exists in this '
                         'namespace or a ClusterBaseModel exists cluster-wide with this name']


def test_disabled_runtime():
    objs = worked_example()
    objs["runtime"]["spec"]["disabled"] = True
    run = render_objects(list(objs.values()))
    assert run.lines == ["error: <stdin>: InferenceService llama-demo/llama-3-2-3b-instruct: runtime "
                         "srt-llama-3-2-3b-instruct does not support model llama-3-2-3b-instruct: cluster-scoped runtime "
                         "srt-llama-3-2-3b-instruct is disabled"]


def test_named_runtime_without_declared_support_renders_with_a_warning():
    objs = worked_example()
    objs["model"]["spec"]["modelArchitecture"] = "MistralForCausalLM"
    run = render_objects(list(objs.values()))
    assert run.code == 0
    (chart, line) = run.lines
    assert chart == CHART_DEFAULTS_INFO
    assert line.startswith('warning: <stdin>: InferenceService llama-demo/llama-3-2-3b-instruct: runtime '
                           '"srt-llama-3-2-3b-instruct" does not declare support for model "llama-3-2-3b-instruct" '
                           '(runtime srt-llama-3-2-3b-instruct does not support model safetensors: ')
    assert line.endswith("); proceeding because the runtime was named explicitly")


def test_engine_is_required():
    objs = worked_example()
    del objs["isvc"]["spec"]["engine"]
    del objs["isvc"]["spec"]["router"]
    assert render_objects(list(objs.values())).lines == [
        "error: <stdin>: InferenceService llama-demo/llama-3-2-3b-instruct: engine component is required"]


def test_decoder_without_engine_and_missing_decoder_config():
    objs = worked_example()
    objs["isvc"]["spec"]["decoder"] = {}
    assert render_objects(list(objs.values())).lines == [
        "error: <stdin>: InferenceService llama-demo/llama-3-2-3b-instruct: no containers found: "
        "ClusterServingRuntime srt-llama-3-2-3b-instruct has no decoderConfig, and spec.decoder sets no runner; name a "
        "runtime with a decoderConfig in spec.runtime.name, set spec.decoder.runner, or remove spec.decoder"]
    del objs["isvc"]["spec"]["engine"]
    assert render_objects(list(objs.values())).lines == [
        "error: <stdin>: InferenceService llama-demo/llama-3-2-3b-instruct: decoder cannot be specified without engine"]


def test_unknown_and_mistyped_pod_fields_name_the_field():
    objs = worked_example()
    objs["isvc"]["spec"]["engine"]["runner"]["imagePullPolicyy"] = "Always"
    assert render_objects(list(objs.values())).lines == [
        'error: <stdin>: InferenceService llama-demo/llama-3-2-3b-instruct: spec.engine.runner.imagePullPolicyy: '
        'unknown field "imagePullPolicyy"; did you mean "imagePullPolicy"?']
    objs = worked_example()
    objs["runtime"]["spec"]["engineConfig"]["tolerations"][0]["tolerationSeconds"] = "60"
    assert render_objects(list(objs.values())).lines == [
        'error: <stdin>: ClusterServingRuntime srt-llama-3-2-3b-instruct: '
        'spec.engineConfig.tolerations[0].tolerationSeconds: Invalid value: "string": must be of type integer']


def test_a_rendered_pod_missing_a_required_field_is_an_error():
    objs = worked_example()
    del objs["runtime"]["spec"]["engineConfig"]["runner"]["readinessProbe"]["httpGet"]["port"]
    assert render_objects(list(objs.values())).lines == [
        "error: <stdin>: InferenceService llama-demo/llama-3-2-3b-instruct: engine pod template: "
        "spec.template.spec.containers[0].readinessProbe.httpGet.port: Required value"]


def test_legacy_predictor():
    objs = worked_example()
    isvc = objs["isvc"]
    isvc["spec"] = {"predictor": {"model": {"baseModel": "llama-3-2-3b-instruct", "runtime": "srt-llama-3-2-3b-instruct"}}}
    assert render_objects(list(objs.values())).lines == [
        "error: <stdin>: InferenceService llama-demo/llama-3-2-3b-instruct: spec.predictor (the InferenceService layout "
        "before OME v1.3) is not supported by omerender: move the model to spec.model, the runtime to spec.runtime and "
        "the container to spec.engine.runner"]
    objs = worked_example()
    objs["isvc"]["spec"]["predictor"] = {"model": {"baseModel": "x"}}
    run = render_objects(list(objs.values()))
    assert run.code == 0
    assert run.lines == [CHART_DEFAULTS_INFO, "warning: <stdin>: InferenceService llama-demo/llama-3-2-3b-instruct: spec.predictor is "
                         "ignored because spec.engine is set"]


# ---------------------------------------------------------------- one meaning per flag (issue 25)

def test_render_output_dir_has_its_long_option_and_o_is_deprecated(tmp_path):
    new = run_cli("render", str(FIXTURES / "quickstart"), "--output-dir", str(tmp_path / "new"))
    assert (new.code, new.stdout) == (0, "")
    old = run_cli("render", str(FIXTURES / "quickstart"), "-o", str(tmp_path / "old"))
    assert (old.code, old.stdout) == (0, "")
    assert old.lines[0] == (f"warning: -o DIR is deprecated and goes away in the next release (-o will be the output "
                            f"format, as in explain, tree and model-info); use: --output-dir {tmp_path / 'old'}")
    assert sorted(p.name for p in (tmp_path / "old").iterdir()) == sorted(p.name for p in (tmp_path / "new").iterdir())
    both = run_cli("render", str(FIXTURES / "quickstart"), "-o", "a", "--output-dir", "b")
    assert (both.code, both.stdout) == (2, "")
    assert both.stderr.endswith("Error: -o DIR is the old spelling of --output-dir; give one of them\n")


def test_a_file_name_where_a_directory_is_expected_is_a_usage_error(tmp_path):
    for args in (["render", str(FIXTURES / "quickstart"), "--output-dir", str(tmp_path / "out.yaml")],
                 ["render", str(FIXTURES / "quickstart"), "-o", str(tmp_path / "out.YML")]):
        run = run_cli(*args)
        assert (run.code, run.stdout) == (2, "")
        file = args[-1]
        assert run.stderr.endswith(f"Error: Invalid value for '--output-dir': {file} is named like a file, and this "
                                   f"takes a directory; for one YAML stream in a file run: omerender render [PATH]... "
                                   f"> {file}\n")
        assert not (tmp_path / "out.yaml").exists() and not (tmp_path / "out.YML").exists()
    (tmp_path / "dir.yaml").mkdir()  # an existing directory is a directory, whatever its name
    assert run_cli("render", str(FIXTURES / "quickstart"), "--output-dir", str(tmp_path / "dir.yaml")).code == 0
    check = run_cli("check", str(FIXTURES / "quickstart"), str(tmp_path / "out.json"))
    assert (check.code, check.stdout) == (2, "")
    assert check.stderr.endswith(f"Error: Invalid value for 'DIR_RENDERED': {tmp_path}/out.json is named like a file, "
                                 f"and this takes the directory that `omerender render --output-dir` wrote\n")


def test_build_writes_a_file_with_output_file_and_o_is_deprecated(tmp_path):
    quickstart = str(FIXTURES / "quickstart")
    new = run_cli("build", quickstart, "--output-file", str(tmp_path / "new.yaml"))
    assert (new.code, new.stdout) == (0, "")
    old = run_cli("build", quickstart, "--output", str(tmp_path / "old.yaml"))
    assert old.lines[0] == (f"warning: -o/--output FILE is deprecated and goes away in the next release (-o will be "
                            f"the output format, as in explain, tree and model-info); use: --output-file "
                            f"{tmp_path / 'old.yaml'}")
    assert (tmp_path / "old.yaml").read_text() == (tmp_path / "new.yaml").read_text()


def test_o_is_the_output_format_of_diff_too(tmp_path):
    quickstart = str(FIXTURES / "quickstart")
    assert run_cli("diff", quickstart, quickstart, "-o", "json").stdout == \
        run_cli("diff", quickstart, quickstart, "--format", "json").stdout
    assert run_cli("diff", quickstart, quickstart, "--output", "markdown").stdout.startswith("### omerender diff")


def test_the_heap_is_frozen_before_the_exit_collection():
    """The interpreter's exit scans every live object once (0.3 s at 10,000 InferenceServices); the command freezes
    them first (omerender.without_cycle_collector), so that scan finds none. A handler registered before the
    command's runs after its (atexit's order is last in, first out) and sees the heap frozen."""
    probe = ("import atexit, gc, sys\n"
             "atexit.register(lambda: sys.stderr.write(f'frozen: {gc.get_freeze_count() > 0}\\n'))\n"
             "from omerender.cli.app import main\n"
             "sys.argv = ['omerender', '--version']\n"
             "main()\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("omerender, version ")
    assert done.stderr == "frozen: True\n"
