"""Kubernetes' format library (Kubernetes 1.31): ``format.named(name)``, ``format.<name>()`` and a Format's
``validate(string)``, ``optional.none()`` for a valid string, else the list of the API server's texts (the name
rules of k8s.io/apimachinery, which :mod:`omerender.kube.apirules` holds)."""
from __future__ import annotations

import base64
import binascii
import re
from datetime import date

from .. import apirules
from . import engine, expect, opaque, urls

_UUID = re.compile(r"(?i)[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}")
_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_DATETIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?"
                       r"([Zz]|[+-][0-9]{2}:?[0-9]{2})?")


def _prefix(rule):
    """NameIsDNS*(name, prefix=true): a trailing '-' is allowed (generateName)."""
    return lambda text: rule(text[:-1] + "a" if len(text) > 1 and text.endswith("-") else text)


def _uri(text: str) -> list[str]:
    try:
        urls._parse(text)
    except urls._Invalid as err:
        return [f"parse {urls._quoted(text)}: {err}"]
    return []


def _byte(text: str) -> list[str]:
    try:
        base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return ["invalid base64"]
    return []


def _date(text: str) -> list[str]:
    found = _DATE.fullmatch(text)
    try:
        date(*map(int, found.groups())) if found else date(0, 0, 0)
    except ValueError:
        return ["invalid date"]
    return []


def _datetime(text: str) -> list[str]:
    return [] if _DATETIME.fullmatch(text) and not _date(text[:10]) else ["invalid datetime"]


FORMATS = {
    "dns1123Label": apirules.dns1123_label, "dns1123Subdomain": apirules.dns1123_subdomain,
    "dns1035Label": apirules.dns1035_label, "qualifiedName": apirules.qualified_name,
    "dns1123LabelPrefix": _prefix(apirules.dns1123_label),
    "dns1123SubdomainPrefix": _prefix(apirules.dns1123_subdomain),
    "dns1035LabelPrefix": _prefix(apirules.dns1035_label), "labelValue": apirules.label_value, "uri": _uri,
    "uuid": lambda text: [] if _UUID.fullmatch(text) else ["does not match the UUID format"],
    "byte": _byte, "date": _date, "datetime": _datetime,
}


def named(name):
    optional = engine().OptionalValue
    expect("format.named", name, "string")
    return optional.of(opaque("Format", name)) if name in FORMATS else optional.none()


def validate(form, text):
    optional = engine().OptionalValue
    name = expect("validate", form, "Format")["v"]
    problems = FORMATS[name](expect("validate", text, "string"))
    return optional.of(problems) if problems else optional.none()


FUNCTIONS = {"format.named": named, "validate": validate,
             **{f"format.{name}": (lambda name=name: opaque("Format", name)) for name in FORMATS}}
