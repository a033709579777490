"""AutoscalerPolicy (alpha, OME v1.3): a namespaced, reusable autoscaler template that a component names in
``autoscalerPolicyRef``; OME renders it per component into an ``autoscaler`` block, which is then dispatched as an
inline block would be (render.md §9.2 row 2).

Sources (ome-projects/ome): the API type pkg/apis/ome/v1beta1/autoscalerpolicy_types.go (3731e1e7); the render
pkg/autoscalerpolicy/render/render.go and template.go (2af192b3); the resolver
pkg/controller/v1beta1/inferenceservice/reconcilers/autoscaler/policy.go (Resolve, its hold reasons); the
InferenceService webhook's ValidateAutoscalerPolicyRefs. Docs: concepts/serving/autoscaler-policy.md. The metric
provider bindings of endpoint triggers: metric_providers.py.

Where OME holds a component (keeps its last autoscaler, creates none), a render has no last autoscaler to keep: it
is an error naming the hold's reason. The feature is on when the input holds an AutoscalerPolicy (the CRD, which
OME looks for at startup, is then installed); without one a reference is the webhook's
``AutoscalerPolicyFeatureDisabled`` error. omerender leaves out the Deployment annotation
``ome.io/last-rendered-autoscaler``, the controller's own record for recovering from a hold.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from omerender.errors import OmeError
from omerender.gorules.strconv import quote
from omerender.gorules.text import equal_fold
from omerender.yamlio import limits
from ..budget import BudgetError
from .metric_providers import AUTH_MODE, Bindings
from .placeholders import charge_printed

KIND = "AutoscalerPolicy"
CLASSES = ("HPA", "KEDA")
VARIABLES = ("Namespace", "ISVCName", "Component", "MinReplicas", "MaxReplicas", "TargetName")
FORBIDDEN_KEYS = ("serverAddress", "authModes")  # owned by the cluster's metric provider binding
BOUNDS_FIELDS = ("MaxReplicas", "MinReplicas")
METRIC_TYPES = ("AverageValue", "Value")
KEDA_COPIED = ("advanced", "pollingInterval", "cooldownPeriod", "idleReplicaCount")
GO_KEYWORDS = ("if", "else", "end", "range", "with", "define", "template", "block", "break", "continue")
_FIELD = re.compile(r"(\.[A-Za-z_][A-Za-z0-9_]*)+")
_SPACE = " \t\r\n"


@dataclass(frozen=True)
class Context:
    """The variables a trigger's metadata may use, for one component (render.go Context)."""

    Namespace: str
    ISVCName: str
    Component: str
    MinReplicas: int
    MaxReplicas: int
    TargetName: str


# ---------------------------------------------------------------- the webhook's checks of references

def check_ref(component: str, ref, feature_on: bool) -> None:
    """ValidateAutoscalerPolicyRefs for one component: the feature must be on, the kind namespaced."""
    path = f"spec.{component}.autoscalerPolicyRef"
    name = ref.get("name") if isinstance(ref, dict) else None
    if not feature_on:
        raise OmeError(f'AutoscalerPolicyFeatureDisabled: {path} references "{name}" but the AutoscalerPolicy feature '
                       f"is not enabled on this cluster; remove the ref or enable the feature (omerender turns it on "
                       f"when the input holds an AutoscalerPolicy)", field=path)
    kind = ref.get("kind") or ""
    if kind not in ("", KIND):
        raise OmeError(f'AutoscalerPolicyRefKindReserved: {path}.kind "{kind}" is not supported (ClusterAutoscalerPolicy '
                       f"is a reserved shape); use {KIND}", field=f"{path}.kind")


# ---------------------------------------------------------------- the policy's own checks (its CRD and webhook)

def validate_policy(spec: dict) -> None:
    """What the API server (the CRD's schema, first) and OME's webhook (render/validate.go ValidateSpec, as
    ``<reason>: <detail>``) refuse in a policy's spec; shapes.py checked the field types. The webhook's PromQL
    parse of the rendered queries is not repeated here."""
    _enum(spec.get("enforcement"), ("Default", "Required"), "spec.enforcement")
    if spec.get("class") is None:
        raise OmeError("spec.class: Required value", field="spec.class")
    _enum(spec["class"], CLASSES, "spec.class")
    if (spec.get("keda") is not None) != (spec["class"] == "KEDA") or (spec["class"] == "KEDA" and "hpa" in spec):
        raise OmeError('spec: Invalid value: "object": class KEDA requires keda and forbids hpa; class HPA forbids keda',
                       field="spec.class")
    keda = spec.get("keda")
    triggers = (keda or {}).get("triggers") or []
    if keda is not None and not triggers:
        raise OmeError(f"spec.keda.triggers: Invalid value: {len(triggers)}: spec.keda.triggers in body should have at "
                       f"least 1 items", field="spec.keda.triggers")
    if keda is not None and keda.get("fallback") is not None:
        _validate_fallback(keda["fallback"])
    if spec.get("enforcement") == "Required":
        raise OmeError("EnforcementRequiredReserved: enforcement Required is a reserved shape and not implemented; use "
                       "Default", field="spec.enforcement")
    for i, trigger in enumerate(triggers):
        _validate_trigger(i, trigger)


def _validate_trigger(i: int, trigger: dict) -> None:
    path = f"spec.keda.triggers[{i}]"
    if not trigger.get("type"):
        raise OmeError(f"{path}.type: Required value", field=f"{path}.type")
    if trigger.get("metadata") is None:
        raise OmeError(f"{path}.metadata: Required value", field=f"{path}.metadata")
    _enum(trigger.get("metricType"), METRIC_TYPES, f"{path}.metricType")
    kind = trigger["type"]
    for key in trigger["metadata"]:
        if _forbidden(key):
            raise OmeError(f"ForbiddenMetadataKey: trigger {i}: metadata key {quote(key)} is provider-owned; bind "
                           f"endpoints via providerRef", field=f"{path}.metadata.{key}")
    if _is_endpoint(kind) and not (trigger.get("providerRef") or {}).get("name"):
        raise OmeError(f"ProviderRefRequired: trigger {i} ({kind}): providerRef is required for endpoint trigger types",
                       field=f"{path}.providerRef")
    if _is_endpoint(kind) and "ignoreNullValues" not in trigger["metadata"]:
        raise OmeError(f"IgnoreNullValuesMustBeExplicit: trigger {i} ({kind}): ignoreNullValues must be explicit — the "
                       f"KEDA default (true) silently treats no-series as a healthy zero",
                       field=f"{path}.metadata.ignoreNullValues")
    if trigger.get("queryReturnsDesiredReplicas") is True and trigger.get("metricType") != "AverageValue":
        raise OmeError(f"DesiredCountRequiresAverageValue: trigger {i}: queryReturnsDesiredReplicas requires metricType "
                       f"AverageValue — the HPA's Value math is ceil((metric/threshold) x readyPods), which breaks "
                       f"desired-count queries", field=f"{path}.metricType")
    for key, value in trigger["metadata"].items():
        try:
            compile_template(i, key, value)
        except OmeError as err:
            allowlist = "forbidden template construct" in err.text or "unknown template variable" in err.text
            reason = "ForbiddenTemplateNode" if allowlist else "ParseError"
            raise OmeError(f"{reason}: {err.text}", field=f"{path}.metadata.{key}") from None


def _validate_fallback(fallback: dict) -> None:
    path = "spec.keda.fallback"
    threshold = fallback.get("failureThreshold")
    if threshold is None:
        raise OmeError(f"{path}.failureThreshold: Required value", field=f"{path}.failureThreshold")
    if threshold < 1:
        raise OmeError(f"{path}.failureThreshold: Invalid value: {threshold}: {path}.failureThreshold in body should "
                       f"be greater than or equal to 1", field=f"{path}.failureThreshold")
    replicas = fallback.get("replicas")
    if replicas is None:
        raise OmeError(f"{path}.replicas: Required value", field=f"{path}.replicas")
    if (replicas.get("value") is None) == (replicas.get("fromComponent") is None):
        raise OmeError(f'{path}.replicas: Invalid value: "object": exactly one of value or fromComponent must be set',
                       field=f"{path}.replicas")
    _enum(replicas.get("fromComponent"), BOUNDS_FIELDS, f"{path}.replicas.fromComponent")
    value = replicas.get("value")
    if value is not None and value < 0:
        raise OmeError(f"{path}.replicas.value: Invalid value: {value}: {path}.replicas.value in body should be "
                       f"greater than or equal to 0", field=f"{path}.replicas.value")


def _enum(value, allowed: tuple[str, ...], path: str) -> None:
    if value is not None and value not in allowed:
        quoted = ", ".join(f'"{a}"' for a in allowed)
        raise OmeError(f'{path}: Unsupported value: "{value}": supported values: {quoted}', field=path)


def _forbidden(key: str) -> bool:
    """strings.EqualFold against each provider-owned key: ``ſerverAddress`` (U+017F) is ``serverAddress``."""
    return any(equal_fold(key, k) for k in FORBIDDEN_KEYS)


def _is_endpoint(trigger_type: str) -> bool:
    """render.go IsEndpointTriggerType: strings.EqualFold with "prometheus" (``prometheuſ`` is one too)."""
    return equal_fold(trigger_type, "prometheus")


# ---------------------------------------------------------------- rendering one component's block

def render_block(policy_name: str, spec: dict, ctx: Context, providers: Bindings) -> dict:
    """The ``autoscaler`` block the policy renders to for one component (render.go Render); ``providers`` are the
    cluster's metric provider bindings. Raises the render's error text, prefixed ``policy <name>: `` where OME
    prefixes it."""
    if ctx.MaxReplicas <= 0:
        raise OmeError(f"component {ctx.Component} has effective maxReplicas {ctx.MaxReplicas}; policy rendering "
                       f"requires a positive ceiling")
    if spec["class"] == "HPA":
        return {"class": "HPA", **({"hpa": spec["hpa"]} if spec.get("hpa") is not None else {})}
    keda = spec["keda"]
    try:
        out = {k: keda[k] for k in KEDA_COPIED if keda.get(k) is not None}
        out["triggers"] = [_render_trigger(i, t, ctx, providers) for i, t in enumerate(keda["triggers"])]
        if keda.get("fallback") is not None:
            out["fallback"] = _render_fallback(keda["fallback"], ctx)
    except BudgetError:
        raise
    except OmeError as err:
        raise OmeError(f"policy {policy_name}: {err.text}", field=err.field) from None
    return {"class": "KEDA", "keda": out}


def _render_trigger(i: int, trigger: dict, ctx: Context, providers: Bindings) -> dict:
    metadata = {}
    for key, value in trigger["metadata"].items():
        if _forbidden(key):
            raise OmeError(f"trigger {i} metadata key {quote(key)} is provider-owned and not allowed in policies")
        parts = compile_template(i, key, value)
        if all(isinstance(part, str) for part in parts):
            metadata[key] = value if len(parts) == 1 and parts[0] == value else "".join(parts)
            continue
        metadata[key] = "".join(part if isinstance(part, str) else str(getattr(ctx, part.name)) for part in parts)
        if not charge_printed(len(metadata[key]), len(parts)):
            raise BudgetError(f"AutoscalerPolicy templates and placeholders print more than "
                              f"{limits.MAX_EXPANDED_CHARS:,} characters or run more than "
                              f"{limits.MAX_PLACEHOLDER_ACTIONS:,} actions across the render (here "
                              f"spec.keda.triggers[{i}].metadata.{key}); render fewer InferenceServices at a time, or "
                              f"shorten the policy's metadata", field=f"spec.{ctx.Component}.autoscalerPolicyRef")
    rendered = {"type": trigger["type"], "metadata": metadata}
    if _is_endpoint(trigger["type"]):
        _bind(i, trigger, rendered, providers)
    if trigger.get("metricType"):
        rendered["metricType"] = trigger["metricType"]
    return rendered


def _bind(i: int, trigger: dict, rendered: dict, providers: Bindings) -> None:
    """The provider binding's address, and its TriggerAuthentication with the bearer auth mode (render.go)."""
    provider = (trigger.get("providerRef") or {}).get("name")
    if not provider:
        raise OmeError(f"trigger {i} ({trigger['type']}): providerRef is required for endpoint trigger types")
    binding = providers.get(provider)
    if binding is None or not binding.server_address:
        raise OmeError(f"trigger {i} ({trigger['type']}): metric provider {quote(provider)} is not bound on this "
                       f"cluster{providers.unbound_hint(provider)}")
    rendered["metadata"]["serverAddress"] = binding.server_address
    if binding.authentication_name:
        rendered["authenticationRef"] = {"name": binding.authentication_name}
        rendered["metadata"]["authModes"] = AUTH_MODE


def _render_fallback(fallback: dict, ctx: Context) -> dict:
    source = fallback["replicas"]
    if (source.get("value") is None) == (source.get("fromComponent") is None):
        raise OmeError("fallback.replicas: exactly one of value or fromComponent must be set")
    if source.get("value") is not None:
        replicas = source["value"]
    elif source["fromComponent"] in BOUNDS_FIELDS:
        replicas = getattr(ctx, source["fromComponent"])
    else:
        raise OmeError(f'fallback.replicas: unknown component bounds field "{source["fromComponent"]}"')
    return {"failureThreshold": fallback["failureThreshold"], "replicas": replicas}


# ---------------------------------------------------------------- metadata templates (template.go)

@dataclass(frozen=True)
class Var:
    name: str


def compile_template(trigger: int, key: str, text: str) -> list:
    """``text`` as literal strings and :class:`Var` parts. Go's text/template with OME's allowlist: literal text
    and ``{{ .Var }}`` of :data:`VARIABLES` only (comments drop out; ``{{-``/``-}}`` trim white space). Parsed
    once per value however many components render it (template.go's cache does the same)."""
    parts, problem = _compiled(trigger, key, text)
    if problem is not None:
        raise OmeError(f"trigger {trigger} metadata {quote(key)}: {problem}")
    return parts


@lru_cache(maxsize=4096)
def _compiled(trigger: int, key: str, text: str) -> tuple[list, str | None]:
    try:
        return _parse(text, f"t{trigger}/{key}"), None
    except _TemplateError as err:
        return [], err.reason


class _TemplateError(ValueError):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def _parse(text: str, name: str) -> list:
    parts: list = []
    pos = 0
    while True:
        start = text.find("{{", pos)
        if start < 0:
            _literal(parts, text[pos:])
            return parts
        literal = text[pos:start]
        body_start = start + 2
        if _trim_marker(text[body_start:body_start + 2]):
            literal = literal.rstrip(_SPACE)
            body_start += 1
        _literal(parts, literal)
        where = _Where(text, start, name)
        end = _action_end(text, body_start, where)
        body = text[body_start:end]
        pos = end + 2
        if _trim_marker(body[-2:][::-1]):
            body = body[:-1]
            while pos < len(text) and text[pos] in _SPACE:
                pos += 1
        var = _action(body.strip(_SPACE), where)
        if var is not None:
            parts.append(var)


def _trim_marker(two: str) -> bool:
    """Whether ``two`` (read from the action's inside out) is a trim marker: ``-`` then white space."""
    return len(two) == 2 and two[0] == "-" and two[1] in _SPACE


class _Where:
    """``template: <name>:<line>`` of an action, as Go's parse errors start; the line is counted only when an error
    is reported, so a long value with many actions stays one pass."""

    def __init__(self, text: str, pos: int, name: str):
        self.text, self.pos, self.name = text, pos, name

    def __str__(self) -> str:
        return f"template: {self.name}:{self.text.count(chr(10), 0, self.pos) + 1}"


def _literal(parts: list, text: str) -> None:
    if text:
        parts.append(text)


def _action_end(text: str, pos: int, where: _Where) -> int:
    """Where the action starting at ``pos`` ends (its ``}}``), skipping quoted strings and comments."""
    if text.startswith("/*", pos):
        close = text.find("*/", pos + 2)
        if close < 0:
            raise _TemplateError(f"parse: {where}: unclosed comment")
        pos = close + 2
    quote = None
    i = pos
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\" and quote != "`":
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "\"'`":
            quote = ch
        elif text.startswith("}}", i):
            return i
        i += 1
    raise _TemplateError(f"parse: {where}: unclosed action")


def _action(body: str, where: _Where) -> Var | None:
    if body.startswith("/*"):
        return None  # a comment
    shown = "{{" + " | ".join(" ".join(_words(cmd)) for cmd in _split_pipe(body)) + "}}"
    words = _words(body)
    if not words:
        raise _TemplateError(f"parse: {where}: missing value for command")
    if words[0] in GO_KEYWORDS:
        raise _TemplateError(f"forbidden template construct {quote(shown)}: only {{{{ .Var }}}} field access and "
                             f"literal text are allowed")
    if len(_split_pipe(body)) > 1 or (len(words) > 1 and words[1] in (":=", "=")):
        raise _TemplateError(f"forbidden template construct {quote(shown)}: pipelines, declarations, and functions "
                             f"are not allowed")
    if len(words) > 1:
        raise _TemplateError(f"forbidden template construct {quote(shown)}: function calls are not allowed")
    if not _FIELD.fullmatch(words[0]):
        raise _TemplateError(f"forbidden template construct {quote(shown)}: only field access is allowed")
    idents = words[0][1:].split(".")
    if len(idents) != 1 or idents[0] not in VARIABLES:
        raise _TemplateError(f"unknown template variable {quote(shown)}: allowed variables are "
                             f"{' '.join('.' + v for v in VARIABLES)}")
    return Var(idents[0])




def _split_pipe(body: str) -> list[str]:
    return _split_outside_quotes(body, lambda ch: ch == "|", keep_empty=True)


def _words(body: str) -> list[str]:
    return [w for w in _split_outside_quotes(body, lambda ch: ch in _SPACE, keep_empty=False)]


def _split_outside_quotes(body: str, is_sep, keep_empty: bool) -> list[str]:
    out, current, quote = [], [], None
    for ch in body:
        if quote:
            current.append(ch)
            if ch == quote:
                quote = None
        elif ch in "\"'`":
            quote = ch
            current.append(ch)
        elif is_sep(ch):
            out.append("".join(current))
            current = []
        else:
            current.append(ch)
    out.append("".join(current))
    return [w.strip(_SPACE) for w in out] if keep_empty else [w for w in out if w]
