"""Ingress: the Kubernetes Ingress, HTTPRoutes and BackendTrafficPolicy OME v1.3 writes, and the external Service.

Cases marked with a Go test are ported from OME v1.3 (``ome-projects/ome``):
``pkg/controller/v1beta1/inferenceservice/reconcilers/ingress/builders/httproute_builder_test.go`` and
``strategies/raw_ingress_strategy_test.go`` (commit 9177c1b0), ``strategies/gateway_api_strategy_test.go``.
"""
from __future__ import annotations

import pytest

from omerender.errors import OmeError, Report
from omerender.kube.apirules import check_object
from omerender.ome.cluster.settings import GatewaySpec, IngressConfig, NamespaceGateways
from omerender.ome.ingress import ComponentRoute, external_service_wanted, ingress_objects
from omerender.ome.load import Obj
from conftest import validate_k8s

# createHTTPRouteBuilder's IngressConfig (httproute_builder_test.go)
GO_BUILDER = dict(ingress_domain="example.com", domain_template="{{.Name}}.{{.Namespace}}.{{.IngressDomain}}",
                  ome_ingress_gateway="istio-system/gateway", shared_host_prefix="llm",
                  default_route_timeout_seconds=1800, enable_gateway_api=True, disable_ingress_creation=False)
# createKubernetesIngressStrategy's IngressConfig (raw_ingress_strategy_test.go)
GO_RAW = dict(ingress_domain="example.com", ingress_class_name="nginx", url_scheme="https",
              domain_template="{{.Name}}.{{.Namespace}}.{{.IngressDomain}}", disable_ingress_creation=False)


def config(base: dict = GO_BUILDER, **fields) -> IngressConfig:
    return IngressConfig(**{**base, **fields})


def isvc(name="test-isvc", namespace="default", components=("engine",), labels=None, annotations=None,
         timeouts=None, spec_extra=None) -> Obj:
    spec = {"model": {"name": "m"}}
    for comp in components:
        spec[comp] = {}
        if (timeouts or {}).get(comp) is not None:
            spec[comp]["timeoutSeconds"] = timeouts[comp]
    spec.update(spec_extra or {})
    meta = {"name": name, "namespace": namespace}
    if labels:
        meta["labels"] = labels
    if annotations:
        meta["annotations"] = annotations
    return Obj({"apiVersion": "ome.io/v1beta1", "kind": "InferenceService", "metadata": meta, "spec": spec},
               "isvc.yaml", 0)


PORTS = {"engine": 30000, "decoder": 30000, "router": 30080}  # OME's default ports


def routes_of(obj: Obj, ports=None) -> list[ComponentRoute]:
    ports = {**PORTS, **(ports or {})}
    return [ComponentRoute(c, f"{obj.name}-{c}", ports[c], obj.spec[c].get("timeoutSeconds"))
            for c in ("engine", "decoder", "router") if c in obj.spec]


def render(obj: Obj, cfg: IngressConfig, ports=None, report: Report | None = None) -> list[dict]:
    objects = ingress_objects(obj, routes_of(obj, ports), cfg, report or Report())
    for o in objects:
        check_object(o)
        if o["kind"] == "Ingress":
            validate_k8s(o)
    return objects


def by_name(objects: list[dict], kind="HTTPRoute") -> dict[str, dict]:
    return {o["metadata"]["name"]: o for o in objects if o["kind"] == kind}


def the_rule(route: dict) -> dict:
    assert len(route["spec"]["rules"]) == 1
    return route["spec"]["rules"][0]


def backend(route: dict) -> tuple[str, int]:
    refs = the_rule(route)["backendRefs"]
    assert len(refs) == 1
    return refs[0]["name"], refs[0]["port"]


def request_timeout(route: dict) -> str | None:
    return (the_rule(route).get("timeouts") or {}).get("request")


def path_of(route: dict) -> str:
    matches = the_rule(route)["matches"]
    assert len(matches) == 1 and matches[0]["path"]["type"] == "PathPrefix"
    return matches[0]["path"]["value"]


def rewrites(route: dict) -> bool:
    return any(f["type"] == "URLRewrite" for f in the_rule(route)["filters"])


# ---------------------------------------------------------------- HTTPRoute builder (httproute_builder_test.go)

def test_engine_route_is_named_after_the_engine_service():
    """TestHTTPRouteBuilder_Build, TestHTTPRouteBuilder_BuildHTTPRoute_EngineComponent ("engine component
    ready"), TestHTTPRouteBuilder_EngineBackendUsesEngineService."""
    routes = by_name(render(isvc(), config()))
    engine = routes["test-isvc-engine"]
    assert engine["metadata"]["namespace"] == "default"
    assert len(engine["spec"]["hostnames"]) == 1
    assert backend(engine) == ("test-isvc-engine", 30000)
    assert request_timeout(engine) == "1800s"  # the cluster default


@pytest.mark.parametrize("component,seconds", [("engine", 120), ("router", 90), ("decoder", 45)])
def test_component_timeout_overrides_the_default(component, seconds):
    """TestHTTPRouteBuilder_BuildHTTPRoute_EngineComponent, _RouterComponent, _DecoderComponent ("... with custom
    timeout")."""
    obj = isvc(components=("engine", component), timeouts={component: seconds})
    route = by_name(render(obj, config()))[f"test-isvc-{component}"]
    assert request_timeout(route) == f"{seconds}s"


@pytest.mark.parametrize("component", ["router", "decoder"])
def test_router_and_decoder_routes_use_the_default_timeout(component):
    """TestHTTPRouteBuilder_BuildHTTPRoute_RouterComponent, _DecoderComponent ("... component ready")."""
    route = by_name(render(isvc(components=("engine", component)), config()))[f"test-isvc-{component}"]
    assert request_timeout(route) == "1800s"
    assert backend(route) == (f"test-isvc-{component}", PORTS[component])


@pytest.mark.parametrize("components,front", [(("engine",), "engine"), (("engine", "router"), "router"),
                                              (("engine", "router", "decoder"), "router")])
def test_top_level_route_fronts_the_router_else_the_engine(components, front):
    """TestHTTPRouteBuilder_BuildHTTPRoute_TopLevelComponent,
    TestHTTPRouteBuilder_TopLevelRoutesToRouterEvenWhenNotReady,
    TestHTTPRouteBuilder_TopLevelEngineFallback_UsesEngineService."""
    top = by_name(render(isvc(components=components), config()))["test-isvc"]
    assert backend(top) == (f"test-isvc-{front}", PORTS[front])


def test_engine_and_top_level_routes_have_distinct_names():
    """TestHTTPRouteBuilder_EngineAndTopLevel_DistinctNames; and the strategy's order (gateway_api_strategy.go
    Reconcile): engine, router, decoder, the top level, then the BackendTrafficPolicy."""
    objects = render(isvc(components=("engine", "decoder", "router")), config())
    assert [(o["kind"], o["metadata"]["name"]) for o in objects] == [
        ("HTTPRoute", "test-isvc-engine"), ("HTTPRoute", "test-isvc-router"), ("HTTPRoute", "test-isvc-decoder"),
        ("HTTPRoute", "test-isvc"), ("BackendTrafficPolicy", "test-isvc")]


def test_route_rule_headers_match_and_backend():
    """TestHTTPRouteBuilder_CreatePathPrefixMatch, TestHTTPRouteBuilder_AddIsvcHeaders,
    TestHTTPRouteBuilder_CreateHTTPRouteRule: the whole route as written."""
    route = by_name(render(isvc(name="test-service", namespace="test-namespace"), config()))["test-service"]
    assert route == {
        "apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
        "metadata": {"name": "test-service", "namespace": "test-namespace"},
        "spec": {
            "parentRefs": [{"group": "gateway.networking.k8s.io", "kind": "Gateway", "namespace": "istio-system",
                            "name": "gateway"}],
            "hostnames": ["llm.example.com"],
            "rules": [{
                "matches": [{"path": {"type": "PathPrefix", "value": "/test-namespace/test-service/"}}],
                "filters": [
                    {"type": "RequestHeaderModifier",
                     "requestHeaderModifier": {"set": [{"name": "OMe-Isvc-Name", "value": "test-service"},
                                                       {"name": "OME-Isvc-Namespace", "value": "test-namespace"}]}},
                    {"type": "URLRewrite",
                     "urlRewrite": {"path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/"}}}],
                "backendRefs": [{"group": "", "kind": "Service", "name": "test-service-engine",
                                 "namespace": "test-namespace", "port": 30000, "weight": 1}],
                "timeouts": {"request": "1800s"}}]}}


@pytest.mark.parametrize("seconds,text", [(30, "30s"), (60, "60s"), (120, "120s")])
def test_timeout_is_written_in_seconds(seconds, text):
    """TestHTTPRouteBuilder_ToGatewayAPIDuration."""
    route = by_name(render(isvc(timeouts={"engine": seconds}), config()))["test-isvc-engine"]
    assert request_timeout(route) == text


def test_backend_refs_use_the_component_service_port():
    """TestHTTPRouteBuilder_BackendRefUsesComponentServicePort,
    TestHTTPRouteBuilder_TopLevelEngineFallbackUsesEngineServicePort."""
    ports = {"engine": 8000, "router": 8000, "decoder": 8000}
    routes = by_name(render(isvc(components=("engine", "router", "decoder")), config(), ports))
    assert {name: backend(r)[1] for name, r in routes.items()} == dict.fromkeys(routes, 8000)
    assert backend(by_name(render(isvc(), config(), {"engine": 8000}))["test-isvc"]) == ("test-isvc-engine", 8000)


@pytest.mark.parametrize("components,route,path", [
    (("engine",), "test-isvc-engine", "/default/test-isvc-engine/"),
    (("engine", "router"), "test-isvc-router", "/default/test-isvc-router/"),
    (("engine", "decoder"), "test-isvc-decoder", "/default/test-isvc-decoder/"),
    (("engine",), "test-isvc", "/default/test-isvc/")])
def test_shared_host_scheme_is_the_default(components, route, path):
    """TestHTTPRouteBuilder_SharedHostScheme_Default."""
    found = by_name(render(isvc(components=components), config()))[route]
    assert found["spec"]["hostnames"] == ["llm.example.com"]
    assert path_of(found) == path
    assert rewrites(found)


@pytest.mark.parametrize("prefix,host", [("serving", "serving.example.com"), ("llm", "llm.example.com"),
                                         ("", "example.com")])
def test_shared_host_prefix(prefix, host):
    """TestHTTPRouteBuilder_SharedHostPrefix."""
    top = by_name(render(isvc(), config(shared_host_prefix=prefix)))["test-isvc"]
    assert top["spec"]["hostnames"] == [host]


def test_additional_gateways_add_parent_refs_and_hostnames():
    """TestHTTPRouteBuilder_AdditionalIngressGateways."""
    cfg = config(per_isvc_subdomain=True, ome_ingress_gateway="envoy-gateway-system/int-gw",
                 ingress_domain="int.example.com",
                 additional_ingress_gateways=(GatewaySpec("envoy-gateway-system/ext-gw", "ext.example.com"),))
    top = by_name(render(isvc(), cfg))["test-isvc"]
    assert [p["name"] for p in top["spec"]["parentRefs"]] == ["int-gw", "ext-gw"]
    assert top["spec"]["hostnames"] == ["test-isvc.default.int.example.com", "test-isvc.default.ext.example.com"]


NS_GATEWAYS = {"prod": NamespaceGateways(GatewaySpec("envoy-gateway-system/prod-int-gw", "int.example.com"),
                                         (GatewaySpec("envoy-gateway-system/prod-ext-gw", "ext.example.com"),))}
NS_CONFIG = dict(per_isvc_subdomain=True, ome_ingress_gateway="envoy-gateway-system/tenant-int-gw",
                 ingress_domain="int.example.com", namespace_ingress_gateways=NS_GATEWAYS)


def test_namespace_gateways_replace_the_cluster_gateways():
    """TestHTTPRouteBuilder_NamespaceIngressGateways ("namespace in map overrides to that namespace's gateways")."""
    top = by_name(render(isvc(namespace="prod"), config(**NS_CONFIG)))["test-isvc"]
    assert [p["name"] for p in top["spec"]["parentRefs"]] == ["prod-int-gw", "prod-ext-gw"]
    assert top["spec"]["hostnames"] == ["test-isvc.prod.int.example.com", "test-isvc.prod.ext.example.com"]


def test_namespace_not_listed_keeps_the_cluster_gateway():
    """TestHTTPRouteBuilder_NamespaceIngressGateways ("namespace not in map keeps cluster default")."""
    top = by_name(render(isvc(), config(**NS_CONFIG)))["test-isvc"]
    assert [p["name"] for p in top["spec"]["parentRefs"]] == ["tenant-int-gw"]


def test_gateway_annotation_wins_over_the_namespace_gateway():
    """TestHTTPRouteBuilder_NamespaceIngressGateways ("per-ISVC gateway annotation wins over namespace default")."""
    obj = isvc(namespace="prod", annotations={"ome.io/ingress-gateway": "envoy-gateway-system/special-gw"})
    top = by_name(render(obj, config(**NS_CONFIG)))["test-isvc"]
    assert top["spec"]["parentRefs"][0] == {"group": "gateway.networking.k8s.io", "kind": "Gateway",
                                            "namespace": "envoy-gateway-system", "name": "special-gw"}


@pytest.mark.parametrize("components,route", [(("engine",), "test-isvc-engine"), (("engine", "router"),
                                                                                   "test-isvc-router"),
                                              (("engine", "decoder"), "test-isvc-decoder"),
                                              (("engine",), "test-isvc")])
def test_per_isvc_subdomain_scheme(components, route):
    """TestHTTPRouteBuilder_PerISVCSubdomainScheme, TestHTTPRouteBuilder_PerISVCSubdomain_KeepsBackendPortResolution."""
    found = by_name(render(isvc(components=components), config(per_isvc_subdomain=True), {"engine": 8000}))[route]
    assert found["spec"]["hostnames"] == ["test-isvc.default.example.com"]
    assert path_of(found) == "/"
    assert not rewrites(found)
    if route == "test-isvc-engine":
        assert backend(found) == ("test-isvc-engine", 8000)


def test_per_isvc_subdomain_with_a_router_warns():
    """gateway-host-schemes.md: in this scheme all of a service's routes match the same hostname and path, and with
    a router or a decoder requests can reach the wrong component."""
    report = Report()
    render(isvc(components=("engine", "router")), config(per_isvc_subdomain=True), report=report)
    assert [m.text for m in report.messages] == [
        "with a hostname per InferenceService (perISVCSubdomain), all 3 routes match test-isvc.default.example.com at "
        "/, and which one takes the requests depends on when OME created them: with a router or a decoder, requests "
        "can reach the wrong component; keep this InferenceService on the shared host with the annotation "
        'ome.io/ingress-per-isvc-subdomain: "false"']


def test_no_default_timeout_leaves_the_timeout_out():
    """TestHTTPRouteBuilder_NoDefaultTimeout_OmitsRouteTimeout; a negative default is no default either."""
    for default in (None, -1):
        route = by_name(render(isvc(), config(default_route_timeout_seconds=default)))["test-isvc-engine"]
        assert "timeouts" not in the_rule(route)


def test_zero_default_timeout_turns_the_timeout_off():
    """TestHTTPRouteBuilder_ZeroDefaultTimeout_DisablesRouteTimeout."""
    route = by_name(render(isvc(), config(default_route_timeout_seconds=0)))["test-isvc-engine"]
    assert request_timeout(route) == "0s"


# ---------------------------------------------------------------- Kubernetes Ingress (raw_ingress_strategy_test.go)

def ingress_rules(objects: list[dict]) -> list[tuple[str, str, int]]:
    [ingress] = objects
    assert ingress["kind"] == "Ingress"
    found = []
    for rule in ingress["spec"]["rules"]:
        [path] = rule["http"]["paths"]
        assert (path["path"], path["pathType"]) == ("/", "Prefix")
        service = path["backend"]["service"]
        found.append((rule["host"], service["name"], service["port"]["number"]))
    return found


def test_ingress_engine_only():
    """TestKubernetesIngressStrategy_Reconcile ("successful reconcile with predictor only")."""
    objects = render(isvc(), config(GO_RAW), {"engine": 8080})
    assert objects == [{"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
                        "metadata": {"name": "test-isvc", "namespace": "default"},
                        "spec": {"ingressClassName": "nginx", "rules": [
                            {"host": "test-isvc.default.example.com",
                             "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": {"service": {
                                 "name": "test-isvc-engine", "port": {"number": 8080}}}}]}}]}}]


def test_ingress_with_router():
    """TestKubernetesIngressStrategy_Reconcile ("successful reconcile with router"); ingress_builder.go
    buildRouterRules: the top-level host and the router's go to the router, the engine's to the engine."""
    assert ingress_rules(render(isvc(components=("engine", "router")), config(GO_RAW))) == [
        ("test-isvc.default.example.com", "test-isvc-router", 30080),
        ("test-isvc-router.default.example.com", "test-isvc-router", 30080),
        ("test-isvc-engine.default.example.com", "test-isvc-engine", 30000)]


def test_ingress_with_router_and_decoder():
    """ingress_builder.go buildRouterRules, with the decoder's rule last."""
    rules = ingress_rules(render(isvc(components=("engine", "decoder", "router")), config(GO_RAW)))
    assert rules[-1] == ("test-isvc-decoder.default.example.com", "test-isvc-decoder", 30000)
    assert len(rules) == 4


def test_ingress_with_decoder():
    """TestKubernetesIngressStrategy_Reconcile ("successful reconcile with decoder"); ingress_builder.go
    buildDecoderRules: without a router the top-level host goes to the engine."""
    assert ingress_rules(render(isvc(components=("engine", "decoder")), config(GO_RAW))) == [
        ("test-isvc.default.example.com", "test-isvc-engine", 30000),
        ("test-isvc-engine.default.example.com", "test-isvc-engine", 30000),
        ("test-isvc-decoder.default.example.com", "test-isvc-decoder", 30000)]


def test_ingress_creation_disabled_renders_no_route():
    """TestKubernetesIngressStrategy_Reconcile ("ingress creation disabled")."""
    assert render(isvc(), config(GO_RAW, disable_ingress_creation=True)) == []
    assert external_service_wanted(isvc(), config(GO_RAW, disable_ingress_creation=True))


def test_cluster_local_label_does_not_stop_the_ingress():
    """TestKubernetesIngressStrategy_Reconcile ("cluster local visibility"): the label stops only the external
    Service (external_service_reconciler.go shouldCreateExternalService)."""
    obj = isvc(labels={"networking.knative.dev/visibility": "cluster-local"})
    assert ingress_rules(render(obj, config(GO_RAW)))[0][0] == "test-isvc.default.example.com"
    assert not external_service_wanted(obj, config(GO_RAW, disable_ingress_creation=True))


def test_ingress_cluster_local_domain():
    """TestKubernetesIngressStrategy_Reconcile ("cluster local domain")."""
    rules = ingress_rules(render(isvc(), config(GO_RAW, ingress_domain="svc.cluster.local")))
    assert rules[0][0] == "test-isvc.default.svc.cluster.local"


def test_ingress_custom_domain_template():
    """TestKubernetesIngressStrategy_CreateRawURL ("custom domain template")."""
    cfg = config(GO_RAW, ingress_domain="local.dev", domain_template="{{.Name}}-service.{{.IngressDomain}}")
    assert ingress_rules(render(isvc(), cfg))[0][0] == "test-isvc-service.local.dev"


def test_ingress_copies_every_annotation_and_no_label():
    """ingress_builder.go BuildIngress: ``Annotations: isvc.Annotations``, no labels."""
    annotations = {"nginx.ingress.kubernetes.io/proxy-body-size": "0", "ome.io/rollout-promote": "abc",
                   "config.kubernetes.io/index": "0"}
    [ingress] = render(isvc(labels={"team": "a"}, annotations=annotations), config(GO_RAW))
    assert ingress["metadata"] == {"name": "test-isvc", "namespace": "default",
                                   "annotations": {"nginx.ingress.kubernetes.io/proxy-body-size": "0",
                                                   "ome.io/rollout-promote": "abc"}}


def test_ingress_without_class_name():
    """IngressConfig.IngressClassName is a pointer: unset, the Ingress has no ingressClassName."""
    [ingress] = render(isvc(), config(GO_RAW, ingress_class_name=None))
    assert "ingressClassName" not in ingress["spec"]


# ---------------------------------------------------------------- BackendTrafficPolicy

def test_default_backend_traffic_policy():
    """gateway_api_strategy.go reconcileBackendTrafficPolicy, builders BackendTrafficPolicyBuilder.Build."""
    objects = render(isvc(), config(consistent_hash_headers=("x-routing-key", "X-SMG-Routing-Key")))
    assert objects[-1] == {
        "apiVersion": "gateway.envoyproxy.io/v1alpha1", "kind": "BackendTrafficPolicy",
        "metadata": {"name": "test-isvc", "namespace": "default",
                     "labels": {"app.kubernetes.io/part-of": "test-isvc",
                                "app.kubernetes.io/managed-by": "ome-controller"}},
        "spec": {"mergeType": "StrategicMerge",
                 "targetRefs": [{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": "test-isvc"}],
                 "loadBalancer": {"type": "ConsistentHash", "consistentHash": {
                     "type": "Headers", "headers": [{"name": "x-routing-key"}, {"name": "X-SMG-Routing-Key"}]}}}}


def test_hash_headers_annotation_replaces_the_list():
    """BackendTrafficPolicyBuilder.Build: the annotation is split on commas and trimmed."""
    obj = isvc(annotations={"ome.io/ingress-consistent-hash-headers": " x-session-id , x-tenant "})
    policy = render(obj, config(consistent_hash_headers=("x-routing-key",)))[-1]
    assert policy["spec"]["loadBalancer"]["consistentHash"]["headers"] == [{"name": "x-session-id"},
                                                                           {"name": "x-tenant"}]


@pytest.mark.parametrize("spec_extra,annotations,what", [
    ({"traffic": {"algorithm": "RoundRobin"}}, None, "spec.traffic.algorithm"),
    (None, {"ome.io/circuit-breaker-max-connections": "10"}, "the annotation ome.io/circuit-breaker-max-connections"),
    (None, {"ome.io/btp.retry.numRetries": "3"}, "the annotation ome.io/btp.retry.numRetries")])
def test_traffic_intent_replaces_the_default_policy(spec_extra, annotations, what):
    """TestGatewayAPIStrategy_Reconcile_GateOnTrafficIntent: with traffic intent the strategy writes no default
    policy (the traffic reconciler owns it, and omerender does not render that one)."""
    report = Report()
    objects = render(isvc(spec_extra=spec_extra, annotations=annotations), config(), report=report)
    assert [o["kind"] for o in objects] == ["HTTPRoute", "HTTPRoute"]
    assert [m.text for m in report.messages] == [
        f"{what} declares traffic intent: OME's traffic reconciler then writes the BackendTrafficPolicy test-isvc in "
        f"place of the default one, and omerender renders neither"]


def test_empty_traffic_is_no_intent():
    """traffic ResolvedIntent.HasIntent: only algorithm, consistentHash or endpointOverride declare intent."""
    assert render(isvc(spec_extra={"traffic": {}}), config())[-1]["kind"] == "BackendTrafficPolicy"


# ---------------------------------------------------------------- annotations (ResolveIngressConfig)

def test_disable_creation_annotation():
    """utils.ResolveIngressConfig: ``"true"`` turns ingress creation off, any other value on."""
    on, off = config(), config(disable_ingress_creation=True)
    assert render(isvc(annotations={"ome.io/ingress-disable-creation": "true"}), on) == []
    assert render(isvc(annotations={"ome.io/ingress-disable-creation": "yes"}), off) != []
    assert not external_service_wanted(isvc(annotations={"ome.io/ingress-disable-creation": "false"}), off)


def test_domain_and_template_annotations():
    obj = isvc(annotations={"ome.io/ingress-domain": "internal.example.com",
                            "ome.io/ingress-domain-template": "{{ .Name }}-{{ .Namespace }}.{{ .IngressDomain }}"})
    assert ingress_rules(render(obj, config(GO_RAW)))[0][0] == "test-isvc-default.internal.example.com"
    assert by_name(render(obj, config()))["test-isvc"]["spec"]["hostnames"] == ["llm.internal.example.com"]


def test_domain_template_reads_labels_and_annotations():
    obj = isvc(labels={"team": "search"}, annotations={"zone": "eu"})
    cfg = config(GO_RAW, domain_template='{{.Name}}.{{.Labels.team}}.{{index .Annotations "zone"}}.{{.IngressDomain}}')
    assert ingress_rules(render(obj, cfg))[0][0] == "test-isvc.search.eu.example.com"


def test_scheme_and_prefix_annotations():
    """gateway-host-schemes.md, Override the scheme for one service."""
    own = by_name(render(isvc(annotations={"ome.io/ingress-per-isvc-subdomain": "true"}), config()))
    assert own["test-isvc"]["spec"]["hostnames"] == ["test-isvc.default.example.com"]
    shared = by_name(render(isvc(annotations={"ome.io/ingress-per-isvc-subdomain": "True",
                                              "ome.io/ingress-shared-host-prefix": "experimental"}),
                            config(per_isvc_subdomain=True)))
    assert shared["test-isvc"]["spec"]["hostnames"] == ["experimental.example.com"]
    bare = by_name(render(isvc(annotations={"ome.io/ingress-shared-host-prefix": ""}), config()))
    assert bare["test-isvc"]["spec"]["hostnames"] == ["example.com"]


def test_additional_gateways_annotation():
    """multiple-gateways.md, Override the gateways for one service: the annotation replaces the list, ``[]``
    removes them all; keys match case-insensitively (Go's encoding/json)."""
    cfg = config(additional_ingress_gateways=(GatewaySpec("gw/ext", "ext.example.com", "external"),))
    assert len(by_name(render(isvc(), cfg))["test-isvc"]["spec"]["parentRefs"]) == 2
    none = by_name(render(isvc(annotations={"ome.io/ingress-additional-gateways": "[]"}), cfg))
    assert len(none["test-isvc"]["spec"]["parentRefs"]) == 1
    value = '[{"OmeIngressGateway": "gw/other", "ingressDomain": "other.example.com"}]'
    other = by_name(render(isvc(annotations={"ome.io/ingress-additional-gateways": value}), cfg))["test-isvc"]
    assert other["spec"]["hostnames"] == ["llm.example.com", "llm.other.example.com"]
    assert other["spec"]["parentRefs"][1]["name"] == "other"


def test_malformed_additional_gateways_annotation_is_ignored_with_a_warning():
    """multiple-gateways.md: OME ignores a malformed value without an error; omerender says so."""
    report = Report()
    obj = isvc(annotations={"ome.io/ingress-additional-gateways": '{"omeIngressGateway": "gw/x"}'})
    top = by_name(render(obj, config(), report=report))["test-isvc"]
    assert len(top["spec"]["parentRefs"]) == 1
    assert [m.text for m in report.messages] == [
        "ome.io/ingress-additional-gateways: a JSON object, not an array; OME ignores the annotation and keeps the "
        "cluster's additionalIngressGateways: write a JSON array such as "
        '[{"omeIngressGateway": "gateway-ns/gateway", "ingressDomain": "example.com"}]']


def test_misspelt_gateway_key_and_annotation_are_named():
    report = Report()
    obj = isvc(annotations={"ome.io/ingress-additional-gateways": '[{"gateway": "gw/x", "ingressDomain": "x.io"}]',
                            "ome.io/ingress-domian": "example.org"})
    with pytest.raises(OmeError) as err:
        render(obj, config(), report=report)
    assert [m.text for m in report.messages] == [
        'annotation ome.io/ingress-domian is not one OME reads, and has no effect; did you mean '
        '"ome.io/ingress-domain", "ome.io/ingress-domain-template" or "ome.io/ingress-gateway"?',
        'ome.io/ingress-additional-gateways: entry 0: unknown key "gateway", which OME ignores']
    assert err.value.text == ("HTTPRoutes need a Gateway, and the annotation ome.io/ingress-additional-gateways[0] "
                              "is empty: name it as <namespace>/<name>, such as envoy-gateway-system/ome-gateway")


def test_gateway_without_a_slash_is_its_own_namespace():
    """multiple-gateways.md: a gateway without a slash, like external-gateway, is the Gateway external-gateway in
    the namespace external-gateway (gatewaysForRoute splits on "/")."""
    top = by_name(render(isvc(), config(ome_ingress_gateway="external-gateway")))["test-isvc"]
    assert top["spec"]["parentRefs"][0]["namespace"] == top["spec"]["parentRefs"][0]["name"] == "external-gateway"


def test_route_labels_and_annotations_are_filtered():
    """httproute_builder.go buildHTTPRouteResource: ServiceAnnotationDisallowedList and
    RevisionTemplateLabelDisallowedList."""
    obj = isvc(labels={"team": "a", "networking.knative.dev/visibility": "cluster-local"},
               annotations={"ome.io/rollout-promote": "abc", "kubectl.kubernetes.io/last-applied-configuration": "{}",
                            "internal.ome.io/storage-initializer-sourceuri": "s3://x", "example.com/keep": "yes"})
    top = by_name(render(obj, config()))["test-isvc"]
    assert top["metadata"] == {"name": "test-isvc", "namespace": "default", "labels": {"team": "a"},
                               "annotations": {"example.com/keep": "yes"}}


# ---------------------------------------------------------------- errors

def error_of(obj: Obj, cfg: IngressConfig) -> OmeError:
    with pytest.raises(OmeError) as err:
        render(obj, cfg)
    return err.value


def test_empty_gateway_is_an_error():
    """ingress.md: the chart leaves omeIngressGateway empty, and the API server rejects HTTPRoutes without it."""
    assert error_of(isvc(), config(ome_ingress_gateway="")).text == (
        "HTTPRoutes need a Gateway, and ingress.omeIngressGateway in the cluster configuration is empty: name it as "
        "<namespace>/<name>, such as envoy-gateway-system/ome-gateway")


def test_gateway_named_twice_is_an_error():
    """The HTTPRoute CRD refuses two parentRefs to one Gateway without a sectionName or port."""
    cfg = config(additional_ingress_gateways=(GatewaySpec("istio-system/gateway", "other.example.com"),))
    assert error_of(isvc(), cfg).text == (
        "the Gateway istio-system/gateway is named twice, by ingress.omeIngressGateway in the cluster configuration "
        "and by ingress.additionalIngressGateways[0] in the cluster configuration; an HTTPRoute names each Gateway "
        "once (the API server refuses it otherwise): remove one")


def test_too_many_gateways_is_an_error():
    value = "[" + ",".join(f'{{"omeIngressGateway": "gw/g{i}", "ingressDomain": "d{i}.io"}}' for i in range(16)) + "]"
    err = error_of(isvc(annotations={"ome.io/ingress-additional-gateways": value}), config())
    assert err.text == ("the InferenceService's routes would attach to 17 Gateways, one hostname each, and an "
                        "HTTPRoute has at most 16 hostnames: list fewer additional gateways")


def test_invalid_domain_from_the_template_annotation():
    err = error_of(isvc(annotations={"ome.io/ingress-domain-template": "{{.Name}}_{{.Namespace}}"}), config(GO_RAW))
    assert err.text.startswith('invalid domain name "test-isvc_default" rendered from the annotation '
                               'ome.io/ingress-domain-template ("{{.Name}}_{{.Namespace}}"): a lowercase RFC 1123 '
                               'subdomain must consist of')
    assert err.field == "metadata.annotations.ome.io/ingress-domain-template"


def test_domain_of_one_segment_is_an_error():
    err = error_of(isvc(), config(GO_RAW, domain_template="{{.Name}}"))
    assert err.text == ('invalid domain name "test-isvc" rendered from ingress.domainTemplate in the cluster '
                        'configuration '
                        '("{{.Name}}"): should be a domain with at least two segments separated by dots')


def test_unsupported_template_action_is_an_error():
    err = error_of(isvc(), config(GO_RAW, domain_template="{{if .Name}}x{{end}}.example.com"))
    assert err.text.startswith("invalid placeholder in ingress.domainTemplate in the cluster configuration: ")
    err = error_of(isvc(), config(GO_RAW, domain_template="{{.Domain}}"))
    assert err.text.endswith("unknown field .Domain; the fields are .Name, .Namespace, .IngressDomain, .Labels and "
                             ".Annotations")


def test_invalid_shared_host_is_an_error():
    err = error_of(isvc(annotations={"ome.io/ingress-domain": "Example.com"}), config())
    assert err.text.startswith('the HTTPRoute hostname "llm.Example.com" (the shared host: sharedHostPrefix "llm", '
                               'a dot and the domain "Example.com" of the annotation ome.io/ingress-domain) is not a '
                               'valid hostname: a lowercase RFC 1123 subdomain')


@pytest.mark.parametrize("value", [-1, 100_000, "30", True])
def test_bad_timeout_is_an_error(value):
    err = error_of(isvc(timeouts={"engine": value}), config())
    assert err.field == "spec.engine.timeoutSeconds"
    assert ("is not a request timeout an HTTPRoute takes: it must be a whole number of seconds from 0 to 99999"
            in err.text)


def test_empty_hash_header_is_an_error():
    err = error_of(isvc(annotations={"ome.io/ingress-consistent-hash-headers": "a,,b"}), config())
    assert err.text.startswith("ome.io/ingress-consistent-hash-headers: header 2 of the comma-separated list is empty")


def test_long_name_is_an_error_when_routes_are_on():
    """ingress.md: keep InferenceService names to 56 characters, or 55 with a decoder; longer, the routes point at
    Services that don't exist (OME names them <isvc>-<component> whole, the Services are shortened)."""
    name = "a" * 57
    obj = isvc(name=name)
    routes = [ComponentRoute("engine", "truncated-engine", 8080)]
    with pytest.raises(OmeError) as err:
        ingress_objects(obj, routes, config(), Report())
    assert err.value.text == (f'the InferenceService name is 57 characters: OME\'s ingress routes send requests to the '
                              f'Service "{name}-engine", but Service names have at most 63 characters and the engine '
                              f'Service is "truncated-engine"; with ingress creation on, keep the name to 56 '
                              f'characters')
    assert ingress_objects(obj, routes, config(disable_ingress_creation=True), Report()) == []


def test_hostile_domain_template_is_bounded():
    """A 1 MB template from an annotation is refused by the placeholder engine's limits, not expanded."""
    template = "{{.Name}}" * 200_000
    err = error_of(isvc(annotations={"ome.io/ingress-domain-template": template}), config(GO_RAW))
    assert err.text.startswith("invalid placeholder in the annotation ome.io/ingress-domain-template: ")


def test_hostile_additional_gateways_annotation_is_bounded():
    """A 1 MB annotation of gateways with unknown keys: one warning per entry a route can hold, then the error."""
    entry = '{"omeIngressGateway": "gw/g", "ingressDomain": "d.io", "x": 1}'
    value = "[" + ",".join([entry] * 16_000) + "]"
    report = Report()
    with pytest.raises(OmeError) as err:
        render(isvc(annotations={"ome.io/ingress-additional-gateways": value}), config(), report=report)
    assert len(report.messages) == 16
    assert err.value.text.startswith("the InferenceService's routes would attach to 16001 Gateways")
