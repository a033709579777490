"""What validation costs (issue 43): ``python benchmarks/validation.py [-n 1000] [-m 1000] [--repeats 3]``.

Generates the fleet of benchmarks/fleet.py and measures, each command a fresh process, the CPU seconds (user and
system, the median of the repeats) of ``omerender render``, of ``render --validate`` and of ``omerender validate -``
of the render, and prints the share ``--validate`` adds to a render (the issue turns it on by default under 10%).
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fleet import write_fleet  # noqa: E402


def cpu(command: list[str], stdin: Path | None = None, stdout: Path | None = None) -> float:
    before = os.times()
    with open(stdin or os.devnull, "rb") as source, open(stdout or os.devnull, "wb") as sink:
        done = subprocess.run(command, stdin=source, stdout=sink, stderr=subprocess.DEVNULL)
    after = os.times()
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} exited {done.returncode}")
    return after.children_user - before.children_user + after.children_system - before.children_system


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=1000)
    parser.add_argument("-m", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    omerender = [sys.executable, "-m", "omerender.cli"]
    with tempfile.TemporaryDirectory() as work:
        write_fleet(Path(work), args.n, args.m)
        inputs, rendered = Path(work) / "inputs", Path(work) / "rendered.yaml"
        render = statistics.median(cpu([*omerender, "render", str(inputs)], stdout=rendered)
                                   for _ in range(args.repeats))
        checked = statistics.median(cpu([*omerender, "render", str(inputs), "--validate"])
                                    for _ in range(args.repeats))
        validate = statistics.median(cpu([*omerender, "validate", "-"], stdin=rendered) for _ in range(args.repeats))
    print(f"{args.n} InferenceServices: render {render:.2f} s, render --validate {checked:.2f} s "
          f"(+{(checked - render) / render:.0%}), validate of the render {validate:.2f} s (CPU, median of "
          f"{args.repeats})")


if __name__ == "__main__":
    main()
