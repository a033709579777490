"""``omerender diff`` on a large fleet against one ``omerender render`` of it (issue 15: under 2.5×).

``python benchmarks/diff.py`` generates a fleet (benchmarks/fleet.py, 1,000 InferenceServices over 1,000
runtimes by default), makes the head side by bumping the SGLang image that most of its runtimes use (so most
InferenceServices change and roll out: the expensive case), and times, each as a fresh process, the median of
``--repeats`` runs of:

- ``omerender render BASE/inputs`` (stdout to /dev/null);
- ``omerender diff BASE/inputs HEAD/inputs`` in each format.

It prints a Markdown table and exits 1 when a diff takes 2.5 times a render or more.
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fleet  # noqa: E402  (the generator beside this file)

TARGET = 2.5
OLD_IMAGE, NEW_IMAGE = "sglang:v0.5.5.post3-cu129-amd64", "sglang:v0.5.6-cu129-amd64"
FORMATS = ("text", "json", "markdown")


def timed(command: list[str], repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        samples.append(time.perf_counter() - start)
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(command)} failed: {done.stderr.decode()[-2000:]}")
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=1000, help="InferenceServices")
    parser.add_argument("-m", type=int, default=1000, help="runtimes")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    omerender = shutil.which("omerender") or sys.exit("omerender is not on PATH: pip install -e .")
    with tempfile.TemporaryDirectory(prefix="omerender-diff-bench-") as work:
        base, head = Path(work) / "base", Path(work) / "head"
        fleet.write_fleet(base, args.n, args.m)
        shutil.copytree(base, head)
        runtimes = head / "inputs" / "runtimes.yaml"
        runtimes.write_text(runtimes.read_text().replace(OLD_IMAGE, NEW_IMAGE))
        render = timed([omerender, "render", str(base / "inputs")], args.repeats)
        rows = [(fmt, timed([omerender, "diff", str(base / "inputs"), str(head / "inputs"), "--format", fmt],
                            args.repeats)) for fmt in FORMATS]
    print(f"{args.n} InferenceServices, {args.m} runtimes; median of {args.repeats} runs\n")
    print("| command | seconds | × render |\n| --- | --- | --- |")
    print(f"| render | {render:.2f} | 1.00 |")
    for fmt, seconds in rows:
        print(f"| diff --format {fmt} | {seconds:.2f} | {seconds / render:.2f} |")
    worst = max(seconds for _, seconds in rows) / render
    print(f"\ntarget: under {TARGET}× one render: {'holds' if worst < TARGET else 'MISSED'} ({worst:.2f}×)")
    sys.exit(0 if worst < TARGET else 1)


if __name__ == "__main__":
    main()
