"""Every relative link and anchor in README.md, CONTRIBUTING.md, CHANGELOG.md and docs/**/*.md resolves
(issue 35): the file or directory it names exists inside the repository, and its #anchor is a heading of the
target as GitHub names it (or an explicit <a id>/<a name>). http(s) and mailto links are not followed; links
in fenced code blocks and in inline code are not links."""
from __future__ import annotations

import difflib
import re
import unicodedata
from pathlib import Path
from urllib.parse import unquote

from conftest import ROOT

EXTERNAL = re.compile(r"^(https?|mailto):", re.I)
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
CODE_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)")
INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>\n]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)"
                    r"(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)")
DEFINITION = re.compile(r"^ {0,3}\[(?:[^\]\\]|\\.)+\]:[ \t]*(<[^>\n]*>|\S+)")
HTML_LINK = re.compile(r"<(?:a|img)\b[^>]*?\b(?:href|src)=[\"']([^\"']*)[\"']", re.I)
HTML_ANCHOR = re.compile(r"<[a-z][a-z0-9]*\b[^>]*?\b(?:id|name)=[\"']([^\"']+)[\"']", re.I)
LINE_ANCHOR = re.compile(r"^L\d+(-L\d+)?$")


def documents(root: Path = ROOT) -> list[Path]:
    """The pages checked; not docs/spec/seed, OME's own docs page, whose links point into OME's docs site."""
    top = [root / name for name in ("README.md", "CONTRIBUTING.md", "CHANGELOG.md") if (root / name).is_file()]
    seed = root / "docs" / "spec" / "seed"
    return top + sorted(path for path in (root / "docs").rglob("*.md") if seed not in path.parents)


def prose_lines(text: str, blank_code: bool = True) -> list[tuple[int, str]]:
    """The lines outside fenced code blocks, numbered from 1, with inline code blanked out (or kept)."""
    lines, fence = [], None
    for number, line in enumerate(text.splitlines(), 1):
        opened = FENCE.match(line)
        if fence:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence) \
                    and not line.strip()[len(opened.group(1)):].strip():
                fence = None
            continue
        if opened and not (opened.group(1)[0] == "`" and "`" in line.strip()[len(opened.group(1)):]):
            fence = opened.group(1)
            continue
        lines.append((number, CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line) if blank_code else line))
    return lines


def links(text: str) -> list[tuple[int, str]]:
    """(line, destination) of every inline link or image, reference definition and HTML href/src."""
    found = []
    for number, line in prose_lines(text):
        found += [(number, m.group(1)) for m in INLINE.finditer(line)]
        found += [(number, m.group(1)) for m in DEFINITION.finditer(line)]
        found += [(number, m.group(1)) for m in HTML_LINK.finditer(line)]
    return [(number, dest[1:-1] if dest.startswith("<") else dest) for number, dest in found]


def heading_text(markdown: str) -> str:
    """A heading's text as GitHub renders it: code, links, images, emphasis and HTML tags give their text."""
    text = CODE_SPAN.sub(lambda m: m.group(2).strip(), markdown)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"<[^>]+>", "", text)
    text = re.sub(r"(\*{1,3}|(?<![A-Za-z0-9])_{1,3})(\S(?:.*?\S)?)\1(?![A-Za-z0-9])", r"\2", text)
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", text)


def slug(text: str) -> str:
    """GitHub's heading id: lowercase; letters, digits, marks, _ and - kept, other punctuation dropped; each
    space a -."""
    kept = "".join(char for char in text.strip().lower()
                   if char in " -_" or unicodedata.category(char)[0] in "LMN")
    return kept.replace(" ", "-")


def anchors(text: str) -> list[str]:
    """Every anchor of a Markdown file, in order: headings' slugs (a repeated one gets -1, -2, ...) and the
    ids and names of its HTML elements."""
    found, seen = [], {}
    lines = prose_lines(text, blank_code=False)
    for index, (number, line) in enumerate(lines):
        found += HTML_ANCHOR.findall(CODE_SPAN.sub("", line))
        atx = ATX.match(line)
        heading = atx.group(2) or "" if atx else None
        following = lines[index + 1] if index + 1 < len(lines) else None
        if heading is None and following and following[0] == number + 1 and line.strip() \
                and SETEXT.match(following[1]) and not _block_start(line):
            heading = line.strip()
        if heading is None:
            continue
        base = slug(heading_text(heading))
        name, count = base, seen.get(base, 0)
        while name in seen and (count := count + 1):
            name = f"{base}-{count}"
        seen[base] = count
        seen[name] = seen.get(name, 0)
        found.append(name)
    return found


def _block_start(line: str) -> bool:
    """A line that cannot be a setext heading's text: a list item, quote, table row, heading or rule."""
    return bool(re.match(r"^ {0,3}([-*+>|#]|\d+[.)]\s|(-{3,}|={3,})\s*$)", line)) or "|" in line


def broken(path: Path, root: Path = ROOT) -> list[str]:
    """One line per link of ``path`` that does not resolve: file:line, the link, and what is wrong."""
    problems = []
    rel = path.relative_to(root)
    for number, dest in links(path.read_text()):
        if not dest or EXTERNAL.match(dest):
            continue
        problem = _problem(path, dest, root)
        if problem:
            problems.append(f"{rel}:{number}: {dest}: {problem}")
    return problems


def _problem(path: Path, dest: str, root: Path) -> str | None:
    target, _, anchor = dest.partition("#")
    if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
        return "not a relative link (only http, https and mailto links may leave the repository)"
    base = root if target.startswith("/") else path.parent
    file = (base / unquote(target).lstrip("/")).resolve() if target else path
    try:
        shown = file.relative_to(root.resolve()) if target else path.relative_to(root)
    except ValueError:
        return "points outside the repository"
    if not file.exists():
        return f"no such file or directory {shown}"
    if not anchor:
        return None
    anchor = unquote(anchor)
    if file.is_dir() or file.suffix.lower() not in (".md", ".markdown"):
        return None if LINE_ANCHOR.match(anchor) and file.is_file() else \
            f"#{anchor}: {shown} is not a Markdown file, so it has no headings to link"
    known = anchors(file.read_text())
    if anchor in known:
        return None
    near = _nearest(anchor, known)
    hint = "nearest: " + ", ".join(f"#{name}" for name in near) if near else f"{shown} has {len(known)} anchors"
    return f"no heading or anchor #{anchor} in {shown} ({hint})"


def _nearest(anchor: str, known: list[str]) -> list[str]:
    """Up to three anchors a reader most likely meant: those holding the anchor (or held by it), then the most
    alike."""
    holding = sorted((name for name in known if anchor.lower() in name or name in anchor.lower()), key=len)
    alike = difflib.get_close_matches(anchor.lower(), known, n=3, cutoff=0.5)
    return list(dict.fromkeys(holding + alike))[:3]


# ---------------------------------------------------------------- the docs

def test_every_relative_link_and_anchor_in_the_docs_resolves():
    problems = [line for path in documents() for line in broken(path)]
    assert not problems, "broken links (fix the link, or the heading it names):\n" + "\n".join(problems)


def test_the_docs_checked_include_readme_and_every_docs_page():
    checked = {str(path.relative_to(ROOT)) for path in documents()}
    assert {"README.md", "docs/reference/cli.md", "docs/spec/README.md"} <= checked
    assert sum(len(links(path.read_text())) for path in documents()) > 50


# ---------------------------------------------------------------- the checker's own rules

def test_slugs_follow_githubs_rules():
    text = ("# Install\n## `omerender render`\n## What's new?\n## Install\n## Install\n"
            "### Flux: rendered manifests & --strict\n## Ünïcode_ok ✓\n"
            "## [Linked](x.md) *emphasis* and snake_case\n"
            "Setext heading\n---\n<a id=\"custom-spot\"></a>\n<a name='old-name'></a>\n")
    assert anchors(text) == ["install", "omerender-render", "whats-new", "install-1", "install-2",
                             "flux-rendered-manifests----strict", "ünïcode_ok-", "linked-emphasis-and-snake_case",
                             "setext-heading", "custom-spot", "old-name"]


def test_code_is_not_a_link_and_code_is_not_a_heading():
    text = ("Run `[x](missing.md)` or\n```sh\ncat [y](missing.md)\n# not a heading\n```\n"
            "~~~\n[z]: missing.md\n~~~\n[real](there.md) and ![img](pic.png \"title\")\n[ref]: <defined.md#top>\n"
            "<a href=\"page.md\">x</a>\n[site](https://example.com/x.md) [mail](mailto:a@b.c)\n")
    assert links(text) == [(9, "there.md"), (9, "pic.png"), (10, "defined.md#top"), (11, "page.md"),
                           (12, "https://example.com/x.md"), (12, "mailto:a@b.c")]
    assert anchors(text) == []


def test_a_broken_link_names_file_line_link_and_the_nearest_anchors(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text("# Guide\n## Install omerender\n## Quick start\n## Instal\n")
    (tmp_path / "README.md").write_text(
        "# Front\n\nSee [the guide](docs/guide.md#install) and [start](docs/guide.md#quick-start).\n"
        "[gone](docs/missing.md), [up](../outside.md), [dir](docs/), [self](#front), [self2](#frnt)\n"
        "[code](tests/x.py#L3) [ftp](ftp://host/x)\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "x.py").write_text("pass\n")
    assert broken(tmp_path / "README.md", tmp_path) == [
        "README.md:3: docs/guide.md#install: no heading or anchor #install in docs/guide.md "
        "(nearest: #instal, #install-omerender)",
        "README.md:4: docs/missing.md: no such file or directory docs/missing.md",
        "README.md:4: ../outside.md: points outside the repository",
        "README.md:4: #frnt: no heading or anchor #frnt in README.md (nearest: #front)",
        "README.md:5: ftp://host/x: not a relative link (only http, https and mailto links may leave the "
        "repository)",
    ]
