"""What the Kubernetes API server refuses in any object: names, namespaces, label and annotation keys and
values, 32/64-bit integers, resource quantities, environment variable names, and one object written twice.

The rules and texts are those of k8s.io/apimachinery/pkg/util/validation and the core validation of
k8s.io/kubernetes (ValidateObjectMeta, ValidateResourceQuantityValue, IsRelaxedEnvVarName). omerender
applies them to the input fields that become object fields (so the error names the input file, object
and field) and to every object it writes (so nothing the API server would refuse renders with exit 0).
"""
from __future__ import annotations

import re
from typing import Iterable

from omerender.errors import OmeError, type_name
from omerender.yamlio.data import BoundedSet
from .quantities import parse_quantity

INT32 = (-2 ** 31, 2 ** 31 - 1)
INT64 = (-2 ** 63, 2 ** 63 - 1)
PORT_MAX = 65535
LABEL_MAX = 63
SUBDOMAIN_MAX = 253
ANNOTATIONS_MAX_BYTES = 256 * 1024
SHOWN_CHARS = 80  # a value longer than this is shortened in messages

_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN = rf"{_LABEL}(\.{_LABEL})*"
_DNS1035 = "[a-z]([-a-z0-9]*[a-z0-9])?"
_QUALIFIED = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE = f"({_QUALIFIED})?"
DNS1123_LABEL_TEXT = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
                      f"start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
                      f"validation is '{_LABEL}')")
DNS1123_SUBDOMAIN_TEXT = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
                          "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
                          f"for validation is '{_SUBDOMAIN}')")
DNS1035_TEXT = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex "
                f"used for validation is '{_DNS1035}')")
_QUALIFIED_RULE = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                   "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
                   f"'{_QUALIFIED}')")
QUALIFIED_TEXT = f"name part {_QUALIFIED_RULE}"
PREFIXED_TEXT = (f"a qualified name {_QUALIFIED_RULE} with an optional DNS subdomain prefix and '/' (e.g. "
                 "'example.com/MyName')")
LABEL_VALUE_TEXT = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
                    "must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
                    f"regex used for validation is '{_LABEL_VALUE}')")
ENV_NAME_TEXT = "a valid environment variable name must consist only of printable ASCII characters other than '='"
_MATCH = {name: re.compile(regex).fullmatch for name, regex in
          (("label", _LABEL), ("subdomain", _SUBDOMAIN), ("dns1035", _DNS1035), ("qualified", _QUALIFIED),
           ("value", _LABEL_VALUE))}
_ENV_NAME = re.compile("[ -<>-~]+").fullmatch  # printable ASCII but '='
RBAC_GROUP = "rbac.authorization.k8s.io"
RBAC_KINDS = ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")


def shown(value) -> str:
    text = str(value)
    return text if len(text) <= SHOWN_CHARS else f"{text[:SHOWN_CHARS]}... ({len(text)} characters)"


def invalid(path: str, value, problem: str) -> OmeError:
    return OmeError(f'{path}: Invalid value: "{shown(value)}": {problem}', field=path)


# ---------------------------------------------------------------- names

def dns1123_label(value: str) -> list[str]:
    return _length(value, LABEL_MAX) + ([] if _MATCH["label"](value) else [DNS1123_LABEL_TEXT])


def dns1123_subdomain(value: str) -> list[str]:
    return _length(value, SUBDOMAIN_MAX) + ([] if _MATCH["subdomain"](value) else [DNS1123_SUBDOMAIN_TEXT])


def dns1035_label(value: str) -> list[str]:
    return _length(value, LABEL_MAX) + ([] if _MATCH["dns1035"](value) else [DNS1035_TEXT])


def ingress_class_problems(value) -> list[str]:
    """ValidateIngressClassName, which is NameIsDNSSubdomain (k8s.io/kubernetes pkg/apis/networking/validation)."""
    return dns1123_subdomain(value) if isinstance(value, str) else [f"must be a string, not {type_name(value)}"]


def path_segment(value: str) -> list[str]:
    """The names RBAC kinds allow (``system:kube-scheduler``): anything that is one URL path segment."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{c}'" for c in "/%" if c in value]


def _length(value: str, limit: int) -> list[str]:
    return [f"must be no more than {limit} characters"] if len(value) > limit else []


def name_rule(api_version: str, kind: str):
    """The API server's rule for the name of an object of this kind (ValidateObjectMeta's nameFn)."""
    if kind in _OWN_NAME_RULE:
        group = api_version.rpartition("/")[0] if "/" in api_version else ""
        if group == "" and kind == "Service":
            return dns1035_label
        if group == "" and kind == "Namespace":
            return dns1123_label
        if group == RBAC_GROUP and kind in RBAC_KINDS:
            return path_segment
    return dns1123_subdomain  # every other built-in kind, and every custom resource


_OWN_NAME_RULE = ("Service", "Namespace", *RBAC_KINDS)   # a tuple: a kind of any type is compared, never hashed


def qualified_name(key: str) -> list[str]:
    """IsQualifiedName: ``[prefix/]name``, the prefix a DNS-1123 subdomain."""
    prefix, slash, name = key.rpartition("/")
    if slash and "/" in prefix:
        return [PREFIXED_TEXT]
    problems = []
    if slash:
        problems = [f"prefix part {p}" for p in dns1123_subdomain(prefix)] if prefix else ["prefix part must be "
                                                                                            "non-empty"]
    if not name:
        return problems + ["name part must be non-empty"]
    problems += [f"name part {p}" for p in _length(name, LABEL_MAX)]
    return problems + ([] if _MATCH["qualified"](name) else [QUALIFIED_TEXT])


def label_value(value: str) -> list[str]:
    return _length(value, LABEL_MAX) + ([] if _MATCH["value"](value) else [LABEL_VALUE_TEXT])


# ---------------------------------------------------------------- object metadata

class Checked:
    """The label and annotation maps found valid among objects checked together, by identity: the caller holds
    those objects, unchanged, until the last is checked (one InferenceService's objects share their component's
    maps, ome.render), so no id is reused and no map changes in between."""

    __slots__ = ("labels", "annotations")

    def __init__(self):
        self.labels: set[int] = set()
        self.annotations: set[int] = set()


def check_metadata(meta: dict, api_version: str, kind: str, path: str = "metadata", name: bool = True,
                   checked: Checked | None = None) -> None:
    """Name, namespace, labels and annotations of one object; ``name``: check the name too; ``checked``: the maps
    that need no second look (:class:`Checked`)."""
    # each check runs in full (and words its error) only where what was found valid before does not cover it
    if name:
        value, rule = meta.get("name"), name_rule(api_version, kind)
        if type(value) is not str or (rule, value) not in _VALID:
            _first(value, rule, f"{path}.name")
    namespace = meta.get("namespace")
    if namespace and (type(namespace) is not str or (dns1123_label, namespace) not in _VALID):
        _first(namespace, dns1123_label, f"{path}.namespace")
    labels, annotations = meta.get("labels"), meta.get("annotations")
    checked = Checked() if checked is None else checked
    if labels is not None and id(labels) not in checked.labels:
        check_labels(labels, f"{path}.labels")
        checked.labels.add(id(labels))
    if annotations is not None and id(annotations) not in checked.annotations:
        check_annotations(annotations, f"{path}.annotations")
        checked.annotations.add(id(annotations))


_VALID = BoundedSet()  # (rule, text) found valid: the same keys, values and names recur on every object


def _first(value, rule, path: str) -> None:
    if isinstance(value, str) and (rule, value) in _VALID:
        return
    problems = rule(value) if isinstance(value, str) else ["must be a string"]
    if problems:
        raise invalid(path, value, "; ".join(problems))
    _VALID.add((rule, value))


def check_labels(labels, path: str) -> None:
    new = _unknown(_VALID_LABELS, labels, path)
    if not new:
        return
    for key, value in new:
        if (qualified_name, key) not in _VALID:
            _first(key, qualified_name, path)
        if value is not None and (label_value, value) not in _VALID:
            _first(value, label_value, f"{path}.{key}")
    _VALID_LABELS.update(new)


def check_annotations(annotations, path: str) -> None:
    new = _unknown(_VALID_ANNOTATIONS, annotations, path)
    if not new:
        return
    for key, _ in new:
        if (qualified_name, key.lower()) not in _VALID:
            _first(key.lower(), qualified_name, path)
    size = 0
    for key, value in annotations.items():
        size += len(key.encode()) + len((value or "").encode())
    if size > ANNOTATIONS_MAX_BYTES:
        raise OmeError(f"{path}: Too long: must have at most {ANNOTATIONS_MAX_BYTES} bytes", field=path)
    _VALID_ANNOTATIONS.update([item for item in new if len(item[0]) + len(item[1] or "") <= ITEM_CHARS])


# The (key, value) items of label and annotation maps found valid: only the items of a map not among them are
# checked, and a map whose every item is among them is valid (its keys and values are; an annotation item is kept
# only if it is at most ITEM_CHARS characters, which at most FAST_ITEMS of them cannot take past the size limit), so
# an InferenceService's objects, which share most items with each other and with every other InferenceService, are
# checked item by item once. Only items of maps of strings that passed get here: "1", 1 and True are told apart (no
# str equals a number).
_VALID_LABELS = BoundedSet()
_VALID_ANNOTATIONS = BoundedSet()
ITEM_CHARS = 256
FAST_ITEMS = ANNOTATIONS_MAX_BYTES // (4 * ITEM_CHARS)  # UTF-8 takes at most 4 bytes a character


def _unknown(valid: BoundedSet, value, path: str) -> list:
    """The items of the map ``value`` (None: no map) to check, in order: those not found valid before, each of
    them a (string, string or None) item; every item of what is no small plain map."""
    if value is None:
        return []
    if type(value) is dict and len(value) <= FAST_ITEMS:
        try:
            if valid.issuperset(value.items()):  # most maps, in one call
                return []
            new = [item for item in value.items() if item not in valid]
        except TypeError:  # an unhashable value: the full check words its error
            new = list(value.items())
    else:
        _string_map(value, path)
        return list(value.items())
    _string_items(new, path)  # the first item of the wrong type: none found valid before is
    return new


def _string_map(value, path: str) -> None:
    """The wording of shapes.check, which checks the same maps of OME's objects."""
    if not isinstance(value, dict):
        raise OmeError(f'{path}: Invalid value: "{type_name(value)}": must be of type object', field=path)
    _string_items(value.items(), path)


def _string_items(items, path: str) -> None:
    for key, item in items:  # null: unset, as kubectl reads it
        if not isinstance(item, (str, type(None))):
            raise OmeError(f'{path}.{key}: Invalid value: "{type_name(item)}": must be of type string',
                           field=f"{path}.{key}")


# ---------------------------------------------------------------- fields

def check_integer(value: int, size: str, path: str) -> None:
    """``size`` is ``int32`` or ``int64``: a number the Go type cannot hold is refused."""
    low, high = INT32 if size == "int32" else INT64
    if not low <= value <= high:
        raise OmeError(f"{path}: Invalid value: {shown(value)}: must be a {size[3:]}-bit integer (from {low} to "
                       f"{high})", field=path)


def check_port(value, path: str) -> None:
    """A port number (a name, for the fields that take one, is left alone)."""
    if isinstance(value, int) and not isinstance(value, bool) and not 1 <= value <= PORT_MAX:
        raise OmeError(f"{path}: Invalid value: {shown(value)}: must be between 1 and {PORT_MAX}, inclusive",
                       field=path)


def check_host_port(value, path: str) -> None:
    if value != 0:  # 0: no host port
        check_port(value, path)


def check_dns_label(value, path: str) -> None:
    """Container and volume names."""
    if isinstance(value, str) and dns1123_label(value):
        raise invalid(path, value, "; ".join(dns1123_label(value)))


def check_env_name(name, path: str) -> None:
    if isinstance(name, str) and not _ENV_NAME(name):
        raise invalid(path, name, ENV_NAME_TEXT)


def is_extended_resource(name: str) -> bool:
    """IsExtendedResourceName: a domain-prefixed name outside kubernetes.io (``nvidia.com/gpu``)."""
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")


def check_resource_list(resources, path: str) -> None:
    """Requests or limits: no negative quantity, extended resources (GPUs) in whole units."""
    if not isinstance(resources, dict):
        return
    for name, value in resources.items():
        if value is None or (name, type(value), value) in _VALID_RESOURCES:
            continue
        quantity = parse_quantity(value, f"{path}.{name}")
        if quantity < 0:
            raise invalid(f"{path}.{name}", value, "must be greater than or equal to 0")
        if is_extended_resource(str(name)) and quantity.denominator != 1:
            raise invalid(f"{path}.{name}", value, "must be an integer")
        _VALID_RESOURCES.add((name, type(value), value))


_VALID_RESOURCES = BoundedSet()  # (name, type, quantity) found valid, as _VALID: 1 and True are told apart


# ---------------------------------------------------------------- rendered objects

# The int32 fields of the objects omerender writes outside their pods (the pod fields of rendered objects
# are checked on the input fields they come from; a passed-through object's pods are its own).
INT32_FIELDS = {
    "Deployment": (("spec", "replicas"),),
    "HorizontalPodAutoscaler": (("spec", "minReplicas"), ("spec", "maxReplicas")),
    "LeaderWorkerSet": (("spec", "replicas"), ("spec", "leaderWorkerTemplate", "size")),
    "PodDisruptionBudget": (("spec", "minAvailable"), ("spec", "maxUnavailable")),
    "ScaledObject": (("spec", "minReplicaCount"), ("spec", "maxReplicaCount")),
}
SERVICE_PORT_FIELDS = ("port", "targetPort", "nodePort")


def check_object(obj: dict, checked: Checked | None = None) -> None:
    """Everything above that applies to one object omerender writes (rendered or passed through); the error's
    field is in ``obj``. ``checked``: see :class:`Checked`."""
    check_metadata(obj.get("metadata") or {}, obj.get("apiVersion", ""), obj.get("kind", ""), checked=checked)
    kind = obj.get("kind")
    for path in INT32_FIELDS.get(kind, ()):
        _int32_at(obj, path)
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    if kind == "Ingress" and "ingressClassName" in spec:
        value = spec["ingressClassName"]
        if value is not None:
            _first(value, ingress_class_problems, "spec.ingressClassName")
    if kind == "Service":
        for i, port in enumerate(spec.get("ports") or []):
            if isinstance(port, dict):
                for key in SERVICE_PORT_FIELDS:
                    if port.get(key) is not None:
                        (check_host_port if key == "nodePort" else check_port)(port[key], f"spec.ports[{i}].{key}")
    if "template" in spec:
        _check_template(spec["template"], "spec.template.metadata", checked)
    group = spec.get("leaderWorkerTemplate")
    if isinstance(group, dict):
        _check_template(group.get("leaderTemplate"), "spec.leaderWorkerTemplate.leaderTemplate.metadata", checked)
        _check_template(group.get("workerTemplate"), "spec.leaderWorkerTemplate.workerTemplate.metadata", checked)


def _check_template(template, path: str, checked: Checked | None) -> None:
    if isinstance(template, dict) and isinstance(template.get("metadata"), dict):
        check_metadata(template["metadata"], "v1", "Pod", path, name=False, checked=checked)


def _at(obj, path: tuple):
    for key in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def _int32_at(obj: dict, path: tuple) -> None:
    value = _at(obj, path)
    if isinstance(value, int) and not isinstance(value, bool):
        check_integer(value, "int32", ".".join(path))


def identity(obj: dict) -> tuple[str, str, str, str]:
    """What the API server keys an object by: group, kind, namespace, name."""
    api_version = str(obj.get("apiVersion", ""))
    meta = obj.get("metadata") or {}
    return (api_version.rpartition("/")[0], str(obj.get("kind", "")), str(meta.get("namespace") or ""),
            str(meta.get("name", "")))


def duplicates(entries: Iterable[tuple[dict, object]]) -> list[tuple[tuple[dict, object], tuple[dict, object]]]:
    """(the first (object, source), the later one) for every object whose identity an earlier one has."""
    first: dict[tuple, tuple[dict, object]] = {}
    found = []
    for entry in entries:
        key = identity(entry[0])
        if key in first:
            found.append((first[key], entry))
        else:
            first[key] = entry
    return found
