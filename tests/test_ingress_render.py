"""Ingress through the CLI: the OME v1.3 docs' networking examples render as documented, with the cluster's
ConfigMap inferenceservice-config among the inputs (docs: concepts/rollouts-and-traffic/ingress.md,
guides/networking/configure-ingress.md, multiple-gateways.md, gateway-host-schemes.md), and
docs/how-to/cluster-config-and-ingress.md's worked example is what omerender prints."""
from __future__ import annotations

import json
import re

import yaml

from conftest import ROOT, load_yaml, render_objects, run_cli, validate_k8s

# The chart's ingress key (charts/ome-resources, as omerender/ome/cluster/chart_defaults.yaml vendors it)
CHART_INGRESS = {
    "disableIstioVirtualHost": False, "ingressGateway": "istio-system/ingress-gateway",
    "ingressService": "istio-ingressgateway.istio-system.svc.cluster.local", "omeIngressGateway": "",
    "omeIngressGatewayClass": "", "consistentHashHeaders": ["x-routing-key", "X-SMG-Routing-Key"],
    "ingressDomain": "svc.cluster.local", "ingressClassName": "istio", "additionalIngressDomains": None,
    "domainTemplate": "{{ .Name }}.{{ .Namespace }}.{{ .IngressDomain }}", "urlScheme": "http", "pathTemplate": "",
    "disableIngressCreation": True, "enableGatewayAPI": False, "perISVCSubdomain": False, "sharedHostPrefix": "llm",
    "defaultRouteTimeoutSeconds": 0, "additionalIngressGateways": [], "namespaceIngressGateways": {}}
# configure-ingress.md, Step 1, "Gateway API" (domain is ingressDomain in the ConfigMap)
GATEWAY_API = {"disableIngressCreation": False, "enableGatewayAPI": True, "ingressDomain": "example.com",
               "omeIngressGateway": "envoy-gateway-system/ome-gateway"}
# configure-ingress.md, Step 1, "Kubernetes Ingress"
KUBE_INGRESS = {"disableIngressCreation": False, "ingressDomain": "example.com", "ingressClassName": "nginx"}
EXAMPLE = ROOT / "fixtures" / "gateway-api" / "inputs.yaml"
DOC = ROOT / "docs" / "how-to" / "cluster-config-and-ingress.md"


OLDER = "which OME v1.3's Helm chart writes"  # the info of a ConfigMap lacking chart keys


def configmap(**ingress) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "inferenceservice-config", "namespace": "ome"},
            "data": {"ingress": json.dumps({**CHART_INGRESS, **ingress})}}


def inputs(F, name: str, namespace: str, router: bool = False, annotations: dict | None = None) -> list[dict]:
    isvc = F["isvc"]
    isvc["metadata"].update(name=name, namespace=namespace)
    if annotations:
        isvc["metadata"]["annotations"] = annotations
    if not router:
        del isvc["spec"]["router"]
    return [F["model"], F["runtime"], isvc]


def rendered(objects: list[dict]):
    run = render_objects(objects)
    assert run.code == 0, run.stderr
    for obj in run.objects:
        if obj["kind"] not in ("HTTPRoute", "BackendTrafficPolicy"):
            validate_k8s(obj)
    return run


def routes(run) -> dict[str, dict]:
    return {o["metadata"]["name"]: o for o in run.objects if o["kind"] == "HTTPRoute"}


def test_without_a_configmap_the_external_service_stays(F):
    """ingress.md: ingress creation is off by default, and OME puts a Service named after the InferenceService in
    front of the model."""
    run = rendered(inputs(F, "llama-chat", "llama-demo"))
    assert run.find("Service", "llama-chat")["spec"]["selector"]["component"] == "engine"
    assert not [o for o in run.objects if o["kind"] in ("Ingress", "HTTPRoute", "BackendTrafficPolicy")]


def test_send_requests_example(F):
    """ingress.md, Send requests: with Gateway API on, llama-chat gets the routes llama-chat and llama-chat-engine on
    llm.example.com and the BackendTrafficPolicy llama-chat; the external Service goes."""
    run = rendered([configmap(**GATEWAY_API), *inputs(F, "llama-chat", "llama-demo")])
    found = routes(run)
    assert {name: r["spec"]["hostnames"] for name, r in found.items()} == {
        "llama-chat": ["llm.example.com"], "llama-chat-engine": ["llm.example.com"]}
    assert run.find("BackendTrafficPolicy", "llama-chat")
    assert not [o for o in run.objects if o["kind"] == "Service" and o["metadata"]["name"] == "llama-chat"]
    assert all(r["spec"]["rules"][0]["timeouts"] == {"request": "0s"} for r in found.values())  # the chart's 0


def test_configure_ingress_gateway_api_example(F):
    """configure-ingress.md, Step 2, "Gateway API": NAME, HOST, PATH and BACKEND of the routes, and the policy
    hashing x-routing-key and X-SMG-Routing-Key."""
    run = rendered([configmap(**GATEWAY_API), *inputs(F, "llama-3-2-1b-instruct", "llama-demo")])
    table = [(name, r["spec"]["hostnames"][0], r["spec"]["rules"][0]["matches"][0]["path"]["value"],
              r["spec"]["rules"][0]["backendRefs"][0]["name"]) for name, r in sorted(routes(run).items())]
    assert table == [
        ("llama-3-2-1b-instruct", "llm.example.com", "/llama-demo/llama-3-2-1b-instruct/",
         "llama-3-2-1b-instruct-engine"),
        ("llama-3-2-1b-instruct-engine", "llm.example.com", "/llama-demo/llama-3-2-1b-instruct-engine/",
         "llama-3-2-1b-instruct-engine")]
    policy = run.find("BackendTrafficPolicy", "llama-3-2-1b-instruct")
    assert policy["spec"]["loadBalancer"]["consistentHash"]["headers"] == [{"name": "x-routing-key"},
                                                                           {"name": "X-SMG-Routing-Key"}]


def test_configure_ingress_kubernetes_ingress_example(F):
    """configure-ingress.md, Step 2, "Kubernetes Ingress": CLASS nginx, HOST, SERVICE and PORT 8080."""
    run = rendered([configmap(**KUBE_INGRESS), *inputs(F, "llama-3-2-1b-instruct", "llama-demo")])
    ingress = run.find("Ingress", "llama-3-2-1b-instruct")
    rule = ingress["spec"]["rules"][0]
    assert (ingress["spec"]["ingressClassName"], rule["host"], rule["http"]["paths"][0]["backend"]["service"]) == (
        "nginx", "llama-3-2-1b-instruct.llama-demo.example.com",
        {"name": "llama-3-2-1b-instruct-engine", "port": {"number": 8080}})
    assert len(ingress["spec"]["rules"]) == 1


def test_ingress_hostnames_table_with_a_router(F):
    """ingress.md, Hostnames: with a router, the InferenceService's host and the router's go to the router, the
    engine's to the engine."""
    run = rendered([configmap(**KUBE_INGRESS), *inputs(F, "llama-chat", "llama-demo", router=True)])
    rules = run.find("Ingress", "llama-chat")["spec"]["rules"]
    assert [(r["host"], r["http"]["paths"][0]["backend"]["service"]["name"]) for r in rules] == [
        ("llama-chat.llama-demo.example.com", "llama-chat-router"),
        ("llama-chat-router.llama-demo.example.com", "llama-chat-router"),
        ("llama-chat-engine.llama-demo.example.com", "llama-chat-engine")]


MULTIPLE = dict(GATEWAY_API, omeIngressGateway="envoy-gateway-system/internal-gateway",
                omeIngressGatewayClass="internal",
                ingressDomain="internal.example.com",
                additionalIngressGateways=[{"omeIngressGateway": "envoy-gateway-system/external-gateway",
                                            "ingressDomain": "external.example.com", "class": "external"}])


def test_multiple_gateways_example(F):
    """multiple-gateways.md, Step 2: GATEWAYS and HOSTNAMES of llama-chat and llama-chat-engine."""
    run = rendered([configmap(**MULTIPLE), *inputs(F, "llama-chat", "prod")])
    for route in routes(run).values():
        assert [p["name"] for p in route["spec"]["parentRefs"]] == ["internal-gateway", "external-gateway"]
        assert route["spec"]["hostnames"] == ["llm.internal.example.com", "llm.external.example.com"]


def test_multiple_gateways_annotation_keeps_a_service_off(F):
    """multiple-gateways.md, Override the gateways for one service: ``[]`` removes the additional gateways."""
    run = rendered([configmap(**MULTIPLE),
                    *inputs(F, "llama-chat", "prod", annotations={"ome.io/ingress-additional-gateways": "[]"})])
    for route in routes(run).values():
        assert [p["name"] for p in route["spec"]["parentRefs"]] == ["internal-gateway"]
        assert route["spec"]["hostnames"] == ["llm.internal.example.com"]


def test_gateway_host_schemes_example(F):
    """gateway-host-schemes.md, Step 3, "Per-service subdomains": HOSTS and PATH of both routes."""
    run = rendered([configmap(**GATEWAY_API, perISVCSubdomain=True), *inputs(F, "llama-chat", "prod")])
    assert {name: (r["spec"]["hostnames"], r["spec"]["rules"][0]["matches"][0]["path"]["value"])
            for name, r in routes(run).items()} == {"llama-chat": (["llama-chat.prod.example.com"], "/"),
                                                    "llama-chat-engine": (["llama-chat.prod.example.com"], "/")}


def test_cluster_local_with_ingress_on_still_gets_routes(F):
    """ingress.md, Cluster-local services: the label doesn't stop an Ingress or HTTPRoutes."""
    objects = inputs(F, "llama-chat", "prod")
    objects[2]["metadata"]["labels"]["networking.knative.dev/visibility"] = "cluster-local"
    run = rendered([configmap(**GATEWAY_API), *objects])
    assert sorted(routes(run)) == ["llama-chat", "llama-chat-engine"]
    assert "networking.knative.dev/visibility" not in routes(run)["llama-chat"]["metadata"]["labels"]


def test_chart_gateway_left_empty_is_an_error(F):
    """ingress.md: the chart leaves omeIngressGateway empty, and the API server rejects HTTPRoutes without it."""
    run = render_objects([configmap(disableIngressCreation=False, enableGatewayAPI=True, ingressDomain="example.com"),
                          *inputs(F, "llama-chat", "prod")])
    assert run.code == 1 and run.stdout == ""
    assert run.lines == [
        "error: <stdin>: InferenceService prod/llama-chat: HTTPRoutes need a Gateway, and ingress.omeIngressGateway in "
        "<stdin>: ConfigMap ome/inferenceservice-config is empty: name it as <namespace>/<name>, such as "
        "envoy-gateway-system/ome-gateway"]


def test_invalid_domain_annotation_is_an_error(F):
    run = render_objects([configmap(**KUBE_INGRESS),
                          *inputs(F, "llama-chat", "prod", annotations={"ome.io/ingress-domain": "Example.COM"})])
    assert run.code == 1 and run.stdout == ""
    assert run.lines[0].startswith('error: <stdin>: InferenceService prod/llama-chat: invalid domain name '
                                   '"llama-chat.prod.Example.COM" rendered from ingress.domainTemplate in <stdin>: '
                                   'ConfigMap ome/inferenceservice-config '
                                   '("{{ .Name }}.{{ .Namespace }}.{{ .IngressDomain }}"): a lowercase RFC 1123 '
                                   'subdomain')


# ---------------------------------------------------------------- docs/how-to/cluster-config-and-ingress.md

def doc_blocks(marker: str) -> list[dict]:
    """The YAML block after ``<!-- marker -->`` in the docs page."""
    text = DOC.read_text()
    match = re.search(rf"<!-- {re.escape(marker)} -->\s*```yaml[^\n]*\n(.*?)^```", text, re.S | re.M)
    assert match, f"no block marked {marker} in {DOC.name}"
    return [d for d in yaml.safe_load_all(match.group(1)) if d is not None]


def test_worked_gateway_api_example_is_what_omerender_prints():
    """The docs page's inputs are the fixture's, and its output is the render's routes and policy."""
    fixture = load_yaml(EXAMPLE)
    assert doc_blocks("example: inputs") == [o for o in fixture if o["kind"] in ("ConfigMap", "InferenceService")]
    run = run_cli("render", str(EXAMPLE))
    assert run.code == 0, run.stderr
    assert doc_blocks("example: output") == [o for o in run.objects
                                             if o["kind"] in ("HTTPRoute", "BackendTrafficPolicy")]


def test_spec_traffic_replaces_the_default_policy(F):
    """traffic-policy.md, Defaults when you declare nothing: traffic intent replaces the default policy; the
    traffic reconciler's policy is not rendered, which a warning says."""
    objects = inputs(F, "llama-chat", "llama-demo")
    objects[2]["spec"]["traffic"] = {"algorithm": "ConsistentHash",
                                     "consistentHash": {"type": "Header", "headers": [{"name": "x-session-id"}]}}
    run = rendered([configmap(**GATEWAY_API), *objects])
    assert not [o for o in run.objects if o["kind"] == "BackendTrafficPolicy"]
    assert [line for line in run.lines if OLDER not in line] == [
        "warning: <stdin>: InferenceService llama-demo/llama-chat: spec.traffic.algorithm declares traffic intent: "
        "OME's traffic reconciler then writes the BackendTrafficPolicy llama-chat in place of the default one, and "
        "omerender renders neither"]
