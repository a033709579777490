"""Hostile input on the paths added with the cluster ConfigMap, ingress, PodMonitors and AutoscalerPolicies
(benchmarks/adversarial.py has the 1 MB shapes; benchmarks/NOTES.md their results). Each limit holds across the
whole render: what InferenceServices copy from settings they share is charged to the render's copy budget, a
template that fails still spends the actions it ran, and no object prints more than 100 warnings."""
from __future__ import annotations

import json
import os

import yaml

from conftest import render_objects, run_cli
from omerender.errors import Report, strict_error
from omerender.ome.monitoring.podmonitor import extra_endpoints
from omerender.yamlio import limits
from omerender.yamlio.data import count_values

CM_REF = "<stdin>: ConfigMap ome/inferenceservice-config"
INGRESS = {"ingressGateway": "istio-system/ingress-gateway", "ingressService": "istio-ingressgateway.istio-system.svc",
           "disableIngressCreation": False, "ingressDomain": "example.com"}
KEY = "prometheus.ome.io/extra-endpoints"


def configmap(**ingress) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "inferenceservice-config", "namespace": "ome"},
            "data": {"ingress": json.dumps({**INGRESS, **ingress})}}


def fleet(F, count: int) -> list[dict]:
    """The worked example's model and runtime, and ``count`` copies of its InferenceService, s0, s1, ..."""
    isvcs = []
    for i in range(count):
        isvc = json.loads(json.dumps(F["isvc"]))
        isvc["metadata"]["name"] = f"s{i}"
        isvcs.append(isvc)
    return [F["model"], F["runtime"], *isvcs]


def only_the_floor(monkeypatch, free: int) -> None:
    monkeypatch.setattr(limits, "COPIES_PER_INPUT_VALUE", 0)
    monkeypatch.setattr(limits, "COPIED_VALUES_FREE", free)


def copy_error(isvc: str, limit: int, this: int, source: str, fix: str) -> str:
    return (f"error: <stdin>: InferenceService llama-demo/{isvc}: the InferenceServices rendered so far copy more than "
            f"{limit:,} values of runtime specs, policies and cluster settings in all (this one {this:,}, from "
            f"{source}); the limit is 0 times the values of the input, at least {limit:,} and at most 20,000,000; "
            f"render fewer InferenceServices at a time, or {fix}")


def test_the_gateways_every_route_copies_count_against_the_copy_budget(F, monkeypatch):
    # Three Gateways with short names: a parentRef is charged 5 (the map and its 4 strings), a hostname 1; the
    # worked example's engine and router make 3 routes: 3 x 3 x 6 = 54 per InferenceService, after its runtime;
    # then its BackendTrafficPolicy copies the one default hash header (1).
    gateways = [{"omeIngressGateway": f"gw/a{i}", "ingressDomain": "example.org"} for i in range(2)]
    cm = configmap(enableGatewayAPI=True, omeIngressGateway="gw/p", additionalIngressGateways=gateways)
    runtime = count_values(F["runtime"]["spec"])
    only_the_floor(monkeypatch, 3 * runtime + 2 * 55)
    run = render_objects([cm, *fleet(F, 3)])
    assert (run.code, run.stdout) == (1, "")
    assert run.lines == [copy_error("s2", 3 * runtime + 2 * 55, 54, f"the Gateways of {CM_REF}",
                                    "list fewer or shorter Gateways")]


def test_the_hash_headers_every_backend_traffic_policy_copies_count_against_the_copy_budget(F, monkeypatch):
    headers = [f"x-h{i}" for i in range(40)]  # 40 values per InferenceService, after its runtime and 18 of routes
    cm = configmap(enableGatewayAPI=True, omeIngressGateway="gw/p", consistentHashHeaders=headers)
    runtime = count_values(F["runtime"]["spec"])
    only_the_floor(monkeypatch, 3 * runtime + 2 * 58 + 18)
    run = render_objects([cm, *fleet(F, 3)])
    assert (run.code, run.stdout) == (1, "")
    assert run.lines == [copy_error("s2", 3 * runtime + 2 * 58 + 18, 40, f"the consistentHashHeaders of {CM_REF}",
                                    "hash fewer headers")]


def test_a_long_accelerator_resources_list_is_named_by_its_first_three(F):
    names = [f"example.com/gpu-{i}" for i in range(5000)]
    cm = {**configmap(), "data": {"acceleratorResources": json.dumps(names)}}
    F["runtime"]["spec"]["engineConfig"]["runner"]["args"] = ["--tp", "$(PARALLELISM_SIZE)"]
    run = render_objects([cm, *fleet(F, 1)])
    assert run.code == 0, run.stderr
    warning, = [line for line in run.lines if "PARALLELISM_SIZE" in line]
    assert warning.endswith("$(PARALLELISM_SIZE) is referenced but PARALLELISM_SIZE is not set (no "
                            "example.com/gpu-0, example.com/gpu-1, example.com/gpu-2 or 4,997 more acceleratorResources "
                            "on the runner)")


def test_the_gpu_count_is_the_first_accelerator_resource_the_runner_has(F):
    # OME's order is the ConfigMap's, not the runner's: b is listed before nvidia.com/gpu.
    names = [f"example.com/gpu-{i}" for i in range(3000)] + ["example.com/b", "nvidia.com/gpu"]
    cm = {**configmap(), "data": {"acceleratorResources": json.dumps(names)}}
    runner = F["runtime"]["spec"]["engineConfig"]["runner"]
    runner["resources"] = {"limits": {"nvidia.com/gpu": 4}, "requests": {"nvidia.com/gpu": 4, "example.com/b": 2}}
    run = render_objects([cm, *fleet(F, 1)])
    assert run.code == 0, run.stderr
    env = run.find("Deployment", "s0-engine")["spec"]["template"]["spec"]["containers"][0]["env"]
    assert {"name": "PARALLELISM_SIZE", "value": "2"} in env


def test_extra_endpoints_of_a_shared_runtime_count_against_the_copy_budget(F, monkeypatch):
    # Each entry of the annotation is a podMetricsEndpoints entry of 4 values, charged before it is parsed.
    F["runtime"]["spec"]["engineConfig"]["annotations"] = {KEY: "http1:/a,http1:/b"}
    runtime = count_values(F["runtime"]["spec"])
    only_the_floor(monkeypatch, 3 * runtime + 2 * 8)
    run = render_objects(fleet(F, 3), "--pod-monitors")
    assert (run.code, run.stdout) == (1, "")
    assert run.lines == [copy_error("s2", 3 * runtime + 2 * 8, 8, f"the annotation {KEY}",
                                    "give fewer extra endpoints")]


def test_a_failing_domain_template_spends_its_actions_and_the_render_stops_at_the_budget(F, monkeypatch):
    # 10,001 actions: each InferenceService runs 10,001 before the per-value limit refuses the template; they count,
    # so the third finds the render's 25,000 spent and the render stops there, not at the 2,000th InferenceService.
    monkeypatch.setattr(limits, "MAX_PLACEHOLDER_ACTIONS", 25_000)
    cm = configmap(ingressClassName="nginx", domainTemplate="{{/**/}}" * 10_001)
    run = render_objects([cm, *fleet(F, 6)])
    assert (run.code, run.stdout) == (1, "")
    where = f"ingress.domainTemplate in {CM_REF}"
    assert run.lines == [
        *(f"error: <stdin>: InferenceService llama-demo/s{i}: invalid placeholder in {where}: more than 10000 actions "
          f"in one value" for i in range(2)),
        f"error: <stdin>: InferenceService llama-demo/s2: placeholders in {where} take the actions run across the "
        f"render past 25,000 (an action prints something or nothing, {{{{\"\"}}}} included); use fewer placeholders, "
        f"or render fewer InferenceServices at a time"]


def test_unknown_ingress_annotations_past_three_are_one_warning_at_the_first_of_them(F):
    F["isvc"]["metadata"]["annotations"] = {f"ome.io/ingress-x{i}": "" for i in range(6)}
    run = render_objects(fleet(F, 1))
    assert run.code == 0, run.stderr
    summary = ("warning: <stdin>:{}InferenceService llama-demo/s0: annotations ome.io/ingress-x3, ome.io/ingress-x4, "
               "ome.io/ingress-x5 are not ones OME reads either, and have no effect")
    assert run.lines[4:] == [summary.format(" ")]
    text = yaml.safe_dump_all(fleet(F, 1), sort_keys=False).splitlines()
    keys = [(n + 1, line.index("ome.io") + 1) for n, line in enumerate(text) if line.strip().startswith("ome.io/")]
    # the key of x0, x1, x2, then x3 (the first the last line names)
    assert [line.split(": InferenceService")[0] for line in run.placed_lines[1:]] == [
        f"warning: <stdin>:{line}:{column}" for line, column in keys[:4]]


def test_malformed_extra_endpoints_are_one_warning():
    report = Report()
    assert extra_endpoints({KEY: "a, b,c,http:/ok,d,e"}, report) == [{"port": "http", "path": "/ok",
                                                                      "interval": "10s"}]
    assert [m.text for m in report.messages] == [
        f'{KEY} entries "a", "b", "c" and 2 more are not "<port-name>:/<path>"; OME skips them']


def test_an_object_prints_at_most_100_warnings_then_one_line_counting_the_rest():
    report = Report(file="f.yaml")
    for i in range(150):
        report.warn(f"w{i}", code="removed-field")
    report.info("i0", code="pinned")
    lines = [m.line() for m in report.messages]
    assert lines[:100] == [f"warning: f.yaml: w{i} [removed-field]" for i in range(100)]
    assert lines[100:] == ["warning: f.yaml: 50 more warnings about this object are not shown: omerender prints at "
                           "most 100 per object [more-messages]", "info: f.yaml: i0 [pinned]"]
    outer = Report()
    outer.extend(report.messages)  # the render's report gathers each object's: the counting line passes through
    assert [m.line() for m in outer.messages] == lines
    assert strict_error(outer.messages, "--strict").line() == (
        "error: 150 warnings, and --strict makes every warning fail the run")  # the hidden ones count too


def test_config_escapes_control_characters_in_its_table(tmp_path):
    cm = configmap(ingressGateway="istio-system/a\u0000\u001b[31mb")
    path = tmp_path / "cm.yaml"
    path.write_text(json.dumps(cm))
    run = run_cli("config", str(path))
    assert run.code == 0, run.stderr
    row, = [line for line in run.stdout.splitlines() if line.startswith("ingress.ingressGateway ")]
    assert row.split()[1] == "istio-system/a\\x00\\x1b[31mb"
    assert "\x00" not in run.stdout and "\x1b" not in run.stdout


def test_config_refuses_a_configmap_value_that_is_not_a_string(tmp_path):
    path = tmp_path / "cm.yaml"
    path.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: inferenceservice-config, namespace: ome}\n"
                    "data:\n  deploy: {defaultDeploymentMode: RawDeployment}\n")
    run = run_cli("config", str(path))
    assert (run.code, run.stdout) == (1, "")
    assert run.lines == [f'error: {path}: ConfigMap ome/inferenceservice-config: data.deploy: Invalid value: "object": '
                         "a ConfigMap's data values are strings; write the JSON as a block (`deploy: |`)"]


def test_config_reads_nan_as_go_does(tmp_path):
    path = tmp_path / "cm.yaml"
    path.write_text(json.dumps({**configmap(), "data": {"deploy": '{"terminationGracePeriodSeconds": NaN}'}}))
    run = run_cli("config", str(path))
    assert (run.code, run.stdout) == (1, "")
    assert run.lines == [f"error: {path}: ConfigMap ome/inferenceservice-config: data.deploy: unable to parse deploy "
                         f"config json: invalid character 'N' looking for beginning of value"]
    assert os.path.exists(path)


def test_config_pads_its_columns_to_80_characters_at_most(tmp_path):
    # One 100 kB value: only its own line is long; padding every row to it would print it once per row.
    path = tmp_path / "cm.yaml"
    path.write_text(json.dumps(configmap(ingressService="s" * 100_000)))
    run = run_cli("config", str(path))
    assert run.code == 0, run.stderr
    long = [line for line in run.stdout.splitlines() if len(line) > 250]
    assert len(long) == 1 and long[0].startswith("ingress.ingressService ") and "s" * 100_000 in long[0]
