"""The dependency ranges in pyproject.toml hold: omerender, installed with the lowest version each range allows
(constraints/floors.txt), passes the tests of the code that uses those packages.

The floor environment is a virtual environment under .tools/ (git-ignored), built once per content of
floors.txt, of pyproject.toml's [project] table, per checkout and per Python, and reused while they stay the
same. omerender is installed into it editable, so the tests there run this checkout's code. The Hub tests run
there against huggingface_hub's 0.x client (requests) and, in the main environment, against the newest (httpx).
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
FLOORS = ROOT / "constraints" / "floors.txt"
# What the tests need beyond omerender[hf]: pytest, and kubernetes-validate for conftest's schema checks.
TEST_TOOLS = ("pytest", "kubernetes-validate", "hypothesis")  # hypothesis: test_yaml_fast's generated documents
# The tests of the code that uses each dependency: the Hub client (huggingface_hub), model-info --update
# (ruamel.yaml), CEL rules of CRDs (common-expression-language),
# the command line and its help (click), YAML read and written (PyYAML, its C loader and
# dumper) in lock files, KRM ResourceLists, nulls and hostile input, and the fast read path (rapidyaml).
FLOOR_TESTS = ("tests/test_modelinfo_hub.py", "tests/test_modelinfo_update.py", "tests/test_cli.py",
               "tests/test_help.py", "tests/test_lock.py", "tests/test_krm.py", "tests/test_nulls.py",
               "tests/test_adversarial_new.py", "tests/test_validate.py", "tests/test_celrules.py",
               "tests/test_yaml_fast.py")


def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def ranged() -> list[Requirement]:
    """The requirements whose floors are pinned: the runtime dependencies and the hf extra."""
    meta = project()
    return [Requirement(text) for text in (*meta["dependencies"], *meta["optional-dependencies"]["hf"])]


def floors(text: str) -> dict[str, str]:
    """floors.txt's ``name==version`` lines, by canonical name."""
    pins: dict[str, str] = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, sep, version = line.partition("==")
            assert sep and version.strip(), f"constraints/floors.txt: {line!r} is not NAME==VERSION"
            pins[canonicalize_name(name.strip())] = version.strip()
    return pins


def floor_of(requirement: Requirement) -> str:
    lower = [spec.version for spec in requirement.specifier if spec.operator == ">="]
    assert len(lower) == 1, f"pyproject.toml: {requirement} needs exactly one >= floor"
    return lower[0]


def test_every_range_has_its_floor_in_the_constraints():
    wanted = {canonicalize_name(r.name): Version(floor_of(r)) for r in ranged()}
    pinned = {name: Version(version) for name, version in floors(FLOORS.read_text()).items()}
    assert pinned == wanted, \
        "constraints/floors.txt must pin each range of pyproject.toml's dependencies and hf extra to its floor"


def test_the_test_extra_allows_the_hub_client_the_hf_extra_allows():
    meta = project()
    extras = {extra: {canonicalize_name(r.name): r.specifier for r in map(Requirement, texts)}
              for extra, texts in meta["optional-dependencies"].items()}
    assert {name: extras["test"].get(name) for name in extras["hf"]} == extras["hf"]


def floor_env() -> Path:
    """The floor environment's Python, building the environment when floors.txt, pyproject.toml's [project]
    table, the checkout or the Python changed since it was built (and removing this checkout's older ones)."""
    parts = (FLOORS.read_text(), json.dumps(project(), sort_keys=True), str(ROOT), sys.version, *TEST_TOOLS)
    home = ROOT / ".tools" / f"floors-{hashlib.sha256(chr(0).join(parts).encode()).hexdigest()[:16]}"
    python = home / "bin" / "python"
    if (home / "ready").exists():
        return python
    for old in home.parent.glob("floors-*"):
        if (old / "checkout").is_file() and (old / "checkout").read_text() == str(ROOT):
            shutil.rmtree(old, ignore_errors=True)
    shutil.rmtree(home, ignore_errors=True)  # a build that did not finish
    # Built where it stays: a virtual environment's scripts name its Python by path.
    subprocess.run([sys.executable, "-m", "venv", str(home)], check=True)
    (home / "checkout").write_text(str(ROOT))
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--constraint", str(FLOORS),
         "--editable", f"{ROOT}[hf]", *TEST_TOOLS], capture_output=True, text=True, timeout=900)
    assert install.returncode == 0, f"installing omerender at its floors failed:\n{install.stderr[-4000:]}"
    (home / "ready").write_text("")
    return python


def installed(python: Path) -> dict[str, str]:
    listing = subprocess.run([str(python), "-m", "pip", "list", "--format=freeze", "--disable-pip-version-check"],
                             capture_output=True, text=True, check=True).stdout
    return {canonicalize_name(name): version for name, _, version in
            (line.partition("==") for line in listing.splitlines() if "==" in line)}


def test_the_floors_pass_the_tests_of_the_code_that_uses_them():
    python = floor_env()
    pins, have = floors(FLOORS.read_text()), installed(python)
    assert {name: have.get(name) for name in pins} == pins
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHONPATH"))}
    env["PATH"] = f"{python.parent}{os.pathsep}{env.get('PATH', '')}"
    run = subprocess.run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", *FLOOR_TESTS],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, f"the tests fail at the floors of constraints/floors.txt:\n{run.stdout[-6000:]}"
