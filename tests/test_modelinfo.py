"""omerender model-info (issue 14): OME's model-agent metadata from a model's files, through the real CLI."""
from __future__ import annotations

import json
import os
import shutil
import struct
from pathlib import Path

import pytest
import yaml

from conftest import CATALOG, run_cli

CORPUS = CATALOG / "modelconfig"
TT, ITT, EMB = ["TEXT_TO_TEXT"], ["IMAGE_TEXT_TO_TEXT"], ["EMBEDDING"]

# file: (modelArchitecture, maxTokens, modelParameterSize, modelCapabilities, quantization), as OME's agent derives
# them from config.json alone (no safetensors: its per-architecture estimates). The sizes OME's Go tests pin
# (pkg/hfutil/modelconfig/*_test.go) are these: llama3 70B, llama3_1_405b 405B, llama3_2_1b/3b 1B/3B, mllama 11B/90B,
# llama4 402B and 17B, mistral 7B, mixtral 46.7B, deepseek_v3 685B, kimi_k2 1.5T, phi3 3.8B, phi3_v 14B, phi3small 7B,
# phimoe 16B, qwen2 7B, gpt_oss 20B/120B; the rest fall in the ranges those tests give.
EXPECTED = {
    "baichuan2_7b.json": ("BaichuanForCausalLM", 4096, "7B", TT, None),
    "bge_large.json": ("BertModel", 512, "340M", EMB, None),
    "chatglm3_6b.json": ("ChatGLMModel", 8192, "6B", TT, None),
    "clip_vision_model.json": ("CLIPVisionModelWithProjection", None, "629.15M", TT, None),
    "command_r_35b.json": ("CohereForCausalLM", 131072, "35B", TT, None),
    "dbrx_132b.json": ("DbrxForCausalLM", 32768, "132B", TT, None),
    "deepseek_v3.json": ("DeepseekV3ForCausalLM", 163840, "685B", TT, None),
    "deepseek_vl2_tiny.json": ("DeepseekVLV2ForCausalLM", 4096, "1B", ITT, None),
    "e5_mistral_7b.json": ("MistralModel", 32768, "7B", EMB, None),
    "exaone_7.8b.json": ("ExaoneForCausalLM", 32768, "7.8B", TT, None),
    "gemma3.json": ("Gemma3ForConditionalGeneration", 8192, "32B", ITT, None),
    "gemma3_text.json": ("Gemma3ForCausalLM", 32768, "1.12B", TT, None),
    "gemma_2_2b.json": ("Gemma2ForCausalLM", 8192, "2.6B", TT, None),
    "gemma_2_2b_it.json": ("Gemma2ForCausalLM", 8192, "2.6B", TT, None),
    "gemma_2_9b.json": ("Gemma2ForCausalLM", 8192, "9B", TT, None),
    "gemma_7b.json": ("GemmaForCausalLM", 8192, "7B", TT, None),
    "glm4_9b.json": ("ChatGLMModel", 8192, "9B", TT, None),
    "gpt_oss_120b.json": ("GptOssForCausalLM", 131072, "120B", TT, None),
    "gpt_oss_20b.json": ("GptOssForCausalLM", 131072, "20B", TT, None),
    "gte_qwen2_7b.json": ("Qwen2ForCausalLM", 131072, "7B", TT, None),
    "internlm2_7b.json": ("InternLM2ForCausalLM", 32768, "7B", TT, None),
    "internlm2_reward.json": ("InternLM2ForRewardModel", 32768, "7B", TT, None),
    "janus_1.3b.json": ("JanusMultiModalityCausalLM", 16384, "1.3B", ITT, None),
    "kimi_k2_instruct.json": ("DeepseekV3ForCausalLM", 131072, "1.5T", TT, "fp8"),
    "llama3.json": ("LlamaForCausalLM", 8192, "70B", TT, None),
    "llama3_1.json": ("LlamaForCausalLM", 131072, "70B", TT, None),
    "llama3_1_405b.json": ("LlamaForCausalLM", 131072, "405B", TT, "fp8"),
    "llama3_2_11b_vision.json": ("MllamaForConditionalGeneration", 131072, "11B", ITT, None),
    "llama3_2_1b.json": ("LlamaForCausalLM", 131072, "1B", TT, None),
    "llama3_2_3b.json": ("LlamaForCausalLM", 131072, "3B", TT, None),
    "llama3_2_90b_vision.json": ("MllamaForConditionalGeneration", 131072, "90B", ITT, None),
    "llama4.json": ("Llama4ForConditionalGeneration", 1048576, "402B", ITT, None),
    "llama4_scout_17b_16e.json": ("Llama4ForConditionalGeneration", 10485760, "17B", ITT, None),
    "llava_1.5_7b_hf.json": ("LlavaForConditionalGeneration", 4096, "7.5B", ITT, None),
    "llava_v1.5_7b.json": ("LlavaLlamaForCausalLM", None, None, ITT, None),
    "minicpm3_4b.json": ("MiniCPM3ForCausalLM", 32768, "4B", TT, None),
    "mistral.json": ("MistralForCausalLM", 32768, "7B", EMB, None),
    "mistral_7b_instruct.json": ("MistralForCausalLM", 32768, "7B", EMB, None),
    "mixtral.json": ("MixtralForCausalLM", 32768, "46.7B", TT, None),
    "phi3.json": ("Phi3ForCausalLM", 131072, "3.8B", TT, None),
    "phi3_v.json": ("Phi3VForCausalLM", 131072, "14B", ITT, None),
    "phi3small.json": ("Phi3SmallForCausalLM", 8192, "7B", TT, None),
    "phimoe.json": ("PhiMoEForCausalLM", 131072, "16B", TT, None),
    "qwen2.5_0.5b.json": ("Qwen2ForCausalLM", 32768, "539.47M", TT, None),
    "qwen2.5_1.5b.json": ("Qwen2ForCausalLM", 131072, "1.44B", TT, None),
    "qwen2.5_14b.json": ("Qwen2ForCausalLM", 131072, "12.13B", TT, None),
    "qwen2.5_32b.json": ("Qwen2ForCausalLM", 131072, "24.71B", TT, None),
    "qwen2.5_3b.json": ("Qwen2ForCausalLM", 32768, "2.70B", TT, None),
    "qwen2.5_72b.json": ("Qwen2ForCausalLM", 131072, "57.36B", TT, None),
    "qwen2.5_7b.json": ("Qwen2ForCausalLM", 131072, "7B", TT, None),
    "qwen2.5_vl_7b.json": ("Qwen2_5_VLForConditionalGeneration", 128000, "7B", ITT, None),
    "qwen2_7b.json": ("Qwen2ForCausalLM", 131072, "7B", TT, None),
    "qwen2_vl_2b.json": ("Qwen2VLForConditionalGeneration", 32768, "2B", ITT, None),
    "qwen2_vl_7b.json": ("Qwen2VLForConditionalGeneration", 32768, "7B", ITT, None),
    "qwen3_30b.json": ("Qwen3MoeForCausalLM", 40960, "30B", TT, None),
    "qwen3_4b.json": ("Qwen3ForCausalLM", 40960, "4B", TT, None),
    "qwen3_5_27b.json": ("Qwen3_5ForConditionalGeneration", 262144, "12.62B", ITT, None),
    "qwen3_5_35b_a3b.json": ("Qwen3_5MoeForConditionalGeneration", 262144, "21.47B", ITT, None),
    "qwen3_8b_fp8.json": ("Qwen3ForCausalLM", 40960, "8B", TT, "fp8"),
    "qwen3_embedding_8b.json": ("Qwen3ForCausalLM", 40960, "8B", EMB, None),
    "qwen3_vl_235b.json": ("Qwen3VLMoeForConditionalGeneration", 262144, "235.12B", ITT, None),
    "qwen3_vl_2b_instruct.json": ("Qwen3VLForConditionalGeneration", 262144, "1.99B", ITT, None),
    "qwen3_vl_30b_a3b_instruct.json": ("Qwen3VLMoeForConditionalGeneration", 262144, "30.85B", ITT, None),
    "qwen_7b.json": ("QWenLMHeadModel", 8192, "7B", TT, None),
    "skywork_reward_llama.json": ("LlamaForSequenceClassification", 131072, "5B", TT, None),
    "smollm_1.7b.json": ("LlamaForCausalLM", 2048, "1B", TT, None),
    "stablelm_3b.json": ("StableLmForCausalLM", 4096, "3B", TT, None),
    "xverse_7b.json": ("XverseForCausalLM", 8192, "7B", TT, None),
}


def model_dir(tmp_path: Path, name: str) -> Path:
    """A model directory holding one corpus file as its config.json (the layout OME's agent reads)."""
    directory = tmp_path / name.removesuffix(".json")
    directory.mkdir()
    shutil.copy(CORPUS / name, directory / "config.json")
    if name == "qwen3_embedding_8b.json":
        shutil.copy(CORPUS / "config_sentence_transformers.json", directory)
    return directory


def info(*args: str) -> tuple[dict, list[str]]:
    run = run_cli("model-info", *args, "-o", "json")
    assert run.code == 0, run.stderr
    return json.loads(run.stdout)["spec"], run.lines


def test_corpus_is_covered():
    assert sorted(EXPECTED) == sorted(p.name for p in CORPUS.glob("*.json") if "sentence" not in p.name)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_corpus_config_gives_omes_values(tmp_path, name):
    arch, tokens, size, caps, quant = EXPECTED[name]
    directory = model_dir(tmp_path, name)
    spec, lines = info(str(directory))
    config = json.loads((CORPUS / name).read_text())
    assert spec["modelArchitecture"] == arch
    assert spec.get("maxTokens") == tokens
    assert spec.get("modelParameterSize") == size
    assert spec["modelCapabilities"] == caps
    assert spec.get("quantization") == quant
    assert spec["modelType"] == config["model_type"]
    assert spec["modelFormat"] == {"name": "safetensors", "version": "1.0.0"}
    framework = {"name": "transformers", **({"version": config["transformers_version"]}
                                           if config.get("transformers_version") else {})}
    assert spec["modelFramework"] == framework
    # Without safetensors the size is an estimate, and says so.
    assert lines[0].startswith("warning: ")
    assert ("is OME's" in lines[0]) if size else ("left out" in lines[0])
    # OME marks Mistral chat models as embedding models: kept, and said.
    if arch == "MistralForCausalLM":
        assert lines[1:] == [f"warning: {directory}: modelCapabilities EMBEDDING is what OME's model agent "
                             "records for every model_type mistral model (its Mistral loader reports all of them as "
                             "embedding models), "
                             "MistralForCausalLM included; set spec.modelCapabilities by hand if this is a chat model"]
    else:
        assert len(lines) == 1


def test_two_shard_model_counts_exactly_from_headers():
    spec, lines = info(str(CORPUS / "tiny-random-PhiModel"))
    assert spec["modelParameterSize"] == "92.56K"  # 2 × 46,282 parameters
    assert spec["modelArchitecture"] == "PhiModel" and spec["maxTokens"] == 512
    assert lines == []


def test_yaml_output_is_a_model_fragment_with_the_weights_size():
    run = run_cli("model-info", str(CORPUS / "tiny-random-PhiModel"))
    assert run.code == 0
    # 376,016 bytes of safetensors, plus 10%, rounded up to whole Gi.
    assert run.stdout.startswith("metadata:\n  annotations:\n    omerender.io/weights-size: 1Gi\nspec:\n")
    assert yaml.safe_load(run.stdout)["spec"]["modelParameterSize"] == "92.56K"
    assert "version: 1.0.0\n" in run.stdout


# --- safetensors built in tests ------------------------------------------------------------------------------

DTYPE_BYTES = {"BF16": 2, "F32": 4, "F8_E4M3": 1}


def write_safetensors(path: Path, tensors: dict[str, tuple[str, list[int]]], header_len: int | None = None,
                      header: bytes | None = None) -> None:
    """A real safetensors layout; the data section is a sparse hole of the right size (never read)."""
    entries, offset = {"__metadata__": {"format": "pt"}}, 0
    for name, (dtype, shape) in tensors.items():
        size = DTYPE_BYTES[dtype]
        for dim in shape:
            size *= dim
        entries[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    raw = header if header is not None else json.dumps(entries).encode()
    with open(path, "wb") as out:
        out.write(struct.pack("<Q", len(raw) if header_len is None else header_len))
        out.write(raw)
        out.truncate(8 + len(raw) + offset)


def llama_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "model"
    directory.mkdir()
    shutil.copy(CORPUS / "llama3_2_1b.json", directory / "config.json")
    return directory


def test_built_headers_give_exact_counts(tmp_path):
    directory = llama_dir(tmp_path)
    # 128256 × 2048 embeddings + 16 layers of 4 × 2048² + an F32 scalar (not counted, as in OME) = 531,103,744.
    tensors = {"embed": ("BF16", [128256, 2048]), "scale": ("F32", [])}
    tensors.update({f"layer.{i}": ("F8_E4M3", [4, 2048, 2048]) for i in range(16)})
    write_safetensors(directory / "model.safetensors", tensors)
    spec, lines = info(str(directory))
    assert spec["modelParameterSize"] == "531.10M"
    assert lines == []


def test_index_names_the_shards(tmp_path):
    directory = llama_dir(tmp_path)
    write_safetensors(directory / "a.safetensors", {"x": ("BF16", [1000, 1000])})
    write_safetensors(directory / "b.safetensors", {"y": ("BF16", [500, 1000])})
    write_safetensors(directory / "stray.safetensors", {"z": ("BF16", [7, 7])})  # not in the index: not counted
    (directory / "model.safetensors.index.json").write_text(json.dumps({"weight_map": {"x": "a.safetensors",
                                                                                       "y": "b.safetensors"}}))
    spec, _ = info(str(directory))
    assert spec["modelParameterSize"] == "1.5M"


def _rchar() -> int:
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar")


def test_thirty_shards_read_only_headers(tmp_path):
    directory = llama_dir(tmp_path)
    weight_map = {}
    for shard in range(30):
        name = f"model-{shard + 1:05d}-of-00030.safetensors"
        tensors = {f"s{shard}.t{i}": ("BF16", [4096, 4096]) for i in range(8)}  # 256 MiB of (sparse) data each
        write_safetensors(directory / name, tensors)
        weight_map.update({t: name for t in tensors})
    (directory / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
    info(str(CORPUS / "tiny-random-PhiModel"))  # warm up imports
    before = _rchar()
    spec, _ = info(str(directory))
    read = _rchar() - before
    assert spec["modelParameterSize"] == "4.03B"  # 30 × 8 × 4096²
    assert read < 1024 * 1024, f"read {read} bytes: more than configs and headers"


# --- hostile inputs ------------------------------------------------------------------------------------------

def fails(*args: str) -> list[str]:
    run = run_cli("model-info", *args)
    assert run.code == 1 and run.stdout == ""
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr
    return run.lines


def test_header_length_larger_than_file(tmp_path):
    directory = llama_dir(tmp_path)
    write_safetensors(directory / "model.safetensors", {"x": ("BF16", [2, 2])}, header_len=1 << 20)
    [line] = fails(str(directory))
    assert line.startswith(f"error: {directory}/model.safetensors: safetensors header length 1,048,576 is larger "
                           "than the file")


def test_header_that_is_not_json(tmp_path):
    directory = llama_dir(tmp_path)
    write_safetensors(directory / "model.safetensors", {}, header=b"{not json" + b" " * 40)
    assert fails(str(directory)) == [f"error: {directory}/model.safetensors: the safetensors header is not JSON; "
                                     "the file is corrupt or not safetensors"]


def test_tensor_offsets_outside_the_file(tmp_path):
    directory = llama_dir(tmp_path)
    header = json.dumps({"x": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 1 << 40]}}).encode()
    write_safetensors(directory / "model.safetensors", {}, header=header)
    [line] = fails(str(directory))
    assert "data_offsets must be [begin, end] within the file's 0 data bytes" in line


def header_file(directory: Path, tensors: dict, data_bytes: int) -> Path:
    """A safetensors file with this header and ``data_bytes`` of (sparse) data."""
    path = directory / "model.safetensors"
    write_safetensors(path, {}, header=json.dumps(tensors).encode())
    with open(path, "r+b") as out:
        out.truncate(path.stat().st_size + data_bytes)
    return path


def test_huge_dimensions_are_an_error_naming_the_tensor(tmp_path):
    directory = llama_dir(tmp_path)
    path = header_file(directory, {"w": {"dtype": "BF16", "shape": [10 ** 200, 10 ** 200], "data_offsets": [0, 8]}}, 8)
    assert fails(str(directory)) == [f"error: {path}: tensor 'w': shape of 2 dimensions has more elements than its "
                                     "data_offsets [0, 8] hold 8 bytes; the file is corrupt or not safetensors"]


def test_a_shape_of_200000_dimensions_is_refused_in_linear_time(tmp_path):
    directory = llama_dir(tmp_path)
    path = header_file(directory, {"w": {"dtype": "F32", "shape": [999_999_999] * 200_000,
                                         "data_offsets": [0, 4]}}, 4)
    assert path.stat().st_size > 2 * 2 ** 20
    assert fails(str(directory)) == [f"error: {path}: tensor 'w': shape of 200,000 dimensions has more elements "
                                     "than its data_offsets [0, 4] hold 4 bytes; the file is corrupt or not "
                                     "safetensors"]  # in one pass over the header (docs/reference/limits.md); untimed


@pytest.mark.parametrize("dtype,shape,offsets,text", [
    ("BF16", [3, 4], [0, 12], "shape [3, 4] of BF16 takes 24 bytes, but its data_offsets [0, 12] hold 12 bytes"),
    ("F4", [3], [0, 2], "shape [3] of F4 takes 12 bits, but its data_offsets [0, 2] hold 2 bytes"),
    ("F32", [20, 2], [0, 4], "shape [20, 2] has more elements than its data_offsets [0, 4] hold 4 bytes"),
    ("U8", [], [0, 0], "shape [] of U8 takes 1 byte, but its data_offsets [0, 0] hold 0 bytes"),
    ("NEWTYPE", [100], [0, 12], "shape [100] has more elements than its data_offsets [0, 12] hold 12 bytes"),
])
def test_a_shape_that_does_not_fill_its_data_offsets_is_an_error(tmp_path, dtype, shape, offsets, text):
    directory = llama_dir(tmp_path)
    path = header_file(directory, {"ok": {"dtype": "BF16", "shape": [2, 2], "data_offsets": [0, 8]},
                                   "w": {"dtype": dtype, "shape": shape, "data_offsets": offsets}}, 64)
    assert fails(str(directory)) == [f"error: {path}: tensor 'w': {text}; the file is corrupt or not safetensors"]


def test_a_long_tensor_name_is_shortened_in_the_message(tmp_path):
    directory = llama_dir(tmp_path)
    path = header_file(directory, {"w" * 1_000_000: {"dtype": "BF16", "shape": [3], "data_offsets": [0, 2]}}, 2)
    assert fails(str(directory)) == [f"error: {path}: tensor {'w' * 100!r}... (1,000,000 characters): shape [3] of "
                                     "BF16 takes 6 bytes, but its data_offsets [0, 2] hold 2 bytes; the file is "
                                     "corrupt or not safetensors"]


def test_shapes_that_fill_their_data_offsets_count(tmp_path):
    """Every dtype safetensors defines by its width (F4 packs two to a byte); an empty dimension holds nothing
    whatever the others; a dtype safetensors does not define counts when its elements fit the bytes."""
    directory = llama_dir(tmp_path)
    header_file(directory, {"a": {"dtype": "F4", "shape": [1000, 2], "data_offsets": [0, 1000]},
                            "b": {"dtype": "F6_E2M3", "shape": [4, 1000], "data_offsets": [1000, 4000]},
                            "c": {"dtype": "C64", "shape": [1000], "data_offsets": [4000, 12000]},
                            "d": {"dtype": "BF16", "shape": [10 ** 100, 0], "data_offsets": [12000, 12000]},
                            "e": {"dtype": "INT3", "shape": [1000], "data_offsets": [12000, 12375]}}, 12375)
    spec, _ = info(str(directory))
    assert spec["modelParameterSize"] == "8K"


@pytest.mark.parametrize("name", ["model.safetensors", "model.safetensors.index.json"])
def test_deeply_nested_json_is_an_error_naming_the_file(tmp_path, name):
    directory = llama_dir(tmp_path)
    if name == "model.safetensors":
        write_safetensors(directory / name, {}, header=b"[" * 200_000 + b"]" * 200_000)
        text = "the safetensors header is not JSON; the file is corrupt or not safetensors"
    else:
        (directory / name).write_text("[" * 200_000)
        text = "not valid JSON: invalid character '[' exceeded max depth"  # Go's encoding/json, past 10,000
    assert fails(str(directory)) == [f"error: {directory / name}: {text}"]


def test_symlinked_config_out_of_the_directory_is_refused(tmp_path):
    outside = tmp_path / "secret.json"
    outside.write_text((CORPUS / "llama3_2_1b.json").read_text())
    directory = tmp_path / "model"
    directory.mkdir()
    (directory / "config.json").symlink_to(outside)
    [line] = fails(str(directory))
    assert line.startswith(f"error: {directory}/config.json: symbolic link to {outside}, outside {directory}")


def test_index_naming_a_shard_outside_is_refused(tmp_path):
    directory = llama_dir(tmp_path)
    (directory / "model.safetensors.index.json").write_text(json.dumps({"weight_map": {"x": "../../etc/passwd"}}))
    [line] = fails(str(directory))
    assert "'../../etc/passwd' is not a plain relative file name; refusing to read it" in line


def test_huge_config_is_refused(tmp_path):
    directory = tmp_path / "model"
    directory.mkdir()
    with open(directory / "config.json", "wb") as out:
        out.write(b'{"model_type": "llama", "pad": "')
        out.truncate(64 * 1024 * 1024)
    [line] = fails(str(directory))
    assert line == (f"error: {directory}/config.json: 67,108,864 bytes, larger than the 8 MiB a config file may "
                    "have")


def test_fifo_config_is_refused_without_blocking(tmp_path):
    directory = tmp_path / "model"
    directory.mkdir()
    os.mkfifo(directory / "config.json")
    [line] = fails(str(directory))
    assert line == f"error: {directory}/config.json: not a regular file"


def test_wrong_field_type_names_the_field(tmp_path):
    directory = tmp_path / "model"
    directory.mkdir()
    config = json.loads((CORPUS / "llama3_2_1b.json").read_text())
    config["hidden_size"] = "2048"
    (directory / "config.json").write_text(json.dumps(config))
    assert fails(str(directory)) == ["error: config.json: hidden_size must be an integer, got '2048'"]


@pytest.mark.parametrize("factor,text", [
    ("1e400", "config.json: text_config: rope_scaling: factor is out of the range of a float64"),
    ("1e300", "config.json: text_config: sliding_window 1024 times rope_scaling.factor 1e+300 is past the largest "
              "context OME can hold (an int64)"),
])
def test_a_context_past_an_int64_is_an_error(tmp_path, factor, text):
    directory = model_dir(tmp_path, "gemma3.json")
    config = (directory / "config.json").read_text()
    (directory / "config.json").write_text(config.replace('"factor": 8.0', f'"factor": {factor}'))
    assert '"factor": 8.0' in config
    assert fails(str(directory)) == [f"error: {text}"]


def test_invalid_config_is_an_error_as_in_ome(tmp_path):
    directory = tmp_path / "model"
    directory.mkdir()
    config = json.loads((CORPUS / "mixtral.json").read_text())
    config["num_local_experts"] = 0
    (directory / "config.json").write_text(json.dumps(config))
    assert fails(str(directory)) == ["error: config.json: invalid Mixtral configuration: num_local_experts must "
                                     "be positive, got 0"]


def test_no_config_and_no_source(tmp_path):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "README.md").write_text("no config here\n")
    assert fails(str(tmp_path)) == [f"error: {tmp_path}: no model_index.json or config.json in it or any "
                                    "directory below it"]
    assert fails() == ["error: missing SOURCE: a model directory or hf://ORG/NAME[@REVISION] (or --update FILE)"]


def test_a_config_below_the_usual_places_is_found_as_omes_agent_finds_it(tmp_path):
    """Hugging Face's cache layout: config.json under snapshots/<revision>/, not at the root or in
    safetensors/, pytorch_model/ or model/. OME's agent walks the directory in name order, a find ending the
    walk of its own directory; the last find wins (here snapshots/b2/, not snapshots/a1/ nor the skipped
    snapshots/b2/z/)."""
    root = tmp_path / "models--meta-llama--Llama-3.2-1B"
    for revision, source in (("a1", "gemma_7b.json"), ("b2", "llama3_2_1b.json"), ("b2/z", "mixtral.json")):
        (root / "snapshots" / revision).mkdir(parents=True)
        shutil.copy(CORPUS / source, root / "snapshots" / revision / "config.json")
    (root / "blobs").mkdir()
    write_safetensors(root / "snapshots" / "b2" / "model.safetensors", {"w": ("BF16", [1000, 1000])})
    spec, lines = info(str(root))
    assert spec["modelArchitecture"] == "LlamaForCausalLM" and spec["modelParameterSize"] == "1M"
    assert lines == [f"info: {root}: read snapshots/b2/config.json, found as OME's model agent finds it: by walking "
                     "the model directory (the last one its walk finds)"]


def test_a_fixed_place_comes_before_the_walk(tmp_path):
    root = tmp_path / "model"
    (root / "model").mkdir(parents=True)
    (root / "a").mkdir()
    shutil.copy(CORPUS / "llama3_2_1b.json", root / "model" / "config.json")
    shutil.copy(CORPUS / "mixtral.json", root / "a" / "config.json")
    spec, lines = info(str(root))
    assert spec["modelArchitecture"] == "LlamaForCausalLM"
    assert not [line for line in lines if line.startswith("info:")]


def test_the_walk_does_not_follow_symbolic_links(tmp_path):
    """As OME's walk (it uses Lstat): a link to a directory is not entered, so its config is not found; a
    link named config.json that leaves the model directory is refused."""
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.copy(CORPUS / "llama3_2_1b.json", outside / "config.json")
    root = tmp_path / "model"
    (root / "sub").mkdir(parents=True)
    (root / "linked").symlink_to(outside, target_is_directory=True)
    assert fails(str(root)) == [f"error: {root}: no model_index.json or config.json in it or any directory below it"]
    (root / "sub" / "config.json").symlink_to(outside / "config.json")
    assert fails(str(root)) == [
        f"info: {root}: read sub/config.json, found as OME's model agent finds it: by walking the model directory "
        "(the last one its walk finds)",
        f"error: {root}/sub/config.json: symbolic link to {outside / 'config.json'}, outside {root}; omerender reads "
        "only the files it is given"]


def test_the_walk_has_a_limit(tmp_path, monkeypatch):
    from omerender.modelinfo import sources
    monkeypatch.setattr(sources, "MAX_WALK_ENTRIES", 50)
    root = tmp_path / "model"
    root.mkdir()
    for i in range(51):
        (root / f"f{i}").write_text("")
    assert fails(str(root)) == [f"error: {root}: more than 50 files and directories to search for the model's "
                                "config; point SOURCE at the model's own directory"]


def test_help_shows_an_example():
    run = run_cli("model-info", "--help")
    assert run.code == 0 and "omerender model-info --update models/llama-3.2-3b.yaml" in run.stdout


SD3 = {"modelType": "diffusers", "modelArchitecture": "StableDiffusion3Pipeline",
       "modelFormat": {"name": "diffusers", "version": "0.30.0"},
       "modelFramework": {"name": "diffusers", "version": "0.30.0"},
       "modelParameterSize": "3.5M", "maxTokens": 77, "modelCapabilities": ["TEXT_TO_IMAGE"]}


def test_diffusers_pipeline(tmp_path):
    directory = diffusers_pipeline(tmp_path / "pipe")
    spec, lines = info(str(directory))
    assert spec == SD3
    assert lines == []


def test_a_pipeline_below_the_root_wins_over_a_config_at_the_root(tmp_path):
    """OME's agent looks for model_index.json anywhere below the model directory before it looks for any
    config.json; the pipeline's components are beside its model_index.json. Said as a warning."""
    root = tmp_path / "model"
    diffusers_pipeline(root / "sd3")
    shutil.copy(CORPUS / "llama3_2_1b.json", root / "config.json")
    spec, lines = info(str(root))
    assert spec == SD3
    assert lines == [f"warning: {root}: read sd3/model_index.json, not config.json: OME's "
                     "model agent looks for a model_index.json anywhere below the model directory before any "
                     "config.json; move it out of the model directory if it is not this model's"]


def diffusers_pipeline(directory: Path) -> Path:
    for part in ("text_encoder", "transformer", "vae"):
        (directory / part).mkdir(parents=True)
        (directory / part / "config.json").write_text("{}")
    (directory / "text_encoder" / "config.json").write_text('{"max_position_embeddings": 77}')
    write_safetensors(directory / "text_encoder" / "model.safetensors", {"w": ("BF16", [1000, 1000])})
    write_safetensors(directory / "transformer" / "model.safetensors", {"w": ("BF16", [2000, 1000])})
    write_safetensors(directory / "vae" / "model.safetensors", {"w": ("F32", [500, 1000])})
    (directory / "model_index.json").write_text(json.dumps({
        "_class_name": "StableDiffusion3Pipeline", "_diffusers_version": "0.30.0",
        "scheduler": ["diffusers", "FlowMatchEulerDiscreteScheduler"],
        "text_encoder": ["transformers", "CLIPTextModel"],
        "transformer": ["diffusers", "SD3Transformer2DModel"], "vae": ["diffusers", "AutoencoderKL"]}))
    return directory


def test_the_weights_size_is_the_safetensors_bytes_plus_ten_percent_in_whole_gi(tmp_path):
    directory = llama_dir(tmp_path)
    write_safetensors(directory / "model.safetensors", {"w": ("BF16", [1024, 1024, 8192])})  # 16 GiB, sparse
    run = run_cli("model-info", str(directory), "-o", "json")
    assert run.code == 0, run.stderr
    assert json.loads(run.stdout)["metadata"] == {"annotations": {"omerender.io/weights-size": "18Gi"}}


def test_a_model_without_safetensors_has_no_weights_size(tmp_path):
    run = run_cli("model-info", str(llama_dir(tmp_path)))
    assert run.code == 0 and run.stdout.startswith("spec:\n")
