"""Checks 2 and 3: the accelerator classes and deployment modes an InferenceService asks for
(selection.md §3.6, §3.7)."""
from __future__ import annotations

from dataclasses import dataclass
from ..load import Obj
from ..runtimes.components import MODE_KEY
from .facts import RuntimeFacts, _mode

CLASS_ANNOTATION = "ome.io/accelerator-class"


@dataclass(frozen=True)
class Request:
    """What the InferenceService asks of a runtime in checks 2 and 3 (empty for ``explain --model``)."""

    classes: tuple[str, ...] = ()
    engine_mode: str | None = None
    decoder_mode: str | None = None
    has_decoder: bool = False


def request_of(isvc: Obj) -> Request:
    """The classes and modes an InferenceService asks for (§3.6, §3.7)."""
    return _request(isvc)


def _request(isvc: Obj) -> Request:
    classes = tuple(name for name, _path in _class_requests(isvc))  # "" stays: a class no runtime lists
    return Request(classes, *_modes(isvc.spec))


def _modes(spec: dict) -> tuple[str | None, str | None, bool]:
    """:class:`Request`'s engine and decoder modes, and whether there is a decoder."""
    return _isvc_mode(spec, "engine"), _isvc_mode(spec, "decoder"), isinstance(spec.get("decoder"), dict)


_ANNOTATION_PATH = f"metadata.annotations.{CLASS_ANNOTATION}"
_SELECTOR_PATH = "spec.acceleratorSelector.acceleratorClass"
_OVERRIDE_PATHS = tuple((component, f"spec.{component}.acceleratorOverride.acceleratorClass")
                        for component in ("engine", "decoder"))


def _class_requests(isvc: Obj) -> list[tuple[str, str]]:
    """(class name, field path) of every class the InferenceService asks for, in check 2's order."""
    spec = isvc.spec
    holders = [(isvc.metadata.get("annotations"), CLASS_ANNOTATION, _ANNOTATION_PATH),
               (spec.get("acceleratorSelector"), "acceleratorClass", _SELECTOR_PATH)]
    for component, path in _OVERRIDE_PATHS:
        part = spec.get(component)
        holders.append((part.get("acceleratorOverride") if isinstance(part, dict) else None, "acceleratorClass", path))
    return [(str(holder[key]), path) for holder, key, path in holders
            if isinstance(holder, dict) and holder.get(key) is not None]


def _isvc_mode(spec: dict, component: str) -> str | None:
    part = spec.get(component)
    annotations = part.get("annotations") if isinstance(part, dict) else None
    if isinstance(annotations, dict) and MODE_KEY in annotations:
        return _mode(annotations[MODE_KEY])
    return _mode(spec.get("deploymentMode"))


def _classes_pass(rt: "RuntimeFacts", request: Request) -> bool:
    return all(c and c in rt.classes for c in request.classes)


def _mode_reason(rt: "RuntimeFacts", request: Request) -> str | None:
    pairs = [("engine", rt.engine_mode, request.engine_mode)]
    if request.has_decoder:
        pairs.append(("decoder", rt.decoder_mode, request.decoder_mode))
    for component, runtime_mode, wanted in pairs:
        if runtime_mode and wanted and runtime_mode != wanted:
            return (f"runtime {component} deployment mode {runtime_mode} does not match requested {component} "
                    f"deployment mode {wanted}")
    return None
