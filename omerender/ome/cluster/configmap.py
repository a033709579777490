"""The ConfigMap ``inferenceservice-config`` among the inputs: which one is OME's, and its data parsed once.

OME's controller reads ``inferenceservice-config`` in namespace ``ome`` (constants.OMENamespace,
constants.InferenceServiceConfigMapName; configmap.go getInferenceServiceConfigMap). A user copies it from the
cluster (``kubectl get configmap inferenceservice-config -n ome -o yaml``) into the repository; server fields
(``resourceVersion``, ``uid``, ``managedFields``...) are fine. omerender's decisions
(docs/how-to/cluster-config-and-ingress.md):

* it is an input, never an output (not even with ``--keep-inputs``: applying a copy holding the cluster's
  ``resourceVersion`` would fail, and the cluster's own ConfigMap is not the repository's to overwrite);
* in another namespace (a kustomization's ``namespace:`` moves it) it is still used, with a warning;
* two of them are an error naming both files, unless exactly one is in ``ome``: that one is used, with a warning;
* none: the Helm chart's defaults (:data:`CHART_DEFAULTS`), today's behaviour.
"""
from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, field

from omerender.errors import Message, ObjRef, OmeError, type_name
from omerender.yamlio.marks import InScalar
from omerender.yamlio.reading import parse_text
from . import parse
from .parse import ConfigError, Notes
from .settings import CHART_SOURCE, ClusterConfig

NAME = "inferenceservice-config"
NAMESPACE = "ome"
SHOWN = 3                 # json paths named per warning
UNKNOWN_SHOWN = 10        # unknown fields named in the warning listing those with no near miss
NEAR_MISS_CUTOFF = 0.85   # stricter than suggest's 0.6: OME has other ConfigMaps named like this one
CHART_FILE = os.path.join(os.path.dirname(__file__), "chart_defaults.yaml")


@dataclass
class Candidate:
    """A ConfigMap of the input: its object and file."""

    data: dict
    file: str
    origin: object = None   # omerender.yamlio.marks.Origin: where in ``file`` (messages name the line)

    @property
    def namespace(self) -> str | None:
        return (self.data.get("metadata") or {}).get("namespace") or None

    @property
    def ref(self) -> ObjRef:
        meta = self.data.get("metadata") or {}
        return ObjRef("ConfigMap", meta.get("name", ""), self.namespace, "v1", self.origin)


@dataclass
class Selection:
    """The cluster configuration chosen from the input, and what to tell the user about it."""

    config: ClusterConfig
    messages: list[Message] = field(default_factory=list)


def is_cluster_config(data: dict) -> bool:
    """Whether an input object is OME's cluster configuration (any namespace)."""
    return (data.get("kind") == "ConfigMap" and data.get("apiVersion") == "v1"
            and (data.get("metadata") or {}).get("name") == NAME)


def near_miss(data: dict) -> str | None:
    """A warning for a ConfigMap whose name is nearly OME's (``inferenceservices-config``), else None."""
    name = (data.get("metadata") or {}).get("name")
    if data.get("kind") == "ConfigMap" and name == NAME and data.get("apiVersion") != "v1":
        return (f"ConfigMap {NAME} has apiVersion {data.get('apiVersion')}, not v1: omerender passes it through and "
                f"does not read it as OME's cluster configuration")
    return near_name(data, NAME, "cluster configuration")


def near_name(data: dict, name: str, what: str) -> str | None:
    """A warning for a ConfigMap named nearly OME's ConfigMap ``name`` (its ``what``), which omerender would pass
    through unread; else None."""
    found = (data.get("metadata") or {}).get("name")
    if data.get("kind") != "ConfigMap" or not isinstance(found, str) or found == name or len(found) > 253:
        return None
    if difflib.SequenceMatcher(None, found, name).ratio() < NEAR_MISS_CUTOFF:
        return None
    return (f'ConfigMap {found} is not OME\'s {what}, which is named "{name}" (namespace {NAMESPACE}): '
            f"omerender passes it through and does not read it; did you mean \"{name}\"?")


def select(candidates: list[Candidate]) -> Selection:
    """The configuration from the input's ``inferenceservice-config`` ConfigMaps (see the module for the rules)."""
    if not candidates:
        return Selection(CHART_DEFAULTS)
    chosen, messages = choose(candidates, NAME, "as the cluster configuration")
    config, notes = parse_configmap(chosen)
    return Selection(config, messages + notes)


def choose(candidates: list[Candidate], name: str, use: str) -> tuple[Candidate, list[Message]]:
    """The one of ``candidates`` (OME's ConfigMap ``name``, at least one) OME reads: the one in ``ome``, else the
    only one, with a warning for each other and for one outside ``ome`` (``use``: what omerender uses it for);
    OmeError for several none of which, or more than one of which, is in ``ome``."""
    in_ome = [c for c in candidates if c.namespace == NAMESPACE]
    if len(candidates) > 1 and len(in_ome) != 1:
        first, second = candidates[0], candidates[1]
        raise OmeError(f"two ConfigMaps {name} in the inputs: {_where(first)} and {_where(second)}; OME reads one, "
                       f"in namespace {NAMESPACE}: keep one", second.ref, second.file, "metadata.name")
    chosen = in_ome[0] if in_ome else candidates[0]
    messages = [Message("warning", f"ConfigMap {name} is not used: OME reads the one in namespace {NAMESPACE} "
                        f"({chosen.file})", c.ref, c.file, "metadata.namespace", code="configmap-not-used")
                for c in candidates if c is not chosen]
    if chosen.namespace != NAMESPACE:
        messages.append(Message("warning", f"OME reads {name} from namespace {NAMESPACE}, not "
                                f"{chosen.namespace or '(none)'}; omerender uses this one {use}", chosen.ref,
                                chosen.file, "metadata.namespace", code="configmap-namespace"))
    return chosen, messages


def _where(candidate: Candidate) -> str:
    return f"{candidate.ref} ({candidate.file})"


def parse_configmap(candidate: Candidate) -> tuple[ClusterConfig, list[Message]]:
    """The ConfigMap's data parsed as OME parses it; OmeError (at the ConfigMap, naming the key) when OME
    would refuse it."""
    data = _data(candidate)
    source = f"{candidate.file}: {candidate.ref}"
    try:
        config, notes = parse_data(data, source, candidate.file)
    except ConfigError as err:
        inside = None if err.offset is None or candidate.origin is None else \
            InScalar(candidate.origin, f"data.{err.key}", err.offset)
        raise OmeError(f"data.{err.key}: {err.text}", candidate.ref, candidate.file, f"data.{err.key}",
                       inside) from None
    older = _older_ome(data, candidate, notes)
    return config, _note_messages(notes, candidate, skip=OLDER_FIELDS if older else frozenset()) + older


# What OME v1.3 does without each data key its Helm chart writes (chart_defaults.yaml; the loaders' defaults in
# parse.py): a ConfigMap from an older OME, or one written by hand, lacks some.
ABSENT = {
    parse.INGRESS: "ingress creation is on, with a Kubernetes Ingress at <name>.<namespace>.example.com",
    parse.DEPLOY: "no replica bounds or termination grace period are filled in",
    parse.PDB: "a component that sets no budget gets no PodDisruptionBudget",
    parse.ACCELERATORS: "nvidia.com/gpu is the only resource counted as a GPU",
    parse.METRICS_AGGREGATOR: 'each pod gets ome.io/enable-metric-aggregation and ome.io/enable-prometheus-scraping '
                              'set to ""',
}


# Fields of the ingress key that OME's own config/ ConfigMap still carries from older releases (KServe's local
# gateway) and that OME v1.3 ignores: in a ConfigMap the older-ome-configmap info explains, they are named there,
# not warned about one by one, so OME's own ConfigMap passes --strict.
OLDER_FIELDS = frozenset({(parse.INGRESS, "knativeLocalGatewayService"), (parse.INGRESS, "localGateway"),
                          (parse.INGRESS, "localGatewayService")})


def _older_ome(data: dict, candidate: Candidate, notes: Notes) -> list[Message]:
    """One info naming the keys OME v1.3's chart writes that the ConfigMap lacks, and the defaults OME v1.3 uses
    instead of each, and the fields of older releases it carries (:data:`OLDER_FIELDS`)."""
    missing = [key for key in ABSENT if key not in data]
    if not missing:
        return []
    effects = "; ".join(f"without {key}, {ABSENT[key]}" for key in missing)
    older = sorted(f"{key}.{path}" for key, path in dict.fromkeys(notes.unknown) if (key, path) in OLDER_FIELDS)
    carried = f"; it also sets {', '.join(older)}, which older releases read and OME v1.3 ignores" if older else ""
    return [Message("info", f"data: lacks {', '.join(missing)}, which OME v1.3's Helm chart writes (this ConfigMap "
                            f"may come from an older OME): OME v1.3 uses its defaults instead: {effects}{carried}",
                    candidate.ref, candidate.file, "data", code="older-ome-configmap")]


def _data(candidate: Candidate) -> dict:
    obj = candidate.data
    if obj.get("binaryData"):
        raise OmeError("binaryData: OME reads only data; move the keys to data, as strings", candidate.ref,
                       candidate.file, "binaryData")
    data = obj.get("data")
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise OmeError(f"data: Invalid value: \"{type_name(data)}\": must be a map of strings", candidate.ref,
                       candidate.file, "data")
    for key, value in data.items():
        if not isinstance(value, str):
            raise OmeError(f"data.{key}: Invalid value: \"{type_name(value)}\": a ConfigMap's data values are "
                           f"strings; write the JSON as a block (`{key}: |`)", candidate.ref, candidate.file,
                           f"data.{key}")
    return data


def parse_data(data: dict, source: str, file: str | None) -> tuple[ClusterConfig, Notes]:
    """Every key omerender reads, parsed; :class:`ConfigError` for the first OME refuses (in OME's order)."""
    notes = Notes()
    # OME loads the InferenceServicesConfig (podMonitor, acceleratorResources, podDisruptionBudget) first, then
    # the ingress and deploy configs (inferenceservice controller's Reconcile).
    pod_monitor = parse.parse_pod_monitor(data, notes)
    accelerators = parse.parse_accelerator_resources(data, notes)
    budgets = parse.parse_pdb(data, notes)
    ingress = parse.parse_ingress(data, notes)
    deploy = parse.parse_deploy(data, notes)
    # The AutoscalerPolicy resolver's config, loaded per reconcile (NewAutoscalerPolicyConfigCached) when a
    # component's policy renders; refused here like the others, so a broken key never passes silently.
    autoscaler_policy = parse.parse_autoscaler_policy(data, notes)
    # The pod webhook's key: read for every pod it mutates (render.md §17).
    metrics_aggregator = parse.parse_metrics_aggregator(data, notes)
    parse.check_agent_keys(data, notes)
    return ClusterConfig(source, ingress, pod_monitor, deploy, budgets, accelerators, file=file, keys=frozenset(data),
                         fields=frozenset(notes.fields), autoscaler_policy=autoscaler_policy,
                         metrics_aggregator=metrics_aggregator), notes


def _note_messages(notes: Notes, candidate: Candidate, skip: frozenset = frozenset()) -> list[Message]:
    def warn(key: str, text: str, code: str, path: str | None = None) -> Message:
        """At the key, or with ``path`` (an unknown field) at that field inside the key's value."""
        at = notes.starts.get((key, path)) if path is not None and candidate.origin is not None else None
        inside = None if at is None else InScalar(candidate.origin, f"data.{key}", at)
        return Message("warning", f"data.{key}: {text}", candidate.ref, candidate.file, f"data.{key}", inside,
                       code=code)

    messages = []
    for key in parse.KEYS:
        duplicates = list(dict.fromkeys(p for k, p in notes.duplicates if k == key))
        unknown = list(dict.fromkeys(p for k, p in notes.unknown if k == key and (k, p) not in skip))
        folded = list(dict.fromkeys((a, b) for k, a, b in notes.folded if k == key))
        if duplicates:
            messages.append(warn(key, f"{_some(duplicates)} {_verb(duplicates)} given more than once; OME uses the "
                                      f"last one", "duplicate-field"))
        near = [p for p in unknown if (key, p) in notes.near]
        messages += [warn(key, f'unknown field {p} is ignored, as OME ignores it; did you mean '
                               f'"{notes.near[key, p]}"?', "unknown-field", p) for p in near]
        unknown = [p for p in unknown if (key, p) not in notes.near]
        if unknown:
            several = len(unknown) > 1
            messages.append(warn(key, f"unknown field{'s' if several else ''} {_some(unknown, UNKNOWN_SHOWN)} "
                                      f"{_verb(unknown)} ignored, as OME ignores {'them' if several else 'it'}",
                                 "unknown-field", unknown[0]))
        messages += [warn(key, f"{a} is read as {b} (OME matches field names ignoring case); write {b}", "field-case")
                     for a, b in folded[:SHOWN]]
        messages += [warn(key, text, "config-value") for k, text in notes.odd[:SHOWN] if k == key]
    longest = max(len(k) for k in parse.KEYS)
    for key in sorted(candidate.data.get("data") or {}):
        near = difflib.get_close_matches(key, parse.KEYS, n=1, cutoff=NEAR_MISS_CUTOFF) if len(key) <= 2 * longest \
            else []
        if key not in parse.KEYS and near:
            messages.append(warn(key, f'OME does not read a key {key}; did you mean "{near[0]}"?',
                                 "unknown-config-key"))
    return messages


def _some(paths: list[str], limit: int = SHOWN) -> str:
    """Up to ``limit`` paths, then how many more: a hostile ConfigMap can't flood the output."""
    shown = ", ".join(paths[:limit])
    return shown if len(paths) <= limit else f"{shown} and {len(paths) - limit} more"


def _verb(paths: list[str]) -> str:
    return "are" if len(paths) > 1 else "is"


def _chart_defaults() -> ClusterConfig:
    with open(CHART_FILE, encoding="utf-8") as stream:
        doc = parse_text(stream.read(), CHART_FILE)[0]
    config, notes = parse_data(doc.data["data"], CHART_SOURCE, None)
    assert not (notes.duplicates or notes.unknown or notes.folded), "the vendored chart ConfigMap reads cleanly"
    return config


CHART_DEFAULTS: ClusterConfig = _chart_defaults()
