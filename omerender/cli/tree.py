"""``omerender tree KIND/NAME [PATH]...``: what an edit of a runtime, an AcceleratorClass, a model or an
AutoscalerPolicy reaches.

For a runtime: prints the runtime's own chain (root first, the runtime marked ``[selected]``), then every
runtime that inherits from it and the InferenceServices that name each of them, and the
InferenceServices that auto-select the runtime itself, marked with what keeps them on it (an edit
that undoes it moves them to another runtime). An auto-selected runtime renders from its own spec,
so an edit of a parent never reaches the InferenceServices that auto-select a child
(inheritance-and-pinning.md §5): those are left out.
"""
from __future__ import annotations

import json
import sys

import click

from omerender.errors import Report, run_guarded
from omerender.gitops.overlays import read_inputs
from omerender.ome.load import Obj
from omerender.ome.pinning.revisions import auto_sync
from omerender.ome.reach import RUNTIME_KINDS, Node, Reach, build_tree, find_target, reach, ref_of
from omerender.ome.runtimes.inherit import Chains, rt_ref
from .shell import cluster_config_option, fail, messages_option


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


def _auto_label(isvc: Obj, why: str) -> str:
    return f"InferenceService/{isvc.namespace}/{isvc.name} (auto-selected: {why}; moves if an edit changes that)"


def _children(node: Node, prefix: str, lines: list[str]) -> None:
    """The InferenceServices that name ``node``'s runtime, those that auto-select it, then the runtimes that
    inherit from it."""
    items = [(_isvc_label(isvc), None) for isvc in node.isvcs] + \
        [(_auto_label(isvc, why), None) for isvc, why in node.auto] + [(rt_ref(c.runtime), c) for c in node.children]
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
            "autoSelected": [{"namespace": i.namespace, "name": i.name, "why": why} for i, why in node.auto],
            "children": [_node_json(child) for child in node.children]}


def render_reach_text(found: Reach) -> str:
    lines = [ref_of(found.target) + " [selected]"]
    for i, node in enumerate(found.runtimes):
        last = i == len(found.runtimes) - 1
        lines.append(("`-- " if last else "|-- ") + rt_ref(node.runtime) + (f" ({node.why})" if node.why else ""))
        prefix = "    " if last else "|   "
        for j, use in enumerate(node.uses):
            branch = "`-- " if j == len(node.uses) - 1 else "|-- "
            lines.append(prefix + branch + f"InferenceService/{use.isvc.namespace}/{use.isvc.name} ({use.how})")
    return "\n".join(lines) + "\n"


def render_reach_json(found: Reach) -> str:
    report = {"target": ref_of(found.target),
              "runtimes": [{"runtime": rt_ref(node.runtime), "why": node.why,
                            "inferenceServices": [{"namespace": u.isvc.namespace, "name": u.isvc.name, "how": u.how}
                                                  for u in node.uses]} for node in found.runtimes]}
    return json.dumps(report, indent=2) + "\n"


@click.command("tree", epilog="\b\nExamples:\n  omerender tree sglang-base runtimes/ services/\n  omerender tree ServingRuntime/llama-demo/sglang-llama -o json .\n  omerender tree AcceleratorClass/nvidia-h100-80gb .\n  omerender tree ClusterBaseModel/llama-3-1-8b-instruct .")
@click.argument("runtime", metavar="KIND/NAME")
@click.argument("paths", nargs=-1, metavar="[PATH]...")
@click.option("-o", "--output", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="The tree as indented text, or as JSON for a script.")
@cluster_config_option
@click.option("--debug", is_flag=True, help="Show a traceback for internal errors.")
@messages_option
def tree(runtime, paths, output, debug, cluster_config=None):
    """Show what an edit of a runtime, an AcceleratorClass, a model or an AutoscalerPolicy reaches, in
    PATH... ("." if none). For a runtime: its chain, the runtimes that inherit from it, the
    InferenceServices that name them, and those that auto-select it (marked, with the rule that keeps
    them on it). For the others: the runtimes that list the class or render an InferenceService that
    uses the input, and under each those InferenceServices, with what in them the input reaches.

    KIND/NAME is <name> (when one input has it), KIND/<name> for ClusterServingRuntime,
    AcceleratorClass or ClusterBaseModel, or KIND/<namespace>/<name> for ServingRuntime, BaseModel or
    AutoscalerPolicy."""

    def run():
        inputs, _ = read_inputs(list(paths or (".",)), cluster_config)
        chains = Chains(inputs, Report())
        target = find_target(inputs, runtime)
        if target.kind not in RUNTIME_KINDS:
            found = reach(inputs, chains, target)
            return render_reach_json(found) if output == "json" else render_reach_text(found)
        ancestors = list(reversed(chains.reached(target)[1:]))
        root = build_tree(inputs, chains, target)
        return render_json(target, ancestors, root) if output == "json" else render_text(ancestors, root)

    text, failures = run_guarded(run, debug)
    if failures:
        fail(failures)
    sys.stdout.write(text)
