"""Every documented shell command works as written (issue 13).

Each ```bash, ```sh and ```console block of README.md, CONTRIBUTING.md and docs/ (but docs/spec/) runs with bash
(-e, -u, pipefail) in a temporary copy of the repository, with a brand-new virtualenv's bin, this environment's
omerender and .tools/bin (kustomize) on PATH, and must exit 0. The new virtualenv sees PyYAML and
click from this environment, so `pip install .` installs omerender itself the way a user's does
(pip's own configuration supplies the build backend). Blocks that cannot run here are in SKIP with
the reason; SETUP gives the input a block expects a user to have. Both lists are reviewed: an entry
that names no block fails, so they can't go stale.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# the user's and the contributor's pages; docs/spec/ is the specification, whose blocks are not commands to run
DOCS = [ROOT / "README.md", ROOT / "CONTRIBUTING.md"] + sorted(
    path for path in (ROOT / "docs").rglob("*.md") if (ROOT / "docs" / "spec") not in path.parents)
FENCE = re.compile(r"^```(bash|sh|console)[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)
# a transcript: a ```console or ```text block of one "$ " command and what it prints
TRANSCRIPT = re.compile(r"^```(?:console|text)[ \t]*\n\$ ([^\n]*)\n(.*?)^```[ \t]*$", re.M | re.S)
# omerender's runtime dependencies (import names and distributions), shared with the new virtualenv
DEPENDENCIES = ("yaml", "_yaml", "click", "ruamel")
DISTRIBUTIONS = ("pyyaml", "click", "ruamel.yaml", "ruamel.yaml.clib")
CATALOG = ROOT / "tests" / "data" / "ome"   # OME's catalog and model configs, as $OME_DATA in snippets

SKIP = {
    ("docs/how-to/install.md", 'pipx install "git+https://git.example/omerender.git@TAG"'):
        "a placeholder URL and tag the reader replaces; needs pipx and the network",
    ("docs/how-to/install.md", 'pipx install "omerender[hf] @ git+https://git.example/omerender.git@TAG"'):
        "the same, with the hf extra",
    ("docs/how-to/install.md", "VERSION=$(python3 -c 'import omerender; print(omerender.__version__)')"):
        "builds and tags the container images: needs Docker",
    ("CONTRIBUTING.md", "bash scripts/test.sh"):
        "runs this whole test suite, this test included; CI runs it (.ci/run)",
    ("docs/tutorials/flux.md", 'pip install "git+https://git.example/omerender.git@COMMIT_SHA"'):
        "a placeholder URL and commit the reader replaces; needs the network",
    ("docs/tutorials/first-render.md", "omerender model-info hf://meta-llama/Llama-3.2-3B-Instruct -o json"):
        "reads the Hugging Face Hub (tests/test_modelinfo_hub.py runs the same through a local server)",
    **{("docs/how-to/cluster-needs.md", first): "installs a component into a Kubernetes cluster: needs one, and the network"
       for first in (
           "helm upgrade --install ome-crd oci://ghcr.io/moirai-internal/charts/ome-crd \\",
           "cat > agent-values.yaml <<'EOF'",
           "kubectl get nodes -L models.ome.io/clusterbasemodel.llama-3-2-3b-instruct",
           "VERSION=v0.8.0",
           "helm repo add kedacore https://kedacore.github.io/charts",
           "helm install eg oci://docker.io/envoyproxy/gateway-helm --version v1.8.2 \\",
           "kubectl apply --server-side -f https://github.com/kubernetes-sigs/gateway-api/releases/download/v1.4.1/"
           "standard-install.yaml",
           "kubectl apply --server-side -f https://raw.githubusercontent.com/prometheus-operator/prometheus-operator/"
           "v0.79.2/example/prometheus-operator-crd/monitoring.coreos.com_podmonitors.yaml",
           "helm repo add prometheus-community https://prometheus-community.github.io/helm-charts",
           "helm repo add nvidia https://helm.ngc.nvidia.com/nvidia && helm repo update",
           "kubectl apply -f https://github.com/kubernetes-sigs/metrics-server/releases/latest/download/components.yaml",
       )},
}
SETUP = {
    # the many-clusters example, as the guide's reader has it in their repository
    ("docs/how-to/many-clusters.md",
     "omerender render clusters/west --cluster-config clusters/west/inferenceservice-config.yaml"):
        "cd fixtures/many-clusters",
    ("docs/how-to/many-clusters.md", "for cluster in east west; do"): "cd fixtures/many-clusters",
    ("docs/how-to/many-clusters.md", "for c in east west; do"):
        "cd fixtures/many-clusters\nfor cluster in east west; do\n"
        "  omerender render \"clusters/$cluster\" --cluster-config \"clusters/$cluster/inferenceservice-config.yaml\""
        " --output-dir \"rendered/$cluster\"\ndone",
    ("docs/how-to/many-clusters.md",
     "omerender diff --cluster-config clusters/east/inferenceservice-config.yaml \\"):
        "mkdir demo && cd demo && git init -q -b main . && cp -r ../fixtures/many-clusters/. .\n"
        "git add . && git -c user.name=docs -c user.email=docs@example.com commit -qm base\n"
        "git update-ref refs/remotes/origin/main HEAD",
    # an overlay whose OMERender config sets modelWeights: download
    ("docs/how-to/model-weights.md",
     "omerender render overlays/prod --downloader-env HF_ENDPOINT=https://hf-mirror.example"):
        "cd fixtures/kustomize && printf '  modelWeights: download\\n' >> overlays/prod/omerender.yaml",
    ("docs/tutorials/flux.md", "omerender render omedeploy/ --output-dir rendered/"):
        "cp -r fixtures/quickstart omedeploy",   # the reader's directory of OME objects
    # the catalog's model file and the model's own config.json, as a user has them
    ("docs/tutorials/first-render.md",
     "omerender model-info --update models/meta/Llama-3.2-3B-Instruct.yaml ./Llama-3.2-3B-Instruct"):
        "mkdir -p models/meta Llama-3.2-3B-Instruct\n"
        "cp \"$OME_DATA/models/meta/Llama-3.2-3B-Instruct.yaml\" models/meta/\n"
        "cp \"$OME_DATA/modelconfig/llama3_2_3b.json\" Llama-3.2-3B-Instruct/config.json",
    # a repository with an origin/main, its deploy/ directory, and two directories to compare
    ("docs/how-to/review-a-change.md", "omerender diff origin/main HEAD deploy/"):
        "mkdir demo && cd demo && git init -q -b main . && cp -r ../fixtures/quickstart deploy\n"
        "git add deploy && git -c user.name=docs -c user.email=docs@example.com commit -qm base\n"
        "git update-ref refs/remotes/origin/main HEAD && cp -r deploy old && cp -r deploy new",
    # a repository holding the kustomize fixture: base/ and the overlays/prod that patches it
    ("docs/tutorials/kustomize.md", "omerender render overlays/prod"):
        "mkdir demo && cd demo && git init -q -b main . && cp -r ../fixtures/kustomize/. .\n"
        "git add . && git -c user.name=docs -c user.email=docs@example.com commit -qm base\n"
        "git update-ref refs/remotes/origin/main HEAD",
    # the same, with one cluster's ConfigMap (Gateway API on) kept beside the apps under cfg/
    ("docs/how-to/cluster-config-and-ingress.md", "omerender render --cluster-config cfg/prod-cluster.yaml overlays/prod"):
        "mkdir demo && cd demo && git init -q -b main . && cp -r ../fixtures/kustomize/. . && mkdir cfg\n"
        "awk '/^---/{exit} {print}' ../fixtures/gateway-api/inputs.yaml > cfg/prod-cluster.yaml\n"
        "git add . && git -c user.name=docs -c user.email=docs@example.com commit -qm base\n"
        "git update-ref refs/remotes/origin/main HEAD",
}


@dataclass(frozen=True)
class Snippet:
    doc: str
    line: int
    script: str

    @property
    def key(self) -> tuple[str, str]:
        """The document and the block's first command, without its comment."""
        first = self.script.strip().splitlines()[0]
        return self.doc, re.sub(r"\s+#.*$", "", first).strip()

    def __str__(self) -> str:
        return f"{self.doc}:{self.line}"


def snippets() -> list[Snippet]:
    found = []
    for path in DOCS:
        text = path.read_text()
        for match in FENCE.finditer(text):
            body = match.group(2)
            if match.group(1) == "console":   # commands are the "$ " lines; the rest is output
                body = "".join(line[2:] + "\n" for line in body.splitlines() if line.startswith("$ "))
            line = text.count("\n", 0, match.start()) + 1
            found.append(Snippet(str(path.relative_to(ROOT)), line, body))
    return found


RUNNABLE = [s for s in snippets() if s.key not in SKIP]


def test_the_docs_have_snippets_and_the_lists_name_existing_ones():
    keys = {s.key for s in snippets()}
    assert len(RUNNABLE) >= 2
    assert set(SKIP) <= keys, f"SKIP names blocks that no longer exist: {set(SKIP) - keys}"
    assert set(SETUP) <= keys, f"SETUP names blocks that no longer exist: {set(SETUP) - keys}"
    assert all(reason.strip() for reason in SKIP.values())


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory):
    """A pristine copy of the repository's files and a new virtualenv that shares only the dependencies."""
    base = tmp_path_factory.mktemp("docs")
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, check=True).stdout.decode().split("\0")
    repo = base / "repo"
    for name in filter(None, files):
        source = ROOT / name
        if source.is_file() and not source.is_symlink():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, repo / name)
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=300)
    deps = base / "deps"
    deps.mkdir()
    site = Path(sysconfig.get_paths()["purelib"])
    for entry in site.iterdir():
        top = entry.name.split("-")[0].lower()
        if entry.name in DEPENDENCIES or entry.name.startswith("_ruamel_yaml") or (
                entry.name.endswith(".dist-info") and top in DISTRIBUTIONS):
            (deps / entry.name).symlink_to(entry)
    new_site = next((venv / "lib").glob("python3*/site-packages"))
    (new_site / "omerender_docs_deps.pth").write_text(f"{deps}\n")
    return repo, venv


def _environment(venv: Path) -> dict:
    path = os.pathsep.join([str(venv / "bin"), str(Path(sys.executable).parent), str(ROOT / ".tools" / "bin"),
                            os.environ.get("PATH", "")])
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    return {**env, "PATH": path, "VIRTUAL_ENV": str(venv), "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            "OME_DATA": str(CATALOG)}


@pytest.mark.parametrize("snippet", RUNNABLE, ids=str)
def test_snippet_runs_as_written(snippet, sandbox, tmp_path):
    repo, venv = sandbox
    work = tmp_path / "repo"
    shutil.copytree(repo, work, symlinks=True)
    script = SETUP.get(snippet.key, "") + "\n" + snippet.script
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=work, env=_environment(venv),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{snippet} exited {done.returncode}:\n{snippet.script}\n{done.stdout}{done.stderr}"


def transcripts() -> list[tuple[str, str, list[str]]]:
    found = []
    for path in DOCS:
        text = path.read_text()
        for match in TRANSCRIPT.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            found.append((f"{path.relative_to(ROOT)}:{line}", match.group(1), match.group(2).splitlines()))
    return found


def test_the_docs_have_transcripts():
    assert len(transcripts()) >= 2


@pytest.mark.parametrize("where, command, shown", transcripts(), ids=[t[0] for t in transcripts()])
def test_a_transcript_shows_what_its_command_prints(where, command, shown, sandbox, tmp_path):
    """What a reader's terminal shows: stderr and stdout, in either order (the exit status is not shown)."""
    repo, venv = sandbox
    work = tmp_path / "repo"
    shutil.copytree(repo, work, symlinks=True)
    done = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=work, env=_environment(venv),
                          capture_output=True, text=True, timeout=600)
    out, err = done.stdout.splitlines(), done.stderr.splitlines()
    assert shown in (err + out, out + err), f"{where}: `{command}` prints:\n{done.stderr}{done.stdout}"
