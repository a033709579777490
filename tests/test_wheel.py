"""The release a user installs (issue 35): the sdist and the wheel `python -m build` makes, as `twine check --strict`
judges them, and the wheel installed into a brand-new virtualenv running the quick start, `--version` and the KRM
function from outside the checkout.

The build runs once per session, on a copy of the files a clone has (git's tracked and unignored files), with
build's own isolation: it installs the backend pyproject.toml names, as a user's `python -m build` or
`pip install .` does (pip's configuration supplies it, from its index or its local wheels). build makes the wheel
from the sdist, so a passing build also shows the sdist holds what a rebuild needs. The new virtualenvs see only
omerender's runtime dependencies from this environment (a .pth file), never the checkout or its editable install.
"""
from __future__ import annotations

import email
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tomllib
import zipfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement

from conftest import CHART_DEFAULTS_CODED, FIXTURES, ROOT, run_cli

from omerender import __version__, version_text

# one worker builds and installs the wheel once for the whole module (pytest-xdist --dist loadgroup)
pytestmark = pytest.mark.xdist_group("wheel")
QUICKSTART_WARNING = (CHART_DEFAULTS_CODED + "\n"
                      "warning: fixtures/quickstart/isvc.yaml:3:1: InferenceService llama-demo/llama-3-2-3b-instruct: "
                      "Runtime sglang-llama-3-2-3b will be auto-selected for model llama-3-2-3b-instruct "
                      "[auto-selected-runtime]\n")


@dataclass(frozen=True)
class Dist:
    sdist: Path
    wheel: Path
    log: str   # what python -m build printed


def _clone_files() -> list[str]:
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    return [name for name in listed if name and (ROOT / name).is_file() and not (ROOT / name).is_symlink()]


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Dist:
    base = tmp_path_factory.mktemp("release")
    source = base / "omerender"
    for name in _clone_files():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    out = base / "dist"
    done = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(source)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    sdist, = out.glob("*.tar.gz")
    wheel, = out.glob("*.whl")
    return Dist(sdist, wheel, done.stdout + done.stderr)


def _runtime_dependencies() -> set[str]:
    """The distributions omerender needs at run time (its requirements without extras, and theirs) as installed
    here."""
    found, todo = set(), ["omerender"]
    while todo:
        for text in metadata.requires(todo.pop()) or []:
            requirement = Requirement(text)
            if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
                continue
            if requirement.name.lower() not in found:
                found.add(requirement.name.lower())
                todo.append(requirement.name)
    return found


def _new_venv(path: Path) -> Path:
    """A virtualenv without pip whose site-packages reaches this environment's PyYAML, click and ruamel.yaml."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True, capture_output=True,
                   timeout=120)
    deps = path / "shared-deps"
    deps.mkdir()
    site = Path(sysconfig.get_paths()["purelib"])
    for name in _runtime_dependencies():
        for top in {file.parts[0] for file in metadata.distribution(name).files or ()
                    if file.parts[0] != ".."}:
            if (site / top).exists() and not (deps / top).exists():
                (deps / top).symlink_to(site / top)
    new_site, = (path / "lib").glob("python3*/site-packages")
    (new_site / "omerender_test_deps.pth").write_text(f"{deps}\n")
    return path


def _environment(venv: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    return {**env, "PATH": os.pathsep.join([str(venv / "bin"), "/usr/bin", "/bin"]), "VIRTUAL_ENV": str(venv)}


@pytest.fixture(scope="module")
def installed(dist, tmp_path_factory) -> tuple[Path, Path]:
    """The wheel installed into a new virtualenv, and a directory outside the checkout holding the quick start."""
    base = tmp_path_factory.mktemp("installed")
    venv = _new_venv(base / "venv")
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install",
                           "--quiet", "--no-deps", "--no-index", str(dist.wheel)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    work = base / "work"
    shutil.copytree(FIXTURES / "quickstart", work / "fixtures" / "quickstart")
    shutil.copytree(FIXTURES / "benchmark", work / "fixtures" / "benchmark")
    return venv, work


def _run(venv: Path, cwd: Path, *argv: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(venv / "bin" / argv[0]), *argv[1:]], cwd=cwd, env=_environment(venv), input=stdin,
                          capture_output=True, text=True, timeout=120)


def test_twine_check_strict_passes_the_sdist_and_the_wheel(dist):
    env = {**os.environ, "COLUMNS": "1000"}   # one line per file
    done = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", str(dist.sdist), str(dist.wheel)],
                          capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout).splitlines()
    assert sorted(lines) == [f"Checking {dist.wheel}: PASSED", f"Checking {dist.sdist}: PASSED"]


def test_the_wheel_holds_every_file_the_package_reads_and_the_metadata_an_index_shows(dist):
    with zipfile.ZipFile(dist.wheel) as wheel:
        names = set(wheel.namelist())
        info = email.message_from_string(wheel.read(f"omerender-{__version__}.dist-info/METADATA").decode())
        entry_points = wheel.read(f"omerender-{__version__}.dist-info/entry_points.txt").decode()
    package = {name for name in _clone_files() if name.startswith("omerender/")}
    data = {name for name in package if not name.endswith(".py")}
    assert data >= {"omerender/kube/k8s_types/1.28.json.gz", "omerender/kube/k8s_types/1.37.json.gz",
                    "omerender/ome/cluster/chart_defaults.yaml",
                    "omerender/ome/cluster/chart_benchmark_defaults.yaml"}
    assert package - names == set(), "files under omerender/ the wheel leaves out (pyproject.toml's package-data)"
    assert dist.wheel.name == f"omerender-{__version__}-py3-none-any.whl"
    assert (info["Name"], info["Version"], info["License-Expression"], info["Requires-Python"]) == (
        "omerender", __version__, "Apache-2.0", ">=3.11")
    assert info["Summary"].startswith("Render OME (Open Model Engine) serving objects")
    assert info["Description-Content-Type"] == "text/markdown"
    assert info.get_payload() == (ROOT / "README.md").read_text()
    assert [url.split(",")[0] for url in info.get_all("Project-URL")] == [
        "Homepage", "Repository", "Documentation", "Changelog"]
    assert "Programming Language :: Python :: 3.11" in info.get_all("Classifier")
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert sorted(r for r in info.get_all("Requires-Dist") if ";" not in r) == sorted(pyproject["dependencies"])
    assert "omerender = omerender.cli:main\nomerender-fn = omerender.cli.fn:main\n" in entry_points


def test_the_sdist_holds_what_a_rebuild_needs_and_not_the_tests(dist):
    prefix = f"omerender-{__version__}/"
    with tarfile.open(dist.sdist) as sdist:
        names = {member.name.removeprefix(prefix) for member in sdist.getmembers() if member.isfile()}
    package = {name for name in _clone_files() if name.startswith("omerender/")}
    assert package - names == set()
    assert {"pyproject.toml", "README.md", "MANIFEST.in", "CHANGELOG.md", "PKG-INFO"} <= names
    assert not {name for name in names if name.startswith(("tests/", "fixtures/", "docs/"))}
    assert "Building wheel from sdist" in dist.log   # the wheel tested here was built from this sdist


def test_the_installed_wheel_runs_the_quick_start_outside_the_checkout(installed):
    venv, work = installed
    where = _run(venv, work, "python", "-c", "import omerender; print(omerender.__file__)")
    assert Path(where.stdout.strip()).is_relative_to(venv / "lib"), where.stdout + where.stderr
    done = _run(venv, work, "omerender", "--version")
    assert (done.returncode, done.stdout, done.stderr) == (0, version_text("omerender"), "")
    done = _run(venv, work, "omerender", "render", "fixtures/quickstart")
    assert (done.returncode, done.stderr) == (0, QUICKSTART_WARNING)
    objects = [(o["kind"], o["metadata"]["name"]) for o in yaml.safe_load_all(done.stdout)]
    assert objects == [("ClusterBaseModel", "llama-3-2-3b-instruct"), ("Namespace", "llama-demo"),
                       ("Deployment", "llama-3-2-3b-instruct-engine"), ("Service", "llama-3-2-3b-instruct-engine"),
                       ("HorizontalPodAutoscaler", "llama-3-2-3b-instruct-engine"),
                       ("PodDisruptionBudget", "llama-3-2-3b-instruct-engine"), ("Service", "llama-3-2-3b-instruct")]
    assert done.stdout == run_cli("render", str(FIXTURES / "quickstart")).stdout   # as the checkout renders it


def test_the_installed_wheel_renders_a_benchmark_job_with_the_charts_defaults(installed):
    venv, work = installed
    done = _run(venv, work, "omerender", "render", "fixtures/quickstart", "fixtures/benchmark")
    assert done.returncode == 0, done.stderr
    jobs = [o for o in yaml.safe_load_all(done.stdout) if o["kind"] == "Job"]
    assert [job["metadata"]["name"] for job in jobs] == ["llama-3-2-3b-instruct-bench"]
    expected = run_cli("render", str(FIXTURES / "quickstart"), str(FIXTURES / "benchmark")).stdout
    assert done.stdout == expected
    done = _run(venv, work, "omerender", "config", "fixtures/quickstart")
    assert done.returncode == 0, done.stderr
    assert done.stdout == run_cli("config", str(FIXTURES / "quickstart")).stdout
    assert "chart default" in done.stdout


def test_the_installed_krm_function_renders_a_resource_list(installed):
    venv, work = installed
    items = [o for path in sorted((FIXTURES / "quickstart").glob("*.yaml")) if path.name != "kustomization.yaml"
             for o in yaml.safe_load_all(path.read_text())]
    resource_list = yaml.safe_dump({"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList",
                                    "items": items}, sort_keys=False)
    done = _run(venv, work, "omerender-fn", stdin=resource_list)
    assert done.returncode == 0, done.stderr
    out = yaml.safe_load(done.stdout)
    assert [(o["kind"], o["metadata"]["name"]) for o in out["items"]][:3] == [
        ("ClusterBaseModel", "llama-3-2-3b-instruct"), ("Namespace", "llama-demo"),
        ("Deployment", "llama-3-2-3b-instruct-engine")]
    assert [(r["severity"], r["tags"]["code"]) for r in out["results"]] == [("info", "chart-defaults"),
                                                                          ("warning", "auto-selected-runtime")]
    assert done.stdout == run_cli("fn", input=resource_list).stdout
    done = _run(venv, work, "omerender-fn", "--version")
    assert (done.returncode, done.stdout) == (0, version_text("omerender-fn"))


def test_a_checkout_run_without_installing_names_the_same_version(tmp_path):
    venv = _new_venv(tmp_path / "venv")
    env = {**_environment(venv), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([str(venv / "bin" / "python"), "-m", "omerender", "--version"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (0, version_text("omerender"), "")
    assert f"version {__version__}\n" in done.stdout


def test_the_images_and_their_examples_name_the_package_version():
    """The container images are labelled and tagged by hand (a Dockerfile's LABEL can't read the package), so a
    release that moves __version__ must move them too: this names each place that still says another version."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "omerender.__version__"}
    places = ["Dockerfile", "plugins/argocd/Dockerfile", "plugins/argocd/repo-server-patch.yaml",
              "plugins/argocd/helm-values.yaml", "plugins/argocd/argocd-operator.yaml",
              "plugins/kustomize/omerender-container.yaml"]
    found = {(place, version) for place in places for version in re.findall(
        r"(?:ARG VERSION=|omerender(?:-argocd-cmp)?:)(\d+\.\d+\.\d+\S*?)\b", (ROOT / place).read_text())}
    assert {place for place, _ in found} == set(places)
    assert {(place, version) for place, version in found if version != __version__} == set()
