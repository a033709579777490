"""The download Job's own settings under ``--model-weights download``: where it runs (node selector, tolerations),
what it may use (the download and wait containers' requests and limits, the deadline) and the downloader's
environment (variables, ConfigMaps and Secrets). Each is read from the CLI's and Argo CD's strings or an OMERender
config's value and checked, an error naming the setting as the user's front end spells it
(docs/how-to/model-weights.md)."""
from __future__ import annotations

import re

from omerender.errors import OmeError
from omerender.kube.apirules import dns1123_subdomain, label_value, qualified_name
from omerender.kube.quantities import parse_quantity
from .settings import shown
from .source import CREDENTIAL_WORDS

MAX_DEADLINE = 30 * 24 * 3600
MAX_ITEMS = 64
MAX_VALUE = 4096
RESOURCE_KEY = re.compile(r"(requests|limits)\.(cpu|memory|ephemeral-storage)")
TAINT = re.compile(r"(?P<key>[^=:]+)(=(?P<value>[^:]*))?:(?P<effect>NoSchedule|PreferNoSchedule|NoExecute)")
ENV_NAME = re.compile(r"[-._a-zA-Z][-._a-zA-Z0-9]*")
# What the Job sets itself: given again, the two would disagree.
RESERVED_ENV = ("HF_HOME", "HF_TOKEN", "HF_HUB_DISABLE_TELEMETRY", "HOME")
ENV_FROM = re.compile(r"(configmap|secret)/(.+)")
URL_CREDENTIALS = re.compile(r"://[^/@\s]*:[^/@\s]*@")


def _items(value, name: str) -> list:
    """A list setting's items: a list, or one string (an OMERender config may give one)."""
    items = [value] if isinstance(value, (str, dict)) else value
    if not isinstance(items, (list, tuple)):
        raise OmeError(f"{name} must be a list", field=name)
    if len(items) > MAX_ITEMS:
        raise OmeError(f"{name} has {len(items)} items; at most {MAX_ITEMS}", field=name)
    return list(items)


def _pairs(value, name: str, what: str) -> list[tuple[str, str]]:
    """``KEY=VALUE`` strings, or a mapping (an OMERender config's), as (key, value) pairs in the order given."""
    if isinstance(value, dict):
        if len(value) > MAX_ITEMS:
            raise OmeError(f"{name} has {len(value)} entries; at most {MAX_ITEMS}", field=name)
        pairs = list(value.items())
    else:
        pairs = []
        for item in _items(value, name):
            if not isinstance(item, str) or "=" not in item:
                raise OmeError(f'{name} must be {what}, got "{shown(item)}"', field=name)
            key, _, text = item.partition("=")
            pairs.append((key, text))
    for key, text in pairs:
        if not isinstance(key, str) or not isinstance(text, str) or len(text) > MAX_VALUE:
            raise OmeError(f'{name} must be {what} (strings, a value of at most {MAX_VALUE} characters), got '
                           f'"{shown(key)}"', field=name)
    return pairs


def check_node_selector(value, name: str) -> tuple[tuple[str, str], ...]:
    pairs = _pairs(value, name, "KEY=VALUE node labels")
    for key, text in pairs:
        problems = qualified_name(key) + label_value(text)
        if problems:
            raise OmeError(f'{name} "{shown(key)}={shown(text)}" is not a node label: {problems[0]}', field=name)
    return tuple(dict(pairs).items())


def check_tolerations(value, name: str) -> tuple[dict, ...]:
    """``KEY[=VALUE]:EFFECT`` (as ``kubectl taint`` writes a taint): a toleration of that taint."""
    out = []
    for item in _items(value, name):
        match = TAINT.fullmatch(item) if isinstance(item, str) else None
        problems = qualified_name(match["key"]) + label_value(match["value"] or "") if match else ["no effect"]
        if problems:
            raise OmeError(f'{name} must be KEY[=VALUE]:EFFECT (EFFECT NoSchedule, PreferNoSchedule or NoExecute), '
                           f'got "{shown(item)}"', field=name)
        toleration = {"key": match["key"], "operator": "Exists" if match["value"] is None else "Equal"}
        if match["value"] is not None:
            toleration["value"] = match["value"]
        out.append({**toleration, "effect": match["effect"]})
    return tuple(out)


def check_resources(value, name: str, defaults: tuple) -> tuple:
    """``requests.cpu=1,limits.memory=8Gi`` (comma-separated, or a list) over ``defaults``; a limit below its
    request is an error, as the API server refuses it."""
    if isinstance(value, dict):   # an OMERender config's {requests.cpu: 1, ...}
        value = {k: str(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v for k, v in value.items()}
    else:
        items = value.split(",") if isinstance(value, str) else _items(value, name)
        value = [i.strip() if isinstance(i, str) else i for i in items if not isinstance(i, str) or i.strip()]
    given = _pairs(value, name, "requests.RESOURCE=QUANTITY or limits.RESOURCE=QUANTITY")
    merged = {(group, resource): quantity for group, resource, quantity in defaults}
    for key, quantity in given:
        match = RESOURCE_KEY.fullmatch(key)
        if not match:
            raise OmeError(f'{name} "{shown(key)}": the keys are requests.cpu, requests.memory, '
                           f'requests.ephemeral-storage and the same under limits.', field=name)
        parse_quantity(quantity, f"{name} {key}")
        merged[(match[1], match[2])] = quantity.strip()
    for (group, resource), quantity in merged.items():
        limit = merged.get(("limits", resource))
        if group == "requests" and limit is not None and \
                parse_quantity(quantity, name) > parse_quantity(limit, name):
            raise OmeError(f"{name}: requests.{resource} {quantity} is above limits.{resource} {limit}; the API "
                           f"server refuses a request above its limit", field=name)
    return tuple((group, resource, quantity) for (group, resource), quantity in sorted(merged.items()))


def resources(triples: tuple) -> dict:
    """A container's ``resources`` from (group, resource, quantity) triples."""
    out: dict = {}
    for group, resource, quantity in sorted(triples):
        out.setdefault(group, {})[resource] = quantity
    return out


def check_deadline(value, name: str) -> int:
    text = str(value) if isinstance(value, int) and not isinstance(value, bool) else value
    if not isinstance(text, str) or not text.isascii() or not text.isdigit() or not 0 < int(text) <= MAX_DEADLINE:
        raise OmeError(f'{name} must be a number of seconds from 1 to {MAX_DEADLINE} (30 days), got '
                       f'"{shown(value)}"', field=name)
    return int(text)


def check_env(value, name: str, env_from: str) -> tuple[tuple[str, str], ...]:
    """``NAME=VALUE`` variables for the downloader; a credential is never a literal here."""
    pairs = _pairs(value, name, "NAME=VALUE variables")
    for key, text in pairs:
        if not ENV_NAME.fullmatch(key) or len(key) > 253:
            raise OmeError(f'{name} "{shown(key)}" is not an environment variable name (letters, digits, "_", '
                           f'"-", ".", not starting with a digit)', field=name)
        if key in RESERVED_ENV or key.startswith("OMERENDER_"):
            raise OmeError(f"{name} {key}: the download Job sets {key} itself; the model's token comes from the "
                           f"Secret its spec.storage.key names", field=name)
        lowered = key.lower().replace("_", "")
        if any(word.replace("_", "") in lowered for word in CREDENTIAL_WORDS) or URL_CREDENTIALS.search(text):
            raise OmeError(f"{name} {key} would be a literal credential in the output, and --model-weights download "
                           f"never writes one: put it in a Secret in the InferenceService's namespace and give "
                           f"{env_from} secret/NAME", field=name)
    return tuple(pairs)


def check_env_from(value, name: str) -> tuple[dict, ...]:
    """``configmap/NAME`` or ``secret/NAME``: every key of that object as a variable of the downloader."""
    out = []
    for item in _items(value, name):
        match = ENV_FROM.fullmatch(item) if isinstance(item, str) else None
        if not match or dns1123_subdomain(match[2]):
            raise OmeError(f'{name} must be configmap/NAME or secret/NAME (NAME a DNS subdomain), got '
                           f'"{shown(item)}"', field=name)
        out.append({"configMapRef" if match[1] == "configmap" else "secretRef": {"name": match[2]}})
    return tuple(out)
