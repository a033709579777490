"""The code of every warning and info: a short stable name printed with the message (``... [code]``), that
``--allow CODE`` (KRM ``spec.allow``, Argo CD ``allow``) names to accept a warning under ``--strict``.

Adding a warning is one entry here and ``code="..."`` at its call site; tests/test_codes.py checks that every
``warn``/``info``/``Message`` call names a code of this table, and ``scripts/message_codes.py`` writes the
reference table ``docs/reference/message-codes.md`` from it.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass


@dataclass(frozen=True)
class Code:
    name: str
    severity: str  # "warning" or "info" (the count line of more-messages stands for either)
    meaning: str
    fix: str


def _w(name: str, meaning: str, fix: str) -> Code:
    return Code(name, "warning", meaning, fix)


def _i(name: str, meaning: str, fix: str) -> Code:
    return Code(name, "info", meaning, fix)


_ALL = [
    # Model weights (docs/how-to/model-weights.md)
    _w("weights-size-guessed", "Under --model-weights download, the weights claim's size is estimated from "
       "modelParameterSize, or is the default, since the model says nothing of its files' size.",
       "Set the annotation omerender.io/weights-size on the model to the size of its files."),
    _w("weights-single-node-claim", "A ReadWriteOnce (or ReadWriteOncePod) weights claim is mounted by pods that may "
       "run on several nodes at once; pods away from the claim's node cannot start.",
       "Use --weights-access-mode ReadWriteMany with a storage class that supports it, or keep the pods on one node."),
    _w("weights-placement-differs", "Under --model-weights download, the pods that mount one weights claim are placed "
       "differently (node selector, node affinity or tolerations: two accelerator classes in one namespace); the "
       "download Job runs where the first of them does, and a WaitForFirstConsumer claim binds there.",
       "Give the InferenceServices placed elsewhere a namespace of their own (a claim each), or place the download "
       "Jobs with --weights-node-selector and --weights-toleration on nodes all of them reach."),
    # Inputs OME reads otherwise than they look (api.md §8.11-8.13)
    _w("inert-field", "A v1.3 field that OME's controller acts on and a render cannot (an InferenceService's "
       "rollout, placement or routing; the OMENative topology fields of an InferenceService's engine or decoder, or "
       "of a runtime's engineConfig or decoderConfig): the rendered objects ignore it.",
       "Remove the field, or run OME's controller for what it does."),
    _w("misread-annotation", "An annotation value OME reads otherwise than it looks: an on/off key (ingress, pod "
       "webhook, merged weights, runtime profile) whose value is not exactly \"true\" and so is off, or an "
       "ome.io/ingress-gateway that is not <namespace>/<name>.",
       "Write the value as the warning says."),
    _w("unknown-deployment-mode", "An ome.io/deploymentMode value that is not RawDeployment, OMENative, MultiNode or "
       "VirtualDeployment (compared exactly); OME skips it, as if the annotation were absent.",
       "Write one of the four modes, spelled as the warning suggests, or delete the annotation."),
    _i("older-ome-configmap", "The cluster's inferenceservice-config lacks keys OME v1.3's Helm chart writes (an older "
       "OME's ConfigMap); OME v1.3 uses its defaults for them, as the render does.",
       "Add the keys with the values you mean, or accept the defaults."),
    _i("chart-defaults", "The render has no inferenceservice-config ConfigMap (none among the inputs, no "
       "--cluster-config): OME v1.3's Helm chart defaults apply, among them no Ingress or route for any "
       "InferenceService.", "Give the cluster's ConfigMap (kubectl get configmap inferenceservice-config -n ome -o "
       "yaml) as --cluster-config FILE or among the inputs, or accept the chart's defaults."),
    # Selection (selection.md)
    _w("auto-selected-runtime", "The InferenceService names no runtime; OME's webhook chooses one by the model, "
       "as omerender did.", "Name the runtime in spec.runtime.name, or accept the choice with "
       "--allow auto-selected-runtime."),
    _w("runtime-unsupported-model", "The named runtime does not declare support for the model; OME proceeds "
       "because the runtime was named.", "Name a runtime that lists the model's format, or add the format to the "
       "runtime's supportedModelFormats."),
    _w("basemodel-shadows-cluster", "A BaseModel and a ClusterBaseModel share a name; OME serves the BaseModel.",
       "Rename one of them, or remove the one you do not mean."),
    _w("invalid-parameter-count", "A parameter count (modelParameterSize or a runtime's size range) does not "
       "parse; OME reads it as 0.", "Write a count such as 8B, 70B or 7.5B."),
    # Runtimes and their inheritance
    _w("removed-field", "A field OME v1.2 read was removed in OME v1.3 and is ignored.",
       "Delete the field; its v1.3 replacement is named in docs/spec/render.md."),
    _w("runtime-pod-fields-ignored", "Pod fields at the top of a runtime's spec are not used by OME v1.3.",
       "Move them into engineConfig, decoderConfig or routerConfig."),
    _w("predictor-ignored", "spec.predictor is ignored because spec.engine is set.", "Delete spec.predictor."),
    _i("implicit-multinode", "A component with a leader and a worker and no deployment mode: OME v1.3 would run "
       "it as OMENative, omerender renders a LeaderWorkerSet.", "Set the ome.io/deploymentMode annotation."),
    _w("raw-deployment-leader-ignored", "A RawDeployment component's leader and worker are ignored.",
       "Delete them, or use the MultiNode deployment mode."),
    _w("inherit-shadowed-parent", "A runtime inherits from a namespaced runtime that shadows a "
       "ClusterServingRuntime of the same name.", "Rename the namespaced runtime, or name the parent you mean."),
    _w("auto-selected-inherit-ignored", "An auto-selected runtime is rendered from its own spec; its "
       "ome.io/inherit-from parent is not applied.", "Name the runtime in spec.runtime.name."),
    _i("virtual-deployment", "ome.io/deploymentMode is VirtualDeployment: nothing is rendered.",
       "None needed; remove the annotation to render the InferenceService."),
    _w("overlay-skipped", "A model overlay named in spec.model.overlays is missing or disabled and is skipped.",
       "Add the overlay model to the input, enable it, or drop it from the list."),
    # Workloads
    _w("multinode-autoscaler-ignored", "A MultiNode component's autoscaler is inert: OME does not autoscale a "
       "LeaderWorkerSet.", "Delete the autoscaler, or use another deployment mode."),
    _w("multinode-budget-ignored", "A MultiNode component's minAvailable/maxUnavailable is ignored: OME makes no "
       "PodDisruptionBudget for a LeaderWorkerSet.", "Delete the field."),
    _w("shared-leader-service", "Several LeaderWorkerSets in one namespace: each leader Service selects the "
       "leaders of all of them.", "Put each MultiNode InferenceService in its own namespace."),
    _w("invalid-service-type", "The ome.io/service-type annotation is not ClusterIP, NodePort or LoadBalancer; "
       "ClusterIP is used.", "Write one of ClusterIP, NodePort or LoadBalancer."),
    _w("service-account-replaced", "A component's serviceAccountName is replaced by the one the router needs.",
       "Delete serviceAccountName from the component."),
    _w("preset-image", "A container runs the latest image of the sglang PD preset.", "Set the image explicitly."),
    _w("model-path-unset", "A runner refers to $(MODEL_PATH) but MODEL_PATH is not set; it gets the literal "
       "text.", "Give the InferenceService a model, or set MODEL_PATH in the runner's env."),
    _w("parallelism-size-unset", "A runner refers to $(PARALLELISM_SIZE) but PARALLELISM_SIZE is not set.",
       "Set PARALLELISM_SIZE in the runner's env, or stop referring to it."),
    _i("autoscaler-policy-shadowed", "An AutoscalerPolicy reference is shadowed by the inline autoscaler block.",
       "Delete one of the two."),
    _w("autoscaler-policy-inert", "A MultiNode component's AutoscalerPolicy reference is inert.",
       "Delete the reference, or use another deployment mode."),
    # Pod monitoring
    _w("pod-monitor-endpoint-skipped", "An entry of the extra metrics endpoints annotation is not "
       "<port-name>:/<path>; OME skips it.", "Write each entry as <port-name>:/<path>."),
    _i("pod-monitor-native-only", "The cluster's podMonitor settings apply only to OMENative components in OME "
       "v1.3.", "None needed."),
    # Accelerators
    _w("override-constraints-ignored", "acceleratorOverride.constraints has no effect.",
       "Move the constraints to acceleratorSelector.constraints."),
    _w("accelerator-class-not-listed", "An accelerator class is asked for but the runtime lists no "
       "acceleratorClasses, so OME applies none.", "List the class in the runtime's "
       "acceleratorRequirements.acceleratorClasses."),
    _i("no-accelerator-class", "No accelerator class applies to the component.", "None needed."),
    _i("accelerator-class", "The accelerator class chosen for a component, and from where.", "None needed."),
    _i("accelerator-class-missing", "An accelerator class the runtime lists is not in the input and is skipped.",
       "Add the AcceleratorClass to the input if the cluster has it."),
    _w("bestfit-no-constraints", "BestFit with several candidates and no constraints: OME does not reconcile "
       "this.", "Set acceleratorSelector.constraints, or list one class."),
    _w("runtime-accelerator-override", "acceleratorOverride has no effect in a runtime.",
       "Move it to the InferenceService."),
    _w("accelerator-config-unknown-class", "A supportedModelFormats acceleratorConfig key names no class the "
       "runtime lists.", "List the class in acceleratorRequirements.acceleratorClasses, or fix the key."),
    _w("inherited-accelerator-class-missing", "An accelerator class inherited from a parent runtime is not in "
       "the input.", "Add the AcceleratorClass to the input."),
    _i("accelerator-config-not-applied", "A class's acceleratorConfig is not applied: the InferenceService has "
       "no spec.model.", "None needed."),
    _w("environment-override-valuefrom", "An accelerator class's environmentOverride replaces a variable that "
       "used valueFrom.", "Drop the variable from the override or from the runner."),
    _w("accelerator-node-selector-override", "An accelerator class's nodeSelector replaces one set on the "
       "component.", "Drop the key from the component's nodeSelector."),
    _w("gpus-exceed-class", "A runner asks for more GPUs than its accelerator class has.",
       "Lower the runner's resources or choose a larger class."),
    _w("parallelism-gpu-mismatch", "The runner's parallelism flags (SGLang's or vLLM's tensor, pipeline and data "
       "parallel sizes) use fewer GPUs than its pod, or its LeaderWorkerSet's pods together, hold: the rest sit idle. "
       "Flags that need more GPUs than there are are an error.",
       "Raise the flags to the GPUs there are, or give the pods fewer GPUs."),
    _w("accelerator-class-gpus", "An accelerator class's resources change a component's GPUs per pod from the "
       "runtime's own request, and with them PARALLELISM_SIZE (the class's quantity is per pod, not per "
       "accelerator).", "Give the class the runtime's GPU count, or set resources on the InferenceService's runner."),
    # Pinning (ome.lock)
    _w("runtime-drifted", "The runtime's live spec differs from the pinned revision.",
       "Bump the ome.io/runtime-sync annotation to advance, then run omerender lock update."),
    _w("runtime-drifted-missing", "The pinned runtime is not in the input; rendered from the pinned revision.",
       "Add the runtime back, or run omerender lock update."),
    _w("runtime-disabled-pinned", "The runtime is disabled; rendered from the pinned revision.",
       "Enable the runtime, or run omerender lock update."),
    _w("lock-runtime-moved", "spec.runtime now resolves to another runtime than the lock pins.",
       "Run omerender lock update."),
    _w("autosync-unpinned", "autoSync is false but the lock has no pinned revision.", "Run omerender lock update."),
    _w("runtime-sync-new", "A new ome.io/runtime-sync value is not yet in the lock.", "Run omerender lock update."),
    _w("auto-selected-runtime-changed", "The auto-selected runtime changed since the lock was written.",
       "Run omerender lock update, or name the runtime."),
    _i("runtime-spec-changed", "The runtime spec changed since the lock was written.", "None needed."),
    _i("pinned", "The InferenceService is pinned to a revision.", "None needed."),
    _i("runtime-sync-held", "A new ome.io/runtime-sync value held the pin: the spec has not changed.",
       "None needed."),
    _i("pin-advanced", "lock update advanced the pin to a new revision.", "None needed."),
    # Loading the input
    _w("configmap-name-near-miss", "A ConfigMap looks like OME's configuration but is not named or versioned as "
       "OME reads it.", "Rename it as the message says."),
    _w("foreign-api-group", "An object of an OME kind with another apiVersion is passed through unrendered.",
       "Use apiVersion: ome.io/v1beta1."),
    _w("no-schema", "omerender validate knows no schema of this object's kind (neither a built-in kind of the "
       "Kubernetes version, nor a CRD it ships or --schema-location gives): the object is not validated.",
       "Give its CustomResourceDefinition with --schema-location, or --allow no-schema where that is meant."),
    _i("rendered-dir-skipped", "A directory written by omerender render --output-dir is skipped as input.",
       "None needed."),
    # The cluster configuration
    _w("configmap-not-used", "Another ConfigMap of the same name is the one OME reads.",
       "Remove the extra ConfigMap."),
    _w("configmap-namespace", "The configuration ConfigMap is not in the namespace OME reads it from.",
       "Move it to the namespace named."),
    _w("duplicate-field", "A configuration field is given more than once; OME uses the last one.",
       "Keep one."),
    _w("unknown-field", "A configuration field OME does not read; it is ignored.",
       "Fix the spelling (the message suggests the near miss) or delete the field."),
    _w("field-case", "A configuration field is read ignoring case.", "Write the field as the message says."),
    _w("config-value", "A configuration value OME reads differently from its look.",
       "Write the value as the message says."),
    _w("unknown-config-key", "A data key of the configuration that OME does not read.", "Fix the key's spelling."),
    # Ingress
    _w("per-isvc-routes-overlap", "With a hostname per InferenceService, routes of several components match the "
       "same host and path.", "Keep the InferenceService to one component, or turn perISVCSubdomain off."),
    _w("traffic-intent", "Traffic intent makes OME write a BackendTrafficPolicy omerender does not render.",
       "Remove the intent, or write the policy yourself."),
    _w("unknown-annotation", "An annotation key under ome.io/, rdma.ome.io/, runtime.ome.io/ or models.ome.io/ on an "
       "InferenceService, its components, a runtime or a model that OME v1.3 does not read, with no effect.",
       "Fix the spelling (the message suggests the near miss) or delete it."),
    _w("invalid-additional-gateways", "The additional gateways annotation is not a valid JSON array; OME ignores "
       "it.", "Write a JSON array as the message shows."),
    _w("unknown-gateway-key", "An additional gateway entry has a key OME ignores.", "Fix or delete the key."),
    # Benchmarks
    _w("benchmark-endpoint", "A BenchmarkJob's endpoint does something its author may not expect.",
       "Read the message and adjust spec.endpoint."),
    _w("benchmark-credentials-in-args", "A BenchmarkJob's output parameter is a credential, which OME writes into "
       "the Job's arguments, readable by anyone who can read the Job.", "Keep it in a Secret, pass it through "
       "spec.podOverride.env as the environment variable the message names, and remove the parameter."),
    # GitOps (build, the KRM function)
    _w("kustomize-renames", "The kustomization renames objects and has no OMERender transformer; references "
       "inside InferenceServices keep old names.", "List omerender last under transformers:."),
    _w("isvc-not-transformed", "An InferenceService was not rendered: no OMERender transformer saw it.",
       "List omerender under transformers: of the kustomization that holds it."),
    _w("relayed-warning", "A warning the KRM function printed under kustomize without a code.",
       "Read the message."),
    _i("build-path", "build --verbose: which path the build takes (kustomize piped into the render, or the "
       "omerender function inside kustomize), and why.", "None needed."),
    _i("waiting-for-lock", "Another omerender render is writing the same --output-dir; this one waits for it.",
       "None needed."),
    _w("deprecated-option", "An option's old spelling, which goes away in the next release.",
       "Use the spelling the message names."),
    # model-info
    _i("skip-config-parsing", "A model annotated ome.oracle.com/skip-config-parsing is skipped.", "None needed."),
    _i("model-info-added", "Fields model-info added to a model.", "None needed."),
    _i("model-info-complete", "Every field OME's agent sets is already set.", "None needed."),
    _w("weights-size-not-added", "model-info --update could not add the omerender.io/weights-size annotation: the "
       "model's metadata or metadata.annotations is not a block mapping it can extend.",
       "Add the annotation by hand, with the size the message names."),
    _w("mistral-embedding", "OME records modelCapabilities EMBEDDING for every mistral model.",
       "Set spec.modelCapabilities by hand for a chat model."),
    _w("model-index-preferred", "A model_index.json below the model directory is read before config.json.",
       "Move it out of the model directory if it is not this model's."),
    _i("config-found-by-walk", "The model's config was found by walking its directory, as OME's agent does.",
       "None needed."),
    _w("model-size-estimated", "modelParameterSize is an estimate.", "Point SOURCE at the *.safetensors files."),
    _w("model-size-unknown", "modelParameterSize is left out: there is no estimate for the model type.",
       "Point SOURCE at the *.safetensors files or set it by hand."),
    # The report itself
    Code("more-messages", "warning, info",
         "More messages about one object than are printed; the count stands for them.",
         "Fix the ones printed, then run again."),
]

CODES: dict[str, Code] = {code.name: code for code in _ALL}
assert len(CODES) == len(_ALL), "a code is listed twice"


def unknown_code(name: str, where: str) -> str | None:
    """The error text for a code ``where`` names that is not in the table (with the near miss); None if known."""
    if name in CODES:
        return None
    near = difflib.get_close_matches(name[:MAX_SHOWN], sorted(CODES), n=1, cutoff=0.6)
    hint = f'did you mean "{near[0]}"?' if near else "docs/reference/message-codes.md lists the codes"
    return f'{where}: unknown message code "{_shown(name)}"; {hint}'


MAX_SHOWN = 100  # characters of a given value an error quotes


def _shown(value: str) -> str:
    """``value`` as an error quotes it: on one line (every character but printable ASCII and letters escaped, so
    no line break can start a forged ``error:`` line or a ``::`` workflow command) and at most :data:`MAX_SHOWN`
    characters of it."""
    text = value.encode("unicode_escape").decode("ascii")
    return text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN] + f"… ({len(value):,} characters)"


def parse_allow(values, where: str) -> tuple[frozenset[str], list[str]]:
    """The codes of ``allow`` values (each a code or a comma-separated list of them) and the error text of the
    first unknown one (none when all are known)."""
    codes = [code.strip() for value in values for code in str(value).split(",") if code.strip()]
    first = next((text for text in (unknown_code(code, where) for code in codes) if text), None)
    return frozenset(codes), [first] if first else []  # the first one only: its near miss costs a comparison
