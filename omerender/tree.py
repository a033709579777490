"""``omerender tree RUNTIME [PATH]...``: what an edit of a runtime reaches.

Prints the runtime's own chain (root first, the runtime marked ``[selected]``), then every
runtime that inherits from it and the InferenceServices that name each of them. An
InferenceService that names no runtime is left out: OME renders an auto-selected runtime
from its own spec, so an edit of a parent never reaches it (inheritance-and-pinning.md §5).
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field

import click

from .errors import OmeError, Report
from .inherit import Chains, rt_ref
from .load import Inputs, Obj, index
from .reading import read_paths
from .revisions import auto_sync, runtime_ref_of
from .selection.lookup import find_runtime
from .suggest import did_you_mean
from .shell import fail, run_guarded


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


def _isvc_label(isvc: Obj) -> str:
    label = f"InferenceService/{isvc.namespace}/{isvc.name}"
    return label if auto_sync(isvc) else label + " (autoSync: false)"


def render_text(ancestors: list[Obj], root: Node) -> str:
    """Root first; each line below its parent after `` `-- `` (last) or ``|-- ``, four columns deeper."""
    labels = [rt_ref(rt) for rt in ancestors] + [rt_ref(root.runtime) + " [selected]"]
    lines = [labels[0]]
    prefix = ""
    for label in labels[1:]:
        lines.append(prefix + "`-- " + label)
        prefix += "    "
    _children(root, prefix, lines)
    return "\n".join(lines) + "\n"


def _children(node: Node, prefix: str, lines: list[str]) -> None:
    """The InferenceServices that name ``node``'s runtime, then the runtimes that inherit from it."""
    items = [(_isvc_label(isvc), None) for isvc in node.isvcs] + [(rt_ref(c.runtime), c) for c in node.children]
    for i, (label, child) in enumerate(items):
        last = i == len(items) - 1
        lines.append(prefix + ("`-- " if last else "|-- ") + label)
        if child is not None:
            _children(child, prefix + ("    " if last else "|   "), lines)


def render_json(target: Obj, ancestors: list[Obj], root: Node) -> str:
    report = {"target": rt_ref(target), "chain": [rt_ref(rt) for rt in ancestors] + [rt_ref(target)],
              "tree": _node_json(root)}
    return json.dumps(report, indent=2) + "\n"


def _node_json(node: Node) -> dict:
    return {"runtime": rt_ref(node.runtime),
            "inferenceServices": [{"namespace": i.namespace, "name": i.name, "autoSync": auto_sync(i)}
                                  for i in node.isvcs],
            "children": [_node_json(child) for child in node.children]}


@click.command("tree", epilog="\b\nExamples:\n  omerender tree sglang-base runtimes/ services/\n  omerender tree ServingRuntime/llama-demo/sglang-llama -o json .")
@click.argument("runtime")
@click.argument("paths", nargs=-1, metavar="[PATH]...")
@click.option("-o", "--output", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--debug", is_flag=True, help="Show a traceback for internal errors.")
def tree(runtime, paths, output, debug):
    """Show what an edit of RUNTIME reaches: its chain, the runtimes that inherit from it,
    and the InferenceServices that name them, in PATH... ("." if none).

    RUNTIME is <name>, ClusterServingRuntime/<name> or ServingRuntime/<namespace>/<name>."""

    def run():
        inputs = index(read_paths(paths or (".",)))
        chains = Chains(inputs, Report())
        target = find_target(inputs, runtime)
        ancestors = list(reversed(chains.reached(target)[1:]))
        root = build_tree(inputs, chains, target)
        return render_json(target, ancestors, root) if output == "json" else render_text(ancestors, root)

    text, failures = run_guarded(run, debug)
    if failures:
        fail(failures)
    sys.stdout.write(text)
