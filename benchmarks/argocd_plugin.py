"""How long the Argo CD plugin's generate takes on a fleet app (the repo-server deadline that bounds it is 60 s by
default; omerender gives kustomize 45 s of it).

Writes one fleet (benchmarks/fleet.py: N InferenceServices over M runtimes, with the omerender function
listed under transformers:, as a user's app would) into a fresh repository, then runs
plugins/argocd/plugin.yaml's init and generate the way argocd-cmp-server does: each command exec'd in the
app's directory with the ARGOCD_APP_* environment. Prints the wall time of generate (and of init), and
checks that generate succeeded and rendered every InferenceService.

    python benchmarks/argocd_plugin.py -n 1000 -m 1000 [--repeats 3] [--work DIR]

omerender and kustomize must be on PATH (pip install -e .; scripts/setup-tools.sh).
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import fleet  # noqa: E402

PLUGIN = yaml.safe_load((HERE.parent / "plugins" / "argocd" / "plugin.yaml").read_text())
ARGOCD_TIMEOUT_S = 60  # controller/server.repo.server.timeout.seconds (argo-cd #29166: not ARGOCD_EXEC_TIMEOUT)
APP_PATH = "apps/fleet"


def environment(app_path: str) -> dict[str, str]:
    return {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp"), "LANG": "C.UTF-8",
            "ARGOCD_APP_NAME": "fleet", "ARGOCD_APP_NAMESPACE": "argocd", "ARGOCD_APP_SOURCE_PATH": app_path,
            "ARGOCD_APP_REVISION": "0123abcd", "ARGOCD_APP_SOURCE_REPO_URL": "https://git.example/fleet.git",
            "ARGOCD_APP_PARAMETERS": "[]"}


def run(step: dict, app_dir: Path) -> tuple[float, subprocess.CompletedProcess]:
    argv = list(step["command"]) + list(step.get("args") or [])
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=app_dir, env=environment(APP_PATH), capture_output=True, text=True, check=False)
    return time.perf_counter() - start, done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=1000, help="InferenceServices")
    parser.add_argument("-m", type=int, default=1000, help="runtimes")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--work", type=Path, help="keep the repository here (default: a temporary directory)")
    args = parser.parse_args()
    for tool in ("omerender", "kustomize"):
        if not shutil.which(tool):
            sys.exit(f"error: {tool} is not on PATH")
    with tempfile.TemporaryDirectory(prefix="argocd-plugin-") as temporary:
        repo = args.work or Path(temporary)
        app = repo / APP_PATH
        counts = fleet.write_fleet(app, args.n, args.m)
        (repo / ".git").mkdir(exist_ok=True)
        times = []
        for _ in range(args.repeats):
            init_s, init = run(PLUGIN["spec"]["init"], app)
            if init.returncode != 0:
                sys.exit(f"init failed: {init.stderr}")
            seconds, done = run(PLUGIN["spec"]["generate"], app)
            if done.returncode != 0:
                sys.exit(f"generate failed after {seconds:.1f} s: {done.stderr[-2000:]}")
            deployments = done.stdout.count("\nkind: Deployment\n") + done.stdout.count("\nkind: LeaderWorkerSet\n")
            times.append(seconds)
            print(f"generate: {seconds:.1f} s (init {init_s:.1f} s), {len(done.stdout) / 1e6:.1f} MB out, "
                  f"{deployments} Deployments/LeaderWorkerSets", flush=True)
        median = statistics.median(times)
        verdict = "within" if median <= ARGOCD_TIMEOUT_S else "OVER"
        print(f"{counts['isvcs']} InferenceServices, {counts['runtimes']} runtimes: generate median {median:.1f} s "
              f"over {len(times)} run(s), {verdict} Argo CD's default {ARGOCD_TIMEOUT_S} s; load average "
              f"{os.getloadavg()[0]:.2f}, {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
