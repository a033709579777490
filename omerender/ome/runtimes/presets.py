"""The runtime preset OME's admission webhook applies for ``ome.io/engine`` (render.md §12.3)."""
from __future__ import annotations

from omerender.errors import OmeError
from ..load import Obj
from .merge import overlay

ENGINE_KEY = "ome.io/engine"
SGLANG_PD = "sglang-pd"
SGLANG_IMAGE = "lmsysorg/sglang:latest"
ROUTER_IMAGE = "lmsysorg/sglang-router:latest"
PRESET_IMAGES = frozenset({SGLANG_IMAGE, ROUTER_IMAGE})


def _probe(path: str, port: int, period: int) -> dict:
    return {"httpGet": {"path": path, "port": port}, "timeoutSeconds": 10, "failureThreshold": 5,
            "periodSeconds": period}


def _field_env(name: str, path: str) -> dict:
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}}


def _server_runner(mode: str) -> dict:
    command = ["python3", "-m", "sglang.launch_server", "--host", "0.0.0.0", "--port", "30000", "--model-path",
               "$(MODEL_PATH)", "--disaggregation-mode", mode, "--disaggregation-transfer-backend", "nixl"]
    ports = [{"name": "http", "containerPort": 30000, "protocol": "TCP"}]
    if mode == "prefill":
        command += ["--disaggregation-bootstrap-port", "8998"]
        ports.append({"name": "bootstrap", "containerPort": 8998, "protocol": "TCP"})
    return {
        "name": "ome-container",
        "image": SGLANG_IMAGE,
        "command": command,
        "env": [{"name": "PYTHONUNBUFFERED", "value": "1"}, _field_env("SGLANG_HOST_IP", "status.podIP")],
        "ports": ports,
        "readinessProbe": _probe("/health", 30000, 30),
        "livenessProbe": _probe("/health", 30000, 60),
    }


def _router_runner() -> dict:
    return {
        "name": "router",
        "image": ROUTER_IMAGE,
        "args": ["--port", "30080", "--k8s-namespace", "$(NAMESPACE)",
                 "--prefill-label-selector", "component=engine,ome.io/inferenceservice=$(INFERENCESERVICE_NAME)",
                 "--decode-label-selector", "component=decoder,ome.io/inferenceservice=$(INFERENCESERVICE_NAME)",
                 "--k8s-engine-port", "30000", "--bootstrap-port", "8998"],
        "env": [_field_env("NAMESPACE", "metadata.namespace"),
                _field_env("INFERENCESERVICE_NAME", "metadata.labels['ome.io/inferenceservice']")],
        "ports": [{"name": "http", "containerPort": 30080, "protocol": "TCP"}],
        "readinessProbe": _probe("/readiness", 30080, 30),
        "livenessProbe": _probe("/liveness", 30080, 30),
    }


def sglang_pd_preset() -> dict:
    """A fresh copy of the ``sglang-pd`` preset: the spec fields it fills in."""
    return {
        "engineConfig": {"runner": _server_runner("prefill")},
        "decoderConfig": {"runner": _server_runner("decode")},
        "routerConfig": {"runner": _router_runner()},
    }


def engine_annotation(rt: Obj) -> str | None:
    return (rt.metadata.get("annotations") or {}).get(ENGINE_KEY)


def check_engine_annotation(rt: Obj) -> None:
    """api.md §8.8: only ``sglang-pd`` (or an empty value) is accepted."""
    value = engine_annotation(rt)
    if value and value != SGLANG_PD:
        raise OmeError(f'annotation {ENGINE_KEY}: unsupported value "{value}"; the only supported value is {SGLANG_PD}',
                       field=f"metadata.annotations.{ENGINE_KEY}")


def preset_spec(rt: Obj) -> dict:
    """The runtime's own spec with its ``ome.io/engine`` preset laid under it (render.md §12.3):
    the runtime's fields win, maps merge by key, keyed lists item by item, other lists are
    replaced. Without the annotation (or with an empty value) the spec is returned as is."""
    check_engine_annotation(rt)
    if engine_annotation(rt) != SGLANG_PD:
        return rt.spec
    return overlay(sglang_pd_preset(), rt.spec, keep_new_empty=False)


def preset_image_warnings(pod: dict, path: str) -> list[str]:
    """Warnings for the pod's containers that still run one of the preset's ``latest`` images
    (render.md §12.3); ``path`` names the pod, e.g. ``engine`` or ``decoder.leader``."""
    return [f"{path} container {c.get('name')} runs {c['image']}, the {ENGINE_KEY}: {SGLANG_PD} preset's default; "
            f"set the image explicitly" for c in pod.get("containers") or [] if c.get("image") in PRESET_IMAGES]
