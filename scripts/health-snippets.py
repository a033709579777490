#!/usr/bin/env python3
"""Writes the health-check snippets from their sources, or with --check says which one is out of date.

Sources: the Lua scripts plugins/argocd/health/*.lua and plugins/flux/health-check-exprs.yaml.
Written: plugins/argocd/health/argocd-cm-patch.yaml (every script under its argocd-cm key) and, in
docs/reference/health-checks.md, the yaml block after each `<!-- generated: NAME -->` marker (NAME is argocd-cm or
flux). tests/test_health_checks.py runs --check.

Usage: python scripts/health-snippets.py [--check] [--root DIR]
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

KEY_PREFIX = "resource.customizations.health."


def argocd_cm(root: Path) -> str:
    """The argocd-cm patch: each script's text, indented, under resource.customizations.health.<file stem>."""
    lines = ["apiVersion: v1", "kind: ConfigMap", "metadata:", "  name: argocd-cm", "  namespace: argocd", "data:"]
    for script in sorted((root / "plugins" / "argocd" / "health").glob("*.lua")):
        lines.append(f"  {KEY_PREFIX}{script.stem}: |")
        lines.extend(f"    {line}" if line else "" for line in script.read_text().splitlines())
    return "\n".join(lines) + "\n"


def flux_exprs(root: Path) -> str:
    """plugins/flux/health-check-exprs.yaml without its comment lines."""
    text = (root / "plugins" / "flux" / "health-check-exprs.yaml").read_text()
    return "".join(line + "\n" for line in text.splitlines() if not line.startswith("#"))


def with_blocks(doc: str, blocks: dict[str, str]) -> str:
    """The doc with the yaml block after each `<!-- generated: NAME -->` replaced by blocks[NAME]."""
    def replace(match: re.Match) -> str:
        return f"{match.group(1)}```yaml\n{blocks[match.group(2)]}```"
    pattern = re.compile(r"(<!-- generated: ([\w-]+) -->\n)```yaml\n.*?^```", re.M | re.S)
    return pattern.sub(replace, doc)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 naming each stale file")
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    args = parser.parse_args(argv)
    root = args.root
    patch = root / "plugins" / "argocd" / "health" / "argocd-cm-patch.yaml"
    doc = root / "docs" / "reference" / "health-checks.md"
    config = argocd_cm(root)
    wanted = {patch: config, doc: with_blocks(doc.read_text(), {"argocd-cm": config, "flux": flux_exprs(root)})}
    stale = [path for path, text in wanted.items() if not path.exists() or path.read_text() != text]
    if args.check:
        for path in stale:
            print(f"error: {path.relative_to(root)} is out of date: run python scripts/health-snippets.py",
                  file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        path.write_text(wanted[path])
        print(f"wrote {path.relative_to(root)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
