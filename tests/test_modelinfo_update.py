"""omerender model-info --update (issue 14): fill BaseModel files in place, as OME's agent fills the objects."""
from __future__ import annotations

import difflib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from conftest import CATALOG, CHART_DEFAULTS_INFO, render_objects, run_cli, validate_k8s

CORPUS = CATALOG / "modelconfig"
# Catalog model file, the corpus config of that model, its auto-selectable catalog runtime (None: none is).
PAIRS = [
    ("meta/Llama-3.2-3B-Instruct.yaml", "llama3_2_3b.json", "vllm/llama-3-2-3b-instruct-rt.yaml"),
    ("mistralai/Mixtral-8x7B-v0.1.yaml", "mixtral.json", "srt/mistralai/mixtral-8x7b-v0-1-rt.yaml"),
    ("Qwen/Qwen2.5-7B.yaml", "qwen2.5_7b.json", None),
]


def model_source(tmp_path: Path, config: str) -> Path:
    directory = tmp_path / "src" / config.removesuffix(".json")
    directory.mkdir(parents=True)
    shutil.copy(CORPUS / config, directory / "config.json")
    return directory


def update(*args: str):
    return run_cli("model-info", "--update", *args)


def added_lines(before: str, after: str) -> list[str]:
    diff = list(difflib.ndiff(before.splitlines(keepends=True), after.splitlines(keepends=True)))
    assert not [d for d in diff if d.startswith("- ")], "a line of the user's file changed"
    return [d[2:] for d in diff if d.startswith("+ ")]


@pytest.mark.parametrize("model_file,config,runtime", PAIRS)
def test_catalog_model_is_filled_with_added_lines_only(tmp_path, model_file, config, runtime):
    target = tmp_path / Path(model_file).name
    shutil.copy(CATALOG / "models" / model_file, target)
    before = target.read_text()
    run = update(str(target), str(model_source(tmp_path, config)))
    assert run.code == 0, run.stderr
    after = target.read_text()
    added = added_lines(before, after)
    spec = yaml.safe_load(after)["spec"]
    # The catalog files set modelCapabilities already: never overwritten, so not added.
    assert spec["modelCapabilities"] == ["TEXT_TO_TEXT"]
    assert [line.split(":")[0].strip() for line in added if line.startswith("  ") and not line.startswith("    ")] \
        == ["modelType", "modelArchitecture", "modelFormat", "modelFramework", "modelParameterSize", "maxTokens"]
    assert spec["modelFormat"] == {"name": "safetensors", "version": "1.0.0"}
    name = yaml.safe_load(before)["metadata"]["name"]
    assert run.lines[-1] == (f"info: {target}: ClusterBaseModel {name}: added modelType, modelArchitecture, "
                             f"modelFormat, modelFramework, modelParameterSize, maxTokens from "
                             f"{tmp_path / 'src' / config.removesuffix('.json')}")
    again = update(str(target), str(model_source(tmp_path / "again", config)))
    assert again.code == 0 and target.read_text() == after
    assert again.lines[-1].endswith("nothing to add: every field OME's agent sets is already set")


@pytest.mark.parametrize("model_file,config,runtime", [p for p in PAIRS if p[2]])
def test_updated_models_auto_select_their_catalog_runtime(tmp_path, model_file, config, runtime):
    work = tmp_path / "repo"
    work.mkdir()
    shutil.copy(CATALOG / "models" / model_file, work / "model.yaml")
    shutil.copy(CATALOG / "runtimes" / runtime, work / "runtime.yaml")
    name = yaml.safe_load((work / "model.yaml").read_text())["metadata"]["name"]
    runtime_name = yaml.safe_load((work / "runtime.yaml").read_text())["metadata"]["name"]
    (work / "isvc.yaml").write_text(yaml.safe_dump({
        "apiVersion": "ome.io/v1beta1", "kind": "InferenceService",
        "metadata": {"name": "demo", "namespace": "default"},
        "spec": {"model": {"name": name}, "engine": {"minReplicas": 1, "maxReplicas": 1}}}))
    before = run_cli("explain", "--isvc", "demo", "-n", "default", str(work))
    assert before.code == 1  # the catalog file alone cannot be auto-selected: no modelFormat
    assert update(str(work / "model.yaml"), str(model_source(tmp_path, config))).code == 0
    after = run_cli("explain", "--isvc", "demo", "-n", "default", str(work))
    assert after.code == 0, after.stderr
    assert f"Selected: {runtime_name} (Cluster)" in after.stderr
    assert after.stdout.splitlines()[1].split()[:3] == [runtime_name, "Cluster", "Yes"]
    rendered = run_cli("render", str(work))
    assert rendered.code == 0, rendered.stderr
    assert f"Runtime {runtime_name} will be auto-selected for model {name}" in rendered.stderr


USER_FILE = """\
# Models for the demo cluster.
apiVersion: ome.io/v1beta1
kind: ClusterServingRuntime   # not a model: left alone
metadata: {name: other}
spec: {disabled: true}
---
apiVersion: ome.io/v1beta1
kind: BaseModel
metadata:
  name: 'llama'          # quoted on purpose
  namespace: team-a
spec:
  modelArchitecture: "MyOwnArch"   # set: never overwritten
  storage:
    storageUri: local://./models/llama
    path: /raid/llama
  # a trailing comment in spec
---
apiVersion: ome.io/v1beta1
kind: ClusterBaseModel
metadata:
  name: skipped
  annotations:
    ome.oracle.com/skip-config-parsing: "TRUE"
spec:
  storage: {storageUri: "local://./models/llama"}
"""


def user_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "models" / "llama").mkdir(parents=True)
    shutil.copy(CORPUS / "llama3_2_1b.json", repo / "models" / "llama" / "config.json")
    (repo / "models.yaml").write_text(USER_FILE)
    return repo


def test_storage_uri_comments_quotes_and_other_documents_are_kept(tmp_path):
    repo = user_repo(tmp_path)
    run = update(str(repo))
    assert run.code == 0, run.stderr
    after = (repo / "models.yaml").read_text()
    added = added_lines(USER_FILE, after)
    assert added == ["  modelType: llama\n", "  modelFormat:\n", "    name: safetensors\n", "    version: 1.0.0\n",
                     "  modelFramework:\n", "    name: transformers\n", "    version: 4.45.0.dev0\n",
                     "  modelParameterSize: 1B\n", "  maxTokens: 131072\n", "  modelCapabilities:\n",
                     "  - TEXT_TO_TEXT\n"]
    docs = list(yaml.safe_load_all(after))
    assert docs[1]["spec"]["modelArchitecture"] == "MyOwnArch"
    assert "modelType" not in docs[2]["spec"]
    assert f"info: {repo}/models.yaml: ClusterBaseModel skipped: skipped: annotated " \
           'ome.oracle.com/skip-config-parsing: "true"' in run.lines
    assert update(str(repo)).code == 0 and (repo / "models.yaml").read_text() == after


def test_crlf_file_keeps_its_line_endings(tmp_path):
    repo = user_repo(tmp_path)
    (repo / "models.yaml").write_bytes(USER_FILE.replace("\n", "\r\n").encode())
    assert update(str(repo / "models.yaml")).code == 0
    data = (repo / "models.yaml").read_bytes()
    assert data.count(b"\n") == data.count(b"\r\n") and b"  maxTokens: 131072\r\n" in data


def test_an_error_writes_nothing(tmp_path):
    repo = user_repo(tmp_path)
    (repo / "bad.yaml").write_text(USER_FILE.replace("local://./models/llama", "local://./models/missing"))
    run = update(str(repo))
    assert run.code == 1 and run.stdout == ""
    assert (repo / "models.yaml").read_text() == USER_FILE
    assert f"error: {repo}/bad.yaml: BaseModel team-a/llama: {repo}/models/missing: not a directory" in run.stderr


def test_local_uri_leaving_the_given_path_is_refused(tmp_path):
    repo = user_repo(tmp_path)
    (repo / "models.yaml").write_text(USER_FILE.replace("local://./models/llama", "local://../../etc"))
    run = update(str(repo))
    assert run.code == 1 and "Traceback" not in run.stderr
    assert run.lines[0] == (f"error: {repo}/models.yaml: BaseModel team-a/llama: storageUri local://../../etc leads "
                            f"outside {repo}; pass SOURCE to read a model elsewhere")


def test_unreadable_storage_uri_asks_for_source(tmp_path):
    target = tmp_path / "m.yaml"
    target.write_text(USER_FILE.replace("local://./models/llama", "oci://registry/llama:1"))
    run = update(str(target))
    assert run.code == 1
    assert run.lines[0] == (f"error: {target}: BaseModel team-a/llama: cannot read the model from "
                            "spec.storage.storageUri 'oci://registry/llama:1': pass SOURCE (a directory with the "
                            "model's config.json and safetensors)")


def test_symlinked_file_is_not_rewritten(tmp_path):
    repo = user_repo(tmp_path)
    link = tmp_path / "link.yaml"
    link.symlink_to(repo / "models.yaml")
    run = update(str(link), str(repo / "models" / "llama"))
    assert run.code == 1
    assert run.lines == [f"error: {link}: a symbolic link; --update rewrites only regular files"]
    assert (repo / "models.yaml").read_text() == USER_FILE


def test_symlink_leaving_the_directory_is_refused(tmp_path):
    repo = user_repo(tmp_path)
    outside = tmp_path / "outside.yaml"
    outside.write_text(USER_FILE)
    (repo / "escape.yaml").symlink_to(outside)
    run = update(str(repo), str(repo / "models" / "llama"))
    assert run.code == 1 and "outside" in run.lines[0]
    assert outside.read_text() == USER_FILE


def test_flow_style_spec_is_an_error_with_the_fix(tmp_path):
    target = tmp_path / "m.yaml"
    target.write_text("apiVersion: ome.io/v1beta1\nkind: ClusterBaseModel\nmetadata: {name: m}\n"
                      "spec: {storage: {storageUri: 'hf://a/b'}}\n")
    run = update(str(target), str(user_repo(tmp_path) / "models" / "llama"))
    assert run.code == 1
    assert run.lines[-1] == (f"error: {target}: ClusterBaseModel m: spec must be a non-empty block mapping for "
                             "--update to add fields; add them by hand")


def test_file_mode_is_kept(tmp_path):
    repo = user_repo(tmp_path)
    os.chmod(repo / "models.yaml", 0o640)
    assert update(str(repo)).code == 0
    assert (repo / "models.yaml").stat().st_mode & 0o777 == 0o640
    assert [p.name for p in repo.iterdir() if p.name.startswith(".")] == []  # no temporary file left


def test_alias_bomb_is_refused_before_any_edit(tmp_path):
    target = tmp_path / "bomb.yaml"
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    text = "\n".join(lines) + "\n---\n" + USER_FILE.split("---\n")[1]
    target.write_text(text)
    run = update(str(target), str(user_repo(tmp_path) / "models" / "llama"))
    assert run.code == 1 and "Traceback" not in run.stderr and "internal error" not in run.stderr
    assert run.lines[0].startswith(f"error: {target}: ")
    assert target.read_text() == text


LIST_FILE = """\
# the models as kubectl would list them
apiVersion: v1
kind: List
items:
  - apiVersion: ome.io/v1beta1
    kind: ClusterBaseModel
    metadata:
      name: llama
    spec:
      storage:
        storageUri: local://./models/llama   # beside this file
  - apiVersion: v1
    kind: ConfigMap
    metadata: {name: other}
"""


def test_models_in_a_list_are_filled_as_the_render_reads_them(tmp_path):
    repo = user_repo(tmp_path)
    (repo / "models.yaml").unlink()
    (repo / "list.yaml").write_text(LIST_FILE)
    run = update(str(repo / "list.yaml"))
    assert run.code == 0, run.stderr
    after = (repo / "list.yaml").read_text()
    assert added_lines(LIST_FILE, after) == [
        "      modelType: llama\n", "      modelArchitecture: LlamaForCausalLM\n", "      modelFormat:\n",
        "        name: safetensors\n", "        version: 1.0.0\n", "      modelFramework:\n",
        "        name: transformers\n", "        version: 4.45.0.dev0\n", "      modelParameterSize: 1B\n",
        "      maxTokens: 131072\n", "      modelCapabilities:\n", "      - TEXT_TO_TEXT\n"]
    assert after.index("modelCapabilities") < after.index("kind: ConfigMap")
    assert f"info: {repo}/list.yaml: ClusterBaseModel llama: added modelType, modelArchitecture, modelFormat, " \
           f"modelFramework, modelParameterSize, maxTokens, modelCapabilities from {repo}/models/llama" in run.lines


def test_nothing_to_update_is_an_error(tmp_path):
    """A file or a directory without a single model is named, not passed over in silence."""
    (tmp_path / "configmap.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    (tmp_path / "other.yaml").write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n")
    for path in (tmp_path / "configmap.yaml", tmp_path):
        run = update(str(path))
        assert (run.code, run.stdout, run.lines) == (1, "", [
            f"error: {path}: no BaseModel or ClusterBaseModel (apiVersion ome.io/...) to update in it, nor in a "
            "kind: List's items"])


def test_odd_lists_are_not_crashes(tmp_path):
    """Lists whose items are not a list, or not objects, hold no model: said, and nothing is written."""
    target = tmp_path / "odd.yaml"
    text = "apiVersion: v1\nkind: List\nitems: 5\n---\napiVersion: v1\nkind: List\nitems: [x, null, [1]]\n"
    target.write_text(text)
    run = update(str(target))
    assert (run.code, run.stdout, run.lines) == (1, "", [
        f"error: {target}: no BaseModel or ClusterBaseModel (apiVersion ome.io/...) to update in it, nor in a "
        "kind: List's items"])
    assert target.read_text() == text


def test_a_near_miss_kind_is_an_error_and_a_foreign_group_a_warning(tmp_path):
    """As the render reads them: a kind of ome.io that OME does not have is a typo; a model under a group that
    only looks like OME's is not OME's, so it is left alone, and said so."""
    repo = user_repo(tmp_path)
    (repo / "near.yaml").write_text("apiVersion: ome.io/v1beta1\nkind: BaseModels\nmetadata: {name: x}\n")
    run = update(str(repo))
    assert (run.code, run.lines[-1]) == (1, f'error: {repo}/near.yaml: BaseModels x: kind: Unsupported value: '
                                            '"BaseModels": not a kind of the ome.io API group; did you mean '
                                            '"BaseModel"?')
    assert [line for line in run.lines if line.startswith("error:")] == run.lines[-1:]
    assert (repo / "models.yaml").read_text() == USER_FILE
    (repo / "near.yaml").write_text("apiVersion: ome.oracle.com/v1\nkind: ClusterBaseModel\nmetadata: {name: x}\n"
                                    "spec: {storage: {storageUri: 'local://./models/llama'}}\n")
    run = update(str(repo))
    assert run.code == 0, run.stderr
    assert (f"warning: {repo}/near.yaml: ClusterBaseModel x: apiVersion ome.oracle.com/v1 is not OME's API group, so "
            "this ClusterBaseModel is left as it is; to fill it, use apiVersion: ome.io/v1beta1") in run.lines
    assert "modelType: llama" in (repo / "models.yaml").read_text()


def test_odd_shapes_are_not_crashes(tmp_path):
    target = tmp_path / "odd.yaml"
    text = ("apiVersion: ome.io/v1beta1\nkind: ClusterBaseModel\nmetadata:\n  name: odd\n  annotations: [x]\n"
            "spec:\n  storage: [not, a, map]\n")
    target.write_text(text)
    run = update(str(target))
    assert run.code == 1 and "Traceback" not in run.stderr and "internal error" not in run.stderr
    assert run.lines == [f"error: {target}: ClusterBaseModel odd: cannot read the model from spec.storage.storageUri "
                         "None: pass SOURCE (a directory with the model's config.json and safetensors)"]
    assert target.read_text() == text


def test_the_read_limit_spans_every_model_of_a_run(tmp_path, monkeypatch):
    # The bytes read (configs, safetensors headers) count across all models of one --update, not per model.
    from omerender.modelinfo import sources
    repo = user_repo(tmp_path)
    (repo / "models" / "other").mkdir()
    shutil.copy(CORPUS / "llama3_2_1b.json", repo / "models" / "other" / "config.json")
    second = USER_FILE.replace("./models/llama", "./models/other").replace("name: 'llama'", "name: 'other'")
    (repo / "other.yaml").write_text(second)
    one_model = (CORPUS / "llama3_2_1b.json").stat().st_size
    monkeypatch.setattr(sources, "MAX_READ_BYTES", 2 * one_model - 1)
    run = update(str(repo))
    assert run.code == 1 and run.stdout == ""
    assert run.lines[-1:] == [f"error: {repo}/other.yaml: BaseModel team-a/other: {repo}/models/other: more than 0 MiB of "
                         "configs and safetensors headers in all; refusing to read further"]
    assert (repo / "models.yaml").read_text() == USER_FILE and (repo / "other.yaml").read_text() == second
    monkeypatch.setattr(sources, "MAX_READ_BYTES", 2 * one_model)
    assert update(str(repo)).code == 0


# --- what --update writes, and the files it cannot write ---------------------------------------------------

@pytest.mark.parametrize("version", ["1e5", "0o17", "y", "2001-1-2"])
def test_a_version_go_would_read_as_another_type_is_written_quoted(tmp_path, version):
    """Kubernetes' readers (yaml.v3, sigs.k8s.io/yaml) take these plain texts for a number, a bool or a date."""
    repo = user_repo(tmp_path)
    config = repo / "models" / "llama" / "config.json"
    config.write_text(json.dumps(json.loads(config.read_text()) | {"transformers_version": version}))
    assert update(str(repo)).code == 0
    after = (repo / "models.yaml").read_text()
    assert "    name: transformers\n" f"    version: '{version}'\n" in after
    assert list(yaml.safe_load_all(after))[1]["spec"]["modelFramework"] == {"name": "transformers", "version": version}
    (repo / "kustomization.yaml").write_text("resources: [models.yaml]\n")
    kustomize = shutil.which("kustomize")
    assert kustomize, "kustomize is not on PATH: run scripts/setup-tools.sh"
    built = subprocess.run([kustomize, "build", str(repo)], capture_output=True, text=True, check=True)
    assert f"version: '{version}'\n" in built.stdout or f'version: "{version}"\n' in built.stdout


@pytest.mark.parametrize("text", [
    # one spec shared by two models of a List
    "apiVersion: v1\nkind: List\nitems:\n- apiVersion: ome.io/v1beta1\n  kind: ClusterBaseModel\n"
    "  metadata: {name: a}\n  spec: &s\n    storage: {storageUri: 'local://./models/llama'}\n"
    "- apiVersion: ome.io/v1beta1\n  kind: ClusterBaseModel\n  metadata: {name: b}\n  spec: *s\n",
    # a spec that is another object's mapping
    "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n"
    "  data: &s\n    storage: x\n- apiVersion: ome.io/v1beta1\n  kind: ClusterBaseModel\n  metadata: {name: b}\n"
    "  spec: *s\n",
    # a merge key, the last line of the spec naming text written elsewhere
    "base: &s\n  storage: {storageUri: 'local://./models/llama'}\napiVersion: ome.io/v1beta1\n"
    "kind: ClusterBaseModel\nmetadata: {name: b}\nspec:\n  modelFormat: {name: safetensors}\n  <<: *s\n",
])
def test_an_aliased_spec_is_an_error_and_nothing_is_written(tmp_path, text):
    repo = user_repo(tmp_path)
    (repo / "models.yaml").write_text(text)
    run = update(str(repo / "models.yaml"), str(repo / "models" / "llama"))
    assert (run.code, run.stdout) == (1, "")
    assert run.lines[-1] == (f"error: {repo}/models.yaml: ClusterBaseModel b: spec is or holds a YAML anchor or "
                             "alias, so the fields cannot be added at one place in the text; add them by hand")
    assert (repo / "models.yaml").read_text() == text


def test_a_read_only_directory_is_an_error_and_nothing_is_written(tmp_path):
    repo = user_repo(tmp_path)
    (repo / "more").mkdir()
    (repo / "more" / "models.yaml").write_text(USER_FILE.replace("./models/llama", "../models/llama"))
    (repo / "more").chmod(0o555)
    try:
        run = update(str(repo))
    finally:
        (repo / "more").chmod(0o755)
    assert (run.code, run.stdout) == (1, "")
    assert run.lines[-1] == (f"error: {repo}/more/models.yaml: cannot be updated: its directory {repo}/more is "
                             "read-only (--update writes the new text beside the file, then renames it); make the "
                             "directory writable (chmod u+w)")
    assert (repo / "models.yaml").read_text() == USER_FILE  # checked before the first file was written
    assert sorted(p.name for p in (repo / "more").iterdir()) == ["models.yaml"]


@pytest.mark.parametrize("spelling", ["models/", "models/.", "models/models.yaml"])
def test_update_never_rewrites_a_file_through_a_link_out(tmp_path, monkeypatch, spelling):
    outside = user_repo(tmp_path)  # a repository elsewhere, with a model and its file
    repo = tmp_path / "mine"
    repo.mkdir()
    (repo / "models").symlink_to(outside)
    monkeypatch.chdir(repo)
    run = update(spelling)
    what = "symbolic link" if spelling != "models/models.yaml" else "models is a symbolic link"
    assert (run.code, run.stdout, run.lines) == (1, "", [
        f"error: {spelling}: {what} to {outside}, outside {repo}; omerender reads only the files it is given"])
    assert (outside / "models.yaml").read_text() == USER_FILE


# --- the weights claim's size (issue 31): omerender.io/weights-size from the safetensors files' sizes ----------

PHI = CATALOG / "modelconfig" / "tiny-random-PhiModel"
SIZED_MODEL = """\
apiVersion: ome.io/v1beta1
kind: ClusterBaseModel
metadata:
  name: llama-3-2-3b-instruct  # the worked example's model
spec:
  displayName: meta.llama-3.2-3b-instruct
  modelCapabilities: [TEXT_TO_TEXT]
  storage: {storageUri: "hf://meta-llama/Llama-3.2-3B-Instruct", path: /raid/models/meta/llama-3-2-3b-instruct, key: hf-token}
  # recorded by OME after the download:
  modelFormat: {name: safetensors, version: "1.0.0"}
  modelFramework: {name: transformers, version: "4.45.0.dev0"}
  modelArchitecture: LlamaForCausalLM
  modelParameterSize: 3.21B
"""


def test_the_weights_size_annotation_is_added_once_and_sizes_the_download_claim(tmp_path, F):
    target = tmp_path / "model.yaml"
    target.write_text(SIZED_MODEL)
    run = update(str(target), str(PHI))
    assert run.code == 0, run.stderr
    # 2 × 188,008 bytes of safetensors, plus 10%, rounded up to whole Gi.
    assert target.read_text() == SIZED_MODEL.replace(
        "  # the worked example's model\n",
        "  # the worked example's model\n  annotations:\n    omerender.io/weights-size: 1Gi\n") + \
        "  modelType: phi\n  maxTokens: 512\n"
    assert run.lines[-1] == (f"info: {target}: ClusterBaseModel llama-3-2-3b-instruct: added modelType, maxTokens, "
                             f"annotation omerender.io/weights-size: 1Gi from {PHI}")
    after = target.read_text()
    again = update(str(target), str(PHI))
    assert again.code == 0 and target.read_text() == after
    assert again.lines[-1].endswith("nothing to add: every field OME's agent sets is already set")

    F["model"] = yaml.safe_load(after)
    F["isvc"]["spec"]["engine"]["maxReplicas"] = 1
    rendered = render_objects(list(F.values()), "--model-weights", "download")
    assert rendered.code == 0, rendered.stderr
    assert rendered.lines == [CHART_DEFAULTS_INFO]  # no weights-size-guessed warning
    claim = rendered.find("PersistentVolumeClaim")
    assert claim["spec"]["resources"]["requests"]["storage"] == "1Gi"
    for obj in rendered.objects:
        validate_k8s(obj)


def test_a_set_weights_size_is_kept_and_annotations_are_extended_in_place(tmp_path):
    target = tmp_path / "model.yaml"
    text = SIZED_MODEL.replace("  # the worked example's model\n",
                               "\n  annotations:\n    team: a  # ours\n")
    target.write_text(text)
    assert update(str(target), str(PHI)).code == 0
    assert target.read_text() == text.replace("    team: a  # ours\n", "    team: a  # ours\n"
                                              "    omerender.io/weights-size: 1Gi\n") + \
        "  modelType: phi\n  maxTokens: 512\n"
    kept = text.replace("    team: a  # ours\n", "    team: a  # ours\n    omerender.io/weights-size: 40Gi\n")
    target.write_text(kept)
    run = update(str(target), str(PHI))
    assert run.code == 0, run.stderr
    assert target.read_text() == kept + "  modelType: phi\n  maxTokens: 512\n"
    assert run.lines[-1].split(": added ")[1] == f"modelType, maxTokens from {PHI}"


def test_a_flow_style_metadata_gets_the_fields_and_a_warning_for_the_annotation(tmp_path):
    target = tmp_path / "model.yaml"
    text = SIZED_MODEL.replace("metadata:\n  name: llama-3-2-3b-instruct  # the worked example's model\n",
                               "metadata: {name: llama-3-2-3b-instruct}\n")
    target.write_text(text)
    run = update(str(target), str(PHI))
    assert run.code == 0, run.stderr
    assert target.read_text() == text + "  modelType: phi\n  maxTokens: 512\n"
    assert run.lines == [
        f"warning: {target}: ClusterBaseModel llama-3-2-3b-instruct: omerender.io/weights-size: 1Gi not added: "
        "metadata is not a block mapping --update can extend; add the annotation by hand",
        f"info: {target}: ClusterBaseModel llama-3-2-3b-instruct: added modelType, maxTokens from {PHI}"]
