"""The CRDs omerender ships (omerender/kube/crds/) are what scripts/vendor_crds.py writes from its recorded sources
(issue 43), as tests/test_kube_versions.py holds the field tables to scripts/gen_k8s_types.py. The sources are
upstream files, not in this repository: the script records each one's sha256 and refuses a text that differs, and
each vendored file records the source it was written from, so a file written from another source, or edited by hand,
fails here."""
from __future__ import annotations

import gzip
import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CRDS = ROOT / "omerender" / "kube" / "crds"


def _script():
    spec = importlib.util.spec_from_file_location("vendor_crds", ROOT / "scripts" / "vendor_crds.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SCRIPT = _script()


def _keys(node) -> set[str]:
    if isinstance(node, dict):
        return set(node) | {key for value in node.values() for key in _keys(value)}
    if isinstance(node, list):
        return {key for value in node for key in _keys(value)}
    return set()


def test_the_shipped_files_are_the_script_s_sources_and_nothing_else():
    assert sorted(p.name for p in CRDS.glob("*.json.gz")) == sorted(f"{s[0]}.json.gz" for s in SCRIPT.SOURCES)
    assert SCRIPT.OUT == CRDS


@pytest.mark.parametrize("source", SCRIPT.SOURCES, ids=lambda s: s[0])
def test_each_file_is_what_the_script_writes_from_its_recorded_source(source):
    name, repository, tag, commit, path, version, digest = source
    raw = (CRDS / f"{name}.json.gz").read_bytes()
    document = json.loads(gzip.decompress(raw))
    assert document["source"] == {"repository": repository, "tag": tag, "commit": commit, "path": path,
                                  "url": SCRIPT.url(repository, commit, path), "sha256": digest}
    assert document["version"] == version
    assert set(document) == {"group", "version", "kind", "source", "openAPIV3Schema"}
    assert raw == SCRIPT.packed(document)  # the script's bytes: sorted compact JSON, gzip without a timestamp
    schema = document["openAPIV3Schema"]
    assert "description" not in _keys(schema) and "status" not in schema.get("properties", {})


def test_the_ome_crds_are_the_commit_the_vendored_ome_data_comes_from():
    ome = [s for s in SCRIPT.SOURCES if s[1] == "sgl-project/ome"]
    provenance = (ROOT / "tests" / "data" / "ome" / "PROVENANCE.md").read_text()
    assert {s[3] for s in ome} == {SCRIPT.OME[2]} and f"commit `{SCRIPT.OME[2]}`" in provenance
    kinds = {json.loads(gzip.decompress((CRDS / f"{s[0]}.json.gz").read_bytes()))["kind"] for s in ome}
    assert kinds == {"InferenceService", "ServingRuntime", "ClusterServingRuntime", "BaseModel", "ClusterBaseModel",
                     "AcceleratorClass", "BenchmarkJob", "FineTunedWeight"}


def test_a_source_that_is_not_the_recorded_one_is_refused_before_anything_is_written():
    source = next(s for s in SCRIPT.SOURCES if s[0] == "ome-basemodels")
    text = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
    with pytest.raises(SystemExit) as refused:
        SCRIPT.document(text, source)
    assert str(refused.value) == (
        f"sgl-project/ome@{SCRIPT.OME[2]}:config/crd/full/ome.io_basemodels.yaml has sha256 "
        f"{SCRIPT.sha256(text)}, not the {source[6]} SOURCES records: check the change, then record the new sha256")
