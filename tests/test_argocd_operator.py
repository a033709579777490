"""The Argo CD plugin as an operator installs it on a shared repo-server (issue 34): never an empty sync by
accident, discovery by intent only, the repo-server's deadline, a hardened sidecar, a reproducible image, the
cluster's API versions. Commands run as argocd-cmp-server runs them (test_argocd.py's helpers)."""
from __future__ import annotations

from pathlib import Path

from test_argocd import PLUGIN, ROOT, environment, manifests, repo_copy, run_command

EMPTY_FIX = ("a sync of no objects would prune every resource the Application manages; check spec.source.path, "
             "or set the parameter allow-empty (ALLOW_EMPTY=true in the plugin env) where an empty app is meant")


def generate_in(work: Path, app: str, env: dict[str, str] | None = None, parameters: list[dict] | None = None,
                **sidecar: str):
    """init then generate in ``work/app``, as GenerateManifest does (init must pass)."""
    environ = environment(app, env or {}, parameters or [])
    environ.update(sidecar)
    init = run_command(PLUGIN["spec"]["init"], work / app, environ)
    assert init.returncode == 0, init.stderr
    return run_command(PLUGIN["spec"]["generate"], work / app, environ)


def app_with(tmp_path: Path, files: dict[str, str]) -> tuple[Path, str]:
    work = repo_copy(tmp_path)
    app = work / "apps" / "made"
    app.mkdir(parents=True)
    for name, text in files.items():
        (app / name).write_text(text)
    return work, "apps/made"


MODEL = (ROOT / "fixtures" / "quickstart" / "model.yaml").read_text()


# ---------------------------------------------------------------- never an empty sync by accident

def test_a_directory_of_only_a_model_fails_the_sync_naming_why(tmp_path):
    work, app = app_with(tmp_path, {"model.yaml": MODEL})
    done = generate_in(work, app, env={"STRICT": "true"})
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == ("error: the app renders to no objects: its one object (ClusterBaseModel) is an OME input "
                           "that creates nothing by itself (an InferenceService is what becomes workloads, and inputs "
                           f"are not written without keep-inputs); {EMPTY_FIX}\n")


def test_several_inputs_that_render_to_nothing_are_counted(tmp_path):
    runtime = (ROOT / "fixtures" / "quickstart" / "runtime.yaml").read_text()
    work, app = app_with(tmp_path, {"model.yaml": MODEL, "runtime.yaml": runtime})
    done = generate_in(work, app)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith("error: the app renders to no objects: its 2 objects (ClusterBaseModel, "
                                  "ServingRuntime) are OME inputs that create nothing by themselves")


def test_a_directory_with_no_objects_fails_the_sync(tmp_path):
    work, app = app_with(tmp_path, {"README.md": "# nothing here\n", "empty.yaml": "# just a comment\n"})
    done = generate_in(work, app)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == ("error: the app's directory holds no Kubernetes objects to render (no YAML file with one); "
                           f"{EMPTY_FIX}\n")


def test_a_kustomization_that_builds_nothing_fails_the_sync(tmp_path):
    work, app = app_with(tmp_path, {"kustomization.yaml": "resources: []\n"})
    done = generate_in(work, app)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == f"error: the kustomization builds no objects; {EMPTY_FIX}\n"


def test_a_kustomization_of_only_a_model_names_its_kind(tmp_path):
    work, app = app_with(tmp_path, {"kustomization.yaml": "resources: [model.yaml]\n", "model.yaml": MODEL})
    done = generate_in(work, app)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith("error: the app renders to no objects: its one object (ClusterBaseModel) is an OME "
                                  "input that creates nothing by itself")


def test_allow_empty_syncs_an_empty_render(tmp_path):
    work, app = app_with(tmp_path, {"model.yaml": MODEL})
    by_parameter = generate_in(work, app, parameters=[{"name": "allow-empty", "string": "true"}])
    by_env = generate_in(work, app, env={"ALLOW_EMPTY": "true"})
    for done in (by_parameter, by_env):
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_allow_empty_lets_a_kustomization_build_nothing(tmp_path):
    work, app = app_with(tmp_path, {"kustomization.yaml": "resources: []\n"})
    done = generate_in(work, app, parameters=[{"name": "allow-empty", "string": "true"}])
    assert (done.returncode, done.stdout) == (0, "")


def test_allow_empty_false_in_the_parameter_wins_over_the_env(tmp_path):
    work, app = app_with(tmp_path, {"model.yaml": MODEL})
    done = generate_in(work, app, env={"ALLOW_EMPTY": "true"}, parameters=[{"name": "allow-empty", "string": "false"}])
    assert (done.returncode, done.stdout) == (1, "")


def test_a_hostile_allow_empty_value_cannot_forge_a_line(tmp_path):
    work, app = app_with(tmp_path, {"model.yaml": MODEL})
    done = generate_in(work, app, env={"ALLOW_EMPTY": "yes\nerror: forged"})
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == 'error: ALLOW_EMPTY must be true or false, got "yes\\nerror: forged"\n'


def test_allow_empty_is_announced_as_a_boolean():
    static = {p["name"]: p for p in PLUGIN["spec"]["parameters"]["static"]}
    assert (static["allow-empty"]["itemType"], static["allow-empty"]["string"]) == ("boolean", "false")
