"""Kubernetes' URL library: ``url``, ``isURL``, ``getScheme``, ``getHost``, ``getHostname``, ``getPort``,
``getEscapedPath``, ``getQuery``. A URL is what Go's ``url.ParseRequestURI`` accepts (an absolute URL or an
absolute path; no fragment is split off), read as Go's ``net/url`` reads it, with its error texts."""
from __future__ import annotations

import json
import re
from urllib.parse import unquote_to_bytes

from . import CelError, expect, opaque

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*")
_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})..?|%$")
_PORT = re.compile(r"(:[0-9]*)?")
_HOST_OK = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:\[\]%]*")
_USERINFO_OK = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:%@]*")
_PATH_KEEP = "!$&'()*+,;=:@/%-._~"


def _quoted(text: str) -> str:
    """Go's %q of a string (strconv.Quote, for the texts these errors show)."""
    return json.dumps(text, ensure_ascii=False)


def parse(raw: str) -> dict:
    """The parts of ``raw`` (scheme, host, path, query), or a CelError with Go's text."""
    try:
        return _parse(raw)
    except _Invalid as err:
        raise CelError(f"URL parse error during conversion from string: parse {_quoted(raw)}: {err}") from None


class _Invalid(Exception):
    pass


def _parse(raw: str) -> dict:
    if any(ord(c) < 0x20 or ord(c) == 0x7f for c in raw):
        raise _Invalid("net/url: invalid control character in URL")
    if raw == "":
        raise _Invalid("empty url")
    parts = {"scheme": "", "host": "", "path": "", "query": "", "opaque": ""}
    if raw == "*":
        return {**parts, "path": "*"}
    rest = raw
    scheme = _SCHEME.match(raw)
    if raw[:1] == ":":
        raise _Invalid("missing protocol scheme")
    if scheme and raw[scheme.end():scheme.end() + 1] == ":":
        parts["scheme"], rest = scheme.group().lower(), raw[scheme.end() + 1:]
    if rest.endswith("?") and rest.count("?") == 1:
        rest = rest[:-1]
    elif "?" in rest:
        rest, parts["query"] = rest.split("?", 1)
    if not rest.startswith("/"):
        if parts["scheme"]:
            return {**parts, "opaque": rest}
        raise _Invalid("invalid URI for request")
    if parts["scheme"] and rest.startswith("//"):
        authority, slash, path = rest[2:].partition("/")
        rest = slash + path
        parts["host"] = _host(authority)
    _unescape(rest)
    parts["path"] = rest
    return parts


def _host(authority: str) -> str:
    userinfo, at, host = authority.rpartition("@")
    if at and not _USERINFO_OK.fullmatch(userinfo):
        raise _Invalid("net/url: invalid userinfo")
    if host.startswith("["):
        end = host.find("]")
        if end < 0:
            raise _Invalid("missing ']' in host")
        port = host[end + 1:]
        if not _PORT.fullmatch(port):
            raise _Invalid(f"invalid port {_quoted(port)} after host")
    elif ":" in host:
        port = host[host.rfind(":"):]
        if not _PORT.fullmatch(port):
            raise _Invalid(f"invalid port {_quoted(port)} after host")
    for char in host:
        if not _HOST_OK.fullmatch(char) and ord(char) < 0x80:
            raise _Invalid(f"invalid character {_quoted(char)} in host name")
    _unescape(host)
    return host


def _unescape(text: str) -> None:
    bad = _ESCAPE.search(text)
    if bad:
        raise _Invalid(f"invalid URL escape {_quoted(bad.group()[:3])}")


def url(raw):
    expect("url", raw, "string")
    parse(raw)
    return opaque("URL", raw)


def is_url(raw):
    expect("isURL", raw, "string")
    try:
        _parse(raw)
    except _Invalid:
        return False
    return True


def _parts(name: str, value) -> dict:
    return parse(expect(name, value, "URL")["v"])


def get_scheme(value):
    return _parts("getScheme", value)["scheme"]


def get_host(value):
    return _parts("getHost", value)["host"]


def get_hostname(value):
    host = _parts("getHostname", value)["host"]
    if host.startswith("["):
        return host[1:host.find("]")]
    return host.rpartition(":")[0] if ":" in host else host


def get_port(value):
    host = _parts("getPort", value)["host"]
    after = host[host.find("]") + 1:] if host.startswith("[") else host
    return after.rpartition(":")[2] if ":" in after else ""


def get_escaped_path(value):
    path = _parts("getEscapedPath", value)["path"]
    return "".join(c if c.isascii() and (c.isalnum() or c in _PATH_KEEP) else
                   "".join(f"%{b:02X}" for b in c.encode()) for c in path)


def get_query(value):
    query: dict[str, list[str]] = {}
    for pair in _parts("getQuery", value)["query"].split("&"):
        if not pair or ";" in pair:
            continue
        key, _, item = pair.partition("=")
        try:
            key, item = (unquote_to_bytes(part.replace("+", " ")).decode("utf-8", "replace")
                         for part in (_checked(key), _checked(item)))
        except _Invalid:
            continue
        query.setdefault(key, []).append(item)
    return query


def _checked(text: str) -> str:
    _unescape(text)
    return text


FUNCTIONS = {
    "url": url, "isURL": is_url, "getScheme": get_scheme, "getHost": get_host, "getHostname": get_hostname,
    "getPort": get_port, "getEscapedPath": get_escaped_path, "getQuery": get_query,
}
