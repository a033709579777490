"""Adversarial inputs of about 1 MB (issue 24, "a work budget, not only a byte budget").

Each shape is small in bytes but asks for work that grows with the product of two counts (runtimes times
InferenceServices, classes times InferenceServices) or with something that prints nothing. The target:
``omerender render`` on each finishes, or stops with a limit error, within 10 s and 500 MB.

    PYTHONPATH=. python benchmarks/adversarial.py DIR [--size BYTES] [--only NAME,...] [--timeout S]

writes ``DIR/NAME/inputs.yaml`` per shape, runs ``python -m omerender render`` on each (with this Python, so
``PYTHONPATH`` chooses the tree) under ``/usr/bin/time``, with stdout and stderr in files beside the input, and
prints a Markdown table: size, CPU seconds (user + system), wall seconds, peak RSS, exit code, stdout bytes, stderr
lines, and the first error line of stderr (else its first line). Shapes of the cluster ConfigMap, ingress,
PodMonitors and AutoscalerPolicies check output and message volume too. The render is one thread, so on an idle machine its wall time is its CPU
time; the target is judged on CPU seconds, which other load on a shared machine disturbs far less than wall
time. Every shape is generated, so it is the same on every run.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Iterator

API = "ome.io/v1beta1"
NS = "adv"
ENTRY = {"modelFormat": {"name": "safetensors", "version": "1.0.0"},
         "modelFramework": {"name": "transformers", "version": "4.45.0"},
         "modelArchitecture": "LlamaForCausalLM", "autoSelect": True}
RUNNER = {"name": "ome-container", "image": "img"}


def _doc(obj: dict) -> str:
    return "---\n" + json.dumps(obj, separators=(",", ":")) + "\n"  # JSON is YAML: flow style, compact


def _model(name: str, size: str = "8B") -> dict:
    return {"apiVersion": API, "kind": "ClusterBaseModel", "metadata": {"name": name},
            "spec": {"modelFormat": {"name": "safetensors", "version": "1.0.0"},
                     "modelFramework": {"name": "transformers", "version": "4.45.0"},
                     "modelArchitecture": "LlamaForCausalLM", "modelParameterSize": size,
                     "storage": {"storageUri": "hf://meta-llama/Llama-3.1-8B", "path": f"/raid/models/{name}"}}}


def _runtime(name: str, **spec) -> dict:
    body = {"supportedModelFormats": [ENTRY], "engineConfig": {"runner": dict(RUNNER)}}
    body.update(spec)
    return {"apiVersion": API, "kind": "ClusterServingRuntime", "metadata": {"name": name}, "spec": body}


def _isvc(name: str, model: str, runtime: str | None = None, **spec) -> dict:
    body: dict = {"model": {"name": model}, "engine": {"minReplicas": 1}}
    if runtime:
        body["runtime"] = {"name": runtime}
    body.update(spec)
    return {"apiVersion": API, "kind": "InferenceService", "metadata": {"name": name, "namespace": NS},
            "spec": body}


def _until(budget: int, docs: Iterator[str]) -> str:
    """Documents from ``docs`` while the text stays within ``budget`` bytes."""
    out, used = [], 0
    for doc in docs:
        if used + len(doc) > budget:
            break
        out.append(doc)
        used += len(doc)
    return "".join(out)


def _annotated_isvcs(size: int, head: str, annotations: Callable[[int], dict], name: str = "s-{:05d}") -> str:
    """``head``, then InferenceServices of model m and runtime rt, the i-th with ``annotations(i)``, within ``size``."""
    def isvc(i: int) -> dict:
        body = _isvc(name.format(i), "m", "rt")
        body["metadata"]["annotations"] = annotations(i)
        return body
    return head + _until(size - len(head), (_doc(isvc(i)) for i in range(10**6)))


# ---------------------------------------------------------------- the shapes

def selection(size: int, distinct_models: bool = False) -> str:
    """Runtimes that all qualify for the model times auto-selected InferenceServices (1,400 x 2,800 at 1 MB)."""
    head = "".join(_doc(_runtime(f"rt-{i:05d}", modelSizeRange={"min": "1B", "max": f"{9 + i % 50}B"}))
                   for i in range(size * 2 // 5 // 290))
    models = max(1, size // 5 // 330) if distinct_models else 1
    head += "".join(_doc(_model(f"m-{i:05d}", f"{1 + i % 8}.{i:05d}B")) for i in range(models))
    return head + _until(size - len(head), (_doc(_isvc(f"s-{i:05d}", f"m-{i % models:05d}")) for i in range(10**6)))


def selection_models(size: int) -> str:
    """:func:`selection` with a distinct model (and size) per group of InferenceServices."""
    return selection(size, distinct_models=True)


def env_copies(size: int) -> str:
    """One runtime with 20,000 env entries, named by as many InferenceServices as fit."""
    env = [{"name": f"E{i}", "value": "v"} for i in range(20_000)]
    runtime = _runtime("big", engineConfig={"runner": {**RUNNER, "env": env}})
    head = _doc(runtime) + _doc(_model("m"))
    return head + _until(size - len(head), (_doc(_isvc(f"s-{i:05d}", "m", "big")) for i in range(10**6)))


def list_copies(size: int) -> str:
    """One runtime whose argument list packs the most values into the bytes (``[a,a,...]``, 2 bytes a value),
    named by as many InferenceServices as fit: the most a 1 MB input can make the render copy."""
    runtime = json.dumps(_runtime("big"), separators=(",", ":"))
    args = "[" + ",".join(["a"] * (size * 6 // 10 // 2)) + "]"
    head = "---\n" + runtime.replace('"image":"img"', f'"image":"img","args":{args}') + "\n" + _doc(_model("m"))
    return head + _until(size - len(head), (_doc(_isvc(f"s-{i:05d}", "m", "big")) for i in range(10**6)))


def silent_placeholders(size: int) -> str:
    """Arguments of ``{{""}}`` repeated (10,000 per value, the per-value limit): each prints nothing but costs
    an action to run, for every InferenceService that names the runtime."""
    args = ['{{""}}' * 10_000] * (size * 3 // 4 // 60_000)
    runtime = _runtime("rt", engineConfig={"runner": {**RUNNER, "args": args}})
    head = _doc(runtime) + _doc(_model("m"))
    return head + _until(size - len(head), (_doc(_isvc(f"s-{i:05d}", "m", "rt")) for i in range(10**6)))


def accelerator_classes(size: int, count: int | None = None, isvcs: int = 10**6) -> str:
    """Accelerator classes times InferenceServices that choose among them by policy (2,400 x 2,400)."""
    count = count or size // 2 // 200
    classes = "".join(_doc({"apiVersion": API, "kind": "AcceleratorClass", "metadata": {"name": f"gpu-{i:05d}"},
                            "spec": {"discovery": {"nodeSelector": {"gpu": f"g{i}"}},
                                     "resources": [{"name": "nvidia.com/gpu", "quantity": "1"}],
                                     "cost": {"perHour": str(1 + i % 97)}}})
                      for i in range(count))
    names = [f"gpu-{i:05d}" for i in range(count)]
    runtime = _runtime("rt", acceleratorRequirements={"acceleratorClasses": names})
    head = classes + _doc(runtime) + _doc(_model("m"))
    return head + _until(size - len(head), (_doc(_isvc(f"s-{i:05d}", "m", "rt",
                                                       acceleratorSelector={"policy": "Cheapest"}))
                                            for i in range(isvcs)))


def accelerator_classes_copyable(size: int) -> str:
    """:func:`accelerator_classes` with 950 classes and 1,000 InferenceServices: the pools they copy stay under the
    copied-values limit, so the class matching itself is what is measured."""
    return accelerator_classes(size, 950, 1_000)


def _quantity(value: str) -> Callable[[int], str]:
    def shape(size: int) -> str:
        runtime = _runtime("rt", engineConfig={"runner": {**RUNNER, "resources": {
            "limits": {"nvidia.com/gpu": value}}}})
        return _doc(runtime) + _doc(_model("m")) + _doc(_isvc("s", "m", "rt"))
    shape.__doc__ = f"A GPU quantity {value!r}."
    return shape


# ---------------------------------------------------------------- cluster configuration, ingress, monitoring

INGRESS = {"ingressGateway": "istio-system/ingress-gateway", "ingressService": "istio-ingressgateway.istio-system.svc",
           "disableIngressCreation": False}


def _configmap(**data: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "inferenceservice-config", "namespace": "ome"}, "data": data}


def _json_shape(make: Callable[[int], str], doc: str) -> Callable[[int], str]:
    """A ConfigMap whose ``ingress`` key is the JSON text ``make(size)``, and one InferenceService to render."""
    def shape(size: int) -> str:
        return (_doc(_configmap(ingress=make(size - 1500))) + _doc(_runtime("rt")) + _doc(_model("m"))
                + _doc(_isvc("s", "m", "rt")))
    shape.__doc__ = doc
    return shape


def _nested(size: int) -> str:
    return "[" * (size // 2) + "]" * (size // 2)


def _many_keys(size: int) -> str:
    return "{" + json.dumps(INGRESS)[1:-1] + "," + ",".join(f'"k{i}":0' for i in range(size // 13)) + "}"


def _duplicate_keys(size: int) -> str:
    body = json.dumps(INGRESS)[1:-1]
    return "{" + body + "," + ",".join(['"ingressDomain":"a.io"'] * (size // 28)) + "}"


def _case_keys(size: int) -> str:
    body = json.dumps(INGRESS)[1:-1]
    return "{" + body + "," + ",".join(['"INGRESSDOMAIN":"a.io"'] * (size // 28)) + "}"


def _huge_number(size: int) -> str:
    return '{"ingressGateway":"a/b","ingressService":"s","defaultRouteTimeoutSeconds":1' + "0" * size + "}"


def _long_gateway(i: int) -> dict:
    return {"omeIngressGateway": f"{'n' * 63}/{'g' * 250}{i:03d}"[:317], "ingressDomain": f"{'d' * 60}{i}.example.com",
            "class": f"c{i}"}


def ingress_gateways(size: int) -> str:
    """15 additional Gateways with the longest names, and InferenceServices with a router and a decoder: each
    renders 4 HTTPRoutes of 16 parentRefs and hostnames (output amplification)."""
    config = {**INGRESS, "enableGatewayAPI": True, "omeIngressGateway": _long_gateway(99)["omeIngressGateway"],
              "additionalIngressGateways": [_long_gateway(i) for i in range(15)]}
    runtime = _runtime("rt", routerConfig={"runner": dict(RUNNER)}, decoderConfig={"runner": dict(RUNNER)})
    head = _doc(_configmap(ingress=json.dumps(config))) + _doc(runtime) + _doc(_model("m"))
    return head + _until(size - len(head), (_doc(_isvc(f"s-{i:05d}", "m", "rt", router={"minReplicas": 1},
                                                       decoder={"minReplicas": 1})) for i in range(10**6)))


def ingress_annotation_gateways(size: int) -> str:
    """One InferenceService whose ``ome.io/ingress-additional-gateways`` JSON holds as many Gateways as fit."""
    gateways = json.dumps([{"omeIngressGateway": f"ns/g{i}", "ingressDomain": "a.io"} for i in range(size // 70)])
    isvc = _isvc("s", "m", "rt")
    isvc["metadata"]["annotations"] = {"ome.io/ingress-additional-gateways": gateways}
    config = {**INGRESS, "enableGatewayAPI": True, "omeIngressGateway": "ns/gw"}
    return _doc(_configmap(ingress=json.dumps(config))) + _doc(_runtime("rt")) + _doc(_model("m")) + _doc(isvc)


def namespace_gateways(size: int) -> str:
    """``namespaceIngressGateways`` for as many namespaces as fit, and InferenceServices in a few of them."""
    spaces = {f"ns-{i:06d}": {"primary": {"omeIngressGateway": f"gw/g{i}", "ingressDomain": "b.io"},
                              "additional": [{"omeIngressGateway": f"gw/h{i}", "ingressDomain": "a.io"}]}
              for i in range(size * 3 // 4 // 150)}
    config = {**INGRESS, "enableGatewayAPI": True, "omeIngressGateway": "ns/gw", "namespaceIngressGateways": spaces}
    head = _doc(_configmap(ingress=json.dumps(config))) + _doc(_runtime("rt")) + _doc(_model("m"))
    isvcs = ({**_isvc(f"s-{i:05d}", "m", "rt"), "metadata": {"name": f"s-{i:05d}", "namespace": f"ns-{i:06d}"}}
             for i in range(10**6))
    return head + _until(size - len(head), (_doc(isvc) for isvc in isvcs))


def domain_template(size: int) -> str:
    """A ``domainTemplate`` printing a 200 kB annotation 5 times, for every InferenceService that fits."""
    config = {**INGRESS, "domainTemplate": "{{.Annotations.a}}" * 5 + ".{{.Namespace}}.{{.IngressDomain}}"}
    head = _doc(_configmap(ingress=json.dumps(config))) + _doc(_runtime("rt")) + _doc(_model("m"))
    return _annotated_isvcs(size, head, lambda i: {"a": "x" * 200_000})


def domain_template_actions(size: int) -> str:
    """A ``domainTemplate`` of ``{{""}}`` as long as the ConfigMap allows, for every InferenceService that fits."""
    config = {**INGRESS, "domainTemplate": "{{/**/}}" * (size // 3 // 8) + "{{.Name}}.{{.Namespace}}.a.io"}
    head = _doc(_configmap(ingress=json.dumps(config))) + _doc(_runtime("rt")) + _doc(_model("m"))
    return head + _until(size - len(head), (_doc(_isvc(f"s-{i:05d}", "m", "rt")) for i in range(10**6)))


def extra_endpoints(size: int) -> str:
    """``prometheus.ome.io/extra-endpoints`` of 50,000 entries (the most 256 KiB of annotations hold) on the
    runtime's engine (``--pod-monitors``), named by as many InferenceServices as fit: every PodMonitor holds every
    endpoint."""
    value = ",".join(["p:/"] * 50_000)
    config = lambda: {"runner": dict(RUNNER), "annotations": {"prometheus.ome.io/extra-endpoints": value}}
    runtime = _runtime("rt", engineConfig=config())
    head = _doc(runtime) + _doc(_model("m"))
    return head + _until(size - len(head), (_doc(_isvc(f"s-{i:05d}", "m", "rt")) for i in range(10**6)))


def extra_endpoints_bad(size: int) -> str:
    """:func:`extra_endpoints` with malformed entries: a warning each, times every InferenceService."""
    value = ",".join(f"p{i}" for i in range(30_000))
    runtime = _runtime("rt", engineConfig={"runner": dict(RUNNER),
                                           "annotations": {"prometheus.ome.io/extra-endpoints": value}})
    head = _doc(runtime) + _doc(_model("m"))
    return head + _until(size - len(head), (_doc(_isvc(f"s-{i:05d}", "m", "rt")) for i in range(10**6)))


def many_field_warnings(size: int) -> str:
    """InferenceServices with as many unknown ``ome.io/ingress-*`` annotations as 256 KiB hold: a warning each, each
    with the line and column of its key (the position lookup in one large mapping)."""
    head = _doc(_runtime("rt")) + _doc(_model("m"))
    return _annotated_isvcs(size, head, lambda i: {f"ome.io/ingress-x{k}": "" for k in range(6_000)}, "s-{}")


def many_object_warnings(size: int) -> str:
    """InferenceServices that each get a warning naming a field: ten thousand positions from one 1 MB file."""
    head = _doc(_runtime("rt")) + _doc(_model("m"))
    return _annotated_isvcs(size, head, lambda i: {"ome.io/ingress-domian": "a.io"})


def _alternating_lists(size: int, annotation: str) -> str:
    """Two ``kind: List`` documents of InferenceServices, the even-numbered in the first and the odd in the
    second, each with ``annotation``: the render reaches them in name order, alternating between the documents."""
    def isvc(i: int) -> dict:
        body = _isvc(f"s-{i:05d}", "m", "rt")
        body["metadata"]["annotations"] = {annotation: "a.io", "note": "x" * 50}
        return body
    head = _doc(_runtime("rt")) + _doc(_model("m"))
    count = (size - len(head) - 200) // (len(_doc(isvc(0))) - 4)
    lists = [{"apiVersion": "v1", "kind": "List", "items": [isvc(i) for i in range(first, count, 2)]}
             for first in (0, 1)]
    return head + "".join(_doc(items) for items in lists)


def alternating_list_warnings(size: int) -> str:
    """:func:`_alternating_lists` with a misspelt annotation: a warning per InferenceService, each with the line
    and column of its key, alternating between two documents each larger than the trees kept between messages."""
    return _alternating_lists(size, "ome.io/ingress-domian")


def alternating_list_quiet(size: int) -> str:
    """:func:`alternating_list_warnings` spelt right: the same render without a message, to compare with."""
    return _alternating_lists(size, "ome.io/ingress-domain")


def many_distinct_misspellings(size: int) -> str:
    """InferenceServices with three distinct long unknown ``ome.io/ingress-*`` annotations each: a "did you mean"
    for each is compared anew (the comparisons are budgeted per render)."""
    head = _doc(_runtime("rt")) + _doc(_model("m"))
    return _annotated_isvcs(size, head, lambda i: {f"ome.io/ingress-domain-{'x' * 40}{i}-{k}": "" for k in range(3)})


def hash_headers(size: int) -> str:
    """``consistentHashHeaders`` of as many headers as a third of the bytes hold, copied into the
    BackendTrafficPolicy of every InferenceService that fits."""
    config = {**INGRESS, "enableGatewayAPI": True, "omeIngressGateway": "ns/gw",
              "consistentHashHeaders": [f"h{i}" for i in range(size // 3 // 9)]}
    head = _doc(_configmap(ingress=json.dumps(config))) + _doc(_runtime("rt")) + _doc(_model("m"))
    return head + _until(size - len(head), (_doc(_isvc(f"s-{i:05d}", "m", "rt")) for i in range(10**6)))


def accelerator_resources(size: int) -> str:
    """``acceleratorResources`` of as many names as half the bytes hold, none of them the GPU the runners ask
    for: every runner of every InferenceService that fits looks through them all."""
    names = json.dumps([f"example.com/gpu-{i}" for i in range(size // 2 // 30)])
    runtime = _runtime("rt", engineConfig={"runner": {**RUNNER, "resources": {"limits": {"nvidia.com/gpu": "1"}}}})
    head = _doc(_configmap(acceleratorResources=names)) + _doc(runtime) + _doc(_model("m"))
    return head + _until(size - len(head), (_doc(_isvc(f"s-{i:05d}", "m", "rt")) for i in range(10**6)))


def autoscaler_policies(size: int) -> str:
    """Half the bytes in KEDA AutoscalerPolicies with Go-template trigger metadata, half in InferenceServices that
    each name one, with a metric provider whose TriggerAuthentication every namespace shares."""
    providers = {"metricProviders": {"p": {"serverAddress": "http://prom:9090", "authSecretRef": {"name": "s",
                                                                                                 "key": "t"}}}}
    query = "{{.Namespace}}{{.ISVCName}}{{.Component}}{{.TargetName}}" * 20
    def policy(i: int) -> dict:
        trigger = {"type": "prometheus", "providerRef": {"name": "p"}, "metricType": "AverageValue",
                   "metadata": {"threshold": "5", "query": query,
                                                                           "ignoreNullValues": "false"}}
        return {"apiVersion": API, "kind": "AutoscalerPolicy", "metadata": {"name": f"p-{i:05d}", "namespace": NS},
                "spec": {"class": "KEDA", "keda": {"triggers": [trigger] * 4}}}
    head = _doc(_configmap(autoscalerPolicy=json.dumps(providers))) + _doc(_runtime("rt")) + _doc(_model("m"))
    head += _until(size // 2, (_doc(policy(i)) for i in range(10**6)))
    count = head.count('"kind":"AutoscalerPolicy"')
    return head + _until(size - len(head), (_doc(_isvc(f"s-{i:05d}", "m", "rt", engine={
        "minReplicas": 1, "autoscalerPolicyRef": {"name": f"p-{i % count:05d}"}})) for i in range(10**6)))


SHAPES: dict[str, Callable[[int], str]] = {
    "selection": selection,
    "selection-models": selection_models,
    "env-copies": env_copies,
    "list-copies": list_copies,
    "silent-placeholders": silent_placeholders,
    "accelerator-classes": accelerator_classes,
    "accelerator-classes-copyable": accelerator_classes_copyable,
    "quantity-1E+5000": _quantity("1E+5000"),
    "quantity-1E+999999999": _quantity("1E+999999999"),
    "configmap-nested-json": _json_shape(_nested, "A ConfigMap value of JSON arrays nested as deep as fits."),
    "configmap-many-keys": _json_shape(_many_keys, "A ConfigMap value of 80,000 unknown keys (a warning each)."),
    "configmap-duplicate-keys": _json_shape(_duplicate_keys, "A ConfigMap value repeating one key 40,000 times."),
    "configmap-case-keys": _json_shape(_case_keys, "A ConfigMap value repeating a key in the wrong case."),
    "configmap-huge-number": _json_shape(_huge_number, "A ConfigMap number of a million digits."),
    "ingress-gateways": ingress_gateways,
    "ingress-annotation-gateways": ingress_annotation_gateways,
    "namespace-gateways": namespace_gateways,
    "domain-template": domain_template,
    "domain-template-actions": domain_template_actions,
    "extra-endpoints": extra_endpoints,
    "extra-endpoints-bad": extra_endpoints_bad,
    "many-field-warnings": many_field_warnings,
    "many-object-warnings": many_object_warnings,
    "many-distinct-misspellings": many_distinct_misspellings,
    "alternating-list-warnings": alternating_list_warnings,
    "alternating-list-quiet": alternating_list_quiet,
    "autoscaler-policies": autoscaler_policies,
    "hash-headers": hash_headers,
    "accelerator-resources": accelerator_resources,
}
# Options of ``omerender render`` a shape needs (its objects are written only with them).
FLAGS = {"extra-endpoints": ("--pod-monitors",), "extra-endpoints-bad": ("--pod-monitors",)}


# ---------------------------------------------------------------- running

def run(path: Path, timeout: float, flags: tuple[str, ...] = ()) -> dict:
    """``omerender render path`` under /usr/bin/time: wall seconds, CPU seconds, peak RSS in MB, exit code, the
    first error (else the first line) of stderr, and the bytes of stdout and lines of stderr, which go to files
    next to the input. omerender runs with this Python (``-m omerender``), so ``PYTHONPATH`` chooses the tree."""
    timed = ["/usr/bin/time", "-o", str(path.parent / "time"), "-f", "%e %U %S %M", sys.executable, "-m",
             "omerender", "render", *flags, str(path)]
    out, err = path.parent / "stdout", path.parent / "stderr"
    start = time.monotonic()
    with out.open("wb") as stdout, err.open("wb") as stderr:
        # a session of its own: on a timeout the whole group goes (killing /usr/bin/time alone would leave
        # omerender running, still writing to these files)
        child = subprocess.Popen(timed, stdout=stdout, stderr=stderr, start_new_session=True)
        try:
            code = child.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
            return {"wall": time.monotonic() - start, "cpu": None, "mb": None, "rc": "timeout", "first": "",
                    "out": out.stat().st_size, "lines": 0}
    wall, user, system, kb = (path.parent / "time").read_text().split()[-4:]
    first, lines = "", 0
    with err.open(encoding="utf-8", errors="replace") as stderr:
        for line in stderr:
            lines += 1
            if not first or (line.startswith("error:") and not first.startswith("error:")):
                first = line.rstrip("\n")
    return {"wall": float(wall), "cpu": float(user) + float(system), "mb": int(kb) / 1024, "rc": code,
            "first": first, "out": out.stat().st_size, "lines": lines}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--size", type=int, default=1_000_000, help="bytes per input (default 1,000,000)")
    parser.add_argument("--only", default="", help="comma-separated shape names")
    parser.add_argument("--timeout", type=float, default=120.0)
    args = parser.parse_args(argv)
    names = [n for n in args.only.split(",") if n] or list(SHAPES)
    print("| shape | bytes | CPU s | wall s | peak MB | exit | stdout bytes | stderr lines | within 10 s, 500 MB "
          "| first error line |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |")
    ok = True
    for name in names:
        path = args.directory / name / "inputs.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(SHAPES[name](args.size))
        got = run(path, args.timeout, FLAGS.get(name, ()))
        held = got["rc"] in (0, 1) and got["cpu"] <= 10 and got["mb"] <= 500
        ok &= held
        mb = "-" if got["mb"] is None else f"{got['mb']:.0f}"
        cpu = "-" if got["cpu"] is None else f"{got['cpu']:.2f}"
        first = got["first"].replace("|", "\\|")
        first = first if len(first) <= 160 else first[:157] + "..."
        print(f"| {name} | {path.stat().st_size:,} | {cpu} | {got['wall']:.2f} | {mb} | {got['rc']} | "
              f"{got['out']:,} | {got['lines']:,} | {'yes' if held else 'NO'} | {first} |", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
