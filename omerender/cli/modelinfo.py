"""``omerender model-info``: print a model's metadata, or fill it into BaseModel files (``--update``)."""
from __future__ import annotations

import copy
import json
import os
import stat
import sys

import click

from omerender.errors import Message, OmeError, OmeErrors, Report, run_guarded
from omerender.gitops import atomicdir
from omerender.modelinfo import HUB_SECONDS, ReadBudget, describe, open_source
from omerender.modelinfo.update import each_object, extendable, insert, load_objects, missing_fields, models_in
from omerender.ome.weights.size import SIZE_ANNOTATION
from omerender.yamlio import limits, paths
from omerender.yamlio.emit import dump
from omerender.yamlio.reading import _files, read_file
from .shell import fail, messages_option, say

EXAMPLE = """
\b
Examples:
  omerender model-info ./Llama-3.2-3B-Instruct
  omerender model-info hf://meta-llama/Llama-3.2-3B-Instruct -o json
  omerender model-info --update models/llama-3.2-3b.yaml ./Llama-3.2-3B-Instruct
  HF_TOKEN=hf_... omerender model-info --update models/
"""
MAX_HUB_SECONDS = 86_400


@click.command("model-info", epilog=EXAMPLE)
@click.argument("source", required=False, metavar="[SOURCE]")
@click.option("--update", "update_path", metavar="FILE",
              help="Fill the missing fields of every BaseModel/ClusterBaseModel in FILE (or a directory) in place; "
                   "without SOURCE each model's spec.storage.storageUri says where to read.")
@click.option("-o", "--output", type=click.Choice(["yaml", "json"]), default="yaml", show_default=True,
              help="Output format when printing.")
@click.option("--hub-timeout", metavar="SECONDS", envvar="OMERENDER_HUB_TIMEOUT",
              help=f"Give up on the Hub after this many seconds for the whole command (default {HUB_SECONDS:g}; "
                   "also OMERENDER_HUB_TIMEOUT).")
@click.option("--debug", is_flag=True, help="Show a traceback for internal errors.")
@messages_option
def model_info(source, update_path, output, hub_timeout, debug):
    """The BaseModel fields OME's model agent derives from a model's files: modelType, modelFormat,
    modelFramework, modelArchitecture, modelParameterSize, maxTokens, modelCapabilities, quantization.

    SOURCE is a model directory (config.json or model_index.json, *.safetensors) or hf://ORG/NAME[@REVISION]
    (needs the huggingface_hub package: pip install huggingface_hub; honours HF_TOKEN and HF_ENDPOINT). Only
    configs and safetensors headers are read, never weights. The safetensors files' total size, plus 10% in whole
    Gi, is the annotation omerender.io/weights-size (the --model-weights download claim's size): printed under
    metadata.annotations, and written by --update where unset.
    """
    if update_path is None and source is None:
        fail([Message("error", "missing SOURCE: a model directory or hf://ORG/NAME[@REVISION] (or --update FILE)")])
    budget = ReadBudget(seconds=_seconds(hub_timeout))
    report = Report()
    if update_path is None:
        result, failures = run_guarded(lambda: _describe(source, report, budget), debug)
    else:
        result, failures = run_guarded(lambda: _update(update_path, source, report, budget), debug)
    if failures:
        fail(report.messages + failures)
    for message in report.messages:
        say(message)
    if update_path is None:
        fields, size = result
        shown = {"metadata": {"annotations": {SIZE_ANNOTATION: size}}} if size else {}
        shown["spec"] = fields
        sys.stdout.write(json.dumps(shown, indent=2, sort_keys=True) + "\n" if output == "json" else dump(shown))


def _seconds(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value <= MAX_HUB_SECONDS:
        fail([Message("error", f"--hub-timeout (or OMERENDER_HUB_TIMEOUT) {text!r}: expected a number of seconds "
                               f"above 0 and at most {MAX_HUB_SECONDS:,}")])
    return value


def _describe(source: str, report: Report, budget: ReadBudget) -> tuple[dict, str | None]:
    opened = open_source(source, budget)
    report.file = opened.label
    return describe(opened, report)


def _update(path: str, source: str | None, report: Report, budget: ReadBudget) -> None:
    cache: dict[str, dict] = {}
    total = 0
    writes, errors, models = [], [], 0
    for file in _files(path, []):
        try:
            text = read_file(file)
            total += len(text)
            if total > limits.MAX_TOTAL_BYTES:
                raise OmeErrors(errors + [OmeError(f"the files are larger than {limits.MAX_TOTAL_BYTES // limits.MIB} "
                                                   "MiB in total; update fewer at a time", file=file)])
            new, found = _update_text(file, text, path, source, report, cache, budget)
        except OmeError as err:
            errors.append(err)
            continue
        models += found
        if new is not None:
            writes.append((file, new))
    if errors:
        raise OmeErrors(errors)
    if not models:
        raise OmeError("no BaseModel or ClusterBaseModel (apiVersion ome.io/...) to update in it, nor in a "
                       "kind: List's items", file=path)
    for file, _ in writes:  # all checked before the first is written
        _check_writable(file)
    for file, text in writes:
        write_atomic(file, text)


def _update_text(file: str, text: str, root: str, source: str | None, report: Report, cache: dict,
                 budget: ReadBudget) -> tuple[str | None, int]:
    """The file's new text (None when nothing changes) and how many models it holds."""
    if os.path.islink(file):
        raise OmeError("a symbolic link; --update rewrites only regular files", file=file)
    edits, targets = [], models_in(text, file, report)
    for target in targets:
        if target.skipped:
            report.info("skipped: annotated ome.oracle.com/skip-config-parsing: \"true\"", ref=target.ref, file=file,
                        code="skip-config-parsing")
            continue
        where = source or _storage_source(target, file, root)
        located = Report(ref=target.ref, file=file)
        try:
            if where not in cache:
                cache[where] = describe(open_source(where, budget), located)
        except OmeError as err:
            raise err.located(target.ref, file)
        report.extend(located.messages)
        found, size = cache[where]
        fields = missing_fields(target.obj.get("spec"), found)
        if target.spec_node is None:
            raise OmeError("no spec to fill", ref=target.ref, file=file, field="spec")
        sized = target.annotation_edit(SIZE_ANNOTATION, size) if size else None
        if sized and not extendable(sized[0]):
            report.warn(f"{SIZE_ANNOTATION}: {size} not added: {sized[2]} is not a block mapping --update can extend; "
                        "add the annotation by hand", ref=target.ref, file=file, field=sized[2],
                        code="weights-size-not-added")
            sized = None
        if fields or sized:
            edits.append((target, fields, sized))
            added = list(fields) + ([f"annotation {SIZE_ANNOTATION}: {size}"] if sized else [])
            report.info(f"added {', '.join(added)} from {where}", ref=target.ref, file=file, code="model-info-added")
        else:
            report.info("nothing to add: every field OME's agent sets is already set", ref=target.ref, file=file,
                        code="model-info-complete")
    if not edits:
        return None, len(targets)
    refs = {id(node): t.ref for t, f, sized in edits for node in (t.spec_node, sized and sized[0]) if node}
    nodes = [(t.spec_node, f) for t, f, _ in edits if f] + [sized for _, _, sized in edits if sized]
    new = insert(text, nodes, file, lambda node: refs.get(id(node)))
    _verify(text, new, edits, file)
    return new, len(targets)


def _storage_source(target, file: str, root: str) -> str:
    uri = target.storage_uri
    if isinstance(uri, str) and uri.startswith("hf://"):
        return uri
    if isinstance(uri, str) and uri.startswith("local://"):
        return _local_path(uri, target, file, root)
    raise OmeError(f"cannot read the model from spec.storage.storageUri {uri!r}: pass SOURCE (a directory with the "
                   "model's config.json and safetensors)", ref=target.ref, file=file, field="spec.storage.storageUri")


def _local_path(uri: str, target, file: str, root: str) -> str:
    """``local://./rel``: relative to the model's file, and inside the --update path."""
    rel = uri[len("local://"):]
    base = os.path.realpath(root if os.path.isdir(root) else os.path.dirname(os.path.abspath(root)))
    resolved = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(file)), rel))
    if os.path.isabs(rel) or not paths.within(resolved, base):
        raise OmeError(f"storageUri {uri} leads outside {root}; pass SOURCE to read a model elsewhere",
                       ref=target.ref, file=file, field="spec.storage.storageUri")
    return resolved


def _verify(old: str, new: str, edits, file: str) -> None:
    """The edit added exactly the fields: anything else is a bug, and nothing is written."""
    expected = load_objects(old, file)
    by_name = {(t.ref.kind, t.ref.name, t.ref.namespace): (f, sized) for t, f, sized in edits}
    for obj, _ in (pair for doc in expected for pair in each_object(doc)):
        if isinstance(obj, dict) and isinstance(obj.get("spec"), dict):
            meta = obj.get("metadata") or {}
            ns = (meta.get("namespace") or "default") if obj.get("kind") == "BaseModel" else None
            fields, sized = by_name.get((obj.get("kind"), str(meta.get("name", "")), ns), ({}, None))
            obj["spec"].update(copy.deepcopy(fields))
            if sized:
                meta.setdefault("annotations", {}).update(sized[1].get("annotations", sized[1]))
    if load_objects(new, file) != expected:
        raise RuntimeError(f"{file}: the edited file does not read back as the original plus the new fields")


def _check_writable(file: str) -> None:
    """The new text goes to a temporary file beside ``file``: its directory must be writable. Judged by the
    mode bits, as ``render --output-dir`` judges its directory, so the answer is the same for root."""
    folder = os.path.dirname(os.path.abspath(file))
    try:
        mode = os.stat(folder).st_mode
    except OSError as err:
        raise OmeError(f"cannot write: {err.strerror}", file=file) from None
    if not mode & stat.S_IWUSR:
        raise OmeError(f"cannot be updated: its directory {folder} is read-only (--update writes the new text "
                       "beside the file, then renames it); make the directory writable (chmod u+w)", file=file)


def write_atomic(file: str, text: str) -> None:
    """Replace ``file`` atomically (:func:`atomicdir.replace_file`), keeping its mode; only a regular file."""
    try:
        if not stat.S_ISREG(os.lstat(file).st_mode):
            raise OmeError("not a regular file; --update rewrites only regular files", file=file)
        atomicdir.replace_file(file, text)
    except OSError as err:
        raise OmeError(f"cannot write: {err.strerror or err}", file=file) from None
