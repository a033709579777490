"""The report of a diff of several PATHs with a kustomize overlay among them (one per cluster, say): each PATH
built and diffed on its own, its report under its name, after a first line naming the PATHs that change."""
from __future__ import annotations

import json
import os

from omerender.errors import OmeError
from .compare import Diff
from .markdown import COMMENT_LIMIT, HEADING, LEFT_OUT_ROOM, as_markdown, code
from .report import as_json, as_text
from .values import printable


def changed_paths(results: list[tuple[str, Diff]]) -> list[str]:
    return [path for path, result in results if result.changed]


def headline(results: list[tuple[str, Diff]], show=lambda path: path, limit: int | None = None) -> str:
    """``Changes in 1 of 2 PATHs: a`` or ``No changes in 2 PATHs.``; with ``limit``, the PATHs named in that
    many characters at most, then how many more change."""
    changed = changed_paths(results)
    if not changed:
        return f"No changes in {len(results)} PATHs."
    start = f"Changes in {len(changed)} of {len(results)} PATHs: "
    names = [show(p) for p in changed]
    if limit is not None:
        names = _names_within(names, limit - len(start))
    return start + ", ".join(names)


def _names_within(names: list[str], room: int) -> list[str]:
    """The first ``names`` that fit in ``room`` characters with ``and N more`` after them."""
    kept: list[str] = []
    for i, name in enumerate(names):
        more = f", and {len(names) - i - 1} more" if i < len(names) - 1 else ""
        if sum(len(k) + 2 for k in kept) + len(name) + len(more) > room:
            return kept + [f"and {len(names) - len(kept)} more"]
        kept.append(name)
    return kept


def as_text_by_path(results: list[tuple[str, Diff]], context: int | None = None) -> str:
    """The headline, then each PATH's text report under ``== PATH ==``."""
    blocks = [printable(headline(results)) + "\n"]
    blocks += [f"== {printable(path)} ==\n" + as_text(result, context) for path, result in results]
    return "\n".join(blocks)


def as_markdown_by_path(results: list[tuple[str, Diff]], context: int | None = None,
                        limit: int | None = None) -> str:
    """One comment: the heading and headline, then each PATH's report under ``#### PATH``, each within an equal
    share of the comment's ``limit``; the sections that still don't fit (each keeps its summary tables) are left
    out, saying how many."""
    limit = COMMENT_LIMIT if limit is None else limit
    top = f"{HEADING}\n\n{headline(results, code, limit // 4)}\n"
    share = (limit - len(top)) // len(results) - 20
    sections = [f"#### {code(path)}\n\n" + as_markdown(result, context, share, heading=False)
                for path, result in results]
    kept, size = [], len(top) + LEFT_OUT_ROOM
    for section in sections:
        if size + len(section) + 1 > limit:
            break
        kept.append(section)
        size += len(section) + 1
    left = len(sections) - len(kept)
    if left:
        kept.append(f"_{left} more PATHs left out: a comment holds at most {limit:,} characters. "
                    "`omerender diff` prints them all._\n")
    return "\n".join([top, *kept])


def as_json_by_path(results: list[tuple[str, Diff]], context: int | None = None) -> str:
    """``{"changed": [PATH...], "paths": [{"path": PATH, <the one-PATH report>}...]}``."""
    found = {"changed": changed_paths(results),
             "paths": [{"path": path, **json.loads(as_json(result, context))} for path, result in results]}
    return json.dumps(found, indent=2, ensure_ascii=False) + "\n"


def cluster_configs_by_path(paths: list[str], files: list[str]) -> dict[str, str | None]:
    """Which ``--cluster-config`` FILE each PATH reads: the FILE inside it (judged by the names as given, each
    read later under the usual rules), or the one FILE given when it lies inside no PATH (one ConfigMap serving
    every PATH); OmeError when a FILE lies in no PATH or in two, or two FILEs in one PATH."""
    if len(files) == 1 and not _holders(files[0], paths):
        return dict.fromkeys(paths, files[0])
    found: dict[str, str | None] = dict.fromkeys(paths)
    for file in files:
        holders = _holders(file, paths)
        shown = printable(file)
        if not holders:
            raise OmeError(f"--cluster-config {shown}: inside none of the PATHs ({', '.join(map(printable, paths))}); "
                           "with several, give each PATH's ConfigMap file inside it, or one file for every PATH")
        if len(holders) > 1:
            raise OmeError(f"--cluster-config {shown}: inside both {printable(holders[0])} and "
                           f"{printable(holders[1])}; give PATHs that do not hold one another")
        if found[holders[0]] is not None:
            raise OmeError(f"--cluster-config {shown}: {printable(holders[0])} has another, "
                           f"{printable(found[holders[0]])}; give one file per PATH")
        found[holders[0]] = file
    return found


def _holders(file: str, paths: list[str]) -> list[str]:
    name = os.path.normpath(file)
    return [path for path in paths
            if (os.path.normpath(path) == "." and not name.startswith(".." + os.sep) and not os.path.isabs(name))
            or name.startswith(os.path.normpath(path).rstrip(os.sep) + os.sep)]
