"""Automatic runtime selection for an InferenceService (selection.md §3) and its admission check (§3.10)."""
from __future__ import annotations

from omerender.errors import OmeError, Report
from ..load import Inputs, Obj
from .evaluation import _fast_select, evaluate
from .facts import _model_facts
from .nomatch import explain_pointer, no_runtime_text, unknown_class_note
from .request import _request
from .result import Resolution, _replay
from .runtimes import _index
from .scoring import _accelerator_entry
from .validation import format_required

ADMISSION_PREFIX = "no supporting runtime found for model {model} and engine does not have complete runner configuration: "


def _auto(isvc: Obj, inputs: Inputs, report: Report, model: Obj) -> Resolution:
    model_name = isvc.spec["model"]["name"]
    admission = _admission_checked(isvc)
    facts = _model_facts(model)
    if not facts.fmt_name:
        prefix = ADMISSION_PREFIX.format(model=model_name) if admission else \
            f"Failed to find runtime for model {model_name}: "
        raise format_required(model, prefix, isvc)
    request = _request(isvc)
    result = _fast_select(inputs, isvc.namespace, model, facts, request)
    if result.winner is None:
        result = evaluate(inputs, isvc.namespace, model, request)
    _replay(report, result.warnings)
    if result.winner is None:
        text = no_runtime_text(result, isvc.name) + unknown_class_note(isvc, inputs)
        text += explain_pointer(result, isvc.name)[1 if text.endswith("?") else 0:]
        raise OmeError(ADMISSION_PREFIX.format(model=model_name) + text if admission else text)
    runtime = result.winner.runtime
    if admission:
        report.warn(f"Runtime {runtime.name} will be auto-selected for model {model_name}",
                    code="auto-selected-runtime")
    entry = _accelerator_entry(_index(inputs).facts_of(runtime), facts, auto_only=True)
    return Resolution(model, runtime, True, entry)


def _admission_checked(isvc: Obj) -> bool:
    """§3.10: OME's webhook checks selection when the engine exists and has no runner image of its own."""
    engine = isvc.spec.get("engine")
    if not isinstance(engine, dict):
        return False

    def image(part: dict | None) -> bool:
        runner = part.get("runner") if isinstance(part, dict) else None
        return isinstance(runner, dict) and bool(runner.get("image"))

    full_runner = image(engine) or (image(engine.get("leader")) and image(engine.get("worker")))
    return not full_runner
