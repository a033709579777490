"""The cluster's metric providers as an AutoscalerPolicy's endpoint triggers meet them: a trigger's ``providerRef``
names a provider bound in inferenceservice-config's top-level ``metricProviders`` key (or, while that key is absent,
``autoscalerPolicy.metricProviders``: the cluster package reads both); its ``serverAddress``
becomes the trigger's, and a provider with ``authSecretRef`` gets a KEDA TriggerAuthentication in the consuming
namespace that the trigger references (render.md §9.2.1).

Source: ome-projects/ome pkg/controller/v1beta1/inferenceservice/reconcilers/autoscaler/policy.go
(ProviderBindingsFromConfig, TriggerAuthenticationName, EnsureTriggerAuthentications) and
pkg/autoscalerpolicy/render/render.go (ProviderBinding, 2af192b3). OME names the TriggerAuthentication after the
provider alone, gives it no labels or owner, and creates it once per namespace for every InferenceService there whose
policy-rendered trigger uses the provider: one object shared by them all, never deleted by OME.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..cluster.settings import ClusterConfig, SecretKeyRef

API_VERSION = "keda.sh/v1alpha1"
KIND = "TriggerAuthentication"
NAME_PREFIX = "ome-metric-provider-"
BEARER_PARAMETER = "bearerToken"
AUTH_MODE = "bearer"   # the binding owns auth wholesale: render.go fixes the trigger's authModes


@dataclass(frozen=True)
class Binding:
    """render.ProviderBinding: the trigger's server address, and the TriggerAuthentication it references ("" for
    a provider without ``authSecretRef``)."""

    server_address: str
    authentication_name: str = ""


def authentication_name(provider: str) -> str:
    """TriggerAuthenticationName: deterministic per provider, so a render needs no cluster read."""
    return NAME_PREFIX + provider


class Bindings:
    """ProviderBindingsFromConfig, looked up one provider at a time (a trigger costs one lookup however many
    providers the cluster binds)."""

    def __init__(self, config: ClusterConfig):
        self._config = config

    def get(self, provider: str) -> Binding | None:
        bound = self._config.autoscaler_policy.metric_providers.get(provider)
        if bound is None:
            return None
        auth = authentication_name(provider) if bound.auth_secret_ref is not None else ""
        return Binding(bound.server_address, auth)

    def unbound_hint(self, provider: str) -> str:
        """Where to bind ``provider``, appended to OME's "not bound on this cluster"."""
        if self._config.from_chart:
            return (" (without an inferenceservice-config among the inputs omerender uses the Helm chart's, which "
                    "binds no metric provider: add your cluster's ConfigMap, see "
                    "docs/how-to/cluster-config-and-ingress.md)")
        return (f" (bind it in {self._config.source}: data.metricProviders, with its serverAddress)")


def trigger_authentications(namespace: str, block: dict, config: ClusterConfig) -> list[dict]:
    """EnsureTriggerAuthentications: the TriggerAuthentication of each provider with ``authSecretRef`` that a
    policy-rendered ``block``'s triggers reference, once each, in trigger order."""
    providers = config.autoscaler_policy.metric_providers
    found: dict[str, dict] = {}
    for trigger in (block.get("keda") or {}).get("triggers") or []:
        name = (trigger.get("authenticationRef") or {}).get("name") or ""
        provider = providers.get(name[len(NAME_PREFIX):]) if name.startswith(NAME_PREFIX) else None
        if provider is not None and provider.auth_secret_ref is not None and name not in found:
            found[name] = trigger_authentication(namespace, name, provider.auth_secret_ref)
    return list(found.values())


def trigger_authentication(namespace: str, name: str, secret: SecretKeyRef) -> dict:
    """The object OME creates: the secret's key as the bearer token (OME never reads the Secret; KEDA does, from
    the consuming namespace)."""
    return {"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": name, "namespace": namespace},
            "spec": {"secretTargetRef": [{"parameter": BEARER_PARAMETER, "name": secret.name, "key": secret.key}]}}


def is_shared(obj: dict) -> bool:
    """A rendered object that several InferenceServices of a namespace write alike (written once)."""
    return obj.get("kind") == KIND and obj.get("apiVersion") == API_VERSION
