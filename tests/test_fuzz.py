"""Issue 9: bounded fuzzing of the loader and the KRM function over raw bytes (see fuzz_targets.py)."""
from __future__ import annotations

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import worked_example
from fuzz_targets import fuzz_krm, fuzz_loader

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
