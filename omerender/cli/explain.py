"""``omerender explain``: why each runtime is or is not chosen for a model (selection.md §5)."""
from __future__ import annotations

import json

import click

from omerender.errors import run_guarded
from omerender.gitops.overlays import read_inputs
from omerender.ome.selection.evaluation import Evaluation
from omerender.ome.selection.explain import explain_inputs
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
    result, notes = value
    for note in notes:
        click.echo(note, err=True)
    if output == "json":
        click.echo(json.dumps(as_json(result, namespace), indent=2))
    elif result.verdicts:
        click.echo(table(result))
        click.echo(decision(result), err=True)


def table(result: Evaluation) -> str:
    """§5: never wrapped; each column as wide as its widest cell plus 3 spaces, the last one unpadded."""
    rows = [HEADERS] + [_cells(v) for v in result.verdicts]
    widths = [max(len(row[i]) for row in rows) + 3 for i in range(len(HEADERS) - 1)]
    return "\n".join("".join(cell.ljust(w) for cell, w in zip(row, widths)) + row[-1] for row in rows)


def decision(result: Evaluation) -> str:
    """The line that names the pick and the tie-break that decided it."""
    winner = result.winner
    if winner is None:
        return "Selected: none (no compatible runtime)"
    return f"Selected: {winner.runtime.name} ({winner.scope}): {result.tie_break}"


def as_json(result: Evaluation, namespace: str) -> dict:
    winner = result.winner
    return {
        "namespace": namespace,
        "model": {"kind": result.model.kind, "name": result.model.name},
        "rows": [{"runtime": v.runtime.name, "scope": v.scope, "compatible": v.compatible, "priority": v.priority,
                  "weight": v.weight, "score": v.score, "reason": v.reason} for v in result.verdicts],
        "selected": None if winner is None else {"runtime": winner.runtime.name, "scope": winner.scope,
                                                 "tieBreak": result.tie_break},
    }


def _cells(v) -> tuple[str, ...]:
    def dash(value) -> str:
        return "-" if value is None else str(value)
    return (v.runtime.name, v.scope, "Yes" if v.compatible else "No", dash(v.priority), dash(v.weight), dash(v.reason))

