"""Which components an InferenceService declares, the runtime config merged under each,
and each component's deployment mode (render.md §2, §3, §4)."""
from __future__ import annotations

from dataclasses import dataclass

from omerender.errors import OmeError, Report, type_name

from ..flags import one_of, unknown_choice
from .merge import overlay

COMPONENTS = ("engine", "decoder", "router")
CONFIG_KEYS = {"engine": "engineConfig", "decoder": "decoderConfig", "router": "routerConfig"}
MODE_KEY = "ome.io/deploymentMode"
MODES = ("RawDeployment", "OMENative", "MultiNode", "VirtualDeployment")  # constants.DeploymentModeType.IsValid
# Merged separately (autoscaler, render.md §9.2) or not at all (a runtime's acceleratorOverride).
NOT_MERGED = ("autoscaler", "autoscalerPolicyRef", "acceleratorOverride")
REMOVED_COMPONENT_FIELDS = ("kedaConfig", "scaleMetric", "scaleTarget")


@dataclass
class Component:
    name: str             # engine, decoder or router
    isvc: dict            # spec.<name> as written in the InferenceService
    config: dict          # the runtime's <name>Config (possibly {})
    merged: dict          # config with the InferenceService's component laid over it; shares their values: read only
    mode: str = "RawDeployment"
    implicit_multinode: bool = False


def as_mapping(value, path: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise OmeError(f'{path}: Invalid value: "{type_name(value)}": must be of type object', field=path)
    return value


def declared(isvc_spec: dict) -> list[str]:
    """Components the InferenceService declares; ``engine: {}`` declares one."""
    return [c for c in COMPONENTS if c in isvc_spec]


def merge_component(name: str, isvc_spec: dict, runtime_spec: dict, report: Report) -> Component:
    isvc_comp = as_mapping(isvc_spec.get(name), f"spec.{name}")
    config = as_mapping(runtime_spec.get(CONFIG_KEYS[name]), f"runtime spec.{CONFIG_KEYS[name]}")
    for field in REMOVED_COMPONENT_FIELDS:
        if field in isvc_comp:
            report.warn(f"spec.{name}.{field} was removed in OME v1.3 and is ignored", field=f"spec.{name}.{field}",
                        code="removed-field")
    base = {k: v for k, v in config.items() if k not in NOT_MERGED + REMOVED_COMPONENT_FIELDS}
    top = {k: v for k, v in isvc_comp.items() if k not in NOT_MERGED + REMOVED_COMPONENT_FIELDS}
    merged = overlay(base, top, name, share=True)  # read only: the pod build copies what it keeps
    runner = merged.get("runner")
    if isinstance(runner, dict) and not runner.get("name"):
        merged["runner"] = {**runner, "name": "ome-container"}
    return Component(name, isvc_comp, config, merged)


def check_pairing(name: str, comp: dict, where: str = "") -> None:
    has_leader, has_worker = "leader" in comp, "worker" in comp
    if has_leader != has_worker:
        present, missing = ("leader", "worker") if has_leader else ("worker", "leader")
        raise OmeError(f"InvalidLeaderWorkerPairing: {name} sets {present} without {missing}",
                       field=f"spec.{name}.{present}")


def warn_unknown_mode(annotations, report: Report, prefix: str, ref=None, file: str | None = None) -> None:
    """A warning for an ``ome.io/deploymentMode`` value OME does not know (``PDDisaggregated``, ``rawdeployment``):
    utils.GetDeploymentModeFromAnnotations (OME v1.3 utils/annotations.go) skips it, as if it were absent."""
    value = annotations.get(MODE_KEY) if isinstance(annotations, dict) else None
    hint = unknown_choice(value, MODES)
    if hint is not None:
        report.warn(f'annotation {MODE_KEY}: "{value}" is not {one_of(MODES)}: OME skips a mode it does not know, as '
                    f"if the annotation were absent{hint}", ref=ref, field=f"{prefix}.{MODE_KEY}", file=file,
                    code="unknown-deployment-mode")


def resolve_mode(comp: Component, isvc_spec: dict, report: Report) -> None:
    """Sets ``comp.mode`` by render.md §4, raising the mode errors."""
    annotation = (comp.merged.get("annotations") or {}).get(MODE_KEY)
    explicit = annotation if annotation in MODES else None
    if explicit is None and isvc_spec.get("deploymentMode") in ("RawDeployment", "OMENative"):
        explicit = isvc_spec["deploymentMode"]
    check_pairing(comp.name, comp.merged)
    multi = "leader" in comp.merged or "worker" in comp.merged
    if explicit == "VirtualDeployment" or (explicit == "MultiNode" and comp.name == "router"):
        raise OmeError(f"invalid deployment mode for {comp.name}")
    if explicit == "OMENative":
        raise OmeError(f"{comp.name} requests deployment mode OMENative, which needs the OME controller "
                       f"(InferenceReplica); omerender cannot render it, use RawDeployment or MultiNode")
    if explicit == "MultiNode" and not multi:
        raise OmeError(f"{comp.name}: MultiNode needs leader and worker")
    if explicit is None and multi and comp.name != "router":
        report.info(f"{comp.name} has a leader and worker and no explicit deployment mode; OME v1.3 would run it as "
                    f"OMENative, omerender renders it as MultiNode (LeaderWorkerSet)", code="implicit-multinode")
        comp.mode, comp.implicit_multinode = "MultiNode", True
        return
    if explicit == "RawDeployment" and multi:
        report.warn(f"{comp.name} is RawDeployment; its leader and worker are ignored",
                    code="raw-deployment-leader-ignored")
    comp.mode = explicit or "RawDeployment"
