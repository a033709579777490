"""What an edit of a runtime reaches: the runtimes that inherit from it and the InferenceServices that name
them. An InferenceService that names no runtime is left out: OME renders an auto-selected runtime from its own
spec, so an edit of a parent never reaches it (inheritance-and-pinning.md §5)."""
from __future__ import annotations

from dataclasses import dataclass, field

from omerender.errors import OmeError
from omerender.suggest import did_you_mean
from .load import Inputs, Obj
from .pinning.revisions import runtime_ref_of
from .runtimes.inherit import Chains, rt_ref
from .selection.lookup import find_runtime


@dataclass
class Node:
    runtime: Obj
    children: list["Node"] = field(default_factory=list)
    isvcs: list[Obj] = field(default_factory=list)


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
