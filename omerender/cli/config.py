"""``omerender config``: the cluster settings a render applies (OME's ConfigMap inferenceservice-config, else the
Helm chart's defaults) and where each one came from."""
from __future__ import annotations

import json

import click

from omerender.errors import OmeError, escape, run_guarded
from omerender.ome.cluster.view import Setting, settings
from omerender.ome.ingress.overrides import PREFIX as INGRESS_ANNOTATIONS
from omerender.ome.ingress.view import effective_rows
from omerender.gitops.overlays import read_inputs
from omerender.ome.load import Inputs, Obj
from .shell import cluster_config_option, fail, messages_option, say

HEADERS = ("SETTING", "VALUE", "SOURCE")

EXAMPLES = """
\b
Examples:
  omerender config deploy/                       # the ConfigMap in deploy/, else the chart's defaults
  omerender config -o json cluster/inferenceservice-config.yaml
  omerender config --isvc llama-3-2-3b-instruct -n llama-demo deploy/
"""


@click.command("config", epilog=EXAMPLES)
@click.argument("paths", nargs=-1, metavar="[PATH]...")
@click.option("--isvc", "isvc_name", metavar="NAME",
              help="Also show the ingress settings in effect for this InferenceService (what it renders: the external "
                   "Service, an Ingress or HTTPRoutes; its domain, gateways, hash headers) with their sources, and "
                   "its ome.io/ingress-* annotations, which override the cluster's ingress settings for it.")
@click.option("-n", "--namespace", default="default", show_default=True, metavar="NS",
              help="Namespace of the InferenceService.")
@click.option("-o", "--output", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="table: one row per setting on stdout, the configuration's source on stderr; json: one object.")
@cluster_config_option
@click.option("--debug", is_flag=True, help="Show a traceback for internal errors.")
@messages_option
def config_cmd(paths, isvc_name, namespace, output, debug, cluster_config=None):
    """Show the cluster settings a render of PATH... ("." if none) applies, and where each came from: the
    ConfigMap inferenceservice-config among the inputs, OME's own default, or the Helm chart's defaults; and the
    image and resources of BenchmarkJob pods, from the ConfigMap benchmarkjob-config or the chart's defaults."""
    value, failures = run_guarded(lambda: _inspect(read_inputs(list(paths or (".",)), cluster_config)[0], isvc_name,
                                                   namespace), debug)
    if failures:
        fail(failures)
    inputs, rows, overrides = value
    for message in inputs.messages:  # what the input says about the configuration, not the rest of the render's
        if message.ref is not None and message.ref.kind == "ConfigMap":
            say(message)
    if output == "json":
        click.echo(json.dumps({"source": inputs.cluster_config.source, "file": inputs.cluster_config.file,
                               "settings": [{"setting": r.name, "value": r.value, "source": r.source} for r in rows],
                               "overrides": overrides}, indent=2))
        return
    click.echo(escape(f"Cluster configuration: {inputs.cluster_config.source}"), err=True)
    # every cell on one line, control characters escaped: a value from the input (a NUL or an escape sequence in
    # a gateway name, a newline in an annotation) must not reach the terminal raw nor break the table
    table = [HEADERS] + [tuple(escape(cell) for cell in row) for row in (
        [(r.name, _shown(r.value), r.source) for r in rows] + [(o["annotation"], o["value"], o["source"])
                                                              for o in overrides])]
    # columns as wide as their widest cell up to MAX_COLUMN: a cell past it runs on in its own line only (padding
    # every row to a 200 kB value would print the value's size once per row)
    widths = [min(max(len(row[i]) for row in table), MAX_COLUMN) + 3 for i in range(2)]
    click.echo("\n".join(row[0].ljust(widths[0]) + row[1].ljust(widths[1]) + row[2] for row in table))


MAX_COLUMN = 80


def _inspect(inputs: Inputs, isvc_name: str | None, namespace: str) -> tuple[Inputs, list[Setting], list[dict]]:
    overrides = []
    if isvc_name is not None:
        isvc = _find_isvc(inputs, isvc_name, namespace)
        annotations = isvc.metadata.get("annotations") or {}
        overrides = [{"annotation": key, "value": annotations[key],
                      "source": f"annotation on {isvc.ref} ({isvc.file}), over the cluster's ingress settings"}
                     for key in sorted(annotations) if key.startswith(INGRESS_ANNOTATIONS)]
    rows = settings(inputs.cluster_config) + [Setting(*row) for row in inputs.benchmark_config.settings()]
    if isvc_name is not None:
        by_name = {row.name: row.source for row in rows}
        config = inputs.cluster_config
        rows += [Setting(f"{isvc.ref}: {name}", value, source) for name, value, source in
                 effective_rows(isvc, config.ingress, config.source,
                                lambda setting: by_name.get(setting, "OME default"))]
    return inputs, rows, overrides


def _find_isvc(inputs: Inputs, name: str, namespace: str) -> Obj:
    for isvc in inputs.isvcs:
        if (isvc.namespace, isvc.name) == (namespace, name):
            return isvc
    raise OmeError(f"no InferenceService {namespace}/{name} in the inputs")


def _shown(value) -> str:
    if value is None:
        return "-"
    return value if isinstance(value, str) and value else json.dumps(value)
