"""``omerender explain``: why each runtime is or is not chosen for a model (selection.md §5)."""
from __future__ import annotations

import json

import click

from .errors import OmeError
from .shell import fail, run_guarded
from .load import Inputs, index
from .reading import read_paths
from .selection.evaluation import Evaluation, evaluate
from .selection.lookup import model_for_explain
from .selection.request import Request, request_of
from .selection.validation import FORMAT_REQUIRED
from .suggest import did_you_mean

HEADERS = ("RUNTIME", "SCOPE", "COMPATIBLE", "PRIORITY", "WEIGHT", "REASON")
NO_RUNTIMES = "No serving runtimes found in the selected namespace or at cluster scope."
HYPOTHETICAL = "Note: spec.runtime is explicit; automatic selection below is hypothetical."


@click.command("explain", epilog="\b\nExamples:\n  omerender explain --isvc llama-3-2-3b-instruct -n llama-demo fixtures/quickstart\n  omerender explain --model llama-3-2-3b-instruct -n llama-demo -o json runtimes/ models/")
@click.option("--model", "model_name", metavar="NAME", help="BaseModel in the namespace, else ClusterBaseModel.")
@click.option("--isvc", "isvc_name", metavar="NAME", help="InferenceService in the namespace.")
@click.option("-n", "--namespace", default="default", show_default=True, metavar="NS",
              help="Namespace of the InferenceService, and of the BaseModel or ServingRuntimes to consider "
                   "(ClusterBaseModels and ClusterServingRuntimes are always considered).")
@click.option("-o", "--output", type=click.Choice(["table", "text", "json"]), default="table", show_default=True,
              help="table (or text): one row per runtime on stdout, the decision on stderr; json: the rows and "
                   "the decision as one object on stdout.")
@click.argument("paths", nargs=-1)
def explain(model_name, isvc_name, namespace, output, paths):
    """Show which runtimes are compatible with a model, and why."""
    value, failures = run_guarded(lambda: explain_inputs(index(read_paths(paths or (".",))), namespace,
                                                         model_name, isvc_name))
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


def explain_inputs(inputs: Inputs, namespace: str, model_name: str | None,
                   isvc_name: str | None) -> tuple[Evaluation, list[str]]:
    """Run the shared evaluation for ``--model`` or ``--isvc``; returns it with the stderr notes."""
    if bool(model_name) == bool(isvc_name):
        raise OmeError("exactly one of --model or --isvc is required")
    notes: list[str] = []
    request = Request()
    if isvc_name:
        isvc = next((i for i in inputs.isvcs if i.name == isvc_name and i.namespace == namespace), None)
        if isvc is None:
            raise OmeError(f'inferenceservices.ome.io "{isvc_name}" not found'
                           + _isvc_hint(inputs, isvc_name, namespace))
        model_ref = isvc.spec.get("model")
        model_name = model_ref.get("name") if isinstance(model_ref, dict) else None
        if not model_name:
            raise OmeError(f'InferenceService "{isvc_name}" has no spec.model; pass --model instead')
        runtime_ref = isvc.spec.get("runtime")
        if isinstance(runtime_ref, dict) and runtime_ref.get("name"):
            notes.append(HYPOTHETICAL)
        request = request_of(isvc)
    model = model_for_explain(inputs, namespace, model_name)
    if model is None:
        names = lambda: [n for ns, n in inputs.models if ns == namespace] + list(inputs.cluster_models)  # noqa: E731
        raise OmeError(f'clusterbasemodels.ome.io "{model_name}" not found'
                       + did_you_mean(model_name, names, len(inputs.models) + len(inputs.cluster_models), inputs))
    result = evaluate(inputs, namespace, model, request)
    if not result.format:
        raise OmeError(FORMAT_REQUIRED)
    if not result.verdicts:
        notes.append(NO_RUNTIMES)
    return result, notes


def _isvc_hint(inputs: Inputs, name: str, namespace: str) -> str:
    """Where the InferenceService is when it is in another namespace, else the nearest names in this one."""
    elsewhere = sorted(i.namespace for i in inputs.isvcs if i.name == name)
    if elsewhere:
        return f" in namespace {namespace}; it is in namespace {elsewhere[0]}: pass -n {elsewhere[0]}"
    names = lambda: [i.name for i in inputs.isvcs if i.namespace == namespace]  # noqa: E731
    return did_you_mean(name, names, len(inputs.isvcs), inputs)


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

