"""What genai-bench is pointed at: the arguments OME's controller derives from a BenchmarkJob's endpoint
(benchmarks.md §2).

A URL endpoint gives them as written. An InferenceService endpoint is resolved within the input, from the objects
omerender renders for that InferenceService, as OME reads them from the cluster (v1.3 docs
``concepts/serving/benchmarks.md``, "An InferenceService"; Go ``pkg/controller/v1beta1/benchmark/utils/utils.go``):

* the base URL is the scheme and host of the InferenceService's ``status.url``, which OME sets to its external
  Service ``http://<name>.<namespace>.svc.cluster.local:<port>`` with ingress creation off (controller.go
  setExternalServiceURL; v0.1.5, which v1.3's docs confirm by example), or with it on to the Ingress's host and the
  fronted component's port (raw_ingress_strategy.go) or to the HTTPRoute's host alone (gateway_api_strategy.go);
* the API format is ``PROTOCOL_VERSION`` of ``spec.engine.runner.env``, else ``openai``;
* the model name (since v1.3) is the engine pods' ``--served-model-name``, else ``--model`` or ``--model-path``,
  with ``$(VAR)`` expanded as the kubelet expands the engine's arguments (:mod:`omerender.kube.envexpand`), since
  that is the name the engine serves, and written into the Job's arguments escaped (``$`` as ``$$``), since the
  kubelet expands those too: genai-bench receives the served name exactly (benchmarks.md §2 has the decision, and
  where OME's controller differs). omerender reads the rendered engine pod template, which is what those pods are
  made from;
* the tokenizer is the model's ``storage.path``, mounted read-only from the node.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from omerender.errors import OmeError
from omerender.kube.envexpand import container_env, escape, expand_argument, unresolved
from omerender.suggest import did_you_mean
from ..load import Obj

CLUSTER_DOMAIN = "svc.cluster.local"
SERVED_NAME_FLAG, VLLM_MODEL_FLAG, SGLANG_MODEL_FLAG = "--served-model-name", "--model", "--model-path"
URL_SCHEME_ANNOTATION = "ome.io/ingress-url-scheme"


@dataclass
class Rendered:
    """One InferenceService of the input and what its render produced."""

    isvc: Obj
    model: Obj | None = None
    objects: list[dict] = field(default_factory=list)
    failed: bool = False      # its render failed; its own error says why


@dataclass(frozen=True)
class Target:
    """genai-bench's view of the endpoint."""

    api_backend: str
    api_base: str
    model_name: str          # --api-model-name as written into the Job's arguments
    api_key: str = ""
    tokenizer: str = ""
    model: Obj | None = None
    warnings: tuple[str, ...] = ()   # what the Job will do that its author may not expect


def url_target(endpoint: dict) -> Target:
    return Target(endpoint["apiFormat"], endpoint["url"], endpoint.get("modelName") or "")


def isvc_target(ref: dict, rendered: dict[tuple[str, str], Rendered], url_scheme: str, owner: object) -> Target | None:
    """The target of ``spec.endpoint.inferenceService``; None when that InferenceService failed to render.
    ``owner`` (the Inputs) bounds the work of the "did you mean" search."""
    namespace, name = ref["namespace"], ref["name"]
    found = rendered.get((namespace, name))
    if found is None:
        guess = did_you_mean(name, lambda: [n for ns, n in rendered if ns == namespace], len(rendered), owner)
        raise OmeError(f"failed to get InferenceService {namespace}/{name}: it is not in the inputs; OME creates the "
                       f"Job only for an InferenceService it serves: add it, or benchmark a URL with "
                       f"spec.endpoint.endpoint{guess}", field="spec.endpoint.inferenceService")
    if found.failed:
        return None
    isvc = found.isvc
    model_name = (isvc.spec.get("model") or {}).get("name")
    if not model_name:
        raise OmeError(f"InferenceService {namespace}/{name} has no Model defined: OME can't benchmark an "
                       f"InferenceService that names only a runtime", field="spec.endpoint.inferenceService")
    path = ((found.model.spec.get("storage") or {}).get("path") if found.model is not None else None)
    if not path:
        raise OmeError(f"BaseModel {model_name} has missing Storage or Path information: OME reads the tokenizer "
                       f"from the model's storage.path on the node, so it can't benchmark a model without one (such "
                       f"as a pvc:// model)", field="spec.endpoint.inferenceService")
    served, unknown = _served_model_name(found)   # before the URL, in the controller's order
    notes = (_unknown_note(found, served, unknown), _prefix_note(found))
    return Target(_api_backend(isvc), _base_url(found, url_scheme), escape(served), "sample-key", path, found.model,
                  tuple(note for note in notes if note))


def _unknown_note(found: Rendered, served: str, unknown: list[str]) -> str:
    """A served name that names a variable only the cluster resolves: neither OME nor omerender knows its value."""
    if not unknown:
        return ""
    isvc = found.isvc
    named = ", ".join(unknown)
    return (f"the served model name of InferenceService {isvc.namespace}/{isvc.name}, {served}, refers to {named}, "
            f"whose value the cluster sets (valueFrom): OME reads only literal values, so genai-bench asks for the model "
            f"{served} and the engine rejects requests for a model it doesn't serve; write the name literally in the "
            f"runtime's --served-model-name, or benchmark a URL with spec.endpoint.endpoint and its modelName")


def _prefix_note(found: Rendered) -> str:
    """OME passes only the scheme and host of ``status.url``: behind a shared-host HTTPRoute (v1.3's default
    Gateway API scheme, docs guides/networking/gateway-host-schemes.md) the path prefix is lost."""
    isvc = found.isvc
    entry = next((o for o in found.objects if o["kind"] == "HTTPRoute" and o["metadata"]["name"] == isvc.name), None)
    rules = (entry or {}).get("spec", {}).get("rules") or [{}]
    prefix = ((rules[0].get("matches") or [{}])[0].get("path") or {}).get("value", "/")
    if prefix in ("/", ""):
        return ""
    return (f"InferenceService {isvc.namespace}/{isvc.name} is on the shared host with the path prefix {prefix}, and "
            f"OME gives genai-bench only the scheme and host of its URL, so requests miss the prefix; give it its own "
            f"hostname (annotation ome.io/ingress-per-isvc-subdomain: \"true\") or benchmark a URL with "
            f"spec.endpoint.endpoint")


def _api_backend(isvc: Obj) -> str:
    runner = ((isvc.spec.get("engine") or {}).get("runner") or {})
    for env in runner.get("env") or []:
        if isinstance(env, dict) and env.get("name") == "PROTOCOL_VERSION":
            return env.get("value") or "openai"
    return "openai"


def _base_url(found: Rendered, url_scheme: str) -> str:
    isvc = found.isvc
    by_kind: dict[str, list[dict]] = {}
    for obj in found.objects:
        by_kind.setdefault(obj["kind"], []).append(obj)
    services = {s["metadata"]["name"]: s for s in by_kind.get("Service", [])}
    external = services.get(isvc.name)
    if external is not None:
        return f"http://{isvc.name}.{isvc.namespace}.{CLUSTER_DOMAIN}:{external['spec']['ports'][0]['port']}"
    scheme = (isvc.metadata.get("annotations") or {}).get(URL_SCHEME_ANNOTATION) or url_scheme or "http"
    fronted = services.get(f"{isvc.name}-router") or services.get(f"{isvc.name}-engine")
    ingress_host = next((rule["host"] for ingress in by_kind.get("Ingress", [])
                         for rule in ingress["spec"].get("rules") or [] if rule.get("host")), None)
    if ingress_host is not None and fronted is not None:   # raw_ingress_strategy: the host and the Service's port
        return f"{scheme}://{ingress_host}:{fronted['spec']['ports'][0]['port']}"
    entry = next((r for r in by_kind.get("HTTPRoute", []) if r["metadata"]["name"] == isvc.name), None)
    if entry is not None and entry["spec"].get("hostnames"):   # gateway_api_strategy: the host alone
        return f"{scheme}://{entry['spec']['hostnames'][0]}"
    raise OmeError(f"InferenceService {isvc.namespace}/{isvc.name} has no URL.Host in status: it gets neither the "
                   f"external Service nor an ingress route (it is cluster-local, or renders no workload), so OME "
                   f"never sets its URL and never creates the Job; benchmark a URL with spec.endpoint.endpoint "
                   f"instead", field="spec.endpoint.inferenceService")


def _served_model_name(found: Rendered) -> tuple[str, list[str]]:
    """The name the engine serves, and the variables it still refers to whose value only the cluster knows."""
    isvc = found.isvc
    location: tuple[str, list[str]] = ("", [])
    for pod in _engine_pods(found):
        for container in pod.get("containers") or []:
            argv = list(container.get("command") or []) + list(container.get("args") or [])
            name = _flag_value(argv, SERVED_NAME_FLAG)
            if name:
                return _as_run(name, container)
            if not location[0]:
                value = _flag_value(argv, VLLM_MODEL_FLAG) or _flag_value(argv, SGLANG_MODEL_FLAG)
                location = _as_run(value, container) if value else location
    if location[0]:
        return location
    raise OmeError(f"cannot determine the served model name of InferenceService {isvc.namespace}/{isvc.name}: no "
                   f"engine pod container specifies {SERVED_NAME_FLAG}, {VLLM_MODEL_FLAG} or {SGLANG_MODEL_FLAG}",
                   field="spec.endpoint.inferenceService")


def _as_run(value: str, container: dict) -> tuple[str, list[str]]:
    """``value``, an argument of ``container``, as the kubelet hands it to the engine."""
    env = container_env(container)
    return expand_argument(value, env), unresolved(value, env)


def _engine_pods(found: Rendered) -> list[dict]:
    """The engine's pod specs, leader before worker (OME lists the pods labelled component=engine)."""
    pods = []
    for obj in found.objects:
        spec = obj.get("spec") or {}
        if obj["kind"] == "Deployment":
            templates = [spec.get("template") or {}]
        elif obj["kind"] == "LeaderWorkerSet":
            group = spec.get("leaderWorkerTemplate") or {}
            templates = [group.get("leaderTemplate") or {}, group.get("workerTemplate") or {}]
        else:
            continue
        for template in templates:
            if ((template.get("metadata") or {}).get("labels") or {}).get("component") == "engine":
                pods.append(template.get("spec") or {})
    return pods


def _flag_value(argv: list, flag: str) -> str:
    """The first value of ``flag``, written ``--flag value`` or ``--flag=value``."""
    for i, arg in enumerate(argv):
        if not isinstance(arg, str):
            continue
        if arg.startswith(flag + "="):
            return arg[len(flag) + 1:]
        if arg == flag and i + 1 < len(argv) and isinstance(argv[i + 1], str) and not argv[i + 1].startswith("-"):
            return argv[i + 1]
    return ""
