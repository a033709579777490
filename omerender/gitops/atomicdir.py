"""Replace a directory as a whole: build a fresh one beside it, fsync it, swap it in.

On Linux the swap is one ``renameat2(RENAME_EXCHANGE)``: at every instant the path names either the old
directory or the new one. Elsewhere (or on a file system without it) the old directory is first renamed
aside, then the new one into place; a crash between the two leaves the old one aside, and the next run
(under the lock) puts it back before anything else. A lock file beside the directory keeps two writers apart.
"""
from __future__ import annotations

import ctypes
import errno
import os
import shutil
import stat
import sys
import tempfile
from typing import Callable

from omerender.yamlio import paths

LOCK_SUFFIX = ".omerender-lock"
NEW_INFIX = ".omerender-new-"
OLD_INFIX = ".omerender-old-"
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_NO_EXCHANGE = (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP)
# Flags POSIX systems have; the getattr keeps `import omerender` working where they are missing.
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | _CLOEXEC
_DIRECTORY = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC
_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW
# Never follows a link, never blocks opening a FIFO.
READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | _NOFOLLOW


def _libc_function(name: str):
    if not sys.platform.startswith("linux"):
        return None
    try:
        return getattr(ctypes.CDLL(None, use_errno=True), name, None)
    except OSError:
        return None


_SYNCFS = _libc_function("syncfs")


def sibling(target: str, suffix: str) -> str:
    """``.<name><suffix>`` beside ``target``."""
    parent, name = os.path.split(target)
    return os.path.join(parent, f".{name}{suffix}")


def lock(target: str, on_wait: Callable[[str], None] | None = None) -> int:
    """Take an exclusive lock on the lock file beside ``target`` (created if missing; never a link); return
    its descriptor for :func:`unlock`. ``on_wait(lock_path)`` is called once before waiting for it."""
    import fcntl  # POSIX only: render --output-dir needs it, every other command works without it

    path = sibling(target, LOCK_SUFFIX)
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | READ_FLAGS, 0o666)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise OSError(errno.EINVAL, "not a regular file", path)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if on_wait:
                    on_wait(path)
                    on_wait = None
                fcntl.flock(fd, fcntl.LOCK_EX)
            if _same_file(fd, path):
                return fd
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)  # the holder removed the file as it let go: lock the one there now


def _same_file(fd: int, path: str) -> bool:
    try:
        info = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (info.st_dev, info.st_ino) == (held.st_dev, held.st_ino)


def unlock(fd: int, target: str) -> None:
    """Remove the lock file (no stray file beside DIR), then let go of it; a waiter then locks a new one."""
    try:
        os.unlink(sibling(target, LOCK_SUFFIX))
    except FileNotFoundError:
        pass
    finally:
        os.close(fd)


def recover(target: str) -> None:
    """Under the lock: undo a swap a crash interrupted, then remove what earlier runs left beside ``target``."""
    parent, name = os.path.split(target)
    leftovers = sorted(e for e in os.listdir(parent or ".")
                       if e.startswith((f".{name}{NEW_INFIX}", f".{name}{OLD_INFIX}")))
    for entry in leftovers:
        path = os.path.join(parent, entry)
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            continue
        if entry.startswith(f".{name}{OLD_INFIX}") and not os.path.lexists(target):
            os.rename(path, target)  # the old render, moved aside by a swap that never finished
            continue
        shutil.rmtree(path, ignore_errors=True)


def fresh(target: str) -> str:
    """A new empty directory beside ``target`` for the next version of it."""
    parent, name = os.path.split(target)
    return tempfile.mkdtemp(prefix=f".{name}{NEW_INFIX}", dir=parent or ".")


def write_file(path: str, data: bytes, mode: int = 0o666) -> None:
    """Create ``path`` (never an existing file or link) and write ``data``; :func:`flush` makes it durable."""
    fd = os.open(path, _WRITE_FLAGS, mode)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        if not _SYNCFS:
            os.fsync(fd)
    finally:
        os.close(fd)


def flush(new: str) -> None:
    """Make everything written under ``new`` durable before it is swapped in.

    Linux: one syncfs() of the file system (an fsync per file costs milliseconds each: 8 s for 2,000 files).
    Elsewhere each file was fsynced as it was written; the folders are fsynced here.
    """
    if _SYNCFS:
        fd = os.open(new, _DIRECTORY)
        try:
            if _SYNCFS(fd) != 0:
                code = ctypes.get_errno()
                raise OSError(code, os.strerror(code), new)
        finally:
            os.close(fd)
        return
    for folder, _, _ in os.walk(new):
        fsync_dir(folder)


def carry(source: str, path: str) -> None:
    """Put the regular file ``source`` (never a link or a FIFO) at the new path ``path``, mode included.

    A hard link where the system allows one (no copy, no extra space); a copy otherwise.
    """
    try:
        os.link(source, path, follow_symlinks=False)
    except OSError as err:
        if err.errno not in (errno.EPERM, errno.EXDEV, errno.EMLINK, errno.ENOTSUP, errno.EOPNOTSUPP):
            raise
        _copy(source, path)
        return
    if not stat.S_ISREG(os.lstat(path).st_mode):  # replaced since it was checked
        os.unlink(path)
        raise OSError(errno.EINVAL, "not a regular file", source)


def _copy(source: str, path: str) -> None:
    fd = os.open(source, READ_FLAGS)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", source)
        out = os.open(path, _WRITE_FLAGS, stat.S_IMODE(info.st_mode))
        with os.fdopen(out, "wb") as sink:
            shutil.copyfileobj(handle, sink)
            sink.flush()
            os.fchmod(out, stat.S_IMODE(info.st_mode))
            if not _SYNCFS:
                os.fsync(out)


def replace_file(path: str, text: str) -> None:
    """Replace (or create) the file ``path`` in one step: a temporary file beside it, fsynced, renamed over
    it. Readers see the old text or the new, never a part. An existing file keeps its mode; a new one gets
    0o666 less the umask, as a shell redirection would. The temporary file never outlives an error. A parent
    that is a symbolic link leading out of its own directory is an OmeError (:mod:`omerender.yamlio.paths`)."""
    paths.resolve(path, paths.WRITES, parents_only=True)
    folder = os.path.dirname(os.path.abspath(path))
    existing = os.lstat(path) if os.path.lexists(path) else None
    handle, temporary = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, stat.S_IMODE(existing.st_mode) if existing else 0o666 & ~_umask())
        os.replace(temporary, path)
    except BaseException:
        if os.path.lexists(temporary):
            os.unlink(temporary)
        raise
    fsync_dir(folder)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def fsync_dir(path: str) -> None:
    fd = os.open(path, _DIRECTORY)  # the parent may be a link the user named
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def swap_in(new: str, target: str) -> None:
    """Put the directory ``new`` at ``target`` in one step, then remove the old directory."""
    parent = os.path.dirname(target) or "."
    if not os.path.lexists(target):
        os.rename(new, target)
    elif _exchange(new, target):
        shutil.rmtree(new, ignore_errors=True)  # ``new`` now names the old directory
    else:
        aside = tempfile.mkdtemp(prefix=f".{os.path.basename(target)}{OLD_INFIX}", dir=parent)
        os.rename(target, aside)
        os.rename(new, target)
        shutil.rmtree(aside, ignore_errors=True)
    fsync_dir(parent)


def _exchange(a: str, b: str) -> bool:
    """Atomically exchange two paths (Linux renameat2); False where the system cannot."""
    renameat2 = _libc_function("renameat2")
    if renameat2 is None:
        return False
    renameat2.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in _NO_EXCHANGE:
        return False
    raise OSError(code, os.strerror(code), b)
