"""Replica bounds, the autoscaler and the PodDisruptionBudget of a component (render.md §9)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from omerender.errors import OmeError
from ..cluster.settings import BudgetPolicy, DeployConfig

CLASSES = ("HPA", "KEDA", "External", "None")
LEGACY_CLASS_KEY = "ome.io/autoscalerClass"
LEGACY_TARGET_KEY = "ome.io/targetUtilizationPercentage"
LEGACY_METRIC_KEY = "ome.io/metrics"
REMOVED_FIELDS = ("kedaConfig", "scaleMetric", "scaleTarget")
DEFAULT_CPU_TARGET = 80
METRIC_MEMBERS = {"Resource": "resource", "Pods": "pods", "Object": "object", "External": "external",
                  "ContainerResource": "containerResource"}
KEDA_COPIED = ("triggers", "pollingInterval", "cooldownPeriod", "fallback", "idleReplicaCount", "advanced")


@dataclass(frozen=True)
class Scaling:
    min: int
    max: int
    autoscaler: dict  # {"class": ..., "hpa": {...}, "keda": {...}}


def _int_field(value, path: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise OmeError(f"{path}: Invalid value: {value!r}: must be a non-negative integer", field=path)
    return value


def replica_bounds(component: str, isvc_comp: dict, merged: dict, deploy: DeployConfig) -> tuple[int, int]:
    """render.md §9.1: the merged bounds, unset ones filled from the cluster's ``deploy.replicas`` (OME v1.3's
    specdefaults.replicaBounds: a filled max rises to the min), then read as OME's HPA reads them
    (hpa_reconciler.go calculateMinReplicas/calculateMaxReplicas: min below 1 is 1, a max below the min is the min,
    so an unconfigured cluster gets 1 and 1)."""
    path = f"spec.{component}"
    isvc_min = _int_field(isvc_comp.get("minReplicas"), f"{path}.minReplicas")
    isvc_max = _int_field(isvc_comp.get("maxReplicas"), f"{path}.maxReplicas")
    if isvc_min is not None and isvc_max and isvc_min > isvc_max:
        raise OmeError(f"{path}.minReplicas must be <= maxReplicas", field=f"{path}.minReplicas")
    low = _int_field(merged.get("minReplicas"), f"{path}.minReplicas")
    high = _int_field(merged.get("maxReplicas"), f"{path}.maxReplicas") or None
    if low is None:
        low = deploy.min_replicas()
    if high is None:
        filled = deploy.max_replicas(component)
        low = 1 if low is None else low
        return low, max(filled if filled is not None else low, low)
    low = 1 if low is None else low
    if high < low:
        raise OmeError("minReplicas must not exceed maxReplicas", field=f"{path}.maxReplicas")
    return low, high


def check_autoscaler_block(component: str, block, low: int | None = None, path: str | None = None) -> None:
    """The webhooks' validation of an ``autoscaler`` block (api.md §8.9); ``path`` is the block's
    field path (``spec.engine.autoscaler``, or ``spec.engineConfig.autoscaler`` in a runtime)."""
    path = path or f"spec.{component}.autoscaler"
    if not isinstance(block, dict) or block.get("class") not in CLASSES:
        got = block.get("class") if isinstance(block, dict) else block
        raise OmeError(f"{component}: AutoscalerClassUnknown: autoscaler.class must be one of HPA, KEDA, External, None"
                       f" (got {got!r})", field=f"{path}.class")
    if block["class"] == "KEDA":
        keda = block.get("keda") if isinstance(block.get("keda"), dict) else {}
        triggers = keda.get("triggers")
        if not isinstance(triggers, list) or not triggers:
            raise OmeError(f"{component}: KedaTriggersRequired: class=keda requires at least 1 trigger",
                           field=f"{path}.keda.triggers")
        idle = keda.get("idleReplicaCount")
        if idle is not None and low is not None and not (isinstance(idle, int) and idle < low):
            raise OmeError(f"{component}: KedaIdleBelowMin: keda.idleReplicaCount ({idle}) must be below minReplicas"
                           f" ({low})", field=f"{path}.keda.idleReplicaCount")
    if block["class"] == "HPA":
        hpa = block.get("hpa") if isinstance(block.get("hpa"), dict) else {}
        for i, metric in enumerate(hpa.get("metrics") or []):
            _check_metric(component, f"{path}.hpa.metrics[{i}]", metric)


def validate_runtime_autoscalers(runtime_spec: dict) -> None:
    """A runtime's own admission checks of its component configs (api.md §7.1 rows 5 and 8):
    no ``autoscalerPolicyRef``, and valid ``autoscaler`` blocks (KedaIdleBelowMin against the
    config's own ``minReplicas`` when it sets one)."""
    for component, key in (("engine", "engineConfig"), ("decoder", "decoderConfig"), ("router", "routerConfig")):
        config = runtime_spec.get(key)
        if not isinstance(config, dict):
            continue
        if config.get("autoscalerPolicyRef") is not None:
            raise OmeError(f"{key}.autoscalerPolicyRef is not allowed in a runtime; set it in the InferenceService",
                           field=f"spec.{key}.autoscalerPolicyRef")
        if config.get("autoscaler") is not None:
            low = config.get("minReplicas") if isinstance(config.get("minReplicas"), int) else None
            check_autoscaler_block(component, config["autoscaler"], low, f"spec.{key}.autoscaler")


def removed_field_warnings(runtime_spec: dict) -> list[str]:
    """Warnings for the v1.2.2 autoscaling fields left in a runtime's component configs (render.md §9.2)."""
    return [f"spec.{key}.{name} was removed in OME v1.3 and is ignored"
            for key in ("engineConfig", "decoderConfig", "routerConfig")
            for name in REMOVED_FIELDS if isinstance(runtime_spec.get(key), dict) and name in runtime_spec[key]]


def _check_metric(component: str, path: str, metric) -> None:
    kind = metric.get("type") if isinstance(metric, dict) else None
    member = METRIC_MEMBERS.get(kind)
    if member is None:
        raise OmeError(f"{component}: HPAMetricMalformed: {path}.type must be one of Resource, Pods, Object, External,"
                       f" ContainerResource", field=f"{path}.type")
    if not isinstance(metric.get(member), dict):
        raise OmeError(f"{component}: HPAMetricMalformed: {path} of type {kind} needs {member}",
                       field=f"{path}.{member}")


def choose_autoscaler(component: str, isvc_comp: dict, runtime_config: dict, annotations: dict,
                      isvc_annotations: dict, low: int, policy: Callable[[], dict] | None = None) -> dict:
    """The whole block from its first source (render.md §9.2): the ISVC component's ``autoscaler``, the
    block its ``autoscalerPolicyRef`` renders to (``policy()``; None where the ref is inert), the runtime
    config's, the legacy annotations in ``annotations`` (``A``), else HPA at 80 % CPU."""
    inline = isvc_comp.get("autoscaler")
    if inline is not None and LEGACY_CLASS_KEY in isvc_annotations:
        raise OmeError(f"AutoscalerAnnotationConflict: the InferenceService annotation {LEGACY_CLASS_KEY} cannot be"
                       f" combined with spec.{component}.autoscaler", field=f"metadata.annotations.{LEGACY_CLASS_KEY}")
    if low == 0 and not (isinstance(inline, dict) and inline.get("class") == "KEDA"):
        raise OmeError(f"{component}: InvalidScaleToZero: minReplicas 0 needs an inline autoscaler with class KEDA",
                       field=f"spec.{component}.minReplicas")
    legacy = _legacy_autoscaler(annotations)  # validated even when an earlier source wins, as the webhook does
    if inline is not None:
        check_autoscaler_block(component, inline, low)
        return inline
    if policy is not None and isvc_comp.get("autoscalerPolicyRef") is not None:
        return policy()  # with a ref, OME never falls through to the runtime, the legacy keys or the default
    if runtime_config.get("autoscaler") is not None:
        check_autoscaler_block(component, runtime_config["autoscaler"], low, f"spec.{component}Config.autoscaler")
        return runtime_config["autoscaler"]
    if legacy.get("class") == "KEDA":
        raise OmeError("KEDA autoscaler requires at least one trigger", field=f"annotations.{LEGACY_CLASS_KEY}")
    return legacy


def _legacy_autoscaler(annotations: dict) -> dict:
    """The block the legacy annotations stand for (HPA at 80 % CPU without them); their values checked."""
    legacy = annotations.get(LEGACY_CLASS_KEY)
    target = annotations.get(LEGACY_TARGET_KEY)
    if legacy not in (None, "hpa", "keda", "external"):
        raise OmeError(f"[{legacy}] is not a supported autoscaler class type", field=f"annotations.{LEGACY_CLASS_KEY}")
    value = DEFAULT_CPU_TARGET
    if target is not None:
        if not re.fullmatch(r"[0-9]+", str(target)) or not 1 <= int(target) <= 100:
            raise OmeError("the target utilization percentage should be a [1-100] integer",
                           field=f"annotations.{LEGACY_TARGET_KEY}")
        value = int(target)
    if legacy == "keda":
        return {"class": "KEDA"}
    if legacy == "external":
        return {"class": "External"}
    if legacy is None and target is None:
        return {"class": "HPA"}
    metric = annotations.get(LEGACY_METRIC_KEY, "cpu")
    if metric not in ("cpu", "memory"):
        raise OmeError(f"[{metric}] is not a supported metric", field=f"annotations.{LEGACY_METRIC_KEY}")
    return {"class": "HPA", "hpa": {"metrics": [_utilization_metric(metric, value)]}}


def _utilization_metric(resource: str, value: int) -> dict:
    return {"type": "Resource",
            "resource": {"name": resource, "target": {"type": "Utilization", "averageUtilization": value}}}


def hpa_spec(comp_name: str, scaling: Scaling) -> dict:
    hpa = scaling.autoscaler.get("hpa") or {}
    spec = {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": comp_name},
        "minReplicas": scaling.min,
        "maxReplicas": scaling.max,
        "metrics": hpa.get("metrics") or [_utilization_metric("cpu", DEFAULT_CPU_TARGET)],
    }
    if hpa.get("behavior"):
        spec["behavior"] = hpa["behavior"]
    return spec


def scaledobject_spec(comp_name: str, scaling: Scaling) -> dict:
    keda = scaling.autoscaler.get("keda") or {}
    spec = {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": comp_name},
        "minReplicaCount": scaling.min,
        "maxReplicaCount": scaling.max,
    }
    spec.update({k: keda[k] for k in KEDA_COPIED if keda.get(k) is not None})
    return spec


# ---------------------------------------------------------------- PDB (render.md §9.3)

BUDGET_FIELDS = ("minAvailable", "maxUnavailable")
_PERCENT = re.compile(r"(100|[1-9]?[0-9])%")


def _valid_budget(value) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return value >= 0
    return isinstance(value, str) and bool(_PERCENT.fullmatch(value))


def disruption_budget(component: str, isvc_comp: dict, runtime_config: dict,
                      default: BudgetPolicy | None) -> dict | None:
    """The PDB's budget field, or None for no PDB: the component's own (ISVC over runtime), else the cluster's
    policy for the deployment mode (``podDisruptionBudget.rawDeployment``; none configured, no PDB)."""
    path = f"spec.{component}"
    isvc_set = [f for f in BUDGET_FIELDS if isvc_comp.get(f) is not None]
    runtime_set = [f for f in BUDGET_FIELDS if runtime_config.get(f) is not None]
    if len(isvc_set) == 2:
        raise OmeError(f"{path}.minAvailable and {path}.maxUnavailable cannot both be set", field=f"{path}.minAvailable")
    for name in isvc_set:
        if not _valid_budget(isvc_comp[name]):
            raise OmeError(f"{path}.{name} must be a non-negative integer or a percentage from 0% to 100%",
                           field=f"{path}.{name}")
    if any(not _valid_budget(runtime_config[f]) for f in runtime_set) or len(runtime_set) == 2 or (
            isvc_set and runtime_set and isvc_set != runtime_set):
        raise OmeError(f"failed to resolve {component} PodDisruptionBudget: runtime and InferenceService set different"
                       f" budget fields", field=f"{path}.{(isvc_set or runtime_set)[0]}")
    name = (isvc_set or runtime_set or [None])[0]
    if name is None:
        return default.as_spec() if default is not None else None
    value = isvc_comp.get(name, runtime_config.get(name))
    return {name: value}
