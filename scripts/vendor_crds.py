"""Refresh omerender/kube/crds/: the pinned CRD schemas of every kind omerender writes outside the Kubernetes API,
which ``omerender validate`` (and the render's validation) check objects against.

    python scripts/vendor_crds.py [--mirrors DIR]

Each source below is a CRD file of an upstream repository at a pinned commit. With ``--mirrors DIR`` it is read
from a local mirror, ``DIR/OWNER+NAME/repo`` (a bare git repository; ``git show COMMIT:PATH``), else downloaded from
raw.githubusercontent.com. The schema of the served version is kept with every ``description`` and the ``status``
property removed (documentation, and what a client never writes) and nothing else changed; each file records the
CRD's group, version, kind, repository, tag, commit, path and URL. Bump a pin by editing SOURCES and running this.
"""
from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import urllib.request
from pathlib import Path

import yaml

OUT = Path(__file__).resolve().parents[1] / "omerender" / "kube" / "crds"
# (file, repository, tag, commit, path, served version); the kinds are what omerender writes.
SOURCES = [
    ("leaderworkerset", "kubernetes-sigs/lws", "v0.10.0-11-g060ab4d", "060ab4d",
     "config/crd/bases/leaderworkerset.x-k8s.io_leaderworkersets.yaml", "v1"),
    ("scaledobject", "kedacore/keda", "v2.20.1-117-g8b4f083ca", "8b4f083ca",
     "config/crd/bases/keda.sh_scaledobjects.yaml", "v1alpha1"),
    ("triggerauthentication", "kedacore/keda", "v2.20.1-117-g8b4f083ca", "8b4f083ca",
     "config/crd/bases/keda.sh_triggerauthentications.yaml", "v1alpha1"),
    ("httproute", "kubernetes-sigs/gateway-api", "v1.6.0", "89b3b0c",
     "config/crd/standard/gateway.networking.k8s.io_httproutes.yaml", "v1"),
    ("backendtrafficpolicy", "envoyproxy/gateway", "v1.9.0", "39763b1",
     "charts/gateway-helm/charts/crds/crds/generated/gateway.envoyproxy.io_backendtrafficpolicies.yaml", "v1alpha1"),
    ("podmonitor", "prometheus-operator/prometheus-operator", "v0.79.2", "1d2dca5",
     "example/prometheus-operator-crd/monitoring.coreos.com_podmonitors.yaml", "v1"),
]


def without_descriptions(node):
    if isinstance(node, dict):
        return {key: without_descriptions(value) for key, value in node.items() if key != "description"}
    if isinstance(node, list):
        return [without_descriptions(item) for item in node]
    return node


def served_schema(crd: dict, version: str) -> dict:
    (entry,) = [v for v in crd["spec"]["versions"] if v["name"] == version and v.get("served")]
    schema = without_descriptions(entry["schema"]["openAPIV3Schema"])
    schema.get("properties", {}).pop("status", None)
    return schema


def read_crd(repository: str, commit: str, path: str, mirrors: Path | None) -> str:
    if mirrors is not None:
        git_dir = mirrors / repository.replace("/", "+") / "repo"
        return subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{commit}:{path}"], check=True,
                              capture_output=True, text=True).stdout
    with urllib.request.urlopen(url(repository, commit, path), timeout=60) as response:
        return response.read().decode()


def url(repository: str, commit: str, path: str) -> str:
    return f"https://raw.githubusercontent.com/{repository}/{commit}/{path}"


def document(text: str, source: tuple) -> dict:
    _, repository, tag, commit, path, version = source
    crd = yaml.safe_load(text)
    return {"group": crd["spec"]["group"], "version": version, "kind": crd["spec"]["names"]["kind"],
            "source": {"repository": repository, "tag": tag, "commit": commit, "path": path,
                       "url": url(repository, commit, path)},
            "openAPIV3Schema": served_schema(crd, version)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirrors", type=Path, help="a folder of bare git mirrors, OWNER+NAME/repo")
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    for source in SOURCES:
        text = read_crd(source[1], source[3], source[4], args.mirrors)
        data = json.dumps(document(text, source), separators=(",", ":"), sort_keys=True).encode()
        (OUT / f"{source[0]}.json.gz").write_bytes(gzip.compress(data, compresslevel=9, mtime=0))
        print(f"wrote {source[0]}.json.gz from {source[1]} {source[2]}")


if __name__ == "__main__":
    main()
