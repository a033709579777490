"""Issue 9: bounded fuzzing of the loader and the KRM function over raw bytes (see fuzz_targets.py)."""
from __future__ import annotations

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import worked_example
from fuzz_targets import fuzz_krm, fuzz_krm_aliased, fuzz_loader
from omerender.gitops.krm import run as krm_run
from omerender.yamlio import limits

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

SEED_TEXT = yaml.safe_dump_all(list(worked_example().values()), sort_keys=False)
RESOURCE_LIST = yaml.safe_dump({"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList",
                                "items": list(worked_example().values()),
                                "functionConfig": {"apiVersion": "omerender.io/v1alpha1", "kind": "OMERender",
                                                   "spec": {"keepInputs": True}}}, sort_keys=False)
# YAML's structural pieces, so random streams reach the composer and constructor, not only the scanner.
TOKENS = ["---\n", "...\n", "- ", ": ", "? ", "[", "]", "{", "}", ", ", "\n", "  ", "&a ", "*a", "&b ", "*b", "<<: ",
          "!!str ", "!!binary ", "!!set ", "!!python/object:os.system ", "!foo ", "|\n", ">-\n", "'", '"', "#",
          "%YAML 1.1\n", "%TAG ! tag:x,2000:\n", "kind: List\nitems:\n", "apiVersion: ome.io/v1beta1\n",
          "kind: InferenceService\n", "kind: ResourceList\n", "apiVersion: config.kubernetes.io/v1\n", "items:\n",
          "metadata:\n  name: x\n", "functionConfig:\n", "spec:\n", "null", "~", "true", "1e9", "0x1f", "2024-01-01",
          "\t", "\x00", "\ufeff", "\ud7ff", "é"]

yamlish = st.lists(st.sampled_from(TOKENS) | st.text(max_size=4), max_size=60).map("".join)


def mutate(seed: str):
    """The seed text with random slices cut, repeated or replaced by YAML pieces."""
    @st.composite
    def build(draw):
        text = seed
        for _ in range(draw(st.integers(1, 4))):
            start = draw(st.integers(0, len(text)))
            end = draw(st.integers(start, min(len(text), start + 40)))
            text = text[:start] + draw(st.sampled_from(["", text[start:end] * 2] + TOKENS)) + text[end:]
        return text
    return build()


@FUZZ
@given(st.binary(max_size=512))
def test_loader_survives_raw_bytes(data):
    fuzz_loader(data)


@FUZZ
@given(yamlish)
def test_loader_survives_yaml_shaped_noise(text):
    fuzz_loader(text.encode("utf-8", errors="surrogatepass"))


@FUZZ
@given(mutate(SEED_TEXT))
def test_loader_survives_mutated_objects(text):
    fuzz_loader(text.encode("utf-8", errors="surrogatepass"))


@FUZZ
@given(st.binary(max_size=512))
def test_krm_function_survives_raw_bytes(data):
    fuzz_krm(data)


@FUZZ
@given(yamlish)
def test_krm_function_survives_yaml_shaped_noise(text):
    fuzz_krm(text.encode("utf-8", errors="surrogatepass"))


@FUZZ
@given(mutate(RESOURCE_LIST))
def test_krm_function_survives_mutated_resource_lists(text):
    fuzz_krm(text.encode("utf-8", errors="surrogatepass"))


@FUZZ
@given(st.binary(min_size=24, max_size=64), st.integers(0, 3000))
def test_krm_function_survives_aliased_items(data, alias_limit):
    # A small limit, so that random items cross it often: the budget must hold across items, and across the
    # fallback to reading the whole ResourceList when an item aliases another.
    saved = limits.MAX_ALIAS_NODES
    limits.MAX_ALIAS_NODES = alias_limit
    try:
        fuzz_krm_aliased(data)
    finally:
        limits.MAX_ALIAS_NODES = saved


def test_aliased_items_cross_items_and_cross_the_limit(monkeypatch):
    """The generator reaches what the property is about, and the oracle is exact (no vacuous pass)."""
    from fuzz_targets import aliased_resource_list
    data = bytes([0, 1, 1, 2, 0, 1, 0, 1, 1, 8, 0, 0])  # two items; the second repeats the first's l0 nine times
    text, alias_nodes, leaves = aliased_resource_list(data)
    assert text.splitlines()[3:] == [
        "- {apiVersion: v1, kind: ConfigMap, metadata: {name: c0}, data: {l0: &i0l0 [x, x, x], l1: &i0l1 [*i0l0]}}",
        "- {apiVersion: v1, kind: ConfigMap, metadata: {name: c1}, data: {l0: &i1l0 [x, x], l1: &i1l1 [" +
        ", ".join(["*i0l0"] * 9) + "]}}"]
    assert (alias_nodes, leaves["i1l1"]) == (4 + 9 * 4, 27)
    monkeypatch.setattr(limits, "MAX_ALIAS_NODES", 40)
    fuzz_krm_aliased(data)
    assert krm_run(text)[1] == 0
    monkeypatch.setattr(limits, "MAX_ALIAS_NODES", 39)
    fuzz_krm_aliased(data)
    assert krm_run(text)[1] == 1
    flow, _, _ = aliased_resource_list(bytes([1]))
    assert "items:\n  - {" in flow
