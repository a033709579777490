"""Each command of omerender, before and after, pair by pair on one fleet: render, build, the Argo CD plugin's
generate, check and diff of a one-runtime change (issue 42).

The machine is shared, so only ratios within one run count: every round runs each command in turn, the before and
after side of one command back to back (every other round the after side first), and the report gives the median
over the rounds of each command's CPU seconds (user + system, its children included: kustomize), wall seconds and
peak memory (max RSS of the process tree's largest member), with the load average around each size. Each command's
``renders`` is the median of its CPU over the render's in the same round; the render's ``of_before``, of the after
side's CPU over the before side's.

    python benchmarks/pairs.py --before /work/main/.venv/bin --sizes 100,1000 --pairs 3 [--json OUT.json]

``--before DIR``: the bin directory of today's omerender (its ``omerender``); the after side is the omerender
beside this Python. kustomize must be on PATH. ``--commands`` picks some of render,build,plugin,check,diff;
``--timeout`` bounds each run (a plugin past it is reported as failed, as Argo CD would fail it).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import fleet  # noqa: E402

COMMANDS = ("render", "build", "plugin", "check", "diff")
APP = "apps/fleet"
OLD_IMAGE = "sglang:v0.5.5.post3-cu129-amd64"


def argocd_env(path: str) -> dict[str, str]:
    return {"PATH": path, "HOME": os.environ.get("HOME", "/tmp"), "LANG": "C.UTF-8", "ARGOCD_APP_NAME": "fleet",
            "ARGOCD_APP_NAMESPACE": "argocd", "ARGOCD_APP_SOURCE_PATH": APP, "ARGOCD_APP_REVISION": "0123abcd",
            "ARGOCD_APP_SOURCE_REPO_URL": "https://git.example/fleet.git", "ARGOCD_APP_PARAMETERS": "[]"}


def measure(argv: list[str], cwd: Path, env: dict, timeout: float) -> dict:
    """CPU (user + system, children included), wall seconds, peak RSS in MB, exit status, stdout size."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        process = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.DEVNULL)
        deadline = start + timeout
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                process.kill()
                pid, status, usage = os.wait4(process.pid, 0)
                break
            time.sleep(0.02)
        wall = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        size = out.seek(0, 2)
    return {"cpu": usage.ru_utime + usage.ru_stime, "wall": wall, "rss_mb": usage.ru_maxrss / 1024,
            "status": process.returncode, "out_bytes": size}


def commands(name: str, repo: Path, bindir: str, rendered: Path, head: Path) -> tuple[list[str], Path, dict]:
    omerender = os.path.join(bindir, "omerender")
    path = f"{bindir}{os.pathsep}{os.environ['PATH']}"
    env = {**os.environ, "PATH": path}
    app = repo / APP
    if name == "render":
        return [omerender, "render", "inputs"], app, env
    if name == "build":
        return [omerender, "build", APP], repo, env
    if name == "plugin":
        return [omerender, "argocd", "generate"], app, argocd_env(path)
    if name == "check":
        return [omerender, "check", "inputs", str(rendered)], app, env
    return [omerender, "diff", "inputs", str(head)], app, env


def prepare(work: Path, n: int, m: int, after_bin: str) -> tuple[Path, Path, Path]:
    repo = work / f"fleet-{n}"
    if repo.exists():
        shutil.rmtree(repo)
    fleet.write_fleet(repo / APP, n, m)
    (repo / ".git").mkdir()
    rendered = work / f"rendered-{n}"
    shutil.rmtree(rendered, ignore_errors=True)
    subprocess.run([os.path.join(after_bin, "omerender"), "render", "inputs", "--output-dir", str(rendered)],
                   cwd=repo / APP, check=False, capture_output=True)
    head = work / f"head-{n}"
    shutil.rmtree(head, ignore_errors=True)
    shutil.copytree(repo / APP / "inputs", head)
    runtimes = head / "runtimes.yaml"
    text = runtimes.read_text()
    at = text.index(OLD_IMAGE)  # one runtime's image: a one-runtime change
    runtimes.write_text(text[:at] + text[at:].replace(OLD_IMAGE, "sglang:v0.5.6-cu129-amd64", 1))
    return repo, rendered, head


def run_size(n: int, m: int, args, work: Path) -> dict:
    after_bin = os.path.dirname(sys.executable)
    repo, rendered, head = prepare(work, n, m, after_bin)
    sides = {"before": args.before, "after": after_bin}
    found: dict = {"n": n, "m": m, "load_before": os.getloadavg()[0], "commands": {}}
    runs = {name: {"before": [], "after": []} for name in args.commands}
    for pair in range(args.pairs):  # a round runs every command, so a round's ratios share its load
        order = ("before", "after") if pair % 2 == 0 else ("after", "before")
        for name in args.commands:
            for side in order:
                if side == "before" and n > args.before_max.get(name, 10**9):
                    continue
                argv, cwd, env = commands(name, repo, sides[side], rendered, head)
                runs[name][side].append(measure(argv, cwd, env, args.timeout))
    for name in args.commands:
        found["commands"][name] = {side: summary(r) for side, r in runs[name].items() if r}
        if name != "render" and "render" in runs:
            found["commands"][name]["after"]["renders"] = _ratio(runs[name]["after"], runs["render"]["after"])
        elif name == "render" and runs[name]["before"]:
            found["commands"][name]["after"]["of_before"] = _ratio(runs[name]["after"], runs[name]["before"])
        print(json.dumps({"n": n, name: found["commands"][name]}), flush=True)
    found["load_after"] = os.getloadavg()[0]
    return found


def _ratio(runs: list[dict], against: list[dict]) -> float | None:
    """The median over rounds of ``runs``' CPU over ``against``'s in the same round."""
    pairs = [a["cpu"] / b["cpu"] for a, b in zip(runs, against) if b["cpu"]]
    return round(statistics.median(pairs), 3) if pairs else None


def summary(runs: list[dict]) -> dict:
    return {"cpu": statistics.median(r["cpu"] for r in runs), "wall": statistics.median(r["wall"] for r in runs),
            "rss_mb": max(r["rss_mb"] for r in runs), "status": sorted({r["status"] for r in runs}),
            "runs": len(runs), "cpus": [round(r["cpu"], 2) for r in runs]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="bin directory of today's omerender")
    parser.add_argument("--sizes", default="100,1000")
    parser.add_argument("--runtimes", default="", help="runtimes per size (default: fleet.py's: n, at most 2,000)")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--commands", default=",".join(COMMANDS))
    parser.add_argument("--before-max", default="", help="name=N,...: skip the before side of a command past N")
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--work", type=Path)
    parser.add_argument("--json", type=Path, help="append each size's results here (one JSON object a line)")
    args = parser.parse_args()
    args.commands = args.commands.split(",")
    args.before_max = {k: int(v) for k, v in (p.split("=") for p in args.before_max.split(",") if p)}
    sizes = [int(s) for s in args.sizes.split(",")]
    counts = [int(s) for s in args.runtimes.split(",")] if args.runtimes else [min(s, 2000) for s in sizes]
    with tempfile.TemporaryDirectory(prefix="pairs-") as temporary:
        work = args.work or Path(temporary)
        work.mkdir(parents=True, exist_ok=True)
        for n, m in zip(sizes, counts):
            found = run_size(n, m, args, work)
            if args.json:
                with args.json.open("a") as out:
                    out.write(json.dumps(found) + "\n")


if __name__ == "__main__":
    main()
