"""What an edit of a runtime reaches: the runtimes that inherit from it, the InferenceServices that name
them, and the InferenceServices that auto-select the runtime itself. OME renders an auto-selected runtime from
its own spec, so an edit of a parent never reaches those of its children (inheritance-and-pinning.md §5)."""
from __future__ import annotations

from dataclasses import dataclass, field

from omerender.errors import OmeError, Report
from omerender.suggest import did_you_mean
from .load import Inputs, Obj
from .pinning.revisions import runtime_ref_of
from .runtimes.inherit import Chains, rt_ref
from .selection.evaluation import evaluate
from .selection.lookup import find_runtime
from .selection.request import request_of
from .selection.resolve import resolve


@dataclass
class Node:
    runtime: Obj
    children: list["Node"] = field(default_factory=list)
    isvcs: list[Obj] = field(default_factory=list)
    auto: list[tuple[Obj, str]] = field(default_factory=list)  # auto-selected: (InferenceService, why it wins)


def find_target(inputs: Inputs, text: str) -> Obj:
    """``<name>`` (the ClusterServingRuntime, else the only ServingRuntime of that name),
    ``ClusterServingRuntime/<name>`` or ``ServingRuntime/<namespace>/<name>``."""
    parts = text.split("/")
    if len(parts) == 2 and parts[0] == "ClusterServingRuntime":
        found = inputs.cluster_runtimes.get(parts[1])
    elif len(parts) == 3 and parts[0] == "ServingRuntime":
        found = inputs.runtimes.get((parts[1], parts[2]))
    elif len(parts) == 1:
        found = inputs.cluster_runtimes.get(text)
        if found is None:
            named = sorted((rt for (ns, name), rt in inputs.runtimes.items() if name == text), key=rt_ref)
            if len(named) > 1:
                raise OmeError(f'runtime "{text}" is ambiguous: {", ".join(rt_ref(rt) for rt in named)}; name it as '
                               "ServingRuntime/<namespace>/<name>")
            found = named[0] if named else None
    else:
        raise OmeError(f'"{text}" is not a runtime: use <name>, ClusterServingRuntime/<name> or '
                       "ServingRuntime/<namespace>/<name>")
    if found is None:
        names = lambda: list(inputs.cluster_runtimes) + [name for _ns, name in inputs.runtimes]  # noqa: E731
        hint = did_you_mean(parts[-1], names, len(inputs.cluster_runtimes) + len(inputs.runtimes), inputs)
        raise OmeError(f'runtime "{text}" not found in the input{hint}')
    return found


def build_tree(inputs: Inputs, chains: Chains, target: Obj) -> Node:
    """The runtimes whose chains (as far as they resolve) pass through ``target``, nested by parent."""
    nodes: dict[int, Node] = {id(target): Node(target)}
    runtimes = sorted(list(inputs.cluster_runtimes.values()) + list(inputs.runtimes.values()), key=rt_ref)
    for runtime in runtimes:
        chain = chains.reached(runtime)  # leaf first
        if target not in chain[1:]:
            continue
        below = chain[:chain.index(target)]
        parent = nodes[id(target)]
        for rt in reversed(below):
            if id(rt) not in nodes:
                nodes[id(rt)] = Node(rt)
                parent.children.append(nodes[id(rt)])
            parent = nodes[id(rt)]
    for isvc in sorted(inputs.isvcs, key=lambda o: (o.namespace, o.name)):
        if runtime_ref_of(isvc) is None:
            why = _auto_selected(inputs, isvc, target)
            if why is not None:
                nodes[id(target)].auto.append((isvc, why))
            continue
        named = _named_runtime(inputs, isvc)
        if named is not None and id(named) in nodes:
            nodes[id(named)].isvcs.append(isvc)
    for node in nodes.values():
        node.children.sort(key=lambda n: rt_ref(n.runtime))
    return nodes[id(target)]


def _named_runtime(inputs: Inputs, isvc: Obj) -> Obj | None:
    ref = runtime_ref_of(isvc)
    if ref is None:
        return None
    return find_runtime(inputs, isvc.namespace, ref["name"], ref.get("kind"))


def _auto_selected(inputs: Inputs, isvc: Obj, target: Obj) -> str | None:
    """Why auto-selection picks ``target`` for ``isvc`` (explain's tie-break), None when it picks another or
    none; the same selection as the render's."""
    try:
        resolution = resolve(isvc, inputs, Report())
    except OmeError:
        return None  # render reports it; the tree shows what renders
    if not resolution.auto_selected or resolution.runtime is not target:
        return None
    return evaluate(inputs, isvc.namespace, resolution.model, request_of(isvc)).tie_break
