"""Draw benchmarks/pairs.py's results as an SVG: CPU seconds and peak memory against InferenceServices, one curve
per command and side (today's main dashed, this tree solid), both axes logarithmic. No plotting library: the SVG
is written here.

    python benchmarks/plot.py RESULTS.jsonl [MORE.jsonl ...] -o docs/explanation/performance.svg
"""
from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

COLORS = {"render": "#1f77b4", "build": "#ff7f0e", "plugin": "#2ca02c", "check": "#9467bd", "diff": "#d62728"}
WIDTH, HEIGHT, MARGIN = 460, 320, 56
PANELS = (("cpu", "CPU seconds (user + system)"), ("rss_mb", "peak memory (MB)"))


def load(files: list[Path]) -> dict:
    """{(command, side): {n: {cpu, rss_mb, status}}}, later files winning."""
    curves: dict = {}
    for file in files:
        for line in file.read_text().splitlines():
            if not line.strip():
                continue
            size = json.loads(line)
            for command, sides in size["commands"].items():
                for side, value in sides.items():
                    curves.setdefault((command, side), {})[size["n"]] = value
    return curves


def scale(low: float, high: float, start: float, end: float):
    low, high = math.log10(low), math.log10(high)
    span = (high - low) or 1.0
    return lambda v: start + (math.log10(v) - low) / span * (end - start)


def decades(low: float, high: float) -> list[float]:
    return [10.0 ** e for e in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)]


def panel(curves: dict, field: str, title: str, left: float) -> list[str]:
    points = [(n, v[field]) for c in curves.values() for n, v in c.items() if v.get(field)]
    ns, values = [p[0] for p in points], [p[1] for p in points]
    xs, ys = decades(min(ns), max(ns)), decades(min(values), max(values))
    x = scale(xs[0], xs[-1], left + MARGIN, left + WIDTH - 12)
    y = scale(ys[0], ys[-1], HEIGHT - MARGIN, 28)
    out = [f'<text x="{left + WIDTH / 2:.0f}" y="16" text-anchor="middle" font-weight="bold">{title}</text>']
    for tick in xs:
        out.append(f'<line x1="{x(tick):.1f}" y1="28" x2="{x(tick):.1f}" y2="{HEIGHT - MARGIN}" stroke="#ddd"/>')
        out.append(f'<text x="{x(tick):.1f}" y="{HEIGHT - MARGIN + 16}" text-anchor="middle">{tick:,.0f}</text>')
    for tick in ys:
        out.append(f'<line x1="{left + MARGIN}" y1="{y(tick):.1f}" x2="{left + WIDTH - 12}" y2="{y(tick):.1f}" '
                   f'stroke="#ddd"/>')
        out.append(f'<text x="{left + MARGIN - 6}" y="{y(tick) + 4:.1f}" text-anchor="end">{tick:g}</text>')
    out.append(f'<text x="{left + WIDTH / 2:.0f}" y="{HEIGHT - 16}" text-anchor="middle">InferenceServices</text>')
    for (command, side), by_n in sorted(curves.items()):
        shown = sorted((n, v) for n, v in by_n.items() if v.get(field))
        if not shown:
            continue
        color, dash = COLORS.get(command, "#000"), ' stroke-dasharray="5,4"' if side == "before" else ""
        path = " ".join(f"{'M' if i == 0 else 'L'}{x(n):.1f},{y(v[field]):.1f}" for i, (n, v) in enumerate(shown))
        out.append(f'<path d="{path}" fill="none" stroke="{color}" stroke-width="2"{dash}/>')
        for n, v in shown:
            failed = any(status != 0 for status in v.get("status", [0]))
            mark = "none" if failed else color  # hollow: the run failed (Argo CD's limit, kustomize's timeout)
            out.append(f'<circle cx="{x(n):.1f}" cy="{y(v[field]):.1f}" r="3.5" fill="{mark}" stroke="{color}"/>')
    return out


def legend(curves: dict, top: float) -> list[str]:
    out, left = [], MARGIN
    for command in COLORS:
        if not any(c == command for c, _ in curves):
            continue
        color = COLORS[command]
        out.append(f'<line x1="{left}" y1="{top}" x2="{left + 22}" y2="{top}" stroke="{color}" stroke-width="2"/>')
        out.append(f'<text x="{left + 26}" y="{top + 4}">{command}</text>')
        left += 90
    out.append(f'<text x="{left + 10}" y="{top + 4}">solid: this tree; dashed: main f49695a; hollow: failed</text>')
    return out


def svg(curves: dict) -> str:
    body = []
    for index, (field, title) in enumerate(PANELS):
        body += panel(curves, field, title, index * WIDTH)
    body += legend(curves, HEIGHT + 8)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{2 * WIDTH}" height="{HEIGHT + 24}" '
            f'font-family="sans-serif" font-size="11">\n<rect width="100%" height="100%" fill="white"/>\n'
            + "\n".join(body) + "\n</svg>\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, nargs="+")
    parser.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args()
    args.output.write_text(svg(load(args.results)))


if __name__ == "__main__":
    main()
