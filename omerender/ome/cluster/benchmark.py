"""OME's ConfigMap ``benchmarkjob-config`` among the inputs: the genai-bench image and resources of benchmark pods
(benchmarks.md §4).

OME's controller reads the data key ``benchmarkjob`` of ``benchmarkjob-config`` in its namespace for every
BenchmarkJob it reconciles (constants.BenchmarkJobConfigMapName; controllerconfig.NewBenchmarkJobConfig, which
decodes it with encoding/json into ``{"podConfig": {image, cpuRequest, memoryRequest, cpuLimit, memoryLimit}}``).
It is a ConfigMap of its own, not a key of ``inferenceservice-config`` (OME v1.3 docs,
``getting-started/private-registries.md``; the ome-resources chart's ``ome-controller/configmap.yaml``). As for
``inferenceservice-config`` (configmap.py), a copy in the repository is an input, never an output; without one,
the Helm chart's defaults (``chart_benchmark_defaults.yaml``) apply.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from omerender.errors import Message, OmeError
from omerender.gorules import gojson
from omerender.gorules.gojson import STRING, Decoded, GoJSONError, struct
from omerender.kube.quantities import parse_quantity
from omerender.yamlio.reading import parse_text as parse_yaml
from .configmap import Candidate, _data, choose, near_name
from .settings import CHART_SOURCE

CHART_FILE = os.path.join(os.path.dirname(__file__), "chart_benchmark_defaults.yaml")
NAME = "benchmarkjob-config"
KEY = "benchmarkjob"
POD_CONFIG = ("image", "cpuRequest", "memoryRequest", "cpuLimit", "memoryLimit")
CONFIG_TYPE = struct("controllerconfig.BenchmarkJobConfig",
                     ("podConfig", struct("controllerconfig.PodConfig", *((k, STRING) for k in POD_CONFIG))))


@dataclass(frozen=True)
class BenchmarkJobConfig:
    """Go BenchmarkJobConfig.PodConfig, and where it came from (``source``, for messages)."""

    image: str
    cpu_request: str
    memory_request: str
    cpu_limit: str
    memory_limit: str
    source: str = CHART_SOURCE
    file: str | None = None   # the ConfigMap's file; None: the chart's defaults

    def settings(self) -> list[tuple[str, str, str]]:
        """(setting, value, source) for ``omerender config``, as cluster/view.py words its sources."""
        source = f"configmap {self.file}" if self.file else "chart default"
        values = (self.image, self.cpu_request, self.memory_request, self.cpu_limit, self.memory_limit)
        return [(f"{KEY}.podConfig.{key}", value, source) for key, value in zip(POD_CONFIG, values)]


def is_benchmark_config(data: dict) -> bool:
    return (data.get("kind") == "ConfigMap" and data.get("apiVersion") == "v1"
            and (data.get("metadata") or {}).get("name") == NAME)


def near_miss(data: dict) -> str | None:
    """A warning for a ConfigMap named nearly ``benchmarkjob-config``, which omerender would pass through unread."""
    return near_name(data, NAME, "BenchmarkJob configuration")


def select(candidates: list[Candidate]) -> tuple[BenchmarkJobConfig, list[Message]]:
    """The input's ``benchmarkjob-config`` (the one in ``ome`` when there are several), else the chart's."""
    if not candidates:
        return CHART_DEFAULT, []
    chosen, messages = choose(candidates, NAME, "for BenchmarkJobs")
    return parse_candidate(chosen), messages


def parse_candidate(candidate: Candidate) -> BenchmarkJobConfig:
    try:
        return parse_text(_data(candidate).get(KEY), f"{candidate.file}: {candidate.ref}", candidate.file)
    except ValueError as err:
        raise OmeError(f"data.{KEY}: {err}", candidate.ref, candidate.file, f"data.{KEY}") from None


def parse_text(text: str | None, source: str, file: str | None = None) -> BenchmarkJobConfig:
    """The key as OME decodes it; ValueError with OME's text, or for values its controller cannot use (it parses
    each quantity with resource.MustParse, which panics on a bad or empty one)."""
    pod: dict = {}
    if text is not None:
        try:
            pod = (gojson.decode(gojson.scan(text), CONFIG_TYPE, Decoded()) or {}).get("podConfig") or {}
        except GoJSONError as err:
            raise ValueError(f"unable to unmarshall {KEY} json string due to {err} ") from None
    values = {key: pod.get(key, "") for key in POD_CONFIG}
    for key in POD_CONFIG[1:]:
        try:
            parse_quantity(values[key], f"podConfig.{key}")
        except OmeError:
            raise ValueError(f'podConfig.{key}: "{values[key]}" is not a quantity, and OME\'s controller fails on '
                             f"every BenchmarkJob with it (resource.MustParse); set it, such as \"2\" or "
                             f"\"2Gi\"") from None
    return BenchmarkJobConfig(values["image"], values["cpuRequest"], values["memoryRequest"], values["cpuLimit"],
                              values["memoryLimit"], source, file)


def _chart_default() -> BenchmarkJobConfig:
    with open(CHART_FILE, encoding="utf-8") as stream:
        doc = parse_yaml(stream.read(), CHART_FILE)[0]
    return parse_text(doc.data["data"][KEY], CHART_SOURCE)


CHART_DEFAULT: BenchmarkJobConfig = _chart_default()
