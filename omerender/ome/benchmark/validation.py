"""What the API server and OME's BenchmarkJob admission webhook refuse, with their texts (benchmarks.md §1).

The CRD's enums and URL pattern (pkg/apis/ome/v1beta1/benchmark_job.go), then the webhook's checks in its order
(pkg/webhook/admission/benchmark/benchmark_webhook.go; v1.3 docs ``guides/deploy-models/run-benchmarks.md``,
"Admission rejects the BenchmarkJob", and ``concepts/serving/benchmarks.md``, "Traffic scenarios"): the endpoint,
the traffic scenarios (a task's defaults when none are given), ``additionalRequestParams``, the output URI.
The webhook stops at its first problem, and so does this.
"""
from __future__ import annotations

import math
import re

from omerender.errors import OmeError
from . import storage

TASKS = ("text-to-text", "image-to-text", "text-to-embeddings", "image-to-embeddings")
API_FORMATS = ("openai", "oci-cohere", "cohere")
ENGINES = ("vLLM", "SGLang", "TGI")
GPU_TYPES = ("H100", "A100", "MI300", "A10")
URL_PATTERN = re.compile(r"^(http|https)://")
# The webhook's patterns, searched as Go's MatchString searches (the text-to-text one anchors only its first and
# last alternative, so it is loose, as the v1.3 docs say); ASCII digits, as Go's \d; \Z, as Go's $ (which matches
# only at the end of the text, never before a final newline).
SCENARIO_PATTERNS = {
    "text-to-text": re.compile(r"^N\(\d+,\d+\)/\(\d+,\d+\)|U\(\d+,\d+\)(?:/\(\d+,\d+\))?|D\(\d+,\d+\)\Z", re.ASCII),
    "text-to-embeddings": re.compile(r"^E\(\d+,\d+\)\Z", re.ASCII),
    "image-to-text": re.compile(r"^I\(\d+,\d+(?:,\d+)?\)\Z", re.ASCII),
    "image-to-embeddings": re.compile(r"^I\(\d+,\d+(?:,\d+)?\)\Z", re.ASCII),
}
# The scenarios the webhook checks when none are given (genai-bench's defaults as the webhook lists them).
DEFAULT_SCENARIOS = {
    "text-to-text": ("N(480,240)/(300,150)", "D(100,100)", "D(100,1000)", "D(2000,200)", "D(7800,200)"),
    "image-to-text": ("I(512,512)", "I(1024,512)", "I(2048,2048)"),
    "text-to-embeddings": ("E(64)", "E(128)", "E(256)", "E(512)", "E(1024)"),
    "image-to-embeddings": ("I(512,512)",),
}
GO_FLOAT = re.compile(r"[+-]?(?:(?:\d+(?:_\d+)*\.?(?:\d+(?:_\d+)*)?|\.\d+(?:_\d+)*)(?:[eE][+-]?\d+(?:_\d+)*)?"
                      r"|0[xX](?:[0-9a-fA-F_]+\.?[0-9a-fA-F_]*|\.[0-9a-fA-F_]+)[pP][+-]?\d+"
                      r"|(?i:inf|infinity|nan))", re.ASCII)


def validate(spec: dict) -> None:
    """Raise :class:`OmeError` (with the field) for the first thing the API server or the webhook refuses."""
    _check_enums(spec)
    endpoint = spec.get("endpoint") or {}
    if endpoint.get("endpoint") is None and endpoint.get("inferenceService") is None:
        raise OmeError("invalid endpoint: endpoint or InferenceService must be specified", field="spec.endpoint")
    if endpoint.get("endpoint") is not None and endpoint.get("inferenceService") is not None:
        raise OmeError("invalid endpoint: endpoint and InferenceService cannot be specified together",
                       field="spec.endpoint")
    _check_scenarios(spec["task"], spec.get("trafficScenarios") or [])
    _check_request_params(spec.get("additionalRequestParams") or {})
    location = spec["outputLocation"]
    if location.get("storageUri") is None:
        raise OmeError("invalid storage: storageUri cannot be empty", field="spec.outputLocation.storageUri")
    try:
        storage.validate_uri(location["storageUri"])
    except storage.StorageURIError as err:
        raise OmeError(f"invalid storage: error parsing storage URI: {err}",
                       field="spec.outputLocation.storageUri") from None


def _check_enums(spec: dict) -> None:
    """The CRD's enums and pattern, as the API server words them."""
    _one_of(spec["task"], TASKS, "spec.task")
    url_endpoint = (spec.get("endpoint") or {}).get("endpoint")
    if url_endpoint is not None:
        _one_of(url_endpoint["apiFormat"], API_FORMATS, "spec.endpoint.endpoint.apiFormat")
        if not URL_PATTERN.search(url_endpoint["url"]):
            raise OmeError(f'spec.endpoint.endpoint.url: Invalid value: "{url_endpoint["url"]}": spec.endpoint.'
                           f'endpoint.url in body should match \'{URL_PATTERN.pattern}\'',
                           field="spec.endpoint.endpoint.url")
    metadata = spec.get("serviceMetadata")
    if metadata is not None:
        _one_of(metadata["engine"], ENGINES, "spec.serviceMetadata.engine")
        _one_of(metadata["gpuType"], GPU_TYPES, "spec.serviceMetadata.gpuType")
    for key in ("trafficScenarios", "numConcurrency"):   # +listType=set
        seen: set = set()
        for i, item in enumerate(spec.get(key) or []):
            if item in seen:
                raise OmeError(f'spec.{key}[{i}]: Duplicate value: {_shown(item)}', field=f"spec.{key}[{i}]")
            seen.add(item)


def _shown(item) -> str:
    return f'"{item}"' if isinstance(item, str) else str(item)


def _one_of(value: str, allowed: tuple, path: str) -> None:
    if value not in allowed:
        listed = ", ".join(f'"{a}"' for a in allowed)
        raise OmeError(f'{path}: Unsupported value: "{value}": supported values: {listed}', field=path)


def _check_scenarios(task: str, scenarios: list[str]) -> None:
    given = bool(scenarios)
    pattern = SCENARIO_PATTERNS[task]   # the CRD's enum admits only these tasks
    for i, scenario in enumerate(scenarios or DEFAULT_SCENARIOS[task]):
        if not pattern.search(scenario):
            where = f"spec.trafficScenarios[{i}]" if given else "spec.trafficScenarios"
            fix = "" if given else f" (the webhook checks {task}'s defaults when spec.trafficScenarios is empty)"
            raise OmeError(f"invalid traffic scenarios: failed to validate scenario '{scenario}': invalid scenario "
                           f"format for task '{task}': {scenario}{fix}", field=where)


def _check_request_params(params: dict) -> None:
    for key in sorted(params):   # Go ranges over the map in no fixed order; a fixed one keeps output stable
        value = params[key]
        path = f"spec.additionalRequestParams.{key}"
        if key == "temperature":
            problem = _go_float_problem(value)
            if problem:
                raise OmeError(f'invalid additional request parameters: invalid temperature: strconv.ParseFloat: '
                               f'parsing "{value}": {problem}', field=path)
        elif key == "ignore_eos" and value not in ("true", "false"):
            raise OmeError("invalid additional request parameters: ignore_eos must be 'true' or 'false'", field=path)


def _go_float_problem(text: str) -> str | None:
    """strconv.ParseFloat(text, 64)'s error, or None."""
    if not GO_FLOAT.fullmatch(text):
        return "invalid syntax"
    if text.lstrip("+-").lower() in ("inf", "infinity", "nan"):
        return None
    try:
        number = float.fromhex(text.replace("_", "")) if "x" in text.lower() else float(text)
    except (ValueError, OverflowError):
        return "value out of range"
    return "value out of range" if math.isinf(number) else None
