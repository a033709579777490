"""How users install omerender (issue 44): the release workflow and the build script beside it, the Argo CD sidecar
by the argo-cd Helm chart and by the Argo CD Operator, the GitHub Action, and shell completion. Each is checked the
way its tool reads it: zizmor and GitHub's own schemas for the workflow and the Action, the chart's defaults and the
Operator's CRD (vendored in tests/schemas/install, scripts/refresh-install-schemas.py) for the install snippets,
the Action's steps run as a runner runs them, and the completion scripts loaded in real bash and zsh."""
from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from omerender import __version__
from conftest import CHART_DEFAULTS_INFO
from schemas import CRDValidator, FORMATS, structural, validate_core

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
ARGOCD = ROOT / "plugins" / "argocd"
INSTALL_SCHEMAS = ROOT / "tests" / "schemas" / "install"
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
RELEASE = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text())
ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
PINNED = re.compile(r"^[\w.-]+/[\w.-]+(?:/[\w./-]+)?@[0-9a-f]{40}$")
ZSH = ROOT / ".tools" / "zsh"


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


def patch_sidecar() -> tuple[dict, list[dict]]:
    """The container and volumes today's strategic-merge patch adds to argocd-repo-server."""
    pod = load(ARGOCD / "repo-server-patch.yaml")["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    return container, pod["volumes"]


def helm_values() -> dict:
    return load(ARGOCD / "helm-values.yaml")


def operator_snippet() -> dict:
    return load(ARGOCD / "argocd-operator.yaml")


def without_mount(container: dict, name: str) -> dict:
    out = copy.deepcopy(container)
    out["volumeMounts"] = [m for m in out["volumeMounts"] if m["name"] != name]
    return out


# --- The Argo CD sidecar by the Helm chart and by the Operator -------------------------------------------------------

def test_the_helm_values_sidecar_is_the_patch_sidecar_field_by_field_plus_the_plugin_configmap():
    container, volumes = patch_sidecar()
    (sidecar,) = helm_values()["repoServer"]["extraContainers"]
    assert without_mount(sidecar, "omerender-cmp-config") == container
    (mount,) = [m for m in sidecar["volumeMounts"] if m["name"] == "omerender-cmp-config"]
    assert mount == {"mountPath": "/home/argocd/cmp-server/config/plugin.yaml", "subPath": "omerender.yaml",
                     "name": "omerender-cmp-config"}
    assert helm_values()["repoServer"]["volumes"] == [*volumes, {"name": "omerender-cmp-config",
                                                                  "configMap": {"name": "argocd-cmp-cm"}}]


def test_the_helm_values_plugin_configmap_is_plugin_yaml():
    """The chart writes configs.cmp.plugins.<name> as <name>.yaml in argocd-cmp-cm: kind, apiVersion and
    metadata.name from the key, spec from the value (templates/argocd-configs/argocd-cmp-cm.yaml)."""
    plugin = load(ARGOCD / "plugin.yaml")
    cmp = helm_values()["configs"]["cmp"]
    assert cmp["create"] is True
    assert {name: {"apiVersion": "argoproj.io/v1alpha1", "kind": "ConfigManagementPlugin",
                   "metadata": {"name": name}, "spec": spec} for name, spec in cmp["plugins"].items()} == {
        "omerender": plugin}, "helm-values.yaml's plugin differs from plugin.yaml: run scripts/helm-values-plugin.py"


def key_paths(node, prefix=()):
    if isinstance(node, dict) and node:
        for key, value in node.items():
            yield from key_paths(value, (*prefix, key))
    else:
        yield prefix, node


def test_every_helm_value_is_a_key_the_chart_reads_with_its_type():
    """helm ignores a key the chart doesn't read: a misspelt one would silently install nothing."""
    chart = json.loads((INSTALL_SCHEMAS / "argo-cd-chart.json").read_text())
    defaults = chart["defaults"]
    for path, default in key_paths(defaults):
        node = helm_values()
        for key in path:
            node = node[key]
        assert type(node) is type(default) or (isinstance(default, dict) and isinstance(node, dict)), path
    values = helm_values()
    assert set(values) == set(defaults)
    assert set(values["repoServer"]) == set(defaults["repoServer"])
    assert set(values["configs"]["cmp"]) <= set(defaults["configs"]["cmp"])


def pod_of(containers: list[dict], volumes: list[dict], given_volumes: list[str]) -> dict:
    """A Pod holding the sidecar, with the volumes the install adds and (as emptyDirs) those the repo-server has."""
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "argocd-repo-server", "namespace": "argocd"},
            "spec": {"containers": containers,
                     "volumes": [*volumes, *({"name": name, "emptyDir": {}} for name in given_volumes
                                            if name not in {v["name"] for v in volumes})]}}


@pytest.mark.parametrize("source", ["helm", "operator"])
def test_the_sidecar_validates_and_every_mount_names_a_volume_of_the_repo_server(source):
    if source == "helm":
        chart = json.loads((INSTALL_SCHEMAS / "argo-cd-chart.json").read_text())
        containers, volumes = helm_values()["repoServer"]["extraContainers"], helm_values()["repoServer"]["volumes"]
    else:
        chart = json.loads((INSTALL_SCHEMAS / "argocd-operator.json").read_text())
        repo = operator_snippet()["spec"]["repo"]
        containers, volumes = repo["sidecarContainers"], repo["volumes"]
    validate_core(pod_of(containers, volumes, chart["repoServerVolumes"]))
    known = {v["name"] for v in volumes} | set(chart["repoServerVolumes"])
    assert {m["name"] for c in containers for m in c["volumeMounts"]} <= known


def operator_validator():
    """The ArgoCD CRD's schema of spec.repo's sidecarContainers and volumes, read as tests/schemas reads a CRD's."""
    document = json.loads((INSTALL_SCHEMAS / "argocd-operator.json").read_text())
    converted = structural(document["openAPIV3Schema"])
    converted["properties"].update({"apiVersion": {"const": f"{document['group']}/{document['version']}"},
                                    "kind": {"const": document["kind"]},
                                    "metadata": {"type": "object", "required": ["name"]}})
    return CRDValidator({"$schema": "https://json-schema.org/draft/2020-12/schema", **converted},
                        format_checker=FORMATS)


def test_the_operator_snippet_sidecar_is_the_patch_sidecar_and_fits_the_argocd_crd():
    container, volumes = patch_sidecar()
    snippet = operator_snippet()
    assert (snippet["apiVersion"], snippet["kind"]) == ("argoproj.io/v1beta1", "ArgoCD")
    assert snippet["spec"]["repo"] == {"sidecarContainers": [container], "volumes": volumes}
    operator_validator().validate(snippet)


def test_the_argocd_crd_schema_refuses_what_the_operator_would():
    """The vendored schema is no formality: a misspelt field or a wrong type in the snippet fails."""
    broken = operator_snippet()
    broken["spec"]["repo"]["sidecarContainers"][0]["volumeMount"] = []
    with pytest.raises(Exception, match="volumeMount"):
        operator_validator().validate(broken)
    broken = operator_snippet()
    broken["spec"]["repo"]["volumes"] = {"name": "x"}
    with pytest.raises(Exception, match="is not of type 'array'"):
        operator_validator().validate(broken)


# --- One version and one set of image names everywhere ---------------------------------------------------------------

IMAGE_REF = re.compile(r"ghcr\.io/omerender/(omerender(?:-argocd-cmp)?)(?::([\w.+-]+))?")


def test_the_release_builds_each_dockerfile_as_the_image_the_manifests_and_docs_name():
    env = RELEASE["env"]
    images = {"krm": env["KRM_IMAGE"], "cmp": env["CMP_IMAGE"]}
    matrix = {entry["image"]: entry["dockerfile"] for entry in RELEASE["jobs"]["images"]["strategy"]["matrix"]["include"]}
    build_script = (ROOT / "scripts" / "build-release.py").read_text()
    assert {matrix[key]: images[key] for key in matrix} == {
        "Dockerfile": "ghcr.io/omerender/omerender", "plugins/argocd/Dockerfile": "ghcr.io/omerender/omerender-argocd-cmp"}
    for dockerfile, image in {matrix[key]: images[key] for key in matrix}.items():
        assert (ROOT / dockerfile).is_file()
        assert f'"{dockerfile}": "{image}"' in build_script
    assert re.search(r'ENTRYPOINT \["omerender-fn"\]', (ROOT / "Dockerfile").read_text())
    assert "argocd-cmp-server" not in (ROOT / "Dockerfile").read_text()


def test_every_image_the_repository_names_is_a_released_one_at_the_package_version():
    places = [ROOT / "README.md", *(ROOT / "docs").rglob("*.md"), *(ROOT / "plugins").rglob("*.yaml"),
              ROOT / "action.yml"]
    found = {}
    for place in places:
        for name, tag in IMAGE_REF.findall(place.read_text()):
            found.setdefault(place.relative_to(ROOT).as_posix(), set()).add((name, tag))
    names = {name for refs in found.values() for name, _ in refs}
    assert names == {"omerender", "omerender-argocd-cmp"}
    wrong = {place: refs for place, refs in found.items() if {tag for _, tag in refs} - {__version__, ""}}
    assert wrong == {}
    for place in ("plugins/argocd/repo-server-patch.yaml", "plugins/argocd/helm-values.yaml",
                  "plugins/argocd/argocd-operator.yaml", "plugins/kustomize/omerender-container.yaml",
                  "docs/how-to/install.md", "docs/tutorials/kustomize.md"):
        assert place in found, f"{place} names no released image"


# --- The workflow and the Action pass zizmor and GitHub's schemas ----------------------------------------------------

def test_the_workflows_and_the_action_pass_zizmor_pedantic():
    done = subprocess.run([str(BIN / "zizmor"), "--offline", "--no-progress", "--persona=pedantic", "--format=plain",
                           *map(str, WORKFLOWS), str(ROOT / "action.yml")], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "No findings to report" in done.stdout + done.stderr


@pytest.mark.parametrize("schema, files", [("vendor.github-workflows", WORKFLOWS), ("vendor.github-actions",
                                                                                     [ROOT / "action.yml"])])
def test_the_workflows_and_the_action_validate_against_githubs_schemas(schema, files):
    assert files
    done = subprocess.run([str(BIN / "check-jsonschema"), "--builtin-schema", schema, *map(str, files)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_zizmor_would_catch_an_unpinned_action_and_an_injected_input(tmp_path):
    """The lint is live: the two mistakes it exists for fail it."""
    action = (ROOT / "action.yml").read_text()
    bad = tmp_path / "action.yml"
    bad.write_text(action.replace("@5fda3b95a4ea91299a34e894583c3862153e4b97 # v7.0.0", "@v7").replace(
        'run: bash "$GITHUB_ACTION_PATH/scripts/github-action.sh" run', 'run: omerender ${{ inputs.args }}'))
    done = subprocess.run([str(BIN / "zizmor"), "--offline", "--no-progress", "--format=plain", str(bad)],
                          capture_output=True, text=True)
    assert done.returncode != 0
    assert "unpinned-uses" in done.stdout and "template-injection" in done.stdout


def test_every_action_the_workflows_and_the_action_use_is_pinned_by_commit():
    uses = [step["uses"] for job in RELEASE["jobs"].values() for step in job["steps"] if "uses" in step]
    uses += [step["uses"] for step in ACTION["runs"]["steps"] if "uses" in step]
    assert uses and [u for u in uses if not PINNED.match(u)] == []


# --- The release script ----------------------------------------------------------------------------------------------

def release_script(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "build-release.py"), *args], capture_output=True,
                          text=True, cwd=cwd)


def test_the_release_script_checks_the_tag_against_the_version_and_the_changelog():
    assert release_script("version").stdout == f"{__version__}\n"
    assert release_script("check-tag", f"v{__version__}").returncode == 0
    wrong = release_script("check-tag", "v9.9.9")
    assert (wrong.returncode, wrong.stderr) == (1, f"error: the tag v9.9.9 is not the package's version "
                                                   f"v{__version__} (omerender/__init__.py); move __version__ and "
                                                   f"the images' versions together, then tag\n")


def test_the_release_notes_are_the_changelog_section_and_the_image_digests(tmp_path):
    digest = tmp_path / "omerender.txt"
    digest.write_text(f"ghcr.io/omerender/omerender:{__version__}@sha256:{'a' * 64}\n")
    done = release_script("notes", f"v{__version__}", str(digest))
    changelog = (ROOT / "CHANGELOG.md").read_text()
    section = changelog.split(f"## [{__version__}] - ", 1)[1].split("\n", 1)[1]
    section = re.split(r"^(?:## |\[[^\]]+\]: )", section, flags=re.M)[0].strip()
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{section}\n\n### Images\n\n- `ghcr.io/omerender/omerender:{__version__}@sha256:{'a' * 64}`\n"


def test_the_release_script_says_what_building_images_needs(tmp_path):
    environ = {**os.environ, "PATH": f"{BIN}{os.pathsep}/usr/bin{os.pathsep}/bin"}
    if shutil.which("docker", path=environ["PATH"]) or shutil.which("podman", path=environ["PATH"]):
        environ["PATH"] = str(BIN)
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "build-release.py"), "build", "--images", "--out",
                           str(tmp_path / "dist")], capture_output=True, text=True, env=environ)
    assert done.returncode == 1
    assert done.stderr.endswith("error: --images needs docker or podman on PATH\n")
    built = sorted(p.name for p in (tmp_path / "dist").iterdir())
    assert built == [f"omerender-{__version__}-py3-none-any.whl", f"omerender-{__version__}.tar.gz"]


# --- The GitHub Action, run as a runner runs a composite action's steps ---------------------------------------------

EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def evaluate(expression: str, context: dict) -> str | bool:
    """The expressions action.yml uses: a context value, or one compared with a string literal."""
    compared = re.fullmatch(r"([\w.-]+)\s*(==|!=)\s*'([^']*)'", expression)
    if compared:
        equal = str(evaluate(compared.group(1), context)) == compared.group(3)
        return equal if compared.group(2) == "==" else not equal
    node = context
    for part in expression.split("."):
        node = node.get(part, "") if isinstance(node, dict) else ""  # GitHub reads a missing value as ''
    return node


def expand(text: str, context: dict) -> str:
    return EXPRESSION.sub(lambda m: str(evaluate(m.group(1), context)), text)


def run_action(inputs: dict[str, str], workspace: Path, runner: Path) -> dict:
    """The Action's steps as GitHub runs them: each `run` as `bash --noprofile --norc -eo pipefail FILE` in the
    workspace, with the runner's variables and files; $GITHUB_PATH entries reach the later steps."""
    files = {name: runner / name for name in ("summary.md", "path", "env")}
    for file in files.values():
        file.write_text("")
    declared = ACTION["inputs"]
    assert set(inputs) <= set(declared)
    context = {"inputs": {name: inputs.get(name, spec.get("default", "")) for name, spec in declared.items()},
               "github": {"action_path": str(ROOT)}, "steps": {}}
    base = {"PATH": os.environ["PATH"], "HOME": str(runner), "LANG": "C.UTF-8", "CI": "true",
            "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(workspace), "GITHUB_ACTION_PATH": str(ROOT),
            "RUNNER_TEMP": str(runner), "RUNNER_OS": "Linux", "GITHUB_STEP_SUMMARY": str(files["summary.md"]),
            "GITHUB_PATH": str(files["path"]), "GITHUB_ENV": str(files["env"])}
    printed, status = [], 0
    for index, step in enumerate(ACTION["runs"]["steps"]):
        if "if" in step and not evaluate(step["if"], context):
            continue
        assert "uses" not in step, f"the test runs with python-version '' ({step['uses']} would run here)"
        outputs = runner / f"output-{index}"
        outputs.write_text("")
        extra = [line for line in files["path"].read_text().splitlines() if line]
        environ = {**base, "PATH": os.pathsep.join([*reversed(extra), base["PATH"]]), "GITHUB_OUTPUT": str(outputs),
                   **{key: expand(str(value), context) for key, value in step.get("env", {}).items()}}
        script = runner / f"step-{index}.sh"
        script.write_text(expand(step["run"], context))
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=workspace,
                              env=environ, capture_output=True, text=True, timeout=600)
        printed.append(done.stdout + done.stderr)
        if "id" in step:
            context["steps"][step["id"]] = {"outputs": dict(line.split("=", 1) for line in
                                                            outputs.read_text().splitlines() if line)}
        if done.returncode != 0:
            status = done.returncode
            break
    return {"status": status, "printed": printed, "summary": files["summary.md"].read_text(),
            "outputs": {name: expand(spec["value"], context) for name, spec in ACTION["outputs"].items()}}


def git(workspace: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false", *args],
                   cwd=workspace, check=True, capture_output=True)


@pytest.fixture(scope="module")
def runner(tmp_path_factory) -> Path:
    """RUNNER_TEMP of one job that uses the Action several times: each use installs into the same place."""
    return tmp_path_factory.mktemp("runner")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    """A repository as a workflow checks it out: the quick start under deploy/, two commits (an image bump)."""
    work = tmp_path_factory.mktemp("action") / "workspace"
    shutil.copytree(ROOT / "fixtures" / "quickstart", work / "deploy")
    git(work, "init", "-q", "-b", "main")
    git(work, "add", ".")
    git(work, "commit", "-q", "-m", "first")
    runtime = work / "deploy" / "runtime.yaml"
    text = runtime.read_text()
    image = re.search(r"image: (\S+)", text).group(1)
    runtime.write_text(text.replace(image, image + "-next"))
    git(work, "commit", "-q", "-am", "bump")
    return work


@pytest.mark.xdist_group("action")
def test_the_action_renders_with_annotations_and_writes_the_yaml_to_a_file(workspace, runner):
    ran = run_action({"command": "render", "args": "deploy", "python-version": ""}, workspace, runner)
    assert ran["status"] == 0, ran["printed"]
    installed, rendered = ran["printed"]
    assert installed.startswith(f"omerender, version {__version__}\n")
    assert rendered.splitlines() == [
        "::notice title=chart-defaults::" + CHART_DEFAULTS_INFO[len("info: "):],
        "::warning file=deploy/isvc.yaml,line=3,col=1,title=auto-selected-runtime::InferenceService "
        "llama-demo/llama-3-2-3b-instruct: Runtime sglang-llama-3-2-3b will be auto-selected for model "
        "llama-3-2-3b-instruct"]
    output = Path(ran["outputs"]["rendered"])
    assert output.parent == runner
    assert "Deployment" in [o["kind"] for o in yaml.safe_load_all(output.read_text())]


@pytest.mark.xdist_group("action")
def test_the_action_diffs_into_the_job_summary_and_check_fails_on_a_stale_render(workspace, runner, tmp_path):
    ran = run_action({"command": "diff", "args": "HEAD~1 HEAD -- deploy", "python-version": ""}, workspace, runner)
    assert ran["status"] == 0, ran["printed"]
    report = Path(ran["outputs"]["report"]).read_text()
    assert ran["summary"] == report and report.startswith("#")
    assert "-next" in report
    stale = tmp_path / "stale"
    shutil.copytree(workspace, stale)
    subprocess.run([str(BIN / "omerender"), "render", "deploy", "--output-dir", "rendered"], cwd=stale, check=True,
                   capture_output=True)
    git(stale, "checkout", "-q", "HEAD~1", "--", "deploy")
    checked = run_action({"command": "check", "args": "deploy rendered", "python-version": ""}, stale, runner)
    assert checked["status"] == 1
    assert "-next" in checked["printed"][-1]


@pytest.mark.xdist_group("action")
def test_the_action_refuses_an_unknown_command_without_echoing_it(workspace, runner):
    ran = run_action({"command": "::stop-commands::x", "python-version": ""}, workspace, runner)
    assert ran["status"] == 2
    assert ran["printed"][-1] == ("::error title=omerender::the action's command input must be check, render, diff "
                                  "or validate\n")


# --- Shell completion ------------------------------------------------------------------------------------------------

def test_bash_completes_a_command_an_option_and_a_choice():
    script = subprocess.run([str(BIN / "omerender")], env={**os.environ, "_OMERENDER_COMPLETE": "bash_source"},
                            capture_output=True, text=True, check=True).stdout
    probe = script + "\n" + "\n".join(
        f'COMPREPLY=(); COMP_WORDS=({words}); COMP_CWORD={cword}; _omerender_completion omerender; '
        f'echo "${{COMPREPLY[*]}}"' for words, cword in (("omerender ren", 1), ("omerender render --model-w", 2),
                                                        ('omerender render --model-weights ""', 3)))
    done = subprocess.run(["bash", "--noprofile", "--norc", "-c", "complete -p omerender 2>/dev/null; " + probe],
                          capture_output=True, text=True, env={**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"})
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines() == ["render", "--model-weights", "agent download"]


# Types each line and a Tab into an interactive zsh in a pseudo-terminal, then reads the screen until the text the
# completion should put there shows (or 20 s pass), and prints what it read, one line per probe.
ZSH_DRIVER = r"""
setopt extendedglob
zmodload zsh/zpty
zpty z "$ZSH_BIN" -i
read_until() {
  local chunk end=$(( SECONDS + 20 )); out=''
  while (( SECONDS < end )); do
    if zpty -r -t z chunk; then out+=$chunk; else sleep 0.2; fi
    [[ ${out//$'\e'[^a-zA-Z]#[a-zA-Z]/} == *$~1* ]] && break
  done
  print -r -- "${${out//$'\e'[^a-zA-Z]#[a-zA-Z]/}//[$'\r\n\b']/ }"
}
read_until '% '
zpty -w -n z $'omerender ren\t'; read_until 'omerender render '
zpty -w -n z $'\x15omerender render --model-w\t'; read_until 'omerender render --model-weights '
zpty -w -n z $'\x15omerender render --model-weights \t'; read_until 'agent*download'
zpty -d z
"""


def test_zsh_completes_a_command_an_option_and_a_choice(tmp_path):
    """zsh (Debian's, in .tools/zsh: scripts/setup-tools.sh) run interactively in a pseudo-terminal, its completion
    system on, the script `_OMERENDER_COMPLETE=zsh_source omerender` prints evaluated as the docs say; a Tab after
    each line completes it."""
    zsh = ZSH / "bin" / "zsh"
    assert zsh.is_file(), "zsh is not in .tools/zsh: run scripts/setup-tools.sh"
    modules = next((ZSH / "usr" / "lib").glob("*/zsh/5.*"))
    (tmp_path / ".zshenv").write_text(f"module_path=({modules})\nfpath=({ZSH}/usr/share/zsh/functions/**/*(/))\n")
    (tmp_path / ".zshrc").write_text("PS1='%% '\nautoload -Uz compinit && compinit -u -D\n"
                                     'eval "$(_OMERENDER_COMPLETE=zsh_source omerender)"\n')
    environ = {**os.environ, "ZDOTDIR": str(tmp_path), "HOME": str(tmp_path), "ZSH_BIN": str(zsh), "TERM": "xterm",
               "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run([str(zsh), "-f", "-c", f"module_path=({modules}); {ZSH_DRIVER}"], capture_output=True,
                          text=True, env=environ, timeout=120)
    lines = done.stdout.splitlines()
    assert len(lines) == 4, done.stdout + done.stderr
    assert lines[1].endswith("omerender render "), lines[1]
    assert lines[2].endswith("omerender render --model-weights "), lines[2]
    assert re.search(r"omerender render --model-weights .*agent +download", lines[3]), lines[3]


# --- kpt: the function by image, configured by a Kptfile pipeline or by fn eval's ConfigMap ------------------------

KPT = ROOT / "fixtures" / "kpt"


def kpt_resource_list(function_config: dict) -> str:
    """The ResourceList kpt hands a function: every resource of the package (the Kptfile and the local-config
    function config included), each annotated with its file and index, and the function's config."""
    items = []
    for path in sorted(p for p in KPT.iterdir() if p.is_file()):
        for index, obj in enumerate(o for o in yaml.safe_load_all(path.read_text()) if o):
            annotations = obj.setdefault("metadata", {}).setdefault("annotations", {})
            for prefix in ("config.kubernetes.io", "internal.config.kubernetes.io"):
                annotations.update({f"{prefix}/path": path.name, f"{prefix}/index": str(index)})
            items.append(obj)
    return yaml.safe_dump({"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items,
                           "functionConfig": function_config}, sort_keys=False)


def run_function(resource_list: str) -> tuple[dict, subprocess.CompletedProcess]:
    done = subprocess.run([str(BIN / "omerender-fn")], input=resource_list, capture_output=True, text=True)
    return yaml.safe_load(done.stdout), done


def test_the_kptfile_pipeline_runs_the_released_image_with_its_config():
    kptfile = load(KPT / "Kptfile")
    (mutator,) = kptfile["pipeline"]["mutators"]
    assert mutator == {"image": f"ghcr.io/omerender/omerender:{__version__}", "configPath": "omerender.yaml"}
    output, done = run_function(kpt_resource_list(load(KPT / mutator["configPath"])))
    assert done.returncode == 0, done.stderr
    kinds = sorted(item["kind"] for item in output["items"])
    assert kinds == ["Deployment", "HorizontalPodAutoscaler", "Job", "Kptfile", "Namespace", "OMERender",
                     "PersistentVolumeClaim", "PodDisruptionBudget", "Service", "Service"]


def test_fn_eval_key_values_configure_the_function_as_a_configmap():
    """`kpt fn eval --image IMAGE -- modelWeights=download` hands the function a ConfigMap of its key=values."""
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "function-input"},
              "data": {"modelWeights": "download", "keepInputs": "false"}}
    output, done = run_function(kpt_resource_list(config))
    assert done.returncode == 0, done.stderr
    assert {"Job", "PersistentVolumeClaim"} <= {item["kind"] for item in output["items"]}
    config["data"] = {"modelWeight": "download"}
    output, done = run_function(kpt_resource_list(config))
    assert done.returncode == 1
    assert "unknown field(s) modelWeight" in done.stderr


# --- Docs: the workflows they show, and the Renovate rule ------------------------------------------------------------

def doc_blocks(language: str) -> list[tuple[str, str]]:
    found = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for match in re.finditer(rf"^```{language}[ \t]*\n(.*?)^```", path.read_text(), re.M | re.S):
            found.append((path.relative_to(ROOT).as_posix(), match.group(1)))
    return found


def test_the_workflows_the_docs_show_pass_githubs_schema_and_zizmor(tmp_path):
    workflows = [(doc, body) for doc, body in doc_blocks("yaml") if re.search(r"^jobs:", body, re.M)]
    assert {doc for doc, _ in workflows} >= {"docs/how-to/ci-strict.md", "docs/how-to/review-a-change.md"}
    files = []
    for number, (_, body) in enumerate(workflows):
        file = tmp_path / f"workflow-{number}.yml"
        file.write_text(body.replace("COMMIT_SHA", "0" * 40))   # the placeholder, as a pinned commit
        files.append(str(file))
    schema = subprocess.run([str(BIN / "check-jsonschema"), "--builtin-schema", "vendor.github-workflows", *files],
                            capture_output=True, text=True)
    assert schema.returncode == 0, schema.stdout + schema.stderr
    lint = subprocess.run([str(BIN / "zizmor"), "--offline", "--no-progress", "--format=plain", *files],
                          capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout + lint.stderr


def test_the_renovate_configs_validate_and_the_documented_rule_finds_every_released_image(tmp_path):
    (documented,) = [body for doc, body in doc_blocks("json") if doc == "docs/how-to/install.md"]
    (tmp_path / "renovate.json").write_text(documented)
    for config in (ROOT / "renovate.json", tmp_path / "renovate.json"):
        done = subprocess.run([str(BIN / "check-jsonschema"), "--builtin-schema", "vendor.renovate", str(config)],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
    (rule,) = json.loads(documented)["customManagers"]
    files = re.compile(rule["managerFilePatterns"][0].strip("/"))
    (pattern,) = rule["matchStrings"]
    pattern = re.compile(pattern.replace("(?<", "(?P<"))   # JavaScript's named groups, as Python spells them
    found = {}
    for place in ("plugins/argocd/helm-values.yaml", "plugins/argocd/argocd-operator.yaml",
                  "plugins/argocd/repo-server-patch.yaml", "plugins/kustomize/omerender-container.yaml"):
        assert files.search(place)
        found[place] = [m.groupdict() for m in pattern.finditer((ROOT / place).read_text())]
    assert all(len(matches) == 1 and matches[0]["currentValue"] == __version__ for matches in found.values()), found
    pinned = f"image: ghcr.io/omerender/omerender-argocd-cmp:{__version__}@sha256:{'b' * 64}"
    assert pattern.search(pinned).groupdict() == {"depName": "ghcr.io/omerender/omerender-argocd-cmp",
                                                  "currentValue": __version__, "currentDigest": f"sha256:{'b' * 64}"}
    own = {m["description"]: m for m in json.loads((ROOT / "renovate.json").read_text())["customManagers"]}
    for manager in own.values():
        (matcher,) = manager["matchStrings"]
        place = "plugins/argocd/Dockerfile"
        assert re.search(manager["managerFilePatterns"][0].strip("/"), place)
        assert re.search(matcher.replace("(?<", "(?P<"), (ROOT / place).read_text()), manager["description"]
