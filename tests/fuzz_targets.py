"""Fuzz targets over raw bytes: the loader (what ``render`` reads) and the KRM function (a ResourceList on stdin,
raw or shaped into items that alias each other).

Each target raises ``AssertionError`` on a bug: an exception other than a user error, an internal-error message,
or output that is not a well-formed result. ``tests/test_fuzz.py`` drives them with hypothesis for a bounded
time in CI; with atheris installed they also run as ``python tests/fuzz_targets.py loader|krm|krm-aliased``.
"""
from __future__ import annotations

import io
import sys

import yaml

from omerender.errors import OmeError, OmeErrors
from omerender.gitops import krm
from omerender.ome.load import index
from omerender.yamlio import limits
from omerender.yamlio.emit import dump_resource_list
from omerender.yamlio.reading import read_paths


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


def aliased_resource_list(data: bytes) -> tuple[str, int, dict[str, int]]:
    """A ResourceList whose items alias each other's lists, shaped by ``data``.

    Returns the text, the nodes its aliases add when expanded, and each list's leaf count. Every item is a
    ConfigMap whose ``data`` holds lists ``l0``, ``l1``...: ``l0`` has scalars, each later list repeats an earlier
    list (of this item, or now and then of a previous one, which defeats item-by-item reading) several times. The first byte picks
    kustomize's layout (one ``- `` item per line at column 0) or flow items.
    """
    stream = iter(data)

    def take(bound: int) -> int:
        return next(stream, 0) % bound

    kustomize_layout = take(2) == 0
    sizes: dict[str, int] = {}   # anchor -> nodes in its value
    leaves: dict[str, int] = {}
    anchors: list[str] = []
    alias_nodes = 0
    items = []
    for i in range(1 + take(5)):
        lists, own = [], []
        for level in range(1 + take(4)):
            anchor = f"i{i}l{level}"
            width = 1 + take(9)
            if level == 0:
                value, sizes[anchor], leaves[anchor] = "[" + ", ".join(["x"] * width) + "]", 1 + width, width
            else:
                pool = anchors if take(4) == 0 else own  # mostly within the item: item-by-item reading holds
                target = pool[take(len(pool))]
                value = "[" + ", ".join([f"*{target}"] * width) + "]"
                sizes[anchor], leaves[anchor] = 1 + width * sizes[target], width * leaves[target]
                alias_nodes += width * sizes[target]
            anchors.append(anchor)
            own.append(anchor)
            lists.append(f"l{level}: &{anchor} {value}")
        items.append(f"{{apiVersion: v1, kind: ConfigMap, metadata: {{name: c{i}}}, data: {{{', '.join(lists)}}}}}")
    prefix = "- " if kustomize_layout else "  - "
    text = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + \
        "".join(f"{prefix}{item}\n" for item in items)
    return text, alias_nodes, leaves


def fuzz_krm_aliased(data: bytes) -> None:
    """The KRM function on aliased items: refused exactly when the aliases of the whole ResourceList expand past
    the limit, else every list comes out expanded."""
    text, alias_nodes, leaves = aliased_resource_list(data)
    fuzz_krm(text.encode())
    resource_list, code = krm.run(text)
    if alias_nodes > limits.MAX_ALIAS_NODES:
        assert code == 1, alias_nodes
        assert "aliases expand to more than" in resource_list["results"][0]["message"]
        return
    assert code == 0, resource_list.get("results")
    for item in resource_list["items"]:
        for key, value in item["data"].items():
            assert _leaves(value) == leaves[f"i{item['metadata']['name'][1:]}{key}"]


def _leaves(value) -> int:
    return sum(map(_leaves, value)) if isinstance(value, list) else 1


TARGETS = {"loader": fuzz_loader, "krm": fuzz_krm, "krm-aliased": fuzz_krm_aliased}

if __name__ == "__main__":  # pragma: no cover - manual, long fuzzing with atheris
    import atheris  # type: ignore[import-not-found]

    target = TARGETS[sys.argv.pop(1)]
    atheris.Setup(sys.argv, target)
    atheris.Fuzz()
