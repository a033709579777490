"""Building a component's pod: the runner's environment, mounts and class settings, its place
among the containers, placeholders, and the pod-level fields (render.md §1 steps 9–12, §3.7, §3.8,
§6, §7, §10)."""
from __future__ import annotations

from dataclasses import dataclass, field

from omerender.errors import OmeError, Report
from omerender.kube import k8stypes
from omerender.kube.shapes import check_pod
from omerender.yamlio.data import Recent, copy_data, digest, fingerprint, map_or_empty, pickled
from omerender.yamlio.emit import keep_text
from ..accelerators import effects
from ..accelerators.gpus import GPU, check_runner, runner_gpus
from ..runtimes.merge import overlay
from ..runtimes.presets import preset_image_warnings
from ..shared import keyed_table, per_object, render_table, shared
from . import parallel_flags
from .placeholders import expand_container
from .storage import ModelStorage, OverlayStorage

# Fields of a merged component that are not pod spec fields.
COMPONENT_ONLY = frozenset({
    "runner", "leader", "worker", "size", "minReplicas", "maxReplicas", "labels", "annotations", "minAvailable",
    "maxUnavailable", "deploymentStrategy", "autoscaler", "autoscalerPolicyRef", "servicePortAppProtocols",
    "timeoutSeconds", "lifecycle", "containerConcurrency", "canaryTrafficPercent", "kedaConfig", "scaleMetric",
    "scaleTarget", "acceleratorOverride", "topologyKey", "topologySpread", "topologySpreadKey", "config",
    "scalingPolicy", "ephemeralContainers",
})
POD_DEFAULTS = {"dnsPolicy": "ClusterFirst", "restartPolicy": "Always", "securityContext": {}}
KUBERNETES_GRACE_PERIOD = 30  # what the API server writes when neither OME nor the spec sets one
CONTAINER_DEFAULTS = {"terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
                      "imagePullPolicy": "IfNotPresent"}

MERGED_WEIGHTS = "ome.io/fine-tuned-serving-with-merged-weights"
# utils.IsOriginalModelVolumeMountNecessary compares with != "true" (ome.flags warns of other values).
FLAGS = {MERGED_WEIGHTS: "the pods mount the base model's weights as usual"}


@dataclass
class PodPlan:
    """Everything the pod of one component (or of a leader or worker) is built from."""

    component: str                # engine, decoder, router
    role: str                     # "" for a component pod, "leader" or "worker"
    fields: dict                  # merged pod/component fields (component, leader or worker)
    isvc_fields: dict             # the same part as written in the InferenceService
    meta: dict                    # the InferenceService's metadata, for placeholders
    annotations: dict             # A of render.md §8.2
    storage: ModelStorage
    config: dict | None = None    # the runtime's <component>Config ``fields`` were merged from, isvc_fields over it
    overlays: list[OverlayStorage] = field(default_factory=list)
    cls: object = None            # AcceleratorClass Obj or None
    class_config: dict | None = None
    pods_per_replica: int = 1
    model_ready: dict = field(default_factory=dict)      # {key: "Ready"} or {}
    runtime_node_selector: dict = field(default_factory=dict)
    isvc_component: dict = field(default_factory=dict)   # spec.<component> as written
    scheduler_name: str | None = None
    service_account: str | None = None
    router_config: dict | None = None
    grace_period: int | None = None  # the cluster's deploy.terminationGracePeriodSeconds; None: unconfigured
    accelerator_resources: tuple[str, ...] = (GPU,)  # the cluster's acceleratorResources, for PARALLELISM_SIZE
    no_container: str = ""        # why no container would be found (the runtime and its config), for the error
    class_change: str = ""        # set by the pod's build: how the class changed the runtime's GPUs per pod
    gpus: int = 0                 # set by the pod's build: the runner's accelerators per pod

    @property
    def path(self) -> str:
        return f"{self.component}.{self.role}" if self.role else self.component

    @property
    def serves_model(self) -> bool:
        return self.component in ("engine", "decoder")


def build_pod(plan: PodPlan, report: Report) -> dict:
    """The pod spec of one pod template: built once per key of everything the build reads (:func:`pod_key`) and
    the same dict for every plan of that key, its messages said again to each plan's report (ome.shared). What
    holds it only reads it: the pod webhook copies a spec it changes, a LeaderWorkerSet copies its templates.

    A router's pod runs as its InferenceService's own service account, so no two share it: where the runtime sets
    no account to replace (the one warning that names it), the pod is built once for every router alike with
    :data:`ACCOUNT_STAND_IN` there, and each router's is that pod's copy with its own account in the same place
    (the shape check takes any string there, and nothing else of the build reads the account)."""
    account = plan.service_account
    if account and plan.fields.get("serviceAccountName") is None:
        plan.service_account = ACCOUNT_STAND_IN   # the plan is this router's own, and built from only here
        try:
            pod = dict(_keyed_pod(plan, report))
        finally:
            plan.service_account = account
        pod["serviceAccountName"] = account
        return pod
    return _keyed_pod(plan, report)


# no InferenceService's router account: those are InferenceService names, which hold no space
ACCOUNT_STAND_IN = "the InferenceService's router account"


def _keyed_pod(plan: PodPlan, report: Report) -> dict:
    pods = keyed_table(PODS, lambda: Recent(POD_LIMIT))
    key = pod_key(plan)
    pod = shared(pods, key, report, lambda said: _build_pod(plan, said, key), None)
    if key is not None:
        keep_text(pod)   # never changed after (see above): the writer writes its text once
    return pod


PODS = "pods"   # the render table's entry that holds the pods built (bounded: a Recent of its own)
# pods kept: the 10,000 fleet's 12,639 pods have 4,842 keys, at most 964 of them between first and last use at once;
# the 1,536 used last find 90 % of the pods that all 4,842 would, for about 14 MB
POD_LIMIT = 1536
# the annotations (A of render.md §8.2) the build reads: whether the model is mounted and model-empty-dir added
ANNOTATIONS_READ = ("ome.io/inject-model-init", MERGED_WEIGHTS, "ome.io/inject-fine-tuned-adapter")


def pod_key(plan: PodPlan) -> bytes | None:
    """A digest of every part of ``plan`` a build that succeeds reads (``no_container`` is read only by its error,
    and errors are never shared); None (not shared) where a string holds ``{{``: the runner's placeholders read the
    InferenceService's metadata and spend the render's expansion budget, which a shared pod would spend once."""
    cls = plan.cls
    data = pickled((plan.component, plan.role, _fields_part(plan), _isvc_parts(plan), _storage_part(plan.storage),
                    [_overlay_part(item) for item in plan.overlays],
                    None if cls is None else _class_part(cls), plan.class_config, plan.pods_per_replica,
                    plan.model_ready, plan.runtime_node_selector, plan.scheduler_name, plan.service_account,
                    plan.router_config, plan.grace_period, plan.accelerator_resources,
                    plan.class_change, plan.gpus, [plan.annotations.get(key) for key in ANNOTATIONS_READ],
                    k8stypes.in_use()))
    if data is None or b"{{" in data:
        return None
    return digest(data)


def _storage_part(storage: ModelStorage) -> tuple:
    """A storage's fields (pickling a tuple of them takes a fraction of the time the dataclass's pickle does)."""
    return storage.volume, storage.mount, storage.path, storage.node_selector_key, storage.wait


def _overlay_part(item: OverlayStorage) -> tuple:
    return item.volume, item.mount, item.env_name, item.path, item.wait


def _class_part(cls) -> bytes | tuple:
    """The class's name and spec, by a digest worked out once per class in a render (a fleet has a few classes)."""
    return per_object(CLASSES, cls, lambda: _class_digest(cls))


def _class_digest(cls) -> bytes | tuple:
    data = pickled((cls.name, cls.spec))
    return (cls.name, cls.spec) if data is None or b"{{" in data else digest(data)   # "{{" keeps it whole


CLASSES = "pod classes"   # the render table's entry (ome.shared.per_object)


def _fields_part(plan: PodPlan):
    """What names the pod fields and runner the build reads. A component's merged fields are the runtime's config
    with the InferenceService's laid over it key by key (runtimes.components.merge_component): the config's (one per
    runtime, never changed in a render) are named by their digest, worked out once per config, and the
    InferenceService's by themselves, so the large runner is not serialized again for each InferenceService."""
    if plan.role or plan.config is None:
        return _pod_fields(plan.fields)
    configs = keyed_table(CONFIGS, lambda: Recent(POD_LIMIT))
    found = configs.get(id(plan.config))
    if found is None or found[0] is not plan.config:
        data = pickled(_pod_fields(plan.config))
        # a config with "{{" anywhere names itself whole, so that pod_key finds the braces and shares nothing
        named = None if data is None or b"{{" in data else digest(data)
        found = configs.remember(id(plan.config), (plan.config, named))
    if found[1] is None:
        return _pod_fields(plan.fields)
    return found[1], _pod_fields(plan.isvc_fields)


def _pod_fields(component: dict) -> list:
    """The fields of a component the build reads, in their order: its pod fields and its runner."""
    return [(key, value) for key, value in component.items() if key not in COMPONENT_ONLY or key == "runner"]


CONFIGS = "pod configs"   # the render table's entry: id of a runtime's component config -> (it, its digest or None)


def _isvc_parts(plan: PodPlan) -> tuple:
    """What the build reads of the InferenceService's ``spec.<component>`` as written (effects: whether its runners
    set resources, its and its role's nodeSelector, whether it sets an affinity); not its replicas or scaling."""
    component = map_or_empty(plan.isvc_component)
    role = map_or_empty(component.get(plan.role)) if plan.role else {}
    return (component.get("runner"), component.get("nodeSelector"), component.get("affinity"), role.get("runner"),
            role.get("nodeSelector"))


def _build_pod(plan: PodPlan, report: Report, named: bytes | None = None) -> dict:
    """``named``: the plan's :func:`pod_key`, if it has one."""
    pod = {k: copy_data(v) for k, v in plan.fields.items() if k not in COMPONENT_ONLY}
    runner = plan.fields.get("runner")
    if isinstance(runner, dict):
        runner = _prepare_runner(plan, copy_data(runner), report)
    containers, main = _place_runner(pod.get("containers") or [], runner)
    if main is None:
        raise OmeError("no containers found" + (f": {plan.no_container}" if plan.no_container else ""),
                       field=f"spec.{plan.path}.runner")
    if named is None:   # a key's pickle holds no "{{" (pod_key), nor then does any string built from its parts
        containers[main] = expand_container(containers[main], plan.meta, f"{plan.path}.runner")
    if plan.serves_model and runner is not None:
        _check_parallel_flags(plan, containers[main], report, named)
    pod["containers"] = [_container_defaults(c, default_probe=not plan.role) for c in containers]
    _add_model_volumes(pod, plan, runner is not None)
    if plan.serves_model:
        _add_wait_steps(pod, plan)
        _set_node_selector(pod, plan, report)
        pod = effects.class_affinity(pod, plan.cls, plan.isvc_component)
    pod.setdefault("schedulerName", plan.scheduler_name or "default-scheduler")
    if plan.service_account:
        if pod.get("serviceAccountName") not in (None, plan.service_account):
            report.warn(f"{plan.component}: serviceAccountName {pod['serviceAccountName']} is replaced by "
                        f"{plan.service_account}, which the router needs to find its pods",
                        code="service-account-replaced")
        pod["serviceAccountName"] = plan.service_account
    for key, value in POD_DEFAULTS.items():
        pod.setdefault(key, copy_data(value))
    # specdefaults.terminationGracePeriod fills it where neither the InferenceService nor the runtime set it
    pod.setdefault("terminationGracePeriodSeconds",
                   KUBERNETES_GRACE_PERIOD if plan.grace_period is None else plan.grace_period)
    try:
        check_pod(pod, "spec.template.spec", named)
    except OmeError as err:
        raise OmeError(f"{plan.path} pod template: {err.text}", field=err.field) from None
    for text in preset_image_warnings(pod, plan.path):
        report.warn(text, code="preset-image")
    return pod


def _check_parallel_flags(plan: PodPlan, runner: dict, report: Report, named: bytes | None) -> None:
    """parallel_flags.check, once per runner and GPU count: InferenceServices on one runtime, model and class run
    the same runner; each gets the warning, at its own place (ome.shared). ``named``: the pod's key, which names
    the runner as its fingerprint would."""
    digest = fingerprint(runner) if named is None else named
    key = digest and ("parallel flags", plan.path, digest, plan.gpus, plan.pods_per_replica, plan.class_change)
    shared(render_table(), key, report, lambda said: parallel_flags.check(
        plan.path, runner, plan.gpus, plan.pods_per_replica, said, plan.class_change), None)


# ---------------------------------------------------------------- the runner (step 9)

def _prepare_runner(plan: PodPlan, runner: dict, report: Report) -> dict:
    if not plan.serves_model:
        return _router_env(plan, runner, report)
    skip_model = not model_mount_needed(plan.annotations)
    if plan.storage.path and not skip_model and not _env_entry(runner, "MODEL_PATH"):
        runner["env"] = list(runner.get("env") or []) + [{"name": "MODEL_PATH", "value": plan.storage.path}]
    runner = effects.apply_environment_override(runner, plan.class_config, plan.component,
                                                     plan.cls.name if plan.cls is not None else "", report)
    if plan.storage.mount and not skip_model:
        runner = _add_mount(runner, plan.storage.mount, plan.path)
    for item in plan.overlays:
        runner = _add_mount(runner, item.mount, plan.path)
        if not _env_entry(runner, item.env_name):
            runner["env"] = list(runner.get("env") or []) + [{"name": item.env_name, "value": item.path}]
    sets_resources = effects.isvc_runner_sets_resources(plan.isvc_component, plan.role or None)
    runner = _class_resources(plan, runner, sets_resources, report)
    runner = effects.apply_args_overrides(runner, plan.class_config)
    runner = _parallelism(plan, runner, report)
    check_runner(plan.path, runner, plan.cls, plan.pods_per_replica, report)
    if not _env_entry(runner, "MODEL_PATH") and _references(runner, "MODEL_PATH"):
        report.warn(f"{plan.path} runner {runner.get('name')}: $(MODEL_PATH) is referenced but MODEL_PATH is not set; "
                    f"the runner gets the literal text", code="model-path-unset")
    return runner


def _class_resources(plan: PodPlan, runner: dict, sets_resources: bool, report: Report) -> dict:
    """The class's resources on the runner, and a warning when they change the GPUs per pod the runtime asked for
    (a class quantity written per accelerator, not per pod, turns 8-GPU pods into 1-GPU pods), unless the runtime's
    acceleratorConfig for the class sets a tensorParallelismOverride: then it plans for the class's count."""
    if plan.cls is None or sets_resources or not plan.cls.spec.get("resources"):
        return runner   # the class changes nothing (effects.apply_class_resources)
    before = runner_gpus(runner, plan.accelerator_resources)
    result = effects.apply_class_resources(runner, plan.cls, sets_resources)
    after = runner_gpus(result, plan.accelerator_resources)
    if before > 0 and after != before:
        plan.class_change = (f"accelerator class {plan.cls.name} sets {after} GPUs per pod, where the runtime asks "
                             f"for {before}")
        # a tensorParallelismOverride for the class says the runtime plans for it (parallel_flags judges the flags)
        if not effects.suppresses_parallelism(plan.class_config):
            pods = plan.pods_per_replica
            nodes = f" × {pods} pods" if pods > 1 else ""
            report.warn(f"{plan.path} runner {runner.get('name')}: {plan.class_change}; PARALLELISM_SIZE is "
                        f"{after * pods}, not {before * pods} ({after} per pod{nodes}); give the class the runtime's "
                        f"count ({before}; its resources quantity is per pod), or set resources on the "
                        f"InferenceService's runner", field=f"spec.{plan.path}.runner", code="accelerator-class-gpus")
    return result


def model_mount_needed(annotations: dict) -> bool:
    """render.md §6.1: model-init (which fills model-empty-dir) or merged fine-tuned weights replace the base model's
    mount and MODEL_PATH (source: utils.IsOriginalModelVolumeMountNecessary)."""
    return (annotations.get("ome.io/inject-model-init") != "true"
            and annotations.get(MERGED_WEIGHTS) != "true")


def empty_model_dir_needed(annotations: dict) -> bool:
    """The memory-backed ``model-empty-dir`` volume that model-init or the fine-tuned adapter download into (source:
    utils.IsEmptyModelDirVolumeRequired: any non-empty adapter name)."""
    return (annotations.get("ome.io/inject-model-init") == "true"
            or bool(annotations.get("ome.io/inject-fine-tuned-adapter")))


def _env_entry(runner: dict, name: str) -> dict | None:
    return next((e for e in runner.get("env") or [] if isinstance(e, dict) and e.get("name") == name), None)


def _references(runner: dict, var: str) -> bool:
    token = f"$({var})"
    return any(isinstance(v, str) and token in v for v in (runner.get("command") or []) + (runner.get("args") or []))


def _add_mount(runner: dict, mount: dict, path: str) -> dict:
    mounts = list(runner.get("volumeMounts") or [])
    if any(m.get("mountPath") == mount["mountPath"] for m in mounts if isinstance(m, dict)):
        raise OmeError(f"{path}.runner.volumeMounts: mount path {mount['mountPath']} is already used; OME mounts the "
                       f"model {mount['name']} there", field=f"spec.{path}.runner.volumeMounts")
    return {**runner, "volumeMounts": mounts + [dict(mount)]}


def _parallelism(plan: PodPlan, runner: dict, report: Report) -> dict:
    gpus = plan.gpus = runner_gpus(runner, plan.accelerator_resources)
    suppressed = effects.suppresses_parallelism(plan.class_config)
    if gpus > 0 and not suppressed:
        value = str(gpus * plan.pods_per_replica)
        env = [dict(e) for e in runner.get("env") or []]
        for entry in env:
            if entry.get("name") == "PARALLELISM_SIZE":
                entry.pop("valueFrom", None)
                entry["value"] = value
                break
        else:
            env.append({"name": "PARALLELISM_SIZE", "value": value})
        return {**runner, "env": env}
    if _references(runner, "PARALLELISM_SIZE") and not _env_entry(runner, "PARALLELISM_SIZE"):
        cause = (f"tensorParallelismOverride for class {plan.cls.name}" if suppressed and plan.cls is not None
                 else f"no {_listed(plan.accelerator_resources)} on the runner")
        report.warn(f"{plan.path} runner {runner.get('name')}: $(PARALLELISM_SIZE) is referenced but PARALLELISM_SIZE is"
                    f" not set ({cause})", code="parallelism-size-unset")
    return runner


def _listed(names: tuple[str, ...]) -> str:
    """``a or b``; the first three and a count past them (the cluster's acceleratorResources may be thousands)."""
    if len(names) <= 3:
        return " or ".join(names)
    return f"{', '.join(names[:3])} or {len(names) - 3:,} more acceleratorResources"


def _router_env(plan: PodPlan, runner: dict, report: Report) -> dict:
    """Router ``config`` entries as env, in key order (render.md §7.2)."""
    env = [dict(e) for e in runner.get("env") or []]
    for key in sorted(plan.router_config or {}):
        value = plan.router_config[key]
        existing = next((e for e in env if e.get("name") == key), None)
        if existing is not None:
            existing.pop("valueFrom", None)
            existing["value"] = str(value)
        else:
            env.append({"name": key, "value": value if isinstance(value, str) else str(value)})
    return {**runner, "env": env} if env else runner


# ---------------------------------------------------------------- placement (step 10)

def _place_runner(containers: list, runner: dict | None) -> tuple[list, int | None]:
    containers = [copy_data(c) for c in containers]
    if runner is None:
        return containers, (0 if containers else None)
    for i, container in enumerate(containers):
        if container.get("name") == runner.get("name"):
            merged = overlay(container, runner)
            args = list(container.get("args") or []) + list(runner.get("args") or [])
            if args:
                merged["args"] = args
            containers[i] = merged
            return containers, i
    containers.append(runner)
    return containers, len(containers) - 1


def _container_defaults(container: dict, default_probe: bool) -> dict:
    container = dict(container)
    for key, value in CONTAINER_DEFAULTS.items():
        container.setdefault(key, value)
    if container.get("ports"):
        container["ports"] = [{**p, "protocol": p.get("protocol") or "TCP"} for p in container["ports"]]
    if container.get("resources"):
        container["resources"] = _quantities_as_strings(container["resources"])
    if default_probe and container.get("name") == "ome-container" and not container.get("readinessProbe"):
        ports = container.get("ports") or []
        port = ports[0].get("containerPort", 8080) if ports else 8080
        container["readinessProbe"] = {"tcpSocket": {"port": port}, "timeoutSeconds": 1, "periodSeconds": 10,
                                       "successThreshold": 1, "failureThreshold": 3}
    if container.get("args") == []:
        del container["args"]
    return container


def _quantities_as_strings(resources: dict) -> dict:
    """Quantities as Go writes them; an empty ``requests`` or ``limits`` is left out, as Go's ``omitempty`` on
    a ResourceList does (what a ``cpu: null`` leaves after load drops the null: render.md §3.2)."""
    out = dict(resources)
    for part in ("requests", "limits"):
        if isinstance(out.get(part), dict):
            if out[part]:
                out[part] = {k: _quantity_text(v) for k, v in out[part].items()}
            else:
                del out[part]
    return out


def _quantity_text(value) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


# ---------------------------------------------------------------- pod level (step 12)

def _add_model_volumes(pod: dict, plan: PodPlan, has_runner: bool) -> None:
    volumes = list(pod.get("volumes") or [])
    wanted = []
    storage_volume = plan.storage.volume
    if storage_volume is not None and (plan.serves_model or not plan.storage.is_pvc):
        wanted.append(storage_volume)
    if plan.serves_model:
        wanted.extend(o.volume for o in plan.overlays)
    for volume in wanted:
        if any(v.get("name") == volume["name"] for v in volumes):
            raise OmeError(f"{plan.path}: a volume named {volume['name']} already exists; OME adds the model volume "
                           f"under that name", field=f"spec.{plan.path}.volumes")
        volumes.append(copy_data(volume))
    if plan.serves_model and empty_model_dir_needed(plan.annotations) and \
            not any(v.get("name") == "model-empty-dir" for v in volumes):
        volumes.append({"name": "model-empty-dir", "emptyDir": {"medium": "Memory"}})
    if volumes:
        pod["volumes"] = volumes


def _add_wait_steps(pod: dict, plan: PodPlan) -> None:
    """``--model-weights download``: the init containers that hold the pod until its weights are downloaded, before
    every other init container; one per claim. The wait step is never skipped: an init container of the runtime or
    the InferenceService with its name is an error (docs/how-to/model-weights.md)."""
    waits = [plan.storage.wait] if plan.storage.wait and model_mount_needed(plan.annotations) else []
    waits += [item.wait for item in plan.overlays if item.wait]
    if not waits:
        return
    existing = list(pod.get("initContainers") or [])
    for i, container in enumerate(existing):
        wait = next((w for w in waits if isinstance(container, dict) and container.get("name") == w["name"]), None)
        if wait is not None:
            raise OmeError(f'{plan.path} pod template: initContainers[{len(waits) + i}].name: Duplicate value: '
                           f'"{wait["name"]}" (the wait step of --model-weights download, which holds the pod until '
                           f'the weights of its volume {wait["volumeMounts"][0]["name"]} are downloaded, has this '
                           f"name: rename the runtime's or the InferenceService's init container)",
                           field=f"spec.{plan.path}.initContainers[{i}].name")
    pod["initContainers"] = [copy_data(w) for w in waits] + existing


def _set_node_selector(pod: dict, plan: PodPlan, report: Report) -> None:
    selector = effects.pod_node_selector(plan.component, plan.role or None, pod.get("nodeSelector") or {},
                                              plan.model_ready, plan.runtime_node_selector, plan.cls,
                                              plan.isvc_component, report)
    if selector:
        pod["nodeSelector"] = selector
    else:
        pod.pop("nodeSelector", None)
