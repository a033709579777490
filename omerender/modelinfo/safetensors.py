"""Exact parameter counts from safetensors headers, never touching tensor data.

A safetensors file is an 8-byte little-endian header length, a JSON header (tensor name → dtype, shape,
data_offsets) and the tensor data. Only the first two are read. Counting follows OME's FindAndParseSafetensors:
the shards a ``model.safetensors.index.json`` names, else every ``*.safetensors`` in the directory; scalars and
``__metadata__`` count nothing.
"""
from __future__ import annotations

import json
import posixpath

from omerender.errors import OmeError
from omerender.gorules.gojson import GoJSONError, loads
from .sources import MIB, Source, check_relpath

INDEX = "model.safetensors.index.json"
MAX_HEADER_BYTES = 100 * MIB  # OME allows 10 MB; the largest real headers are a few MB
MAX_SHARDS = 10_000
# Bits per element of each dtype safetensors defines (the safetensors crate's Dtype::bitsize).
DTYPE_BITS = {"BOOL": 8, "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6, "U8": 8, "I8": 8, "F8_E5M2": 8, "F8_E4M3": 8,
              "F8_E8M0": 8, "I16": 16, "U16": 16, "F16": 16, "BF16": 16, "I32": 32, "U32": 32, "F32": 32,
              "C64": 64, "F64": 64, "I64": 64, "U64": 64}


def count_dir(source: Source, directory: str) -> tuple[int | None, str, int]:
    """(parameter count, "", the shards' total bytes) from the headers in ``directory``, or (None, why not, 0)."""
    shards = _shards(source, directory)
    if not shards:
        return None, f"no *.safetensors files in {source.label}/{directory}".rstrip("/"), 0
    missing = [s for s in shards if not source.exists(posixpath.join(directory, s))]
    if missing:
        return None, f"{INDEX} names {missing[0]}, which is not in {source.label}", 0
    paths = [posixpath.join(directory, s) for s in shards]
    return sum(tensor_parameters(source, p) for p in paths), "", sum(source.size(p) for p in paths)


def _shards(source: Source, directory: str) -> list[str]:
    index_path = posixpath.join(directory, INDEX)
    index = source.read_json_at(index_path)
    if index is None:
        shards = [n for n in source.list_dir(directory) if n.endswith(".safetensors")]
    else:
        weight_map = index.get("weight_map")
        if not isinstance(weight_map, dict) or not weight_map or not all(
                isinstance(v, str) for v in weight_map.values()):
            raise OmeError(f"{source.label}/{index_path}: weight_map must map tensor names to shard file names")
        shards = sorted({check_relpath(v, f"{source.label}/{index_path}") for v in weight_map.values()})
    if len(shards) > MAX_SHARDS:
        raise OmeError(f"{source.label}/{directory}: more than {MAX_SHARDS:,} safetensors shards")
    return shards


def read_header(source: Source, rel: str) -> tuple[dict, int]:
    """The parsed JSON header of one file and the size of its data section, validated against the file size."""
    shown, size = f"{source.label}/{rel}", source.size(rel)
    if size < 8:
        raise OmeError(f"{shown}: not a safetensors file ({size} bytes, shorter than the 8-byte header length)")
    length = int.from_bytes(source.read(rel, 0, 8), "little")
    if length > MAX_HEADER_BYTES:
        raise OmeError(f"{shown}: safetensors header length {length:,} exceeds the {MAX_HEADER_BYTES // MIB} MiB "
                       "limit; the file is corrupt or not safetensors")
    if 8 + length > size:
        raise OmeError(f"{shown}: safetensors header length {length:,} is larger than the file ({size:,} bytes); "
                       "the file is truncated or not safetensors")
    try:
        header = loads(source.read(rel, 8, length).decode("utf-8", "replace"))
    except GoJSONError:
        raise OmeError(f"{shown}: the safetensors header is not JSON; the file is corrupt or not safetensors") from None
    if not isinstance(header, dict):
        raise OmeError(f"{shown}: the safetensors header is not a JSON object")
    return header, size - 8 - length


def tensor_parameters(source: Source, rel: str) -> int:
    header, data_size = read_header(source, rel)
    total = 0
    for name, tensor in header.items():
        if name == "__metadata__":
            continue
        shape, count = _check_tensor(tensor, data_size, f"{source.label}/{rel}: tensor {_name_text(name)}")
        if shape:
            total += count
    return total


def _check_tensor(tensor, data_size: int, shown: str) -> tuple[list[int], int]:
    """The tensor's shape and element count, once its fields are well formed and the shape fills its
    data_offsets exactly."""
    if not isinstance(tensor, dict):
        raise OmeError(f"{shown}: expected an object with dtype, shape and data_offsets")
    shape, offsets, dtype = tensor.get("shape"), tensor.get("data_offsets"), tensor.get("dtype")
    if not isinstance(shape, list) or not all(type(d) is int and d >= 0 for d in shape):
        raise OmeError(f"{shown}: shape must be a list of non-negative integers")
    if not isinstance(dtype, str):
        raise OmeError(f"{shown}: dtype must be a string")
    if (not isinstance(offsets, list) or len(offsets) != 2 or not all(type(o) is int for o in offsets)
            or not 0 <= offsets[0] <= offsets[1] <= data_size):
        raise OmeError(f"{shown}: data_offsets must be [begin, end] within the file's {data_size:,} data bytes")
    return shape, _elements_in(shape, dtype, offsets, shown)


def _elements_in(shape: list[int], dtype: str, offsets: list[int], shown: str) -> int:
    """How many elements ``shape`` has, checked against the bytes its data_offsets hold: exactly for the
    dtypes safetensors defines, and for another at most one element per bit. The product stops growing
    past that cap, so neither a huge dimension nor a long shape costs more than reading it."""
    stored_bits = (offsets[1] - offsets[0]) * 8
    count = 0 if 0 in shape else _capped_product(shape, stored_bits)
    bits = DTYPE_BITS.get(dtype)
    if count is not None and (bits is None or count * bits == stored_bits):
        return count
    held = f"data_offsets [{offsets[0]}, {offsets[1]}] hold {_count(offsets[1] - offsets[0], 'byte')}"
    if count is None:
        raise OmeError(f"{shown}: shape {_shape_text(shape)} has more elements than its {held}; the file is corrupt "
                       "or not safetensors")
    needed = _count(count * bits // 8, "byte") if count * bits % 8 == 0 else _count(count * bits, "bit")
    raise OmeError(f"{shown}: shape {_shape_text(shape)} of {dtype} takes {needed}, but its {held}; the file is "
                   "corrupt or not safetensors")


def _capped_product(shape: list[int], cap: int) -> int | None:
    """The product of ``shape`` (no zero in it), or None once it passes ``cap``."""
    product = 1
    for dim in shape:
        product *= dim
        if product > cap:
            return None
    return product


def _name_text(name: str) -> str:
    if len(name) <= 200:
        return repr(name)
    return f"{name[:100]!r}... ({len(name):,} characters)"


def _shape_text(shape: list[int]) -> str:
    if len(shape) <= 8 and all(d < 10 ** 15 for d in shape):
        return json.dumps(shape)
    return f"of {len(shape):,} dimensions"


def _count(number: int, unit: str) -> str:
    return f"{number:,} {unit}" + ("" if number == 1 else "s")
