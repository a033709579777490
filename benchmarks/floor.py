"""The render's floor: ``python benchmarks/floor.py INPUTS_DIR RENDERED.yaml`` prints seconds.

What PyYAML's C loader needs for the inputs plus what its C dumper needs for the rendered objects
(read beforehand, untimed), in one fresh process like the render's, which runs, as the render does,
without Python's cyclic garbage collector. A renderer that reads YAML and writes YAML cannot go below this;
the benchmark compares ``omerender render`` with it.
"""
from __future__ import annotations

import gc
import sys
import time
from pathlib import Path

import yaml

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def main() -> None:
    gc.disable()
    inputs, rendered = Path(sys.argv[1]), Path(sys.argv[2])
    objects = [d for d in yaml.load_all(rendered.read_text(), Loader=LOADER) if d]
    start = time.process_time()
    for path in sorted(inputs.rglob("*.yaml")):
        list(yaml.load_all(path.read_text(), Loader=LOADER))
    loaded = time.process_time()
    sys.stdout.write("")  # the dump below goes nowhere, as the render's goes to a file
    text = yaml.dump_all(objects, Dumper=DUMPER, sort_keys=True, default_flow_style=False, allow_unicode=True,
                         width=1 << 16, explicit_start=True)
    done = time.process_time()
    print(f"{done - start:.3f} {loaded - start:.3f} {done - loaded:.3f} {len(text)}")


if __name__ == "__main__":
    main()
