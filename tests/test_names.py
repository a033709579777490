"""Object names and model-ready keys: render.md §8.1, §6.4, §16 examples 31 and 37."""
import hashlib

import pytest

from omerender.kube.names import lws_name, model_ready_key, scaledobject_name, trunc63

LONG_COMP = "mixtral-8x7b-instruct-v0-1-chat-production-us-ashburn-region-1-engine"


def sha8(s: str) -> str:
    return hashlib.sha256(s.encode()).hexdigest()[:8]


# Example 37
def test_example_37_long_component_name():
    assert len(LONG_COMP) == 69
    assert sha8(LONG_COMP) == "32264bff"
    assert trunc63(LONG_COMP) == "a2264bff-struct-v0-1-chat-production-us-ashburn-region-1-engine"
    assert lws_name(LONG_COMP) == "lws-ct-v0-1-chat-production-us-ashburn-region-1-engine"


def test_trunc63_keeps_63_characters():
    name = "b" * 56 + "-engine"
    assert len(name) == 63
    assert trunc63(name) == name


def test_trunc63_hashes_64_characters_with_letter_first_digit_kept():
    name = "inference-service-number-3-" + "x" * 30 + "-engine"
    assert len(name) == 64 and sha8(name) == "c804cb52"
    assert trunc63(name) == "c804cb52-service-number-3-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx-engine"
    assert len(trunc63(name)) == 63


def test_trunc63_replaces_a_leading_digit_of_the_hash_with_a():
    name = "inference-service-number-1-" + "x" * 30 + "-engine"
    assert sha8(name) == "6e55ed47"
    assert trunc63(name) == "ae55ed47-service-number-1-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx-engine"


def test_short_names_for_lws_and_scaledobject():
    assert lws_name("llama-3-2-3b-instruct-engine") == "lws-llama-3-2-3b-instruct-engine"
    assert scaledobject_name("llama-3-2-3b-instruct-engine") == "scaledobject-llama-3-2-3b-instruct-engine"


def test_lws_and_scaledobject_take_the_last_50_characters():
    fifty = "e" * 43 + "-engine"
    assert lws_name(fifty) == "lws-" + fifty
    assert lws_name("x" + fifty) == "lws-" + fifty
    assert scaledobject_name(LONG_COMP) == "scaledobject-ct-v0-1-chat-production-us-ashburn-region-1-engine"


# Example 31
@pytest.mark.parametrize("kind, name, namespace, key", [
    ("ClusterBaseModel", "deepseek-r1-distill-qwen-32b-instruct", None,
     "models.ome.io/clusterbasemodel.b4f64610-still-qwen-32b-instruct"),
    ("BaseModel", "mistral-7b-instruct-v0-2-finetuned-x", "team-a",
     "models.ome.io/team-a.basemodel.0ca78f5b-struct-v0-2-finetuned-x"),
    ("BaseModel", "llama-3-2-1b-instruct", "research-playground",
     "models.ome.io/ab7bfc19.basemodel.llama-3-2-1b-instruct"),
])
def test_example_31_model_ready_keys(kind, name, namespace, key):
    assert model_ready_key(kind, name, namespace) == key


def test_model_ready_key_short_names_unchanged():
    assert (model_ready_key("ClusterBaseModel", "llama-3-2-3b-instruct", None)
            == "models.ome.io/clusterbasemodel.llama-3-2-3b-instruct")
    assert model_ready_key("BaseModel", "llama", "llama-demo") == "models.ome.io/llama-demo.basemodel.llama"


def test_cluster_model_boundary_32_and_33():
    assert model_ready_key("ClusterBaseModel", "c" * 32, None) == "models.ome.io/clusterbasemodel." + "c" * 32
    # the model part's hash keeps a leading digit or letter as it is (no "a" replacement here)
    assert sha8("c" * 33) == "d6934a71"
    assert (model_ready_key("ClusterBaseModel", "c" * 33, None)
            == "models.ome.io/clusterbasemodel.d6934a71-" + "c" * 23)


def test_base_model_boundary_38_and_39_with_8_char_namespace():
    assert model_ready_key("BaseModel", "m" * 30, "abcdefgh") == "models.ome.io/abcdefgh.basemodel." + "m" * 30
    assert sha8("m" * 31) == "058a3425"
    assert (model_ready_key("BaseModel", "m" * 31, "abcdefgh")
            == "models.ome.io/abcdefgh.basemodel.058a3425-" + "m" * 21)


def test_base_model_9_char_namespace_is_hashed_when_too_long():
    assert model_ready_key("BaseModel", "m" * 29, "abcdefghi") == "models.ome.io/abcdefghi.basemodel." + "m" * 29
    assert sha8("abcdefghi") == "19cc02f2"
    # namespace becomes 8 hex digits, leaving 30 characters, which the model fits unhashed
    assert model_ready_key("BaseModel", "m" * 30, "abcdefghi") == "models.ome.io/19cc02f2.basemodel." + "m" * 30


def test_model_ready_key_stays_within_a_label_name():
    key = model_ready_key("BaseModel", "n" * 63, "namespace-" + "s" * 53)
    assert len(key.split("/", 1)[1]) == 49


def test_base_model_needs_a_namespace():
    with pytest.raises(ValueError):
        model_ready_key("BaseModel", "m", None)
