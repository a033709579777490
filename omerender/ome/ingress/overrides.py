"""The ingress settings in effect for one InferenceService: the cluster's ``ingress`` config with the
InferenceService's ``ome.io/ingress-*`` annotations applied, and the gateways its HTTPRoutes attach to.

Source: OME v1.3 ``pkg/controller/v1beta1/inferenceservice/utils`` ``ResolveIngressConfig`` and
``reconcilers/ingress/builders/httproute_builder.go`` ``resolvedGateways`` (commit 58a57f25); docs
``guides/networking/configure-ingress.md`` (Per-service overrides) and ``multiple-gateways.md``.
"""
from __future__ import annotations

from dataclasses import dataclass

from omerender.errors import OmeError, Report
from omerender.gorules.gojson import GoJSONError, loads
from omerender.gorules.text import fold, trim_space
from omerender.suggest import did_you_mean
from ..cluster.settings import IngressConfig

PREFIX = "ome.io/ingress-"
UNKNOWN_NAMED = 3
MAX_HINTS = 4096
_HINTS: dict[tuple[str, tuple[str, ...]], str] = {}  # (misspelt key, the names) -> its "did you mean"
DISABLE_CREATION = PREFIX + "disable-creation"
DOMAIN = PREFIX + "domain"
DOMAIN_TEMPLATE = PREFIX + "domain-template"
URL_SCHEME = PREFIX + "url-scheme"
GATEWAY = PREFIX + "gateway"
ADDITIONAL_GATEWAYS = PREFIX + "additional-gateways"
PER_ISVC_SUBDOMAIN = PREFIX + "per-isvc-subdomain"
SHARED_HOST_PREFIX = PREFIX + "shared-host-prefix"
CONSISTENT_HASH_HEADERS = PREFIX + "consistent-hash-headers"
# Read by OME but with no effect on the objects it writes (Istio and the older ingress paths).
IGNORED = (PREFIX + "additional-domains", PREFIX + "path-template", PREFIX + "disable-istio-virtualhost")
KNOWN = (DISABLE_CREATION, DOMAIN, DOMAIN_TEMPLATE, URL_SCHEME, GATEWAY, ADDITIONAL_GATEWAYS, PER_ISVC_SUBDOMAIN,
         SHARED_HOST_PREFIX, CONSISTENT_HASH_HEADERS, *IGNORED)
GATEWAY_KEYS = {fold("omeIngressGateway"): "gateway", fold("ingressDomain"): "domain", fold("class"): "gateway_class"}
GATEWAY_KEY_NAMES = ("omeIngressGateway", "ingressDomain", "class")
JSON_TYPES = {dict: "object", str: "string", int: "number", float: "number", bool: "boolean"}
MAX_NAMED = 16  # an HTTPRoute has at most 16 hostnames, one per Gateway


@dataclass(frozen=True)
class Gateway:
    """One Gateway the routes attach to (Go ``IngressGatewaySpec``), and where it was configured."""

    gateway: str  # "namespace/name"
    domain: str
    gateway_class: str = ""
    gateway_source: str = "omeIngressGateway"  # the config field or annotation, for messages
    domain_source: str = "ingressDomain"


@dataclass(frozen=True)
class Effective:
    """Go's resolved ``IngressConfig``: the fields that shape the objects, after the annotations."""

    disable_creation: bool
    domain: str
    domain_template: str
    gateway: str
    per_isvc_subdomain: bool
    shared_host_prefix: str
    ingress_class_name: str | None
    default_timeout: int | None
    hash_headers: tuple[str, ...]
    gateways: tuple[Gateway, ...]  # primary first
    origin: str  # where the cluster's config came from, for messages


def annotations_of(meta: dict) -> dict:
    return meta.get("annotations") or {}


def creation_disabled(annotations: dict, config: IngressConfig) -> bool:
    """``disableIngressCreation``; the annotation, when present, wins: ``"true"`` is off, any other value on."""
    if DISABLE_CREATION in annotations:
        return annotations[DISABLE_CREATION] == "true"
    return bool(config.disable_ingress_creation)


def resolve(meta: dict, namespace: str, config: IngressConfig, report: Report, origin: str) -> Effective:
    annotations = annotations_of(meta)

    def nonempty(key: str, default: str) -> str:
        return annotations.get(key) or default

    gateway = nonempty(GATEWAY, config.ome_ingress_gateway)
    domain = nonempty(DOMAIN, config.ingress_domain)
    prefix = annotations[SHARED_HOST_PREFIX] if SHARED_HOST_PREFIX in annotations else config.shared_host_prefix
    per_isvc = (annotations[PER_ISVC_SUBDOMAIN] == "true" if PER_ISVC_SUBDOMAIN in annotations
                else bool(config.per_isvc_subdomain))
    primary = Gateway(gateway, domain, config.ome_ingress_gateway_class,
                      _source(annotations, GATEWAY, "omeIngressGateway"), _source(annotations, DOMAIN, "ingressDomain"))
    additional = _additional(annotations, config, report)
    namespaced = (config.namespace_ingress_gateways or {}).get(namespace)
    if namespaced is not None:
        if GATEWAY not in annotations and namespaced.primary.gateway:
            spec = namespaced.primary
            where = f"namespaceIngressGateways[{namespace}].primary"
            primary = Gateway(spec.gateway, spec.domain, spec.gateway_class, where, where)
        if ADDITIONAL_GATEWAYS not in annotations and namespaced.additional is not None:
            additional = _gateways(namespaced.additional, f"namespaceIngressGateways[{namespace}].additional")
    return Effective(
        disable_creation=creation_disabled(annotations, config), domain=domain,
        domain_template=nonempty(DOMAIN_TEMPLATE, config.domain_template), gateway=gateway,
        per_isvc_subdomain=per_isvc, shared_host_prefix=prefix, ingress_class_name=config.ingress_class_name,
        default_timeout=config.default_route_timeout_seconds, hash_headers=_hash_headers(annotations, config),
        gateways=(primary, *additional), origin=origin)


def _source(annotations: dict, key: str, config_field: str) -> str:
    return f"the annotation {key}" if annotations.get(key) else config_field


def _gateways(specs, where: str) -> tuple[Gateway, ...]:
    return tuple(Gateway(g.gateway, g.domain, g.gateway_class, f"{where}[{i}]", f"{where}[{i}]")
                 for i, g in enumerate(specs or ()))


def warn_unknown(annotations: dict, config: IngressConfig, report: Report) -> None:
    """A warning for each ``ome.io/ingress-*`` annotation OME does not read, with the nearest one it reads; past
    :data:`UNKNOWN_NAMED` of them, one warning for the rest (an object may hold thousands)."""
    unknown = sorted(k for k in annotations if k.startswith(PREFIX) and k not in KNOWN)
    for key in unknown[:UNKNOWN_NAMED]:
        hint = _hint(key, KNOWN, config)
        report.warn(f"annotation {key} is not one OME reads, and has no effect{hint}",
                    field=f"metadata.annotations.{key}", code="unknown-annotation")
    rest = unknown[UNKNOWN_NAMED:]
    if rest:
        named = ", ".join(rest[:UNKNOWN_NAMED]) + (f" and {len(rest) - UNKNOWN_NAMED:,} more"
                                                    if len(rest) > UNKNOWN_NAMED else "")
        report.warn(f"annotations {named} are not ones OME reads either, and have no effect",
                    field=f"metadata.annotations.{rest[0]}", code="unknown-annotation")


def _hint(key: str, names, config: IngressConfig) -> str:
    """``did_you_mean`` for an annotation (or annotation JSON key) against a fixed list of ``names``. The
    comparisons are charged to the render's cluster configuration, not to one InferenceService, so that the budget
    of suggest.py holds for the whole render; a hint found is kept, so the same misspelling in 10,000
    InferenceServices is compared once."""
    hint = _HINTS.get((key, names))
    if hint is None:
        hint = did_you_mean(key, lambda: names, len(names), config)
        if hint and len(_HINTS) < MAX_HINTS:
            _HINTS[(key, names)] = hint
    return hint


def _additional(annotations: dict, config: IngressConfig, report: Report) -> tuple[Gateway, ...]:
    configured = _gateways(config.additional_ingress_gateways, "additionalIngressGateways")
    value = annotations.get(ADDITIONAL_GATEWAYS)
    if not value:
        return configured
    try:
        parsed = _parse_gateways(value, config, report)
    except ValueError as err:
        report.warn(f"{ADDITIONAL_GATEWAYS}: {err}; OME ignores the annotation and keeps the cluster's "
                    f"additionalIngressGateways: write a JSON array such as "
                    f'[{{"omeIngressGateway": "gateway-ns/gateway", "ingressDomain": "example.com"}}]',
                    field=f"metadata.annotations.{ADDITIONAL_GATEWAYS}", code="invalid-additional-gateways")
        return configured
    return parsed


def _parse_gateways(value: str, config: IngressConfig, report: Report) -> tuple[Gateway, ...]:
    """Go's ``json.Unmarshal`` into ``[]IngressGatewaySpec``: JSON as Go reads it (:mod:`omerender.gorules.gojson`:
    no NaN, a lone surrogate is U+FFFD, 10,000 levels deep at most), keys match under strings.EqualFold, unknown
    keys are dropped (we warn), ``null`` is no gateways, a value of the wrong type fails the whole annotation."""
    try:
        data = loads(value)
    except GoJSONError as err:
        raise ValueError(f"not valid JSON ({err})") from None
    if data is None:
        return ()
    if not isinstance(data, list):
        raise ValueError(f"a JSON {JSON_TYPES.get(type(data), 'value')}, not an array")
    gateways = []
    for i, entry in enumerate(data):
        quiet = i >= MAX_NAMED  # past what a route can hold (an error later): no warning per entry
        if entry is None:
            entry = {}
        if not isinstance(entry, dict):
            raise ValueError(f"entry {i} is not an object")
        fields = {}
        for key, item in entry.items():
            name = GATEWAY_KEYS.get(fold(key))
            if name is None and quiet:
                continue
            if name is None:
                hint = _hint(key, GATEWAY_KEY_NAMES, config)
                report.warn(f'{ADDITIONAL_GATEWAYS}: entry {i}: unknown key "{key}", which OME ignores{hint}',
                            field=f"metadata.annotations.{ADDITIONAL_GATEWAYS}", code="unknown-gateway-key")
                continue
            if item is not None and not isinstance(item, str):
                raise ValueError(f'entry {i}: "{key}" is not a string')
            fields[name] = item or ""
        where = f"the annotation {ADDITIONAL_GATEWAYS}[{i}]"
        gateways.append(Gateway(fields.get("gateway", ""), fields.get("domain", ""), fields.get("gateway_class", ""),
                                where, where))
    return tuple(gateways)


def _hash_headers(annotations: dict, config: IngressConfig) -> tuple[str, ...]:
    """Builders' BackendTrafficPolicy: the annotation, split on commas and trimmed (strings.TrimSpace), replaces the
    config's list."""
    if CONSISTENT_HASH_HEADERS not in annotations:
        return tuple(config.consistent_hash_headers or ())
    headers = tuple(trim_space(h) for h in annotations[CONSISTENT_HASH_HEADERS].split(","))
    for i, header in enumerate(headers):
        if not header:
            raise OmeError(f"{CONSISTENT_HASH_HEADERS}: header {i + 1} of the comma-separated list is empty; OME "
                           f"would write a BackendTrafficPolicy with a header without a name, which Envoy Gateway "
                           f"refuses", field=f"metadata.annotations.{CONSISTENT_HASH_HEADERS}")
    return headers
