"""--model-weights download, the Job as an administrator reads it (docs/how-to/model-weights.md): it runs where the
pods that mount its claim run (or where the render says), it has requests, limits and a deadline, it passes Pod
Security "restricted" as the Kubernetes docs list its checks, and the downloader's environment is settable in the
CLI, the KRM function and the Argo CD plugin, never with a credential in it."""
from __future__ import annotations

import copy

import pytest
import yaml

from conftest import FIXTURES, load_yaml, render_objects, run_cli, validate_k8s
from test_argocd import generate, repo_copy
from test_krm import config, fn, resource_list

CLASS_70B = FIXTURES / "accelerators-70b"
ENGINE_70B = "llama-3-3-70b-instruct-engine"
NODE_AFFINITY = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
    {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-a"]}]}]}}
POD_ANTI_AFFINITY = {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "podAffinityTerm": {
    "topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": ENGINE_70B}}}}]}


def inputs_70b() -> list[dict]:
    """The accelerators-70b fixture: an InferenceService on the AcceleratorClass nvidia-l40s (a node selector) with
    the runtime's toleration, here with a toleration, a node affinity, a pod anti-affinity and a priority class of
    its own."""
    objs = [o for name in ("classes.yaml", "model.yaml", "runtime-70b.yaml", "isvc-70b.yaml")
            for o in load_yaml(CLASS_70B / name)]
    for obj in objs:
        if obj["kind"] == "InferenceService":
            obj["spec"]["engine"].update(priorityClassName="inference", affinity={
                "nodeAffinity": copy.deepcopy(NODE_AFFINITY), "podAntiAffinity": POD_ANTI_AFFINITY},
                tolerations=[{"key": "dedicated", "operator": "Equal", "value": "llm", "effect": "NoSchedule"}])
    return objs


def download(objs, *flags):
    run = render_objects(objs, "--model-weights", "download", *flags)
    assert run.code == 0, run.stderr
    return run


def job_pod(run) -> dict:
    return run.find("Job")["spec"]["template"]["spec"]


def serving_pod(run, name=ENGINE_70B) -> dict:
    return run.find("Deployment", name)["spec"]["template"]["spec"]


# ---------------------------------------------------------------- placement

def test_the_job_runs_where_the_serving_pods_run():
    run = download(inputs_70b())
    job, pod = job_pod(run), serving_pod(run)
    assert pod["nodeSelector"] == {"nvidia.com/gpu.product": "NVIDIA-L40S"}
    assert pod["affinity"]["nodeAffinity"] == NODE_AFFINITY and pod["affinity"]["podAntiAffinity"]
    assert pod["tolerations"] == [{"key": "dedicated", "operator": "Equal", "value": "llm", "effect": "NoSchedule"}]
    assert job["nodeSelector"] == pod["nodeSelector"]
    assert job["affinity"] == {"nodeAffinity": pod["affinity"]["nodeAffinity"]}   # never the pods' pod affinity
    assert job["tolerations"] == pod["tolerations"]
    assert job["priorityClassName"] == pod["priorityClassName"] == "inference"
    assert "weights-placement-differs" not in run.printed
    for obj in run.objects:
        validate_k8s(obj)


def test_a_change_of_placement_is_a_new_job_on_the_same_claim():
    """A Job's template is immutable: another placement is another Job (which finds the claim complete)."""
    before = download(inputs_70b())
    objs = inputs_70b()
    next(o for o in objs if o["kind"] == "InferenceService")["spec"]["acceleratorSelector"]["acceleratorClass"] = \
        "nvidia-h100"
    after = download(objs)
    assert job_pod(after)["nodeSelector"] == {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}
    assert after.find("Job")["metadata"]["name"] != before.find("Job")["metadata"]["name"]
    claim = after.find("PersistentVolumeClaim")["metadata"]["name"]
    assert claim == before.find("PersistentVolumeClaim")["metadata"]["name"]
    assert job_pod(after)["volumes"][0]["persistentVolumeClaim"]["claimName"] == claim


def two_classes() -> list[dict]:
    """Two InferenceServices of one model in one namespace, on two accelerator classes."""
    objs = inputs_70b()
    second = copy.deepcopy(next(o for o in objs if o["kind"] == "InferenceService"))
    second["metadata"]["name"] = "second"
    second["spec"]["acceleratorSelector"]["acceleratorClass"] = "nvidia-h100"
    return objs + [second]


PLACEMENTS = ("llama-3-3-70b-instruct/engine: nodeSelector nvidia.com/gpu.product=NVIDIA-L40S, a node affinity, "
              "1 toleration; second/engine: nodeSelector nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3, a node "
              "affinity, 1 toleration")


def placement_warning(fix: str, claim: str, where: str = "") -> str:
    return (f"warning: {where}ClusterBaseModel llama-3-3-70b-instruct: PersistentVolumeClaim llama-demo/{claim} is "
            f"mounted by pods placed differently ({PLACEMENTS}): its download Job runs where the first of them does "
            f"(llama-3-3-70b-instruct/engine), and a WaitForFirstConsumer claim binds there, where the others may "
            f"not reach it; give the InferenceServices that run elsewhere a namespace (and so a claim) of their own, "
            f"or {fix} for nodes every one of them reaches (a claim any node attaches, such as ReadWriteMany storage)")


def test_pods_of_one_claim_placed_differently_are_named_with_the_fix():
    run = download(two_classes())
    claim = run.find("PersistentVolumeClaim")["metadata"]["name"]
    fix = "render with --weights-node-selector KEY=VALUE --weights-toleration 'KEY[=VALUE]:EFFECT'"
    assert placement_warning(fix, claim, "<stdin>: ") in run.lines
    assert "[weights-placement-differs]" in run.printed
    assert job_pod(run)["nodeSelector"] == {"nvidia.com/gpu.product": "NVIDIA-L40S"}   # the first one's


def test_the_render_places_the_jobs_on_download_nodes_and_then_warns_of_nothing():
    run = download(two_classes(), "--weights-node-selector", "pool=download", "--weights-node-selector",
                   "kubernetes.io/arch=amd64", "--weights-toleration", "dedicated=download:NoSchedule",
                   "--weights-toleration", "spot:NoExecute")
    job = job_pod(run)
    assert job["nodeSelector"] == {"pool": "download", "kubernetes.io/arch": "amd64"}
    assert job["tolerations"] == [{"key": "dedicated", "operator": "Equal", "value": "download", "effect": "NoSchedule"},
                                  {"key": "spot", "operator": "Exists", "effect": "NoExecute"}]
    assert "affinity" not in job and "priorityClassName" not in job
    assert "placed differently" not in run.stderr


@pytest.mark.parametrize("flag,value,text", [
    ("--weights-node-selector", "pool", 'must be KEY=VALUE node labels, got "pool"'),
    ("--weights-node-selector", "-bad=x", "is not a node label"),
    ("--weights-node-selector", "pool=a b", "is not a node label"),
    ("--weights-toleration", "gpu", "must be KEY[=VALUE]:EFFECT"),
    ("--weights-toleration", "gpu:Sometimes", "must be KEY[=VALUE]:EFFECT"),
    ("--weights-toleration", "gpu\n=x:NoSchedule", "must be KEY[=VALUE]:EFFECT"),
])
def test_a_bad_placement_is_a_usage_error_naming_the_flag(F, flag, value, text):
    run = render_objects(list(F.values()), "--model-weights", "download", flag, value)
    assert (run.code, run.stdout) == (2, "")
    assert flag in run.stderr and text in run.stderr
    assert "\ngpu" not in run.stderr   # a newline in the value can't start a line of its own


def test_download_settings_without_download_are_an_error(F):
    run = render_objects(list(F.values()), "--downloader-env", "HF_ENDPOINT=https://hf.example")
    assert (run.code, run.stdout) == (2, "")
    assert "--downloader-env is used only with --model-weights download" in run.stderr


# ---------------------------------------------------------------- Pod Security "restricted", each check as listed
# https://kubernetes.io/docs/concepts/security/pod-security-standards/ (the Baseline, then the Restricted table)

BASELINE_CAPABILITIES = {"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
                         "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"}
SAFE_SYSCTLS = {"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
                "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
                "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl",
                "net.ipv4.tcp_keepalive_probes"}
RESTRICTED_VOLUMES = {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim",
                      "projected", "secret"}


def containers(pod: dict) -> list[dict]:
    return [*pod.get("containers", []), *pod.get("initContainers", []), *pod.get("ephemeralContainers", [])]


def security(item: dict) -> dict:
    return item.get("securityContext") or {}


def host_process(pod):
    return all(not (security(c).get("windowsOptions") or {}).get("hostProcess") for c in [pod, *containers(pod)])


def host_namespaces(pod):
    return not any(pod.get(key) for key in ("hostNetwork", "hostPID", "hostIPC"))


def privileged(pod):
    return not any(security(c).get("privileged") for c in containers(pod))


def baseline_capabilities(pod):
    return all(set((security(c).get("capabilities") or {}).get("add") or []) <= BASELINE_CAPABILITIES
               for c in containers(pod))


def host_path_volumes(pod):
    return not any("hostPath" in v for v in pod.get("volumes", []))


def host_ports(pod):
    return not any(p.get("hostPort") for c in containers(pod) for p in c.get("ports", []))


def app_armor(pod):
    return all((security(c).get("appArmorProfile") or {}).get("type") in (None, "RuntimeDefault", "Localhost")
               for c in [pod, *containers(pod)])


def se_linux(pod):
    allowed = (None, "", "container_t", "container_init_t", "container_kvm_t", "container_engine_t")
    for c in [pod, *containers(pod)]:
        options = security(c).get("seLinuxOptions") or {}
        if options.get("type") not in allowed or options.get("user") or options.get("role"):
            return False
    return True


def proc_mount(pod):
    return all(security(c).get("procMount") in (None, "Default") for c in containers(pod))


def baseline_seccomp(pod):
    return all((security(c).get("seccompProfile") or {}).get("type") != "Unconfined" for c in [pod, *containers(pod)])


def sysctls(pod):
    return all(s.get("name") in SAFE_SYSCTLS for s in security(pod).get("sysctls") or [])


def volume_types(pod):
    return all(set(v) - {"name"} <= RESTRICTED_VOLUMES for v in pod.get("volumes", []))


def privilege_escalation(pod):
    return all(security(c).get("allowPrivilegeEscalation") is False for c in containers(pod))


def running_as_non_root(pod):
    pod_level = security(pod).get("runAsNonRoot")
    return all(security(c).get("runAsNonRoot", pod_level) is True for c in containers(pod))


def running_as_non_root_user(pod):
    return all(security(c).get("runAsUser") != 0 for c in [pod, *containers(pod)])


def restricted_seccomp(pod):
    pod_level = (security(pod).get("seccompProfile") or {}).get("type")
    return all((security(c).get("seccompProfile") or {}).get("type", pod_level) in ("RuntimeDefault", "Localhost")
               for c in containers(pod))


def restricted_capabilities(pod):
    for c in containers(pod):
        capabilities = security(c).get("capabilities") or {}
        if "ALL" not in (capabilities.get("drop") or []) or set(capabilities.get("add") or []) - {"NET_BIND_SERVICE"}:
            return False
    return True


RESTRICTED = [host_process, host_namespaces, privileged, baseline_capabilities, host_path_volumes, host_ports,
              app_armor, se_linux, proc_mount, baseline_seccomp, sysctls, volume_types, privilege_escalation,
              running_as_non_root, running_as_non_root_user, restricted_seccomp, restricted_capabilities]


def wait_step_alone(run) -> dict:
    """The wait step in a pod of its own with the serving pod's pod-level settings (none): what it must meet by
    itself, as the serving pod's other containers are the runtime's."""
    pod = serving_pod(run)
    wait = pod["initContainers"][0]
    volume = next(v for v in pod["volumes"] if v["name"] == wait["volumeMounts"][0]["name"])
    return {"securityContext": pod.get("securityContext") or {}, "containers": [wait], "volumes": [volume]}


@pytest.mark.parametrize("check", RESTRICTED, ids=[c.__name__ for c in RESTRICTED])
def test_the_job_pod_and_the_wait_step_pass_each_restricted_check(check):
    run = download(inputs_70b())
    assert check(job_pod(run)), check.__name__
    assert check(wait_step_alone(run)), check.__name__


@pytest.mark.parametrize("check,broken", [
    (running_as_non_root, {"securityContext": {"runAsNonRoot": False}}),
    (running_as_non_root_user, {"securityContext": {"runAsUser": 0}}),
    (privilege_escalation, {"containers": [{"name": "x", "securityContext": {}}]}),
    (restricted_seccomp, {"securityContext": {"seccompProfile": {"type": "Unconfined"}}}),
    (restricted_capabilities, {"containers": [{"name": "x", "securityContext": {"capabilities": {"add": ["NET_RAW"],
                                                                                                   "drop": ["ALL"]}}}]}),
    (volume_types, {"volumes": [{"name": "h", "hostPath": {"path": "/"}}]}),
    (host_namespaces, {"hostNetwork": True}),
])
def test_each_check_fails_a_pod_that_breaks_it(check, broken):
    """The checks above can fail: the Job's pod with one rule broken fails that rule."""
    pod = copy.deepcopy(job_pod(download(inputs_70b())))
    for key, value in broken.items():
        pod[key] = {**pod.get(key, {}), **value} if isinstance(value, dict) else value
    assert not check(pod)


# ---------------------------------------------------------------- requests, limits, deadline

def test_the_download_and_wait_containers_have_requests_limits_and_the_job_a_deadline():
    run = download(inputs_70b())
    (container,) = job_pod(run)["containers"]
    assert container["resources"] == {"requests": {"cpu": "500m", "memory": "1Gi"},
                                      "limits": {"cpu": "2", "memory": "4Gi"}}
    assert serving_pod(run)["initContainers"][0]["resources"] == {"requests": {"cpu": "10m", "memory": "64Mi"},
                                                                  "limits": {"cpu": "100m", "memory": "128Mi"}}
    assert run.find("Job")["spec"]["activeDeadlineSeconds"] == 28800
    assert "ttlSecondsAfterFinished" not in run.find("Job")["spec"]


def test_resources_and_the_deadline_are_settable():
    run = download(inputs_70b(), "--downloader-resources", "requests.cpu=1, limits.memory=16Gi,requests.ephemeral-storage=1Gi",
                   "--weights-wait-resources", "limits.cpu=200m", "--download-deadline", "86400")
    (container,) = job_pod(run)["containers"]
    assert container["resources"] == {"requests": {"cpu": "1", "memory": "1Gi", "ephemeral-storage": "1Gi"},
                                      "limits": {"cpu": "2", "memory": "16Gi"}}
    assert serving_pod(run)["initContainers"][0]["resources"]["limits"] == {"cpu": "200m", "memory": "128Mi"}
    assert run.find("Job")["spec"]["activeDeadlineSeconds"] == 86400
    for obj in run.objects:
        validate_k8s(obj)


@pytest.mark.parametrize("flags,text", [
    (("--downloader-resources", "requests.cpu=3"), "--downloader-resources: requests.cpu 3 is above limits.cpu 2"),
    (("--downloader-resources", "requests.gpu=1"), '--downloader-resources "requests.gpu": the keys are'),
    (("--weights-wait-resources", "limits.memory=lots"), "limits.memory"),
    (("--download-deadline", "0"), "--download-deadline must be a number of seconds from 1 to 2592000"),
    (("--download-deadline", "1e3"), "--download-deadline must be a number of seconds"),
])
def test_bad_resources_or_deadline_are_usage_errors(flags, text):
    run = render_objects(inputs_70b(), "--model-weights", "download", *flags)
    assert (run.code, run.stdout) == (2, "")
    assert text in run.stderr, run.stderr


# ---------------------------------------------------------------- the downloader's environment, in every front end

ENV_FLAGS = ("--downloader-env", "HF_ENDPOINT=https://hf-mirror.example", "--downloader-env",
             "NO_PROXY=10.0.0.0/8,.svc,.cluster.local", "--downloader-env-from", "configmap/proxy",
             "--downloader-env-from", "secret/proxy-auth")
ENV = [{"name": "HF_ENDPOINT", "value": "https://hf-mirror.example"},
       {"name": "NO_PROXY", "value": "10.0.0.0/8,.svc,.cluster.local"}]
ENV_FROM = [{"configMapRef": {"name": "proxy"}}, {"secretRef": {"name": "proxy-auth"}}]


def downloader(objects: list[dict]) -> dict:
    job = next(o for o in objects if o and o["kind"] == "Job")
    return job["spec"]["template"]["spec"]["containers"][0]


def test_the_environment_reaches_the_job_from_the_cli():
    container = downloader(download(inputs_70b(), *ENV_FLAGS).objects)
    assert container["env"][-2:] == ENV and container["envFrom"] == ENV_FROM


def test_the_environment_reaches_the_job_from_the_krm_function():
    code, out, _ = fn(resource_list(inputs_70b(), config(
        modelWeights="download", downloaderEnv={"HF_ENDPOINT": "https://hf-mirror.example",
                                                "NO_PROXY": "10.0.0.0/8,.svc,.cluster.local"},
        downloaderEnvFrom=["configmap/proxy", "secret/proxy-auth"], weightsNodeSelector={"pool": "download"},
        weightsTolerations=["dedicated=download:NoSchedule"], downloaderResources={"limits.memory": "8Gi"},
        downloadDeadline=3600)))
    assert code == 0, out.get("results")
    container = downloader(out["items"])
    assert container["env"][-2:] == ENV and container["envFrom"] == ENV_FROM
    assert container["resources"]["limits"]["memory"] == "8Gi"
    job = next(o for o in out["items"] if o["kind"] == "Job")
    assert job["spec"]["activeDeadlineSeconds"] == 3600
    assert job["spec"]["template"]["spec"]["nodeSelector"] == {"pool": "download"}


def test_the_environment_reaches_the_job_from_the_argocd_plugin(tmp_path):
    work = repo_copy(tmp_path)
    app = work / "apps" / "seventy"
    app.mkdir()
    (app / "all.yaml").write_text(yaml.safe_dump_all(inputs_70b()))
    from test_argocd import environment, run_command, PLUGIN
    parameters = [{"name": "model-weights", "string": "download"},
                  {"name": "downloader-env", "array": [f"{e['name']}={e['value']}" for e in ENV]},
                  {"name": "downloader-env-from", "array": ["configmap/proxy", "secret/proxy-auth"]},
                  {"name": "download-deadline", "string": "7200"}]
    environ = environment("apps/seventy", {}, parameters)
    done = run_command(PLUGIN["spec"]["generate"], app, environ)
    assert done.returncode == 0, done.stderr
    objects = list(yaml.safe_load_all(done.stdout))
    container = downloader(objects)
    assert container["env"][-2:] == ENV and container["envFrom"] == ENV_FROM
    assert next(o for o in objects if o and o["kind"] == "Job")["spec"]["activeDeadlineSeconds"] == 7200


@pytest.mark.parametrize("value,text", [
    ("HF_TOKEN=hf_abc", "the download Job sets HF_TOKEN itself"),
    ("MY_API_KEY=abc", "would be a literal credential in the output"),
    ("HTTPS_PROXY=http://user:pass@proxy.example:3128", "would be a literal credential in the output"),
    ("HF_HOME=/elsewhere", "the download Job sets HF_HOME itself"),
    ("OMERENDER_MARKER=/x", "the download Job sets OMERENDER_MARKER itself"),
    ("1BAD=x", "is not an environment variable name"),
    ("BAD\nNAME=x", "is not an environment variable name"),
    ("NOEQUALS", "must be NAME=VALUE variables"),
])
def test_a_credential_or_a_variable_the_job_sets_is_refused(value, text):
    run = render_objects(inputs_70b(), "--model-weights", "download", "--downloader-env", value)
    assert (run.code, run.stdout) == (2, "")
    assert text in run.stderr, run.stderr
    assert "hf_abc" not in run.stderr.replace("HF_TOKEN=hf_abc", "") and "user:pass" not in run.stderr
    lines = [line for line in run.stderr.splitlines() if line and not line.startswith(("Usage:", "Try "))]
    assert len(lines) == 1 and lines[0].startswith("Error: --downloader-env"), lines   # a newline forges no line


@pytest.mark.parametrize("value", ["configmap/", "secret/Bad_Name", "vault/x", "configmap/a/b"])
def test_a_bad_env_from_is_refused(value):
    run = render_objects(inputs_70b(), "--model-weights", "download", "--downloader-env-from", value)
    assert (run.code, run.stdout) == (2, "")
    assert "--downloader-env-from must be configmap/NAME or secret/NAME" in run.stderr


def test_the_krm_function_names_its_own_fields_in_errors():
    code, out, _ = fn(resource_list(inputs_70b(), config(modelWeights="download",
                                                         downloaderEnv={"HF_TOKEN": "hf_abc"})))
    assert code == 1
    (result,) = out["results"]
    assert result["message"].startswith("functionConfig.spec.downloaderEnv HF_TOKEN: the download Job sets HF_TOKEN")
    assert "hf_abc" not in result["message"]
    code, out, _ = fn(resource_list(inputs_70b(), config(modelWeights="download", downloaderEnv=["A=1"] * 65)))
    assert code == 1 and "at most 64" in out["results"][0]["message"]


def test_the_argocd_plugin_names_its_parameters_in_errors(tmp_path):
    done = generate(repo_copy(tmp_path), "apps/plain", env={"MODEL_WEIGHTS": "download",
                                                            "DOWNLOAD_DEADLINE": "forever"})
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == ('error: DOWNLOAD_DEADLINE must be a number of seconds from 1 to 2592000 (30 days), got '
                           '"forever"\n')


# ---------------------------------------------------------------- each fix as the user's front end spells it

def test_the_access_mode_fix_is_spelled_for_each_front_end(tmp_path):
    objs = inputs_70b()
    next(o for o in objs if o["kind"] == "InferenceService")["spec"]["engine"]["maxReplicas"] = 3
    cli = download(objs)
    assert "render with --weights-access-mode ReadWriteMany --weights-storage-class CLASS, a StorageClass that " \
           "supports it [weights-single-node-claim]" in cli.printed
    code, out, _ = fn(resource_list(objs, config(modelWeights="download")))
    assert code == 0
    (krm,) = [r["message"] for r in out["results"] if r.get("tags", {}).get("code") == "weights-single-node-claim"]
    assert krm.endswith("set weightsAccessMode: ReadWriteMany and weightsStorageClass: CLASS in the OMERender "
                        "config's spec, a StorageClass that supports it")
    work = repo_copy(tmp_path)
    app = work / "apps" / "seventy"
    app.mkdir()
    (app / "all.yaml").write_text(yaml.safe_dump_all(objs))
    done = generate(work, "apps/seventy", env={"MODEL_WEIGHTS": "download"})
    assert done.returncode == 0, done.stderr
    assert ("set the Argo CD plugin parameters weights-access-mode=ReadWriteMany (WEIGHTS_ACCESS_MODE) and "
            "weights-storage-class=CLASS (WEIGHTS_STORAGE_CLASS), a StorageClass that supports it "
            "[weights-single-node-claim]") in done.stderr


def test_the_placement_fix_is_spelled_in_the_config_of_an_overlay(tmp_path):
    code, out, _ = fn(resource_list(two_classes(), config(modelWeights="download")))
    assert code == 0
    (text,) = [r["message"] for r in out["results"] if r.get("tags", {}).get("code") == "weights-placement-differs"]
    assert "or set weightsNodeSelector: KEY=VALUE and weightsTolerations: KEY[=VALUE]:EFFECT in the OMERender " \
           "config's spec for nodes" in text


def test_a_scheme_download_mode_cannot_download_names_agent_mode_per_front_end(F):
    F["model"]["spec"]["storage"]["storageUri"] = "s3://bucket/model"
    run = render_objects(list(F.values()), "--model-weights", "download")
    assert run.code == 1 and "render with --model-weights agent (OME's model agent downloads it)" in run.stderr
    code, out, _ = fn(resource_list(list(F.values()), config(modelWeights="download")))
    assert code == 1
    assert "set modelWeights: agent in the OMERender config's spec (OME's model agent downloads it)" in \
        out["results"][0]["message"]


def test_every_setting_of_the_cli_is_a_config_field_and_a_parameter():
    """One table spells each setting in every front end: a flag the CLI lacks, or a parameter plugin.yaml doesn't
    announce, would leave a fix naming what the user can't type."""
    from omerender.ome.frontend import SETTINGS
    from omerender.gitops.krm import OPTION_FIELDS
    from test_argocd import PLUGIN
    announced = {p["name"] for p in PLUGIN["spec"]["parameters"]["static"]}
    help_text = run_cli("render", "--help").stdout
    for key, spelling in SETTINGS.items():
        if key != "locked":   # render --locked: a CI switch, no plugin parameter (the plugin never fails on a lock)
            assert spelling.parameter in announced, key
        assert spelling.config in OPTION_FIELDS, key
        assert spelling.flag in help_text, key


def test_an_overlays_omerender_config_sets_the_environment_and_placement(tmp_path, monkeypatch):
    """render and build of an overlay that lists the transformer: the config's keys reach the Job; the same as a
    flag is refused, naming the key to set."""
    import shutil
    shutil.copytree(FIXTURES / "kustomize", tmp_path / "kustomize")
    monkeypatch.chdir(tmp_path / "kustomize")
    path = tmp_path / "kustomize" / "overlays" / "prod" / "omerender.yaml"
    cfg = yaml.safe_load(path.read_text())
    cfg["spec"].update(modelWeights="download", downloaderEnv={"HF_ENDPOINT": "https://hf-mirror.example"},
                       weightsTolerations=["pool=download:NoSchedule"])
    path.write_text(yaml.safe_dump(cfg))
    for command in ("render", "build"):
        run = run_cli(command, "overlays/prod")
        assert run.code == 0, run.stderr
        objects = list(yaml.safe_load_all(run.stdout))
        assert downloader(objects)["env"][-1] == {"name": "HF_ENDPOINT", "value": "https://hf-mirror.example"}
        job = next(o for o in objects if o and o["kind"] == "Job")
        assert job["spec"]["template"]["spec"]["tolerations"] == [
            {"key": "pool", "operator": "Equal", "value": "download", "effect": "NoSchedule"}]
    refused = run_cli("render", "overlays/prod", "--model-weights", "download", "--downloader-env",
                      "HF_ENDPOINT=https://other.example")
    assert (refused.code, refused.stdout) == (1, "")
    assert refused.lines == ["error: --model-weights download, --downloader-env HF_ENDPOINT=https://other.example: this "
                             "kustomization lists the OMERender transformer; set modelWeights: download, downloaderEnv: "
                             "HF_ENDPOINT=https://other.example in that config's spec instead, not as command-line "
                             "flags"]


def test_argocd_array_parameters_are_read_in_order_and_bounded(tmp_path):
    from omerender.errors import OmeError
    from omerender.gitops.argocd import weights_values
    base = {"PARAM_MODEL_WEIGHTS": "download"}
    _, settings, _ = weights_values({**base, "PARAM_DOWNLOADER_ENV_1": "B=2", "PARAM_DOWNLOADER_ENV_0": "A=1",
                                     "PARAM_DOWNLOADER_ENV_FROM_0": "secret/s", "ARGOCD_ENV_DOWNLOADER_ENV_0": "C=3"})
    assert settings.env == (("A", "1"), ("B", "2"))   # the parameter wins over plugin.env, whole
    assert settings.env_from == ({"secretRef": {"name": "s"}},)
    _, settings, _ = weights_values({**base, "ARGOCD_ENV_WEIGHTS_NODE_SELECTOR_0": "pool=dl"})
    assert settings.node_selector == (("pool", "dl"),)
    with pytest.raises(OmeError, match="DOWNLOADER_ENV has 65 items; at most 64"):
        weights_values({**base, **{f"PARAM_DOWNLOADER_ENV_{i}": f"V{i}=x" for i in range(65)}})
    with pytest.raises(OmeError) as caught:
        weights_values({**base, "PARAM_DOWNLOADER_ENV_0": "A\nerror: forged=1"})
    assert "\n" not in caught.value.text
    done = generate(repo_copy(tmp_path), "apps/plain", env={"MODEL_WEIGHTS": "download",
                                                            "DOWNLOADER_ENV_0": "API_TOKEN=abc"})
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == ("error: DOWNLOADER_ENV API_TOKEN would be a literal credential in the output, and "
                           "--model-weights download never writes one: put it in a Secret in the InferenceService's "
                           "namespace and give DOWNLOADER_ENV_FROM secret/NAME\n")
