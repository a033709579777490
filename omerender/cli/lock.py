"""``omerender lock update``: write and advance ``omerender.lock.yaml`` (inheritance-and-pinning.md §16)."""
from __future__ import annotations

import os

import click

from omerender.errors import OmeError, OmeErrors, Report, run_guarded
from omerender.gitops import atomicdir
from omerender.gitops.overlays import read_inputs
from omerender.ome.load import Inputs
from omerender.ome.pinning.lock import update_lock
from omerender.ome.pinning.lockfile import (LOCK_FILE, dump_lock, find_lock, is_lock_object, parse_lock,
                                           read_lock_text)
from omerender.ome.runtimes.inherit import Chains, validate_runtime_chain
from .shell import cluster_config_option, fail, messages_option, say


@click.group("lock", epilog="\b\nExample:\n  omerender lock update deploy/ && git add deploy/omerender.lock.yaml")
def lock():
    """Manage omerender.lock.yaml, the pins of InferenceServices with autoSync: false."""


@lock.command("update", epilog="\b\nExamples:\n  omerender lock update deploy/\n  omerender lock update --advance llama-demo/llama-3-2-3b-instruct deploy/")
@click.argument("paths", nargs=-1, metavar="[PATH]...")
@click.option("--lock", "lock_path", metavar="FILE",
              help=f"The lock file (default: {LOCK_FILE} in the first PATH, or beside it).")
@click.option("--advance", multiple=True, metavar="NAMESPACE/NAME",
              help="Advance this pinned InferenceService to its live runtime spec (repeatable).")
@click.option("--advance-all", is_flag=True, help="Advance every pinned InferenceService whose runtime changed.")
@cluster_config_option
@click.option("--debug", is_flag=True, help="Show a traceback for internal errors.")
@messages_option
def update(paths, lock_path, advance, advance_all, debug, cluster_config=None):
    """Record the runtime spec of every InferenceService in PATH... ("." if none): pin those with
    autoSync: false, and advance pins on a new ome.io/runtime-sync token or --advance.
    Writes nothing on any error, and leaves the file untouched when nothing changed.

    A PATH that is a kustomize overlay is built as `omerender build` builds it; its lock is the file of the
    RuntimeLock the build holds (else omerender.lock.yaml in it, to be listed under resources:)."""
    paths = paths or (".",)
    report = Report()

    def run():
        default = find_lock(list(paths), lock_path)
        if default is None:
            raise OmeError("lock update reads its input from stdin: name the lock file with --lock")
        inputs, built = read_inputs(list(paths), cluster_config)
        target = (_built_lock(inputs) if built is not None and not lock_path else None) or default
        _check_advance(inputs, advance)
        old_text = read_lock_text(target)
        old = None if old_text is None else parse_lock(old_text, target)
        chains = Chains(inputs, report)
        _validate_runtimes(inputs, chains)
        new_text = dump_lock(update_lock(inputs, chains, old, True if advance_all else set(advance), report))
        if new_text != old_text:
            try:
                atomicdir.replace_file(target, new_text)
            except OSError as err:
                raise OmeError(f"cannot write {target}: {err.strerror}") from None

    _, failures = run_guarded(run, debug)
    for message in report.messages:
        say(message)
    if failures:
        fail(failures)


def _built_lock(inputs: Inputs) -> str | None:
    """The file of the RuntimeLock an overlay's build holds (named by its origin), if it holds one."""
    found = [obj.file for obj in inputs.others if is_lock_object(obj)]
    return found[0] if len(found) == 1 and os.path.isfile(found[0]) else None


def _check_advance(inputs: Inputs, advance) -> None:
    present = {f"{isvc.namespace}/{isvc.name}" for isvc in inputs.isvcs}
    for name in advance:
        if name not in present:
            raise OmeError(f"--advance {name}: no InferenceService {name} in the input")


def _validate_runtimes(inputs: Inputs, chains: Chains) -> None:
    """The chain checks of every runtime (api.md §7.1 rows 1-4), as render reports them."""
    errors = []
    runtimes = list(inputs.cluster_runtimes.values()) + list(inputs.runtimes.values())
    for runtime in sorted(runtimes, key=lambda o: (o.kind, o.namespace or "", o.name)):
        try:
            validate_runtime_chain(runtime, chains)
        except OmeError as err:
            errors.append(err)
    if errors:
        raise OmeErrors(errors)
