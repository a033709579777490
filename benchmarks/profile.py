"""Profile one render in-process: ``python benchmarks/profile.py [-n 10000] [-m 2000]``.

Generates the fleet (benchmarks/fleet.py) unless ``--inputs DIR`` is given, then runs read, index,
render and dump under cProfile and prints the top functions by cumulative and by own time,
with each stage's wall time (measured without the profiler first).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# Run as a script, this file is the "profile" module cProfile imports: hide it while cProfile loads.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
import cProfile  # noqa: E402
import pstats  # noqa: E402

sys.path.insert(0, str(HERE))
import fleet  # noqa: E402

from omerender.ome.load import index  # noqa: E402
from omerender.ome.render import Options, render  # noqa: E402
from omerender.yamlio.emit import dump_stream  # noqa: E402
from omerender.yamlio.reading import read_paths  # noqa: E402


def stages(inputs: Path) -> dict[str, float]:
    times, start = {}, time.perf_counter()
    docs = read_paths([str(inputs)])
    times["read"], start = time.perf_counter() - start, time.perf_counter()
    indexed = index(docs)
    times["index"], start = time.perf_counter() - start, time.perf_counter()
    result = render(indexed, Options())
    times["render"], start = time.perf_counter() - start, time.perf_counter()
    dump_stream(result.objects)
    times["dump"] = time.perf_counter() - start
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-n", type=int, default=10000)
    parser.add_argument("-m", type=int, default=2000)
    parser.add_argument("--inputs", type=Path, help="an existing fleet's inputs directory")
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="omerender-profile-") as tmp:
        inputs = args.inputs
        if inputs is None:
            fleet.write_fleet(Path(tmp), args.n, args.m)
            inputs = Path(tmp) / "inputs"
        print("stage wall times (s):", {k: round(v, 2) for k, v in stages(inputs).items()})
        profiler = cProfile.Profile()
        profiler.runcall(stages, inputs)
    stats = pstats.Stats(profiler)
    stats.sort_stats("cumulative").print_stats(args.top)
    stats.sort_stats("tottime").print_stats(args.top)


if __name__ == "__main__":
    main()
