"""Why an InferenceService's runtime or accelerator class differs between the sides.

An auto-selected runtime is explained with what ``omerender explain`` computes for the InferenceService
on the head side (the deciding tie-break, and why the base's runtime lost); a runtime that stayed is
explained by the edits to it and to the runtimes it inherits from.
"""
from __future__ import annotations

from omerender.errors import OmeError
from omerender.ome.load import Obj
from omerender.ome.render import IsvcFacts
from omerender.ome.selection.explain import explain_inputs
from .sides import Side

COMPONENT_ORDER = ("engine", "decoder", "router")
SETTINGS_SHOWN = 5  # cluster settings named in one cause; the rest are counted


def runtime_change(base: Side, head: Side, key: tuple[str, str]) -> dict:
    old, new = base.result.isvcs.get(key), head.result.isvcs.get(key)
    old_rt, new_rt = _runtime(old), _runtime(new)
    reason = None
    if old_rt is not None and new_rt is not None:
        if _ref(old_rt) != _ref(new_rt):
            reason = _switched(head, key, old, new)
        else:
            reason = _edited(base, head, old_rt, new_rt)
    return {"base": old_rt.name if old_rt else None, "head": new_rt.name if new_rt else None, "reason": reason}


def accelerator_changes(old: IsvcFacts | None, new: IsvcFacts | None) -> list[dict]:
    """The accelerator class of each component on each side, for components that have one on either side."""
    before, after = (old.classes if old else {}), (new.classes if new else {})
    names = sorted(set(before) | set(after), key=lambda c: (COMPONENT_ORDER + (c,)).index(c))
    return [{"component": c, "base": before.get(c), "head": after.get(c)}
            for c in names if before.get(c) is not None or after.get(c) is not None]


def _runtime(facts: IsvcFacts | None) -> Obj | None:
    return facts.runtime if facts is not None else None


def _ref(rt: Obj) -> tuple:
    return rt.kind, rt.namespace, rt.name


def _switched(head: Side, key: tuple[str, str], old: IsvcFacts, new: IsvcFacts) -> str:
    if not new.auto_selected:
        return f"spec.runtime names {new.runtime.name}" + ("" if not old.auto_selected else
                                                           f" (it was auto-selected: {old.runtime.name})")
    try:
        evaluation, _, _ = explain_inputs(head.inputs, key[0], None, key[1])
    except OmeError:
        evaluation = None
    winner = evaluation.winner if evaluation is not None else None
    if winner is None or _ref(winner.runtime) != _ref(new.runtime):
        return f"auto-selection chose {new.runtime.name}"
    text = f"auto-selection chose {new.runtime.name}: {evaluation.tie_break}"
    lost = next((v for v in evaluation.verdicts if _ref(v.runtime) == _ref(old.runtime)), None)
    if not old.auto_selected:
        text = "spec.runtime removed; " + text
    elif lost is None:
        text += f"; {old.runtime.name} is gone"
    elif not lost.compatible:
        text += f"; {old.runtime.name}: {lost.reason}"
    return text


def _edited(base: Side, head: Side, old_rt: Obj, new_rt: Obj) -> str | None:
    """The runtimes of the chain (leaf first) whose object differs between the sides."""
    old_chain = _chain(base, old_rt)
    new_chain = _chain(head, new_rt)
    before = {_ref(rt): rt.data for rt in old_chain}
    edited = [rt for rt in new_chain if before.get(_ref(rt)) != rt.data]
    if [_ref(rt) for rt in old_chain] != [_ref(rt) for rt in new_chain]:
        return "inherits from another runtime: " + " <- ".join(_label(rt) for rt in new_chain)
    if not edited:
        return None
    return "edited: " + "; ".join(_label(rt) + ("" if rt is new_rt else f", which {new_rt.name} inherits from")
                                  for rt in edited)


def _chain(side: Side, runtime: Obj) -> list[Obj]:
    return side.chains().reached(runtime)


def _label(rt: Obj) -> str:
    return f"{rt.kind} {rt.namespace}/{rt.name}" if rt.namespace else f"{rt.kind} {rt.name}"


def edited_inputs(base: Side, head: Side, isvc: Obj | None, old: IsvcFacts, new: IsvcFacts,
                  cluster: list[dict]) -> list[dict]:
    """The inputs other than itself and its runtime (``runtime_change`` names those) that the InferenceService
    renders from on both sides and that differ between them: its models, its accelerator classes, its
    AutoscalerPolicies, and the cluster settings that differ (every InferenceService renders from them). Each
    ``{"kind", "namespace", "name"}``, the cluster's with ``settings``."""
    found = []
    isvc_after = isvc
    before = {_ref(m): m for m in _models(old)}
    found += [_cause(m) for m in _models(new) if _ref(m) in before and before[_ref(m)].data != m.data]
    for name in dict.fromkeys(c for c in list(old.classes.values()) + list(new.classes.values()) if c):
        a, b = base.inputs.classes.get(name), head.inputs.classes.get(name)
        if a is not None and b is not None and a.data != b.data:
            found.append(_cause(b))
    if isvc_after is not None:
        for name in dict.fromkeys(_policy_names(isvc_after)):
            a = base.inputs.autoscaler_policies.get((isvc_after.namespace, name))
            b = head.inputs.autoscaler_policies.get((isvc_after.namespace, name))
            if a is not None and b is not None and a.data != b.data:
                found.append(_cause(b))
    if cluster:
        found.append({"kind": "ConfigMap", "namespace": "ome", "name": "inferenceservice-config",
                      "settings": [c["setting"] for c in cluster]})
    return found


def cause_text(cause: dict) -> str:
    """``AcceleratorClass nvidia-l40s``; the cluster's ConfigMap with the settings that differ."""
    where = f"{cause['namespace']}/{cause['name']}" if cause["namespace"] else cause["name"]
    settings = cause.get("settings")
    if not settings:
        return f"{cause['kind']} {where}"
    more = f" and {len(settings) - SETTINGS_SHOWN} more" if len(settings) > SETTINGS_SHOWN else ""
    return f"{cause['kind']} {where} ({', '.join(settings[:SETTINGS_SHOWN])}{more})"


def _cause(obj: Obj) -> dict:
    return {"kind": obj.kind, "namespace": obj.namespace or None, "name": obj.name}


def _models(facts: IsvcFacts) -> list[Obj]:
    found = ([facts.model] if facts.model is not None else []) + list(facts.models)
    return list({_ref(m): m for m in found}.values())


def _policy_names(isvc: Obj) -> list[str]:
    names = []
    for component in COMPONENT_ORDER:
        spec = isvc.spec.get(component)
        ref = spec.get("autoscalerPolicyRef") if isinstance(spec, dict) else None
        if isinstance(ref, dict) and isinstance(ref.get("name"), str):
            names.append(ref["name"])
    return names
