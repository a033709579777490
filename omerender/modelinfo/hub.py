"""Reading a model from the Hugging Face Hub: configs and safetensors headers only, by range requests.

Uses the optional ``huggingface_hub`` package (the ``hf`` extra: ``pip install '.[hf]'`` in a clone), 0.24 or
later, for the endpoint, the token (``HF_TOKEN``), its HTTP session (0.x's requests session and the httpx client
of 1.x and 2.x alike, through :mod:`.hubhttp`), the file listing and its error types; bytes are fetched with
explicit ``Range`` headers and read no further than asked, so no tensor data crosses the network. Everything a
run asks the Hub shares one deadline (:class:`~.sources.ReadBudget`), error answers are read only as far as their
first few KiB, and redirects are followed here, so that no answer's body is read whole.
"""
from __future__ import annotations

import json
import os
import re
import threading
from contextlib import contextmanager
from urllib.parse import quote

from omerender.errors import OmeError
from . import hubhttp
from .sources import ReadBudget, Source, check_relpath

PREFIX = "hf://"
_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?$")
_REVISION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]*$")
MAX_FILES = 100_000
MAX_PAGES = 1_000
MAX_LISTING_BYTES = 64 * 2 ** 20  # all pages of one listing: 100,000 files take about 20 MiB
MAX_FILE_BYTES = 2 ** 63 - 1  # a file size the listing may give (Go's int64, as the Hub's own)
MAX_ERROR_BODY = 4096  # read of an error answer: huggingface_hub tells the errors apart by their headers
MAX_REDIRECTS = 10
TIMEOUT = 30  # one network operation: connecting, or waiting for the next bytes
_BODY_HEADERS = frozenset(("content-encoding", "content-length", "transfer-encoding"))


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
        import huggingface_hub.utils
    except ImportError:
        raise OmeError("reading hf:// sources needs the huggingface_hub package: pip install huggingface_hub "
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
        """Every file's size, page by page: one request each, no retries (a Hub that cannot be reached is
        said at once, not after huggingface_hub's 23 s of backoff), and the next page only from the same
        endpoint, which is the only one the token goes to."""
        url = f"{self.endpoint}/api/models/{self.repo}/tree/{quote(self.revision, safe='')}?recursive=true"
        headers = self.hub.utils.build_hf_headers(token=self.token)
        files: dict[str, int] = {}
        room = MAX_LISTING_BYTES  # what the pages may still take, over all of them
        for _ in range(MAX_PAGES):
            entries, url, used = self._call(lambda: self._page(url, headers, room))
            room -= used
            if not isinstance(entries, list):
                raise OmeError(f"{self.label}: the Hub's file listing is not a list of files; check HF_ENDPOINT")
            for entry in entries:
                files.update(self._file_entry(entry))
            if len(files) > MAX_FILES:
                raise OmeError(f"{self.label}: more than {MAX_FILES:,} files in the repository")
            if url is None:
                return files
            if not url.startswith(self.endpoint + "/"):
                raise OmeError(f"{self.label}: the Hub's file listing continues at {url}, outside {self.endpoint}; "
                               "check HF_ENDPOINT")
        raise OmeError(f"{self.label}: the Hub's file listing runs past {MAX_PAGES:,} pages")

    def _file_entry(self, entry) -> dict[str, int]:
        if not isinstance(entry, dict) or entry.get("type") not in ("file", "directory"):
            raise OmeError(f"{self.label}: the Hub's file listing has an entry that is not a file or a directory; "
                           "check HF_ENDPOINT")
        path, size = entry.get("path"), entry.get("size")
        if entry["type"] == "directory":
            return {}
        if not isinstance(path, str) or type(size) is not int or not 0 <= size <= MAX_FILE_BYTES:
            raise OmeError(f"{self.label}: the Hub's file listing has a file without a path or a size; "
                           "check HF_ENDPOINT")
        return {check_relpath(path, f"{self.label}: the Hub's file listing"): size}

    def _call(self, action):
        errors = self.hub.utils  # where 0.x has the error types too
        try:
            return self._in_time(action)
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
            if self.budget.remaining() <= 0:
                raise self._late() from None
            raise OmeError(f"{self.label}: cannot reach {self.endpoint} ({type(err).__name__}: {err}); check the "
                           "network, or HF_ENDPOINT") from None

    def _in_time(self, action):
        """``action()`` in a worker thread, waited for until the run's deadline. Network timeouts bound each
        wait, not an answer: a server that sends a byte a second (its headers included) would keep a read going
        for hours. At the deadline the worker is left behind; it is a daemon thread, so the command still exits,
        and it stops at its next chunk."""
        remaining = self.budget.remaining()
        if remaining <= 0:
            raise self._late()
        outcome: dict = {}

        def work():
            try:
                outcome["value"] = action()
            except BaseException as err:  # noqa: BLE001 - handed to the caller's thread as it is
                outcome["error"] = err

        worker = threading.Thread(target=work, name="omerender-hub", daemon=True)
        worker.start()
        worker.join(remaining)
        if worker.is_alive():
            raise self._late()
        if "error" in outcome:
            raise outcome["error"]
        return outcome["value"]

    def _late(self) -> OmeError:
        return OmeError(f"{self.label}: no complete answer from {self.endpoint} within {self.budget.seconds:g} s "
                        "(--hub-timeout, OMERENDER_HUB_TIMEOUT); check the network or HF_ENDPOINT, or allow more time")

    def _on_time(self) -> None:
        """Called between chunks: past the deadline, the worker stops reading."""
        if self.budget.remaining() <= 0:
            raise self._late()

    @contextmanager
    def _get(self, url: str, headers: dict):
        """An open streamed answer to GET ``url``, after its redirects (each answer closed unread, and the token
        dropped where the origin changes, as httpx does), failing with huggingface_hub's error for an HTTP
        error status."""
        http = hubhttp.for_session(self.hub.utils.get_session())
        timeout = min(TIMEOUT, max(self.budget.remaining(), 0.001))
        request = http.request(url, headers, timeout)
        for _ in range(MAX_REDIRECTS + 1):
            self._on_time()
            response = http.send(request)
            following = http.redirect(response, request)
            if following is None:
                break
            request = following
            response.close()
        else:
            raise OmeError(f"{self.label}: more than {MAX_REDIRECTS} redirects from {url}; check HF_ENDPOINT")
        try:
            self._raise_for_status(http, response)
            yield http, response
        finally:
            response.close()

    def _raise_for_status(self, http, response) -> None:
        """huggingface_hub's error for an HTTP error status, which ``_call`` turns into a message. It is given
        the answer's headers and the first ``MAX_ERROR_BODY`` bytes of its body, as they came (undecoded)."""
        if response.status_code < 400:
            return
        body = bytearray()
        for chunk in http.raw(response):
            self._on_time()
            body += chunk
            if len(body) >= MAX_ERROR_BODY:
                break
        kept = [(k, v) for k, v in http.headers(response) if k.lower() not in _BODY_HEADERS]
        self.hub.utils.hf_raise_for_status(http.error_answer(response, kept, bytes(body[:MAX_ERROR_BODY])))

    def _page(self, url: str, headers: dict, room: int) -> tuple[list, str | None, int]:
        """One page of a file listing, the next page's address (its ``Link`` header) if any, and the bytes it
        took; ``room`` is how many bytes the listing may still take."""
        with self._get(url, headers) as (http, response):
            body = bytearray()
            for chunk in http.chunks(response):
                self._on_time()
                body += chunk
                if len(body) > room:
                    raise OmeError(f"{self.label}: the Hub's file listing is larger than "
                                   f"{MAX_LISTING_BYTES // 2 ** 20} MiB; check HF_ENDPOINT")
            following = response.links.get("next", {}).get("url")
        try:
            entries = json.loads(body)
        except (ValueError, RecursionError):
            entries = None  # the caller names the source
        return entries, following, len(body)

    def _fetch(self, url: str, headers: dict, start: int, length: int) -> bytes:
        """GET one byte range; a server that ignores Range is read only as far as needed, then dropped."""
        with self._get(url, headers) as (http, response):
            skip = start if response.status_code == 200 else 0
            chunks, got = [], 0
            for chunk in http.chunks(response):
                self._on_time()
                if skip:
                    dropped = min(skip, len(chunk))
                    chunk, skip = chunk[dropped:], skip - dropped
                chunks.append(chunk)
                got += len(chunk)
                if got >= length:
                    break
        return b"".join(chunks)[:length]

    def exists(self, rel: str) -> bool:
        return rel in self.files

    def is_dir(self, rel: str) -> bool:
        return any(path.startswith(rel + "/") for path in self.files)

    def size(self, rel: str) -> int:
        if rel not in self.files:
            raise OmeError(f"{self.label}/{rel}: no such file in the repository")
        return self.files[rel]

    def all_files(self) -> list[str]:
        return list(self.files)

    def list_dir(self, rel: str) -> list[str]:
        prefix = rel + "/" if rel else ""
        return sorted(p[len(prefix):] for p in self.files if p.startswith(prefix) and "/" not in p[len(prefix):])

    def _read(self, rel: str, start: int, length: int) -> bytes:
        if length <= 0:
            return b""
        url = self.hub.hf_hub_url(self.repo, rel, revision=self.revision, endpoint=self.endpoint)
        headers = self.hub.utils.build_hf_headers(token=self.token)
        headers["Range"] = f"bytes={start}-{start + length - 1}"
        return self._call(lambda: self._fetch(url, headers, start, length))


