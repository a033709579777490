"""Vendor what the Argo CD install tests check the Helm values and the Operator snippet against (run by hand).

    python scripts/refresh-install-schemas.py ARGO_HELM_GIT_DIR ARGOCD_OPERATOR_GIT_DIR [HELM_REF [OPERATOR_REF]]

Both are git directories (a clone, or a bare mirror): argoproj/argo-helm and argoproj-labs/argocd-operator. Writes
tests/schemas/install/argo-cd-chart.json (the argo-cd chart's default values under the keys
plugins/argocd/helm-values.yaml sets, and the volumes its repo-server Deployment defines) and
tests/schemas/install/argocd-operator.json (the ArgoCD CRD's served v1beta1 schema of spec.repo's
sidecarContainers and volumes, descriptions removed, and the volumes the operator gives the repo server),
each with the commit it came from. The tests read them, never the network.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from vendor_crds import without_descriptions  # noqa: E402 - the CRDs' vendoring drops descriptions the same way

OUT = Path(__file__).resolve().parents[1] / "tests" / "schemas" / "install"
CHART_KEYS = (("repoServer", "extraContainers"), ("repoServer", "volumes"), ("configs", "cmp", "create"),
              ("configs", "cmp", "plugins"))


def show(git_dir: str, ref: str, path: str) -> str:
    return subprocess.run(["git", "--git-dir", git_dir, "show", f"{ref}:{path}"], check=True,
                          capture_output=True, text=True).stdout


def commit(git_dir: str, ref: str) -> str:
    return subprocess.run(["git", "--git-dir", git_dir, "rev-parse", f"{ref}^{{commit}}"], check=True,
                          capture_output=True, text=True).stdout.strip()


def chart(git_dir: str, ref: str) -> dict:
    values = yaml.safe_load(show(git_dir, ref, "charts/argo-cd/values.yaml"))
    meta = yaml.safe_load(show(git_dir, ref, "charts/argo-cd/Chart.yaml"))
    defaults: dict = {}
    for keys in CHART_KEYS:
        node, out = values, defaults
        for key in keys[:-1]:
            node, out = node[key], out.setdefault(key, {})
        out[keys[-1]] = node[keys[-1]]
    template = show(git_dir, ref, "charts/argo-cd/templates/argocd-repo-server/deployment.yaml")
    volumes = template[template.index("\n      volumes:"):]
    return {"$comment": f"argoproj/argo-helm commit {commit(git_dir, ref)}, charts/argo-cd {meta['version']} "
                        f"(Argo CD {meta['appVersion']}): values.yaml and templates/argocd-repo-server/deployment.yaml",
            "chartVersion": meta["version"], "appVersion": meta["appVersion"], "defaults": defaults,
            "repoServerVolumes": sorted(set(re.findall(r"^      - name: ([a-z0-9-]+)$", volumes, re.M)))}


def operator(git_dir: str, ref: str) -> dict:
    crd = yaml.safe_load(show(git_dir, ref, "config/crd/bases/argoproj.io_argocds.yaml"))
    (served,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1beta1" and v.get("served")]
    repo = served["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["repo"]
    kept = {key: repo["properties"][key] for key in ("sidecarContainers", "volumes")}
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "repo": {"type": "object", "properties": without_descriptions(kept)}}}}}
    source = show(git_dir, ref, "controllers/argocd/repo_server.go")
    return {"$comment": f"argoproj-labs/argocd-operator {ref} (commit {commit(git_dir, ref)}): "
                        "config/crd/bases/argoproj.io_argocds.yaml, v1beta1, spec.repo.sidecarContainers and "
                        "spec.repo.volumes; controllers/argocd/repo_server.go for the repo server's volumes",
            "group": crd["spec"]["group"], "version": "v1beta1", "kind": crd["spec"]["names"]["kind"],
            "openAPIV3Schema": schema,
            "repoServerVolumes": sorted(set(re.findall(r'Name:\s+"([a-z0-9-]+)",\n\s+VolumeSource', source)))}


def main(helm: str, operator_dir: str, helm_ref: str = "HEAD", operator_ref: str = "v0.18.0") -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, document in (("argo-cd-chart.json", chart(helm, helm_ref)),
                           ("argocd-operator.json", operator(operator_dir, operator_ref))):
        (OUT / name).write_text(json.dumps(document, indent=1, separators=(",", ":"), ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:])
