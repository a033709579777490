"""``--cluster-config FILE`` on every command (issue 32), the meaning of the Argo CD plugin's ``cluster-config``
parameter; and every command building an overlay the way ``render`` and ``build`` do. Through the real CLI, real
git and the real kustomize.

The scenario of the issue: a base, a prod overlay, and OME's ConfigMap under ``cfg/`` turning Gateway API ingress
on, kept beside the apps and named on the command line; a change of its ``ingressDomain`` is a change of what ships.
"""
from __future__ import annotations

import json
import os
import shutil

import pytest
import yaml

from conftest import FIXTURES, run_cli
from test_overlays import edit, git, write

CFG = "cfg/inferenceservice-config.yaml"
ISVC = "llama-3-2-3b-instruct"
NS = "llama-prod"
PROD = ("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: llama-prod\nresources:\n"
        "  - ../../base\n")


def gateway_configmap() -> str:
    """OME's ConfigMap of the Gateway API worked example (docs/cluster-config-and-ingress.md)."""
    texts = (FIXTURES / "gateway-api" / "inputs.yaml").read_text().split("\n---\n")
    return next(text for text in texts if "\nkind: ConfigMap\n" in text) + "\n"


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """base/ (the kustomize fixture's), overlays/prod (namespace llama-prod) and cfg/ holding the ConfigMap with
    Gateway API on and ingressDomain example.com; a second commit changes the domain to prod.example.net."""
    root = tmp_path / "repo"
    shutil.copytree(FIXTURES / "kustomize" / "base", root / "base")
    write(root / "overlays" / "prod" / "kustomization.yaml", PROD)
    write(root / CFG, gateway_configmap())
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "commit", "-qm", "prod with gateway api")
    edit(root / CFG, '"ingressDomain": "example.com"', '"ingressDomain": "prod.example.net"')
    git(root, "commit", "-qam", "new domain")
    monkeypatch.chdir(root)
    return root


def hostnames(stdout: str) -> set[str]:
    return {host for obj in yaml.safe_load_all(stdout) if obj and obj["kind"] == "HTTPRoute"
            for host in obj["spec"]["hostnames"]}


# ---------------------------------------------------------------- the scenario


def test_a_domain_change_in_the_named_configmap_is_a_change_of_the_overlay(repo):
    run = run_cli("diff", "--exit-code", "--cluster-config", CFG, "HEAD~1", "HEAD", "--", "overlays/prod")
    assert run.code == 1, run.stderr
    assert run.stdout.splitlines()[0] == "InferenceServices: 0 added, 0 removed, 1 changed, 0 unchanged; 0 roll out"
    assert f"  ~ gateway.networking.k8s.io/v1 HTTPRoute {ISVC}\n      spec.hostnames[0]\n" in run.stdout
    assert run.stdout.endswith("Cluster configuration (inferenceservice-config):\n"
                               "  ingress.ingressDomain: example.com -> prod.example.net\n")
    shown = run_cli("diff", "-U", "0", "--cluster-config", CFG, "HEAD~1", "HEAD", "--", "overlays/prod").stdout
    assert shown.count("    -  - llm.example.com\n") == 2 and shown.count("    +  - llm.prod.example.net\n") == 2


def test_without_the_option_the_diff_sees_no_change(repo):
    """What the issue reported: the ConfigMap is not among the overlay's inputs, so nothing changes."""
    run = run_cli("diff", "--exit-code", "HEAD~1", "HEAD", "--", "overlays/prod")
    assert (run.code, run.stdout.splitlines()[0], run.stdout.splitlines()[-1]) == (
        0, "InferenceServices: 0 added, 0 removed, 0 changed, 1 unchanged; 0 roll out", "No changes.")


def test_render_build_and_check_of_the_overlay_ship_the_same_routes(repo, tmp_path):
    build = run_cli("build", "--cluster-config", CFG, "overlays/prod")
    assert build.code == 0, build.stderr
    assert hostnames(build.stdout) == {"llm.prod.example.net", "llm.example.org"}
    render = run_cli("render", "--cluster-config", CFG, "overlays/prod")
    assert (render.code, render.stdout) == (0, build.stdout)
    out = tmp_path / "rendered"
    assert run_cli("render", "--cluster-config", CFG, "overlays/prod", "--output-dir", str(out)).code == 0
    assert run_cli("check", "--cluster-config", CFG, "overlays/prod", str(out)).code == 0
    stale = run_cli("check", "overlays/prod", str(out))
    assert stale.code == 1
    assert stale.lines[-1] == (f"error: {out} is out of date with overlays/prod; run: omerender render overlays/prod "
                               f"--output-dir {out}")


def test_config_explain_and_tree_of_the_overlay_agree_with_build(repo):
    config = run_cli("config", "-o", "json", "--cluster-config", CFG, "overlays/prod")
    assert config.code == 0, config.stderr
    settings = {row["setting"]: (row["value"], row["source"]) for row in json.loads(config.stdout)["settings"]}
    assert settings["ingress.ingressDomain"] == ("prod.example.net", f"configmap {CFG}")
    assert settings["ingress.enableGatewayAPI"][0] is True
    isvc = run_cli("config", "--isvc", ISVC, "-n", NS, "--cluster-config", CFG, "overlays/prod")
    assert f"InferenceService {NS}/{ISVC}: renders" in isvc.stdout
    assert "HTTPRoutes and a BackendTrafficPolicy" in isvc.stdout

    explain = run_cli("explain", "--isvc", ISVC, "-n", NS, "--cluster-config", CFG, "overlays/prod")
    assert explain.code == 0, explain.stderr
    assert explain.stderr.splitlines()[-1] == "Selected: sglang-llama-3-2-3b (Cluster): only compatible runtime"
    deployment = next(o for o in yaml.safe_load_all(run_cli("build", "overlays/prod").stdout)
                      if o["kind"] == "Deployment")
    assert deployment["metadata"]["namespace"] == NS
    assert deployment["metadata"]["annotations"]["ome.io/serving-runtime"] == "sglang-llama-3-2-3b"

    tree = run_cli("tree", "--cluster-config", CFG, "sglang-llama-3-2-3b", "overlays/prod")
    assert (tree.code, tree.stdout) == (0, "ClusterServingRuntime/sglang-llama-3-2-3b [selected]\n"
                                           f"`-- InferenceService/{NS}/{ISVC}\n")


def test_an_overlay_whose_base_lists_the_configmap_is_read_as_build_reads_it(repo):
    """Before issue 32, config printed the chart's defaults and explain found no InferenceService here. The
    overlay's namespace: moves the ConfigMap too, which build uses with a warning; config says the same."""
    shutil.copy(repo / CFG, repo / "base" / "config.yaml")
    edit(repo / "base" / "kustomization.yaml", "  - isvc.yaml\n", "  - isvc.yaml\n  - config.yaml\n")
    config = run_cli("config", "overlays/prod")
    assert config.code == 0, config.stderr
    assert config.stderr.splitlines() == [
        "warning: base/config.yaml: ConfigMap llama-prod/inferenceservice-config: OME reads inferenceservice-config "
        "from namespace ome, not llama-prod; omerender uses this one as the cluster configuration",
        "Cluster configuration: base/config.yaml: ConfigMap llama-prod/inferenceservice-config"]
    assert "warning: base/config.yaml: ConfigMap llama-prod/inferenceservice-config: OME reads" in \
        run_cli("build", "overlays/prod").stderr
    explain = run_cli("explain", "--isvc", ISVC, "-n", NS, "overlays/prod")
    assert explain.code == 0, explain.stderr
    tree = run_cli("tree", "sglang-llama-3-2-3b", "overlays/prod")
    assert f"InferenceService/{NS}/{ISVC}" in tree.stdout


def test_lock_update_of_an_overlay_pins_what_the_build_holds(repo):
    """An InferenceService with autoSync: false in the base is pinned in the namespace the overlay gives it, in the
    lock file the build lists."""
    edit(repo / "base" / "isvc.yaml", "    name: sglang-llama-3-2-3b\n", "    name: sglang-llama-3-2-3b\n    autoSync: false\n")
    run = run_cli("lock", "update", "--cluster-config", CFG, "overlays/prod")
    assert run.code == 0, run.stderr
    lock = yaml.safe_load((repo / "overlays" / "prod" / "omerender.lock.yaml").read_text())
    assert [(e["namespace"], e["name"], e["pinnedRevision"]) for e in lock["inferenceServices"]] == [
        (NS, ISVC, "cr-sglang-llama-3-2-3b-610fd024")]
    edit(repo / "overlays" / "prod" / "kustomization.yaml", "  - ../../base\n", "  - ../../base\n  - omerender.lock.yaml\n")
    assert run_cli("render", "--locked", "--cluster-config", CFG, "overlays/prod").code == 0
