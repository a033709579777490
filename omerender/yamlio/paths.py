"""Paths judged by where they lead, never by how they are spelled: the one containment rule of every command.

A path from the user or from a repository is resolved once, component by component, as the kernel resolves
it (``dir/``, ``dir/.``, ``./dir``, ``a/../dir`` and a link to a link all reach the same place). On the way:

* every symbolic link must lead, fully resolved, to a place inside the directory that holds it, whether it
  is the last component (``omedeploy/``) or a parent (``deploy`` in ``deploy/rendered``);
* a ``..`` after a link may climb back to the directory holding that link, never above it.

A link the user names on purpose therefore works as long as it stays beside itself (``current ->
releases/v2``); one that leaves its directory (``omedeploy -> ../outside``) is an error naming the path
and the link. Inside a directory that is walked, links are judged against the walked directory instead
(:func:`check_entry`).
"""
from __future__ import annotations

import os
import stat

from omerender.errors import OmeError

READS = "omerender reads only the files it is given"
WRITES = "omerender never writes through a link that leads out of the directory holding it"


def within(path: str, root: str) -> bool:
    """Whether the absolute ``path`` is ``root`` or below it (both already resolved)."""
    return os.path.commonpath([path, root]) == root


def resolve(path: str, purpose: str = READS, parents_only: bool = False) -> str:
    """The real absolute path ``path`` names, every link on the way checked (see the module); OmeError
    naming ``path`` and the link otherwise. Components from the first missing one on are kept as spelled
    (a path to create). With ``parents_only`` the last name is neither resolved nor checked: the caller
    decides about the thing itself (an output directory is never a link)."""
    parts = path.split(os.sep)
    named = [i for i, part in enumerate(parts) if part not in ("", ".")]
    last = named[-1] if named and parents_only and parts[named[-1]] != ".." else None
    current = os.sep if os.path.isabs(path) else os.getcwd()
    floor = link = None  # the directory holding the last link followed, and that link as spelled
    for i in named:
        part, spelled = parts[i], os.sep.join(parts[:i + 1]) or os.sep
        if i == last:
            return os.path.join(current, part)
        if part == "..":
            current = os.path.dirname(current)
            if floor is not None and not within(current, floor):
                raise OmeError(f"{spelled} leads to {current}, above {floor}, the directory holding the symbolic "
                               f"link {link}; {purpose}", file=path)
            continue
        candidate = os.path.join(current, part)
        try:
            is_link = stat.S_ISLNK(os.lstat(candidate).st_mode)
        except OSError:  # missing, or not a directory: nothing further can be a link; opening it will say why
            return os.path.normpath(os.path.join(candidate, *parts[i + 1:]))
        if is_link:
            floor, link, candidate = current, spelled, _followed(candidate, current, path, spelled, i == named[-1],
                                                                 purpose)
        current = candidate
    return current


def _followed(link: str, holder: str, path: str, spelled: str, is_last: bool, purpose: str) -> str:
    """Where the symbolic link ``link`` leads (fully resolved); OmeError when that is outside ``holder``."""
    target = os.path.realpath(link)
    if not within(target, holder):
        named = "" if is_last else f"{spelled} is a "
        raise OmeError(f"{named}symbolic link to {target}, outside {holder}; {purpose}", file=path)
    return target


def names_a_link(path: str) -> bool:
    """Whether ``path`` itself, however spelled (``dir``, ``dir/``, ``dir/.``), is a symbolic link."""
    return os.path.islink(resolve(path, parents_only=True))


def check_entry(entry: str, root: str, shown_root: str) -> None:
    """An entry met while walking the directory ``root`` (resolved): a symbolic link must lead inside it."""
    if not os.path.islink(entry):
        return
    target = os.path.realpath(entry)
    if not within(target, root):
        raise OmeError(f"symbolic link to {target}, outside {shown_root}; {READS}", file=entry)
