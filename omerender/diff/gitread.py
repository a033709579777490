"""Read the YAML files of a git revision into a temporary directory, without touching the work tree.

Plumbing only (``rev-parse``, ``ls-tree``, ``cat-file --batch``): no checkout, no hooks, no filters or
attributes. The revision is verified as a commit before it is used and is never seen by a shell. Paths from
the tree are checked before they become paths on disk, symbolic links are not written, and the limits of
:mod:`omerender.yamlio.limits` hold for the whole revision before a blob is read.
"""
from __future__ import annotations

import os
import posixpath
import stat
import subprocess

from omerender.errors import OmeError
from omerender.yamlio import limits
from omerender.yamlio.reading import KUSTOMIZATION_FILES

# No fsmonitor hook (a repository's config could name a program), no pager, no prompt.
_GIT = ("git", "--no-pager", "--literal-pathspecs", "-c", "core.fsmonitor=false")
_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"}
_YAML = (".yaml", ".yml")
_LINK, _FILE_MODES = "120000", ("100644", "100755")
_NO_GIT, _NOT_A_REPOSITORY = "cannot run git", "not a git repository"
# Paths a tree may hold as file systems take them (NAME_MAX, PATH_MAX), and no deeper than a directory walk goes.
MAX_NAME_BYTES, MAX_PATH_BYTES, MAX_PATH_DEPTH = 255, 4096, 100


def _git(args: list[str], cwd: str, stdin: bytes | None = None) -> bytes:
    try:
        done = subprocess.run([*_GIT, *args], cwd=cwd, input=stdin, capture_output=True,
                              env={**os.environ, **_ENV}, check=False)
    except OSError as err:
        raise OmeError(f"{_NO_GIT}: {err.strerror}; install git, or compare two directories") from None
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
        commit = _commit(revision, cwd)
    except OmeError as err:
        if _NOT_A_REPOSITORY in err.text:
            raise OmeError(f'"{revision}" is neither a directory nor a file, and {cwd} is not in a git '
                           "repository") from None
        raise  # git could not run, or failed for another reason: say why
    if not commit:
        raise OmeError(f'"{revision}" is neither a directory, a file nor a commit of the git repository here')
    return commit


def names_commit(name: str, cwd: str) -> bool:
    """Whether ``name`` (an existing path) also names a commit of the repository around ``cwd``: no outside
    a repository or without git; when git fails otherwise, nobody can tell, and that is an error."""
    if not name or name.startswith(("-", "/", "./", "../")) or name.endswith("/") or name in (".", ".."):
        return False  # spelt as no revision can be (so ./NAME is the path even where git fails)
    try:
        return bool(_commit(name, cwd))
    except OmeError as err:
        if _NOT_A_REPOSITORY in err.text or err.text.startswith(_NO_GIT):
            return False
        raise


def _commit(revision: str, cwd: str) -> str:
    """The commit id ``revision`` names, "" when the repository has none of that name."""
    try:
        out = _git(["rev-parse", "--verify", "--quiet", "--end-of-options", revision + "^{commit}"], cwd)
    except OmeError as err:
        if err.text != "git: exit status 1":
            raise
        return ""  # --quiet: no such commit
    return out.decode("ascii", "replace").strip()


def prefix(cwd: str) -> str:
    """Where ``cwd`` is inside its repository ("" at the top, else ``dir/``)."""
    return _git(["rev-parse", "--show-prefix"], cwd).decode("utf-8", "replace").strip()


def repo_path(path: str, where: str) -> str:
    """``path`` (relative to the current directory, which is ``where`` in the repository) in the repository."""
    joined = posixpath.normpath(posixpath.join(where, path.replace(os.sep, "/")))
    if posixpath.isabs(path) or joined == ".." or joined.startswith("../"):
        raise OmeError(f"{path}: outside the git repository; give a path inside it")
    return "" if joined == "." else joined


def extract(revision: str, commit: str, paths: list[str], cwd: str, dest: str, any_name: bool = False) -> None:
    """Write the YAML and kustomization files (``any_name``: every file) of ``commit`` under ``paths``
    (repository paths, "" for all) into ``dest``; messages name the entry and ``revision`` (the name the user
    gave), never ``dest``."""
    keep = (lambda path: True) if any_name else _is_input
    _extract(revision, _blobs(revision, _ls_tree(revision, commit, paths, cwd), keep), cwd, dest)


def extract_overlay(revision: str, commit: str, cwd: str, dest: str) -> None:
    """Write what the build of an overlay of ``commit`` can reach into ``dest``: every file of every directory
    holding a kustomization, and of the directories below it (kustomize reads files only there; see
    :func:`omerender.gitops.kbuild.copy_tree`, which copies the same)."""
    records = _ls_tree(revision, commit, [""], cwd)
    roots = {posixpath.dirname(r[4]) for r in records if posixpath.basename(r[4]) in KUSTOMIZATION_FILES}
    _extract(revision, _blobs(revision, records, lambda path: any(a in roots for a in _ancestors(path))), cwd, dest)


def _ancestors(path: str):
    while path:
        path = posixpath.dirname(path)
        yield path


def _is_input(path: str) -> bool:
    return path.endswith(_YAML) or posixpath.basename(path) in KUSTOMIZATION_FILES


def _extract(revision: str, entries: list[tuple[str, str]], cwd: str, dest: str) -> None:
    if not entries:
        return
    batch = _git(["cat-file", "--batch"], cwd, "".join(f"{oid}\n" for oid, _ in entries).encode())
    offset, made = 0, set()
    for oid, path in entries:
        header_end = batch.index(b"\n", offset)
        header = batch[offset:header_end].split()
        if len(header) != 3:
            raise _missing(revision, oid, path)
        if header[1] != b"blob":  # only a hand-made tree names another kind of object with a file's mode
            raise OmeError(f"revision {revision} lists a {header[1].decode('ascii', 'replace')} object as this "
                           "file (a malformed tree; git fsck reports it)", file=path)
        size = int(header[2])
        start = header_end + 1
        _write(revision, dest, path, batch[start:start + size], made)
        offset = start + size + 1


def _ls_tree(revision: str, commit: str, paths: list[str], cwd: str) -> list[tuple[str, str, str, str, str]]:
    """(mode, kind, blob id, size, path) of every entry of ``commit`` under ``paths``, the tree checked to
    name each path once."""
    try:
        out = _git(["ls-tree", "-r", "-l", "-z", "--full-tree", commit, "--", *[p or "." for p in paths]], cwd)
    except OmeError as err:  # a tree entry naming a missing object, or a blob with a directory's mode
        raise OmeError(f"cannot list the git tree of revision {revision} (a malformed tree, or a shallow or "
                       f"partial clone?): {err.text}") from None
    records, listed = [], {}
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _, raw_path = record.partition(b"\t")
        records.append((*meta.decode("ascii").split(), _checked_path(revision, raw_path, listed)))
    return records


def _blobs(revision: str, records: list[tuple[str, str, str, str, str]], keep) -> list[tuple[str, str]]:
    """(blob id, path) of every file whose path ``keep`` accepts, after the limits are checked on the sizes
    the tree records."""
    entries, total = [], 0
    for mode, kind, oid, size, path in records:
        if mode == _LINK or kind != "blob" or mode not in _FILE_MODES or not keep(path):
            continue  # symbolic links, submodules: a directory walk does not read them either
        if not size.isdigit():  # ls-tree -l prints "BAD" for an object it cannot read
            raise _missing(revision, oid, path)
        _refuse_long(revision, path)
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


def _missing(revision: str, oid: str, path: str) -> OmeError:
    return OmeError(f"git: blob {oid} of revision {revision} is missing from the repository (a shallow or partial "
                    "clone?)", file=path)


def _checked_path(revision: str, raw: bytes, listed: dict) -> str:
    """A tree path that is safe to create under the destination, listed once (a crafted tree can hold any
    name, and any name twice)."""
    try:
        path = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise OmeError(f"path {raw!r} in the git tree of revision {revision} is not UTF-8") from None
    parts = path.split("/")
    if path.startswith("/") or any(p in ("", ".", "..") for p in parts) or "\0" in path:
        raise OmeError(f'path "{path}" in the git tree of revision {revision} is not a plain relative path')
    _add(revision, listed, path)
    return path


def _refuse_long(revision: str, path: str) -> None:
    """A path to copy must fit the file system (git cannot check out a longer one either) and a directory walk."""
    parts = path.split("/")
    longest = max(len(part.encode("utf-8")) for part in parts)
    if longest > MAX_NAME_BYTES:
        raise OmeError(f"a name of {longest} bytes in the git tree of revision {revision}; file systems take at "
                       f"most {MAX_NAME_BYTES} (git cannot check it out either): rename it", file=path)
    size = len(path.encode("utf-8"))
    if size > MAX_PATH_BYTES:
        raise OmeError(f"a path of {size:,} bytes in the git tree of revision {revision}; file systems take at "
                       f"most {MAX_PATH_BYTES:,} (git cannot check it out either): shorten it", file=path)
    if len(parts) > MAX_PATH_DEPTH + 1:
        raise OmeError(f"a file {len(parts) - 1} directories deep in the git tree of revision {revision}; "
                       f"omerender reads at most {MAX_PATH_DEPTH} levels: move it up", file=path)


def _add(revision: str, tree: dict, path: str) -> None:
    """Add ``path`` to ``tree`` (directories as dicts, files as None), refusing a path listed twice or both a
    file and a directory: a hand-made tree can hold one name twice. One step per name, however deep."""
    parts = path.split("/")
    node = tree
    for depth, part in enumerate(parts[:-1], 1):
        node = node.setdefault(part, {})
        if node is None:
            raise _twice(revision, "/".join(parts[:depth]), "a file and a directory of this name")
    if parts[-1] in node:
        raise _twice(revision, path, "this file twice" if node[parts[-1]] is None else
                     "a file and a directory of this name")
    node[parts[-1]] = None


def _twice(revision: str, path: str, what: str) -> OmeError:
    return OmeError(f"the git tree of revision {revision} holds {what} (a malformed tree: git fsck reports "
                    "duplicateEntries, and a checkout keeps only one); remove the duplicate", file=path)


def _mkdir(folder: str) -> None:
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:  # written by an earlier extract of the same commit (the lock beside a PATH)
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            raise


def _write(revision: str, dest: str, path: str, data: bytes, made: set[str]) -> None:
    parts = path.split("/")
    try:
        for depth in range(1, len(parts)):  # one directory at a time: no recursion, no link followed
            folder = "/".join(parts[:depth])
            if folder not in made:
                _mkdir(os.path.join(dest, *parts[:depth]))
                made.add(folder)
        # O_EXCL|O_NOFOLLOW: never through a link, never over a file already written.
        fd = os.open(os.path.join(dest, *parts), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
    except OSError as err:  # the message names the entry, never the temporary copy
        raise OmeError(f"cannot copy this file of revision {revision} to read it: {err.strerror}",
                       file=path) from None
