"""Settings given beside an OMERender config (docs/how-to/model-weights.md, "Beside an OMERender config"): a flag or
Argo CD parameter the config doesn't set adds to it, so a download setting works where the config sets
``modelWeights: download``; with no download mode anywhere it is the same error as without a config; one the config
sets too is refused, naming the config key. In every front end: render, build (pipeline and function paths), check,
diff, the Argo CD plugin (a kustomization app and a plain app with omerender.yaml), the KRM function."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from conftest import FIXTURES, run_cli
from test_argocd import manifests, repo_copy
from test_argocd_operator import generate_in
from test_krm import config, fn, resource_list

MIRROR = "HF_ENDPOINT=https://hf-mirror.example"
MIRROR_ENV = {"name": "HF_ENDPOINT", "value": "https://hf-mirror.example"}
NO_MODE = "error: --downloader-env is used only with --model-weights download"


def job_env(objects) -> list[dict]:
    job = next(o for o in objects if o and o["kind"] == "Job" and "-download-" in o["metadata"]["name"])
    return job["spec"]["template"]["spec"]["containers"][0]["env"]


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """The kustomize fixture; ``set_prod(**spec)`` adds keys to overlays/prod's OMERender config."""
    shutil.copytree(FIXTURES / "kustomize", tmp_path / "kustomize")
    monkeypatch.chdir(tmp_path / "kustomize")
    path = tmp_path / "kustomize" / "overlays" / "prod" / "omerender.yaml"

    def set_prod(**spec):
        cfg = yaml.safe_load(path.read_text())
        cfg["spec"].update(spec)
        path.write_text(yaml.safe_dump(cfg))
    return set_prod


# ---------------------------------------------------------------- the CLI

@pytest.mark.parametrize("command", ["render", "build"])
def test_a_download_flag_beside_a_config_that_sets_download_reaches_the_job(tree, command):
    tree(modelWeights="download")
    run = run_cli(command, "overlays/prod", "--downloader-env", MIRROR, "--weights-storage-class", "fast")
    assert run.code == 0, run.stderr
    objects = list(yaml.safe_load_all(run.stdout))
    assert job_env(objects)[-1] == MIRROR_ENV
    claim = next(o for o in objects if o and o["kind"] == "PersistentVolumeClaim")
    assert claim["spec"]["storageClassName"] == "fast"


def test_build_hands_the_flags_to_the_function_on_the_function_path(tree):
    tree(modelWeights="download")
    above = Path("overlays/above")
    above.mkdir()
    (above / "kustomization.yaml").write_text("resources: [../prod]\nnamePrefix: team-\n")
    run = run_cli("build", "-v", "overlays/above", "--downloader-env", MIRROR)
    assert run.code == 0, run.stderr
    assert "function path" in run.stderr
    assert job_env(yaml.safe_load_all(run.stdout))[-1] == MIRROR_ENV
    refused = run_cli("build", "overlays/above", "--model-weights", "agent")
    assert (refused.code, refused.stdout, refused.lines) == (1, "", [
        "error: --model-weights agent: this kustomization lists the OMERender transformer; set modelWeights: agent "
        "in that config's spec instead, not as command-line flags"])
    above_dev = Path("overlays/above-dev")   # overlays/dev's config sets no modelWeights
    above_dev.mkdir()
    (above_dev / "kustomization.yaml").write_text("resources: [../dev]\nnamePrefix: team-\n")
    no_mode = run_cli("build", "overlays/above-dev", "--downloader-env", MIRROR)
    assert (no_mode.code, no_mode.stdout, no_mode.lines[0]) == (1, "", NO_MODE)   # the function's, then kustomize's
    alone = run_cli("build", "overlays/above", "--model-weights", "agent", "--downloader-env", MIRROR)
    assert alone.code == 2 and alone.stderr.strip().splitlines()[-1] == (
        "Error: --downloader-env is used only with --model-weights download")


def test_check_and_diff_take_the_flag_beside_the_config(tree, tmp_path):
    tree(modelWeights="download")
    flags = ("--downloader-env", MIRROR)
    rendered = run_cli("render", "overlays/prod", *flags, "--output-dir", str(tmp_path / "out"))
    assert rendered.code == 0, rendered.stderr
    checked = run_cli("check", "overlays/prod", str(tmp_path / "out"), *flags)
    assert checked.code == 0, checked.stdout + checked.stderr
    stale = run_cli("check", "overlays/prod", str(tmp_path / "out"))   # without the mirror: not what was written
    assert stale.code == 1 and "HF_ENDPOINT" in stale.stdout
    diffed = run_cli("diff", str(tmp_path / "kustomize" / "overlays" / "prod"), "overlays/prod", *flags)
    assert diffed.code == 0, diffed.stderr


@pytest.mark.parametrize("spec", [{}, {"modelWeights": "agent"}])
@pytest.mark.parametrize("command", ["render", "build", "check", "diff"])
def test_a_download_flag_where_neither_sets_download_is_the_same_error(tree, tmp_path, spec, command):
    tree(**spec)
    args = {"render": ("render", "overlays/prod"), "build": ("build", "overlays/prod"),
            "check": ("check", "overlays/prod", str(tmp_path / "out")),
            "diff": ("diff", "overlays/prod", "overlays/prod")}[command]
    run = run_cli(*args, "--downloader-env", MIRROR)
    assert run.stdout == ""
    named = "functionConfig.spec.modelWeights" if spec else "--model-weights"
    side = "head: " if command == "diff" else ""   # diff names the side
    assert run.lines[-1] == f"error: {side}--downloader-env is used only with {named} download"
    assert run.code == (2 if command == "diff" else 1)


def test_a_download_flag_on_a_kustomization_without_a_config_is_the_same_error(tmp_path):
    shutil.copytree(FIXTURES / "quickstart", tmp_path / "quickstart")
    run = run_cli("build", str(tmp_path / "quickstart"), "--downloader-env", MIRROR)
    assert (run.code, run.stdout, run.lines) == (1, "", [NO_MODE])
    run = run_cli("render", "-", "--downloader-env", MIRROR, input="")   # no kustomization: a usage error, first
    assert run.code == 2 and run.stderr.strip().splitlines()[-1] == f"Error: {NO_MODE.removeprefix('error: ')}"


@pytest.mark.parametrize("command", ["render", "build"])
def test_a_flag_beside_the_config_key_of_the_same_setting_is_refused(tree, command):
    tree(modelWeights="download", downloaderEnv=["HF_ENDPOINT=https://a.example"])
    run = run_cli(command, "overlays/prod", "--downloader-env", MIRROR, "--weights-storage-class", "fast")
    assert (run.code, run.stdout, run.lines) == (1, "", [
        f"error: --downloader-env {MIRROR}: this kustomization lists the OMERender transformer; set downloaderEnv: "
        f"{MIRROR} in that config's spec instead, not as command-line flags"])


# ---------------------------------------------------------------- the Argo CD plugin

OVERLAY_APP = "fixtures/kustomize/overlays/prod"


def _argo(tmp_path, app: str, spec: dict | None, parameters: list[dict]):
    work = repo_copy(tmp_path)
    if app == OVERLAY_APP:
        path = work / app / "omerender.yaml"
        cfg = yaml.safe_load(path.read_text())
    else:
        path = work / app / "omerender.yaml"
        cfg = {"apiVersion": "omerender.io/v1alpha1", "kind": "OMERender", "metadata": {"name": "omerender"},
               "spec": {}}
    cfg["spec"].update(spec or {})
    path.write_text(yaml.safe_dump(cfg))
    return generate_in(work, app, parameters=parameters)


MIRROR_PARAM = [{"name": "downloader-env", "array": [MIRROR]}]


@pytest.mark.parametrize("app", [OVERLAY_APP, "apps/plain"])
def test_argocd_a_download_parameter_beside_a_config_that_sets_download(tmp_path, app):
    done = _argo(tmp_path, app, {"modelWeights": "download"}, MIRROR_PARAM)
    assert done.returncode == 0, done.stderr
    assert job_env(manifests(done.stdout))[-1] == MIRROR_ENV


@pytest.mark.parametrize("app", [OVERLAY_APP, "apps/plain"])
@pytest.mark.parametrize("spec, mode", [({"podMonitors": False}, "MODEL_WEIGHTS"),
                                        ({"modelWeights": "agent"}, "functionConfig.spec.modelWeights")])
def test_argocd_a_download_parameter_where_neither_sets_download(tmp_path, app, spec, mode):
    done = _argo(tmp_path, app, spec, MIRROR_PARAM)
    assert (done.returncode, done.stdout) == (1, "")
    where = "./omerender.yaml: " if app == "apps/plain" else ""   # the config the mode would be set in
    assert done.stderr == f"error: {where}DOWNLOADER_ENV is used only with {mode} download\n"


def test_argocd_a_download_parameter_without_any_config_is_the_same_error(tmp_path):
    done = generate_in(repo_copy(tmp_path), "apps/plain", parameters=MIRROR_PARAM)
    assert (done.returncode, done.stdout, done.stderr) == (
        1, "", "error: DOWNLOADER_ENV is used only with MODEL_WEIGHTS download\n")


@pytest.mark.parametrize("app, where", [
    (OVERLAY_APP, "this kustomization lists the OMERender transformer"),
    ("apps/plain", "this app's directory holds the OMERender config ./omerender.yaml")])
def test_argocd_a_parameter_beside_the_config_key_of_the_same_setting_is_refused(tmp_path, app, where):
    done = _argo(tmp_path, app, {"modelWeights": "download", "downloaderEnv": ["A=b"]}, MIRROR_PARAM)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (f"error: downloader-env={MIRROR} (DOWNLOADER_ENV): {where}; set downloaderEnv: {MIRROR} in "
                           f"that config's spec instead, not in the Application's plugin env or parameters\n")


# ---------------------------------------------------------------- the KRM function (its config is all it has)

def test_the_function_config_download_key_with_and_without_the_mode():
    from conftest import worked_example
    items = list(worked_example().values())
    code, out, _ = fn(resource_list(items, config(modelWeights="download", downloaderEnv=[MIRROR])))
    assert code == 0, out
    assert job_env(out["items"])[-1] == MIRROR_ENV
    code, out, _ = fn(resource_list(items, config(downloaderEnv=[MIRROR])))
    assert code == 1
    assert [r["message"] for r in out["results"] if r["severity"] == "error"] == [
        "functionConfig.spec.downloaderEnv is used only with functionConfig.spec.modelWeights download"]


def test_the_settings_the_build_hands_the_function_are_checked(monkeypatch):
    from omerender.errors import OmeError
    from omerender.gitops.fngiven import GIVEN_ENV, given_env, given_from_env
    from omerender.ome.frontend import ARGOCD_FRONT, CLI_FRONT
    given = (CLI_FRONT.given("env", MIRROR), ARGOCD_FRONT.given("keep_inputs"))
    back = given_from_env({GIVEN_ENV: given_env(given)})
    assert back == given and [(g.key, g.value, g.front) for g in back] == [(g.key, g.value, g.front) for g in given]
    for text in ("[[\"cli\", \"rm -rf\", null]]", "{}", "[[\"config\", \"env\", \"A=b\"]]", "not json"):
        with pytest.raises(OmeError, match=f"{GIVEN_ENV} is not what omerender build writes"):
            given_from_env({GIVEN_ENV: text})


def test_a_switch_beside_a_config_that_does_not_set_it_adds_to_it(tree):
    # overlays/prod sets keepInputs and noModelNodeSelector, not podMonitors
    run = run_cli("render", "overlays/prod", "--pod-monitors")
    assert run.code == 0, run.stderr
    assert "PodMonitor" in {o["kind"] for o in yaml.safe_load_all(run.stdout) if o}
    assert "PodMonitor" not in {o["kind"] for o in yaml.safe_load_all(run_cli("render", "overlays/prod").stdout) if o}
