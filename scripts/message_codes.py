#!/usr/bin/env python3
"""Write docs/reference/message-codes.md, the reference table of every warning and info code, from omerender.codes.

Run it after adding a code: ``python scripts/message_codes.py`` (tests/test_codes.py fails while the committed
table differs from what this writes)."""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "docs" / "reference" / "message-codes.md"

HEADER = """# Message codes

<!-- Written by scripts/message_codes.py from omerender/codes.py; edit that file, then run the script. -->

Every warning and info omerender prints ends with its code in brackets, for example

    warning: fixtures/quickstart/isvc.yaml:3:1: InferenceService llama-demo/llama-3-2-3b-instruct: Runtime sglang-llama-3-2-3b will be auto-selected for model llama-3-2-3b-instruct [auto-selected-runtime]

A code names the kind of message and stays the same from release to release, while the text may improve. With
`--strict` (on `render`, `check`, `build` and `diff`), `--allow CODE[,CODE...]` (repeatable) accepts the warnings
of those codes: they are still printed, and no longer fail the run. The KRM function takes the same list as
`spec.allow: [CODE, ...]` and puts each result's code in its `tags.code`; the Argo CD plugin takes it as the
parameter `allow` (env `ALLOW`, comma-separated). An unknown code is an error that names the nearest known one.
With `--messages github`, each message is printed as a GitHub Actions annotation whose title is its code.

Errors have no code: an error always fails the run and cannot be allowed.

| Code | Severity | Meaning | Fix |
|---|---|---|---|
"""


def table() -> str:
    sys.path.insert(0, str(ROOT))
    from omerender.codes import CODES
    rows = [f"| `{code.name}` | {code.severity} | {_cell(code.meaning)} | {_cell(code.fix)} |"
            for code in sorted(CODES.values(), key=lambda c: c.name)]
    return HEADER + "\n".join(rows) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


if __name__ == "__main__":
    TABLE.write_text(table())
