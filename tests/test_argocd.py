"""Contract test of the Argo CD Config Management Plugin (plugins/argocd/plugin.yaml), run the way
argocd-cmp-server runs it: the repository is copied into a fresh work directory, each command runs as
exec(command[0], command[1:] + args) in the app's directory with the sidecar's environment plus the
ARGOCD_APP_* / ARGOCD_ENV_* / PARAM_* entries; discover is tested in test_argocd_operator.py;
init runs before generate; generate's stdout must be a YAML stream of Kubernetes objects, and a
non-zero exit fails the sync with stderr shown to the user."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml

from conftest import CHART_DEFAULTS_CODED
from test_build_limits import slow_kustomize  # a kustomize that never finishes, noting its process ids

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = yaml.safe_load((ROOT / "plugins" / "argocd" / "plugin.yaml").read_text())
ISVC = "llama-3-2-3b-instruct"
COMPONENT = f"{ISVC}-engine"
MODEL_SELECTOR = f"models.ome.io/clusterbasemodel.{ISVC}"
# What Argo CD passes for a 1.30 cluster with OME's CRDs installed (group/versions, then group/version/Kinds).
KUBE_API_VERSIONS = ",".join([
    "apps/v1", "apps/v1/Deployment", "batch/v1", "batch/v1/Job", "autoscaling/v2", "autoscaling/v2/HorizontalPodAutoscaler", "ome.io/v1beta1",
    *(f"ome.io/v1beta1/{kind}" for kind in ("AcceleratorClass", "AutoscalerPolicy", "BaseModel", "BenchmarkJob",
                                            "ClusterBaseModel", "ClusterServingRuntime", "FineTunedWeight",
                                            "InferenceService", "ServingRuntime")),
    "networking.k8s.io/v1", "networking.k8s.io/v1/Ingress", "policy/v1", "policy/v1/PodDisruptionBudget",
    "rbac.authorization.k8s.io/v1", "rbac.authorization.k8s.io/v1/Role", "rbac.authorization.k8s.io/v1/RoleBinding",
    "v1", "v1/ConfigMap", "v1/Namespace", "v1/PersistentVolumeClaim", "v1/Secret", "v1/Service", "v1/ServiceAccount"])
RENDERED_KINDS = ["Deployment", "HorizontalPodAutoscaler", "PodDisruptionBudget", "Service", "Service"]


def repo_copy(tmp_path: Path) -> Path:
    """What cmp-server unpacks: the repository (here: its fixtures) in a fresh work directory."""
    work = tmp_path / "cmp-work"
    shutil.copytree(ROOT / "fixtures", work / "fixtures")
    plain = work / "apps" / "plain"
    plain.mkdir(parents=True)
    for name in ("namespace.yaml", "model.yaml", "runtime.yaml", "isvc.yaml"):
        shutil.copy(ROOT / "fixtures" / "quickstart" / name, plain / name)
    return work


def environment(app_path: str, env: dict[str, str], parameters: list[dict]) -> dict[str, str]:
    """The sidecar's environment plus what the repo-server sends for one Application."""
    assert shutil.which("kustomize"), "kustomize is not on PATH: run scripts/setup-tools.sh"
    sidecar = {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
               "HOME": os.environ.get("HOME", "/tmp"), "LANG": "C.UTF-8",
               "OMERENDER_BUILD_NATIVE": os.environ.get("OMERENDER_BUILD_NATIVE", "on"),
               # the tree under test, when the suite runs from a worktree (PYTHONPATH=.)
               **({"PYTHONPATH": os.path.abspath(os.environ["PYTHONPATH"])} if os.environ.get("PYTHONPATH") else {})}
    app = {"ARGOCD_APP_NAME": "llama", "ARGOCD_APP_NAMESPACE": "argocd", "ARGOCD_APP_REVISION": "0123abcd",
           "ARGOCD_APP_REVISION_SHORT": "0123abc", "ARGOCD_APP_SOURCE_PATH": app_path,
           "ARGOCD_APP_SOURCE_REPO_URL": "https://git.example/deploy.git", "ARGOCD_APP_SOURCE_TARGET_REVISION": "HEAD",
           "KUBE_VERSION": "1.30.0", "KUBE_API_VERSIONS": KUBE_API_VERSIONS,
           "ARGOCD_APP_PARAMETERS": json.dumps(parameters)}
    user = {f"ARGOCD_ENV_{name}": value for name, value in env.items()}
    params = {f"PARAM_{p['name'].upper().replace('-', '_')}": p["string"] for p in parameters if "string" in p}
    params.update({f"PARAM_{p['name'].upper().replace('-', '_')}_{i}": item   # an array: one variable per item
                   for p in parameters for i, item in enumerate(p.get("array") or [])})
    return {**sidecar, **app, **user, **params}


def run_command(command: dict, app_dir: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    argv = list(command["command"]) + list(command.get("args") or [])
    return subprocess.run(argv, cwd=app_dir, env=env, capture_output=True, text=True, check=False)


def cmp(tmp_path: Path, app_path: str, env: dict[str, str] | None = None,
        parameters: list[dict] | None = None) -> subprocess.CompletedProcess:
    """init then generate, as GenerateManifest does; returns init's result if it fails."""
    work = repo_copy(tmp_path)
    environ = environment(app_path, env or {}, parameters or [])
    init = run_command(PLUGIN["spec"]["init"], work / app_path, environ)
    if init.returncode != 0:
        return init
    return run_command(PLUGIN["spec"]["generate"], work / app_path, environ)


def manifests(stdout: str) -> list[dict]:
    """Split like Argo CD does (kube.SplitYAMLToString): every document a Kubernetes object."""
    docs = [d for d in yaml.safe_load_all(stdout) if d is not None]
    for doc in docs:
        assert isinstance(doc, dict) and doc.get("apiVersion") and doc.get("kind") and doc["metadata"].get("name")
    return docs


def kinds(objs: list[dict]) -> list[str]:
    return sorted(o["kind"] for o in objs if o["kind"] != "Namespace")


def deployment(objs: list[dict]) -> dict:
    return next(o for o in objs if o["kind"] == "Deployment")


def test_plugin_config_is_a_cmp_v2_sidecar_config():
    assert (PLUGIN["apiVersion"], PLUGIN["kind"]) == ("argoproj.io/v1alpha1", "ConfigManagementPlugin")
    assert (PLUGIN["metadata"]["name"], PLUGIN["spec"]["version"]) == ("omerender", "v1")
    assert [p["name"] for p in PLUGIN["spec"]["parameters"]["static"]] == ['no-model-node-selector', 'keep-inputs', 'pod-monitors', 'model-weights', 'weights-storage-class', 'weights-access-mode', 'downloader-image', 'weights-node-selector', 'weights-tolerations', 'downloader-resources', 'weights-wait-resources', 'download-deadline', 'downloader-env', 'downloader-env-from', 'validate', 'strict', 'allow', 'allow-empty', 'quiet', 'messages', 'cluster-config']



def test_kustomize_overlay_with_the_transformer_is_built(tmp_path):
    done = cmp(tmp_path, "fixtures/kustomize/overlays/prod")
    assert done.returncode == 0, done.stderr
    objs = manifests(done.stdout)
    assert kinds(objs) == RENDERED_KINDS
    assert {o["metadata"]["namespace"] for o in objs} == {"llama-prod"}
    hpa = next(o for o in objs if o["kind"] == "HorizontalPodAutoscaler")
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (2, 4)
    kustomize = subprocess.run([shutil.which("kustomize"), "build", "--enable-alpha-plugins", "--enable-exec",
                                str(ROOT / "fixtures" / "kustomize" / "overlays" / "prod")], capture_output=True,
                               text=True, env=environment("", {}, []), check=False)
    assert objs == manifests(kustomize.stdout)


def test_kustomization_without_the_transformer_is_built_then_rendered(tmp_path):
    done = cmp(tmp_path, "fixtures/quickstart", env={"NO_MODEL_NODE_SELECTOR": "true"})
    assert done.returncode == 0, done.stderr
    objs = manifests(done.stdout)
    assert kinds(objs) == RENDERED_KINDS
    assert MODEL_SELECTOR not in (deployment(objs)["spec"]["template"]["spec"].get("nodeSelector") or {})
    assert "warning: isvc.yaml:3:1: InferenceService llama-demo/llama-3-2-3b-instruct: Runtime sglang-llama-3-2-3b " \
           "will be auto-selected for model llama-3-2-3b-instruct" in done.stderr


def test_plain_directory_is_rendered_with_defaults(tmp_path):
    done = cmp(tmp_path, "apps/plain")
    assert done.returncode == 0, done.stderr
    objs = manifests(done.stdout)
    assert kinds(objs) == sorted(RENDERED_KINDS + ["ClusterBaseModel"])
    assert deployment(objs)["spec"]["template"]["spec"]["nodeSelector"] == {MODEL_SELECTOR: "Ready"}
    # the model, for OME's model agent (D3); the runtime and InferenceService are not applied
    assert [o["kind"] for o in objs if o["apiVersion"].startswith("ome.io/")] == ["ClusterBaseModel"]


def test_env_options_reach_the_render(tmp_path):
    done = cmp(tmp_path, "apps/plain", env={"NO_MODEL_NODE_SELECTOR": "true", "KEEP_INPUTS": "true"})
    assert done.returncode == 0, done.stderr
    objs = manifests(done.stdout)
    assert MODEL_SELECTOR not in (deployment(objs)["spec"]["template"]["spec"].get("nodeSelector") or {})
    assert {"ServingRuntime", "ClusterBaseModel", "InferenceService"} <= {o["kind"] for o in objs}


def test_parameters_win_over_env(tmp_path):
    done = cmp(tmp_path, "apps/plain", env={"NO_MODEL_NODE_SELECTOR": "true"},
               parameters=[{"name": "no-model-node-selector", "string": "false"}])
    assert done.returncode == 0, done.stderr
    assert deployment(manifests(done.stdout))["spec"]["template"]["spec"]["nodeSelector"] == {MODEL_SELECTOR: "Ready"}


def test_a_bad_option_value_fails_readably(tmp_path):
    done = cmp(tmp_path, "apps/plain", env={"NO_MODEL_NODE_SELECTOR": "maybe"})
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == 'error: NO_MODEL_NODE_SELECTOR must be true or false, got "maybe"\n'


def test_env_options_on_a_kustomization_with_the_transformer_are_refused(tmp_path):
    done = cmp(tmp_path, "fixtures/kustomize/overlays/dev", env={"KEEP_INPUTS": "true"})
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == ("error: keep-inputs=true (KEEP_INPUTS): this kustomization lists the OMERender transformer; "
                           "set keepInputs: true in that config's spec instead, not in the Application's plugin env or "
                           "parameters\n")


def test_render_errors_fail_generate_with_the_message(tmp_path):
    work = repo_copy(tmp_path)
    isvc = work / "apps" / "plain" / "isvc.yaml"
    isvc.write_text(isvc.read_text().replace(f"    name: {ISVC}\n  engine", "    name: no-such-model\n  engine"))
    environ = environment("apps/plain", {}, [])
    assert run_command(PLUGIN["spec"]["init"], work / "apps" / "plain", environ).returncode == 0
    done = run_command(PLUGIN["spec"]["generate"], work / "apps" / "plain", environ)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == ('error: ./isvc.yaml:10:5: InferenceService llama-demo/llama-3-2-3b-instruct: referenced model '
                           '"no-such-model" not found in namespace "llama-demo": ensure a BaseModel exists in this '
                           'namespace or a ClusterBaseModel exists cluster-wide with this name\n')


def test_init_names_a_missing_tool(tmp_path):
    work = repo_copy(tmp_path)
    environ = environment("apps/plain", {}, [])
    only_sh = tmp_path / "bin"
    only_sh.mkdir()
    (only_sh / "sh").symlink_to(shutil.which("sh"))
    environ["PATH"] = str(only_sh)
    done = run_command(PLUGIN["spec"]["init"], work / "apps" / "plain", environ)
    assert done.returncode == 1
    assert done.stderr == "error: omerender is not installed in the plugin sidecar\n"


# ---------------------------------------------------------------- no program the repository names runs

def generate(work: Path, app_path: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    environ = environment(app_path, env or {}, [])
    init = run_command(PLUGIN["spec"]["init"], work / app_path, environ)
    assert init.returncode == 0, init.stderr
    return run_command(PLUGIN["spec"]["generate"], work / app_path, environ)


def test_generate_is_omerender_alone():
    assert PLUGIN["spec"]["generate"] == {"command": ["omerender", "argocd", "generate"]}


def test_an_exec_function_in_the_repository_never_runs(tmp_path):
    work = repo_copy(tmp_path)
    prod = work / "fixtures" / "kustomize" / "overlays" / "prod"
    marker = tmp_path / "EVIL-RAN"
    (prod / "evil.sh").write_text(f"#!/bin/sh\ntouch '{marker}'\ncat\n")
    (prod / "evil.sh").chmod(0o755)
    config = prod / "omerender.yaml"
    config.write_text(config.read_text().replace("path: omerender-fn", "path: ./evil.sh"))
    done = generate(work, "fixtures/kustomize/overlays/prod")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == ("error: omerender.yaml: OMERender omerender: exec function path './evil.sh' is a program "
                           "this repository chooses; only omerender's own function may run here: list "
                           "plugins/kustomize/omerender-fn.yaml\n")
    assert not marker.exists()


def test_an_overlay_above_the_transformer_renders_with_the_installed_function(tmp_path):
    work = repo_copy(tmp_path)
    above = work / "fixtures" / "kustomize" / "overlays" / "above"
    above.mkdir()
    (above / "kustomization.yaml").write_text(
        "resources: [../prod]\npatches:\n  - target: {kind: Deployment}\n    patch: |\n      - op: add\n"
        "        path: /spec/template/spec/priorityClassName\n        value: high\n")
    done = generate(work, "fixtures/kustomize/overlays/above")
    assert done.returncode == 0, done.stderr
    objs = manifests(done.stdout)
    assert kinds(objs) == RENDERED_KINDS
    assert deployment(objs)["spec"]["template"]["spec"]["priorityClassName"] == "high"


def test_a_symlink_out_of_the_repository_is_refused(tmp_path):
    work = repo_copy(tmp_path)
    secret = tmp_path / "secret.yaml"
    secret.write_text("apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {token: hunter2}\n")
    base = work / "fixtures" / "kustomize" / "base"
    (base / "leak.yaml").symlink_to(secret)
    (base / "kustomization.yaml").write_text((base / "kustomization.yaml").read_text() + "  - leak.yaml\n")
    done = generate(work, "fixtures/kustomize/overlays/dev")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (f"error: ../../base/kustomization.yaml: 'leak.yaml' leads to {secret}, outside the "
                           f"repository {work}; omerender builds only what is inside it\n")


def test_nothing_above_the_app_is_read_when_the_source_path_does_not_match(tmp_path):
    work = repo_copy(tmp_path)
    app = work / "fixtures" / "kustomize" / "overlays" / "dev"
    environ = environment("elsewhere/dev", {}, [])
    done = run_command(PLUGIN["spec"]["generate"], app, environ)
    assert (done.returncode, done.stdout) == (1, "")
    base = work / "fixtures" / "kustomize" / "base"
    assert done.stderr == (f"error: kustomization.yaml: '../../base' leads to {base}, outside the repository {app}; "
                           f"omerender builds only what is inside it\n")


def test_env_options_on_a_kustomization_without_the_transformer_reach_the_render(tmp_path):
    done = cmp(tmp_path, "fixtures/quickstart", env={"KEEP_INPUTS": "true"})
    assert done.returncode == 0, done.stderr
    assert {"ServingRuntime", "ClusterBaseModel", "InferenceService"} <= {o["kind"] for o in manifests(done.stdout)}


def test_a_bad_option_value_cannot_forge_message_lines(tmp_path):
    done = cmp(tmp_path, "apps/plain", env={"KEEP_INPUTS": "no\nerror: all good"})
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == 'error: KEEP_INPUTS must be true or false, got "no\\nerror: all good"\n'


def test_a_git_repository_on_this_machine_is_refused_as_a_base(tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "secret.yaml").write_text("apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {token: x}\n")
    (other / "kustomization.yaml").write_text("resources: [secret.yaml]\n")
    git = ["git", "-C", str(other), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "secret"]):
        subprocess.run(git + args, check=True, capture_output=True)
    work = repo_copy(tmp_path)
    dev = work / "fixtures" / "kustomize" / "overlays" / "dev"
    entry = f"git::file://{other}?ref=HEAD"
    (dev / "kustomization.yaml").write_text(
        (dev / "kustomization.yaml").read_text().replace("  - ../../base\n", f"  - ../../base\n  - {entry}\n"))
    done = generate(work, "fixtures/kustomize/overlays/dev")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (f"error: kustomization.yaml: resources entry '{entry}' is a git repository on this "
                           f"machine (file:// names a directory on this machine), outside the repository; copy what "
                           f"it holds into the repository and name it by a relative path, or name a repository over "
                           f"the network (https://host/org/repo, git@host:org/repo)\n")


def test_kustomize_is_stopped_at_the_sidecars_time_limit(tmp_path):
    work = repo_copy(tmp_path)
    bin_dir, _ = slow_kustomize(tmp_path)
    environ = environment("fixtures/kustomize/overlays/dev", {}, [])
    environ.update(PATH=f"{bin_dir}{os.pathsep}{environ['PATH']}", OMERENDER_BUILD_TIMEOUT="1")
    done = run_command(PLUGIN["spec"]["generate"], work / "fixtures/kustomize/overlays/dev", environ)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == ("error: kustomize build . did not finish within 1 s and was stopped; a kustomization "
                           "that needs longer can have it with omerender build --timeout SECONDS or "
                           "OMERENDER_BUILD_TIMEOUT (on Argo CD's plugin sidecar, together with the repo-server's "
                           "deadline, 60 s by default: controller.repo.server.timeout.seconds and "
                           "server.repo.server.timeout.seconds in argocd-cmd-params-cm)\n")


def test_a_terminated_generate_removes_its_staged_copy(tmp_path):
    """Argo CD stops a generate step that outlives its timeout with SIGTERM."""
    work = repo_copy(tmp_path)
    bin_dir, pids = slow_kustomize(tmp_path)
    staging = tmp_path / "tmp"
    staging.mkdir()
    environ = environment("fixtures/kustomize/overlays/dev", {}, [])
    environ.update(PATH=f"{bin_dir}{os.pathsep}{environ['PATH']}", TMPDIR=str(staging))
    process = subprocess.Popen(PLUGIN["spec"]["generate"]["command"], cwd=work / "fixtures/kustomize/overlays/dev",
                               env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not (pids.exists() and pids.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    process.terminate()
    stdout, stderr = process.communicate(timeout=30)
    assert (process.returncode, stdout) == (143, "")
    assert stderr == "error: stopped by SIGTERM; the build's temporary copy was removed\n"
    assert list(staging.iterdir()) == []


def test_strict_fails_the_sync_on_a_warning(tmp_path):
    warning = ("InferenceService llama-demo/llama-3-2-3b-instruct: Runtime sglang-llama-3-2-3b will be auto-selected "
               "for model llama-3-2-3b-instruct [auto-selected-runtime]")
    plain = cmp(tmp_path / "a", "apps/plain", env={"STRICT": "true"})
    assert (plain.returncode, plain.stdout) == (1, "")
    assert plain.stderr.splitlines() == [CHART_DEFAULTS_CODED, f"warning: ./isvc.yaml:3:1: {warning}",
                                         "error: 1 warning, and --strict makes every warning fail the run"]
    built = cmp(tmp_path / "b", "fixtures/quickstart", parameters=[{"name": "strict", "string": "true"}])
    assert (built.returncode, built.stdout) == (1, "")
    assert built.stderr.splitlines() == [CHART_DEFAULTS_CODED, f"warning: isvc.yaml:3:1: {warning}",
                                         "error: 1 warning, and --strict makes every warning fail the run"]
    assert cmp(tmp_path / "c", "fixtures/quickstart", env={"STRICT": "false"}).returncode == 0


def test_strict_beside_an_omerender_config_adds_its_check_in_the_plugin_as_in_the_cli(tmp_path, monkeypatch):
    """STRICT only makes warnings fail, so it can't disagree with a config: the plugin takes it beside one, as the
    CLI takes --strict beside one."""
    from conftest import run_cli
    work = repo_copy(tmp_path)
    isvc = work / "fixtures" / "kustomize" / "base" / "isvc.yaml"
    isvc.write_text(isvc.read_text().replace("spec:\n", "spec:\n  kedaConfig: {}\n", 1))
    plugin = generate(work, "fixtures/kustomize/overlays/prod", env={"STRICT": "true"})
    monkeypatch.chdir(work / "fixtures" / "kustomize")
    cli = run_cli("render", "overlays/prod", "--strict")
    strict_error = "error: 1 warning, and --strict makes every warning fail the run"
    assert (plugin.returncode, plugin.stdout, plugin.stderr.splitlines()[-1]) == (1, "", strict_error)
    assert (cli.code, cli.stdout, cli.stderr.splitlines()[-1]) == (1, "", strict_error)
    assert "[removed-field]" in plugin.stderr and "[removed-field]" in cli.printed
    assert generate(work, "fixtures/kustomize/overlays/prod").returncode == 0
    assert run_cli("render", "overlays/prod").code == 0


# ---------------------------------------------------------------- CLUSTER_CONFIG: OME's ConfigMap inferenceservice-config

CLUSTER_CM = ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: inferenceservice-config, namespace: ome}\n"
              "data:\n  deploy: '{\"defaultDeploymentMode\": \"RawDeployment\", \"terminationGracePeriodSeconds\": 45}'\n")


def _with_cluster_config(tmp_path: Path, app: str, value: str, where: str = "cluster/config.yaml"):
    work = repo_copy(tmp_path)
    (work / where).parent.mkdir(parents=True, exist_ok=True)
    (work / where).write_text(CLUSTER_CM)
    return generate(work, app, env={"CLUSTER_CONFIG": value})


def test_cluster_config_names_the_configmap_for_a_plain_directory(tmp_path):
    done = _with_cluster_config(tmp_path, "apps/plain", "../../cluster/config.yaml")
    assert done.returncode == 0, done.stderr
    objs = manifests(done.stdout)
    assert deployment(objs)["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] == 45
    assert "ConfigMap" not in [o["kind"] for o in objs]


def test_cluster_config_inside_the_app_is_read_once(tmp_path):
    done = _with_cluster_config(tmp_path, "apps/plain", "config.yaml", where="apps/plain/config.yaml")
    assert done.returncode == 0, done.stderr
    assert deployment(manifests(done.stdout))["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] == 45


def test_cluster_config_reaches_a_kustomization_build(tmp_path):
    done = _with_cluster_config(tmp_path, "fixtures/quickstart", "../../cluster/config.yaml")
    assert done.returncode == 0, done.stderr
    assert deployment(manifests(done.stdout))["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] == 45


def test_cluster_config_outside_the_repository_is_refused(tmp_path):
    (tmp_path / "outside.yaml").write_text(CLUSTER_CM)
    done = _with_cluster_config(tmp_path, "apps/plain", "../../../outside.yaml")
    assert (done.returncode, done.stdout) == (1, "")
    work = tmp_path / "cmp-work"
    assert done.stderr == (f'error: CLUSTER_CONFIG "../../../outside.yaml" leads to {tmp_path}/outside.yaml, outside '
                           f"the repository {work}; omerender reads only the files it is given\n")


def test_cluster_config_through_a_symlink_out_is_refused(tmp_path):
    (tmp_path / "outside.yaml").write_text(CLUSTER_CM)
    work = repo_copy(tmp_path)
    (work / "apps" / "plain" / "cm.yml").symlink_to(tmp_path / "outside.yaml")
    done = generate(work, "apps/plain", env={"CLUSTER_CONFIG": "cm.yml"})
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (f"error: cm.yml: symbolic link to {tmp_path}/outside.yaml, outside {work}/apps/plain; "
                           "omerender reads only the files it is given\n")


def test_a_missing_cluster_config_is_an_error(tmp_path):
    done = generate(repo_copy(tmp_path), "apps/plain", env={"CLUSTER_CONFIG": "nope.yaml"})
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == 'error: CLUSTER_CONFIG "nope.yaml": no such file\n'


def test_a_cluster_config_that_is_no_regular_file_is_an_error(tmp_path):
    """A FIFO would block the read, a directory or a trailing slash is no file: each is named, nothing read."""
    work = repo_copy(tmp_path)
    os.mkfifo(work / "apps" / "plain" / "fifo")
    (work / "apps" / "plain" / "dir").mkdir()
    (work / "apps" / "plain" / "cm.yaml").write_text(CLUSTER_CM)
    for value, problem in (("fifo", "is not a regular file (a FIFO, socket or device is never read)"),
                           ("dir", "is a directory; name the file that holds the ConfigMap inferenceservice-config"),
                           ("dir/", "is a directory; name the file that holds the ConfigMap inferenceservice-config"),
                           ("cm.yaml/", "no such file")):
        done = generate(work, "apps/plain", env={"CLUSTER_CONFIG": value})
        assert (done.returncode, done.stdout) == (1, "")
        assert done.stderr == f'error: CLUSTER_CONFIG "{value}": {problem}\n'


def test_a_cluster_config_path_leaving_and_reentering_the_app_is_read(tmp_path):
    done = _with_cluster_config(tmp_path, "apps/plain", "../../apps/../cluster/./config.yaml")
    assert done.returncode == 0, done.stderr
    assert deployment(manifests(done.stdout))["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] == 45


def test_an_absolute_cluster_config_is_an_error(tmp_path):
    done = generate(repo_copy(tmp_path), "apps/plain", env={"CLUSTER_CONFIG": "/etc/passwd"})
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == 'error: CLUSTER_CONFIG must be a path relative to the app\'s directory, got "/etc/passwd"\n'


def test_a_cluster_config_the_directory_walk_passes_over_is_read_all_the_same(tmp_path):
    """The walk of a plain directory skips dot-directories, dot-files and directories `render --output-dir` wrote
    (which a contributor can add); a ConfigMap CLUSTER_CONFIG names there is read anyway (issue 33), never
    silently replaced by the chart's defaults."""
    for case, where in (("dot-dir", "apps/plain/.cluster/config.yaml"), ("dot-file", "apps/plain/.config.yaml"),
                        ("output", "apps/plain/out/config.yaml"), ("deep-dot-dir", "apps/plain/a/.b/c/config.yml")):
        work = repo_copy(tmp_path / case)
        (work / where).parent.mkdir(parents=True, exist_ok=True)
        (work / where).write_text(CLUSTER_CM)
        if case == "output":
            (work / where).with_name(".omerender-rendered.yaml").write_text("{}\n")
        value = where.removeprefix("apps/plain/")
        done = generate(work, "apps/plain", env={"CLUSTER_CONFIG": value})
        assert done.returncode == 0, (case, done.stderr)
        spec = deployment(manifests(done.stdout))["spec"]["template"]["spec"]
        assert spec["terminationGracePeriodSeconds"] == 45, case


def test_a_cluster_config_link_to_a_file_the_walk_reads_is_read_once(tmp_path):
    work = repo_copy(tmp_path)
    plain = work / "apps" / "plain"
    (plain / "cluster.yaml").write_text(CLUSTER_CM)
    (plain / "cm.yaml").symlink_to("cluster.yaml")
    done = generate(work, "apps/plain", env={"CLUSTER_CONFIG": "cm.yaml"})
    assert done.returncode == 0, done.stderr
    assert deployment(manifests(done.stdout))["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] == 45


def test_an_isvc_no_transformer_saw_is_said_and_strict_in_the_config_fails_the_sync(tmp_path):
    """On the function path, an overlay's own InferenceService ships unrendered: generate says so on stderr, and
    ``strict: true`` in the OMERender config fails the sync (issue 33), as it does for ``omerender build``."""
    from test_safe_build import UNRENDERED, own_isvc_overlay, strict_config
    work = repo_copy(tmp_path)
    own_isvc_overlay(work / "fixtures" / "kustomize")
    done = generate(work, "fixtures/kustomize/overlays/above")
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [UNRENDERED]
    assert "extra" in [o["metadata"]["name"] for o in manifests(done.stdout) if o["kind"] == "InferenceService"]
    strict_config(work / "fixtures" / "kustomize")
    done = generate(work, "fixtures/kustomize/overlays/above")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.splitlines() == [UNRENDERED, "error: 1 warning, and strict: true in the OMERender config "
                                                    "makes every warning fail the run"]
