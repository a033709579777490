"""Hostnames: ``domainTemplate`` rendered over the InferenceService, and the shared Gateway API host.

Source: OME v1.3 ``reconcilers/ingress/services`` ``GenerateDomainName`` (the template sees ``.Name``,
``.Namespace``, ``.IngressDomain``, ``.Annotations`` and ``.Labels``; the result must be a fully qualified
domain name) and ``builders/httproute_builder.go`` ``gatewayHostnameForDomain`` (commit 58a57f25); docs
``guides/networking/gateway-host-schemes.md``. The template is a Go text/template from the input: it is expanded
by the bounded placeholder engine (no ``if``/``range``/functions but ``index``), counted against the render's
budget.
"""
from __future__ import annotations

from omerender.errors import OmeError
from omerender.kube.apirules import dns1123_label, dns1123_subdomain, shown
from ..workloads.placeholders import expand_template
from .overrides import DOMAIN, DOMAIN_TEMPLATE, Effective, Gateway, annotations_of

TEMPLATE_FIELDS = {"Name": "name", "Namespace": "namespace", "IngressDomain": "ingressDomain"}
WILDCARD = "*."


def describe(source: str, eff: Effective) -> str:
    """A config field or annotation as messages name it: ``ingress.<field> in <where the config came from>``."""
    return source if source.startswith("the annotation") else f"ingress.{source} in {eff.origin}"


def template_host(name: str, meta: dict, namespace: str, eff: Effective, domain: str) -> str:
    """``domainTemplate`` with ``.Name`` = ``name`` (the InferenceService's, or a component Service's for the
    Ingress's component hosts) and ``.IngressDomain`` = ``domain``."""
    annotations = annotations_of(meta)
    from_annotation = bool(annotations.get(DOMAIN_TEMPLATE))
    where = f"the annotation {DOMAIN_TEMPLATE}" if from_annotation else describe("domainTemplate", eff)
    field = f"metadata.annotations.{DOMAIN_TEMPLATE}" if from_annotation else None
    values = {"name": name, "namespace": namespace, "ingressDomain": domain,
              "labels": meta.get("labels") or {}, "annotations": annotations}
    host = expand_template(eff.domain_template, values, field, TEMPLATE_FIELDS, where)
    problem = fqdn_problem(host)
    if problem:
        raise OmeError(f'invalid domain name "{shown(host)}" rendered from {where} ("{shown(eff.domain_template)}"): '
                       f'{problem}', field=field)
    return host


def fqdn_problem(host: str) -> str | None:
    """What ``IsFullyQualifiedDomainName`` finds wrong, and a final dot, which no route or Ingress host may have."""
    if not host:
        return "it is empty"
    if host.endswith("."):
        return "a hostname of an Ingress or HTTPRoute may not end with a dot"
    problems = dns1123_subdomain(host)
    if problems:
        return "; ".join(problems)
    labels = host.split(".")
    if len(labels) < 2:
        return "should be a domain with at least two segments separated by dots"
    for label in labels:
        if dns1123_label(label):
            return f'the segment "{label}": {"; ".join(dns1123_label(label))}'
    return None


def route_host(name: str, meta: dict, namespace: str, eff: Effective, gateway: Gateway) -> str:
    """The HTTPRoute hostname on one Gateway (``gatewayHostnameForDomain``)."""
    if eff.per_isvc_subdomain:
        # GenerateDomainName resolves the annotations again, so ome.io/ingress-domain wins over every gateway's domain
        return template_host(name, meta, namespace, eff, annotations_of(meta).get(DOMAIN)
                             or gateway.domain)
    host = f"{eff.shared_host_prefix}.{gateway.domain}" if eff.shared_host_prefix else gateway.domain
    bare = host[len(WILDCARD):] if host.startswith(WILDCARD) else host
    problems = dns1123_subdomain(bare) if bare else ["it is empty"]
    if problems:
        parts = (f'sharedHostPrefix "{shown(eff.shared_host_prefix)}", a dot and ' if eff.shared_host_prefix else "")
        raise OmeError(f'the HTTPRoute hostname "{shown(host)}" (the shared host: {parts}the domain '
                       f'"{shown(gateway.domain)}" of {describe(gateway.domain_source, eff)}) is not a valid hostname: '
                       f'{"; ".join(problems)}')
    return host
