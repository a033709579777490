"""``omerender validate [PATH]...``: check objects as the target cluster's API server would
(:mod:`omerender.validate`)."""
from __future__ import annotations

import json
import sys

import click

from omerender.errors import Message, run_guarded
from omerender.kube.apiversions import parse_kube_version
from omerender.kube.k8stypes import table_version
from omerender.validate import read, user_schemas, validate_docs
from .shell import allow_option, allowed, fail, fail_if_strict, messages_option, say


@click.command("validate", epilog="\b\nExamples:\n  omerender validate rendered/ --kube-version 1.31\n"
                                  "  omerender render apps/ | omerender validate - --strict\n"
                                  "  omerender validate rendered/ --schema-location crds/")
@click.argument("paths", nargs=-1, metavar="[PATH]...")
@click.option("--kube-version", metavar="VERSION",
              help="The target cluster's Kubernetes version (e.g. 1.31.2; default: the newest omerender ships the "
                   "schemas of): built-in kinds are checked against that version's schema.")
@click.option("--schema-location", "schema_locations", multiple=True, metavar="PATH",
              help="A file or directory of CustomResourceDefinitions (repeatable): objects of their kinds are checked "
                   "against them, CEL rules included.")
@click.option("--strict", is_flag=True, help="Fail (exit 1) on any warning too, such as a kind with no schema; for CI.")
@click.option("-o", "--output", "output_format", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="text: the messages on stderr only; json: a report on stdout as well.")
@click.option("--debug", is_flag=True, help="Show a traceback for internal errors.")
@allow_option
@messages_option
def validate_cmd(paths, kube_version, schema_locations, strict, output_format, debug):
    """Check every object of YAML files, directories (recursively) or - (stdin) as the target cluster's API
    server would check its create: built-in kinds against the schema of --kube-version, strict about unknown
    fields (kubectl apply --validate=strict); LeaderWorkerSet, KEDA ScaledObject and TriggerAuthentication,
    Gateway API HTTPRoute, Envoy Gateway BackendTrafficPolicy and PodMonitor against their pinned CRDs and
    CEL rules; OME's kinds against OME's CRD fields. No PATH means ".".

    One error line per problem (the object, the field, file:line:column); exit status 1 on any error."""
    notes: list[Message] = []

    def run():
        version = table_version(parse_kube_version(kube_version, "--kube-version"))
        extra = user_schemas(list(schema_locations))
        docs = read(list(paths or (".",)))
        return version, len(docs), validate_docs(docs, version, extra, notes)

    value, failures = run_guarded(run, debug)
    if failures:
        fail(failures)
    version, count, errors = value
    if output_format == "json":
        sys.stdout.write(json.dumps({"kubeVersion": version, "objects": count,
                                     "messages": [_as_json(m) for m in [*notes, *errors]]}, indent=1) + "\n")
    for message in [*notes, *errors]:
        say(message)
    if errors:
        sys.exit(1)
    fail_if_strict(strict, notes, allow=allowed())


def _as_json(message: Message) -> dict:
    position = message.position()
    ref = message.ref
    return {"severity": message.severity, "code": message.code, "file": message.file,
            "line": position[0] if position else None, "column": position[1] if position else None,
            "object": {"kind": ref.kind, "name": ref.name, "namespace": ref.namespace} if ref else None,
            "field": message.field, "message": message.text}
