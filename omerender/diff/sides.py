"""The two sides of a diff: a directory, a file or a git revision, rendered exactly as ``render`` does: a PATH
that is a kustomize overlay is built (:mod:`omerender.gitops.overlays`), on both sides the same way."""
from __future__ import annotations

import contextlib
import functools
import os
import posixpath
import tempfile
from dataclasses import dataclass, field, replace

from omerender.errors import Message, OmeError, OmeErrors, Report, failure_messages
from omerender.gitops.buildrun import default_boundary
from omerender.gitops.overlays import build_overlay, overlay_path, read_with_cluster_config
from omerender.ome.load import Inputs, index
from omerender.ome.pinning.lockfile import find_lock, lock_from_inputs, read_lock
from omerender.ome.render import Options, Result, render
from omerender.ome.runtimes.inherit import Chains
from omerender.yamlio import paths as pathrules
from omerender.yamlio.reading import KUSTOMIZATION_FILES
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
              debug: bool = False, separated: bool = False, flags: tuple[str, ...] = (),
              cluster_config: str | None = None) -> Side:
    """Render ``source`` (a directory, a file or a git revision) limited to ``paths``; ``separated``: the
    arguments had ``--`` after BASE and HEAD, so a name that is a revision and a path is the revision.
    ``flags`` name the options the command line gave (an overlay's OMERender config sets them otherwise).
    ``cluster_config`` (``--cluster-config``): for a directory, that file as it is; for a revision, the file
    at that path as the revision holds it."""
    try:
        if _is_path(source, separated):
            local = _local_paths(source, paths)
            overlay = overlay_path(local)
            if overlay is not None:
                return _built(label, overlay, default_boundary(source), options, flags, lock_path, None,
                              cluster_config)
            return _render(label, local, options, lock_path, None, cluster_config)
        return _revision(label, source, paths or ["."], options, lock_path, debug, flags, cluster_config)
    except SideError:
        raise
    except Exception as exc:  # noqa: BLE001 - every failure of a side becomes its messages
        raise SideError([_on_side(label, m) for m in failure_messages(exc, debug)]) from None


def overlays_among(label: str, source: str, paths: list[str], separated: bool = False) -> list[str]:
    """The PATHs that are kustomize overlays in ``source`` (a directory, or a git revision, where only their
    kustomization files are read), as given; for a diff of several PATHs, each built on its own."""
    try:
        if _is_path(source, separated):
            return [path for path, local in zip(paths, _local_paths(source, paths)) if overlay_path([local])]
        cwd = os.getcwd()
        commit = gitread.verify(source, cwd)
        wanted = [gitread.repo_path(p, gitread.prefix(cwd)) for p in paths]
        with _staging(label) as tmp:
            kustomizations = [posixpath.join(p, name) for p in wanted for name in KUSTOMIZATION_FILES]
            gitread.extract(source, commit, kustomizations, cwd, tmp)
            return [path for path, p in zip(paths, wanted) if overlay_path([_staged_path(tmp, p)])]
    except SideError:
        raise
    except Exception as exc:  # noqa: BLE001 - every failure of a side becomes its messages
        raise SideError([_on_side(label, m) for m in failure_messages(exc)]) from None


def _is_path(source: str, separated: bool) -> bool:
    """git's rule: a name that is both a path here and a revision is ambiguous, unless ``--`` separates the
    revisions from the paths (a path never shadows a revision: a pull request could commit a ``HEAD/``)."""
    if not os.path.lexists(source):
        return False
    path = os.path.join(".", source)
    try:
        if not gitread.names_commit(source, os.getcwd()):
            return True
    except OmeError as err:
        raise OmeError(f'cannot tell whether "{source}" is a revision or the path {path}: {err.text}; write '
                       f"{path} for the path") from None
    if separated:
        return False
    raise OmeError(f'ambiguous argument "{source}": both the revision {source} and the path {path}; use -- to '
                   f"separate revisions from paths (omerender diff BASE HEAD -- [PATH]...), or write {path} "
                   "for the path")


def _revision(label: str, revision: str, paths: list[str], options: Options, lock_path: str | None,
              debug: bool, flags: tuple[str, ...], cluster_config: str | None = None) -> Side:
    """Render the revision's YAML files, copied into a temporary directory that is always removed and that
    no message names; an overlay is built from a copy of every kustomization directory of the revision (the
    boundary of its build)."""
    cwd = os.getcwd()
    commit = gitread.verify(revision, cwd)
    where = gitread.prefix(cwd)
    wanted = [gitread.repo_path(p, where) for p in paths]
    with _staging(label, debug) as tmp:
        gitread.extract(revision, commit, wanted, cwd, tmp)
        local = [_staged_path(tmp, p) for p in wanted]
        present = [p for p in local if os.path.lexists(p)]  # a path the revision lacks reads as empty
        # a cluster the revision lacks (added in head) may lack its ConfigMap's file there too
        staged_config = _staged_config(revision, commit, cluster_config, where, tmp, absent_ok=not present)
        overlay = overlay_path(present)
        if overlay is not None:
            side = _revision_overlay(label, revision, commit, os.path.relpath(overlay, tmp), options, flags,
                                     lock_path, debug, cluster_config)
        else:
            lock = find_lock(present or [tmp], lock_path and os.path.join(tmp, gitread.repo_path(lock_path, where)))
            if lock and not os.path.lexists(lock):  # the lock beside a file PATH is outside what was copied
                gitread.extract(revision, commit, [os.path.relpath(lock, tmp).replace(os.sep, "/")], cwd, tmp,
                                any_name=True)
            side = _render(label, present, options, lock, tmp, staged_config)
        side.missing = [path for path, copy in zip(paths, local) if not os.path.lexists(copy)]
        return side


def _staged_config(revision: str, commit: str, cluster_config: str | None, where: str, tmp: str,
                   absent_ok: bool = False) -> str | None:
    """The ``--cluster-config`` file as ``revision`` holds it, copied under ``tmp`` (its path there); an error
    naming the revision where it has none (None with ``absent_ok``, where the revision has none of the PATHs)."""
    if cluster_config is None:
        return None
    path = gitread.repo_path(cluster_config, where)
    staged = _staged_path(tmp, path)
    if not os.path.lexists(staged):  # not copied already with the PATHs
        gitread.extract(revision, commit, [path], os.getcwd(), tmp, any_name=True)
    if absent_ok and not os.path.lexists(staged):
        return None
    if os.path.isdir(staged):
        raise OmeError(f"--cluster-config {cluster_config}: in revision {revision}, {path} is a directory; name the "
                       f"file that holds the ConfigMap inferenceservice-config")
    if not os.path.isfile(staged):
        raise OmeError(f"--cluster-config {cluster_config}: revision {revision} holds no file {path} (a symbolic "
                       f"link in a revision is never followed)")
    return staged


def _revision_overlay(label: str, revision: str, commit: str, overlay: str, options: Options,
                      flags: tuple[str, ...], lock_path: str | None, debug: bool,
                      cluster_config: str | None = None) -> Side:
    with _staging(label, debug) as tmp:
        gitread.extract_overlay(revision, commit, os.getcwd(), tmp)
        config = _staged_config(revision, commit, cluster_config, gitread.prefix(os.getcwd()), tmp)
        return _built(label, os.path.join(tmp, overlay), tmp, options, flags, lock_path, tmp, config)


@contextlib.contextmanager
def _staging(label: str, debug: bool = False):
    """A temporary directory for a revision's files, always removed and read as a resolved path (a linked TMPDIR
    is not the input's link); any failure inside becomes the side's messages, naming files as the repository
    names them, never the directory."""
    with tempfile.TemporaryDirectory(prefix="omerender-diff-") as staging:
        tmp = os.path.realpath(staging)
        try:
            yield tmp
        except SideError:
            raise
        except Exception as exc:  # noqa: BLE001 - every failure, named as the repository names its files
            raise SideError([_on_side(label, m) for m in _unstaged(failure_messages(exc, debug), tmp)]) from None


def _staged_path(tmp: str, path: str) -> str:
    """Where the repository path ``path`` ("" for its root) is staged under ``tmp``."""
    return os.path.join(tmp, *path.split("/")) if path else tmp


def _built(label: str, directory: str, boundary: str, options: Options, flags: tuple[str, ...],
           lock_path: str | None, tmp: str | None, cluster_config: str | None = None) -> Side:
    """The side an overlay's build gives (see :func:`omerender.gitops.overlays.build_overlay`)."""
    try:
        built = build_overlay(directory, boundary, options, flags, lock_path, cluster_config=cluster_config)
    except (OmeError, OmeErrors) as exc:
        raise SideError([_on_side(label, m) for m in _unstaged(failure_messages(exc), tmp)]) from None
    built.result.messages = _unstaged(built.result.messages, tmp)
    return Side(label, built.inputs, built.result)


def _local_paths(source: str, paths: list[str]) -> list[str]:
    """The paths to read for a directory side: ``source`` itself, or each PATH inside it, judged by where it
    resolves (a link leading out of its directory is an error naming it, see :mod:`omerender.yamlio.paths`)."""
    root = pathrules.resolve(source)
    if not paths:
        return [source]
    if not os.path.isdir(root):
        raise OmeError(f"{source} is a file: PATH arguments need two directories or two git revisions")
    for path in paths:
        inside = not os.path.isabs(path) and os.path.normpath(path).split(os.sep)[0] != ".."
        if not inside or not pathrules.within(pathrules.resolve(os.path.join(source, path)), root):
            raise OmeError(f"{path}: PATH must be relative and inside {source}")
    return [os.path.join(source, path) for path in paths]


def _render(label: str, paths: list[str], options: Options, lock_path: str | None, tmp: str | None,
            cluster_config: str | None = None) -> Side:
    try:
        docs = read_with_cluster_config(paths, cluster_config) if paths or cluster_config else []
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
    return [replace(m, file=_shown(m.file, tmp), text=_hidden(m.text, tmp)) for m in messages]


def _shown(file: str | None, tmp: str) -> str | None:
    """A file of a revision as the repository names it (not the temporary copy, however it is spelled: a
    build names files relative to the working directory when the two share a folder)."""
    if file is None:
        return None
    absolute = file if os.path.isabs(file) else os.path.normpath(os.path.join(os.getcwd(), file))
    for staged in _spellings(tmp):
        if absolute == staged or absolute.startswith(staged + os.sep):
            return os.path.relpath(absolute, staged).replace(os.sep, "/")
    return file


def _hidden(text: str, tmp: str) -> str:
    for staged in _spellings(tmp):
        text = text.replace(staged + os.sep, "").replace(staged, ".")
    return text


@functools.lru_cache(maxsize=4)  # once per side, not once per document
def _spellings(tmp: str) -> tuple[str, ...]:
    """The temporary directory as given, as resolved (``/tmp`` may be a link) and relative to the working
    directory (as a build names files when the two share a folder), the longer first."""
    return tuple(sorted({tmp, os.path.realpath(tmp), os.path.relpath(tmp)}, key=len, reverse=True))


def _on_side(label: str, message: Message) -> Message:
    return replace(message, file=f"{label}: {message.file}" if message.file else label)
