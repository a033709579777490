"""Where a model's files are read: a local directory (this module) or the Hugging Face Hub (:mod:`.hub`).

A source answers four questions about paths relative to the model's root (``a/b.json``): does it exist, how
large is it, what are bytes [start, start+length), and which files does a directory hold. Everything above
(config lookup, safetensors headers) is written against these, so both sources obey the same limits.
"""
from __future__ import annotations

import os
import posixpath
import stat
import time

from omerender.errors import OmeError
from omerender.gorules.gojson import GoJSONError, loads
from omerender.yamlio.paths import within

MIB = 1024 * 1024
MAX_JSON_BYTES = 8 * MIB  # a config.json or safetensors index; real ones are a few KB (indexes ~1 MB)
MAX_READ_BYTES = 256 * MIB  # everything read from one source, headers included
CONFIG_DIRS = ("", "safetensors", "pytorch_model", "model")  # where OME's agent looks for config.json first
MAX_WALK_ENTRIES = 100_000  # files and directories walked to find a config file below these
HUB_SECONDS = 120.0  # everything one run asks the Hub, unless --hub-timeout or OMERENDER_HUB_TIMEOUT says otherwise


def check_relpath(rel: str, shown: str) -> str:
    """A relative path from a model's own files (an index's shard name): no absolute path, no ``..``."""
    parts = rel.split("/")
    if not rel or rel.startswith("/") or "\\" in rel or any(p in ("", ".", "..") for p in parts):
        raise OmeError(f"{shown}: {rel!r} is not a plain relative file name; refusing to read it")
    return rel


class ReadBudget:
    """What one run may spend over every source: bytes read (the limit holds for the whole input, not per
    model) and, for the Hub, seconds from the start of the run (``deadline``, a ``time.monotonic()`` value)."""

    def __init__(self, limit: int | None = None, seconds: float | None = None):
        self.limit, self.used = (MAX_READ_BYTES if limit is None else limit), 0
        self.seconds = HUB_SECONDS if seconds is None else seconds
        self.deadline = time.monotonic() + self.seconds

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def spend(self, label: str, length: int) -> None:
        if self.used + length > self.limit:
            raise OmeError(f"{label}: more than {self.limit // MIB} MiB of configs and safetensors headers in all; "
                           "refusing to read further")
        self.used += length


class Source:
    """The shared reading rules; subclasses provide exists/size/is_dir/list_dir/_read."""

    label = ""

    def __init__(self, budget: ReadBudget | None = None):
        self.budget = budget or ReadBudget()
        self.config_dir = ""

    def read(self, rel: str, start: int, length: int) -> bytes:
        self.budget.spend(self.label, length)
        return self._read(rel, start, length)

    def read_json_beside(self, name: str) -> dict | None:
        """A file next to the config file found by :meth:`find_config` (config_sentence_transformers.json)."""
        return self.read_json_at(posixpath.join(self.config_dir, name))

    def read_json_at(self, rel: str) -> dict | None:
        """The JSON object in ``rel``, or None when there is no such file."""
        if not self.exists(rel):
            return None
        size = self.size(rel)
        if size > MAX_JSON_BYTES:
            raise OmeError(f"{self.label}/{rel}: {size:,} bytes, larger than the {MAX_JSON_BYTES // MIB} MiB a "
                           "config file may have")
        try:  # as the model agent's encoding/json reads it: bytes that are not UTF-8 and lone surrogates are U+FFFD
            data = loads(self.read(rel, 0, size).decode("utf-8", "replace"))
        except GoJSONError as err:
            raise OmeError(f"{self.label}/{rel}: not valid JSON: {err}") from None
        if not isinstance(data, dict):
            raise OmeError(f"{self.label}/{rel}: expected a JSON object")
        return data

    def find_config(self) -> tuple[str | None, bool]:
        """The config file OME's model agent reads, and whether only walking the directory found it: a
        ``model_index.json`` at the root or anywhere below; else a ``config.json`` at the root, in
        safetensors/, pytorch_model/ or model/, or anywhere below."""
        files = None  # every file below the root, listed once for both walks

        def find(name: str, places: tuple[str, ...]) -> tuple[str | None, bool]:
            nonlocal files
            fixed = self.first_existing(name, places)
            if fixed:
                return fixed, False
            files = self.all_files() if files is None else files
            return walk_last(files, name), True

        path, walked = find("model_index.json", ("",))
        if path is None:
            path, walked = find("config.json", CONFIG_DIRS)
        self.config_dir = posixpath.dirname(path) if path else ""
        return path, walked

    def first_existing(self, name: str, places: tuple[str, ...] = CONFIG_DIRS) -> str | None:
        """The first of ``places`` (directories below the root) that holds a file ``name``: its path."""
        return next((path for d in places if self.exists(path := posixpath.join(d, name))), None)

    def all_files(self) -> list[str]:
        """Every file below the root (symbolic links as files, never followed), as relative paths."""
        raise NotImplementedError


def walk_last(files: list[str], name: str) -> str | None:
    """The file called ``name`` that OME's agent ends on when it walks the model directory (Go's
    filepath.Walk, each directory in name order): a find skips the rest of its own directory, and the
    walk goes on, so the last find wins."""
    found, skipped = None, None
    for parts in sorted(path.split("/") for path in files):
        if skipped is not None and parts[:len(skipped)] == skipped:
            continue
        if parts[-1] == name:
            found, skipped = "/".join(parts), parts[:-1]
    return found


class LocalSource(Source):
    """A model directory on disk. Symbolic links are followed only while they stay inside it."""

    def __init__(self, root: str, budget: ReadBudget | None = None):
        super().__init__(budget)
        if not os.path.isdir(root):
            raise OmeError(f"{root}: not a directory (SOURCE is a model directory or hf://ORG/NAME[@REVISION])")
        self.root, self.real_root, self.label = root, os.path.realpath(root), root.rstrip("/") or "/"

    def _path(self, rel: str) -> str:
        full = os.path.join(self.root, *rel.split("/")) if rel else self.root
        real = os.path.realpath(full)
        if not within(real, self.real_root):
            raise OmeError(f"{self.label}/{rel}: symbolic link to {real}, outside {self.label}; omerender reads "
                           "only the files it is given")
        return full

    def exists(self, rel: str) -> bool:
        path = self._path(rel)
        return os.path.lexists(path) and not os.path.isdir(path)

    def is_dir(self, rel: str) -> bool:
        return os.path.isdir(self._path(rel))

    def size(self, rel: str) -> int:
        return self._stat(rel).st_size

    def _stat(self, rel: str) -> os.stat_result:
        try:
            info = os.stat(self._path(rel))
        except OSError as err:
            raise OmeError(f"{self.label}/{rel}: cannot read: {err.strerror}") from None
        if not stat.S_ISREG(info.st_mode):
            raise OmeError(f"{self.label}/{rel}: not a regular file")
        return info

    def list_dir(self, rel: str) -> list[str]:
        path = self._path(rel)
        try:
            with os.scandir(path) as entries:
                return sorted(e.name for e in entries if not e.is_dir(follow_symlinks=False))
        except OSError:
            return []

    def all_files(self) -> list[str]:
        files, pending, seen = [], [""], 0
        while pending:
            rel = pending.pop()
            try:
                with os.scandir(os.path.join(self.root, *rel.split("/")) if rel else self.root) as entries:
                    for entry in entries:
                        child = posixpath.join(rel, entry.name)
                        (pending if entry.is_dir(follow_symlinks=False) else files).append(child)
                        seen += 1
                        if seen > MAX_WALK_ENTRIES:
                            raise OmeError(f"{self.label}: more than {MAX_WALK_ENTRIES:,} files and directories "
                                           "to search for the model's config; point SOURCE at the model's own "
                                           "directory")
            except OSError:
                continue  # as OME's walk does: an unreadable directory is passed over
        return files

    def _read(self, rel: str, start: int, length: int) -> bytes:
        path = self._path(rel)
        try:
            with open(path, "rb") as handle:
                if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                    raise OmeError(f"{self.label}/{rel}: not a regular file")
                handle.seek(start)
                return handle.read(length)
        except OSError as err:
            raise OmeError(f"{self.label}/{rel}: cannot read: {err.strerror}") from None
