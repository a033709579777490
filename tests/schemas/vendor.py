"""Vendor one CRD's published schema into tests/schemas/ (run by hand, not by the tests).

    python tests/schemas/vendor.py CRD.yaml VERSION OUT.json "provenance sentence"

Writes the served VERSION's openAPIV3Schema with every `description` and the `status` property removed
(rendered objects never carry status; descriptions are documentation, not validation) and nothing else
changed, beside the provenance note. tests/schemas/__init__.py reads it with the API server's semantics.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from vendor_crds import served_schema  # noqa: E402 - the package's CRDs are vendored the same way


def main(crd_file: str, version: str, out: str, provenance: str) -> None:
    crd = yaml.safe_load(Path(crd_file).read_text())
    document = {"$comment": provenance, "group": crd["spec"]["group"], "version": version,
                "kind": crd["spec"]["names"]["kind"], "openAPIV3Schema": served_schema(crd, version)}
    Path(out).write_text(json.dumps(document, indent=1, separators=(",", ":"), ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:])
