"""The two sides of a diff: a directory, a file or a git revision, rendered exactly as ``render`` does: a PATH
that is a kustomize overlay is built (:mod:`omerender.gitops.overlays`), on both sides the same way."""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field, replace

from omerender.errors import Message, OmeError, OmeErrors, Report, failure_messages
from omerender.gitops.buildrun import default_boundary
from omerender.gitops.overlays import build_overlay, overlay_path, read_plain
from omerender.ome.load import Inputs, index
from omerender.ome.pinning.lockfile import find_lock, lock_from_inputs, read_lock
from omerender.ome.render import Options, Result, render
from omerender.ome.runtimes.inherit import Chains
from . import gitread


@dataclass
class Side:
    label: str           # "base" or "head"
    inputs: Inputs
    result: Result
    missing: list[str] = field(default_factory=list)  # PATHs a revision does not have
    _chains: Chains | None = field(default=None, repr=False)

    def chains(self) -> Chains:
        """The runtime chains of this side's inputs, computed on first use."""
        if self._chains is None:
            self._chains = Chains(self.inputs, Report())
        return self._chains


class SideError(Exception):
    """One side failed to read or render; its messages name the side."""

    def __init__(self, messages: list[Message]):
        super().__init__("; ".join(m.text for m in messages))
        self.messages = messages


def read_side(label: str, source: str, paths: list[str], options: Options, lock_path: str | None,
              debug: bool = False, flags: tuple[str, ...] = ()) -> Side:
    """Render ``source`` (a directory, a file or a git revision) limited to ``paths``. ``flags`` name the
    options the command line gave (an overlay's OMERender config sets them otherwise)."""
    try:
        if os.path.lexists(source):  # an existing path wins over a revision of the same name
            local = _local_paths(source, paths)
            overlay = overlay_path(local)
            if overlay is not None:
                return _built(label, overlay, default_boundary(source), options, flags, lock_path, None)
            return _render(label, local, options, lock_path, None)
        return _revision(label, source, paths or ["."], options, lock_path, flags)
    except SideError:
        raise
    except Exception as exc:  # noqa: BLE001 - every failure of a side becomes its messages
        raise SideError([_on_side(label, m) for m in failure_messages(exc, debug)]) from None


def _revision(label: str, revision: str, paths: list[str], options: Options, lock_path: str | None,
              flags: tuple[str, ...]) -> Side:
    """Render the revision's YAML files, copied into a temporary directory that is always removed; an overlay
    is built from a copy of every kustomization directory of the revision (the boundary of its build)."""
    cwd = os.getcwd()
    commit = gitread.verify(revision, cwd)
    where = gitread.prefix(cwd)
    wanted = [gitread.repo_path(p, where) for p in paths]
    with tempfile.TemporaryDirectory(prefix="omerender-diff-") as tmp:
        gitread.extract(commit, wanted, cwd, tmp)
        local = [os.path.join(tmp, *p.split("/")) if p else tmp for p in wanted]
        present = [p for p in local if os.path.lexists(p)]  # a path the revision lacks reads as empty
        try:
            overlay = overlay_path(present)
        except (OmeError, OmeErrors) as exc:
            raise SideError([_on_side(label, m) for m in _unstaged(failure_messages(exc), tmp)]) from None
        if overlay is not None:
            side = _revision_overlay(label, commit, os.path.relpath(overlay, tmp), options, flags, lock_path)
        else:
            lock = find_lock(present or [tmp], lock_path and os.path.join(tmp, gitread.repo_path(lock_path, where)))
            if lock and not os.path.lexists(lock):  # the lock beside a file PATH is outside what was copied
                gitread.extract(commit, [os.path.relpath(lock, tmp).replace(os.sep, "/")], cwd, tmp, any_name=True)
            side = _render(label, present, options, lock, tmp)
        side.missing = [path for path, copy in zip(paths, local) if not os.path.lexists(copy)]
        return side


def _revision_overlay(label: str, commit: str, overlay: str, options: Options, flags: tuple[str, ...],
                      lock_path: str | None) -> Side:
    with tempfile.TemporaryDirectory(prefix="omerender-diff-") as staged:
        tmp = os.path.realpath(staged)  # as the build names its files
        try:
            gitread.extract_overlay(commit, os.getcwd(), tmp)
        except OmeError as exc:
            raise SideError([_on_side(label, exc.message())]) from None
        return _built(label, os.path.join(tmp, overlay), tmp, options, flags, lock_path, tmp)


def _built(label: str, directory: str, boundary: str, options: Options, flags: tuple[str, ...],
           lock_path: str | None, tmp: str | None) -> Side:
    """The side an overlay's build gives (see :func:`omerender.gitops.overlays.build_overlay`)."""
    try:
        built = build_overlay(directory, boundary, options, flags, lock_path)
    except (OmeError, OmeErrors) as exc:
        raise SideError([_on_side(label, m) for m in _unstaged(failure_messages(exc), tmp)]) from None
    built.result.messages = _unstaged(built.result.messages, tmp)
    return Side(label, built.inputs, built.result)


def _local_paths(source: str, paths: list[str]) -> list[str]:
    if not paths:
        return [source]
    if not os.path.isdir(source):
        raise OmeError(f"{source} is a file: PATH arguments need two directories or two git revisions")
    for path in paths:
        if os.path.isabs(path) or os.path.normpath(path).split(os.sep)[0] == "..":
            raise OmeError(f"{path}: PATH must be relative and inside {source}")
    return [os.path.join(source, path) for path in paths]


def _render(label: str, paths: list[str], options: Options, lock_path: str | None, tmp: str | None) -> Side:
    try:
        docs = read_plain(paths) if paths else []
        if tmp is not None:
            for doc in docs:
                doc.file = _shown(doc.file, tmp)
        inputs = index(docs)
        lock = lock_from_inputs(inputs) or read_lock(lock_path if tmp is not None else find_lock(paths, lock_path))
        result = render(inputs, options, lock)
    except (OmeError, OmeErrors) as exc:
        raise SideError([_on_side(label, m) for m in _unstaged(failure_messages(exc), tmp)]) from None
    result.messages = _unstaged(result.messages, tmp)
    return Side(label, inputs, result)


def _unstaged(messages: list[Message], tmp: str | None) -> list[Message]:
    """Messages of a revision name its files as the repository does, not their temporary copies."""
    if tmp is None:
        return messages
    spellings = {tmp, os.path.relpath(tmp)}
    return [replace(m, file=_shown(m.file, tmp), text=_unstaged_text(m.text, spellings)) for m in messages]


def _shown(file: str | None, tmp: str) -> str | None:
    """A file of a revision as the repository names it (not the temporary copy, however it is spelled: a
    build names files relative to the working directory when the two share a folder)."""
    if file is None or os.path.isabs(file) and not file.startswith(tmp + os.sep):
        return file
    absolute = file if os.path.isabs(file) else os.path.normpath(os.path.join(os.getcwd(), file))
    if not absolute.startswith(tmp + os.sep):
        return file
    return os.path.relpath(absolute, tmp).replace(os.sep, "/")


def _unstaged_text(text: str, spellings: set[str]) -> str:
    for spelling in spellings:
        text = text.replace(spelling + os.sep, "").replace(spelling, ".")
    return text


def _on_side(label: str, message: Message) -> Message:
    return replace(message, file=f"{label}: {message.file}" if message.file else label)
