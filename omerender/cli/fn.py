"""``omerender-fn`` (and ``omerender fn``): omerender as a KRM function, a ResourceList on stdin and on stdout
(:mod:`omerender.gitops.krm`)."""
from __future__ import annotations

import sys

from omerender import version_text, without_cycle_collector
from omerender.errors import OmeError
from omerender.gitops.krm import CONFIG_API, CONFIG_KIND, run_input
from omerender.yamlio.emit import write_resource_list


HELP = f"""Usage: {{prog}} [-h | --help | --version]

  omerender as a KRM function: reads a ResourceList (apiVersion config.kubernetes.io/v1)
  on stdin, renders the OME objects among its items as `omerender render` does, and writes
  the ResourceList with the rendered objects on stdout. Errors and warnings are its
  results; errors and warnings also go to stderr, and any error exits 1.

  Options go in the functionConfig, apiVersion {CONFIG_API}, kind {CONFIG_KIND}:
    spec: {{{{keepInputs: false, noModelNodeSelector: false, locked: false, podMonitors: false, strict: false,
           quiet: false}}}}
  modelWeights: agent or download (docs/how-to/model-weights.md), and with download weightsStorageClass,
  weightsAccessMode (ReadWriteOnce, ReadWriteMany, ReadWriteOncePod) and downloaderImage (strings), and the
  download Job's weightsNodeSelector ({{{{KEY: VALUE}}}}), weightsTolerations ([KEY[=VALUE]:EFFECT]),
  downloaderResources and weightsWaitResources ({{{{requests.cpu: 1, limits.memory: 8Gi}}}}), downloadDeadline
  (seconds), downloaderEnv ({{{{NAME: VALUE}}}}) and downloaderEnvFrom ([configmap/NAME, secret/NAME]).
  strict: true makes any warning fail the function (an error result, exit 1), for CI;
  allow: [CODE, ...] accepts the warnings of those codes (docs/reference/message-codes.md);
  quiet: true leaves out the info results (as --quiet leaves out info lines);
  kubeVersion: "1.30" checks input pod fields against that Kubernetes version's schema (default: the
  newest shipped); apiVersions: [v1, apps/v1, ...] fails on an object the cluster does not serve;
  validate: true checks every object written as `omerender validate` does.
  Each result's tags.code is its message's code.
  kpt may pass a ConfigMap whose data has the same keys as "true"/"false" (allow: "CODE,CODE").
  An omerender.lock.yaml item (kind RuntimeLock) is the lock.

Example (plugins/kustomize/omerender-fn.yaml listed under transformers:):
  kustomize build --enable-alpha-plugins --enable-exec overlays/prod
"""


def main(argv: list[str] | None = None, prog: str = "omerender-fn") -> None:
    """The ``omerender-fn`` console script; ``omerender fn`` passes its own arguments and name."""
    if argv is None:  # the console script; ``omerender fn`` comes through cli.main, which did this already
        without_cycle_collector()
    args = sys.argv[1:] if argv is None else argv
    if any(arg in ("-h", "--help") for arg in args):
        sys.stdout.write(HELP.format(prog=prog))
        sys.exit(0)
    if "--version" in args:
        sys.stdout.write(version_text(prog))
        sys.exit(0)
    resource_list, code, lines = run_input(sys.stdin)
    for line in (line for line in lines if not line.startswith("info:")):  # kustomize shows stderr but not results: the CLI's lines, file:line:column and all
        sys.stderr.write(line + "\n")
    try:
        write_resource_list(resource_list, sys.stdout)
    except OmeError as err:  # a string the writer cannot write as UTF-8 (emit.not_utf8_error)
        sys.stderr.write(err.message().line() + "\n")
        sys.exit(1)
    sys.exit(code)
