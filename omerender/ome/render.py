"""The render pipeline: every InferenceService of the input → the Kubernetes objects OME
would create for it (render.md §1). Pure: takes :class:`Inputs`, returns objects and messages."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from omerender.errors import Message, OmeError, OmeErrors, Report
from omerender.kube.names import trunc63
from omerender.suggest import did_you_mean
from omerender.yamlio.data import count_values
from omerender.yamlio.emit import kept_texts
from .accelerators import choice as accelerators, effects as classeffects
from .benchmark.step import benchmark_jobs
from .frontend import CLI_FRONT, FrontEnd
from .cluster import CHART_DEFAULTS
from .budget import BudgetError, charge_copy, copy_budget
from .ingress import ComponentRoute, external_service_wanted, ingress_objects
from .load import Inputs, Obj
from .monitoring.podmonitor import pod_monitor
from .keep import Keep, Sink
from .output import check_rendered, duplicate_errors, passthrough_objects, unrendered_errors
from .pinning.lock import check_locked_entries, resolve_with_lock
from .pinning.lockfile import Lock
from .podwebhook import mutate_workloads
from .runtimes.components import (MODE_KEY, Component, as_mapping, check_pairing, declared, merge_component,
                                  resolve_mode)
from .runtimes.inherit import Chains, check_runner_names, rt_ref, validate_runtime_chain
from .runtimes.presets import check_engine_annotation
from .selection.result import Resolution
from .shared import shared_work
from .selection.validation import validate_runtime
from .workloads import multinode, objects as workloads
from .workloads import autoscaler_policy
from .workloads.metric_providers import Bindings, is_shared, trigger_authentications
from .workloads.autoscaling import (Scaling, check_autoscaler_block, choose_autoscaler, disruption_budget,
                                    removed_field_warnings, replica_bounds, validate_runtime_autoscalers)
from .workloads.metadata import component_annotations, component_labels, external_service_annotations, queue_labels
from .workloads.placeholders import render_budget
from .workloads.pods import PodPlan, build_pod
from .inert import warn_inert_fields, warn_inert_runtime_fields
from . import misread
from .workloads.storage import ModelStorage, check_volume_name, model_storage, overlay_storage
from .weights.book import Book
from .weights.placement import pod_specs
from .weights.settings import AGENT, DOWNLOAD, WeightsSettings
from .weights.source import is_pvc

ISVC_NAME = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
IGNORED_RUNTIME_POD_FIELDS = ("volumes", "tolerations", "affinity", "labels", "annotations", "imagePullSecrets",
                              "hostIPC", "hostNetwork", "dnsPolicy", "containers")


@dataclass(frozen=True)
class Options:
    keep_inputs: bool = False
    model_node_selector: bool = True
    locked: bool = False  # a stale lock is an error (CI)
    strict: bool = False  # any warning fails the run (CI); the caller checks, the render ignores it
    pod_monitors: bool = False  # the cluster has the PodMonitor CRD, as OME v1.3 requires (monitoring.podmonitor)
    model_weights: str = AGENT  # who puts the weights on the nodes: OME's model agent, or a Job (ome.weights)
    weights: WeightsSettings = WeightsSettings()  # the download Job's and claim's settings (download only)
    allow: frozenset = frozenset()  # codes of warnings strict accepts (omerender.codes); the caller checks
    front: FrontEnd = CLI_FRONT  # where the options were given: how a message's fix names a setting (frontend)
    quiet: bool = False  # infos are left out of what is printed (and of KRM results); the caller leaves them out
    # the target cluster (the KRM function's kubeVersion and apiVersions); the caller checks
    kube_version: tuple[int, int] | None = None
    api_versions: frozenset[str] | None = None
    validate: bool = False  # check what is written as `omerender validate` does (the caller checks)

    @property
    def model_objects(self) -> bool:
        """Whether the models the InferenceServices use are written out for OME's model agent: in agent mode, unless
        --keep-inputs writes them already or --no-model-node-selector says there is no agent."""
        return self.model_weights == AGENT and not self.keep_inputs and self.model_node_selector


@dataclass
class IsvcFacts:
    """What one InferenceService rendered with, for commands that report on a render (``diff``)."""

    runtime: Obj | None = None
    model: Obj | None = None
    auto_selected: bool = False
    classes: dict[str, str | None] = field(default_factory=dict)  # component -> AcceleratorClass name
    objects: list[dict] = field(default_factory=list)
    models: list[Obj] = field(default_factory=list)  # the models its pods mount (spec.model and its overlays)


@dataclass
class Result:
    objects: list[dict] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    isvcs: dict[tuple[str, str], IsvcFacts] = field(default_factory=dict)  # (namespace, name) -> facts
    # id of each object rendered for an input other than an InferenceService -> that input: the weights claim and
    # download Job of a model (--model-weights download), the Job of a BenchmarkJob
    origins: dict[int, Obj] = field(default_factory=dict)
    # with a sink (:func:`render`): where in ``objects`` the objects it was given belong (``objects`` leaves them out)
    streamed_at: int | None = None


# Said once per render that has InferenceServices and no cluster ConfigMap: the chart's defaults turn off every
# Ingress and route, which a user who expected the cluster's would otherwise find missing without a word.
CHART_DEFAULTS_NOTE = ("no ConfigMap inferenceservice-config among the inputs and no --cluster-config: OME v1.3's Helm "
                       "chart defaults apply (no Ingress or route, at most 3 engine replicas, nvidia.com/gpu the only "
                       "GPU resource); to render with the cluster's, give `kubectl get configmap "
                       "inferenceservice-config -n ome -o yaml` as --cluster-config FILE or among the inputs")


def render(inputs: Inputs, options: Options = Options(), lock: Lock | None = None, sink: Sink | None = None) -> Result:
    """Render every InferenceService; raise :class:`OmeErrors` with every error found.

    ``lock`` is the parsed ``omerender.lock.yaml`` (pinned runtimes), if any. ``sink``, if given, is handed each
    object rendered from an InferenceService, in output order, as soon as it is rendered and checked, and the
    render keeps no more of it than the checks of the whole output need (its identity; ``IsvcFacts.objects`` is
    then kept only for the InferenceServices a BenchmarkJob names): ``Result.objects`` leaves those objects out,
    and ``Result.streamed_at`` says where among them they belong. What the sink got is output only if the render
    returns: an error found later (a duplicate of an earlier object, a failure in a later InferenceService) raises.
    """
    with render_budget(), copy_budget(inputs), shared_work(), kept_texts():
        return _render(inputs, options, lock, sink)


def _render(inputs: Inputs, options: Options, lock: Lock | None, sink: Sink | None = None) -> Result:
    report = Report()
    report.extend(inputs.messages)
    if inputs.isvcs and inputs.cluster_config is CHART_DEFAULTS:
        report.info(CHART_DEFAULTS_NOTE, code="chart-defaults")
    chains = Chains(inputs, report)
    errors = _validate_runtimes(inputs, chains, report) + _validate_policies(inputs)
    _warn_models(inputs, report)
    if options.pod_monitors:
        _note_pod_monitor_config(inputs, report)
    if options.locked:
        try:
            check_locked_entries(inputs, lock)
        except OmeError as err:
            errors.append(err)
    rendered: list[tuple[dict, Obj]] = []  # each object and the InferenceService it is rendered from
    facts: dict[tuple[str, str], IsvcFacts] = {}
    runtime_errors = {e.text for e in errors}
    book = Book(options.weights, options.front)
    used_models: dict[tuple, Obj] = {}
    failed: set[tuple[str, str]] = set()
    reported: set[int] = set()  # the errors appended below, by identity (kept alive in ``errors``)
    keep = Keep(inputs, sink)
    for isvc in sorted(inputs.isvcs, key=lambda o: (o.namespace, o.name)):
        isvc_report = Report(ref=isvc.ref, file=isvc.file)
        isvc_facts = facts[(isvc.namespace, isvc.name)] = IsvcFacts()
        try:
            objects = render_isvc(isvc, inputs, chains, options, isvc_report, lock, isvc_facts, book)
            check_rendered(objects)
            isvc_facts.objects = objects if keep.objects_of(isvc) else []
            rendered.extend(keep.passed(objects, isvc))
            for model in isvc_facts.models if objects else ():
                used_models.setdefault((model.kind, model.namespace or "", model.name), model)
        except BudgetError as err:
            errors.append(err.located(isvc.ref, isvc.file))
            break  # a limit of the whole render: every InferenceService after it would pass it too
        except OmeError as err:
            failed.add((isvc.namespace, isvc.name))
            # a runtime's admission error is reported once, on the runtime; a model's weights error (the same
            # object each time: weights.book) once, on the model
            if err.text not in runtime_errors and id(err) not in reported:
                reported.add(id(err))
                errors.append(err.located(isvc.ref, isvc.file))
        report.extend(isvc_report.messages)
    selector = options.model_node_selector and options.model_weights == AGENT   # no agent labels in download mode
    jobs, bench_errors, bench_messages = benchmark_jobs(inputs, facts, failed, selector,
                                                        book if options.model_weights == DOWNLOAD else None)
    rendered.extend(jobs)
    errors.extend(bench_errors)
    report.extend(bench_messages)
    errors.extend(unrendered_errors(inputs, options.keep_inputs))
    models = list(used_models.values()) if options.model_objects else []
    kept = [(o.data, o) for o in passthrough_objects(inputs, options.keep_inputs, models)]
    rendered = (_shared_once(rendered) if sink is None else rendered) + book.objects()
    errors.extend(duplicate_errors(kept + rendered))
    if errors:
        raise OmeErrors(errors)
    for text, isvc in multinode.shared_leader_service_warnings(rendered):
        report.warn(text, ref=isvc.ref, file=isvc.file, code="shared-leader-service")
    for text, model in book.size_warnings():
        report.warn(text, ref=model.ref, field="metadata.annotations", file=model.file, code="weights-size-guessed")
    for text, model in book.access_warnings():
        report.warn(text, ref=model.ref, file=model.file, code="weights-single-node-claim")
    for text, model in book.placement_warnings():
        report.warn(text, ref=model.ref, file=model.file, code="weights-placement-differs")
    origins = {id(obj): owner for obj, owner in rendered if owner.kind != "InferenceService"}
    if sink is None:
        return Result([obj for obj, _ in kept + rendered], report.messages, facts, origins)
    tail = [obj for obj, owner in rendered if owner.kind != "InferenceService"]
    return Result([obj for obj, _ in kept] + tail, report.messages, facts, origins, streamed_at=len(kept))


def _shared_once(rendered: list[tuple[dict, Obj]]) -> list[tuple[dict, Obj]]:
    """Each namespace's metric provider TriggerAuthentication once, at its first InferenceService: OME shares one
    among all that use the provider there, and renders them alike (the same name always has the same spec)."""
    seen: set[tuple] = set()
    out = []
    for obj, source in rendered:
        if is_shared(obj):
            key = (obj["metadata"]["namespace"], obj["metadata"]["name"])
            if key in seen:
                continue
            seen.add(key)
        out.append((obj, source))
    return out


# ---------------------------------------------------------------- runtimes (admission, api.md §7.1)

def _validate_runtimes(inputs: Inputs, chains: Chains, report: Report) -> list[OmeError]:
    errors = []
    runtimes = list(inputs.cluster_runtimes.values()) + list(inputs.runtimes.values())
    for runtime in sorted(runtimes, key=lambda o: (o.kind, o.namespace or "", o.name)):
        runtime_report = Report(ref=runtime.ref, file=runtime.file)
        try:
            _validate_runtime(runtime, inputs, chains, runtime_report)
        except OmeError as err:
            errors.append(err.located(runtime.ref, runtime.file))
        report.extend(runtime_report.messages)
    return errors


def _warn_models(inputs: Inputs, report: Report) -> None:
    models = list(inputs.cluster_models.values()) + list(inputs.models.values())
    for model in sorted(models, key=lambda o: (o.kind, o.namespace or "", o.name)):
        model_report = Report(ref=model.ref, file=model.file)
        misread.warn_model(model, model_report, inputs)
        report.extend(model_report.messages)


def _note_pod_monitor_config(inputs: Inputs, report: Report) -> None:
    """The ConfigMap's ``podMonitor`` key reaches only OMENative components' PodMonitors (docs:
    guides/operate-ome/metrics.md), never those omerender renders; saying so once keeps it from passing silently."""
    config = inputs.cluster_config
    settings = config.pod_monitor
    if settings.labels or settings.relabelings or settings.metric_relabelings:
        report.info(f"{config.source}: podMonitor applies only to OMENative components in OME v1.3; the PodMonitors "
                    f"of RawDeployment and MultiNode components get neither its labels nor its relabelings",
                    code="pod-monitor-native-only")


def _validate_policies(inputs: Inputs) -> list[OmeError]:
    """What OME's webhook and the AutoscalerPolicy CRD refuse in each policy, used or not."""
    errors = []
    for (_, _), policy in sorted(inputs.autoscaler_policies.items()):
        try:
            autoscaler_policy.validate_policy(policy.spec)
        except OmeError as err:
            errors.append(err.located(policy.ref, policy.file))
    return errors


def _validate_runtime(runtime: Obj, inputs: Inputs, chains: Chains, report: Report) -> None:
    """The runtime webhook's checks (api.md §7.1); ``report`` is located at the runtime."""
    validate_runtime_chain(runtime, chains)
    check_engine_annotation(runtime)
    check_runner_names(runtime, chains.own_spec(runtime))
    spec = runtime.spec
    _check_scaling_policy(spec.get("scalingPolicy"), "spec.scalingPolicy")
    validate_runtime_autoscalers(spec)
    for text in removed_field_warnings(spec):
        report.warn(text, field=text.split(" ", 1)[0], code="removed-field")  # the text starts with the field's path
    warn_inert_runtime_fields(spec, report)
    misread.warn_runtime(runtime, report, inputs)
    if spec.get("disabled") is True:
        return
    merged = chains.merged_view(runtime)
    accelerators.validate_runtime_classes(runtime, merged, inputs, report, _pool_source(runtime, chains))
    validate_runtime(runtime)
    if "workers" in spec:
        report.warn("spec.workers was removed in OME v1.3 and is ignored", field="spec.workers", code="removed-field")


def _pool_source(runtime: Obj, chains: Chains) -> str | None:
    """The ref of the parent whose acceleratorClasses the runtime inherits, if it sets none itself."""
    def pool(rt: Obj) -> list:
        return accelerators.runtime_pool(chains.own_spec(rt))

    if pool(runtime):
        return None
    return next((rt_ref(parent) for parent in chains.chain(runtime)[1:] if pool(parent)), None)


def _check_scaling_policy(policy, path: str) -> None:
    mode = (policy or {}).get("mode") if isinstance(policy, dict) else None
    if mode not in (None, "Independent"):
        raise OmeError(f"ScalingModeNotImplemented: scalingPolicy.mode {mode} is not implemented; only Independent is "
                       f"supported", field=f"{path}.mode")


# ---------------------------------------------------------------- one InferenceService

def check_isvc(isvc: Obj) -> None:
    """The InferenceService's own admission checks (api.md §7.2 rows 1–6)."""
    spec = isvc.spec
    if not ISVC_NAME.fullmatch(isvc.name):
        raise OmeError(f'invalid InferenceService name "{isvc.name}", must match "[a-z]([-a-z0-9]*[a-z0-9])?"',
                       field="metadata.name")
    if spec.get("predictor") is not None and "engine" not in spec:
        raise OmeError("spec.predictor (the InferenceService layout before OME v1.3) is not supported by omerender: "
                       "move the model to spec.model, the runtime to spec.runtime and the container to "
                       "spec.engine.runner", field="spec.predictor")
    if not spec.get("model") and not spec.get("runtime"):
        raise OmeError("at least one of spec.model or spec.runtime must be set", field="spec")
    for key, path in (("model", "spec.model"), ("runtime", "spec.runtime")):
        ref = as_mapping(spec.get(key), path)
        if spec.get(key) is not None and not isinstance(ref.get("name"), str):
            raise OmeError(f"{path}.name: Required value", field=f"{path}.name")
    if "decoder" in spec and "engine" not in spec:
        raise OmeError("decoder cannot be specified without engine", field="spec.decoder")
    for name, path in (("engine", "spec.engine"), ("decoder", "spec.decoder")):
        if name in spec:
            check_pairing(name, as_mapping(spec[name], path))
    mode = spec.get("deploymentMode")
    if mode is not None and mode not in ("OMENative", "RawDeployment"):
        raise OmeError(f'spec.deploymentMode: Unsupported value: "{mode}": supported values: "OMENative", '
                       f'"RawDeployment"', field="spec.deploymentMode")
    _check_scaling_policy(spec.get("scalingPolicy"), "spec.scalingPolicy")
    if spec.get("replicaRefs"):
        raise OmeError("spec.replicaRefs fronts InferenceReplicas, which need the OME controller; omerender cannot "
                       "render it", field="spec.replicaRefs")
    _check_mode_combination(spec)


def _requested_mode(spec: dict, name: str) -> str:
    comp = spec.get(name) or {}
    return (comp.get("annotations") or {}).get(MODE_KEY) or spec.get("deploymentMode") or ""


def _check_mode_combination(spec: dict) -> None:
    if "decoder" not in spec:
        return
    engine, decoder = _requested_mode(spec, "engine"), _requested_mode(spec, "decoder")
    if "OMENative" in (engine, decoder) and engine != decoder:
        raise OmeError(f'InvalidDeploymentModeCombination: engine deploymentMode="{engine}" does not match decoder '
                       f'deploymentMode="{decoder}"; when either is OMENative, both must use the same value')


@dataclass
class IsvcContext:
    isvc: Obj
    inputs: Inputs
    options: Options
    report: Report
    resolution: Resolution
    runtime_spec: dict
    facts: IsvcFacts | None = None
    book: Book | None = None  # --model-weights download: the render's claims and Jobs
    staged_for_pods: list = field(default_factory=list)  # the claims the pods mount

    @property
    def model(self) -> Obj | None:
        return self.resolution.model

    @property
    def runtime_name(self) -> str:
        return self.resolution.runtime.name


def render_isvc(isvc: Obj, inputs: Inputs, chains: Chains, options: Options, report: Report,
                lock: Lock | None = None, facts: IsvcFacts | None = None, book: Book | None = None) -> list[dict]:
    check_isvc(isvc)
    pinned = resolve_with_lock(isvc, inputs, chains, lock, report, options.locked)
    resolution, runtime_spec = pinned.resolution, pinned.spec
    runtime = resolution.runtime
    if facts is not None:
        facts.runtime, facts.auto_selected, facts.model = runtime, resolution.auto_selected, resolution.model
    spec = isvc.spec
    if (isvc.metadata.get("annotations") or {}).get(MODE_KEY) == "VirtualDeployment":
        report.info("ome.io/deploymentMode is VirtualDeployment; nothing is rendered for this InferenceService",
                    code="virtual-deployment")
        return []
    if "engine" not in spec:
        raise OmeError("engine component is required", field="spec.engine")
    if (spec.get("model") or {}).get("fineTunedWeights"):
        raise OmeError("spec.model.fineTunedWeights is not supported by omerender: fine-tuned weights need the OME "
                       "controller", field="spec.model.fineTunedWeights")
    if spec.get("kedaConfig") is not None:
        report.warn("spec.kedaConfig was removed in OME v1.3 and is ignored", field="spec.kedaConfig",
                    code="removed-field")
    if spec.get("predictor") is not None:
        report.warn("spec.predictor is ignored because spec.engine is set", field="spec.predictor",
                    code="predictor-ignored")
    warn_inert_fields(spec, report)
    misread.warn_isvc(isvc, report, inputs)
    _warn_ignored_runtime_fields(runtime, runtime_spec, report)
    ctx = IsvcContext(isvc, inputs, options, report, resolution, runtime_spec, facts,
                      book or Book(options.weights, options.front))
    components = [merge_component(name, spec, runtime_spec, report) for name in declared(spec)]
    for comp in components:
        resolve_mode(comp, spec, report)
    objects: list[dict] = []
    routes: list[ComponentRoute] = []
    for comp in components:
        comp_objects = build_component(ctx, comp)
        objects.extend(comp_objects)
        service = next(o for o in comp_objects if o["kind"] == "Service")
        routes.append(ComponentRoute(comp.name, service["metadata"]["name"], service["spec"]["ports"][0]["port"],
                                     comp.isvc.get("timeoutSeconds")))
    external = _external_service(ctx, {route.component: route.port for route in routes})
    cluster = inputs.cluster_config
    return (objects + ([external] if external else [])
            + ingress_objects(isvc, routes, cluster.ingress, report, cluster.source))


def _warn_ignored_runtime_fields(runtime: Obj, runtime_spec: dict, report: Report) -> None:
    present = [f"spec.{k}" for k in IGNORED_RUNTIME_POD_FIELDS if runtime_spec.get(k) not in (None, [], {}, "")]
    if present:
        report.warn(f"{', '.join(present)} {'is' if len(present) == 1 else 'are'} not used by OME v1.3 and ignored; "
                    f"set them in engineConfig, decoderConfig or routerConfig", ref=runtime.ref, file=runtime.file,
                    field=present[0], code="runtime-pod-fields-ignored")


# ---------------------------------------------------------------- one component

def build_component(ctx: IsvcContext, comp: Component) -> list[dict]:
    """The component's objects, with OME's pod webhook's work done in their pod templates (render.md §17)."""
    objects = mutate_workloads(_controller_objects(ctx, comp), comp.name,
                               ctx.inputs.cluster_config.metrics_aggregator)
    if ctx.options.model_weights == DOWNLOAD and ctx.staged_for_pods and comp.name != "router":
        ctx.book.place(ctx.staged_for_pods, f"{ctx.isvc.name}/{comp.name}", [pod for obj in objects for pod in pod_specs(obj)])
    return objects


def _controller_objects(ctx: IsvcContext, comp: Component) -> list[dict]:
    isvc, report = ctx.isvc, ctx.report
    comp_name = f"{isvc.name}-{comp.name}"
    namespace = isvc.namespace
    labels = component_labels(isvc, comp.name, comp.merged, ctx.runtime_name, ctx.model)
    annotations = component_annotations(isvc, comp.merged, ctx.runtime_name, ctx.model)
    cluster = ctx.inputs.cluster_config
    low, high = replica_bounds(comp.name, comp.isvc, comp.merged, cluster.deploy)
    policy = _policy(ctx, comp, low, high)
    autoscaler = choose_autoscaler(comp.name, comp.isvc, comp.config, annotations,
                                   isvc.metadata.get("annotations") or {}, low, policy)
    from_policy = policy is not None and comp.isvc.get("autoscaler") is None   # choose_autoscaler's order
    scaling = Scaling(low, high, autoscaler)
    budget = disruption_budget(comp.name, comp.isvc, comp.config, cluster.pod_disruption_budget.raw_deployment)
    if comp.mode == "MultiNode":
        multinode.warn_ignored_scaling(comp, report)
        group = multinode.GroupMeta(comp_name, namespace, labels, annotations)
        plan = _pod_plan(ctx, comp, annotations)
        _note_weights_use(ctx, comp, _group_spread(low, multinode.worker_size(comp)))
        objects = multinode.build(group, comp, plan, low, report)
        leader_pod = objects[0]["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]
        return objects + _pod_monitors(ctx, comp_name, annotations, leader_pod)
    plan = _pod_plan(ctx, comp, annotations)
    _note_weights_use(ctx, comp, f"up to {high} replicas" if high > 1 else None)
    pod = build_pod(plan, report)
    object_labels = {**labels, "app": trunc63(comp_name), **queue_labels(annotations)}
    replicas = low if autoscaler.get("class") == "None" else None
    objects = workloads.router_rbac(isvc.name, namespace, labels) if comp.name == "router" else []
    objects.append(workloads.deployment(comp_name, namespace, object_labels, annotations, pod,
                                        comp.merged.get("deploymentStrategy"), replicas))
    ports = workloads.service_ports(pod, comp.merged.get("servicePortAppProtocols"), comp.name)
    objects.append(workloads.service(trunc63(comp_name), namespace, object_labels, annotations,
                                     {"app": trunc63(comp_name)}, ports,
                                     workloads.service_type(annotations, report)))
    scaler = workloads.autoscaler_object(comp_name, namespace, object_labels, annotations, scaling)
    if scaler and from_policy:   # OME materializes them only for a policy-rendered block (dispatch path)
        objects.extend(trigger_authentications(namespace, autoscaler, cluster))
    if scaler:
        objects.append(scaler)
    if budget is not None:
        objects.append(workloads.pdb(comp_name, namespace, object_labels, annotations, budget))
    return objects + _pod_monitors(ctx, comp_name, annotations, pod)


def _pod_monitors(ctx: IsvcContext, comp_name: str, annotations: dict, pod: dict) -> list[dict]:
    """The component's PodMonitor when the cluster has the CRD (``Options.pod_monitors``)."""
    if not ctx.options.pod_monitors:
        return []
    return [pod_monitor(comp_name, ctx.isvc.namespace, annotations, pod, ctx.report)]


def _group_spread(groups: int, workers: int) -> str | None:
    """Why a LeaderWorkerSet's pods may run on several nodes at once, None when they are one pod."""
    if groups > 1:
        return f"{groups} groups of a LeaderWorkerSet"
    return f"a LeaderWorkerSet with {workers} worker pod{'s' if workers != 1 else ''}" if workers else None


def _note_weights_use(ctx: IsvcContext, comp: Component, spread: str | None) -> None:
    """The component's pods mount these download claims (for the ReadWriteOnce warning)."""
    if ctx.options.model_weights != DOWNLOAD or comp.name == "router":
        return
    for staged in ctx.staged_for_pods:
        ctx.book.use(staged, f"{ctx.isvc.name}/{comp.name}", spread)


def _storage(ctx: IsvcContext, model: Obj | None, volume_name: str) -> ModelStorage | None:
    """``model``'s storage under ``--model-weights download`` (its claim, mount and wait step); None where the pods
    mount it as v1.3 does (agent mode, no model, a pvc:// model)."""
    if ctx.options.model_weights != DOWNLOAD or model is None or is_pvc(model):
        return None
    check_volume_name(model.name)
    staged = ctx.book.stage(model, ctx.isvc.namespace, volume_name)
    if not any(s is staged for s in ctx.staged_for_pods):
        ctx.staged_for_pods.append(staged)
    return ModelStorage(staged.volume, staged.mount, staged.path, None, staged.wait)


def _pod_plan(ctx: IsvcContext, comp: Component, annotations: dict) -> PodPlan:
    storage = _storage(ctx, ctx.model, ctx.model.name if ctx.model else "") or model_storage(ctx.model,
                                                                                             ctx.isvc.namespace)
    if ctx.facts is not None and ctx.model is not None and not any(m is ctx.model for m in ctx.facts.models):
        ctx.facts.models.append(ctx.model)
    plan = PodPlan(component=comp.name, role="", fields=comp.merged, isvc_fields=comp.isvc, config=comp.config,
                   meta=ctx.isvc.metadata, annotations=annotations, storage=storage,
                   scheduler_name=ctx.runtime_spec.get("schedulerName"),
                   grace_period=ctx.inputs.cluster_config.deploy.termination_grace_period_seconds,
                   accelerator_resources=ctx.inputs.cluster_config.accelerator_resources,
                   no_container=_no_container(ctx, comp.name))
    if comp.name == "router":
        plan.service_account = f"{ctx.isvc.name}-router"
        plan.router_config = comp.merged.get("config") or {}
        return plan
    plan.overlays = _overlays(ctx)
    choice = accelerators.choose_class(comp.name, ctx.isvc, ctx.runtime_spec, _runtime_ref(ctx), ctx.inputs,
                                       ctx.report)
    plan.cls = choice.cls
    if ctx.facts is not None:
        ctx.facts.classes[comp.name] = choice.cls.name if choice.cls is not None else None
    if choice.cls is not None:
        plan.class_config = classeffects.class_config(ctx.resolution.entry, choice.cls)
        if ctx.model is None:
            classeffects.report_config_without_model(comp.name, ctx.runtime_spec, choice.cls, ctx.report)
    if storage.node_selector_key and ctx.options.model_node_selector:
        plan.model_ready = {storage.node_selector_key: "Ready"}
    plan.runtime_node_selector = ctx.runtime_spec.get("nodeSelector") or {}
    plan.isvc_component = comp.isvc
    return plan


def _no_container(ctx: IsvcContext, component: str) -> str:
    """What "no containers found" should add: the runtime the component's pod comes from and the
    ``<component>Config`` it lacks, and the fix (api.md §8.7)."""
    runtime, config = ctx.resolution.runtime, f"{component}Config"
    chosen = " (auto-selected)" if ctx.resolution.auto_selected else ""
    if ctx.runtime_spec.get(config):
        return (f"{runtime.kind} {runtime.name}{chosen} has a {config} with no runner, and spec.{component} sets "
                f"no runner; give one a runner with an image")
    fix = f"name a runtime with a {config} in spec.runtime.name, " if component != "engine" else ""
    return (f"{runtime.kind} {runtime.name}{chosen} has no {config}, and spec.{component} sets no runner; {fix}"
            f"set spec.{component}.runner" + (f", or remove spec.{component}" if component != "engine" else ""))


def _runtime_ref(ctx: IsvcContext) -> str:
    return rt_ref(ctx.resolution.runtime)


def _overlays(ctx: IsvcContext) -> list:
    found = []
    for i, ref in enumerate((ctx.isvc.spec.get("model") or {}).get("overlays") or []):
        name = ref.get("name") if isinstance(ref, dict) else None
        kind = (ref.get("kind") if isinstance(ref, dict) else None) or "ClusterBaseModel"
        model = (ctx.inputs.models.get((ctx.isvc.namespace, name)) if kind == "BaseModel"
                 else ctx.inputs.cluster_models.get(name))
        if model is None or model.spec.get("disabled") is True:
            state = "not in the inputs" if model is None else "disabled"
            ctx.report.warn(f"overlay {kind} {name} in spec.model.overlays[{i}] is {state}; it is skipped",
                            code="overlay-skipped")
            continue
        if ctx.facts is not None and not any(m is model for m in ctx.facts.models):
            ctx.facts.models.append(model)
        found.append(overlay_storage(model, ctx.isvc.namespace, _storage(ctx, model, f"model-overlay-{model.name}")))
    return found


# ---------------------------------------------------------------- AutoscalerPolicy (render.md §9.2 row 2)

def _policy(ctx: IsvcContext, comp: Component, low: int, high: int):
    """What renders the component's ``autoscalerPolicyRef``, after the webhook's checks of the ref; None without a
    ref, or where it is inert (a MultiNode component, an inline block that outranks it)."""
    ref = comp.isvc.get("autoscalerPolicyRef")
    if ref is None:
        return None
    autoscaler_policy.check_ref(comp.name, ref, bool(ctx.inputs.autoscaler_policies))
    path = f"spec.{comp.name}.autoscalerPolicyRef"
    if comp.mode == "MultiNode":
        ctx.report.warn(f"{comp.name} is MultiNode: {path} is inert (OME does not autoscale a LeaderWorkerSet)",
                        code="autoscaler-policy-inert")
        return None
    if comp.isvc.get("autoscaler") is not None:
        ctx.report.info(f'{path} "{ref["name"]}" is shadowed: the inline autoscaler block outranks it',
                        code="autoscaler-policy-shadowed")
        return None
    return lambda: _policy_block(ctx, comp.name, ref["name"], low, high)


def _policy_block(ctx: IsvcContext, component: str, name: str, low: int, high: int) -> dict:
    isvc = ctx.isvc
    policy = ctx.inputs.autoscaler_policies.get((isvc.namespace, name))
    field = f"spec.{component}.autoscalerPolicyRef.name"
    if policy is None:
        guess = did_you_mean(name, lambda: [n for ns, n in ctx.inputs.autoscaler_policies if ns == isvc.namespace],
                             len(ctx.inputs.autoscaler_policies), ctx.inputs)
        raise OmeError(f'{component}: PolicyNotFound: AutoscalerPolicy "{name}" not found in namespace '
                       f"{isvc.namespace}; OME would keep the {component}'s last autoscaler until it exists, which a "
                       f"render cannot know{guess}", field=field)
    context = autoscaler_policy.Context(isvc.namespace, isvc.name, component, low, high, f"{isvc.name}-{component}")
    charge_copy(count_values(policy.spec), str(policy.ref), "make the AutoscalerPolicy smaller",
                field)  # each component copies the policy, as runtimes are
    try:
        autoscaler_policy.validate_policy(policy.spec)
        block = autoscaler_policy.render_block(name, policy.spec, context, Bindings(ctx.inputs.cluster_config))
    except BudgetError:
        raise
    except OmeError as err:
        text = err.text if err.text.startswith(f"policy {name}: ") else f"policy {name}: {err.text}"
        raise OmeError(f"{component}: PolicyInvalid: {text}", field=field) from None
    # the rendered block meets the checks of an inline one (render/validate.go ValidateSpec's note)
    check_autoscaler_block(component, block, low, f"policy {name}: spec")
    return block


# ---------------------------------------------------------------- external Service (render.md §13)

def _external_service(ctx: IsvcContext, first_ports: dict[str, int]) -> dict | None:
    isvc = ctx.isvc
    if not external_service_wanted(isvc, ctx.inputs.cluster_config.ingress):
        return None
    annotations = isvc.metadata.get("annotations") or {}
    fronted = "router" if "router" in first_ports else "engine"
    kind = workloads.service_type(annotations, ctx.report)
    return workloads.external_service(isvc.name, isvc.namespace, external_service_annotations(isvc), kind, fronted,
                                      first_ports[fronted])
