"""Reading the input: paths, the directory walk, stdin, UTF-8 decoding, and parsing the text into :class:`Doc` records.

The entry point is :func:`read_paths` (files, directories, ``-``); :func:`omerender.ome.load.index` sorts its
documents into :class:`~omerender.ome.load.Inputs`. The limits of :mod:`omerender.yamlio.limits` on files, bytes and
objects are checked here; those on the YAML itself in :mod:`omerender.yamlio.yamlread`.
"""
from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass
from typing import Any, Iterable

import yaml

from omerender.errors import At, Message, OmeError, OmeErrors
from . import fastread, limits, paths as pathrules
from .marks import Origin, Source
from .yamlread import Budget, load_all, tab_problem, yaml_error_text

KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
STDIN = "<stdin>"
# The record `render --output-dir` keeps in the directory it writes; a directory holding one is output, not input.
RENDERED_MARKER = ".omerender-rendered.yaml"


@dataclass
class Doc:
    """One parsed YAML object and where it came from."""

    data: Any
    file: str
    position: int  # order in the whole input, for stable output
    origin: Origin | None = None  # where in its text (messages name the line); None: not the user's text

    @property
    def kind(self) -> str:
        return self.data.get("kind", "") if isinstance(self.data, dict) else ""


def find_kustomization(directory: str) -> str | None:
    """The kustomization file of ``directory`` (kustomize's names, in its order), if it has one."""
    for name in KUSTOMIZATION_FILES:
        candidate = os.path.join(directory, name)
        if os.path.isfile(candidate):
            return candidate
    return None


# ---------------------------------------------------------------- reading


def read_paths(paths: Iterable[str], stdin=None, notes: list[Message] | None = None,
               kustomizations: list[str] | None = None, outputs: bool = False) -> list[Doc]:
    """Parse every path (file, directory or ``-``) into documents, in a stable order.

    Reads only the given paths, judged where they resolve (:mod:`omerender.yamlio.paths`): symbolic links that
    lead out of their directory are refused, however the path is spelled, and the
    limits of :mod:`omerender.yamlio.limits` (file and total size, file count, object count) apply. Directories
    that ``render --output-dir`` wrote are skipped, each with an info message appended to ``notes``. The
    kustomization files the directory walk passes over are appended to ``kustomizations`` (the caller judges
    them). ``outputs``: read the directories ``render --output-dir`` wrote too (``validate`` reads output).
    """
    fastread.setting()  # OMERENDER_YAML_FAST is one of its values
    skipped: list[str] = []
    docs: list[Doc] = []
    errors: list[OmeError] = []
    total_bytes = file_count = 0
    budget = Budget()
    for path in paths:
        try:
            files = _files(path, skipped, kustomizations, outputs)
        except OmeError as err:  # the path itself: missing, a link leading out, too many files
            errors.append(err)
            continue
        file_count += len(files)
        if file_count > limits.MAX_FILES:
            raise OmeErrors(errors + [_too_many_files(path)])
        for file in files:
            try:
                # output (validate) is often one render of a whole fleet in one file: only the total limit bounds it
                limit = limits.MAX_TOTAL_BYTES if outputs else None
                text = _read_stdin(stdin) if path == "-" else read_file(file, limit)
            except OmeError as err:
                errors.append(err)
                continue
            total_bytes += len(text) if text.isascii() else len(text.encode("utf-8"))
            if total_bytes > limits.MAX_TOTAL_BYTES:
                raise OmeErrors(errors + [OmeError(f"the inputs are larger than {_mib(limits.MAX_TOTAL_BYTES)} "
                                                   "in total; render fewer files at a time", file=file)])
            try:
                docs.extend(parse_text(text, file, start=len(docs), budget=budget))
            except OmeError as err:
                errors.append(err)
            if len(docs) > limits.MAX_OBJECTS:
                raise OmeErrors(errors + [too_many_objects(file)])
    if notes is not None:
        notes.extend(Message("info", f"skipped: `omerender render --output-dir` wrote this directory (it holds "
                                     f"{RENDERED_MARKER}); its objects are output, not input", file=folder,
                                     code="rendered-dir-skipped")
                     for folder in skipped)
    if errors:
        raise OmeErrors(errors)
    return docs


def _too_many_files(path: str) -> OmeError:
    return OmeError(f"more than {limits.MAX_FILES:,} YAML files in the inputs; render fewer files at a time",
                    file=path)


def too_many_objects(file: str | None) -> OmeError:
    return OmeError(f"more than {limits.MAX_OBJECTS:,} objects in the inputs; render fewer files at a time",
                    file=file)


def _mib(size: int) -> str:
    return f"{size // limits.MIB} MiB"


def _files(path: str, skipped: list[str], kustomizations: list[str] | None = None, outputs: bool = False) -> list[str]:
    """The files ``path`` names: itself, or the YAML files of a directory."""
    if path == "-":
        return [STDIN]
    if not os.path.lexists(path):
        raise OmeError(f"no such file or directory: {path}")
    real = pathrules.resolve(path)
    return _yaml_files(path, real, skipped, kustomizations, outputs) if os.path.isdir(real) else [path]


def _read_stdin(stdin) -> str:
    # stdin often carries a whole input (`kustomize build . | omerender render -`): the total limit applies.
    return read_stream(stdin if stdin is not None else sys.stdin, limits.MAX_TOTAL_BYTES, STDIN,
                       "render fewer objects at a time")


def read_stream(stream, limit: int, name: str, fix: str = "split it into several files") -> str:
    """The text of ``stream`` (stdin), read as bytes and refused once it passes ``limit`` bytes: never
    more than ``limit`` + 1 bytes are held."""
    source = getattr(stream, "buffer", stream)
    data = source.read(limit + 1)
    if isinstance(data, str):  # a text stream without bytes underneath (tests pass StringIO)
        data = data.encode("utf-8", "surrogatepass")
    if len(data) > limit:
        raise OmeError(f"larger than {_mib(limit)}; {fix}", file=name)
    return decode(data, name)


def decode(data: bytes, name: str) -> str:
    """UTF-8 text, or an error giving the offset of the first byte that is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise OmeError(f"not UTF-8 text: byte 0x{data[err.start]:02x} at offset {err.start} is not valid "
                       "UTF-8; save it as UTF-8 (Kubernetes YAML is UTF-8)", file=name) from None


def read_named_file(path: str) -> str:
    """A file named by the user or found beside an input (the lock): read as :func:`read_file` reads
    inputs, and every symbolic link on its path must stay inside its own directory."""
    pathrules.resolve(path)
    return read_file(path)


def _yaml_files(directory: str, real: str, skipped: list[str],
                kustomizations: list[str] | None = None, outputs: bool = False) -> list[str]:
    """YAML files under ``directory``. Symbolic links are not followed: one leading outside is an error, and
    the target of one inside is read under its own name (reading it twice would duplicate its objects).
    ``real`` is the resolved ``directory``, the boundary of every link below it.
    A directory holding the record of ``render --output-dir`` is appended to ``skipped``, not read.
    What is passed over is decided by the rules :func:`walk_skips` applies to a named file."""
    found = []
    for root, dirs, files in os.walk(directory):
        if not outputs and _is_output(files):
            skipped.append(root)
            dirs[:] = []
            continue
        dirs[:] = sorted(d for d in dirs if _skipped_directory(d) is None)
        for name in dirs + files:
            pathrules.check_entry(os.path.join(root, name), real, directory)
        for name in files:
            if name in KUSTOMIZATION_FILES and kustomizations is not None:
                kustomizations.append(os.path.join(root, name))
            if _skipped_file(name) is None and not os.path.islink(os.path.join(root, name)):
                found.append(os.path.join(root, name))
        if len(found) > limits.MAX_FILES:  # stop walking: read_paths counts across every path
            raise _too_many_files(directory)
    return sorted(found)


# ---------------------------------------------------------------- which files a render reads


def _is_output(files: Iterable[str]) -> bool:
    """Whether a directory whose non-directory entries are ``files`` was written by ``render --output-dir``."""
    return RENDERED_MARKER in files


def _skipped_directory(name: str) -> str | None:
    """Why the walk does not enter a directory named ``name``; None when it does."""
    return "a directory whose name starts with a dot" if name.startswith(".") else None


def _skipped_file(name: str) -> str | None:
    """Why the walk does not read a file named ``name`` (not a link); None when it does."""
    if name in KUSTOMIZATION_FILES:
        return "a kustomization"
    if name.startswith("."):
        return "a file whose name starts with a dot"
    if not name.endswith((".yaml", ".yml")):
        return "not named .yaml or .yml"
    return None


def walk_skips(file: str, directory: str) -> str | None:
    """Why rendering ``directory`` does not read the regular file ``file``; None when its walk reads it.

    The one answer to "is this file read", judged where both resolve: the walk reads a link's target under the
    target's own name, never the link. Whoever adds a named file to a render beside a directory (Argo CD's
    CLUSTER_CONFIG, ``--cluster-config``) asks it through :func:`paths_reading`, so that a file the walk passes
    over (a dot-directory, a dot-file, a directory ``render --output-dir`` wrote) is read all the same, and one
    it reads is not read twice."""
    real, top = os.path.realpath(file), os.path.realpath(directory)
    if not pathrules.within(real, top) or real == top:
        return f"outside {directory}"
    folder, names = top, [name for name in os.path.relpath(os.path.dirname(real), top).split(os.sep) if name != "."]
    for name in [None, *names]:
        folder = folder if name is None else os.path.join(folder, name)
        shown = os.path.relpath(folder, os.path.dirname(top))
        reason = None if name is None else _skipped_directory(name)
        if reason is not None:
            return f"{shown} is {reason}"
        if _holds_record(folder):
            return f"{shown} holds {RENDERED_MARKER}: `omerender render --output-dir` wrote it"
    reason = _skipped_file(os.path.basename(real))
    return None if reason is None else f"{os.path.basename(real)} is {reason}"


def _holds_record(folder: str) -> bool:
    """:func:`_is_output` for ``folder``, its entry classified as :func:`os.walk` classifies it."""
    record = os.path.join(folder, RENDERED_MARKER)
    return os.path.lexists(record) and not os.path.isdir(record)


def paths_reading(paths: Iterable[str], file: str) -> tuple[str, ...]:
    """``paths`` to render, with the named ``file`` added unless one of them reads it already (the same file,
    or a directory whose walk reaches it: :func:`walk_skips`)."""
    paths = tuple(paths)
    real = os.path.realpath(file)
    for path in paths:
        if path == "-":
            continue
        if os.path.isdir(path) and walk_skips(file, path) is None or os.path.realpath(path) == real:
            return paths
    return paths + (file,)


def read_file(file: str, limit: int | None = None) -> str:
    """The UTF-8 text of a regular file of at most ``limit`` bytes (default: the file limit); anything else
    is an error naming it."""
    limit = limits.MAX_FILE_BYTES if limit is None else limit
    try:
        _check_regular(os.stat(file), file, limit)  # before open: opening a FIFO would block
        with open(file, "rb") as handle:
            _check_regular(os.fstat(handle.fileno()), file, limit)
            data = handle.read(limit + 1)  # the file may have grown since
    except OSError as err:
        raise OmeError(f"cannot read file: {err.strerror}", file=file) from None
    if len(data) > limit:
        raise OmeError(f"larger than {_mib(limit)}; split it into several files", file=file)
    return decode(data, file)


def _check_regular(info: os.stat_result, file: str, limit: int) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise OmeError("not a regular file; omerender reads only files, directories and -", file=file)
    if info.st_size > limit:
        raise OmeError(f"larger than {_mib(limit)}; split it into several files", file=file)


def list_items(data) -> list | None:
    """The items of a ``kind: List`` document, which stand for it as objects; None for any other document."""
    items = data.get("items") if isinstance(data, dict) and data.get("kind") == "List" else None
    return items if isinstance(items, list) else None


def parse_text(text: str, file: str, start: int = 0, budget: Budget | None = None,
               located: bool = True) -> list[Doc]:
    """Parse a multi-document YAML text; ``kind: List`` is flattened.

    Only plain YAML is read (see :class:`SafeLoader`); input over a limit is an error naming ``file``.
    ``budget`` is shared by every text of one input. ``located``: ``text`` is what the user wrote in
    ``file``, so messages may name its lines (not so for a build's output).
    """
    roots: list = []
    try:
        loaded = load_all(text, budget if budget is not None else Budget(), roots)
    except yaml.YAMLError as err:
        tab = tab_problem(err, text) if located else None
        if tab is not None:
            raise OmeError(tab[0], file=file, origin=At(tab[1], tab[2])) from None
        mark = getattr(err, "problem_mark", None) if located else None
        raise OmeError(yaml_error_text(err), file=file,
                       origin=At(mark.line + 1, mark.column + 1) if mark is not None else None) from None
    source = Source(text, roots) if located and len(roots) == len(loaded) else None
    docs = []
    for index, data in enumerate(loaded):
        if data is None:
            continue
        items = list_items(data)
        if items is None:
            docs.append(Doc(data, file, start + len(docs), source and Origin(source, index)))
        for item, value in enumerate(items or ()):
            docs.append(Doc(value, file, start + len(docs), source and Origin(source, index, item)))
        if len(docs) > limits.MAX_OBJECTS:
            raise too_many_objects(file)
    return docs
