"""--model-weights and its settings through every front end: the CLI (render, check, diff, build), the KRM
function's spec, Argo CD's env and parameters, an overlay's OMERender config; bad values name what to fix; and
agent mode's model objects (D3)."""
from __future__ import annotations

import copy
import shutil

import pytest
import yaml

from conftest import FIXTURES, render_objects, run_cli
from test_argocd import cmp, manifests
from test_krm import config, fn, resource_list

WEIGHTS_FLAGS = ("--model-weights", "download")
HOSTILE = "fast\nerror: forged"


def usage_error(run) -> str:
    assert (run.code, run.stdout) == (2, ""), run.stderr
    return run.stderr.strip().splitlines()[-1]


# ---------------------------------------------------------------- the CLI

@pytest.mark.parametrize("flags,text", [
    (("--model-weights", "both"), "Error: Invalid value for '--model-weights': 'both' is not one of 'agent', "
                                  "'download'."),
    (("--weights-storage-class", "fast"), "Error: --weights-storage-class is used only with --model-weights download"),
    (("--model-weights", "agent", "--downloader-image", "x:1", "--weights-access-mode", "ReadWriteMany"),
     "Error: --weights-access-mode, --downloader-image are used only with --model-weights download"),
    (WEIGHTS_FLAGS + ("--weights-storage-class", "Fast_SSD"),
     'Error: --weights-storage-class must be a StorageClass name (a DNS subdomain: lower case letters, digits, "-" '
     'and ".", at most 253 characters), got "Fast_SSD"'),
    (WEIGHTS_FLAGS + ("--weights-storage-class", HOSTILE),
     'Error: --weights-storage-class must be a StorageClass name (a DNS subdomain: lower case letters, digits, "-" '
     'and ".", at most 253 characters), got "fast\\nerror: forged"'),
    (WEIGHTS_FLAGS + ("--weights-access-mode", "RWX"),
     'Error: --weights-access-mode must be one of ReadWriteOnce, ReadWriteMany, ReadWriteOncePod, got "RWX"'),
    (WEIGHTS_FLAGS + ("--weights-access-mode", "ReadOnlyMany"),
     "Error: --weights-access-mode ReadOnlyMany can't be used: the download Job writes the claim; use ReadWriteMany "
     "for pods on several nodes"),
    (WEIGHTS_FLAGS + ("--downloader-image", ""),
     'Error: --downloader-image must be a container image reference (letters, digits, ".", "_", "-", "/", ":", "@", '
     'at most 1024 characters), got ""'),
    (WEIGHTS_FLAGS + ("--downloader-image", "img:1 --privileged"),
     'Error: --downloader-image must be a container image reference (letters, digits, ".", "_", "-", "/", ":", "@", '
     'at most 1024 characters), got "img:1 --privileged"'),
])
@pytest.mark.parametrize("command", ["render", "check", "diff", "build"])
def test_bad_values_and_download_settings_without_download_are_usage_errors(F, flags, text, command, tmp_path):
    args = {"render": ("render", "-"), "check": ("check", str(tmp_path / "in"), str(tmp_path / "out")),
            "diff": ("diff", str(tmp_path / "a"), str(tmp_path / "b")), "build": ("build", str(tmp_path))}[command]
    run = run_cli(*args, *flags, input=yaml.safe_dump_all(list(F.values())))
    assert usage_error(run) == text


def test_check_re_renders_with_the_same_weights_flags_and_names_them_in_its_fix(F, tmp_path):
    source = tmp_path / "in"
    source.mkdir()
    (source / "all.yaml").write_text(yaml.safe_dump_all(list(F.values())))
    flags = (*WEIGHTS_FLAGS, "--weights-storage-class", "fast")
    assert run_cli("render", str(source), *flags, "--output-dir", str(tmp_path / "out")).code == 0
    assert run_cli("check", str(source), str(tmp_path / "out"), *flags).code == 0
    stale = run_cli("check", str(source), str(tmp_path / "out"), *WEIGHTS_FLAGS)
    assert stale.code == 1
    assert f"--model-weights download --output-dir {tmp_path / 'out'}" in stale.stderr
    assert "PersistentVolumeClaim" in stale.stdout  # the unified diff of the claim whose name changed


def test_diff_renders_both_sides_in_download_mode(F, tmp_path):
    for side, revision in (("a", ""), ("b", "@v2")):
        uri = f"hf://meta-llama/Llama-3.2-3B-Instruct{revision}"
        objs = copy.deepcopy(F)
        objs["model"]["spec"]["storage"]["storageUri"] = uri
        (tmp_path / side).mkdir()
        (tmp_path / side / "all.yaml").write_text(yaml.safe_dump_all(list(objs.values())))
    new = render_objects(list(objs.values()), *WEIGHTS_FLAGS).find("Job")["metadata"]["name"]
    run = run_cli("diff", str(tmp_path / "a"), str(tmp_path / "b"), *WEIGHTS_FLAGS)
    assert run.code == 0, run.stderr
    assert new in run.stdout


def test_build_takes_the_flags_for_a_kustomization_without_an_omerender_config(tmp_path):
    shutil.copytree(FIXTURES / "quickstart", tmp_path / "quickstart")
    run = run_cli("build", str(tmp_path / "quickstart"), *WEIGHTS_FLAGS, "--weights-access-mode", "ReadWriteMany")
    assert run.code == 0, run.stderr
    objs = [o for o in yaml.safe_load_all(run.stdout) if o]
    claim = next(o for o in objs if o["kind"] == "PersistentVolumeClaim")
    assert claim["spec"]["accessModes"] == ["ReadWriteMany"]
    assert not [o for o in objs if o["apiVersion"].startswith("ome.io/")]


def test_flags_an_overlays_omerender_config_sets_are_refused_and_the_config_sets_them(tmp_path, monkeypatch):
    shutil.copytree(FIXTURES / "kustomize", tmp_path / "kustomize")
    monkeypatch.chdir(tmp_path / "kustomize")
    path = tmp_path / "kustomize" / "overlays" / "prod" / "omerender.yaml"
    cfg = yaml.safe_load(path.read_text())
    cfg["spec"].update(modelWeights="agent")
    path.write_text(yaml.safe_dump(cfg))
    for command in ("render", "build"):
        run = run_cli(command, "overlays/prod", *WEIGHTS_FLAGS)
        assert (run.code, run.stdout, run.lines) == (1, "", [
            "error: --model-weights download: this kustomization lists the OMERender transformer; set "
            "modelWeights: download in that config's spec instead, not as command-line flags"])
    cfg["spec"].update(modelWeights="download", weightsStorageClass="fast")
    path.write_text(yaml.safe_dump(cfg))
    for command in ("render", "build"):
        run = run_cli(command, "overlays/prod")
        assert run.code == 0, run.stderr
        claim = next(o for o in yaml.safe_load_all(run.stdout) if o and o["kind"] == "PersistentVolumeClaim")
        assert claim["spec"]["storageClassName"] == "fast"


# ---------------------------------------------------------------- the KRM function

def test_the_function_config_sets_the_mode_and_settings(F):
    code, out, _ = fn(resource_list(list(F.values()), config(modelWeights="download", weightsAccessMode="ReadWriteMany",
                                                              downloaderImage="reg.example/dl:2")))
    assert code == 0
    claim = next(i for i in out["items"] if i["kind"] == "PersistentVolumeClaim")
    job = next(i for i in out["items"] if i["kind"] == "Job")
    assert claim["spec"]["accessModes"] == ["ReadWriteMany"]
    assert job["spec"]["template"]["spec"]["containers"][0]["image"] == "reg.example/dl:2"


def test_a_kpt_config_map_sets_them_as_strings(F):
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
          "data": {"modelWeights": "download", "weightsStorageClass": "fast", "strict": "false"}}
    code, out, _ = fn(resource_list(list(F.values()), cm))
    assert code == 0
    claim = next(i for i in out["items"] if i["kind"] == "PersistentVolumeClaim")
    assert claim["spec"]["storageClassName"] == "fast"


@pytest.mark.parametrize("spec,field,text", [
    ({"modelWeights": "down\nload"}, "modelWeights",
     'functionConfig.spec.modelWeights must be agent or download, got "down\\nload"'),
    ({"modelWeights": True}, "modelWeights", "functionConfig.spec.modelWeights must be a string"),
    ({"weightsStorageClass": "fast"}, "weightsStorageClass",
     "functionConfig.spec.weightsStorageClass is used only with functionConfig.spec.modelWeights download"),
    ({"modelWeights": "download", "weightsAccessMode": "ReadWriteAll"}, "weightsAccessMode",
     'functionConfig.spec.weightsAccessMode must be one of ReadWriteOnce, ReadWriteMany, ReadWriteOncePod, got '
     '"ReadWriteAll"'),
    ({"modelWeights": "download", "downloaderImage": "a b"}, "downloaderImage",
     'functionConfig.spec.downloaderImage must be a container image reference (letters, digits, ".", "_", "-", '
     '"/", ":", "@", at most 1024 characters), got "a b"'),
    ({"modelWeights": "download", "weightsStorageClass": "x" * 300}, "weightsStorageClass",
     'functionConfig.spec.weightsStorageClass must be a StorageClass name (a DNS subdomain: lower case letters, '
     'digits, "-" and ".", at most 253 characters), got "' + "x" * 76 + '... (300 characters)"'),
])
def test_bad_function_config_values_are_error_results(F, spec, field, text):
    code, out, stderr = fn(resource_list(list(F.values()), config(**spec)))
    assert (code, out["items"]) == (1, [])
    assert out["results"] == [{"message": text, "severity": "error",
                               "field": {"path": f"functionConfig.spec.{field}"}}]
    assert stderr == f"error: {text}\n"


# ---------------------------------------------------------------- Argo CD

def kinds_of(done):
    assert done.returncode == 0, done.stderr
    return {o["kind"] for o in manifests(done.stdout)}


def test_argocd_env_and_parameters_set_the_mode(tmp_path):
    assert {"PersistentVolumeClaim", "Job"} <= kinds_of(cmp(tmp_path / "env", "apps/plain",
                                                            env={"MODEL_WEIGHTS": "download"}))
    done = cmp(tmp_path / "param", "apps/plain", env={"MODEL_WEIGHTS": "download"},
               parameters=[{"name": "model-weights", "string": "agent"}])
    assert {"ClusterBaseModel"} <= kinds_of(done) and "Job" not in kinds_of(done)
    done = cmp(tmp_path / "settings", "apps/plain", env={"MODEL_WEIGHTS": "download"},
               parameters=[{"name": "weights-storage-class", "string": "fast"},
                           {"name": "downloader-image", "string": "reg.example/dl:3"}])
    objs = manifests(done.stdout)
    assert next(o for o in objs if o["kind"] == "PersistentVolumeClaim")["spec"]["storageClassName"] == "fast"
    job = next(o for o in objs if o["kind"] == "Job")
    assert job["spec"]["template"]["spec"]["containers"][0]["image"] == "reg.example/dl:3"


def test_an_empty_argocd_value_is_unset(tmp_path):
    done = cmp(tmp_path, "apps/plain", env={"MODEL_WEIGHTS": "", "WEIGHTS_STORAGE_CLASS": ""})
    assert "Job" not in kinds_of(done)


@pytest.mark.parametrize("env,text", [
    ({"MODEL_WEIGHTS": "download\nerror: forged"}, 'MODEL_WEIGHTS must be agent or download, got '
                                                   '"download\\nerror: forged"'),
    ({"WEIGHTS_ACCESS_MODE": "ReadWriteMany"}, "WEIGHTS_ACCESS_MODE is used only with MODEL_WEIGHTS download"),
    ({"MODEL_WEIGHTS": "download", "DOWNLOADER_IMAGE": "$(evil)"},
     'DOWNLOADER_IMAGE must be a container image reference (letters, digits, ".", "_", "-", "/", ":", "@", at most '
     '1024 characters), got "$(evil)"'),
    ({"MODEL_WEIGHTS": "download", "WEIGHTS_STORAGE_CLASS": "../x"},
     'WEIGHTS_STORAGE_CLASS must be a StorageClass name (a DNS subdomain: lower case letters, digits, "-" and ".", at '
     'most 253 characters), got "../x"'),
])
def test_bad_argocd_values_fail_readably(tmp_path, env, text):
    done = cmp(tmp_path, "apps/plain", env=env)
    assert (done.returncode, done.stdout, done.stderr) == (1, "", f"error: {text}\n")


def test_argocd_weights_on_a_kustomization_with_the_transformer_add_to_its_config(tmp_path):
    # the config (overlays/dev) sets no modelWeights: the parameter adds it (test_settings_beside_config.py has
    # the refusal of one it sets)
    assert {"PersistentVolumeClaim", "Job"} <= kinds_of(cmp(tmp_path, "fixtures/kustomize/overlays/dev",
                                                            env={"MODEL_WEIGHTS": "download"}))


# ---------------------------------------------------------------- agent mode: the models reach the cluster (D3)

def ome_objects(run):
    return [(o["kind"], o["metadata"]["name"]) for o in run.objects if o["apiVersion"].startswith("ome.io/")]


def test_agent_mode_writes_each_model_an_inference_service_uses_once_as_written(F):
    second = copy.deepcopy(F["isvc"])
    second["metadata"]["name"] = "second"
    unused = copy.deepcopy(F["model"])
    unused["metadata"]["name"] = "unused"
    run = render_objects(list(F.values()) + [second, unused])
    assert run.code == 0, run.stderr
    assert ome_objects(run) == [("ClusterBaseModel", "llama-3-2-3b-instruct")]
    assert run.objects[0] == F["model"]
    assert ome_objects(render_objects(list(F.values()) + [second, unused], "--model-weights", "agent")) == \
        ome_objects(run)


def test_overlay_models_are_written_too(F):
    overlay = copy.deepcopy(F["model"])
    overlay["metadata"]["name"] = "adapter"
    F["isvc"]["spec"]["model"]["overlays"] = [{"name": "adapter"}]
    run = render_objects(list(F.values()) + [overlay])
    assert ome_objects(run) == [("ClusterBaseModel", "adapter"), ("ClusterBaseModel", "llama-3-2-3b-instruct")]


@pytest.mark.parametrize("flags,expected", [
    (("--keep-inputs",), [("ClusterBaseModel", "llama-3-2-3b-instruct"),
                          ("ClusterServingRuntime", "srt-llama-3-2-3b-instruct"),
                          ("InferenceService", "llama-3-2-3b-instruct")]),   # kept once, not twice
    (("--no-model-node-selector",), []),   # the flag says the agent is absent
    (WEIGHTS_FLAGS, []),                   # nothing of OME runs
])
def test_models_are_not_written_twice_nor_where_no_agent_runs(F, flags, expected):
    run = render_objects(list(F.values()), *flags)
    assert run.code == 0, run.stderr
    assert ome_objects(run) == expected


def test_a_virtual_deployment_writes_no_model(F):
    F["isvc"]["metadata"].setdefault("annotations", {})["ome.io/deploymentMode"] = "VirtualDeployment"
    assert ome_objects(render_objects(list(F.values()))) == []
