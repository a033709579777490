"""Each data key of ``inferenceservice-config`` parsed as OME v1.3's loader parses it: the same Go struct (as a
:class:`~omerender.gorules.gojson.GoType`), the same load-time defaults and validation, the same error texts.

Source: ome-projects/ome pkg/controller/v1beta1/controllerconfig/configmap.go at commit
4dfb96b1a473d68f5c0da4ccdc17b313069d59bb (parseIngressConfig, parseDeployConfig,
inferenceServicesConfigFromConfigMap) and pkg/validation's ValidatePodDisruptionBudget. Keys for features
omerender does not render (canaryAnalysis, lifecycle, coordination, ...) are never read, so never refused.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Callable

from omerender.kube.apirules import dns1123_label
from omerender.gorules import gojson
from omerender.gorules.gojson import (ANY, BOOL, INT, INT32, INT64, INT_OR_STRING, STRING, Decoded, GoJSONError,
                                      IntOrString, map_of, ptr, slice_of, struct)
from omerender.gorules.strconv import quote
from omerender.gorules.text import trim_space
from .settings import (AutoscalerPolicyConfig, BudgetPolicy, DeployConfig, GatewaySpec, IngressConfig, MetricProvider,
                       MetricsAggregatorConfig, NamespaceGateways, PodDisruptionBudgetConfig, PodMonitorConfig, RelabelConfig, ReplicaDefaults,
                       SecretKeyRef)

INGRESS, DEPLOY, POD_MONITOR = "ingress", "deploy", "podMonitor"
PDB, ACCELERATORS, AUTOSCALER_POLICY = "podDisruptionBudget", "acceleratorResources", "autoscalerPolicy"
METRICS_AGGREGATOR, METRIC_PROVIDERS = "metricsAggregator", "metricProviders"
MODEL_INIT, FINE_TUNED_ADAPTER, SERVING_SIDECAR = "modelInit", "fineTunedAdapter", "servingSidecar"
AGENT_KEYS = (MODEL_INIT, FINE_TUNED_ADAPTER, SERVING_SIDECAR)   # in the order the pod webhook reads them
KEYS = (INGRESS, DEPLOY, PDB, POD_MONITOR, ACCELERATORS, AUTOSCALER_POLICY,
        METRICS_AGGREGATOR, METRIC_PROVIDERS, *AGENT_KEYS)   # the data keys omerender reads

DEFAULT_DOMAIN_TEMPLATE = "{{ .Name }}.{{ .Namespace }}.{{ .IngressDomain }}"
DEFAULT_INGRESS_DOMAIN = "example.com"
DEFAULT_URL_SCHEME = "http"
DEFAULT_CONSISTENT_HASH_HEADERS = ("x-routing-key",)
NVIDIA_GPU = "nvidia.com/gpu"
RAW_DEPLOYMENT = "RawDeployment"

_GATEWAY = struct("controllerconfig.IngressGatewaySpec", ("omeIngressGateway", STRING), ("ingressDomain", STRING),
                  ("class", STRING))
INGRESS_TYPE = struct(
    "controllerconfig.IngressConfig",
    ("ingressGateway", STRING), ("ingressService", STRING), ("omeIngressGateway", STRING),
    ("omeIngressGatewayClass", STRING), ("ingressDomain", STRING), ("ingressClassName", ptr(STRING)),
    ("additionalIngressDomains", ptr(slice_of(STRING))), ("domainTemplate", STRING), ("urlScheme", STRING),
    ("pathTemplate", STRING), ("disableIstioVirtualHost", BOOL), ("disableIngressCreation", BOOL),
    ("enableGatewayAPI", BOOL), ("consistentHashHeaders", slice_of(STRING)), ("perISVCSubdomain", BOOL),
    ("sharedHostPrefix", STRING), ("additionalIngressGateways", slice_of(_GATEWAY)),
    ("defaultRouteTimeoutSeconds", ptr(INT64)),
    ("namespaceIngressGateways", map_of(struct("controllerconfig.NamespaceIngressGateway", ("primary", _GATEWAY),
                                               ("additional", slice_of(_GATEWAY))))),
)
_MAX_REPLICAS = struct("controllerconfig.ComponentMaxReplicasDefaults", ("engine", ptr(INT)), ("decoder", ptr(INT)),
                       ("router", ptr(INT)))
_STRATEGY = struct("controllerconfig.ComponentUpdateStrategyDefaults", ("type", STRING),
                   ("maxSurge", ptr(INT_OR_STRING)), ("maxUnavailable", ptr(INT_OR_STRING)))
DEPLOY_TYPE = struct(
    "controllerconfig.DeployConfig",
    ("defaultDeploymentMode", STRING),
    ("replicas", ptr(struct("controllerconfig.ReplicasDefaultsConfig", ("defaultMinReplicas", ptr(INT)),
                            ("defaultMaxReplicas", _MAX_REPLICAS)))),
    ("terminationGracePeriodSeconds", ptr(INT64)), ("minReadySeconds", ptr(INT32)),
    ("updateStrategy", ptr(struct("controllerconfig.UpdateStrategyDefaultsConfig", ("router", ptr(_STRATEGY)),
                                  ("engine", ptr(_STRATEGY)), ("decoder", ptr(_STRATEGY))))),
)
_RELABEL = struct("controllerconfig.RelabelConfig", ("sourceLabels", slice_of(STRING)), ("separator", STRING),
                  ("targetLabel", STRING), ("regex", STRING), ("replacement", STRING), ("action", STRING))
POD_MONITOR_TYPE = struct("controllerconfig.PodMonitorConfig", ("labels", map_of(STRING)),
                          ("relabelings", slice_of(_RELABEL)), ("metricRelabelings", slice_of(_RELABEL)))
_POLICY = struct("controllerconfig.PodDisruptionBudgetPolicy", ("minAvailable", ptr(INT_OR_STRING)),
                 ("maxUnavailable", ptr(INT_OR_STRING)))
PDB_TYPE = struct("controllerconfig.PodDisruptionBudgetConfig", ("rawDeployment", ptr(_POLICY)),
                  ("omeNative", ptr(_POLICY)))
ACCELERATORS_TYPE = slice_of(STRING)
_SECRET_KEY = struct("v1.SecretKeySelector", ("name", STRING), ("key", STRING), ("optional", ptr(BOOL)))
AUTOSCALER_POLICY_TYPE = struct(
    "controllerconfig.AutoscalerPolicyConfig",
    ("metricProviders", map_of(struct("controllerconfig.AutoscalerPolicyMetricProvider", ("serverAddress", STRING),
                                      ("authSecretRef", ptr(_SECRET_KEY))))),
    ("preflight", struct("controllerconfig.AutoscalerPolicyPreflightConfig", ("memberGetTimeoutSeconds", INT32),
                         ("skewDeadlineSeconds", INT32))),
)
# The top-level key (v1.3 docs: reference/rollouts/canary-analysis.md "Metric provider bindings"): the same
# bindings, with the plain-text headers canary queries send (KEDA's triggers get none from it).
METRIC_PROVIDERS_TYPE = map_of(struct("controllerconfig.MetricProvider", ("serverAddress", STRING),
                                      ("authSecretRef", ptr(_SECRET_KEY)), ("headers", map_of(STRING))))
DEFAULT_MEMBER_GET_TIMEOUT_SECONDS, DEFAULT_SKEW_DEADLINE_SECONDS = 5, 900
METRICS_AGGREGATOR_TYPE = struct("pod.MetricsAggregator", ("enableMetricAggregation", STRING),
                                 ("enablePrometheusScraping", STRING))
_OCI_AGENT = (("image", STRING), ("memoryRequest", STRING), ("memoryLimit", STRING), ("cpuRequest", STRING),
              ("cpuLimit", STRING), ("compartmentId", STRING), ("authType", STRING), ("region", STRING))
_VOLUME_MOUNT = struct("v1.VolumeMount", ("name", STRING), ("readOnly", BOOL), ("recursiveReadOnly", ptr(STRING)),
                       ("mountPath", STRING), ("subPath", STRING), ("mountPropagation", ptr(STRING)),
                       ("subPathExpr", STRING))
_ENV_VAR = struct("v1.EnvVar", ("name", STRING), ("value", STRING), ("valueFrom", ptr(ANY)))
# The pod webhook's OCI agent keys (pkg/webhook/admission/pod: model_init_injector.go, fine_tuned_adapter_injector.go,
# serving_sidecar_injector.go): each struct's json fields; EnvVar's valueFrom is decoded as any JSON value.
AGENT_TYPES = {
    MODEL_INIT: struct("pod.ModelInitInjector", *_OCI_AGENT, ("vaultId", STRING),
                       ("extraVolumeMounts", ptr(slice_of(_VOLUME_MOUNT))), ("extraEnvVars", ptr(slice_of(_ENV_VAR)))),
    FINE_TUNED_ADAPTER: struct("pod.FineTunedAdapterInjector", *_OCI_AGENT),
    SERVING_SIDECAR: struct("pod.ServingSidecarInjector", *_OCI_AGENT, ("realmDomainComponent", STRING)),
}
UPDATE_STRATEGIES = ("", "SurgeThenDrain", "RecreatePod", "InPlaceIfPossible", "InPlaceOnly")


class ConfigError(Exception):
    """A data key OME's loader refuses: ``text`` is OME's message, ``key`` the data key; ``offset``: for a JSON
    syntax error, where in the key's value the scanner stopped."""

    def __init__(self, key: str, text: str, offset: int | None = None):
        super().__init__(text)
        self.key, self.text, self.offset = key, text, offset


@dataclass
class Notes:
    """What a parse noticed that OME accepts silently: json paths per data key."""

    duplicates: list[tuple[str, str]] = field(default_factory=list)   # (key, json path)
    unknown: list[tuple[str, str]] = field(default_factory=list)
    folded: list[tuple[str, str, str]] = field(default_factory=list)  # (key, as written, field matched)
    fields: set[str] = field(default_factory=set)   # "<key>.<json path>" of every struct field the data sets
    odd: list[tuple[str, str]] = field(default_factory=list)   # (key, text): a value OME takes that cannot work
    near: dict[tuple[str, str], str] = field(default_factory=dict)   # (key, unknown path): the field it nearly names
    starts: dict[tuple[str, str], int] = field(default_factory=dict)  # (key, unknown path): where it starts

    def add(self, key: str, found: Decoded) -> None:
        self.near.update(((key, p), f) for p, f in found.near.items())
        self.starts.update(((key, p), at) for p, at in found.starts.items())
        self.duplicates.extend((key, p) for p in found.duplicates)
        self.unknown.extend((key, p) for p in found.unknown)
        self.folded.extend((key, a, b) for a, b in found.folded)


def _unmarshal(key: str, text: str, gotype, prefix: str, notes: Notes, form: str = "{prefix}: {err}") -> object:
    """json.Unmarshal of ``text`` into ``gotype``; errors as ``form`` words them (``<prefix>: <Go's error>``)."""
    found = Decoded()
    try:
        value = gojson.decode(gojson.scan(text), gotype, found)
    except GoJSONError as err:
        raise ConfigError(key, form.format(prefix=prefix, err=err), err.offset) from None
    notes.add(key, found)
    notes.fields.update(_paths(key, value, gotype))
    return value


def _paths(prefix: str, value, gotype) -> list[str]:
    """The json paths of the struct fields set in a decoded ``value`` (maps and lists are leaves)."""
    gotype = gotype.elem if gotype.kind == "ptr" else gotype
    if gotype.kind != "struct" or not isinstance(value, dict):
        return [prefix]
    found = [prefix]
    for name, ftype in gotype.fields:
        if name in value:
            found += _paths(f"{prefix}.{name}", value[name], ftype)
    return found


def _blank(text: str) -> bool:
    return trim_space(text) == ""


# ---------------------------------------------------------------- ingress (parseIngressConfig)

def parse_ingress(data: dict, notes: Notes) -> IngressConfig:
    raw: dict = {}
    if INGRESS in data:
        raw = _unmarshal(INGRESS, data[INGRESS], INGRESS_TYPE, "unable to parse ingress config json", notes)
        if raw is None:  # `null` leaves OME's pointer nil, and its loader then dereferences it
            raise ConfigError(INGRESS, "unable to parse ingress config json: null is no ingress config (OME's "
                                       "controller fails on it); remove the key or give an object")
        _validate_ingress(raw)
    return _ingress_config(raw)


def _validate_ingress(raw: dict) -> None:
    if not raw.get("ingressGateway") or not raw.get("ingressService"):
        raise ConfigError(INGRESS, "invalid ingress config - ingressGateway and ingressService are required")
    template = raw.get("pathTemplate") or ""
    if template:
        problem = _template_problem(template)
        if problem:
            raise ConfigError(INGRESS, f"invalid ingress config, unable to parse pathTemplate: {problem}")
        if not raw.get("ingressDomain"):
            raise ConfigError(INGRESS, "invalid ingress config - ingressDomain is required if pathTemplate is given")
    for path, value in _gateway_classes(raw):
        errs = dns1123_label(value) if value else []
        if errs:
            raise ConfigError(INGRESS, f'invalid ingress config - {path} {quote(value)} must be an RFC-1123 '
                                       f"label: {'; '.join(errs)}")


def _template_problem(template: str) -> str | None:
    """The one text/template parse error checked here: an action left open (the ingress builder parses the rest)."""
    pos = 0
    while True:
        start = template.find("{{", pos)
        if start < 0:
            return None
        end = template.find("}}", start + 2)
        if end < 0:
            line = template.count("\n", 0, start) + 1
            return f"template: path-template:{line}: unclosed action"
        pos = end + 2


def _gateway_classes(raw: dict):
    yield "omeIngressGatewayClass", raw.get("omeIngressGatewayClass") or ""
    for i, gateway in enumerate(raw.get("additionalIngressGateways") or []):
        yield f"additionalIngressGateways[{i}].class", gateway.get("class") or ""
    for namespace, entry in (raw.get("namespaceIngressGateways") or {}).items():
        quoted = quote(namespace)
        yield f"namespaceIngressGateways[{quoted}].primary.class", (entry.get("primary") or {}).get("class") or ""
        for i, gateway in enumerate(entry.get("additional") or []):
            yield f"namespaceIngressGateways[{quoted}].additional[{i}].class", gateway.get("class") or ""


def _gateway(raw: dict) -> GatewaySpec:
    return GatewaySpec(raw.get("omeIngressGateway", ""), raw.get("ingressDomain", ""), raw.get("class", ""))


def _ingress_config(raw: dict) -> IngressConfig:
    domains = raw.get("additionalIngressDomains")
    namespaces = {ns: NamespaceGateways(_gateway(entry.get("primary") or {}),
                                        None if entry.get("additional") is None
                                        else tuple(_gateway(g) for g in entry["additional"]))
                  for ns, entry in (raw.get("namespaceIngressGateways") or {}).items()}
    return IngressConfig(
        ingress_gateway=raw.get("ingressGateway", ""), ingress_service=raw.get("ingressService", ""),
        ome_ingress_gateway=raw.get("omeIngressGateway", ""),
        ome_ingress_gateway_class=raw.get("omeIngressGatewayClass", ""),
        ingress_domain=raw.get("ingressDomain") or DEFAULT_INGRESS_DOMAIN,
        ingress_class_name=raw.get("ingressClassName"),
        additional_ingress_domains=None if domains is None else tuple(domains),
        domain_template=raw.get("domainTemplate") or DEFAULT_DOMAIN_TEMPLATE,
        url_scheme=raw.get("urlScheme") or DEFAULT_URL_SCHEME,
        path_template=raw.get("pathTemplate", ""),
        disable_istio_virtual_host=raw.get("disableIstioVirtualHost", False),
        disable_ingress_creation=raw.get("disableIngressCreation", False),
        enable_gateway_api=raw.get("enableGatewayAPI", False),
        consistent_hash_headers=tuple(raw.get("consistentHashHeaders") or DEFAULT_CONSISTENT_HASH_HEADERS),
        per_isvc_subdomain=raw.get("perISVCSubdomain", False),
        shared_host_prefix=raw.get("sharedHostPrefix", ""),
        additional_ingress_gateways=tuple(_gateway(g) for g in raw.get("additionalIngressGateways") or []),
        default_route_timeout_seconds=raw.get("defaultRouteTimeoutSeconds"),
        namespace_ingress_gateways=MappingProxyType(namespaces),
    )


# ---------------------------------------------------------------- deploy (parseDeployConfig)

def parse_deploy(data: dict, notes: Notes) -> DeployConfig:
    if DEPLOY not in data:
        return DeployConfig()
    raw = _unmarshal(DEPLOY, data[DEPLOY], DEPLOY_TYPE, "unable to parse deploy config json", notes)
    if raw is None:
        raise ConfigError(DEPLOY, "unable to parse deploy config json: null is no deploy config (OME's controller "
                                  "fails on it); remove the key or give an object")
    mode = raw.get("defaultDeploymentMode", "")
    if mode == "":
        raise ConfigError(DEPLOY, "invalid deploy config, defaultDeploymentMode is required")
    if mode != RAW_DEPLOYMENT:
        raise ConfigError(DEPLOY, f"invalid deployment mode. Supported default mode is {RAW_DEPLOYMENT}")
    replicas = raw.get("replicas")
    if replicas is not None:
        _validate_replicas(replicas)
    grace = raw.get("terminationGracePeriodSeconds")
    if grace is not None and grace <= 0:
        raise ConfigError(DEPLOY, f"invalid deploy config, terminationGracePeriodSeconds must be > 0, got {grace}")
    ready = raw.get("minReadySeconds")
    if ready is not None and ready < 0:
        raise ConfigError(DEPLOY, f"invalid deploy config, minReadySeconds must be >= 0, got {ready}")
    _validate_strategies(raw.get("updateStrategy"))
    return DeployConfig(mode, _replica_defaults(replicas), grace, ready)


def _validate_replicas(replicas: dict) -> None:
    maxes = replicas.get("defaultMaxReplicas") or {}
    for name, value in (("defaultMinReplicas", replicas.get("defaultMinReplicas")),
                        ("defaultMaxReplicas.engine", maxes.get("engine")),
                        ("defaultMaxReplicas.decoder", maxes.get("decoder")),
                        ("defaultMaxReplicas.router", maxes.get("router"))):
        if value is not None and value <= 0:
            raise ConfigError(DEPLOY, f"invalid deploy config, replicas.{name} must be > 0, got {value}")


def _replica_defaults(replicas: dict | None) -> ReplicaDefaults | None:
    if replicas is None:
        return None
    maxes = replicas.get("defaultMaxReplicas") or {}
    return ReplicaDefaults(replicas.get("defaultMinReplicas"),
                           MappingProxyType({k: v for k, v in maxes.items() if v is not None}))


def _validate_strategies(strategies: dict | None) -> None:
    for component in ("router", "engine", "decoder"):
        entry = (strategies or {}).get(component)
        if entry is None:
            continue
        kind = entry.get("type", "")
        if kind not in UPDATE_STRATEGIES:
            raise ConfigError(DEPLOY, f'invalid deploy config, updateStrategy.{component}.type {quote(kind)} '
                                      f"is not a supported update strategy")
        for budget in ("maxSurge", "maxUnavailable"):
            value = entry.get(budget)
            if value is not None:
                _check_rollout_budget(component, budget, value)


def _check_rollout_budget(component: str, budget: str, value: IntOrString) -> None:
    """intstr.GetScaledValueFromIntOrPercent(value, 100, roundUp) must parse and be > 0."""
    if value.is_int:
        scaled = value.value
    else:
        match = re.fullmatch(r"(-?[0-9]+)%", value.value)
        if match is None:
            raise ConfigError(DEPLOY, f"invalid deploy config, updateStrategy.{component}.{budget} is not an integer "
                                      f"or percentage: invalid value for IntOrString: invalid type: string is not a "
                                      f"percentage")
        scaled = -(-int(match.group(1)) * 100 // 100)
    if scaled <= 0:
        raise ConfigError(DEPLOY, f'invalid deploy config, updateStrategy.{component}.{budget} must be > 0, got '
                                  f'"{value.value}": a zero budget denies every Instance and the rollout never starts')


# ---------------------------------------------------------------- podMonitor, acceleratorResources

def parse_pod_monitor(data: dict, notes: Notes) -> PodMonitorConfig:
    text = data.get(POD_MONITOR)
    if text is None or _blank(text):
        return PodMonitorConfig()
    raw = _unmarshal(POD_MONITOR, text, POD_MONITOR_TYPE, f'unable to parse "{POD_MONITOR}" config json', notes)
    raw = raw or {}

    def relabels(key: str) -> tuple[RelabelConfig, ...]:
        return tuple(RelabelConfig(tuple(r.get("sourceLabels") or ()), r.get("separator", ""),
                                   r.get("targetLabel", ""), r.get("regex", ""), r.get("replacement", ""),
                                   r.get("action", "")) for r in raw.get(key) or [])

    return PodMonitorConfig(MappingProxyType(dict(raw.get("labels") or {})), relabels("relabelings"),
                            relabels("metricRelabelings"))


def parse_accelerator_resources(data: dict, notes: Notes) -> tuple[str, ...]:
    """InferenceServicesConfig.AcceleratorResourceNames(): the list, or nvidia.com/gpu when absent or empty."""
    text = data.get(ACCELERATORS)
    names: list = []
    if text is not None and not _blank(text):
        names = _unmarshal(ACCELERATORS, text, ACCELERATORS_TYPE, f'unable to parse "{ACCELERATORS}" config json',
                           notes) or []
    return tuple(names) if names else (NVIDIA_GPU,)


# ---------------------------------------------------------------- podDisruptionBudget

def parse_pdb(data: dict, notes: Notes) -> PodDisruptionBudgetConfig:
    text = data.get(PDB)
    if text is None or _blank(text):
        return PodDisruptionBudgetConfig()
    prefix = f'unable to parse "{PDB}" config json'
    try:
        node, end = gojson.scan_prefix(text)
    except GoJSONError as err:
        raise ConfigError(PDB, f"{prefix}: {_stream_error(err)}", err.offset) from None
    _check_pdb_keys(node, prefix)
    found = Decoded()
    try:
        raw = gojson.decode(node, PDB_TYPE, found) or {}
    except GoJSONError as err:
        raise ConfigError(PDB, f"{prefix}: {err}") from None
    _check_trailing(text, end, prefix)
    notes.fields.update(_paths(PDB, raw, PDB_TYPE))
    policies = {}
    for mode in ("rawDeployment", "omeNative"):
        policy = raw.get(mode)
        if policy is not None:
            policies[mode] = _budget_policy(f"{PDB}.{mode}", policy)
    return PodDisruptionBudgetConfig(policies.get("rawDeployment"), policies.get("omeNative"))


def _stream_error(err: GoJSONError) -> str:
    """A json.Decoder reports input that ends inside a value as io.ErrUnexpectedEOF."""
    return "unexpected EOF" if str(err) == "unexpected end of JSON input" else str(err)


def _check_pdb_keys(node, prefix: str) -> None:
    """validatePodDisruptionBudgetJSONKeys: exact, case-sensitive keys, each once, policies objects or null."""
    if node is None:
        return
    if not isinstance(node, gojson.Obj):
        raise ConfigError(PDB, f"{prefix}: expected JSON object")
    _exact_keys(node, ("rawDeployment", "omeNative"), prefix, lambda value: _check_policy_keys(value, prefix))


def _check_policy_keys(node, prefix: str) -> None:
    if node is None:
        return
    if not isinstance(node, gojson.Obj):
        raise ConfigError(PDB, f"{prefix}: expected JSON object or null")
    _exact_keys(node, ("minAvailable", "maxUnavailable"), prefix, lambda value: None)


def _exact_keys(node: gojson.Obj, allowed: tuple, prefix: str, check: Callable) -> None:
    seen: set[str] = set()
    for key, value in node:
        if key in seen:
            raise ConfigError(PDB, f'{prefix}: json: duplicate field {quote(key)}')
        seen.add(key)
        if key not in allowed:
            raise ConfigError(PDB, f'{prefix}: json: unknown field {quote(key)}')
        check(value)


def _check_trailing(text: str, end: int, prefix: str) -> None:
    rest = text[end:]
    if _blank_json(rest):
        return
    try:
        gojson.scan_prefix(rest)
    except GoJSONError as err:
        raise ConfigError(PDB, f"{prefix}: {_stream_error(err)}", end + err.offset) from None
    raise ConfigError(PDB, f"{prefix}: multiple JSON values")


def _blank_json(text: str) -> bool:
    return text.strip(" \t\r\n") == ""


def _budget_policy(path: str, policy: dict) -> BudgetPolicy:
    low, high = policy.get("minAvailable"), policy.get("maxUnavailable")
    if (low is None) == (high is None):
        raise ConfigError(PDB, f"exactly one of {path}.minAvailable or {path}.maxUnavailable must be set")
    name, value = ("minAvailable", low) if low is not None else ("maxUnavailable", high)
    if not _valid_budget(value):
        raise ConfigError(PDB, f"{path}.{name} must be a non-negative integer or a percentage from 0% to 100%")
    return BudgetPolicy(name, value.value)


def _valid_budget(value: IntOrString) -> bool:
    """pkg/validation validatePodDisruptionBudgetValue: an int >= 0, or ASCII digits then "%" up to 100."""
    if value.is_int:
        return value.value >= 0
    number = value.value[:-1] if value.value.endswith("%") else None
    if not number or not all("0" <= c <= "9" for c in number):
        return False
    return len(number.lstrip("0")) <= 3 and int(number) <= 100


# ---------------------------------------------------------------- autoscalerPolicy (parseAutoscalerPolicyConfig)

def parse_autoscaler_policy(data: dict, notes: Notes) -> AutoscalerPolicyConfig:
    """The AutoscalerPolicy feature's block (ome-projects/ome pkg/controller/v1beta1/controllerconfig, the file of
    AutoscalerPolicyConfig at commit 4ff3b6e3): read through getComponentConfig, so a present key is unmarshalled
    even when blank; every provider needs a serverAddress (OME reports one of several at random, Go's map order;
    omerender the first by name); non-positive preflight tunables get their defaults."""
    raw: dict = {}
    if AUTOSCALER_POLICY in data:
        found = Decoded()
        try:
            raw = gojson.decode(gojson.scan(data[AUTOSCALER_POLICY]), AUTOSCALER_POLICY_TYPE, found) or {}
        except GoJSONError as err:   # getComponentConfig's "due to %w " (its trailing space too), then the loader's
            raise ConfigError(AUTOSCALER_POLICY, f"unable to parse {AUTOSCALER_POLICY} config json: unable to "
                                                 f"unmarshall {AUTOSCALER_POLICY} json string due to {err} ",
                              err.offset) from None
        notes.add(AUTOSCALER_POLICY, found)
        defaulted = {f"{AUTOSCALER_POLICY}.preflight.{k}" for k, v in (raw.get("preflight") or {}).items() if v <= 0}
        notes.fields.update(set(_paths(AUTOSCALER_POLICY, raw, AUTOSCALER_POLICY_TYPE)) - defaulted)
    nested = raw.get("metricProviders") or {}
    if METRIC_PROVIDERS in data:   # the top-level key wins; the nested one counts only while it is absent
        providers = _providers(METRIC_PROVIDERS, _top_level_providers(data[METRIC_PROVIDERS], notes), notes)
        if nested:
            notes.odd.append((AUTOSCALER_POLICY, f"metricProviders is not read: the top-level {METRIC_PROVIDERS} key "
                                                 f"binds the providers, and OME reads this one only while that key is "
                                                 f"absent; move the bindings there"))
    else:
        providers = _providers(AUTOSCALER_POLICY, nested, notes)
    preflight = raw.get("preflight") or {}
    timeout, deadline = preflight.get("memberGetTimeoutSeconds", 0), preflight.get("skewDeadlineSeconds", 0)
    return AutoscalerPolicyConfig(MappingProxyType(providers),
                                  timeout if timeout > 0 else DEFAULT_MEMBER_GET_TIMEOUT_SECONDS,
                                  deadline if deadline > 0 else DEFAULT_SKEW_DEADLINE_SECONDS)


def _providers(key: str, raw: dict, notes: Notes) -> dict[str, MetricProvider]:
    """The bindings of ``raw`` (read from data key ``key``), by name; every one needs a serverAddress, or OME
    refuses the whole key (canary-analysis.md "An invalid binding stops updates")."""
    providers = {}
    prefix = "" if key == METRIC_PROVIDERS else "metricProviders"
    for name, provider in sorted(raw.items()):
        provider = provider or {}
        if not provider.get("serverAddress"):
            raise ConfigError(key, f"{key} config: metric provider {quote(name)} has no serverAddress")
        secret = provider.get("authSecretRef")
        providers[name] = MetricProvider(provider["serverAddress"], None if secret is None else
                                         SecretKeyRef(secret.get("name", ""), secret.get("key", "")))
        if secret is not None and not (secret.get("name") and secret.get("key")):
            notes.odd.append((key, f"{prefix}[{quote(name)}].authSecretRef needs a name and a key: OME writes its "
                                   f"TriggerAuthentication as given, and KEDA cannot read the token"))
    return providers


def _top_level_providers(text: str, notes: Notes) -> dict:
    """The top-level ``metricProviders`` key: a JSON object of bindings (blank: none)."""
    if _blank(text):
        return {}
    found = Decoded()
    try:
        raw = gojson.decode(gojson.scan(text), METRIC_PROVIDERS_TYPE, found) or {}
    except GoJSONError as err:
        raise ConfigError(METRIC_PROVIDERS, f"fails to load {METRIC_PROVIDERS} config: {err}", err.offset) from None
    notes.add(METRIC_PROVIDERS, found)
    notes.fields.update({METRIC_PROVIDERS} if raw else set())
    return raw


# ---------------------------------------------------------------- metricsAggregator (the pod webhook's key)

def parse_metrics_aggregator(data: dict, notes: Notes) -> MetricsAggregatorConfig:
    """The key OME v1.3's pod webhook reads for every pod it mutates (pkg/webhook/admission/pod/
    metrics_aggregate_injector.go, newMetricsAggregator): two strings, "" when the key or a field is absent. A value
    json.Unmarshal refuses makes the webhook deny every pod, so it is refused here with the webhook's text."""
    if METRICS_AGGREGATOR not in data:
        return MetricsAggregatorConfig()
    prefix = f"OME's pod webhook denies every pod: unable to unmarshall {METRICS_AGGREGATOR} json string due to"
    # the webhook's "due to %w " (its trailing space too)
    raw = _unmarshal(METRICS_AGGREGATOR, data[METRICS_AGGREGATOR], METRICS_AGGREGATOR_TYPE, prefix, notes,
                     form="{prefix} {err} ")
    if raw is None:   # Unmarshal leaves the webhook a nil config, which it dereferences
        raise ConfigError(METRICS_AGGREGATOR, f"{prefix} null: give an object, or remove the key")
    return MetricsAggregatorConfig(raw.get("enableMetricAggregation", ""), raw.get("enablePrometheusScraping", ""))



def check_agent_keys(data: dict, notes: Notes) -> None:
    """The keys of OME v1.3's OCI agent injectors (model-init, fine-tuned adapter, serving sidecar): the pod webhook
    builds all three for every pod it mutates (mutator.go), and a constructor whose key json.Unmarshal refuses returns
    the error (TestInjectorConstructorsReturnJSONErrors), so the webhook denies every pod, whatever its annotations.
    omerender adds none of these containers (podwebhook.agents); it reads the keys only to refuse what OME refuses."""
    for key in AGENT_KEYS:
        if key in data:
            prefix = f"OME's pod webhook denies every InferenceService pod: unable to unmarshal {key} json string"
            _unmarshal(key, data[key], AGENT_TYPES[key], prefix, notes, form="{prefix}: {err}; fix the JSON")
