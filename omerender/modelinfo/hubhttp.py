"""One streamed GET through huggingface_hub's own HTTP session, whichever backend it has.

huggingface_hub 0.x (what transformers 4.x environments pin) hands out a ``requests.Session``; 1.x an
``httpx.Client``, and 2.x an ``httpx2.Client`` with httpx's API. :mod:`.hub` reads the Hub through the small
interface here, so that both work the same way: one hop at a time (redirects followed by the caller, each
answer's body left unread), bodies read chunk by chunk, and an error answer rebuilt with only the bytes read,
for ``hf_raise_for_status`` to tell the errors apart.
"""
from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

CHUNK = 65536  # what the requests backend reads at a time; httpx gives what has arrived


def for_session(session):
    """The transport for huggingface_hub's session: httpx's API when it builds requests, else requests'."""
    return HttpxTransport(session) if hasattr(session, "build_request") else RequestsTransport(session)


class HttpxTransport:
    """huggingface_hub 1.x and 2.x: httpx (or httpx2) follows nothing unless asked, and its
    ``next_request`` drops the token where the origin changes."""

    def __init__(self, session):
        self.session = session

    def request(self, url: str, headers: dict, timeout: float):
        return self.session.build_request("GET", url, headers=headers, timeout=timeout)

    def send(self, request):
        return self.session.send(request, stream=True, follow_redirects=False)

    def redirect(self, response, request):
        return response.next_request

    def raw(self, response):
        return response.iter_raw()

    def headers(self, response) -> list[tuple[str, str]]:
        return response.headers.multi_items()

    def chunks(self, response):
        return response.iter_bytes()

    def error_answer(self, response, headers: list[tuple[str, str]], body: bytes):
        return type(response)(response.status_code, headers=headers, content=body, request=response.request)


@dataclass(frozen=True)
class _Hop:
    url: str
    headers: dict
    timeout: float


class RequestsTransport:
    """huggingface_hub 0.x: requests. ``Session.send`` reads a redirect's whole body even when told not to
    follow it, so each hop goes to the session's adapter directly, with the settings ``Session.request``
    would add (proxies, certificates from the environment), and redirects are built here."""

    def __init__(self, session):
        self.session = session

    def request(self, url: str, headers: dict, timeout: float) -> _Hop:
        return _Hop(url, dict(headers), timeout)

    def send(self, hop: _Hop):
        import requests
        prepared = self.session.prepare_request(requests.Request("GET", hop.url, headers=hop.headers))
        settings = self.session.merge_environment_settings(prepared.url, {}, True, None, None)  # stream=True
        return self.session.get_adapter(prepared.url).send(prepared, timeout=hop.timeout, **settings)

    def redirect(self, response, hop: _Hop) -> _Hop | None:
        """The next hop, as httpx builds it: the token is not sent to another origin."""
        if not response.is_redirect:
            return None
        url = urljoin(response.url, response.headers["location"])
        headers = dict(hop.headers)
        if _origin(url) != _origin(hop.url):
            headers = {k: v for k, v in headers.items() if k.lower() != "authorization"}
        return _Hop(url, headers, hop.timeout)

    def raw(self, response):
        return response.raw.stream(CHUNK, decode_content=False)

    def headers(self, response) -> list[tuple[str, str]]:
        return list(response.headers.items())  # repeated headers come joined, as urllib3 read them

    def chunks(self, response):
        return response.iter_content(CHUNK)

    def error_answer(self, response, headers: list[tuple[str, str]], body: bytes):
        import requests
        answer = requests.Response()
        answer.status_code, answer.reason, answer.url = response.status_code, response.reason, response.url
        answer.headers = requests.structures.CaseInsensitiveDict(headers)
        answer.request = response.request
        answer._content = body  # what requests' own tests do to give a response its body
        return answer


def _origin(url: str) -> tuple:
    parts = urlsplit(url)
    return parts.scheme.lower(), parts.hostname, parts.port or {"http": 80, "https": 443}.get(parts.scheme.lower())

