"""Read the YAML files of a git revision into a temporary directory, without touching the work tree.

Plumbing only (``rev-parse``, ``ls-tree``, ``cat-file --batch``): no checkout, no hooks, no filters or
attributes. The revision is verified as a commit before it is used and is never seen by a shell. Paths from
the tree are checked before they become paths on disk, symbolic links are not written, and the limits of
:mod:`omerender.yamlio.limits` hold for the whole revision before a blob is read.
"""
from __future__ import annotations

import os
import posixpath
import subprocess

from omerender.errors import OmeError
from omerender.yamlio import limits
from omerender.yamlio.reading import KUSTOMIZATION_FILES

# No fsmonitor hook (a repository's config could name a program), no pager, no prompt.
_GIT = ("git", "--no-pager", "--literal-pathspecs", "-c", "core.fsmonitor=false")
_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"}
_YAML = (".yaml", ".yml")
_LINK, _FILE_MODES = "120000", ("100644", "100755")


def _git(args: list[str], cwd: str, stdin: bytes | None = None) -> bytes:
    try:
        done = subprocess.run([*_GIT, *args], cwd=cwd, input=stdin, capture_output=True,
                              env={**os.environ, **_ENV}, check=False)
    except OSError as err:
        raise OmeError(f"cannot run git: {err.strerror}; install git, or compare two directories") from None
    if done.returncode != 0:
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        fatal = [line for line in lines if line.startswith(("fatal:", "error:"))]
        raise OmeError("git: " + ((fatal or lines)[0] if lines else f"exit status {done.returncode}"))
    return done.stdout


def verify(revision: str, cwd: str) -> str:
    """The commit id ``revision`` names in the repository around ``cwd``."""
    if not revision or revision.startswith("-") or "\0" in revision:
        raise OmeError(f'"{revision}" is not a revision (a revision never starts with "-")')
    try:
        out = _git(["rev-parse", "--verify", "--quiet", "--end-of-options", revision + "^{commit}"], cwd)
    except OmeError as err:
        if "not a git repository" in err.text:
            raise OmeError(f'"{revision}" is neither a directory nor a file, and {cwd} is not in a git '
                           "repository") from None
        if err.text != "git: exit status 1":  # git could not run, or failed for another reason: say why
            raise
        out = b""  # --quiet: no such commit
    commit = out.decode("ascii", "replace").strip()
    if not commit:
        raise OmeError(f'"{revision}" is neither a directory, a file nor a commit of the git repository here')
    return commit


def prefix(cwd: str) -> str:
    """Where ``cwd`` is inside its repository ("" at the top, else ``dir/``)."""
    return _git(["rev-parse", "--show-prefix"], cwd).decode("utf-8", "replace").strip()


def repo_path(path: str, where: str) -> str:
    """``path`` (relative to the current directory, which is ``where`` in the repository) in the repository."""
    joined = posixpath.normpath(posixpath.join(where, path.replace(os.sep, "/")))
    if posixpath.isabs(path) or joined == ".." or joined.startswith("../"):
        raise OmeError(f"{path}: outside the git repository; give a path inside it")
    return "" if joined == "." else joined


def extract(commit: str, paths: list[str], cwd: str, dest: str, any_name: bool = False) -> None:
    """Write the YAML and kustomization files (``any_name``: every file) of ``commit`` under ``paths``
    (repository paths, "" for all) into ``dest``."""
    _extract(commit, _blobs(_ls_tree(commit, paths, cwd), (lambda path: True) if any_name else _is_input), cwd, dest)


def extract_overlay(commit: str, cwd: str, dest: str) -> None:
    """Write what the build of an overlay of ``commit`` can reach into ``dest``: every file of every directory
    holding a kustomization, and of the directories below it (kustomize reads files only there; see
    :func:`omerender.gitops.kbuild.copy_tree`, which copies the same)."""
    records = _ls_tree(commit, [""], cwd)
    roots = {posixpath.dirname(r[4]) for r in records if posixpath.basename(r[4]) in KUSTOMIZATION_FILES}
    _extract(commit, _blobs(records, lambda path: any(a in roots for a in _ancestors(path))), cwd, dest)


def _ancestors(path: str):
    while path:
        path = posixpath.dirname(path)
        yield path


def _is_input(path: str) -> bool:
    return path.endswith(_YAML) or posixpath.basename(path) in KUSTOMIZATION_FILES


def _extract(commit: str, entries: list[tuple[str, str]], cwd: str, dest: str) -> None:
    if not entries:
        return
    batch = _git(["cat-file", "--batch"], cwd, "".join(f"{oid}\n" for oid, _ in entries).encode())
    offset = 0
    for oid, path in entries:
        header_end = batch.index(b"\n", offset)
        header = batch[offset:header_end].split()
        if len(header) != 3 or header[1] != b"blob":
            raise _missing(oid, path)
        size = int(header[2])
        start = header_end + 1
        _write(dest, path, batch[start:start + size])
        offset = start + size + 1


def _ls_tree(commit: str, paths: list[str], cwd: str) -> list[tuple[str, str, str, str, str]]:
    """(mode, kind, blob id, size, path) of every entry of ``commit`` under ``paths``."""
    out = _git(["ls-tree", "-r", "-l", "-z", "--full-tree", commit, "--", *[p or "." for p in paths]], cwd)
    records = []
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _, raw_path = record.partition(b"\t")
        records.append((*meta.decode("ascii").split(), _checked_path(raw_path)))
    return records


def _blobs(records: list[tuple[str, str, str, str, str]], keep) -> list[tuple[str, str]]:
    """(blob id, path) of every file whose path ``keep`` accepts, after the limits are checked on the sizes
    the tree records."""
    entries, total = [], 0
    for mode, kind, oid, size, path in records:
        if mode == _LINK or kind != "blob" or mode not in _FILE_MODES or not keep(path):
            continue  # symbolic links, submodules: a directory walk does not read them either
        if not size.isdigit():  # ls-tree -l prints "BAD" for an object it cannot read
            raise _missing(oid, path)
        if int(size) > limits.MAX_FILE_BYTES:
            raise OmeError(f"larger than {limits.MAX_FILE_BYTES // limits.MIB} MiB; split it into several files",
                           file=path)
        total += int(size)
        if total > limits.MAX_TOTAL_BYTES:
            raise OmeError(f"the YAML files are larger than {limits.MAX_TOTAL_BYTES // limits.MIB} MiB in total; "
                           "diff fewer files at a time", file=path)
        entries.append((oid, path))
        if len(entries) > limits.MAX_FILES:
            raise OmeError(f"more than {limits.MAX_FILES:,} YAML files; diff fewer files at a time")
    return entries


def _missing(oid: str, path: str) -> OmeError:
    return OmeError(f"git: blob {oid} is missing from the repository (a shallow or partial clone?)", file=path)


def _checked_path(raw: bytes) -> str:
    """A tree path that is safe to create under the destination (a crafted tree can hold any name)."""
    try:
        path = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise OmeError(f"path {raw!r} in the git tree is not UTF-8") from None
    parts = path.split("/")
    if path.startswith("/") or any(p in ("", ".", "..") for p in parts) or "\0" in path:
        raise OmeError(f'path "{path}" in the git tree is not a plain relative path')
    return path


def _write(dest: str, path: str, data: bytes) -> None:
    target = os.path.join(dest, *path.split("/"))
    os.makedirs(os.path.dirname(target), exist_ok=True)
    # O_EXCL|O_NOFOLLOW: never through a link, never over a file already written.
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
