"""The container KRM function image (Dockerfile) and the Argo CD sidecar image. Docker cannot run
here, so the image's entrypoint command is run directly, on the exact ResourceList that the real
kustomize hands a function (captured from a kustomize build of the prod overlay)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
OVERLAY = ROOT / "fixtures" / "kustomize" / "overlays" / "prod"
ISVC = "llama-3-2-3b-instruct"


def instructions(dockerfile: Path) -> list[tuple[str, str]]:
    lines, current = [], ""
    for raw in dockerfile.read_text().splitlines():
        if raw.lstrip().startswith("#") or not raw.strip():
            continue
        current += raw.rstrip("\\").strip() + " "
        if not raw.endswith("\\"):
            word, _, rest = current.strip().partition(" ")
            lines.append((word.upper(), rest))
            current = ""
    return lines


def entrypoint() -> list[str]:
    found = [rest for word, rest in instructions(ROOT / "Dockerfile") if word == "ENTRYPOINT"]
    assert len(found) == 1
    return json.loads(found[0])


def captured_resource_list(tmp_path: Path) -> str:
    """The ResourceList kustomize sends to the function, captured by swapping in a recording exec function."""
    tree = tmp_path / "kustomize"
    shutil.copytree(ROOT / "fixtures" / "kustomize", tree)
    record = tmp_path / "resource-list.yaml"
    recorder = tmp_path / "record.sh"
    recorder.write_text(f"#!/bin/sh\ntee '{record}'\n")
    recorder.chmod(0o755)
    config = tree / "overlays" / "prod" / "omerender.yaml"
    config.write_text(config.read_text().replace("path: omerender-fn", f"path: {recorder}"))
    kustomize = shutil.which("kustomize")
    assert kustomize, "kustomize is not on PATH: run scripts/setup-tools.sh"
    done = subprocess.run([kustomize, "build", "--enable-alpha-plugins", "--enable-exec", str(config.parent)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return record.read_text()


def run_entrypoint(stdin: str) -> subprocess.CompletedProcess:
    argv = entrypoint()
    scripts = Path(sys.executable).parent  # where `pip install` puts console scripts, as in the image
    env = {**os.environ, "PATH": f"{scripts}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(argv, input=stdin, capture_output=True, text=True, env=env, check=False)


def test_image_is_small_python_running_the_function():
    steps = instructions(ROOT / "Dockerfile")
    assert steps[0][0] == "ARG" and steps[0][1].startswith("PYTHON_IMAGE=python:3.11-slim-trixie@sha256:")
    assert [rest for word, rest in steps if word == "FROM"] == ["${PYTHON_IMAGE} AS build", "${PYTHON_IMAGE}"]
    assert entrypoint() == ["omerender-fn"]
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["omerender-fn"] == "omerender.cli.fn:main"
    for word, rest in steps:
        if word == "COPY" and "--from=build" not in rest:
            for source in rest.split()[:-1]:
                if not source.startswith("--"):
                    assert (ROOT / source).exists(), f"COPY source {source} is missing from the build context"


def test_entrypoint_renders_the_resource_list_kustomize_sends(tmp_path):
    resource_list = captured_resource_list(tmp_path)
    assert yaml.safe_load(resource_list)["functionConfig"]["kind"] == "OMERender"
    done = run_entrypoint(resource_list)
    assert done.returncode == 0, done.stderr
    output = yaml.safe_load(done.stdout)
    assert (output["apiVersion"], output["kind"]) == ("config.kubernetes.io/v1", "ResourceList")
    assert not [r for r in output.get("results") or [] if r["severity"] == "error"]
    items = output["items"]
    assert sorted(i["kind"] for i in items) == ["Deployment", "HorizontalPodAutoscaler", "PodDisruptionBudget",
                                                "Service", "Service"]
    assert {i["metadata"]["namespace"] for i in items} == {"llama-prod"}
    pod = next(i for i in items if i["kind"] == "Deployment")["spec"]["template"]["spec"]
    assert pod["containers"][0]["image"] == "docker.io/lmsysorg/sglang:v0.5.6-cu129-amd64"
    assert "nodeSelector" not in pod or f"models.ome.io/clusterbasemodel.{ISVC}" not in pod["nodeSelector"]


def test_entrypoint_fails_with_error_results(tmp_path):
    resource_list = yaml.safe_load(captured_resource_list(tmp_path))
    for item in resource_list["items"]:
        if item["kind"] == "InferenceService":
            item["spec"]["model"]["name"] = "no-such-model"
    done = run_entrypoint(yaml.safe_dump(resource_list))
    assert done.returncode == 1
    output = yaml.safe_load(done.stdout)
    assert output["items"] == []
    errors = [r for r in output["results"] if r["severity"] == "error"]
    assert len(errors) == 1 and 'referenced model "no-such-model" not found' in errors[0]["message"]
    assert done.stderr.startswith("error: InferenceService llama-prod/llama-3-2-3b-instruct: referenced model")


def test_container_function_config_matches_the_exec_one():
    container = yaml.safe_load((ROOT / "plugins" / "kustomize" / "omerender-container.yaml").read_text())
    exec_config = yaml.safe_load((ROOT / "plugins" / "kustomize" / "omerender-fn.yaml").read_text())
    function = yaml.safe_load(container["metadata"]["annotations"]["config.kubernetes.io/function"])
    assert function == {"container": {"image": "ghcr.io/omerender/omerender:0.1.0"}}
    assert yaml.safe_load(exec_config["metadata"]["annotations"]["config.kubernetes.io/function"]) == {
        "exec": {"path": "omerender-fn"}}
    assert (container["apiVersion"], container["kind"], container["spec"]) == (
        exec_config["apiVersion"], exec_config["kind"], exec_config["spec"])


def test_argocd_sidecar_image_bakes_the_plugin_config_in():
    steps = instructions(ROOT / "plugins" / "argocd" / "Dockerfile")
    assert steps[0][0] == "ARG" and steps[0][1].startswith("PYTHON_IMAGE=python:3.11-slim-trixie@sha256:")
    assert ("USER", "999") in steps
    copies = [rest.split() for word, rest in steps if word == "COPY" and "--from=build" not in rest]
    assert ["--chown=0:0", "--chmod=0644", "plugins/argocd/plugin.yaml",
            "/home/argocd/cmp-server/config/plugin.yaml"] in copies
    for parts in copies:
        for source in [p for p in parts[:-1] if not p.startswith("--")]:
            assert (ROOT / source).exists(), source
    patch = yaml.safe_load((ROOT / "plugins" / "argocd" / "repo-server-patch.yaml").read_text())
    sidecar = patch["spec"]["template"]["spec"]["containers"][0]
    assert sidecar["command"] == ["/var/run/argocd/argocd-cmp-server"]
    assert sidecar["securityContext"]["runAsUser"] == 999
    assert {m["mountPath"] for m in sidecar["volumeMounts"]} == {"/var/run/argocd", "/home/argocd/cmp-server/plugins",
                                                                "/tmp"}
