"""What kustomize itself spends while it waits for an exec function (issue 16, column 4b).

``python benchmarks/wait_cost.py --work DIR -n 200`` reuses a fleet and the recorded output ResourceList
of an earlier ``run.py --work DIR`` and builds it with replays that answer after 0 s and after each of
``--sleeps`` seconds, in turn, ``--repeats`` times. It prints kustomize's CPU seconds (its own and its
replay's) for each, and each sleep's difference from the instant replay, with standard errors.

The target of run.py compares the function path with the instant replay, to which kustomize's wait adds
nothing; a difference here that does not grow with the sleep is a cost every function that takes any
time at all puts on kustomize.
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run  # noqa: E402  (the suite beside this file)
from report import standard_error  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, required=True, help="the work directory of an earlier run.py")
    parser.add_argument("-n", type=int, default=200, help="the fleet size (default 200)")
    parser.add_argument("--sleeps", default="0.66,2", help="seconds the slow replays wait (default 0.66,2)")
    parser.add_argument("--repeats", type=int, default=12)
    args = parser.parse_args()
    inputs, recorded = args.work / f"fleet-{args.n}" / "inputs", args.work / f"fn-out-{args.n}.yaml"
    if not inputs.is_dir() or not recorded.is_file():
        raise SystemExit(f"no {inputs} or {recorded}: run benchmarks/run.py --work {args.work} first")
    sleeps = [0.0, *(float(s) for s in args.sleeps.split(","))]
    layouts = [run.function_layout(args.work / f"wait-{args.n}-{s:g}", inputs, run._script(
        args.work / f"wait-{args.n}-{s:g}.sh", f"cat >/dev/null\nsleep {s:g}\nexec cat {recorded}\n"))
        for s in sleeps]
    command = ["kustomize", "build", "--enable-alpha-plugins", "--enable-exec"]
    cpu: list[list[float]] = [[] for _ in sleeps]
    for i in range(args.repeats):
        order = range(len(sleeps)) if i % 2 == 0 else reversed(range(len(sleeps)))
        for k in order:
            run.log(f"[{args.n}] {i + 1}/{args.repeats}: replay after {sleeps[k]:g} s")
            cpu[k].append(run.timed([*command, str(layouts[k])], timeout=run.FUNCTION_TIMEOUT)[1])
    print(f"kustomize CPU seconds at {args.n} InferenceServices, {args.repeats} runs each, in turn")
    for k, s in enumerate(sleeps):
        line = f"replay after {s:g} s: mean {statistics.mean(cpu[k]):.3f} ± {standard_error(cpu[k]):.3f}"
        if k:
            diff = [a - b for a, b in zip(cpu[k], cpu[0])]
            line += (f"; minus the instant replay, pair by pair: {statistics.mean(diff):+.3f} ± "
                     f"{standard_error(diff):.3f}")
        print(line)


if __name__ == "__main__":
    main()
