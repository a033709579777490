"""Reading a model from the Hugging Face Hub: configs and safetensors headers only, by range requests.

Uses the optional ``huggingface_hub`` package (``pip install 'omerender[hf]'``) for the endpoint, the token
(``HF_TOKEN``), the file listing and its error types; bytes are fetched with explicit ``Range`` headers and
read no further than asked, so no tensor data crosses the network.
"""
from __future__ import annotations

import os
import re

from ..errors import OmeError
from .sources import ReadBudget, Source

PREFIX = "hf://"
_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?$")
_REVISION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]*$")
MAX_FILES = 100_000
TIMEOUT = 30


def parse_uri(uri: str) -> tuple[str, str]:
    """``hf://ORG/NAME[@REVISION]`` → (repo id, revision; ``main`` by default), as OME parses storageUri."""
    rest = uri[len(PREFIX):]
    repo, _, revision = rest.partition("@")
    revision = revision or "main"
    if not _REPO.match(repo) or ".." in repo or not _REVISION.match(revision) or ".." in revision:
        raise OmeError(f"{uri}: not a Hugging Face model URI; expected hf://ORG/NAME or hf://ORG/NAME@REVISION")
    return repo, revision


def _hub():
    try:
        import huggingface_hub
        import huggingface_hub.constants
        import huggingface_hub.errors
        import huggingface_hub.utils
    except ImportError:
        raise OmeError("reading hf:// sources needs the huggingface_hub package: pip install 'omerender[hf]' "
                       "(or pass a local model directory as SOURCE)") from None
    return huggingface_hub


class HubSource(Source):
    def __init__(self, uri: str, budget: ReadBudget | None = None):
        super().__init__(budget)
        self.label = uri
        self.repo, self.revision = parse_uri(uri)
        self.hub = _hub()
        self.endpoint = (os.environ.get("HF_ENDPOINT") or self.hub.constants.ENDPOINT).rstrip("/")
        self.token = os.environ.get("HF_TOKEN") or None
        self.files = self._list()

    def _list(self) -> dict[str, int]:
        api = self.hub.HfApi(endpoint=self.endpoint, token=self.token)
        files = {}
        for entry in self._call(lambda: api.list_repo_tree(self.repo, revision=self.revision, recursive=True)):
            if getattr(entry, "size", None) is not None and not hasattr(entry, "tree_id"):
                files[entry.path] = int(entry.size)
            if len(files) > MAX_FILES:
                raise OmeError(f"{self.label}: more than {MAX_FILES:,} files in the repository")
        return files

    def _call(self, action):
        errors = self.hub.errors
        try:
            result = action()
            return result if isinstance(result, bytes) else list(result)
        except errors.GatedRepoError:
            raise OmeError(f"{self.label}: the repository is gated: accept its terms on the Hub, then set HF_TOKEN "
                           "to a token of that account") from None
        except errors.RepositoryNotFoundError:
            hint = "check the name, or set HF_TOKEN if it is private" if not self.token else \
                "check the name and that HF_TOKEN may read it"
            raise OmeError(f"{self.label}: repository not found ({hint})") from None
        except errors.RevisionNotFoundError:
            raise OmeError(f"{self.label}: revision {self.revision} not found; check the @REVISION") from None
        except errors.HfHubHTTPError as err:
            status = getattr(getattr(err, "response", None), "status_code", "?")
            if status in (401, 403):
                raise OmeError(f"{self.label}: access denied (HTTP {status}); set HF_TOKEN to a token that may read "
                               "the repository") from None
            raise OmeError(f"{self.label}: the Hub answered HTTP {status}; try again later") from None
        except OmeError:
            raise
        except Exception as err:  # noqa: BLE001 - transport errors differ between huggingface_hub's HTTP backends
            raise OmeError(f"{self.label}: cannot reach {self.endpoint} ({type(err).__name__}: {err}); check the "
                           "network, or HF_ENDPOINT") from None

    def exists(self, rel: str) -> bool:
        return rel in self.files

    def is_dir(self, rel: str) -> bool:
        return any(path.startswith(rel + "/") for path in self.files)

    def size(self, rel: str) -> int:
        if rel not in self.files:
            raise OmeError(f"{self.label}/{rel}: no such file in the repository")
        return self.files[rel]

    def list_dir(self, rel: str) -> list[str]:
        prefix = rel + "/" if rel else ""
        return sorted(p[len(prefix):] for p in self.files if p.startswith(prefix) and "/" not in p[len(prefix):])

    def _read(self, rel: str, start: int, length: int) -> bytes:
        if length <= 0:
            return b""
        url = self.hub.hf_hub_url(self.repo, rel, revision=self.revision, endpoint=self.endpoint)
        headers = self.hub.utils.build_hf_headers(token=self.token)
        headers["Range"] = f"bytes={start}-{start + length - 1}"
        return self._call(lambda: _fetch(self.hub, url, headers, start, length))


def _fetch(hub, url: str, headers: dict, start: int, length: int) -> bytes:
    """GET one byte range; a server that ignores Range is read only as far as needed, then dropped."""
    session = hub.utils.get_session()
    with session.stream("GET", url, headers=headers, follow_redirects=True, timeout=TIMEOUT) as response:
        if response.status_code >= 400:
            response.read()  # error bodies are short; huggingface_hub reads them for its message
            hub.utils.hf_raise_for_status(response)
        skip = start if response.status_code == 200 else 0
        chunks, got = [], 0
        for chunk in response.iter_bytes():
            if skip:
                dropped = min(skip, len(chunk))
                chunk, skip = chunk[dropped:], skip - dropped
            chunks.append(chunk)
            got += len(chunk)
            if got >= length:
                break
    return b"".join(chunks)[:length]
