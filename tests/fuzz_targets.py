"""Fuzz targets over raw bytes: the loader (what ``render`` reads) and the KRM function (a ResourceList on stdin).

Each target raises ``AssertionError`` on a bug: an exception other than a user error, an internal-error message,
or output that is not a well-formed result. ``tests/test_fuzz.py`` drives them with hypothesis for a bounded
time in CI; with atheris installed they also run as ``python tests/fuzz_targets.py loader|krm``.
"""
from __future__ import annotations

import io
import sys

import yaml

from omerender import krm
from omerender.emit import dump_resource_list
from omerender.errors import OmeError, OmeErrors
from omerender.load import index, read_paths


def fuzz_loader(data: bytes) -> None:
    text = data.decode("utf-8", errors="replace")
    try:
        inputs = index(read_paths(["-"], stdin=io.StringIO(text)))
    except OmeErrors as err:
        assert err.errors and all(isinstance(e, OmeError) and e.file == "<stdin>" and e.text for e in err.errors)
        return
    except OmeError as err:
        assert err.text
        return
    for obj in inputs.objects:
        assert isinstance(obj.data, dict) and obj.name and obj.kind


def fuzz_krm(data: bytes) -> None:
    text = data.decode("utf-8", errors="replace")
    resource_list, code = krm.run(text)
    assert code in (0, 1)
    assert (resource_list["apiVersion"], resource_list["kind"]) == krm.RESOURCE_LIST
    results = resource_list.get("results", [])
    for result in results:
        assert "internal error" not in result["message"], result["message"]
    if code == 1:
        assert resource_list["items"] == [] and any(r["severity"] == "error" for r in results)
    yaml.safe_load(dump_resource_list(resource_list))  # the output is valid YAML


TARGETS = {"loader": fuzz_loader, "krm": fuzz_krm}

if __name__ == "__main__":  # pragma: no cover - manual, long fuzzing with atheris
    import atheris  # type: ignore[import-not-found]

    target = TARGETS[sys.argv.pop(1)]
    atheris.Setup(sys.argv, target)
    atheris.Fuzz()
