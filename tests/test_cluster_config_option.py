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

from conftest import CHART_DEFAULTS_CODED, FIXTURES, run_cli
from test_overlays import edit, git, write

CFG = "cfg/inferenceservice-config.yaml"
ISVC = "llama-3-2-3b-instruct"
NS = "llama-prod"
PROD = ("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: llama-prod\nresources:\n"
        "  - ../../base\n")


OLDER = "which OME v1.3's Helm chart writes"  # the info of a ConfigMap lacking chart keys


def gateway_configmap() -> str:
    """OME's ConfigMap of the Gateway API worked example (docs/how-to/cluster-config-and-ingress.md)."""
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
    assert (f"  ~ gateway.networking.k8s.io/v1 HTTPRoute {ISVC} (the InferenceService's route)\n"
            "      spec.hostnames[0]: llm.example.com -> llm.prod.example.net\n") in run.stdout
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
    plain = tmp_path / "plain"
    assert run_cli("render", "overlays/prod", "--output-dir", str(plain)).code == 0
    stale = run_cli("check", "--cluster-config", CFG, "overlays/prod", str(plain))
    assert stale.code == 1
    assert stale.lines[-1] == (f"error: {plain} is out of date with overlays/prod; run: omerender render "
                               f"overlays/prod --cluster-config {CFG} --output-dir {plain}")


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
    assert explain.stderr.splitlines()[-1] == "Selected: sglang-llama-3-2-3b (Cluster): pinned by spec.runtime.name"
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
    assert [line for line in config.stderr.splitlines() if OLDER not in line] == [
        "warning: base/config.yaml: ConfigMap llama-prod/inferenceservice-config: OME reads inferenceservice-config "
        "from namespace ome, not llama-prod; omerender uses this one as the cluster configuration (the value comes "
        "through the overlay: kustomize changed what this file says here)",
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
    prod = repo / "overlays" / "prod"
    (prod / "omerender.lock.yaml").rename(prod / "pins.yaml")
    edit(prod / "kustomization.yaml", "  - ../../base\n", "  - ../../base\n  - pins.yaml\n")
    assert run_cli("render", "--locked", "--cluster-config", CFG, "overlays/prod").code == 0
    text = (repo / "base" / "runtime.yaml").read_text()
    (repo / "base" / "runtime.yaml").write_text(text.replace("sglang:v0.5.5", "sglang:v0.5.6", 1))
    run = run_cli("lock", "update", "--advance", f"{NS}/{ISVC}", "--cluster-config", CFG, "overlays/prod")
    assert run.code == 0, run.stderr
    pinned = yaml.safe_load((prod / "pins.yaml").read_text())["inferenceServices"][0]["pinnedRevision"]
    assert pinned != "cr-sglang-llama-3-2-3b-610fd024" and not (prod / "omerender.lock.yaml").exists()


# ---------------------------------------------------------------- a plain directory, and diff's two kinds of side


def test_on_a_plain_directory_the_file_is_read_as_one_more_path(repo):
    named = run_cli("render", "--cluster-config", CFG, "base")
    assert named.code == 0, named.stderr
    assert named.stdout == run_cli("render", "base", CFG).stdout
    assert hostnames(named.stdout) == {"llm.prod.example.net", "llm.example.org"}
    inside = repo / "base" / "cluster.yaml"
    shutil.copy(repo / CFG, inside)  # read by the walk already: read once, not twice
    assert run_cli("render", "--cluster-config", "base/cluster.yaml", "base").stdout == named.stdout


def test_of_two_directories_the_same_file_serves_both_sides(repo):
    """head adds an InferenceService: only its routes are added (base's are on both sides, not added)."""
    shutil.copytree(repo / "base", repo / "head")
    isvc = (repo / "base" / "isvc.yaml").read_text().replace(f"name: {ISVC}\n", "name: second\n", 1)
    write(repo / "head" / "second.yaml", isvc.replace("# No namespace", "# Another").replace(
        "metadata:\n", "metadata:\n  namespace: default\n", 1))
    run = run_cli("diff", "-o", "json", "--cluster-config", CFG, "base", "head")
    assert run.code == 0, run.stderr
    added = [(i["name"], o["kind"], o["change"]) for i in json.loads(run.stdout)["inferenceServices"]
             for o in i["objects"] if o["kind"] == "HTTPRoute"]
    assert added == [("second", "HTTPRoute", "added"), ("second", "HTTPRoute", "added")]


def test_a_revision_without_the_file_is_an_error_naming_it(repo):
    os.remove(repo / CFG)
    git(repo, "commit", "-qam", "no cfg")
    run = run_cli("diff", "--cluster-config", CFG, "HEAD~1", "HEAD", "--", "overlays/prod")
    assert (run.code, run.stdout) == (2, "")
    assert run.lines == [f"error: head: --cluster-config {CFG}: revision HEAD holds no file {CFG} (a symbolic link "
                         f"in a revision is never followed)"]


def test_a_revision_holding_a_link_or_a_directory_there_is_an_error(repo, tmp_path):
    """git stores a link as a link: a revision's read never follows one (it may lead anywhere on this machine)."""
    (repo / "cm.yaml").symlink_to(CFG)
    (repo / "cfgdir").mkdir()
    shutil.copy(repo / CFG, repo / "cfgdir" / "cm.yaml")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "link and directory")
    run = run_cli("diff", "--cluster-config", "cm.yaml", "HEAD~1", "HEAD", "--", "base")
    assert (run.code, run.stdout, run.lines) == (2, "", [
        f"error: {side}: --cluster-config cm.yaml: revision {rev} holds no file cm.yaml (a symbolic link in a revision "
        f"is never followed)" for side, rev in (("base", "HEAD~1"), ("head", "HEAD"))])
    run = run_cli("diff", "--cluster-config", "cfgdir", "HEAD", "HEAD", "--", "overlays/prod")
    assert (run.code, run.stdout, run.lines) == (2, "", [
        f"error: {side}: --cluster-config cfgdir: in revision HEAD, cfgdir is a directory; name the file that holds "
        f"the ConfigMap inferenceservice-config" for side in ("base", "head")])


# ---------------------------------------------------------------- hostile paths and contents

CM_MISSING = ("error: {file}: --cluster-config names this file, which holds no ConfigMap inferenceservice-config "
              "(apiVersion v1); name the file `kubectl get configmap inferenceservice-config -n ome -o yaml` wrote")


@pytest.mark.parametrize("target", ["base", "overlays/prod"])
def test_a_path_that_is_no_regular_file_is_refused(repo, target):
    os.mkfifo(repo / "cfg" / "fifo")
    for value, problem in (("cfg/fifo", "is not a regular file (a FIFO, socket or device is never read)"),
                           ("cfg", "is a directory; name the file that holds the ConfigMap inferenceservice-config"),
                           ("cfg/", "is a directory; name the file that holds the ConfigMap inferenceservice-config"),
                           (f"{CFG}/", "no such file"), ("cfg/nope.yaml", "no such file")):
        for command in (["render"], ["config"], ["explain", "--isvc", ISVC, "-n", NS], ["tree", "sglang-llama-3-2-3b"]):
            run = run_cli(*command, "--cluster-config", value, target)
            assert (run.code, run.stdout, run.lines) == (1, "", [f'error: --cluster-config "{value}": {problem}']), \
                (command, value)


def test_a_link_leading_out_is_refused(repo, tmp_path):
    (tmp_path / "outside.yaml").write_text(gateway_configmap())
    (repo / "cfg" / "link.yaml").symlink_to(tmp_path / "outside.yaml")
    for target in ("base", "overlays/prod"):
        run = run_cli("render", "--cluster-config", "cfg/link.yaml", target)
        assert (run.code, run.stdout, run.lines) == (1, "", [
            f"error: cfg/link.yaml: symbolic link to {tmp_path}/outside.yaml, outside {repo}/cfg; omerender reads "
            f"only the files it is given"])


def test_an_overlay_reads_no_file_outside_its_work_tree(repo, tmp_path):
    """An overlay's build reads nothing outside the Git work tree holding it, and neither does its cluster
    configuration (a plain directory reads what it is given, as render reads any PATH)."""
    (tmp_path / "outside.yaml").write_text(gateway_configmap())
    refused = (f'--cluster-config "../outside.yaml" leads to {tmp_path}/outside.yaml, outside {repo}, what the build '
               f"of {{}}overlays/prod may read; omerender reads only the files it is given")
    for command in (["render"], ["lock", "update"], ["config"], ["tree", "x"]):
        run = run_cli(*command, "--cluster-config", "../outside.yaml", "overlays/prod")
        assert (run.code, run.stdout, run.lines) == (1, "", ["error: " + refused.format("")]), command
    run = run_cli("diff", "--cluster-config", "../outside.yaml", ".", ".", "overlays/prod")
    assert (run.code, run.stdout, run.lines) == (2, "", [f"error: {side}: " + refused.format("./")
                                                         for side in ("base", "head")])
    build = run_cli("build", "--cluster-config", "../outside.yaml", "overlays/prod")
    assert (build.code, build.lines) == (1, [
        f'error: --cluster-config "../outside.yaml" leads to {tmp_path}/outside.yaml, outside {repo}, what the build '
        f"may read (--root); omerender reads only the files it is given"])
    assert run_cli("render", "--cluster-config", "../outside.yaml", "base").code == 0


def test_a_file_holding_no_configmap_is_an_error(repo):
    for target in ("base", "overlays/prod"):
        run = run_cli("render", "--cluster-config", "base/isvc.yaml", target)
        assert (run.code, run.stdout, run.lines) == (1, "", [CM_MISSING.format(file="base/isvc.yaml")]), target


def test_a_file_holding_two_configmaps_is_an_error(repo):
    write(repo / "cfg" / "two.yaml", gateway_configmap() + "---\n" + gateway_configmap())
    line = len(gateway_configmap().splitlines()) + 1 + 6  # after ---, metadata.name is line 6 of the document
    for target in ("base", "overlays/prod"):
        run = run_cli("render", "--cluster-config", "cfg/two.yaml", target)
        assert (run.code, run.stdout, run.placed_lines) == (1, "", [
            f"error: cfg/two.yaml:{line}:3: ConfigMap ome/inferenceservice-config: --cluster-config names this file, "
            f"which holds 2 ConfigMaps inferenceservice-config; OME reads one: keep one"]), target


def test_a_configmap_among_the_inputs_and_the_option_is_an_error_naming_both(repo):
    shutil.copy(repo / CFG, repo / "base" / "cluster.yaml")
    run = run_cli("render", "--cluster-config", CFG, "base")
    assert (run.code, run.stdout, run.placed_lines) == (1, "", [
        "error: base/cluster.yaml:6:3: ConfigMap ome/inferenceservice-config: this ConfigMap is among the inputs, and "
        f"--cluster-config names another ({CFG}): OME reads one; give one of them (drop --cluster-config, or this "
        "file from the inputs)"])
    edit(repo / "base" / "kustomization.yaml", "  - isvc.yaml\n", "  - isvc.yaml\n  - cluster.yaml\n")
    run = run_cli("render", "--cluster-config", CFG, "overlays/prod")
    assert (run.code, run.stdout, run.lines) == (1, "", [
        "error: base/cluster.yaml: ConfigMap llama-prod/inferenceservice-config: this ConfigMap is among the inputs, "
        f"and --cluster-config names another ({CFG}): OME reads one; give one of them (drop --cluster-config, or "
        "this file from the inputs)"])


def test_the_argo_cd_parameter_and_a_configmap_in_the_app_are_an_error_naming_both(tmp_path):
    """CLUSTER_CONFIG means what --cluster-config means: given beside a ConfigMap of the app, it is an error."""
    from test_argocd import CLUSTER_CM, generate, repo_copy
    work = repo_copy(tmp_path)
    write(work / "cluster" / "config.yaml", CLUSTER_CM)
    write(work / "apps" / "plain" / "own.yaml", CLUSTER_CM)
    done = generate(work, "apps/plain", env={"CLUSTER_CONFIG": "../../cluster/config.yaml"})
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == ("error: ./own.yaml:3:12: ConfigMap ome/inferenceservice-config: this ConfigMap is among the "
                           "inputs, and CLUSTER_CONFIG names another (../../cluster/config.yaml): OME reads one; give "
                           "one of them (drop CLUSTER_CONFIG, or this file from the inputs)\n")


def test_a_newline_in_the_path_cannot_forge_an_error_line(repo):
    for target in ("base", "overlays/prod"):
        run = run_cli("config", "--cluster-config", "a\nerror: forged", target)
        assert (run.code, run.stdout, run.lines) == (1, "", ['error: --cluster-config "a\\nerror: forged": no such file'])


# ---------------------------------------------------------------- issue 40: no silent default


def test_without_a_configmap_a_render_says_once_that_the_charts_defaults_apply(repo):
    """Once per render, first, with its code; not with the ConfigMap among the inputs or named, nor without an
    InferenceService (nothing the ConfigMap decides is rendered)."""
    run = run_cli("render", "base")
    assert run.code == 0, run.stderr
    assert run.printed.splitlines().count(CHART_DEFAULTS_CODED) == 1
    assert run.printed.splitlines()[0] == CHART_DEFAULTS_CODED
    assert not hostnames(run.stdout)  # the chart turns ingress creation off: the info says so
    for given in (("--cluster-config", CFG, "base"), ("base", CFG), ("--cluster-config", CFG, "overlays/prod")):
        named = run_cli("render", *given)
        assert named.code == 0, named.stderr
        assert "chart-defaults" not in named.printed
    no_service = run_cli("render", "base/model.yaml", "base/runtime.yaml")
    assert no_service.code == 0 and "chart-defaults" not in no_service.printed
    overlay = run_cli("render", "overlays/prod")
    assert overlay.printed.splitlines().count(CHART_DEFAULTS_CODED) == 1


def test_the_option_naming_a_file_among_the_inputs_is_one_configmap_not_an_error(repo):
    """docs: a --cluster-config beside a ConfigMap among the inputs fails only when they are two files."""
    shutil.copy(repo / CFG, repo / "base" / "cluster.yaml")
    run = run_cli("render", "--cluster-config", "base/cluster.yaml", *(f"base/{n}.yaml" for n in (
        "cluster", "isvc", "model", "runtime")))
    assert run.code == 0, run.stderr
    assert hostnames(run.stdout) == {"llm.prod.example.net", "llm.example.org"}


OLDER_INGRESS = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: inferenceservice-config, namespace: ome}
data:
  ingress: |-
    {
        "ingressGateway" : "knative-serving/knative-ingress-gateway",
        "knativeLocalGatewayService" : "knative-local-gateway.istio-system.svc.cluster.local",
        "localGateway" : "knative-serving/knative-local-gateway",
        "localGatewayService" : "knative-local-gateway.istio-system.svc.cluster.local",
        "ingressService" : "istio-ingressgateway.istio-system.svc.cluster.local",
        "ingressDomain"  : "svc.cluster.local",
        "disableIngressCreation": true
    }
  deploy: |-
    {"defaultDeploymentMode": "RawDeployment"}
"""


def test_older_omes_gateway_keys_pass_strict_where_the_older_configmap_info_explains_them(repo):
    """OME's own config/ ConfigMap carries KServe's local gateway keys of older releases: the older-ome-configmap
    info names them, and --strict passes; in a ConfigMap with every key of v1.3's chart they are still warned
    about."""
    write(repo / "cfg" / "older.yaml", OLDER_INGRESS)
    run = run_cli("render", "--strict", "--allow", "auto-selected-runtime", "--cluster-config", "cfg/older.yaml", "base")
    assert run.code == 0, run.stderr
    assert "[unknown-field]" not in run.printed
    (info,) = [line for line in run.lines if OLDER in line]
    assert info.endswith("; it also sets ingress.knativeLocalGatewayService, ingress.localGateway, "
                         "ingress.localGatewayService, which older releases read and OME v1.3 ignores")
    chart = (FIXTURES.parent / "omerender" / "ome" / "cluster" / "chart_defaults.yaml").read_text()
    write(repo / "cfg" / "current.yaml", chart.replace('"ingressService"', '"localGateway": "x/y", "ingressService"'))
    run = run_cli("render", "--strict", "--allow", "auto-selected-runtime", "--cluster-config", "cfg/current.yaml",
                  "base")
    assert OLDER not in run.printed  # a ConfigMap the info does not explain keeps the warning
    assert run.code == 1 and "unknown field localGateway is ignored" in run.printed
