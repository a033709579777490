"""Kubernetes' IP and CIDR libraries (Kubernetes 1.30): ``ip``, ``isIP``, ``ip.isCanonical``, ``family``,
``isUnspecified``, ``isLoopback``, ``isLinkLocalMulticast``, ``isLinkLocalUnicast``, ``isGlobalUnicast``, ``cidr``,
``isCIDR``, ``containsIP``, ``containsCIDR``, ``prefixLength``, ``masked``. Addresses are read as Go's
``netip.ParseAddr``/``ParsePrefix`` read them (no leading zeros, no zone, no IPv4-mapped IPv6 address), and
compared and printed in their canonical form, as Go's ``netip`` does."""
from __future__ import annotations

import ipaddress
import json
import re

from . import CelError, expect, kind_of, opaque

_BITS = re.compile(r"0|[1-9][0-9]{0,2}")


def _quoted(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _why(raw: str) -> str:
    """Go's netip.ParseAddr reason for the commonest mistakes; "unable to parse IP" for the others."""
    if ":" not in raw and raw.count(".") > 3:
        return "IPv4 address too long"
    parts = raw.split(".")
    if ":" not in raw and all(part.isascii() and part.isdigit() for part in parts):
        if any(len(part) > 1 and part.startswith("0") for part in parts):
            return "IPv4 field has octet with leading zero"
        if any(int(part) > 255 for part in parts):
            return "IPv4 field has value >255"
        if len(parts) < 4:
            return "IPv4 address too short"
    return "unable to parse IP"


def parse_ip(raw: str):
    try:
        address = ipaddress.ip_address(raw)
    except ValueError:
        raise CelError(f"IP Address {_quoted(raw)} parse error during conversion from string: "
                       f"ParseAddr({_quoted(raw)}): {_why(raw)}") from None
    if getattr(address, "scope_id", None):
        raise CelError(f"IP address {_quoted(raw)} with zone value is not allowed")
    if getattr(address, "ipv4_mapped", None):
        raise CelError(f"IPv4-mapped IPv6 address {_quoted(raw)} is not allowed")
    return address


def parse_cidr(raw: str):
    prefix = "network address parse error during conversion from string: "
    address, slash, bits = raw.partition("/")
    if not slash:
        raise CelError(f"{prefix * 2}netip.ParsePrefix({_quoted(raw)}): no '/'")
    if "%" in address:
        raise CelError(f"{prefix * 2}netip.ParsePrefix({_quoted(raw)}): IPv6 zones cannot be present in a prefix")
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        raise CelError(f"{prefix * 2}netip.ParsePrefix({_quoted(raw)}): ParseAddr({_quoted(address)}): unable to "
                       f"parse IP") from None
    if not _BITS.fullmatch(bits) or int(bits) > ip.max_prefixlen:
        raise CelError(f"{prefix * 2}netip.ParsePrefix({_quoted(raw)}): bad bits after slash: {_quoted(bits)}")
    if getattr(ip, "ipv4_mapped", None):
        raise CelError(f"{prefix}IPv4-mapped IPv6 address {_quoted(raw)} is not allowed")
    return ip, int(bits)


def _ip(name: str, value):
    return ipaddress.ip_address(expect(name, value, "IP")["v"])


def _cidr(name: str, value):
    address, _, bits = expect(name, value, "CIDR")["v"].partition("/")
    return ipaddress.ip_address(address), int(bits)


def _network(ip, bits: int):
    return ipaddress.ip_network(f"{ip}/{bits}", strict=False)


def ip(value):
    if kind_of(value) == "CIDR":
        return opaque("IP", str(_cidr("ip", value)[0]))
    return opaque("IP", str(parse_ip(expect("ip", value, "string"))))


def is_ip(value):
    try:
        parse_ip(expect("isIP", value, "string"))
    except CelError as err:
        if str(err).startswith("no such overload"):
            raise
        return False
    return True


def is_canonical(value):
    return str(parse_ip(expect("ip.isCanonical", value, "string"))) == value


def family(value):
    return _ip("family", value).version


def is_unspecified(value):
    return _ip("isUnspecified", value).is_unspecified


def is_loopback(value):
    return _ip("isLoopback", value).is_loopback


def is_link_local_multicast(value):
    address = _ip("isLinkLocalMulticast", value)
    if address.version == 4:
        return address in ipaddress.ip_network("224.0.0.0/24")
    return int(address) >> 112 & 0xff0f == 0xff02


def is_link_local_unicast(value):
    return _ip("isLinkLocalUnicast", value).is_link_local


def is_global_unicast(value):
    """Go's IsGlobalUnicast: any unicast address but unspecified, loopback, link-local and IPv4 broadcast (the
    private ranges included)."""
    address = _ip("isGlobalUnicast", value)
    return not (address.is_unspecified or address.is_loopback or address.is_multicast or address.is_link_local
                or str(address) == "255.255.255.255")


def cidr(value):
    address, bits = parse_cidr(expect("cidr", value, "string"))
    return opaque("CIDR", f"{address}/{bits}")


def is_cidr(value):
    try:
        parse_cidr(expect("isCIDR", value, "string"))
    except CelError as err:
        if str(err).startswith("no such overload"):
            raise
        return False
    return True


def contains_ip(value, other):
    address, bits = _cidr("containsIP", value)
    candidate = parse_ip(other) if kind_of(other) == "string" else _ip("containsIP", other)
    return candidate.version == address.version and candidate in _network(address, bits)


def contains_cidr(value, other):
    address, bits = _cidr("containsCIDR", value)
    inner, inner_bits = parse_cidr(other) if kind_of(other) == "string" else _cidr("containsCIDR", other)
    return inner.version == address.version and bits <= inner_bits and inner in _network(address, bits)


def prefix_length(value):
    return _cidr("prefixLength", value)[1]


def masked(value):
    address, bits = _cidr("masked", value)
    return opaque("CIDR", f"{_network(address, bits).network_address}/{bits}")


FUNCTIONS = {
    "ip": ip, "isIP": is_ip, "ip.isCanonical": is_canonical, "family": family, "isUnspecified": is_unspecified,
    "isLoopback": is_loopback, "isLinkLocalMulticast": is_link_local_multicast,
    "isLinkLocalUnicast": is_link_local_unicast, "isGlobalUnicast": is_global_unicast, "cidr": cidr,
    "isCIDR": is_cidr, "containsIP": contains_ip, "containsCIDR": contains_cidr, "prefixLength": prefix_length,
    "masked": masked,
}
