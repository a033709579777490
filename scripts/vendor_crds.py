"""Refresh omerender/kube/crds/: the pinned CRD schemas of every kind omerender writes outside the Kubernetes API,
which ``omerender validate`` (and the render's validation) check objects against.

    python scripts/vendor_crds.py [--mirrors DIR]

Each source below is a CRD file of an upstream repository at a pinned commit, with the sha256 of its text. With
``--mirrors DIR`` it is read from a local mirror, ``DIR/OWNER+NAME/repo`` (a bare git repository; ``git show
COMMIT:PATH``), else downloaded from raw.githubusercontent.com; a text whose sha256 is not the recorded one is refused
before anything is written. The schema of the served version is kept with every ``description`` and the ``status``
property removed (documentation, and what a client never writes) and nothing else changed; each file records the
CRD's group, version, kind, repository, tag, commit, path, URL and the source's sha256. Bump a pin by editing
SOURCES (commit and sha256, which the refusal prints) and running this; tests/test_vendored_crds.py checks that the
committed files are what this writes from SOURCES.
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import subprocess
import urllib.request
from pathlib import Path

import yaml

OUT = Path(__file__).resolve().parents[1] / "omerender" / "kube" / "crds"
# (file, repository, tag, commit, path, served version, sha256 of the file); the kinds are what omerender writes.
OME = ("sgl-project/ome", "v0.1.5-18-g17b77eda", "17b77edad23bae262e0c9adb7f12039397a5d33d")  # as tests/data/ome
SOURCES = [
    ("leaderworkerset", "kubernetes-sigs/lws", "v0.10.0-11-g060ab4d", "060ab4d",
     "config/crd/bases/leaderworkerset.x-k8s.io_leaderworkersets.yaml", "v1",
     "c5dcad8ed943e495490241f00b9a1b45d51203b6d484020db3636d5bf553568e"),
    ("scaledobject", "kedacore/keda", "v2.20.1-117-g8b4f083ca", "8b4f083ca",
     "config/crd/bases/keda.sh_scaledobjects.yaml", "v1alpha1",
     "207afc4ca44fd9e3f4bbfb1c8fae08f3a365e098a52714fe8eb672bbd239cbcd"),
    ("triggerauthentication", "kedacore/keda", "v2.20.1-117-g8b4f083ca", "8b4f083ca",
     "config/crd/bases/keda.sh_triggerauthentications.yaml", "v1alpha1",
     "990851d71901905bc9bebb50cd964bfc909ca24a03dd401a626a1894bb912ecd"),
    ("httproute", "kubernetes-sigs/gateway-api", "v1.6.0", "89b3b0c",
     "config/crd/standard/gateway.networking.k8s.io_httproutes.yaml", "v1",
     "8c05f321e53b5df6aa4bdbf622a01db9c331f26d7b9723b0fc47001c1341858a"),
    ("backendtrafficpolicy", "envoyproxy/gateway", "v1.9.0", "39763b1",
     "charts/gateway-helm/charts/crds/crds/generated/gateway.envoyproxy.io_backendtrafficpolicies.yaml", "v1alpha1",
     "cd75a4c222df5487aa9ca8957b48bcc3255eb25de02ed9153faf620bc160f786"),
    ("podmonitor", "prometheus-operator/prometheus-operator", "v0.79.2", "1d2dca5",
     "example/prometheus-operator-crd/monitoring.coreos.com_podmonitors.yaml", "v1",
     "0d40a9e5bf3c80e2efaa62e67c3ffc6aac91bb3c1fba3120762361f6e3036dd7"),
    *((f"ome-{plural}", *OME, f"config/crd/full/ome.io_{plural}.yaml", "v1beta1", sha256) for plural, sha256 in (
        ("inferenceservices", "ae8c9d8c7fdcbf91f60c9f916af98b0dd635e071ae810b1461a00ef2fd0d2c57"),
        ("servingruntimes", "245eaf43f876274b43eb4c71bea605accfe83edc7d22f665cc5b9a184a5f0b7d"),
        ("clusterservingruntimes", "afe3cf260703f846e59cf7925ff167326ffa672f39b53266cb3dd8e109f4ce93"),
        ("basemodels", "d915325ef5930120d51fb406c4ec9306285168d77ba18a0747585bde2dd2789e"),
        ("clusterbasemodels", "b81bfef75d5e4ad5711b9da3a0f5a6d2895d7a5f6acbf748d36e05f9b603f4ec"),
        ("acceleratorclasses", "982c79577cc55a9ec7927b901cf2eeab13be1910d0ce956fcd581606e83295e1"),
        ("benchmarkjobs", "c41e2bce4b63a5f39be1828f5ed48fa30a73942e1e6cbf52c19c5278bdcc30b7"),
        ("finetunedweights", "494e5649dff30fa48addd139466eb0654638541af38b78552948a904f18e50ad"))),
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


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def document(text: str, source: tuple) -> dict:
    _, repository, tag, commit, path, version, digest = source
    if sha256(text) != digest:
        raise SystemExit(f"{repository}@{commit}:{path} has sha256 {sha256(text)}, not the {digest} SOURCES records: "
                         f"check the change, then record the new sha256")
    crd = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    return {"group": crd["spec"]["group"], "version": version, "kind": crd["spec"]["names"]["kind"],
            "source": {"repository": repository, "tag": tag, "commit": commit, "path": path,
                       "url": url(repository, commit, path), "sha256": digest},
            "openAPIV3Schema": served_schema(crd, version)}


def packed(document_: dict) -> bytes:
    """The bytes of one vendored file: compact sorted JSON, gzip without a timestamp (the same bytes every run)."""
    data = json.dumps(document_, separators=(",", ":"), sort_keys=True).encode()
    return gzip.compress(data, compresslevel=9, mtime=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirrors", type=Path, help="a folder of bare git mirrors, OWNER+NAME/repo")
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    for source in SOURCES:
        text = read_crd(source[1], source[3], source[4], args.mirrors)
        (OUT / f"{source[0]}.json.gz").write_bytes(packed(document(text, source)))
        print(f"wrote {source[0]}.json.gz from {source[1]} {source[2]}")


if __name__ == "__main__":
    main()
