"""The omerender benchmark suite (issues 8, 16): ``python benchmarks/run.py`` writes benchmarks/RESULTS.md.

For each fleet size it generates a synthetic fleet (benchmarks/fleet.py) and measures the five paths
of issue 16 side by side, each command a fresh process:

1. ``omerender render DIR/inputs``;
2. ``kustomize build`` of the rendered YAML (plain objects, no function): what kustomize costs for the
   objects alone;
3. the function path: ``kustomize build --enable-alpha-plugins --enable-exec`` of the fleet with
   omerender as an exec KRM function;
4. the same with a do-nothing exec function that replays omerender's own output ResourceList byte
   for byte (recorded beforehand), so that kustomize's work is identical: the floor of 3;
5. the pipeline: ``kustomize build`` of the inputs (plugins off) piped into ``omerender render -``.

For comparison (up to --slow-replay-max): 4b, the replay of 4 answering only after as long as the function
takes, which shows what kustomize itself spends while it waits for a function.

Besides: omerender's function alone on the ResourceList kustomize handed it (recorded as well), the
render's floor (benchmarks/floor.py: PyYAML's C loader on the inputs plus its C dumper on the output,
CPU seconds), peak memory, and the function's cold start. 3 and 4 run in turn, pair by pair, with the
function alone after each pair (every other pair in the other order), since kustomize's own time for
identical work swings widely on a shared machine; the target takes the median of the pairs' ratios.
"""
from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fleet  # noqa: E402  (the generator beside this file)
import report  # noqa: E402

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "RESULTS.md"
SIZES = ((100, 250), (200, 250), (1000, 1000), (10000, 2000))  # (InferenceServices, runtimes)
EMPTY_RESOURCE_LIST = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n"
TARGETS = {"fn_over_floor": 1.0, "pipeline_over_plain": 0.25, "render_over_plain": 0.25, "cold_start_ms": 150,
           "growth": 12.0, "peak_mb": 400, "render_over_yaml": 1.2}
DEFAULT_PAIRS = {100: 15, 200: 9, 1000: 3}  # function path / replay pairs: kustomize's time swings several %
TEN_MINUTES = 600.0
FUNCTION_TIMEOUT = 900.0  # per run of 3 or 4: at 1,000 they took about 9 minutes on a quiet machine


@dataclass
class Sample:
    seconds: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    peak_mb: float = 0.0

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def cpu_median(self) -> float:
        return statistics.median(self.cpu)

    def add(self, wall: float, cpu: float, peak: float) -> None:
        self.seconds.append(wall)
        self.cpu.append(cpu)
        self.peak_mb = max(self.peak_mb, peak)


@dataclass
class SizeResult:
    n: int
    m: int
    counts: dict
    objects: int = 0
    output_mb: float = 0.0
    render: Sample | None = None  # 1
    yaml_floor: Sample | None = None  # the render's floor (CPU seconds in .cpu and .seconds)
    plain: Sample | None = None  # 2
    fn_path: Sample | None = None  # 3
    replay: Sample | None = None  # 4
    slow_replay: Sample | None = None  # 4b: the replay, answering after as long as the function takes
    fn_alone: Sample | None = None  # the function alone on kustomize's ResourceList
    pipeline: Sample | None = None  # 5
    pipeline_identical: str | None = None
    pair_ratios: list[float] = field(default_factory=list)  # 3 / (4 + fn alone), pair by pair, CPU seconds
    pair_ratios_wall: list[float] = field(default_factory=list)  # the same in wall seconds
    fn_outputs_identical: bool | None = None  # kustomize's output on 3 and on 4
    slow_pair_ratios: list[float] = field(default_factory=list)  # 3 / (4b + fn alone), CPU seconds
    slow_replay_seconds: float = 0.0  # how long 4b waits before it answers
    skipped: dict = field(default_factory=dict)  # column -> why it was not run
    minutes: float = 0.0  # how long this size's measurements took
    load: list = field(default_factory=list)  # 1-minute load average before and after them
    finished: str = ""  # when this size's measurements ended, UTC


def save(result: SizeResult, work: Path) -> None:
    result.finished = _utc(datetime.datetime.now(datetime.timezone.utc))
    (work / f"result-{result.n}.json").write_text(json.dumps(dataclasses.asdict(result)))


def _utc(moment: datetime.datetime) -> str:
    return f"{moment:%Y-%m-%d %H:%M}"


def saved_results(work: Path) -> list[SizeResult]:
    """What earlier runs measured into ``work``, one size per file (several runs can share a work dir)."""
    results = []
    for path in sorted(work.glob("result-*.json")):
        data = json.loads(path.read_text())
        for name in ("render", "yaml_floor", "plain", "fn_path", "replay", "slow_replay", "fn_alone", "pipeline"):
            if data.get(name) is not None:
                data[name] = Sample(**data[name])
        if not data.get("finished"):  # saved before results carried it
            data["finished"] = _utc(datetime.datetime.fromtimestamp(path.stat().st_mtime, datetime.timezone.utc))
        results.append(SizeResult(**data))
    return sorted(results, key=lambda r: r.n)


def executable(name: str) -> str:
    """The installed console script next to this interpreter (not a version-manager shim)."""
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else (shutil.which(name) or name)


def timed(command: list[str], stdin: Path | None = None, stdout: Path | None = None,
          timeout: float | None = None) -> tuple[float, float, float]:
    """Run once; return (wall seconds, CPU seconds, max RSS in MB). Fails loudly on a non-zero exit;
    on a timeout, kills the whole process group (kustomize and its function) and raises TimeoutExpired."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as report, \
            open(stdin or os.devnull, "rb") as source, open(stdout or os.devnull, "wb") as sink:
        proc = subprocess.Popen(["/usr/bin/time", "-f", "%e %U %S %M", "-o", report.name, *command], stdin=source,
                                stdout=sink, stderr=subprocess.PIPE, start_new_session=True)
        try:
            _, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise
        if proc.returncode != 0:
            raise SystemExit(f"benchmark command failed ({proc.returncode}): {' '.join(command)}\n"
                             f"{err.decode()[-2000:]}")
        wall, user, system, rss_kb = report.read().split()[-4:]
    return float(wall), float(user) + float(system), int(rss_kb) / 1024


def measure(command: list[str], repeats: int, sample: Sample | None = None, **kwargs) -> Sample:
    sample = sample or Sample()
    for _ in range(repeats):
        sample.add(*timed(command, **kwargs))
    return sample


def log(text: str) -> None:
    print(f"{datetime.datetime.now():%H:%M:%S} {text}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- the layouts

def _write_kustomization(directory: Path, resources: list[str], transformers: list[str] = ()) -> None:
    doc = {"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "resources": resources}
    if transformers:
        doc["transformers"] = list(transformers)
    (directory / "kustomization.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))


def _script(path: Path, body: str) -> str:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def function_layout(directory: Path, inputs: Path, fn_path: str) -> Path:
    """``inputs`` plus one exec function as a transformer: the function path's layout."""
    shutil.rmtree(directory, ignore_errors=True)
    shutil.copytree(inputs, directory / "inputs")
    config = {**fleet.FN_CONFIG, "metadata": {**fleet.FN_CONFIG["metadata"], "annotations": {
        "config.kubernetes.io/function": f"exec:\n  path: {fn_path}\n"}}}
    (directory / "fn.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    _write_kustomization(directory, [f"inputs/{p.name}" for p in sorted(inputs.glob("*.yaml"))], ["fn.yaml"])
    return directory


def plain_layout(directory: Path, files: list[Path]) -> Path:
    """The files under a kustomization with no function."""
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    for f in files:
        shutil.copy(f, directory / f.name)
    _write_kustomization(directory, [f.name for f in files])
    return directory


# ---------------------------------------------------------------- one fleet

def bench_size(work: Path, n: int, m: int, args, omerender: str, omerender_fn: str) -> SizeResult:
    directory = work / f"fleet-{n}"
    counts = fleet.write_fleet(directory, n, m, inherit=not args.no_inherit, fn_path=omerender_fn)
    inputs = directory / "inputs"
    result = SizeResult(n, m, counts)
    repeats = args.repeats or (5 if n <= 200 else 3)
    rendered = work / f"rendered-{n}.yaml"
    log(f"[{n}] 1 omerender render, and its YAML floor, {repeats}x in turn")
    result.render, result.yaml_floor = Sample(), Sample()
    for _ in range(repeats):
        measure([omerender, "render", str(inputs)], 1, result.render, stdout=rendered)
        result.yaml_floor.add(*_yaml_floor(inputs, rendered))
    result.objects = rendered.read_text().count("---\n")
    result.output_mb = rendered.stat().st_size / 2 ** 20
    plain = plain_layout(work / f"plain-{n}", [rendered])
    pipeline = plain_layout(work / f"pipeline-{n}", sorted(inputs.glob("*.yaml")))
    if n <= args.pipeline_max:
        log(f"[{n}] 5 kustomize build of the inputs | omerender render -, {repeats}x")
        piped = work / f"piped-{n}.yaml"
        command = ["bash", "-o", "pipefail", "-c", f"kustomize build {pipeline} | {omerender} render - 2>/dev/null"]
        result.pipeline = _unless_timeout(result, "pipeline", lambda: measure(command, repeats, stdout=piped,
                                                                              timeout=TEN_MINUTES))
        if result.pipeline:
            result.pipeline_identical = _same_objects(piped.read_text(), rendered.read_text())
    else:
        result.skipped["pipeline"] = f"not run (over --pipeline-max {args.pipeline_max})"
    if n <= args.kustomize_max:
        k_repeats = 3 if n <= 200 else 1
        log(f"[{n}] 2 kustomize build of the rendered YAML, {k_repeats}x")
        result.plain = _unless_timeout(result, "plain", lambda: measure(["kustomize", "build", str(plain)],
                                                                          k_repeats, timeout=TEN_MINUTES))
        _unless_timeout(result, "fn_path", lambda: _function_columns(
            work, n, inputs, args.pairs or DEFAULT_PAIRS[min(DEFAULT_PAIRS, key=lambda k: abs(k - n))], result,
            omerender_fn, args.slow_replay_max))
    else:
        why = f"not run (over --kustomize-max {args.kustomize_max})"
        result.skipped.update({"plain": why, "fn_path": why, "replay": why})
        _fn_alone_on_synthetic_list(work, n, inputs, result, omerender_fn)
    return result


def _unless_timeout(result: SizeResult, column: str, run):
    try:
        return run()
    except subprocess.TimeoutExpired as err:
        result.skipped[column] = f"did not finish in {err.timeout / 60:.0f} min"
        log(f"[{result.n}] {column}: {result.skipped[column]}")
        return None


def _same_objects(one: str, other: str) -> str:
    if one == other:
        return "byte-identical"
    return "same objects, other order" if sorted(one.split("---\n")) == sorted(other.split("---\n")) else "DIFFERENT"


def _yaml_floor(inputs: Path, rendered: Path) -> tuple[float, float, float]:
    proc = subprocess.run([sys.executable, str(HERE / "floor.py"), str(inputs), str(rendered)],
                          capture_output=True, text=True, check=True)
    seconds = float(proc.stdout.split()[0])
    return seconds, seconds, 0.0


def _function_columns(work: Path, n: int, inputs: Path, pairs: int, result: SizeResult, omerender_fn: str,
                      slow_max: int) -> None:
    """3, 4 and the function alone, in turn, pair by pair.

    What the function reads is recorded first by a pass-through exec function (kustomize then sees only the
    inputs: a short run); what it writes, by the function itself on that recording. So no measured run
    carries a recorder. The two paths' outputs are compared once.
    """
    record_in, record_out = work / f"fn-in-{n}.yaml", work / f"fn-out-{n}.yaml"
    recorder = _script(work / f"record-{n}.sh", f"exec tee {record_in}\n")
    replayer = _script(work / f"replay-{n}.sh", f"cat >/dev/null\nexec cat {record_out}\n")
    command = ["kustomize", "build", "--enable-alpha-plugins", "--enable-exec"]
    log(f"[{n}] recording the function's ResourceList")
    timed([*command, str(function_layout(work / f"fn-record-{n}", inputs, recorder))], timeout=FUNCTION_TIMEOUT)
    timed([omerender_fn], stdin=record_in, stdout=record_out)
    with_fn = function_layout(work / f"fn-{n}", inputs, omerender_fn)
    layouts = [("3 kustomize + omerender fn", with_fn, "fn_path"),
               ("4 kustomize + replay", function_layout(work / f"replay-{n}", inputs, replayer), "replay")]
    result.fn_path, result.replay, result.fn_alone = Sample(), Sample(), Sample()
    if n <= slow_max:
        result.slow_replay = Sample()
        result.slow_replay_seconds = statistics.median(
            timed([omerender_fn], stdin=record_in)[0] for _ in range(3))
        slow = _script(work / f"slow-replay-{n}.sh",
                       f"cat >/dev/null\nsleep {result.slow_replay_seconds:.2f}\nexec cat {record_out}\n")
        layouts.append(("4b kustomize + replay answering after the function's time",
                        function_layout(work / f"slow-replay-{n}", inputs, slow), "slow_replay"))
    try:
        for i in range(pairs):
            _pair(i, pairs, n, command, layouts, record_in, result, omerender_fn, work)
    except subprocess.TimeoutExpired:
        done = len(result.pair_ratios)  # keep the complete pairs only
        for sample in (result.fn_path, result.replay, result.slow_replay, result.fn_alone):
            if sample is not None:
                del sample.seconds[done:], sample.cpu[done:]
        del result.pair_ratios_wall[done:], result.slow_pair_ratios[done:]
        if not done:
            result.fn_path = result.replay = result.slow_replay = result.fn_alone = None
        raise


def _pair(i: int, pairs: int, n: int, command: list[str], layouts: list, record_in: Path, result: SizeResult,
          omerender_fn: str, work: Path) -> None:
    """One pair (3 and 4, and 4b where measured); every other pair runs them in the opposite order, so that a drift
    in the machine's speed cancels."""
    outputs = {"fn_path": work / f"out-fn-{n}.yaml", "replay": work / f"out-replay-{n}.yaml"} if i == 0 else {}
    for label, layout, column in (layouts if i % 2 == 0 else layouts[::-1]):
        log(f"[{n}] pair {i + 1}/{pairs}: {label}")
        measure([*command, str(layout)], 1, getattr(result, column), stdout=outputs.get(column),
                timeout=FUNCTION_TIMEOUT)
    measure([omerender_fn], 1, result.fn_alone, stdin=record_in)
    if i == 0:
        result.fn_outputs_identical = outputs["fn_path"].read_bytes() == outputs["replay"].read_bytes()
    fn, alone = result.fn_path, result.fn_alone
    result.pair_ratios.append(fn.cpu[-1] / (result.replay.cpu[-1] + alone.cpu[-1]))
    result.pair_ratios_wall.append(fn.seconds[-1] / (result.replay.seconds[-1] + alone.seconds[-1]))
    if result.slow_replay is not None:
        result.slow_pair_ratios.append(fn.cpu[-1] / (result.slow_replay.cpu[-1] + alone.cpu[-1]))


def _fn_alone_on_synthetic_list(work: Path, n: int, inputs: Path, result: SizeResult, omerender_fn: str) -> None:
    """Without kustomize, the function alone on the ResourceList kustomize would hand it (for memory)."""
    listing = work / f"resourcelist-{n}.yaml"
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    items = [d for f in sorted(inputs.glob("*.yaml")) for d in yaml.load_all(f.read_text(), Loader=loader) if d]
    listing.write_text(yaml.dump({"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items,
                                  "functionConfig": fleet.FN_CONFIG}, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper),
                                 sort_keys=False, width=1 << 16))
    log(f"[{n}] the function alone on a ResourceList of the inputs")
    result.fn_alone = measure([omerender_fn], 1, stdin=listing)


def cold_start(omerender_fn: str, work: Path, repeats: int = 20) -> Sample:
    empty = work / "empty-resourcelist.yaml"
    empty.write_text(EMPTY_RESOURCE_LIST)
    measure([omerender_fn], 2, stdin=empty)  # warm the page cache and .pyc files
    return measure([omerender_fn], repeats, stdin=empty)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default=",".join(str(n) for n, _ in SIZES),
                        help="comma-separated InferenceService counts out of 100,200,1000,10000 (default: all)")
    parser.add_argument("--kustomize-max", type=int, default=1000,
                        help="largest fleet for columns 2-4 (default 1000: at 10,000 they take hours)")
    parser.add_argument("--pipeline-max", type=int, default=1000,
                        help="largest fleet for column 5 (default 1000)")
    parser.add_argument("--pairs", type=int, help="function-path/replay pairs (default 15, 9, 3 by size)")
    parser.add_argument("--slow-replay-max", type=int, default=200,
                        help="largest fleet for column 4b, the replay that answers after the function's time "
                             "(default 200)")
    parser.add_argument("--repeats", type=int, help="runs of the render and the pipeline (default 5 or 3)")
    parser.add_argument("--no-inherit", action="store_true", help="fleets without inheritance chains")
    parser.add_argument("--work", type=Path, help="keep the fleets in this directory (default: a temporary one)")
    parser.add_argument("--report-only", action="store_true",
                        help="write the report from the measurements kept in --work by earlier runs")
    parser.add_argument("--output", type=Path, default=RESULTS, help=f"default {RESULTS.relative_to(HERE.parent)}")
    args = parser.parse_args()
    wanted = {int(s) for s in args.sizes.split(",")}
    for tool in ("kustomize", "/usr/bin/time", "bash"):
        if not shutil.which(tool):
            raise SystemExit(f"{tool} not found: run scripts/setup-tools.sh and apt-get install -y time")
    omerender, omerender_fn = executable("omerender"), executable("omerender-fn")
    with tempfile.TemporaryDirectory(prefix="omerender-bench-") as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        cold_file = work / "cold-start.json"
        if not args.report_only:
            log("cold start")
            cold_file.write_text(json.dumps(dataclasses.asdict(cold_start(omerender_fn, work))))
            for n, m in SIZES:
                if n in wanted:
                    begun, load = datetime.datetime.now(), os.getloadavg()[0]
                    result = bench_size(work, n, m, args, omerender, omerender_fn)
                    result.minutes = (datetime.datetime.now() - begun).total_seconds() / 60
                    result.load = [load, os.getloadavg()[0]]
                    save(result, work)
                    log(f"[{n}] done; load average {os.getloadavg()[0]:.2f}")
        cold = Sample(**json.loads(cold_file.read_text()))
        results = [r for r in saved_results(work) if r.n in wanted]
    text = report.render(results, cold, args)
    args.output.write_text(text)
    print(text)

if __name__ == "__main__":
    main()
