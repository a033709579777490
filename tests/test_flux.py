"""Flux and plain CI: the rendered-manifests directory (`render --output-dir DIR`, write_rendered_dir) and
`omerender check DIR_IN DIR_RENDERED`; the written directory is built with the real kustomize, as
Flux's kustomize-controller does."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from omerender.errors import OmeError
from omerender.gitops.outdir import GENERATED_MARK, MARKER, MARKER_MARK, write_rendered_dir

ROOT = Path(__file__).resolve().parents[1]
QUICKSTART = ROOT / "fixtures" / "quickstart"
ISVC = "llama-3-2-3b-instruct"
COMPONENT = f"{ISVC}-engine"
FILES = [
    "_cluster/clusterbasemodel-llama-3-2-3b-instruct.yaml",  # for OME's model agent (D3)
    "_cluster/namespace-llama-demo.yaml",
    f"llama-demo/deployment-{COMPONENT}.yaml",
    f"llama-demo/horizontalpodautoscaler-{COMPONENT}.yaml",
    f"llama-demo/poddisruptionbudget-{COMPONENT}.yaml",
    f"llama-demo/service-{COMPONENT}.yaml",
    f"llama-demo/service-{ISVC}.yaml",
]


def omerender(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run([sys.executable, "-m", "omerender.cli", *args], capture_output=True, text=True,
                          env=env, check=False)


def rendered(path: Path = QUICKSTART, *flags: str) -> list[dict]:
    done = omerender("render", str(path), *flags)
    assert done.returncode == 0, done.stderr
    return [o for o in yaml.safe_load_all(done.stdout) if o]


def listed(out: Path) -> list[str]:
    return yaml.safe_load((out / "kustomization.yaml").read_text())["resources"]


def tree(out: Path) -> list[str]:
    return sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())


def test_one_file_per_object_and_a_sorted_kustomization(tmp_path):
    objects = rendered()
    write_rendered_dir(objects, str(tmp_path / "out"))
    out = tmp_path / "out"
    assert tree(out) == sorted(FILES + ["kustomization.yaml", MARKER])
    assert listed(out) == FILES
    record = (out / MARKER).read_text()
    assert record.startswith(MARKER_MARK + "\n")
    assert yaml.safe_load(record) == {"files": sorted(FILES + ["kustomization.yaml"])}
    text = (out / "kustomization.yaml").read_text()
    assert text.startswith(GENERATED_MARK + "\n")
    assert yaml.safe_load(text)["apiVersion"] == "kustomize.config.k8s.io/v1beta1"
    by_file = {f: yaml.safe_load((out / f).read_text()) for f in FILES}
    assert by_file[f"llama-demo/deployment-{COMPONENT}.yaml"] == next(o for o in objects if o["kind"] == "Deployment")
    assert sorted(by_file.values(), key=str) == sorted(objects, key=str)


def test_flux_builds_the_directory_back_into_the_same_objects(tmp_path):
    kustomize = shutil.which("kustomize")
    assert kustomize, "kustomize is not on PATH: run scripts/setup-tools.sh"
    objects = rendered()
    write_rendered_dir(objects, str(tmp_path / "out"))
    done = subprocess.run([kustomize, "build", str(tmp_path / "out")], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    built = [o for o in yaml.safe_load_all(done.stdout) if o]
    assert sorted(built, key=str) == sorted(objects, key=str)


def test_rewriting_is_stable_and_removes_only_the_stale_files_it_wrote(tmp_path):
    out = tmp_path / "out"
    objects = rendered()
    write_rendered_dir(objects, str(out))
    before = {f: (out / f).read_text() for f in tree(out)}
    (out / "README.md").write_text("kept\n")  # not omerender's: never touched
    write_rendered_dir(objects, str(out))
    assert {f: (out / f).read_text() for f in tree(out) if f != "README.md"} == before
    only_namespace = [o for o in objects if o["kind"] == "Namespace"]
    write_rendered_dir(only_namespace, str(out))
    assert tree(out) == [MARKER, "README.md", "_cluster/namespace-llama-demo.yaml", "kustomization.yaml"]
    assert not (out / "llama-demo").exists()  # emptied folder removed
    assert listed(out) == ["_cluster/namespace-llama-demo.yaml"]


def test_a_kustomization_not_written_by_omerender_is_never_overwritten(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "kustomization.yaml").write_text("resources: [mine.yaml]\n")
    with pytest.raises(OmeError) as caught:
        write_rendered_dir(rendered(), str(out))
    assert caught.value.message().line() == (f"error: {out}/kustomization.yaml: was not written by omerender; "
                                             f"refusing to overwrite it (render into an empty directory or one "
                                             f"that omerender wrote)")
    assert tree(out) == ["kustomization.yaml"]


def test_render_output_dir_writes_the_directory(tmp_path):
    done = omerender("render", str(QUICKSTART), "--output-dir", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert listed(tmp_path / "out") == FILES


# ---------------------------------------------------------------- omerender check

def test_check_passes_when_the_committed_render_is_current(tmp_path):
    write_rendered_dir(rendered(), str(tmp_path / "out"))
    done = omerender("check", str(QUICKSTART), str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""


def test_check_fails_with_a_unified_diff_when_out_of_date(tmp_path):
    out = tmp_path / "out"
    write_rendered_dir(rendered(), str(out))
    hpa = out / f"llama-demo/horizontalpodautoscaler-{COMPONENT}.yaml"
    hpa.write_text(hpa.read_text().replace("maxReplicas: 1", "maxReplicas: 3"))
    (out / f"llama-demo/service-{ISVC}.yaml").unlink()
    done = omerender("check", str(QUICKSTART), str(out))
    assert done.returncode == 1
    assert done.stderr.endswith(f"error: {out} is out of date with {QUICKSTART}; run: omerender render "
                                f"{QUICKSTART} --output-dir {out}\n")
    diff = done.stdout.splitlines()
    name = f"{out}/llama-demo/horizontalpodautoscaler-{COMPONENT}.yaml"
    assert diff[:2] == [f"--- {name}", f"+++ {name} (rendered)"]
    assert "-  maxReplicas: 3" in diff and "+  maxReplicas: 1" in diff
    assert "--- /dev/null" in diff and f"+++ {out}/llama-demo/service-{ISVC}.yaml (rendered)" in diff


def test_check_names_the_render_options_and_sees_a_stale_file(tmp_path):
    out = tmp_path / "out"
    write_rendered_dir(rendered(QUICKSTART, "--no-model-node-selector"), str(out))
    done = omerender("check", str(QUICKSTART), str(out), "--no-model-node-selector")
    assert done.returncode == 0, done.stderr
    # A file that a previous render wrote but the current one would not: recorded, then reported as removed.
    record = out / MARKER
    data = yaml.safe_load(record.read_text())
    data["files"].append("llama-demo/service-old.yaml")
    record.write_text(MARKER_MARK + "\n" + yaml.safe_dump(data))
    (out / "llama-demo/service-old.yaml").write_text("kind: Service\n")
    done = omerender("check", str(QUICKSTART), str(out), "--no-model-node-selector")
    assert done.returncode == 1
    assert f"--- {out}/llama-demo/service-old.yaml\n+++ /dev/null\n" in done.stdout
    assert done.stderr.endswith(f"run: omerender render {QUICKSTART} --no-model-node-selector --output-dir {out}\n")


def test_check_of_a_missing_directory_says_so_and_how_to_create_it(tmp_path):
    done = omerender("check", str(QUICKSTART), str(tmp_path / "nothing"), "--keep-inputs")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.splitlines()[-1] == (f"error: {tmp_path}/nothing: does not exist; create it: omerender "
                                            f"render {QUICKSTART} --keep-inputs --output-dir {tmp_path}/nothing")
    assert [line.split(":")[0] for line in done.stderr.splitlines()] == ["warning", "error"]


def test_check_reports_render_errors_like_render(tmp_path):
    bad = tmp_path / "in"
    shutil.copytree(QUICKSTART, bad)
    isvc = bad / "isvc.yaml"
    isvc.write_text(isvc.read_text().replace(f"    name: {ISVC}\n  engine", "    name: no-such-model\n  engine"))
    render = omerender("render", str(bad))
    done = omerender("check", str(bad), str(tmp_path / "out"))
    assert (done.returncode, done.stdout, done.stderr) == (1, "", render.stderr)
    assert 'referenced model "no-such-model" not found' in done.stderr
