"""The omerender benchmark suite (issue 8): ``python benchmarks/run.py`` writes benchmarks/RESULTS.md.

For each fleet size it generates a synthetic fleet (benchmarks/fleet.py) and measures, in one run:

(a) ``omerender render`` on the fleet's inputs;
(b) ``kustomize build --enable-alpha-plugins --enable-exec`` of the fleet with the omerender function;
(c) ``kustomize build`` of the already rendered output (plain YAML, same objects): kustomize's own floor;
(d) the function's cold start on an empty ResourceList;
(e) peak memory (max RSS) of (a) and of the function on the whole fleet's ResourceList;
(f) how the render time grows from 1,000 to 10,000 InferenceServices.

Times are wall-clock seconds, the median of the repetitions, of each command run as a fresh process
(``/usr/bin/time`` gives the max RSS). kustomize's own cost grows faster than linearly with the number
of objects, so (b) and (c) are measured only up to ``--kustomize-max`` InferenceServices.
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fleet  # noqa: E402  (the generator beside this file)

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "RESULTS.md"
SIZES = ((100, 250), (1000, 1000), (10000, 2000))  # (InferenceServices, runtimes)
EMPTY_RESOURCE_LIST = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n"
TARGETS = {"b_over_c": 1.25, "a_over_c": 0.25, "cold_start_ms": 150, "growth": 12.0, "peak_mb": 400}


@dataclass
class Sample:
    seconds: list[float] = field(default_factory=list)
    peak_mb: float = 0.0

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)


@dataclass
class SizeResult:
    n: int
    m: int
    counts: dict
    objects: int = 0
    output_mb: float = 0.0
    render: Sample | None = None  # (a)
    fn_direct: Sample | None = None  # the function alone on the fleet's ResourceList
    kustomize_fn: Sample | None = None  # (b)
    kustomize_floor: Sample | None = None  # (c)


def executable(name: str) -> str:
    """The installed console script next to this interpreter (not a version-manager shim)."""
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else (shutil.which(name) or name)


def timed(command: list[str], stdin: Path | None = None, stdout: Path | None = None,
          timeout: float | None = None) -> tuple[float, float]:
    """Run once; return (wall seconds, max RSS in MB). Fails loudly on a non-zero exit."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as report, \
            open(stdin or os.devnull, "rb") as source, open(stdout or os.devnull, "wb") as sink:
        proc = subprocess.run(["/usr/bin/time", "-f", "%e %M", "-o", report.name, *command], stdin=source,
                              stdout=sink, stderr=subprocess.PIPE, timeout=timeout)
        if proc.returncode != 0:
            raise SystemExit(f"benchmark command failed ({proc.returncode}): {' '.join(command)}\n"
                             f"{proc.stderr.decode()[-2000:]}")
        wall, rss_kb = report.read().split()[-2:]
    return float(wall), int(rss_kb) / 1024


def measure(command: list[str], repeats: int, **kwargs) -> Sample:
    sample = Sample()
    for _ in range(repeats):
        wall, peak = timed(command, **kwargs)
        sample.seconds.append(wall)
        sample.peak_mb = max(sample.peak_mb, peak)
    return sample


def resource_list(inputs: Path, target: Path) -> None:
    """The ResourceList kustomize hands the function: every input object, and the function config."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    items = [d for f in sorted(inputs.glob("*.yaml")) for d in yaml.load_all(f.read_text(), Loader=loader) if d]
    config = {k: v for k, v in fleet.FN_CONFIG.items()}
    text = yaml.dump({"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items,
                      "functionConfig": config}, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper),
                     sort_keys=False, width=1 << 16)
    target.write_text(text)


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def bench_size(work: Path, n: int, m: int, args, omerender: str, omerender_fn: str) -> SizeResult:
    directory = work / f"fleet-{n}"
    counts = fleet.write_fleet(directory, n, m, inherit=not args.no_inherit, fn_path=omerender_fn)
    result = SizeResult(n, m, counts)
    repeats = 5 if n <= 100 else 3 if n <= 1000 else 1
    rendered = work / f"rendered-{n}.yaml"
    log(f"[{n}] (a) omerender render, {repeats}x")
    result.render = measure([omerender, "render", str(directory / "inputs")], repeats, stdout=rendered)
    result.objects = rendered.read_text().count("\n---\n") + 1
    result.output_mb = rendered.stat().st_size / 2 ** 20
    fleet.write_rendered(work / f"floor-{n}", rendered.read_text())
    listing = work / f"resourcelist-{n}.yaml"
    resource_list(directory / "inputs", listing)
    log(f"[{n}] the function alone on the ResourceList, {repeats}x")
    result.fn_direct = measure([omerender_fn], repeats, stdin=listing)
    if n <= args.kustomize_max:
        k_repeats = 3 if n <= 100 else 1
        log(f"[{n}] (c) kustomize build of the rendered output, {k_repeats}x")
        result.kustomize_floor = measure(["kustomize", "build", str(work / f"floor-{n}")], k_repeats)
        log(f"[{n}] (b) kustomize build with the function, {k_repeats}x")
        result.kustomize_fn = measure(["kustomize", "build", "--enable-alpha-plugins", "--enable-exec",
                                       str(directory)], k_repeats)
    return result


def cold_start(omerender_fn: str, work: Path, repeats: int = 20) -> Sample:
    empty = work / "empty-resourcelist.yaml"
    empty.write_text(EMPTY_RESOURCE_LIST)
    measure([omerender_fn], 2, stdin=empty)  # warm the page cache and .pyc files
    return measure([omerender_fn], repeats, stdin=empty)


# ---------------------------------------------------------------- the report

def _command_output(command: list[str]) -> str:
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def machine() -> list[str]:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor() or "unknown")
    mem_kb = next(int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines()
                  if line.startswith("MemTotal"))
    kustomize = _command_output(["dpkg-query", "-W", "-f=${Version}", "kustomize"]) or \
        _command_output(["kustomize", "version"])
    return [f"- Date: {datetime.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')}",
            f"- Machine: {cpu}, {os.cpu_count()} cores, {mem_kb / 2 ** 20:.1f} GiB RAM; "
            f"{platform.system()} {platform.release()}; load average at start {os.getloadavg()[0]:.2f}",
            f"- Python {platform.python_version()}, PyYAML {yaml.__version__} "
            f"(libyaml {'yes' if yaml.__with_libyaml__ else 'no'}), kustomize {kustomize}"]


def _s(sample: Sample | None) -> str:
    return f"{sample.median:.2f}" if sample else "not run"


def _ratio(top: Sample | None, bottom: Sample | None) -> float | None:
    return top.median / bottom.median if top and bottom and bottom.median else None


def _verdict(value: float | None, limit: float) -> str:
    if value is None:
        return "not measured"
    return "holds" if value <= limit else "**misses**"


def report(results: list[SizeResult], cold: Sample, args, elapsed: float) -> str:
    lines = ["# omerender benchmark results", "",
             "Regenerated by `python benchmarks/run.py` (see benchmarks/README.md); do not edit by hand.", "",
             *machine(), f"- Whole run: {elapsed / 60:.1f} min; fleets with inheritance chains: "
                         f"{'no' if args.no_inherit else 'yes'}", "",
             "## Fleets", "",
             "| InferenceServices | runtimes | in inheritance chains | models | auto-selected | with a class "
             "| rendered objects | output MB |",
             "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in results:
        c = r.counts
        lines.append(f"| {r.n} | {c['runtimes']} | {c['in chains']} | {c['models']} | {c['auto-selected']} "
                     f"| {c['with class']} | {r.objects} | {r.output_mb:.1f} |")
    lines += ["", "## Times (seconds, median) and ratios", "",
              "| InferenceServices | (a) render | fn alone | (b) kustomize + fn | (c) kustomize floor "
              "| (b)/(c) | (a)/(c) | (a) peak MB | fn peak MB |",
              "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in results:
        bc, ac = _ratio(r.kustomize_fn, r.kustomize_floor), _ratio(r.render, r.kustomize_floor)
        lines.append(f"| {r.n} | {_s(r.render)} | {_s(r.fn_direct)} | {_s(r.kustomize_fn)} "
                     f"| {_s(r.kustomize_floor)} | {f'{bc:.3f}' if bc else '-'} | {f'{ac:.3f}' if ac else '-'} "
                     f"| {r.render.peak_mb:.0f} | {r.fn_direct.peak_mb:.0f} |")
    by_n = {r.n: r for r in results}
    at_1k, at_10k = by_n.get(1000), by_n.get(10000)
    growth = _ratio(at_10k.render, at_1k.render) if at_1k and at_10k else None
    fn_growth = _ratio(at_10k.fn_direct, at_1k.fn_direct) if at_1k and at_10k else None
    bc_1k = _ratio(at_1k.kustomize_fn, at_1k.kustomize_floor) if at_1k else None
    ac_1k = _ratio(at_1k.render, at_1k.kustomize_floor) if at_1k else None
    peak_10k = max(at_10k.render.peak_mb, at_10k.fn_direct.peak_mb) if at_10k else None
    cold_ms = cold.median * 1000
    lines += ["", f"(d) cold start of `omerender-fn` on an empty ResourceList: median {cold_ms:.0f} ms, "
                  f"min {min(cold.seconds) * 1000:.0f} ms over {len(cold.seconds)} runs.", "",
              f"(f) growth from 1,000 to 10,000 InferenceServices: render {growth:.2f}x, function alone "
              f"{fn_growth:.2f}x." if growth else "(f) growth: not measured (needs the 1,000 and 10,000 fleets).",
              "", "## Targets", "", "| target | measured | verdict |", "| --- | --- | --- |",
              f"| (b) <= 1.25 x (c) at 1,000 | {f'{bc_1k:.3f}' if bc_1k else '-'} "
              f"| {_verdict(bc_1k, TARGETS['b_over_c'])} |",
              f"| (a) <= 0.25 x (c) at 1,000 | {f'{ac_1k:.3f}' if ac_1k else '-'} "
              f"| {_verdict(ac_1k, TARGETS['a_over_c'])} |",
              f"| (d) <= 150 ms | {cold_ms:.0f} ms | {_verdict(cold_ms, TARGETS['cold_start_ms'])} |",
              f"| (f) <= 12x for 10x the fleet | {f'{growth:.2f}x' if growth else '-'} "
              f"| {_verdict(growth, TARGETS['growth'])} |",
              f"| peak memory <= 400 MB at 10,000 | {f'{peak_10k:.0f} MB' if peak_10k else '-'} "
              f"| {_verdict(peak_10k, TARGETS['peak_mb'])} |", ""]
    notes = HERE / "NOTES.md"
    if notes.exists():
        lines += [notes.read_text().rstrip(), ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default=",".join(str(n) for n, _ in SIZES),
                        help="comma-separated InferenceService counts out of 100,1000,10000 (default: all)")
    parser.add_argument("--kustomize-max", type=int, default=1000,
                        help="largest fleet for the kustomize measurements (b) and (c) (default 1000)")
    parser.add_argument("--no-inherit", action="store_true", help="fleets without inheritance chains")
    parser.add_argument("--work", type=Path, help="keep the fleets in this directory (default: a temporary one)")
    parser.add_argument("--output", type=Path, default=RESULTS, help=f"default {RESULTS.relative_to(HERE.parent)}")
    args = parser.parse_args()
    wanted = {int(s) for s in args.sizes.split(",")}
    for tool in ("kustomize", "/usr/bin/time"):
        if not shutil.which(tool):
            raise SystemExit(f"{tool} not found: run scripts/setup-tools.sh and apt-get install -y time")
    omerender, omerender_fn = executable("omerender"), executable("omerender-fn")
    started = datetime.datetime.now()
    with tempfile.TemporaryDirectory(prefix="omerender-bench-") as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        log("(d) cold start")
        cold = cold_start(omerender_fn, work)
        results = [bench_size(work, n, m, args, omerender, omerender_fn) for n, m in SIZES if n in wanted]
    elapsed = (datetime.datetime.now() - started).total_seconds()
    text = report(results, cold, args, elapsed)
    args.output.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
