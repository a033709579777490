"""``omerender validate`` (issue 43): objects written here by hand, apart from the tests' renders, each breaking one
rule the API server holds (a core schema field, a CRD enum, a CEL rule of HTTPRoute and of BackendTrafficPolicy, a
LeaderWorkerSet size, a KEDA trigger), each get exactly their error; the valid twin of each passes; OME's samples
rendered in both weights modes validate clean; hostile input is bounded."""
from __future__ import annotations

import copy
import json
import os
import time

import pytest
import yaml

from conftest import run_cli

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: chat-engine
  namespace: serving
spec:
  replicas: 2
  selector:
    matchLabels: {app: chat}
  template:
    metadata:
      labels: {app: chat}
    spec:
      containers:
        - name: engine
          image: registry.example/sglang:v0.5
          ports:
            - containerPort: 8080
"""
HTTPROUTE = """apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: chat
  namespace: serving
spec:
  parentRefs:
    - {group: gateway.networking.k8s.io, kind: Gateway, name: public, namespace: gateways}
  hostnames: [chat.example.com]
  rules:
    - backendRefs:
        - {group: "", kind: Service, name: chat-engine, port: 8080, weight: 1}
      matches:
        - path: {type: PathPrefix, value: /v1}
"""
POLICY = """apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata:
  name: chat
  namespace: serving
spec:
  targetRefs:
    - {group: gateway.networking.k8s.io, kind: HTTPRoute, name: chat}
  loadBalancer:
    type: ConsistentHash
    consistentHash:
      type: Headers
      headers:
        - name: x-session-id
"""
LWS = """apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: big-engine
  namespace: serving
spec:
  replicas: 1
  leaderWorkerTemplate:
    size: 2
    workerTemplate:
      metadata:
        labels: {app: big}
      spec:
        containers:
          - name: worker
            image: registry.example/sglang:v0.5
"""
SCALED = """apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: chat-engine
  namespace: serving
spec:
  scaleTargetRef: {name: chat-engine}
  minReplicaCount: 1
  maxReplicaCount: 4
  triggers:
    - type: prometheus
      metadata: {serverAddress: "http://prometheus.monitoring:9090", query: "sum(q)", threshold: "5"}
"""

# (the valid object, how to break it, the one error line's text after "file:line:column: Kind ns/name: ")
CASES = {
    "core schema field": (DEPLOYMENT, ("          image: registry.example/sglang:v0.5\n",
                                       "          image: registry.example/sglang:v0.5\n          imagePullPolcy: Always\n"),
                          'spec.template.spec.containers[0].imagePullPolcy: unknown field "imagePullPolcy" in '
                          "Kubernetes 1.37"),
    "CRD enum": (HTTPROUTE, ("{type: PathPrefix, value: /v1}", "{type: Prefix, value: /v1}"),
                 'spec.rules[0].matches[0].path.type: Unsupported value: "Prefix": supported values: "Exact", '
                 '"PathPrefix", "RegularExpression"'),
    "HTTPRoute CEL rule": (HTTPROUTE, ("{type: PathPrefix, value: /v1}", "{type: PathPrefix, value: v1}"),
                           "spec.rules[0].matches[0].path: Invalid value: \"object\": value must be an absolute path "
                           "and start with '/' when type one of ['Exact', 'PathPrefix']"),
    "BackendTrafficPolicy CEL rule": (POLICY, ("    type: ConsistentHash\n", "    type: RoundRobin\n"),
                                      'spec.loadBalancer: Invalid value: "object": If LoadBalancer type is '
                                      "consistentHash, consistentHash field needs to be set."),
    "LeaderWorkerSet size": (LWS, ("    size: 2\n", '    size: "2"\n'),
                             'spec.leaderWorkerTemplate.size: Invalid value: "string": must be of type integer'),
    "KEDA trigger": (SCALED, ("    - type: prometheus\n      metadata:", "    - metadata:"),
                     "spec.triggers[0].type: Required value"),
}


def _validate(tmp_path, text: str, *flags: str):
    path = tmp_path / "objects.yaml"
    path.write_text(text)
    return run_cli("validate", str(path), *flags)


@pytest.mark.parametrize("case", CASES)
def test_each_broken_rule_gets_exactly_its_error_and_the_valid_twin_passes(case, tmp_path):
    valid, (old, new), expected = CASES[case]
    passed = _validate(tmp_path, valid)
    assert (passed.code, passed.stdout, passed.stderr) == (0, "", "")
    assert old in valid
    broken = _validate(tmp_path, valid.replace(old, new, 1))
    assert broken.code == 1 and broken.stdout == ""
    [line] = broken.lines
    kind = yaml.safe_load(valid)["kind"]
    assert line.startswith(f"error: {tmp_path / 'objects.yaml'}:"), line
    assert line.endswith(f": {kind} serving/{yaml.safe_load(valid)['metadata']['name']}: {expected}"), line


def test_the_error_names_the_line_and_column_of_the_field(tmp_path):
    broken = _validate(tmp_path, HTTPROUTE.replace("{type: PathPrefix, value: /v1}", "{type: Prefix, value: /v1}"))
    line_no = HTTPROUTE.splitlines().index("        - path: {type: PathPrefix, value: /v1}") + 1
    assert f"objects.yaml:{line_no}:18: HTTPRoute serving/chat: spec.rules[0].matches[0].path.type:" in broken.placed


def test_json_and_github_output(tmp_path):
    text = HTTPROUTE.replace("{type: PathPrefix, value: /v1}", "{type: PathPrefix, value: v1}")
    path = tmp_path / "route.yaml"
    path.write_text(text)
    done = run_cli("validate", str(path), "-o", "json")
    assert done.code == 1
    report = json.loads(done.stdout)
    assert report["kubeVersion"] == "1.37" and report["objects"] == 1
    [message] = report["messages"]
    assert (message["severity"], message["object"], message["field"]) == (
        "error", {"kind": "HTTPRoute", "name": "chat", "namespace": "serving"}, "spec.rules[0].matches[0].path")
    assert (message["line"], message["column"], message["file"]) == (14, 11, str(path))
    github = run_cli("validate", str(path), "--messages", "github")
    assert github.code == 1 and github.printed.startswith(f"::error file={path},line=14,col=11")


def test_a_kind_without_schema_is_a_warning_and_an_error_under_strict(tmp_path):
    other = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {size: 1}\n"
    done = _validate(tmp_path, other)
    assert done.code == 0
    assert "warning: " in done.stderr and "Widget w: no schema for example.com/v1 Widget" in done.stderr
    assert "[no-schema]" in done.printed
    assert _validate(tmp_path, other, "--strict").code == 1
    assert _validate(tmp_path, other, "--strict", "--allow", "no-schema").code == 0


WIDGET_CRD = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                size: {type: integer, minimum: 1}
                mode: {type: string, default: fast}
              x-kubernetes-validations:
                - rule: "self.mode == 'fast' ? self.size <= 8 : true"
                  messageExpression: "'fast widgets hold at most 8, not ' + string(self.size)"
"""


def test_schema_location_reads_the_user_s_crds_with_their_defaults_and_cel_rules(tmp_path):
    crds = tmp_path / "crds"
    crds.mkdir()
    (crds / "widget.yaml").write_text(WIDGET_CRD)
    good = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {size: 2}\n"
    assert _validate(tmp_path, good, "--schema-location", str(crds)).code == 0
    done = _validate(tmp_path, good.replace("size: 2", "size: 9"), "--schema-location", str(crds))
    assert done.code == 1
    assert done.lines[0].endswith('Widget w: spec: Invalid value: "object": fast widgets hold at most 8, not 9')
    unknown = _validate(tmp_path, good.replace("size: 2", "size: 2, colour: red"), "--schema-location", str(crds))
    assert unknown.code == 1 and 'spec.colour: unknown field "colour"' in unknown.stderr


def test_a_transition_rule_is_skipped_on_create_and_optional_old_self_is_empty(tmp_path):
    crds = tmp_path / "crds"
    crds.mkdir()
    text = WIDGET_CRD.replace('''                - rule: "self.mode == 'fast' ? self.size <= 8 : true"
                  messageExpression: "'fast widgets hold at most 8, not ' + string(self.size)"''', '''                - rule: "self.size == oldSelf.size"
                  message: immutable
                - rule: "!oldSelf.hasValue() && self.size < 5"
                  optionalOldSelf: true
                  message: a new widget holds fewer than 5''')
    (crds / "widget.yaml").write_text(text)
    good = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {size: 2}\n"
    assert _validate(tmp_path, good, "--schema-location", str(crds)).code == 0
    done = _validate(tmp_path, good.replace("size: 2", "size: 6"), "--schema-location", str(crds))
    assert done.code == 1 and done.lines[0].endswith("spec: Invalid value: \"object\": a new widget holds fewer than 5")


def test_a_crd_crafted_to_make_cel_expensive_is_refused_quickly(tmp_path):
    crds = tmp_path / "crds"
    crds.mkdir()
    (crds / "widget.yaml").write_text(WIDGET_CRD.replace(
        '''                - rule: "self.mode == 'fast' ? self.size <= 8 : true"''',
        '''                - rule: "self.items.all(a, self.items.all(b, self.items.all(c, self.items.all(d, a + b + c + d >= 0))))"''')
        .replace("size: {type: integer, minimum: 1}", "size: {type: integer}\n                items: {type: array, items: {type: integer}}"))
    objects = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {size: 1, items: [%s]}\n" % (
        ", ".join(["1"] * 2000))
    started = time.monotonic()
    done = _validate(tmp_path, objects, "--schema-location", str(crds))
    assert time.monotonic() - started < 10
    assert done.code == 1
    assert done.lines[0].endswith(
        "Widget w: spec: Invalid value: \"object\": 'operation cancelled: actual cost limit exceeded': no further "
        "validation rules will be run due to call cost exceeds limit for rule: self.items.all(a, self.items.all(b, "
        "self.items.all(c, self.items.all(d, a + b + c + d >= 0))))")


def test_hostile_input_deep_nesting_and_a_huge_file_are_bounded(tmp_path, monkeypatch):
    deep = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: " + "[" * 5000 + "]" * 5000 + "\n"
    started = time.monotonic()
    done = _validate(tmp_path, deep)
    assert done.code == 1 and "Traceback" not in done.stderr and time.monotonic() - started < 10
    huge = tmp_path / "huge.yaml"
    huge.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n" +
                    "".join(f"  k{i}: {'x' * 100}\n" for i in range(400_000)))
    from omerender.yamlio import limits
    monkeypatch.setattr(limits, "MAX_TOTAL_BYTES", 32 * limits.MIB)  # validate reads output up to the total limit
    started = time.monotonic()
    done = run_cli("validate", str(huge))
    assert done.code == 1 and "Traceback" not in done.stderr and time.monotonic() - started < 10
    assert done.stderr.splitlines() == [f"error: {huge}: larger than 32 MiB; split it into several files"]


def test_a_symbolic_link_out_of_the_directory_is_refused(tmp_path):
    outside = tmp_path / "outside.yaml"
    outside.write_text(DEPLOYMENT)
    folder = tmp_path / "in"
    folder.mkdir()
    os.symlink(outside, folder / "link.yaml")
    done = run_cli("validate", str(folder))
    assert done.code == 1 and done.stdout == "" and "link" in done.stderr


def test_stdin_and_the_kube_version(tmp_path):
    volume = DEPLOYMENT.replace("      containers:\n", "      volumes:\n        - name: v\n          image: "
                                "{reference: registry.example/m:v1}\n      containers:\n")
    assert run_cli("validate", "-", "--kube-version", "1.31", input=volume).code == 0
    old = run_cli("validate", "-", "--kube-version", "1.30", input=volume)
    assert old.code == 1
    assert 'spec.template.spec.volumes[0].image: unknown field "image" in Kubernetes 1.30 (new in Kubernetes 1.31)' \
        in old.stderr


def test_ome_s_samples_rendered_in_both_weights_modes_validate_clean(tmp_path):
    from samples import output_objects, render_samples
    for flags in ((), ("--model-weights", "download"), ("--keep-inputs", "--pod-monitors")):
        objects = [o for run in render_samples(*flags).values() if run.code == 0 for o in output_objects(run)]
        assert {o["kind"] for o in objects} >= {"Deployment", "LeaderWorkerSet"}
        path = tmp_path / "rendered.yaml"
        path.write_text(yaml.safe_dump_all(objects))
        done = run_cli("validate", str(path), "--strict")
        assert (done.code, done.stderr) == (0, ""), flags


def test_render_validate_checks_what_it_writes_and_only_with_the_flag(tmp_path):
    from conftest import FIXTURES
    passed_through = tmp_path / "deployment.yaml"
    passed_through.write_text(DEPLOYMENT.replace("  replicas: 2\n", "  replicas: 2\n  paused: maybe\n"))
    plain = run_cli("render", str(passed_through), str(FIXTURES / "quickstart"))
    assert plain.code == 0
    checked = run_cli("render", str(passed_through), str(FIXTURES / "quickstart"), "--validate")
    assert (checked.code, checked.stdout) == (1, "")
    assert checked.lines[0] == ('error: Deployment serving/chat-engine: spec.paused: Invalid value: "string": must '
                                'be of type boolean (in the rendered object; Kubernetes 1.37)')
    assert run_cli("render", str(FIXTURES / "quickstart"), "--validate", "--kube-version", "1.30").code == 0


def test_the_krm_function_validates_with_validate_true(tmp_path):
    import subprocess
    import sys
    items = [yaml.safe_load(DEPLOYMENT.replace("  replicas: 2\n", "  replicas: 2\n  paused: maybe\n"))]
    for validate, code in ((False, 0), (True, 1)):
        resource_list = {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items,
                         "functionConfig": {"apiVersion": "omerender.io/v1alpha1", "kind": "OMERender",
                                            "spec": {"validate": validate}}}
        done = subprocess.run([sys.executable, "-m", "omerender.cli", "fn"], input=yaml.safe_dump(resource_list),
                              capture_output=True, text=True)
        assert done.returncode == code, done.stderr
    assert "spec.paused: Invalid value" in done.stderr



def test_a_format_byte_field_takes_base64_only(tmp_path):
    checked = POLICY.replace("  loadBalancer:\n", "  healthCheck:\n    active:\n      type: TCP\n      tcp:\n"
                                                   "        send: {type: Binary, binary: aGVsbG8=}\n  loadBalancer:\n")
    assert _validate(tmp_path, checked).code == 0
    broken = _validate(tmp_path, checked.replace("aGVsbG8=", "hello!"))
    assert broken.code == 1
    assert broken.lines[0].endswith('BackendTrafficPolicy serving/chat: spec.healthCheck.active.tcp.send.binary: '
                                    'Invalid value: "hello!": must be of type byte (base64)'), broken.lines


def test_a_rendered_file_over_the_input_file_limit_validates_and_the_total_limit_still_holds(tmp_path, monkeypatch):
    """One render of a large fleet is one file past the 32 MiB an input file may hold (107 MB at 10,000
    InferenceServices): validate reads it up to the limit of all input together (limits.md)."""
    from omerender.yamlio import limits
    rendered = tmp_path / "rendered.yaml"
    rendered.write_text("---\n".join(DEPLOYMENT.replace("chat-engine", f"chat-{i}") for i in range(3000)))
    assert limits.MIB < rendered.stat().st_size < 2 * limits.MIB
    monkeypatch.setattr(limits, "MAX_FILE_BYTES", limits.MIB)
    run = run_cli("validate", str(rendered))
    assert (run.code, run.stdout, run.printed) == (0, "", "")
    too_large = f"error: {rendered}: larger than 1 MiB; split it into several files"
    assert run_cli("render", str(rendered)).stderr.splitlines() == [too_large]
    monkeypatch.setattr(limits, "MAX_TOTAL_BYTES", limits.MIB)
    run = run_cli("validate", str(rendered))
    assert (run.code, run.stdout, run.stderr.splitlines()) == (1, "", [too_large])
