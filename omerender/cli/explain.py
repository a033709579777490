"""``omerender explain``: why each runtime is or is not chosen for a model (selection.md §5)."""
from __future__ import annotations

import json

import click

from omerender.errors import run_guarded
from omerender.gitops.overlays import read_inputs
from omerender.ome.selection.evaluation import Evaluation
from omerender.ome.selection.explain import Pinned, explain_inputs
from .shell import cluster_config_option, fail, messages_option

HEADERS = ("RUNTIME", "SCOPE", "COMPATIBLE", "PRIORITY", "WEIGHT", "REASON")


@click.command("explain", epilog="\b\nExamples:\n  omerender explain --isvc llama-3-2-3b-instruct -n llama-demo fixtures/quickstart\n  omerender explain --model llama-3-2-3b-instruct -n llama-demo -o json runtimes/ models/")
@click.option("--model", "model_name", metavar="NAME", help="BaseModel in the namespace, else ClusterBaseModel.")
@click.option("--isvc", "isvc_name", metavar="NAME", help="InferenceService in the namespace.")
@click.option("-n", "--namespace", default="default", show_default=True, metavar="NS",
              help="Namespace of the InferenceService, and of the BaseModel or ServingRuntimes to consider "
                   "(ClusterBaseModels and ClusterServingRuntimes are always considered).")
@click.option("-o", "--output", type=click.Choice(["table", "text", "json"]), default="table", show_default=True,
              help="table (or text): one row per runtime on stdout, the decision on stderr; json: the rows and "
                   "the decision as one object on stdout.")
@click.argument("paths", nargs=-1, metavar="[PATH]...")
@cluster_config_option
@click.option("--debug", is_flag=True, help="Show a traceback for internal errors.")
@messages_option
def explain(model_name, isvc_name, namespace, output, paths, debug, cluster_config=None):
    """Show which runtimes are compatible with a model, and why, in PATH... ("." if none)."""
    value, failures = run_guarded(lambda: explain_inputs(read_inputs(list(paths or (".",)), cluster_config)[0],
                                                         namespace, model_name, isvc_name), debug)
    if failures:
        fail(failures)
    result, notes, pinned = value
    for note in notes:
        click.echo(note, err=True)
    if output == "json":
        click.echo(json.dumps(as_json(result, namespace, pinned), indent=2))
    elif result.verdicts:
        click.echo(table(result, pinned))
        click.echo(decision(result, pinned), err=True)


def table(result: Evaluation, pinned: Pinned | None = None) -> str:
    """§5: never wrapped; each column as wide as its widest cell plus 3 spaces, the last one unpadded. A pinned
    runtime's row comes first, marked ``Pinned``."""
    rows = [HEADERS] + [_cells(v, pinned) for v in _ordered(result, pinned)]
    widths = [max(len(row[i]) for row in rows) + 3 for i in range(len(HEADERS) - 1)]
    return "\n".join("".join(cell.ljust(w) for cell, w in zip(row, widths)) + row[-1] for row in rows)


def decision(result: Evaluation, pinned: Pinned | None = None) -> str:
    """The line that names the runtime used: the pinned one, else the pick and the tie-break that decided it."""
    if pinned is not None:
        if pinned.runtime is None:
            return f"Selected: none (spec.runtime.name pins {pinned.name}, which OME refuses: {pinned.refusal})"
        text = f"Selected: {pinned.runtime.name} ({pinned.scope}): pinned by spec.runtime.name"
        return text + (f"; {pinned.warning}" if pinned.warning else "")
    winner = result.winner
    if winner is None:
        return "Selected: none (no compatible runtime)"
    return f"Selected: {winner.runtime.name} ({winner.scope}): {result.tie_break}"


def as_json(result: Evaluation, namespace: str, pinned: Pinned | None = None) -> dict:
    return {
        "namespace": namespace,
        "model": {"kind": result.model.kind, "name": result.model.name},
        "pinned": pinned is not None,
        "rows": [{"runtime": v.runtime.name, "scope": v.scope, "compatible": v.compatible, "priority": v.priority,
                  "weight": v.weight, "score": v.score, "reason": v.reason, "pinned": _is_pinned(v, pinned)}
                 for v in _ordered(result, pinned)],
        "selected": _selected_json(result, pinned),
    }


def _selected_json(result: Evaluation, pinned: Pinned | None) -> dict | None:
    if pinned is not None:
        if pinned.runtime is None:
            return {"runtime": pinned.name, "scope": None, "pinned": True, "refusal": pinned.refusal}
        return {"runtime": pinned.runtime.name, "scope": pinned.scope, "pinned": True, "warning": pinned.warning}
    winner = result.winner
    return None if winner is None else {"runtime": winner.runtime.name, "scope": winner.scope, "pinned": False,
                                        "tieBreak": result.tie_break}


def _is_pinned(verdict, pinned: Pinned | None) -> bool:
    return pinned is not None and verdict.runtime is pinned.runtime


def _ordered(result: Evaluation, pinned: Pinned | None) -> list:
    """The pinned runtime first, the rest in the order automatic selection ranks them."""
    return sorted(result.verdicts, key=lambda v: not _is_pinned(v, pinned))


def _cells(v, pinned: Pinned | None = None) -> tuple[str, ...]:
    def dash(value) -> str:
        return "-" if value is None else str(value)
    if _is_pinned(v, pinned):
        return (v.runtime.name, v.scope, "Pinned", dash(v.priority), dash(v.weight), pinned.warning or "-")
    return (v.runtime.name, v.scope, "Yes" if v.compatible else "No", dash(v.priority), dash(v.weight), dash(v.reason))

