"""validate_k8s, the check every rendered-output test calls, holds the new kinds to their published schemas:
HTTPRoute (Gateway API v1.6.0), BackendTrafficPolicy (Envoy Gateway v1.9.0), PodMonitor (prometheus-operator
v0.79.2) through tests/schemas/, Ingress through the Kubernetes API schema. The valid objects are the
projects' documentation examples, written out by hand; each broken one must fail with the message shown."""
from __future__ import annotations

import copy

import jsonschema
import pytest

from conftest import NON_CORE, validate_k8s
from schemas import go_regex

HTTP_ROUTE = {  # Gateway API guide "HTTP routing"
    "apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
    "metadata": {"name": "foo-route", "namespace": "default", "labels": {"app": "foo"}},
    "spec": {"parentRefs": [{"name": "example-gateway"}],
             "hostnames": ["foo.example.com"],
             "rules": [{"matches": [{"path": {"type": "PathPrefix", "value": "/login"}}],
                        "backendRefs": [{"name": "foo-svc", "port": 8080}],
                        "timeouts": {"request": "10s"}}]}}
BACKEND_TRAFFIC_POLICY = {  # Envoy Gateway task "Load Balancing", consistent hash on a header
    "apiVersion": "gateway.envoyproxy.io/v1alpha1", "kind": "BackendTrafficPolicy",
    "metadata": {"name": "header-lb-policy", "namespace": "default"},
    "spec": {"targetRefs": [{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": "foo-route"}],
             "loadBalancer": {"type": "ConsistentHash",
                              "consistentHash": {"type": "Header", "header": {"name": "x-session-id"}}},
             "requestBuffer": {"limit": "4Mi"}}}
POD_MONITOR = {  # prometheus-operator "Using PodMonitors"
    "apiVersion": "monitoring.coreos.com/v1", "kind": "PodMonitor",
    "metadata": {"name": "example-app", "namespace": "default", "labels": {"team": "frontend"}},
    "spec": {"selector": {"matchLabels": {"app": "example-app"}},
             "podMetricsEndpoints": [{"port": "web", "path": "/metrics", "interval": "30s"}]}}
INGRESS = {  # Kubernetes "Ingress" concept page, minimal Ingress
    "apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
    "metadata": {"name": "minimal-ingress", "namespace": "default",
                 "annotations": {"nginx.ingress.kubernetes.io/rewrite-target": "/"}},
    "spec": {"ingressClassName": "nginx-example",
             "rules": [{"http": {"paths": [{"path": "/testpath", "pathType": "Prefix",
                                            "backend": {"service": {"name": "test", "port": {"number": 80}}}}]}}]}}
VALID = {"HTTPRoute": HTTP_ROUTE, "BackendTrafficPolicy": BACKEND_TRAFFIC_POLICY, "PodMonitor": POD_MONITOR,
         "Ingress": INGRESS}


DELETE = object()


def changed(obj: dict, path: str, value) -> dict:
    """A copy of obj with `path` (dotted; digits index lists) set to value, or deleted if value is DELETE."""
    copied = copy.deepcopy(obj)
    *parents, last = [int(part) if part.isdigit() else part for part in path.split(".")]
    node = copied
    for part in parents:
        node = node[part]
    if value is DELETE:
        del node[last]
    else:
        node[last] = value
    return copied


def refusal(obj: dict, path: str, value) -> jsonschema.ValidationError:
    with pytest.raises(jsonschema.ValidationError) as caught:
        validate_k8s(changed(obj, path, value))
    return caught.value


def test_the_new_crd_kinds_are_non_core_and_ingress_is_core():
    assert {"HTTPRoute", "BackendTrafficPolicy", "PodMonitor"} <= NON_CORE
    assert "Ingress" not in NON_CORE


@pytest.mark.parametrize("kind", VALID)
def test_the_documentation_examples_pass(kind):
    validate_k8s(copy.deepcopy(VALID[kind]))


@pytest.mark.parametrize("kind, path, value, message, where", [
    # wrong type
    ("HTTPRoute", "spec.rules.0.backendRefs.0.port", "8080", "'8080' is not of type 'integer'",
     "$.spec.rules[0].backendRefs[0].port"),
    ("BackendTrafficPolicy", "spec.loadBalancer.type", "Random2",
     "'Random2' is not one of ['ConsistentHash', 'LeastRequest', 'Random', 'RoundRobin', 'BackendUtilization', "
     "'DynamicModule']",
     "$.spec.loadBalancer.type"),
    ("PodMonitor", "spec.podMetricsEndpoints", {"port": "web"}, "{'port': 'web'} is not of type 'array'",
     "$.spec.podMetricsEndpoints"),
    ("Ingress", "spec.rules.0.http.paths.0.backend.service.port.number", "80",
     "'80' is not of type 'integer', 'null'", "$.spec.rules[0].http.paths[0].backend.service.port.number"),
    # unknown field
    ("HTTPRoute", "spec.rules.0.backendRef", [], "Additional properties are not allowed ('backendRef' was unexpected)",
     "$.spec.rules[0]"),
    ("BackendTrafficPolicy", "spec.loadBalancer.consistentHash.header.value", "x",
     "Additional properties are not allowed ('value' was unexpected)", "$.spec.loadBalancer.consistentHash.header"),
    ("PodMonitor", "spec.podMetricsEndpoints.0.portName", "web",
     "Additional properties are not allowed ('portName' was unexpected)", "$.spec.podMetricsEndpoints[0]"),
    ("Ingress", "spec.rules.0.http.paths.0.backend.service.portNumber", 80,
     "Additional properties are not allowed ('portNumber' was unexpected)",
     "$.spec.rules[0].http.paths[0].backend.service"),
    # missing required field
    ("HTTPRoute", "spec.parentRefs.0.name", DELETE, "'name' is a required property", "$.spec.parentRefs[0]"),
    ("BackendTrafficPolicy", "spec.loadBalancer.type", DELETE, "'type' is a required property", "$.spec.loadBalancer"),
    ("PodMonitor", "spec.selector", DELETE, "'selector' is a required property", "$.spec"),
    ("Ingress", "spec.rules.0.http.paths.0.pathType", DELETE, "'pathType' is a required property",
     "$.spec.rules[0].http.paths[0]"),
])
def test_a_broken_object_fails_with_the_validators_message(kind, path, value, message, where):
    error = refusal(VALID[kind], path, value)
    assert (error.message, error.json_path) == (message, where)


@pytest.mark.parametrize("kind, path, value, message", [
    # the kind's own group/version and name
    ("HTTPRoute", "apiVersion", "gateway.networking.k8s.io/v1beta2",
     "'gateway.networking.k8s.io/v1' was expected"),
    ("PodMonitor", "metadata.name", DELETE, "'name' is a required property"),
    # metadata is a core ObjectMeta
    ("PodMonitor", "metadata.label", {"a": "b"}, "Additional properties are not allowed ('label' was unexpected)"),
    ("HTTPRoute", "metadata.labels", {"app": 1}, "1 is not of type 'string', 'null'"),
    # bounds, patterns (Go's `$` ends the text), int32
    ("HTTPRoute", "spec.rules.0.backendRefs.0.port", 70000, "70000 is greater than the maximum of 65535"),
    ("HTTPRoute", "spec.hostnames.0", "foo.example.com\n",
     "'foo.example.com\\n' does not match '^(\\\\*\\\\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?"
     "(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'"),
    ("HTTPRoute", "spec.rules.0.timeouts.request", "10 seconds",
     "'10 seconds' does not match '^([0-9]{1,5}(h|m|s|ms)){1,4}$'"),
    ("PodMonitor", "spec.podMetricsEndpoints.0.scrapeTimeout", "1x",
     "'1x' does not match '^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?"
     "(([0-9]+)ms)?)$'"),
    ("BackendTrafficPolicy", "spec.loadBalancer.consistentHash.tableSize", 2 ** 40,
     "1099511627776 is greater than the maximum of 5000011"),
    ("PodMonitor", "spec.sampleLimit", 2 ** 64, "18446744073709551616 is not a 'int64'"),
    # int-or-string takes an integer or a string, nothing else; null only where nullable
    ("PodMonitor", "spec.podMetricsEndpoints.0.targetPort", 1.5, "1.5 is not of type 'integer', 'string'"),
    ("BackendTrafficPolicy", "spec.requestBuffer.limit", [4], "[4] is not of type 'integer', 'string'"),
    ("HTTPRoute", "spec.rules.0.timeouts", None, "None is not of type 'object'"),
    # an object schema without properties takes no fields; status is not part of a rendered object
    ("BackendTrafficPolicy", "spec.compression", [{"type": "Gzip", "gzip": {"level": 9}}],
     "Additional properties are not allowed ('level' was unexpected)"),
    ("PodMonitor", "status", {}, "Additional properties are not allowed ('status' was unexpected)"),
])
def test_structural_schema_semantics(kind, path, value, message):
    assert refusal(VALID[kind], path, value).message == message


@pytest.mark.parametrize("kind, path, value", [
    ("PodMonitor", "spec.podMetricsEndpoints.0.targetPort", 8080),
    ("PodMonitor", "spec.podMetricsEndpoints.0.targetPort", "metrics"),
    ("BackendTrafficPolicy", "spec.requestBuffer.limit", 4194304),
    ("HTTPRoute", "spec.parentRefs.0.group", ""),
])
def test_the_alternatives_a_schema_allows_pass(kind, path, value):
    validate_k8s(changed(VALID[kind], path, value))


def test_a_property_with_a_default_is_not_required():
    """The API server fills defaults before it validates: a PathMatch's `value` defaults to "/"."""
    obj = copy.deepcopy(BACKEND_TRAFFIC_POLICY)
    obj["spec"]["rateLimit"] = {"type": "Local", "local": {"rules": [{
        "clientSelectors": [{"path": {"type": "PathPrefix"}}], "limit": {"requests": 10, "unit": "Second"}}]}}
    validate_k8s(obj)


def test_preserve_unknown_fields_takes_any_field():
    obj = copy.deepcopy(BACKEND_TRAFFIC_POLICY)
    obj["spec"]["loadBalancer"] = {"type": "DynamicModule", "dynamicModule": {
        "name": "m", "lbPolicyName": "p", "config": {"anything": {"nested": [1, "two"]}}}}
    validate_k8s(obj)


def test_a_set_refuses_duplicates_and_a_map_list_duplicate_keys():
    error = refusal(POD_MONITOR, "spec.scrapeProtocols", ["PrometheusProto", "PrometheusProto"])
    assert error.message == 'duplicate entry in list-type set: "PrometheusProto"'
    route = copy.deepcopy(HTTP_ROUTE)
    del route["spec"]["rules"][0]["timeouts"]
    route["spec"]["rules"][0]["filters"] = [{"type": "RequestHeaderModifier", "requestHeaderModifier": {
        "set": [{"name": "x-a", "value": "1"}, {"name": "x-a", "value": "2"}]}}]
    with pytest.raises(jsonschema.ValidationError, match=r'duplicate entry in list-type map: \["x-a"\]'):
        validate_k8s(route)


def test_go_dollar_is_the_end_of_the_text():
    assert go_regex("^a$|^[$]$") == "^a\\Z|^[$]\\Z"
    assert go_regex("^a\\$b$") == "^a\\$b\\Z"
