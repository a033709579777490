"""Every ``NAME.md §N`` the code cites is a file and a section in this repository, so a clone holds the rules."""
from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import ROOT

SECTION = r"§\s?(\d+(?:\.\d+)*)"
# "render.md §8.2, §8.3", "accelerators.md §2.1-§2.6", "render.md §10–§13": one file, a chain of sections.
CITATION = re.compile(rf"([\w-]+\.md)\s?{SECTION}((?:\s?(?:,|and|or|-|–)\s?{SECTION})*)")
PLACES = (ROOT / "docs" / "spec", ROOT / "docs", ROOT)


def citations() -> list[tuple[str, str, str]]:
    """(where, file name, section) for every section a citation in omerender/ names."""
    found = []
    for module in sorted((ROOT / "omerender").rglob("*.py")):
        for number, line in enumerate(module.read_text().splitlines(), 1):
            for match in CITATION.finditer(line):
                where = f"{module.relative_to(ROOT)}:{number}"
                for section in [match.group(2), *re.findall(SECTION, match.group(3))]:
                    found.append((where, match.group(1), section))
    return found


def headings(doc: Path) -> set[str]:
    """The section numbers of a spec file's headings: "## 3. Merging" is 3, "### 3.1 Scope" is 3.1."""
    return {m.group(1) for m in re.finditer(r"^#{2,6} (\d+(?:\.\d+)*)\.?\s", doc.read_text(), re.M)}


def test_every_spec_citation_in_the_code_resolves_to_a_file_and_section():
    cited = citations()
    assert len(cited) > 100   # the code cites its spec throughout; a broken pattern would find none
    missing = []
    for where, name, section in cited:
        doc = next((place / name for place in PLACES if (place / name).is_file()), None)
        if doc is None:
            missing.append(f"{where}: {name} is no file of docs/spec/, docs/ or the repository's root")
        elif section not in headings(doc):
            missing.append(f"{where}: {doc.relative_to(ROOT)} has no section {section}")
    assert missing == []


def test_the_citation_pattern_reads_chains_and_ranges():
    line = "(render.md §8.2, §8.3 and §10–§13; accelerators.md §2.1-§2.6; api.md §7.1 rows 1-4)"
    assert [(m.group(1), m.group(2), re.findall(SECTION, m.group(3))) for m in CITATION.finditer(line)] == [
        ("render.md", "8.2", ["8.3", "10", "13"]), ("accelerators.md", "2.1", ["2.6"]), ("api.md", "7.1", [])]
