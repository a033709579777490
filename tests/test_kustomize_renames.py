"""Renames keep references (issue 41): an overlay with namePrefix above the kustomization that lists the OMERender
transformer renames the rendered objects, and kustomize rewrites references only in fields it knows. The name-
reference rules omerender ships (plugins/kustomize/omerender-namerefs.yaml) cover the kinds it writes; `omerender
build` adds them itself, and after its build every reference of a rendered object resolves or the build fails.
Run with the real kustomize, kubectl kustomize (legacy plugin) and `omerender build`."""
from __future__ import annotations

import copy
import shutil
from pathlib import Path

import pytest
import yaml

from conftest import FIXTURES, load_yaml
from omerender.gitops.namerefs import broken_references, check_references, rules_text
from omerender.errors import OmeError
from test_kustomize import (LEGACY_CONFIG, PLUGINS, install_legacy_plugin, kubectl_binary, kustomize_build, objects,
                            omerender, run)

NAMEREFS = PLUGINS / "kustomize" / "omerender-namerefs.yaml"
TRIGGERS = [{"type": "prometheus", "metadata": {"serverAddress": "http://prom.monitoring:9090", "query": "sum(q)",
                                                "threshold": "5"}}]


def inputs() -> list[dict]:
    """The worked example as a LeaderWorkerSet (leader and one worker), and a second InferenceService scaled by
    KEDA, both in download mode (one claim)."""
    model, runtime, isvc = load_yaml(FIXTURES / "worked-example" / "inputs.yaml")
    engine = runtime["spec"].pop("engineConfig")
    runtime["spec"]["engineConfig"] = {
        "leader": {"runner": engine["runner"], "volumes": engine["volumes"]},
        "worker": {"size": 1, "runner": {**engine["runner"], "name": "worker"}, "volumes": engine["volumes"]}}
    keda_runtime = copy.deepcopy(runtime)
    keda_runtime["metadata"]["name"] = "srt-keda"
    keda_runtime["spec"]["engineConfig"] = engine
    keda = copy.deepcopy(isvc)
    keda["metadata"]["name"] = "keda"
    keda["spec"]["runtime"] = {"name": "srt-keda"}
    keda["spec"]["engine"]["autoscaler"] = {"class": "KEDA", "keda": {"triggers": TRIGGERS}}
    return [model, runtime, isvc, keda_runtime, keda]


def tree(tmp_path: Path, config: dict, namerefs: bool) -> Path:
    """repo/base lists the OMERender config (download mode) and, with ``namerefs``, the rules; repo/overlay puts
    namePrefix team- above it."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    base, overlay = repo / "base", repo / "overlay"
    base.mkdir()
    overlay.mkdir()
    (base / "inputs.yaml").write_text(yaml.safe_dump_all(inputs(), sort_keys=False))
    config = copy.deepcopy(config)
    config["spec"] = {"modelWeights": "download"}
    (base / "omerender.yaml").write_text(yaml.safe_dump(config))
    kustomization = {"resources": ["inputs.yaml"], "transformers": ["omerender.yaml"]}
    if namerefs:
        shutil.copy(NAMEREFS, base / "omerender-namerefs.yaml")
        kustomization["configurations"] = ["omerender-namerefs.yaml"]
    (base / "kustomization.yaml").write_text(yaml.safe_dump(kustomization))
    (overlay / "kustomization.yaml").write_text(yaml.safe_dump({"namePrefix": "team-", "resources": ["../base"]}))
    return overlay


EXEC_CONFIG = yaml.safe_load((PLUGINS / "kustomize" / "omerender-fn.yaml").read_text())
LEGACY = yaml.safe_load(LEGACY_CONFIG.read_text())


def claims_and_targets(objs: list[dict]) -> tuple[set, set, str, str]:
    kinds = {}
    for obj in objs:
        kinds.setdefault(obj["kind"], []).append(obj)
    lws = kinds["LeaderWorkerSet"][0]["spec"]["leaderWorkerTemplate"]
    claims = {v["persistentVolumeClaim"]["claimName"] for role in ("leaderTemplate", "workerTemplate")
              for v in lws[role]["spec"]["volumes"] if "persistentVolumeClaim" in v}
    return (claims, {kinds["ScaledObject"][0]["spec"]["scaleTargetRef"]["name"]},
            kinds["PersistentVolumeClaim"][0]["metadata"]["name"],
            next(d["metadata"]["name"] for d in kinds["Deployment"] if d["metadata"]["name"].endswith("keda-engine")))


def test_without_the_rules_kustomize_leaves_the_leader_worker_claims_and_the_scale_target_behind(tmp_path):
    done = kustomize_build(tree(tmp_path, EXEC_CONFIG, namerefs=False), "--enable-alpha-plugins", "--enable-exec")
    assert done.returncode == 0, done.stderr
    objs = objects(done.stdout)
    claims, targets, claim, deployment = claims_and_targets(objs)
    assert claim.startswith("team-") and deployment == "team-keda-engine"
    assert claims == {claim.removeprefix("team-")} and targets == {"keda-engine"}
    broken = broken_references(objs)
    assert [b.split(": ", 1)[1].split(" names ")[0] for b in broken] == [
        "spec.scaleTargetRef.name",
        "spec.leaderWorkerTemplate.leaderTemplate.spec.volumes[1].persistentVolumeClaim.claimName",
        "spec.leaderWorkerTemplate.workerTemplate.spec.volumes[1].persistentVolumeClaim.claimName"]
    with pytest.raises(OmeError) as err:
        check_references(objs)
    assert err.value.text.startswith("a rename broke references: ScaledObject llama-demo/team-"
                                     "scaledobject-keda-engine: spec.scaleTargetRef.name names Deployment "
                                     "llama-demo/keda-engine, which the build's output does not hold; ")
    assert "list plugins/kustomize/omerender-namerefs.yaml under configurations:" in err.value.text


def test_the_rules_listed_beside_the_transformer_carry_the_rename_into_every_reference(tmp_path):
    done = kustomize_build(tree(tmp_path, EXEC_CONFIG, namerefs=True), "--enable-alpha-plugins", "--enable-exec")
    assert done.returncode == 0, done.stderr
    objs = objects(done.stdout)
    claims, targets, claim, deployment = claims_and_targets(objs)
    assert claims == {claim} and targets == {deployment}
    assert broken_references(objs) == []


def test_kubectl_kustomize_with_the_legacy_plugin_takes_the_rules_too(tmp_path):
    home = install_legacy_plugin(tmp_path)
    done = run([kubectl_binary(), "kustomize", "--enable-alpha-plugins", str(tree(tmp_path, LEGACY, namerefs=True))],
               KUSTOMIZE_PLUGIN_HOME=str(home))
    assert done.returncode == 0, done.stderr
    claims, targets, claim, deployment = claims_and_targets(objects(done.stdout))
    assert claims == {claim} and targets == {deployment}


def test_omerender_build_adds_the_rules_itself(tmp_path):
    overlay = tree(tmp_path, EXEC_CONFIG, namerefs=False)
    done = omerender("build", str(overlay))
    assert done.returncode == 0, done.stderr
    objs = objects(done.stdout)
    claims, targets, claim, deployment = claims_and_targets(objs)
    assert claims == {claim} and targets == {deployment} and claim.startswith("team-")
    assert broken_references(objs) == []
    assert not (overlay.parent / "base" / "omerender-namerefs.staged.yaml").exists()   # only in the staged copy
    # the same with the rules listed by the user: kustomize merges the two copies
    listed = tree(tmp_path / "listed", EXEC_CONFIG, namerefs=True)
    again = omerender("build", str(listed))
    assert again.returncode == 0, again.stderr
    assert objects(again.stdout) == objs


def test_a_reference_no_rule_covers_fails_the_build_naming_it(tmp_path):
    overlay = tree(tmp_path, EXEC_CONFIG, namerefs=False)
    # a patch in the overlay points a worker's claim at a weights claim the output does not hold
    (overlay / "kustomization.yaml").write_text(yaml.safe_dump({
        "resources": ["../base"],
        "patches": [{"target": {"kind": "LeaderWorkerSet"},
                     "patch": yaml.safe_dump([{"op": "replace", "path": "/spec/leaderWorkerTemplate/workerTemplate/"
                                               "spec/volumes/1/persistentVolumeClaim/claimName",
                                               "value": "old-weights-0123456789"}])}]}))
    done = omerender("build", str(overlay))
    assert done.returncode == 1 and done.stdout == "", done.stderr
    assert ("error: a rename broke references: LeaderWorkerSet llama-demo/lws-llama-3-2-3b-"
            "instruct-engine: spec.leaderWorkerTemplate.workerTemplate.spec.volumes[1].persistentVolumeClaim."
            "claimName names PersistentVolumeClaim llama-demo/old-weights-0123456789, which the build's output does "
            "not hold") in done.stderr


def test_the_users_copy_of_the_rules_is_the_one_omerender_build_applies():
    assert NAMEREFS.read_text() == rules_text()


def test_every_rule_names_a_kind_and_path_omerender_writes():
    rules = yaml.safe_load(rules_text())["nameReference"]
    referrers = {(spec["group"], spec["kind"]) for rule in rules for spec in rule["fieldSpecs"]}
    assert referrers == {("leaderworkerset.x-k8s.io", "LeaderWorkerSet"), ("keda.sh", "ScaledObject"),
                         ("keda.sh", "TriggerAuthentication"), ("gateway.networking.k8s.io", "HTTPRoute"),
                         ("gateway.envoyproxy.io", "BackendTrafficPolicy")}


def test_a_directory_named_as_the_staged_rules_is_an_error_not_a_traceback(tmp_path):
    overlay = tree(tmp_path, EXEC_CONFIG, namerefs=False)
    (overlay.parent / "base" / "omerender-namerefs.staged.yaml").mkdir()
    (overlay.parent / "base" / "omerender-namerefs.staged.yaml" / "x.yaml").write_text("a: 1\n")
    done = omerender("build", str(overlay))
    assert done.returncode == 1 and done.stdout == "", done.stderr
    assert done.stderr.splitlines()[-1] == (
        "error: omerender-namerefs.staged.yaml is a name omerender build writes beside a kustomization that lists "
        "OMERender (the name-reference rules); rename the directory that has it")


def test_gateway_routes_keep_their_services_and_the_traffic_policy_its_route(tmp_path):
    """The Gateway API example (HTTPRoutes, a BackendTrafficPolicy) under namePrefix, through the real kustomize with
    the rules, and through omerender build without them."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    base, overlay = repo / "base", repo / "overlay"
    base.mkdir()
    overlay.mkdir()
    shutil.copy(FIXTURES / "gateway-api" / "inputs.yaml", base / "inputs.yaml")
    (base / "omerender.yaml").write_text(yaml.safe_dump(EXEC_CONFIG))
    shutil.copy(NAMEREFS, base / "omerender-namerefs.yaml")
    (overlay / "kustomization.yaml").write_text(yaml.safe_dump({"namePrefix": "team-", "resources": ["../base"]}))
    for listed in (True, False):
        kustomization = {"resources": ["inputs.yaml"], "transformers": ["omerender.yaml"]}
        if listed:
            kustomization["configurations"] = ["omerender-namerefs.yaml"]
        (base / "kustomization.yaml").write_text(yaml.safe_dump(kustomization))
        done = (kustomize_build(overlay, "--enable-alpha-plugins", "--enable-exec") if listed
                else omerender("build", str(overlay)))
        assert done.returncode == 0, done.stderr
        objs = objects(done.stdout)
        services = {o["metadata"]["name"] for o in objs if o["kind"] == "Service"}
        routes = {o["metadata"]["name"] for o in objs if o["kind"] == "HTTPRoute"}
        backends = {b["name"] for o in objs if o["kind"] == "HTTPRoute" for r in o["spec"]["rules"]
                    for b in r.get("backendRefs") or []}
        targets = {t["name"] for o in objs if o["kind"] == "BackendTrafficPolicy" for t in o["spec"]["targetRefs"]}
        assert backends and backends <= services and all(b.startswith("team-") for b in backends), backends
        assert targets and targets <= routes, (targets, routes)
        assert broken_references(objs) == []
    # without the rules, plain kustomize leaves both behind, and the check names them
    (base / "kustomization.yaml").write_text(yaml.safe_dump({"resources": ["inputs.yaml"],
                                                             "transformers": ["omerender.yaml"]}))
    done = kustomize_build(overlay, "--enable-alpha-plugins", "--enable-exec")
    assert done.returncode == 0, done.stderr
    assert [b.split(": ", 1)[1].split(" names ")[0] for b in broken_references(objects(done.stdout))] == [
        "spec.targetRefs[0].name", "spec.rules[0].backendRefs[0].name", "spec.rules[0].backendRefs[0].name",
        "spec.rules[0].backendRefs[0].name"]
