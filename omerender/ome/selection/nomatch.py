"""The error text when no runtime qualifies (selection.md §3.10), and the note on unknown accelerator classes."""
from __future__ import annotations

from typing import TYPE_CHECKING

from omerender.suggest import did_you_mean
from ..load import Inputs, Obj
from .request import _class_requests
from .runtimes import _index

if TYPE_CHECKING:
    from .evaluation import Evaluation, Verdict

NEAREST = 3


def no_runtime_text(result: Evaluation, isvc_name: str | None = None) -> str:
    """§3.10's core text for a failed selection, then what omerender adds.

    Up to :data:`NEAREST` excluded runtimes are listed as OME lists them. More would make one line of
    every runtime in a catalog, so the nearest few are named instead, closest first. OME leaves out the
    runtimes that support the model but are not auto-selectable (checks 6-7), the nearest of all: omerender
    names them and their ``autoSelect`` (omerender decision).
    """
    fmt = result.format
    text = f"no runtime found to support model {fmt} with format {fmt} in namespace {result.namespace}"
    total = result.namespaced + result.cluster
    if total:
        text += f". Checked {total} runtimes ({result.namespaced} namespace-scoped, {result.cluster} cluster-scoped)"
    excluded = [v for v in result.verdicts if v.check is not None and v.check <= 5]
    if len(excluded) > NEAREST:
        text += f". Nearest of {len(excluded)} excluded runtimes: " + _listed(sorted(excluded, key=_closeness)[:NEAREST])
    elif excluded:
        text += ". Excluded runtimes: " + _listed(excluded)
    return text + _not_auto_selected([v for v in result.verdicts if v.check in (6, 7)])


def explain_pointer(result: Evaluation, isvc_name: str | None = None) -> str:
    """The sentence that points to ``omerender explain`` for every runtime's reason ("" when none was checked)."""
    if not result.verdicts:
        return ""
    command = f"omerender explain --isvc {isvc_name} -n {result.namespace}" if isvc_name else \
        f"omerender explain --model {result.model.name} -n {result.namespace}"
    return f". Run `{command}` for every runtime and its reason"


def _not_auto_selected(verdicts: list["Verdict"]) -> str:
    if not verdicts:
        return ""
    shown = "; ".join(f"{v.runtime.name} ({_auto_reason(v)})" for v in verdicts[:NEAREST])
    more = f"; and {len(verdicts) - NEAREST} more" if len(verdicts) > NEAREST else ""
    return (f". Supporting the model but not auto-selectable: {shown}{more}: set autoSelect: true on the matching "
            f"supportedModelFormats entry, or name the runtime in spec.runtime.name")


def _auto_reason(v: "Verdict") -> str:
    if v.check == 7 and v.auto_select is True:
        return "its matching entry scores 0"
    return "autoSelect: false" if v.auto_select is False else "autoSelect unset, which counts as false"


def _listed(verdicts: list["Verdict"]) -> str:
    return "; ".join(f"{v.runtime.name} ({v.reason})" for v in verdicts)


def _closeness(v: "Verdict"):
    """A runtime that failed a later check came closer; within a check, fewer mismatches or a smaller size gap."""
    return (-v.check, v.gap, v.scope != "Namespaced", v.runtime.name)


def unknown_class_note(isvc: Obj, inputs: Inputs) -> str:
    """A sentence naming each requested class that is neither an AcceleratorClass of the input nor listed by any
    runtime, with the nearest existing names; "" when there is none. Check 2 words such a typo as every
    runtime's failure, so the note says what is really wrong."""
    index = _index(inputs)
    notes = []
    for name, path in _class_requests(isvc):
        if not name or name in inputs.classes or name in index.listed_classes:
            continue
        known = lambda: list(inputs.classes) + list(index.listed_classes)  # noqa: E731
        hint = did_you_mean(name, known, len(inputs.classes) + len(index.listed_classes), inputs)
        notes.append(f'. Accelerator class "{name}" ({path}) does not exist: no AcceleratorClass of that name in the '
                     f'input and no runtime lists it in acceleratorRequirements.acceleratorClasses{hint}')
    return "".join(notes)
