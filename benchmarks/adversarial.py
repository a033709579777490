"""Adversarial inputs of about 1 MB (issue 24, "a work budget, not only a byte budget").

Each shape is small in bytes but asks for work that grows with the product of two counts (runtimes times
InferenceServices, classes times InferenceServices) or with something that prints nothing. The target:
``omerender render`` on each finishes, or stops with a limit error, within 10 s and 500 MB.

    python benchmarks/adversarial.py DIR [--size BYTES] [--only NAME,...] [--timeout S]

writes ``DIR/NAME/inputs.yaml`` per shape, runs ``omerender render`` on each under ``/usr/bin/time`` and prints
a Markdown table: size, CPU seconds (user + system), wall seconds, peak RSS, exit code, and the first line of
stderr (the limit error when refused). The render is one thread, so on an idle machine its wall time is its CPU
time; the target is judged on CPU seconds, which other load on a shared machine disturbs far less than wall
time. Every shape is generated, so it is the same on every run.
"""
from __future__ import annotations

import argparse
import json
import shutil
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
}


# ---------------------------------------------------------------- running

def run(path: Path, timeout: float) -> dict:
    """``omerender render path`` under /usr/bin/time: wall seconds, peak RSS in MB, exit code, first error."""
    timed = ["/usr/bin/time", "-f", "%e %U %S %M", "omerender", "render", str(path)]
    start = time.monotonic()
    try:
        done = subprocess.run(timed, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"wall": time.monotonic() - start, "cpu": None, "mb": None, "rc": "timeout", "first": ""}
    lines = done.stderr.strip().splitlines()
    wall, user, system, kb = lines[-1].split()
    errors = [line for line in lines[:-1] if line.startswith("error:")]
    first = (errors or lines[:-1] or [""])[0]
    return {"wall": float(wall), "cpu": float(user) + float(system), "mb": int(kb) / 1024, "rc": done.returncode,
            "first": first}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--size", type=int, default=1_000_000, help="bytes per input (default 1,000,000)")
    parser.add_argument("--only", default="", help="comma-separated shape names")
    parser.add_argument("--timeout", type=float, default=120.0)
    args = parser.parse_args(argv)
    if shutil.which("omerender") is None:
        parser.error("omerender is not on PATH (pip install -e .)")
    names = [n for n in args.only.split(",") if n] or list(SHAPES)
    print("| shape | bytes | CPU s | wall s | peak MB | exit | within 10 s, 500 MB | first error line |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- | --- |")
    ok = True
    for name in names:
        path = args.directory / name / "inputs.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(SHAPES[name](args.size))
        got = run(path, args.timeout)
        held = got["rc"] in (0, 1) and got["cpu"] <= 10 and got["mb"] <= 500
        ok &= held
        mb = "-" if got["mb"] is None else f"{got['mb']:.0f}"
        cpu = "-" if got["cpu"] is None else f"{got['cpu']:.2f}"
        first = got["first"].replace("|", "\\|")
        first = first if len(first) <= 160 else first[:157] + "..."
        print(f"| {name} | {path.stat().st_size:,} | {cpu} | {got['wall']:.2f} | {mb} | {got['rc']} | "
              f"{'yes' if held else 'NO'} | {first} |", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
