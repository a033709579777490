"""The Argo CD plugin as an operator installs it on a shared repo-server (issue 34): never an empty sync by
accident, discovery by intent only, the repo-server's deadline, a hardened sidecar, a reproducible image, the
cluster's API versions. Commands run as argocd-cmp-server runs them (test_argocd.py's helpers)."""
from __future__ import annotations

from pathlib import Path

import yaml

from test_argocd import PLUGIN, ROOT, environment, manifests, repo_copy, run_command

EMPTY_FIX = ("a sync of no objects would prune every resource the Application manages; check spec.source.path, "
             "or set the parameter allow-empty (ALLOW_EMPTY=true in the plugin env) where an empty app is meant")


def generate_in(work: Path, app: str, env: dict[str, str] | None = None, parameters: list[dict] | None = None,
                **sidecar: str):
    """init then generate in ``work/app``, as GenerateManifest does (init must pass)."""
    environ = environment(app, env or {}, parameters or [])
    environ.update(sidecar)
    init = run_command(PLUGIN["spec"]["init"], work / app, environ)
    assert init.returncode == 0, init.stderr
    return run_command(PLUGIN["spec"]["generate"], work / app, environ)


def app_with(tmp_path: Path, files: dict[str, str]) -> tuple[Path, str]:
    work = repo_copy(tmp_path)
    app = work / "apps" / "made"
    app.mkdir(parents=True)
    for name, text in files.items():
        (app / name).write_text(text)
    return work, "apps/made"


MODEL = (ROOT / "fixtures" / "quickstart" / "model.yaml").read_text()


# ---------------------------------------------------------------- never an empty sync by accident

def test_a_directory_of_only_a_model_fails_the_sync_naming_why(tmp_path):
    work, app = app_with(tmp_path, {"model.yaml": MODEL})
    done = generate_in(work, app, env={"STRICT": "true"})
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == ("error: the app renders to no objects: its one object (ClusterBaseModel) is an OME input "
                           "that creates nothing by itself (an InferenceService is what becomes workloads, and inputs "
                           f"are not written without keep-inputs); {EMPTY_FIX}\n")


def test_several_inputs_that_render_to_nothing_are_counted(tmp_path):
    runtime = (ROOT / "fixtures" / "quickstart" / "runtime.yaml").read_text()
    work, app = app_with(tmp_path, {"model.yaml": MODEL, "runtime.yaml": runtime})
    done = generate_in(work, app)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith("error: the app renders to no objects: its 2 objects (ClusterBaseModel, "
                                  "ServingRuntime) are OME inputs that create nothing by themselves")


def test_a_directory_with_no_objects_fails_the_sync(tmp_path):
    work, app = app_with(tmp_path, {"README.md": "# nothing here\n", "empty.yaml": "# just a comment\n"})
    done = generate_in(work, app)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == ("error: the app's directory holds no Kubernetes objects to render (no YAML file with one); "
                           f"{EMPTY_FIX}\n")


def test_a_kustomization_that_builds_nothing_fails_the_sync(tmp_path):
    work, app = app_with(tmp_path, {"kustomization.yaml": "resources: []\n"})
    done = generate_in(work, app)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == f"error: the kustomization builds no objects; {EMPTY_FIX}\n"


def test_a_kustomization_of_only_a_model_names_its_kind(tmp_path):
    work, app = app_with(tmp_path, {"kustomization.yaml": "resources: [model.yaml]\n", "model.yaml": MODEL})
    done = generate_in(work, app)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith("error: the app renders to no objects: its one object (ClusterBaseModel) is an OME "
                                  "input that creates nothing by itself")


def test_allow_empty_syncs_an_empty_render(tmp_path):
    work, app = app_with(tmp_path, {"model.yaml": MODEL})
    by_parameter = generate_in(work, app, parameters=[{"name": "allow-empty", "string": "true"}])
    by_env = generate_in(work, app, env={"ALLOW_EMPTY": "true"})
    for done in (by_parameter, by_env):
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_allow_empty_lets_a_kustomization_build_nothing(tmp_path):
    work, app = app_with(tmp_path, {"kustomization.yaml": "resources: []\n"})
    done = generate_in(work, app, parameters=[{"name": "allow-empty", "string": "true"}])
    assert (done.returncode, done.stdout) == (0, "")


def test_allow_empty_false_in_the_parameter_wins_over_the_env(tmp_path):
    work, app = app_with(tmp_path, {"model.yaml": MODEL})
    done = generate_in(work, app, env={"ALLOW_EMPTY": "true"}, parameters=[{"name": "allow-empty", "string": "false"}])
    assert (done.returncode, done.stdout) == (1, "")


def test_a_hostile_allow_empty_value_cannot_forge_a_line(tmp_path):
    work, app = app_with(tmp_path, {"model.yaml": MODEL})
    done = generate_in(work, app, env={"ALLOW_EMPTY": "yes\nerror: forged"})
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == 'error: ALLOW_EMPTY must be true or false, got "yes\\nerror: forged"\n'


def test_allow_empty_is_announced_as_a_boolean():
    static = {p["name"]: p for p in PLUGIN["spec"]["parameters"]["static"]}
    assert (static["allow-empty"]["itemType"], static["allow-empty"]["string"]) == ("boolean", "false")


# ---------------------------------------------------------------- discovery by intent only

def go_glob(pattern: str) -> list[str]:
    """Go's filepath.Glob, which cmp-server's matchRepository applies to filepath.Join(appPath, fileName)
    (argo-cd cmpserver/plugin/plugin.go): each path element matched against a directory's entries (dot files
    included) with * and ? staying inside the element; an element without meta characters is checked by lstat."""
    import fnmatch
    import os
    parts = os.path.normpath(pattern).split(os.sep)
    found = [os.sep if pattern.startswith(os.sep) else "."]
    for part in [p for p in parts if p]:
        if not any(ch in part for ch in "*?[\\"):
            found = [os.path.join(d, part) for d in found if os.path.lexists(os.path.join(d, part))]
            continue
        found = [os.path.join(d, name) for d in found if os.path.isdir(d) for name in sorted(os.listdir(d))
                 if fnmatch.fnmatchcase(name, part)]
    return found


def discovered(app_dir: Path) -> bool:
    """Whether cmp-server claims ``app_dir``: plugin.yaml's discover must be a fileName (no command runs)."""
    discover = PLUGIN["spec"]["discover"]
    assert set(discover) == {"fileName"}, discover
    import os
    return bool(go_glob(os.path.join(str(app_dir), discover["fileName"])))


def test_discovery_claims_only_a_directory_marked_with_omerender_yaml(tmp_path):
    work = repo_copy(tmp_path)
    (work / "apps" / "marked").mkdir()
    for name in ("namespace.yaml", "model.yaml", "runtime.yaml", "isvc.yaml"):
        (work / "apps" / "marked" / name).write_text((work / "apps" / "plain" / name).read_text())
    (work / "apps" / "marked" / "omerender.yaml").write_text(CONFIG)
    (work / "apps" / "nested").mkdir()
    (work / "apps" / "nested" / "isvc.yaml").write_text((work / "apps" / "plain" / "isvc.yaml").read_text())
    (work / "apps" / "nested" / "sub").mkdir()
    (work / "apps" / "nested" / "sub" / "omerender.yaml").write_text(CONFIG)
    claimed = {app: discovered(work / app) for app in
               ("apps/plain", "fixtures/quickstart", "fixtures/kustomize/base", "apps/nested",
                "apps/marked", "fixtures/kustomize/overlays/prod", "fixtures/kustomize/overlays/dev")}
    assert claimed == {"apps/plain": False, "fixtures/quickstart": False, "fixtures/kustomize/base": False,
                       "apps/nested": False, "apps/marked": True, "fixtures/kustomize/overlays/prod": True,
                       "fixtures/kustomize/overlays/dev": True}


def test_a_directory_named_omerender_yaml_or_a_dangling_link_still_marks_as_go_would(tmp_path):
    """Go's Glob lstat()s a literal pattern: what the user put there on purpose, whatever it is, is the marker."""
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "omerender.yaml").symlink_to(tmp_path / "nowhere")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "Omerender.yaml").write_text(CONFIG)
    assert (discovered(tmp_path / "a"), discovered(tmp_path / "b")) == (True, False)


CONFIG = "apiVersion: omerender.io/v1alpha1\nkind: OMERender\nmetadata: {name: omerender}\nspec: {}\n"


def test_the_marked_plain_directory_renders_without_its_config(tmp_path):
    work = repo_copy(tmp_path)
    (work / "apps" / "plain" / "omerender.yaml").write_text(CONFIG.replace("spec: {}", "spec: {noModelNodeSelector: true}"))
    done = generate_in(work, "apps/plain")
    assert done.returncode == 0, done.stderr
    objs = manifests(done.stdout)
    assert "OMERender" not in {o["kind"] for o in objs}
    deployment = next(o for o in objs if o["kind"] == "Deployment")
    assert "nodeSelector" not in deployment["spec"]["template"]["spec"]


def test_options_beside_the_marked_directory_config_are_refused(tmp_path):
    work = repo_copy(tmp_path)
    (work / "apps" / "plain" / "omerender.yaml").write_text(CONFIG.replace("spec: {}", "spec: {keepInputs: false}"))
    done = generate_in(work, "apps/plain", parameters=[{"name": "keep-inputs", "string": "true"}])
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == ("error: keep-inputs=true (KEEP_INPUTS): this app's directory holds the OMERender config "
                           "./omerender.yaml; set keepInputs: true in that config's spec instead, not in the "
                           "Application's plugin env or parameters\n")


def test_two_configs_in_a_plain_directory_are_an_error(tmp_path):
    work = repo_copy(tmp_path)
    (work / "apps" / "plain" / "omerender.yaml").write_text(CONFIG)
    (work / "apps" / "plain" / "other.yaml").write_text(CONFIG)
    done = generate_in(work, "apps/plain")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == ("error: 2 OMERender configs (./omerender.yaml, ./other.yaml); an app's directory holds one, "
                           "omerender.yaml\n")


def test_a_hostile_config_field_is_an_error_naming_the_file(tmp_path):
    work = repo_copy(tmp_path)
    (work / "apps" / "plain" / "omerender.yaml").write_text(CONFIG.replace("spec: {}", "spec: {strict: 'yes; rm -rf /'}"))
    done = generate_in(work, "apps/plain")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith("error: ./omerender.yaml")
    assert "functionConfig.spec.strict must be true or false" in done.stderr


def test_a_bare_marker_leaves_the_options_to_the_application(tmp_path):
    work = repo_copy(tmp_path)
    (work / "apps" / "plain" / "omerender.yaml").write_text(CONFIG)
    done = generate_in(work, "apps/plain", parameters=[{"name": "no-model-node-selector", "string": "true"}])
    assert done.returncode == 0, done.stderr
    deployment = next(o for o in manifests(done.stdout) if o["kind"] == "Deployment")
    assert "nodeSelector" not in deployment["spec"]["template"]["spec"]


# ---------------------------------------------------------------- the repo-server's deadline

def test_the_sidecars_default_limit_leaves_room_inside_the_repo_servers_deadline():
    from omerender.gitops.buildrun import timeout_setting
    assert timeout_setting(None, {}, sidecar=True) == 45.0
    assert timeout_setting(None, {}, sidecar=True) + 10 < 60   # Argo CD's default repo-server deadline
    # cmp-server doesn't apply ARGOCD_EXEC_TIMEOUT (argo-cd #29166): a long one never raises the limit past 45 s
    assert timeout_setting(None, {"ARGOCD_EXEC_TIMEOUT": "5m"}, sidecar=True) == 45.0
    assert timeout_setting(None, {"ARGOCD_EXEC_TIMEOUT": "30s"}, sidecar=True) == 20.0
    assert timeout_setting(None, {"OMERENDER_BUILD_TIMEOUT": "240"}, sidecar=True) == 240.0
    assert timeout_setting(None, {}) == 80.0   # omerender build outside Argo CD: unchanged


def test_the_sidecars_expiry_names_the_repo_server_settings(tmp_path):
    import os
    from test_build_limits import slow_kustomize
    work = repo_copy(tmp_path)
    bin_dir, _ = slow_kustomize(tmp_path)
    app = "fixtures/kustomize/overlays/dev"
    environ = environment(app, {}, [])
    environ.update(PATH=f"{bin_dir}{os.pathsep}{environ['PATH']}", ARGOCD_EXEC_TIMEOUT="2s")
    done = run_command(PLUGIN["spec"]["generate"], work / app, environ)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == ("error: kustomize build . did not finish within 1 s and was stopped; a kustomization that "
                           "needs longer can have it with omerender build --timeout SECONDS or OMERENDER_BUILD_TIMEOUT "
                           "(on Argo CD's plugin sidecar, together with the repo-server's deadline, 60 s by default: "
                           "controller.repo.server.timeout.seconds and server.repo.server.timeout.seconds in "
                           "argocd-cmd-params-cm)\n")


def test_a_hostile_build_timeout_on_the_sidecar_cannot_forge_a_line(tmp_path):
    work = repo_copy(tmp_path)
    app = "fixtures/kustomize/overlays/dev"
    environ = environment(app, {}, [])
    environ["OMERENDER_BUILD_TIMEOUT"] = "1\nerror: forged"
    done = run_command(PLUGIN["spec"]["generate"], work / app, environ)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == 'error: OMERENDER_BUILD_TIMEOUT must be a number of seconds above 0, got "1\\nerror: forged"\n'


# ---------------------------------------------------------------- a hardened sidecar

PATCH = yaml.safe_load((ROOT / "plugins" / "argocd" / "repo-server-patch.yaml").read_text())
DOCKERFILE = (ROOT / "plugins" / "argocd" / "Dockerfile").read_text()
# argocd-repo-server as Argo CD's install manifests create it, reduced to what the patch touches.
REPO_SERVER = {
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "argocd-repo-server", "namespace": "argocd",
                 "labels": {"app.kubernetes.io/name": "argocd-repo-server"}},
    "spec": {"selector": {"matchLabels": {"app.kubernetes.io/name": "argocd-repo-server"}},
             "template": {"metadata": {"labels": {"app.kubernetes.io/name": "argocd-repo-server"}},
                          "spec": {"containers": [{"name": "argocd-repo-server", "image": "quay.io/argoproj/argocd:v3.1.0",
                                                   "args": ["/usr/local/bin/argocd-repo-server"]}],
                                   "volumes": [{"name": "var-files", "emptyDir": {}},
                                               {"name": "plugins", "emptyDir": {}},
                                               {"name": "tmp", "emptyDir": {}}]}}}}


def merged(base: dict, patch: dict) -> dict:
    """A strategic merge of the patch's pod spec onto ``base``: containers and volumes merge by name."""
    import copy
    out = copy.deepcopy(base)
    pod, extra = out["spec"]["template"]["spec"], patch["spec"]["template"]["spec"]
    for key in ("containers", "volumes"):
        names = {item["name"] for item in pod[key]}
        assert not names & {item["name"] for item in extra[key]}, key
        pod[key] += copy.deepcopy(extra[key])
    assert set(extra) == {"containers", "volumes"}
    return out


def sidecar() -> dict:
    (container,) = PATCH["spec"]["template"]["spec"]["containers"]
    return container


def test_the_sidecar_is_hardened_as_argo_cds_own_containers():
    context = sidecar()["securityContext"]
    assert context == {"runAsNonRoot": True, "runAsUser": 999, "readOnlyRootFilesystem": True,
                       "allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]},
                       "seccompProfile": {"type": "RuntimeDefault"}}
    resources = sidecar()["resources"]
    assert set(resources) == {"requests", "limits"}
    assert set(resources["requests"]) == set(resources["limits"]) == {"cpu", "memory"}


def test_the_sidecars_tmp_is_its_own_and_bounded_with_room_for_a_staged_build():
    from omerender.kube.quantities import parse_quantity
    mounts = {m["mountPath"]: m["name"] for m in sidecar()["volumeMounts"]}
    volumes = {v["name"]: v for v in PATCH["spec"]["template"]["spec"]["volumes"]}
    tmp = volumes[mounts["/tmp"]]
    assert mounts["/tmp"] != "tmp"   # not the repo-server's own /tmp
    assert parse_quantity(tmp["emptyDir"]["sizeLimit"], "sizeLimit") >= 4 * 256 * 2**20   # staging may take 256 MiB


def test_the_patched_repo_server_is_a_valid_deployment():
    from conftest import validate_k8s
    deployment = merged(REPO_SERVER, PATCH)
    validate_k8s(deployment)
    assert [c["name"] for c in deployment["spec"]["template"]["spec"]["containers"]] == ["argocd-repo-server",
                                                                                          "omerender"]


def test_remote_bases_are_off_in_the_sidecar(tmp_path):
    from omerender.gitops.buildrun import REMOTE_ENV
    env = {e["name"]: e["value"] for e in sidecar()["env"]}
    assert env == {REMOTE_ENV: "off"}
    work, app = app_with(tmp_path, {"kustomization.yaml": "resources:\n  - https://github.com/org/repo//base?ref=main\n"})
    done = generate_in(work, app, **env)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == ("error: kustomization.yaml: 'https://github.com/org/repo//base?ref=main' is a remote base, "
                           "and remote bases are off (OMERENDER_BUILD_REMOTE=off or --no-remote); copy it into the "
                           "repository and name it by a relative path\n")


def test_the_plugin_config_in_the_image_is_owned_by_root_and_read_only_to_the_plugin():
    copies = [line for line in DOCKERFILE.splitlines() if "plugin.yaml" in line and line.startswith("COPY")]
    assert copies == ["COPY --chown=0:0 --chmod=0644 plugins/argocd/plugin.yaml /home/argocd/cmp-server/config/plugin.yaml"]


# ---------------------------------------------------------------- a reproducible image

def _steps(dockerfile: Path) -> list[tuple[str, str]]:
    from test_container import instructions
    return instructions(dockerfile)


def test_both_images_start_from_a_base_pinned_by_digest_and_leave_build_tools_behind():
    import re
    for dockerfile in (ROOT / "Dockerfile", ROOT / "plugins" / "argocd" / "Dockerfile"):
        steps = _steps(dockerfile)
        (base,) = [rest for word, rest in steps if word == "ARG" and rest.startswith("PYTHON_IMAGE=")]
        assert re.fullmatch(r"PYTHON_IMAGE=python:3\.11-slim-trixie@sha256:[0-9a-f]{64}", base), dockerfile
        assert [rest for word, rest in steps if word == "FROM"] == ["${PYTHON_IMAGE} AS build", "${PYTHON_IMAGE}"]
        final = steps[[i for i, (word, _) in enumerate(steps) if word == "FROM"][-1]:]
        runs = " ".join(rest for word, rest in final if word == "RUN")
        assert "pip install" not in runs and "pip uninstall --yes --no-cache-dir pip setuptools wheel" in runs
        assert ("COPY", "--from=build /install /usr/local") in final
        installs = [rest for word, rest in steps if word == "RUN" and "pip install" in rest]
        assert installs == ["pip install --no-cache-dir --no-compile --prefix=/install --constraint "
                            "/src/constraints.txt /src"], dockerfile


def test_the_sidecar_pins_kustomize_to_one_debian_package_version_and_is_labelled_by_version_and_commit():
    steps = _steps(ROOT / "plugins" / "argocd" / "Dockerfile")
    assert ("ARG", "KUSTOMIZE_DEB=5.6.0+ds-1+b2") in steps
    assert any(word == "RUN" and '"kustomize=${KUSTOMIZE_DEB}"' in rest for word, rest in steps)
    assert {("ARG", "VERSION=0.1.0"), ("ARG", "REVISION=unknown")} <= set(steps)
    (label,) = [rest for word, rest in steps if word == "LABEL"]
    assert 'org.opencontainers.image.version="${VERSION}"' in label
    assert 'org.opencontainers.image.revision="${REVISION}"' in label


def test_the_constraints_file_pins_every_runtime_dependency():
    """Every distribution `pip install .` pulls in (the declared dependencies and theirs), pinned with ==."""
    import importlib.metadata as metadata
    import tomllib
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name
    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version and not any(c in version for c in "<>=!~*,; "), line
            pins[canonicalize_name(name)] = version
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    needed, todo = set(), [Requirement(r) for r in project["dependencies"]]
    while todo:
        req = todo.pop()
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        name = canonicalize_name(req.name)
        if name in needed:
            continue
        needed.add(name)
        assert name in pins, f"{req.name} is not pinned in constraints.txt"
        assert req.specifier.contains(pins[name], prereleases=True), (req, pins[name])
        todo += [Requirement(r) for r in metadata.requires(req.name) or []]
    assert set(pins) == needed   # nothing pinned that the image doesn't install


# ---------------------------------------------------------------- the tree Argo CD sent (manifest-generate-paths)

def cmp_request(tmp_path: Path, tree_root: str) -> tuple[Path, Path]:
    """What argocd-cmp-server unpacks for one request: under $ARGOCD_CMP_WORKDIR/_cmp_server/<request>/, the
    repository below ``tree_root`` (the common root of manifest-generate-paths, or "" for the whole repository)."""
    import shutil
    repo = repo_copy(tmp_path / "git")
    workdir = tmp_path / "sidecar-tmp"
    request = workdir / "_cmp_server" / "5f0c1e2a-9b7d-4c1e-8a3b-2d4e6f8a0b1c"
    shutil.copytree(repo / tree_root if tree_root else repo, request)
    return workdir, request


def test_with_manifest_generate_paths_the_base_argo_cd_sent_is_read(tmp_path):
    # manifest-generate-paths: .;../../base on fixtures/kustomize/overlays/dev: the tree is fixtures/kustomize
    workdir, request = cmp_request(tmp_path, "fixtures/kustomize")
    app = "fixtures/kustomize/overlays/dev"
    done = run_command(PLUGIN["spec"]["generate"], request / "overlays" / "dev",
                       {**environment(app, {}, []), "ARGOCD_CMP_WORKDIR": str(workdir)})
    assert done.returncode == 0, done.stderr
    assert {o["metadata"]["namespace"] for o in manifests(done.stdout)} == {"llama-dev"}


def test_without_manifest_generate_paths_the_whole_repository_is_the_tree(tmp_path):
    workdir, request = cmp_request(tmp_path, "")
    app = "fixtures/kustomize/overlays/dev"
    done = run_command(PLUGIN["spec"]["generate"], request / app,
                       {**environment(app, {}, []), "ARGOCD_CMP_WORKDIR": str(workdir)})
    assert done.returncode == 0, done.stderr


def test_nothing_beside_the_request_in_cmp_servers_work_dir_is_read(tmp_path):
    """Another Application's request sits next to this one: a path leading there is outside the tree."""
    workdir, request = cmp_request(tmp_path, "fixtures/kustomize")
    other = request.parent / "0d9e8f7a-other-request"
    (other / "base").mkdir(parents=True)
    (other / "base" / "kustomization.yaml").write_text("resources: []\n")
    kfile = request / "overlays" / "dev" / "kustomization.yaml"
    kfile.write_text(kfile.read_text().replace("../../base", "../../../0d9e8f7a-other-request/base"))
    app = "fixtures/kustomize/overlays/dev"
    done = run_command(PLUGIN["spec"]["generate"], request / "overlays" / "dev",
                       {**environment(app, {}, []), "ARGOCD_CMP_WORKDIR": str(workdir)})
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (f"error: kustomization.yaml: '../../../0d9e8f7a-other-request/base' leads to "
                           f"{other / 'base'}, outside the repository {request}; omerender builds only what is "
                           f"inside it\n")


def test_a_source_path_that_does_not_end_in_the_apps_place_in_the_tree_reads_only_the_app(tmp_path):
    workdir, request = cmp_request(tmp_path, "fixtures/kustomize")
    done = run_command(PLUGIN["spec"]["generate"], request / "overlays" / "dev",
                       {**environment("elsewhere/prod", {}, []), "ARGOCD_CMP_WORKDIR": str(workdir)})
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith("error: kustomization.yaml: '../../base' leads to ")
    assert done.stderr.endswith(f"outside the repository {request / 'overlays' / 'dev'}; omerender builds only what "
                                f"is inside it\n")


def test_hostile_source_paths_never_widen_the_tree():
    from omerender.gitops.argocd import repo_root
    import os
    import tempfile
    with tempfile.TemporaryDirectory() as base:
        app = Path(base) / "_cmp_server" / "req" / "apps" / "prod"
        app.mkdir(parents=True)
        env = {"ARGOCD_CMP_WORKDIR": base}
        real = os.path.realpath(app)
        for hostile in ("../../../etc", "apps/prod/../../..", "/apps/prod\nerror: x", "req/apps/prod/.."):
            assert repo_root(str(app), hostile, env) == real, hostile
        assert repo_root(str(app), "deploy/apps/prod", env) == os.path.realpath(Path(base) / "_cmp_server" / "req")
        assert repo_root(str(Path(base) / "_cmp_server"), "x", env) == os.path.realpath(Path(base) / "_cmp_server")


# ---------------------------------------------------------------- parameters

def test_every_announced_parameter_has_a_type_and_every_boolean_one_is_read_by_generate(tmp_path):
    work = repo_copy(tmp_path)
    for param in PLUGIN["spec"]["parameters"]["static"]:
        assert param.get("itemType", "string") in ("boolean", "string"), param
        assert param.get("collectionType", "string") in ("string", "array"), param
        assert ("array" in param) == (param.get("collectionType") == "array"), param
        if param.get("itemType") != "boolean":
            continue
        assert param["string"] == "false"
        done = generate_in(work, "apps/plain", parameters=[{"name": param["name"], "string": "maybe"}])
        env_name = param["name"].upper().replace("-", "_")
        assert (done.returncode, done.stdout, done.stderr) == (1, "", f'error: {env_name} must be true or false, got '
                                                                      f'"maybe"\n'), param["name"]


def test_a_kustomizations_marker_whose_options_the_build_would_ignore_is_an_error(tmp_path):
    work = repo_copy(tmp_path)
    app = "fixtures/quickstart"
    (work / app / "omerender.yaml").write_text(CONFIG.replace("spec: {}", "spec: {noModelNodeSelector: true}"))
    done = generate_in(work, app)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == ("error: omerender.yaml: its spec sets options, but no kustomization this app builds lists "
                           "omerender.yaml, so they would not apply; list it last under transformers: of "
                           "kustomization.yaml, or leave its spec empty (then the Application's options apply)\n")
    kustomization = work / app / "kustomization.yaml"
    kustomization.write_text(kustomization.read_text() + "transformers:\n  - omerender.yaml\n")
    done = generate_in(work, app)
    assert done.returncode == 0, done.stderr
    deployment = next(o for o in manifests(done.stdout) if o["kind"] == "Deployment")
    assert "nodeSelector" not in deployment["spec"]["template"]["spec"]


def test_a_kustomizations_bare_marker_leaves_the_options_to_the_application(tmp_path):
    work = repo_copy(tmp_path)
    app = "fixtures/quickstart"
    (work / app / "omerender.yaml").write_text(CONFIG)
    done = generate_in(work, app, parameters=[{"name": "no-model-node-selector", "string": "true"}])
    assert done.returncode == 0, done.stderr
    deployment = next(o for o in manifests(done.stdout) if o["kind"] == "Deployment")
    assert "nodeSelector" not in deployment["spec"]["template"]["spec"]
    assert "OMERender" not in {o["kind"] for o in manifests(done.stdout)}


def test_a_marker_linking_out_of_the_repository_is_refused(tmp_path):
    secret = tmp_path / "secret.yaml"
    secret.write_text(CONFIG.replace("spec: {}", "spec: {strict: true}") + "# hunter2\n")
    work = repo_copy(tmp_path)
    for app in ("fixtures/quickstart", "apps/plain"):
        (work / app / "omerender.yaml").symlink_to(secret)
        done = generate_in(work, app)
        assert (done.returncode, done.stdout) == (1, ""), app
        assert "hunter2" not in done.stderr and str(secret) in done.stderr and done.stderr.startswith("error: "), app
