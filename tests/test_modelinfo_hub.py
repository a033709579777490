"""omerender model-info hf://... against a local Hub on 127.0.0.1 (HF_ENDPOINT): configs and headers only."""
from __future__ import annotations

import json
import re
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import CATALOG, run_cli

TINY = CATALOG / "modelconfig" / "tiny-random-PhiModel"
TOKEN = "hf_local_test_token"


class Hub:
    """Repositories: org/tiny (public), org/private (needs the token), org/gated (gated); others do not exist."""

    def __init__(self):
        self.files = {p.name: p.read_bytes() for p in TINY.iterdir()}
        self.sent: dict[str, list[tuple[int, int]]] = {}
        self.auth: list[str | None] = []
        self.listings: list[str] = []  # the paths of the file-listing requests
        self.listing = None  # a function (handler, path) that answers them instead
        self.stop = threading.Event()  # set when the test ends: slow answers stop sending
        self.delay = 0.0  # seconds to wait before answering for a file
        self.redirect = ""  # an origin to send file requests to, by a redirect with an endless body
        self.redirect_bytes = 0
        self.cdn_auth: list[str | None] = []


def handler_for(hub: Hub):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _error(self, status: int, code: str):
            self.send_response(status)
            self.send_header("X-Error-Code", code)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def _repo_allowed(self, repo: str) -> bool:
            hub.auth.append(self.headers.get("Authorization"))
            if repo == "org/gated":
                self._error(403, "GatedRepo")
                return False
            if repo == "org/private" and self.headers.get("Authorization") != f"Bearer {TOKEN}":
                self._error(401, "RepoNotFound")
                return False
            if repo not in ("org/tiny", "org/private"):
                self._error(404, "RepoNotFound")
                return False
            return True

        def do_GET(self):
            if self.path.startswith("/cdn/"):
                hub.cdn_auth.append(self.headers.get("Authorization"))
                return self._file(self.path[len("/cdn/"):])
            tree = re.match(r"^/api/models/([^/]+/[^/]+)/tree/([^/?]+)", self.path)
            resolve = re.match(r"^/([^/]+/[^/]+)/resolve/([^/]+)/([^?]+)", self.path)
            match = tree or resolve
            if not match or not self._repo_allowed(match.group(1)):
                return None if match else self._error(404, "EntryNotFound")
            if match.group(2) != "main":
                return self._error(404, "RevisionNotFound")
            if tree:
                hub.listings.append(self.path)
            if tree and hub.listing:
                return hub.listing(self, self.path)
            if tree:
                body = json.dumps([{"type": "file", "path": name, "size": len(data), "oid": "0" * 40}
                                   for name, data in sorted(hub.files.items())]).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return None
            if hub.redirect:
                return self._redirect(f"{hub.redirect}/cdn/{resolve.group(3)}")
            return self._file(resolve.group(3))

        def _redirect(self, location: str):
            """A redirect whose body never ends, as fast as it is taken: it must be dropped unread."""
            self.send_response(302)
            self.send_header("Location", location)
            self.send_header("Connection", "close")
            self.end_headers()
            try:
                for _ in range(4096):  # 256 MiB at most
                    if hub.stop.is_set():
                        return
                    self.wfile.write(b"x" * 65536)
                    hub.redirect_bytes += 65536
            except OSError:
                pass

        def _file(self, name: str):
            time.sleep(hub.delay)
            data = hub.files.get(name)
            if data is None:
                return self._error(404, "EntryNotFound")
            start, end = 0, len(data) - 1
            wanted = re.match(r"bytes=(\d+)-(\d+)", self.headers.get("Range", ""))
            if wanted:
                start, end = int(wanted.group(1)), min(int(wanted.group(2)), len(data) - 1)
            self.send_response(206 if wanted else 200)
            self.send_header("Content-Length", str(end - start + 1))
            if wanted:
                self.send_header("Content-Range", f"bytes {start}-{end}/{len(data)}")
            self.end_headers()
            self.wfile.write(data[start:end + 1])
            hub.sent.setdefault(name, []).append((start, end + 1))
            return None
    return Handler


class QuietServer(ThreadingHTTPServer):
    """The fake Hub, silent when a client hangs up mid-answer (omerender stops reading at its limits): the server
    thread would print the broken pipe to the sys.stderr the CLI's test runner captures, as if omerender had."""

    def handle_error(self, request, client_address):
        pass


@pytest.fixture
def hub(monkeypatch):
    state = Hub()
    server = QuietServer(("127.0.0.1", 0), handler_for(state))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{server.server_address[1]}")
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setenv("HF_HUB_DISABLE_IMPLICIT_TOKEN", "1")
    state.port = server.server_address[1]
    yield state
    state.stop.set()
    server.shutdown()
    server.server_close()


def header_end(data: bytes) -> int:
    return 8 + struct.unpack("<Q", data[:8])[0]


def test_hub_model_counts_from_headers_without_weight_bytes(hub):
    run = run_cli("model-info", "hf://org/tiny", "-o", "json")
    assert run.code == 0, run.stderr
    spec = json.loads(run.stdout)["spec"]
    assert spec["modelParameterSize"] == "92.56K"
    assert spec["modelArchitecture"] == "PhiModel" and spec["maxTokens"] == 512
    shards = [name for name in hub.files if name.endswith(".safetensors")]
    assert sorted(hub.sent) == sorted(shards + ["config.json"])
    for name in shards:
        assert max(end for _, end in hub.sent[name]) <= header_end(hub.files[name]), "weight bytes were sent"


def test_redirects_are_followed_unread_and_the_token_stays_with_the_hub(hub, monkeypatch):
    """The Hub sends file downloads to another origin (its CDN): the token is not sent there, and no redirect's
    body is read."""
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    hub.redirect = f"http://localhost:{hub.port}"
    start = time.monotonic()
    run = run_cli("model-info", "hf://org/tiny", "-o", "json")
    assert run.code == 0, run.stderr
    assert json.loads(run.stdout)["spec"]["modelParameterSize"] == "92.56K"
    assert time.monotonic() - start < 5
    assert hub.cdn_auth and all(a is None for a in hub.cdn_auth)
    assert hub.redirect_bytes < 64 * 2 ** 20, f"{hub.redirect_bytes:,} bytes of redirect bodies were taken"


def test_revision_and_token(hub, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    run = run_cli("model-info", "hf://org/private@main")
    assert run.code == 0, run.stderr
    assert hub.auth and all(a == f"Bearer {TOKEN}" for a in hub.auth)


@pytest.mark.parametrize("uri,text", [
    ("hf://org/gated", "hf://org/gated: the repository is gated: accept its terms on the Hub, then set HF_TOKEN to a "
                       "token of that account"),
    ("hf://org/private", "hf://org/private: repository not found (check the name, or set HF_TOKEN if it is "
                         "private)"),
    ("hf://org/missing", "hf://org/missing: repository not found (check the name, or set HF_TOKEN if it is "
                         "private)"),
    ("hf://org/tiny@v9", "hf://org/tiny@v9: revision v9 not found; check the @REVISION"),
    ("hf://../etc", "hf://../etc: not a Hugging Face model URI; expected hf://ORG/NAME or hf://ORG/NAME@REVISION"),
])
def test_hub_errors_say_what_to_do(hub, uri, text):
    run = run_cli("model-info", uri)
    assert (run.code, run.stdout, run.lines) == (1, "", [f"error: {text}"])


def test_network_failure(monkeypatch):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed once the block ends: nothing listens there
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    run = run_cli("model-info", "hf://org/tiny")
    assert run.code == 1 and run.stdout == "" and "Traceback" not in run.stderr
    [line] = run.lines
    assert line.startswith(f"error: hf://org/tiny: cannot reach http://127.0.0.1:{port} (")
    assert line.endswith("check the network, or HF_ENDPOINT")


def answer(handler, status: int, body, link: str | None = None) -> None:
    data = json.dumps(body).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    if link:
        handler.send_header("Link", f'<{link}>; rel="next"')
    handler.end_headers()
    handler.wfile.write(data)


def entries(hub: Hub) -> list[dict]:
    return [{"type": "file", "path": name, "size": len(data), "oid": "0" * 40}
            for name, data in sorted(hub.files.items())]


def test_the_file_listing_is_read_page_by_page(hub):
    """Two files a page, each page linking the next, as the Hub paginates: the model is read whole."""
    endpoint = f"http://127.0.0.1:{hub.port}"
    files = [{"type": "directory", "path": "onnx", "oid": "1" * 40}, *entries(hub)]

    def paged(handler, path):
        page = int(path.partition("cursor=")[2] or 0)
        more = f"{endpoint}/api/models/org/tiny/tree/main?recursive=true&cursor={page + 1}"
        answer(handler, 200, files[2 * page:2 * page + 2], more if 2 * page + 2 < len(files) else None)
    hub.listing = paged
    run = run_cli("model-info", "hf://org/tiny", "-o", "json")
    assert run.code == 0, run.stderr
    assert json.loads(run.stdout)["spec"]["modelParameterSize"] == "92.56K"
    assert len(hub.listings) == (len(files) + 1) // 2 > 1


def test_a_busy_hub_is_asked_once(hub):
    """No backoff: a Hub that cannot answer is said at once (huggingface_hub's own listing retries for 23 s)."""
    hub.listing = lambda handler, path: answer(handler, 503, {"error": "busy"})
    run = run_cli("model-info", "hf://org/tiny")
    assert (run.code, run.stdout, run.lines) == (
        1, "", ["error: hf://org/tiny: the Hub answered HTTP 503; try again later"])
    assert len(hub.listings) == 1


@pytest.mark.parametrize("body,link,text", [
    ({"error": "no"}, None, "the Hub's file listing is not a list of files; check HF_ENDPOINT"),
    (["config.json"], None, "the Hub's file listing has an entry that is not a file or a directory; check "
                            "HF_ENDPOINT"),
    ([{"type": "file", "path": "config.json", "size": "12"}], None,
     "the Hub's file listing has a file without a path or a size; check HF_ENDPOINT"),
    ([{"type": "file", "path": "config.json", "size": 2 ** 64}], None,
     "the Hub's file listing has a file without a path or a size; check HF_ENDPOINT"),
    ([{"type": "file", "path": "../../config.json", "size": 12}], None,
     "the Hub's file listing: '../../config.json' is not a plain relative file name; refusing to read it"),
    ([], "http://127.0.0.2:1/api/models/org/tiny/tree/main?cursor=1",
     "the Hub's file listing continues at http://127.0.0.2:1/api/models/org/tiny/tree/main?cursor=1, outside "
     "{endpoint}; check HF_ENDPOINT"),
])
def test_a_hostile_file_listing_is_refused(hub, body, link, text):
    """HF_ENDPOINT may name any server: what its listing says is checked, and the token never leaves it."""
    hub.listing = lambda handler, path: answer(handler, 200, body, link)
    run = run_cli("model-info", "hf://org/tiny")
    endpoint = f"http://127.0.0.1:{hub.port}"
    assert (run.code, run.stdout, run.lines) == (1, "", [f"error: hf://org/tiny: {text.format(endpoint=endpoint)}"])


def test_a_file_listing_has_a_size_limit_over_all_its_pages(hub, monkeypatch):
    from omerender.modelinfo import hub as hub_source
    monkeypatch.setattr(hub_source, "MAX_LISTING_BYTES", 3 * 2 ** 20)
    again = f"http://127.0.0.1:{hub.port}/api/models/org/tiny/tree/main?recursive=true"
    page = [{"type": "directory", "path": f"d{i:07d}", "oid": "0" * 40} for i in range(15_000)]  # about 1 MiB
    hub.listing = lambda handler, path: answer(handler, 200, page, again)
    run = run_cli("model-info", "hf://org/tiny")
    assert run.lines == ["error: hf://org/tiny: the Hub's file listing is larger than 3 MiB; check HF_ENDPOINT"]
    assert len(hub.listings) == 3


def test_an_endless_file_listing_stops(hub, monkeypatch):
    from omerender.modelinfo import hub as hub_source
    monkeypatch.setattr(hub_source, "MAX_PAGES", 5)
    again = f"http://127.0.0.1:{hub.port}/api/models/org/tiny/tree/main?recursive=true"
    hub.listing = lambda handler, path: answer(handler, 200, [], again)
    run = run_cli("model-info", "hf://org/tiny")
    assert run.lines == ["error: hf://org/tiny: the Hub's file listing runs past 5 pages"]
    assert len(hub.listings) == 5


def test_without_the_extra_hf_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)  # as if the package were not installed
    run = run_cli("model-info", "hf://org/tiny")
    assert run.lines == ["error: reading hf:// sources needs the huggingface_hub package: pip install "
                         "huggingface_hub (or pass a local model directory as SOURCE)"]
    assert run.code == 1


def test_update_reads_the_storage_uri_from_the_hub(hub, tmp_path):
    model = tmp_path / "tiny.yaml"
    original = ("apiVersion: ome.io/v1beta1\nkind: ClusterBaseModel\nmetadata:\n  name: tiny\nspec:\n"
                "  storage:\n    storageUri: hf://org/tiny\n")
    model.write_text(original)
    run = run_cli("model-info", "--update", str(model))
    assert run.code == 0, run.stderr
    text = model.read_text()
    # The Hub's listing gives the safetensors sizes, so the weights claim's size is written too.
    assert text.startswith("apiVersion: ome.io/v1beta1\nkind: ClusterBaseModel\nmetadata:\n  name: tiny\n"
                           "  annotations:\n    omerender.io/weights-size: 1Gi\nspec:\n"
                           "  storage:\n    storageUri: hf://org/tiny\n")
    assert "  modelParameterSize: 92.56K\n" in text


# --- a slow or hostile endpoint: error bodies read only in part, one deadline for the whole command -----------

def streaming_error(hub: Hub, sent: list[int]):
    """An HTTP 500 whose body never ends (64 KiB at a time, as fast as it is taken): ``sent`` counts the bytes."""
    def listing(handler, path):
        handler.send_response(500)
        handler.send_header("Connection", "close")
        handler.end_headers()
        sent.append(0)
        try:
            while not hub.stop.is_set() and sent[0] < 256 * 2 ** 20:
                handler.wfile.write(b"x" * 65536)
                sent[0] += 65536
        except OSError:
            pass  # the client hung up, as it should
    return listing


def test_a_streaming_error_body_is_read_only_in_part(hub):
    sent: list[int] = []
    hub.listing = streaming_error(hub, sent)
    start = time.monotonic()
    run = run_cli("model-info", "hf://org/tiny", "--hub-timeout", "20")
    assert (run.code, run.stdout, run.lines) == (1, "", ["error: hf://org/tiny: the Hub answered HTTP 500; try again "
                                                         "later"])
    assert time.monotonic() - start < 5, "the error body was read on, not dropped"
    time.sleep(0.2)
    assert sent and sent[0] < 64 * 2 ** 20, f"{sent[0]:,} bytes of the error body were taken"


def trickle(hub: Hub, head: bool):
    """An answer that never completes, a byte a second: in its headers (``head``) or in its body."""
    def listing(handler, path):
        data = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + b"X-Pad: " + b"x" * 10_000
        if not head:
            body = json.dumps(entries(hub)).encode()
            handler.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body))
            handler.wfile.flush()
            data = body
        try:
            for byte in data:
                if hub.stop.is_set():
                    return
                handler.wfile.write(bytes([byte]))
                handler.wfile.flush()
                time.sleep(1)
        except OSError:
            pass
    return listing


@pytest.mark.parametrize("head", [True, False], ids=["headers", "body"])
def test_a_slow_endpoint_fails_at_the_deadline(hub, monkeypatch, head):
    hub.listing = trickle(hub, head)
    monkeypatch.setenv("OMERENDER_HUB_TIMEOUT", "30")  # the option wins over the variable
    start = time.monotonic()
    run = run_cli("model-info", "hf://org/tiny", "--hub-timeout", "1.5")
    elapsed = time.monotonic() - start
    assert (run.code, run.stdout, run.lines) == (1, "", [
        f"error: hf://org/tiny: no complete answer from http://127.0.0.1:{hub.port} within 1.5 s (--hub-timeout, "
        "OMERENDER_HUB_TIMEOUT); check the network or HF_ENDPOINT, or allow more time"])
    assert 1.5 <= elapsed < 4


def test_the_deadline_spans_every_request_of_the_command(hub, monkeypatch):
    """Each answer is quick, but the model's files take longer than the deadline in all: the deadline is the
    command's, not a request's."""
    monkeypatch.setenv("OMERENDER_HUB_TIMEOUT", "1")
    hub.delay = 0.4  # before each file: config.json and two shards take 1.2 s
    run = run_cli("model-info", "hf://org/tiny")
    assert run.lines == [f"error: hf://org/tiny: no complete answer from http://127.0.0.1:{hub.port} within 1 s "
                         "(--hub-timeout, OMERENDER_HUB_TIMEOUT); check the network or HF_ENDPOINT, or allow more time"]
    assert run.code == 1


@pytest.mark.parametrize("value", ["0", "-3", "soon", "nan", "inf", "86401"])
def test_a_bad_deadline_is_an_error(value, monkeypatch):
    for args in (["--hub-timeout", value], []):
        monkeypatch.setenv("OMERENDER_HUB_TIMEOUT", value)
        run = run_cli("model-info", "hf://org/tiny", *args)
        assert (run.code, run.stdout, run.lines) == (1, "", [
            f"error: --hub-timeout (or OMERENDER_HUB_TIMEOUT) {value!r}: expected a number of seconds above 0 and "
            "at most 86,400"])
