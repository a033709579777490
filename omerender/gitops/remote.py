"""Which kustomization entries kustomize fetches rather than reads from the tree, and from where.

kustomize 5 (sigs.k8s.io/kustomize/api: internal/loader's FileLoader and internal/git's RepoSpec) takes an
entry of ``resources``, ``bases``, ``components``, ``generators``, ``transformers`` or ``validators`` as

* a **remote file** when it is an ``http:`` or ``https:`` URL (any case);
* a **git repository** when it is not an absolute path and, after an optional ``git::`` prefix (any case),
  it starts with ``ssh://``, ``https://``, ``http://`` or ``file://`` (any case), with a user name and ``@``
  (``git@host:org/repo``), or with ``github.com/`` or ``github.com:`` (any case); and a repository path follows
  the host (a ``_git/``, ``//`` or ``.git`` marker, else two segments). kustomize then runs
  ``git fetch HOST+PATH`` (the query, ``?ref=``…, is dropped first);
* else a path in the tree.

A ``file://`` repository is a directory on this machine, whatever follows: another repository's checkout,
Argo CD's repository cache. So is a ``user@host/org/repo`` spelling (no scheme, and no colon before the first
slash): git reads such a URL as a local path. :func:`fetched` calls both local (``"file"``, ``"path"``);
omerender refuses them, and runs git with the file transport off for whatever a fetched repository names in
turn (:data:`GIT_PROTOCOLS`). ``tests/test_build_limits.py`` checks this rule against the real kustomize and git.
"""
from __future__ import annotations

import os
import re

SCHEMES = ("ssh://", "https://", "http://", "file://")
FORCED_GIT = "git::"
GITHUB = ("github.com/", "github.com:")
USER = re.compile(r"[a-zA-Z][a-zA-Z0-9-]*@")
# The transports git may use for a build's remote bases (GIT_ALLOW_PROTOCOL): never "file", which also covers
# plain local paths, nor "ext", which runs a command. Applies to submodules and nested remotes too.
GIT_PROTOCOLS = ("https", "http", "ssh", "git")


# Why kustomize would fetch an entry from this machine's disk, by what :func:`fetched` returns.
LOCAL = {"file": "file:// names a directory on this machine",
         "path": "git reads a URL with no :// and no colon before its first slash as a directory on this machine"}


def fetched(entry: str) -> str | None:
    """A key of :data:`LOCAL` for an entry kustomize would fetch from this machine's disk, ``"network"`` for one
    it fetches over the network, ``None`` for a path in the tree."""
    if os.path.isabs(entry):
        return None
    if entry.lower().startswith(("http:", "https:")):
        return "network"  # a remote file, else a repository: both over http(s)
    rest = _drop_prefix(entry.split("?", 1)[0], FORCED_GIT)
    scheme = next((s for s in SCHEMES if rest[:len(s)].lower() == s), "")
    if scheme == "file://":
        return "file"  # even where kustomize would then take it as a path: nothing is lost refusing that
    rest = rest[len(scheme):]
    user = USER.match(rest)
    after_user = rest[user.end():] if user else rest
    github = after_user[:len(GITHUB[0])].lower() in GITHUB
    if not scheme and not user and not github:
        return None
    cut = _host_end(after_user, scp=not scheme)
    if cut < 0 or not _repo_path(after_user[cut + 1:]):
        return None
    if github:
        return "network"  # kustomize writes the host as https://github.com/ or git@github.com:
    local = not scheme and after_user[cut] == "/" and ":" not in after_user[:cut]
    return "path" if local else "network"


def _drop_prefix(text: str, prefix: str) -> str:
    return text[len(prefix):] if text[:len(prefix)].lower() == prefix else text


def _host_end(text: str, scp: bool) -> int:
    """Where the host ends: its first slash, or (scp-like, no scheme) a colon before that slash."""
    slash = text.find("/")
    colon = text.find(":") if scp else -1
    return colon if colon > 0 and (slash < 0 or colon < slash) else slash


def _repo_path(path: str) -> bool:
    """Whether a repository path can be split off ``path`` the way kustomize does (else it is no repository)."""
    if "_git/" in path or "//" in path or ".git" in path:
        repo, root = _split_marked(path)
    else:
        segments = path.split("/")
        if len(segments) < 2:
            return False
        repo, root = "/".join(segments[:2]), "/".join(segments[2:])
    parts = os.path.normpath(root.lstrip("/") or ".").split("/")
    return bool(repo) and parts[0] != ".."


def _split_marked(path: str) -> tuple[str, str]:
    if "_git/" in path:
        head, tail = path.split("_git/", 1)
        first, _, rest = tail.partition("/")
        return head + "_git/" + first, rest
    if "//" in path:
        repo, root = path.split("//", 1)
        return repo, root
    index = path.index(".git") + len(".git")
    return path[:index], path[index:]


def git_allow_protocol(current: str | None) -> str:
    """GIT_ALLOW_PROTOCOL for kustomize's git: the operator's own list when set, without file and ext."""
    wanted = current.split(":") if current is not None else list(GIT_PROTOCOLS)
    return ":".join(p for p in wanted if p and p not in ("file", "ext"))
