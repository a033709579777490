"""BenchmarkJobs → the Jobs OME's benchmark controller creates (docs/spec/benchmarks.md).

Pure: :func:`render_benchmarks` takes the input's BenchmarkJobs and what its InferenceServices rendered, and returns
each Job with the BenchmarkJob it came from, and an error per BenchmarkJob that OME would refuse or never run.
"""
from __future__ import annotations

from omerender.errors import Message, OmeError
from omerender.kube.apirules import check_object
from omerender.kube.podrules import pod_refusal
from omerender.kube.shapes import check_pod
from ..budget import BudgetError, charge_copy, text_values
from ..load import Inputs, Obj
from . import storage
from .endpoint import Rendered, Target, isvc_target, url_target
from .job import build_job
from .validation import validate

__all__ = ["Rendered", "render_benchmarks"]


def render_benchmarks(inputs: Inputs, rendered: dict[tuple[str, str], Rendered], model_selector: bool
                      ) -> tuple[list[tuple[dict, Obj]], list[OmeError], list[Message]]:
    jobs, errors, messages = [], [], []
    for bench in sorted(inputs.benchmarks, key=lambda o: (o.namespace, o.name)):
        try:
            job = _render_one(bench, inputs, rendered, model_selector, messages)
        except BudgetError as err:
            errors.append(err.located(bench.ref, bench.file))
            break   # a limit of the whole render, as for InferenceServices
        except OmeError as err:
            errors.append(err.located(bench.ref, bench.file))
            continue
        if job is not None:
            jobs.append((job, bench))
    return jobs, errors, messages


def _render_one(bench: Obj, inputs: Inputs, rendered: dict, model_selector: bool,
                messages: list[Message]) -> dict | None:
    validate(bench.spec)
    endpoint = bench.spec["endpoint"]
    if endpoint.get("endpoint") is not None:
        target: Target | None = url_target(endpoint["endpoint"])
    else:
        target = isvc_target(endpoint["inferenceService"], rendered, inputs.cluster_config.ingress.url_scheme, inputs)
        if target is None:
            return None   # the InferenceService's own error says why it did not render
        for warning in target.warnings:
            messages.append(Message("warning", warning, bench.ref, bench.file, "spec.endpoint",
                                    code="benchmark-endpoint"))
    location = bench.spec["outputLocation"]
    try:
        output = storage.output(location["storageUri"], location.get("parameters") or {})
        storage.check_refused_by_api_server(location["storageUri"], output)
    except storage.JobRefusedError as err:
        raise OmeError(str(err), field="spec.outputLocation.storageUri") from None
    except storage.StorageURIError as err:
        raise OmeError(f"{err}: OME accepts this URI but can't write results to it, and creates no Job; use "
                       f"oci://, s3://, az://, gs://, github:// or pvc://", field="spec.outputLocation.storageUri") \
            from None
    for key, flag, env in storage.credentials_in_args(location["storageUri"], location.get("parameters") or {}):
        messages.append(Message(
            "warning", f"spec.outputLocation.parameters.{key} is a credential, and OME writes it into the Job's "
            f"arguments ({flag}), where anyone who can read the Job or its pods reads it: keep it in a Secret (e.g. "
            f"{_secret_name(bench.name)}, key {env}), give it to genai-bench as the environment variable {env} "
            f"(spec.podOverride.env: name {env}, valueFrom.secretKeyRef {{name: {_secret_name(bench.name)}, key: "
            f"{env}}}), and remove the parameter", bench.ref, bench.file, f"spec.outputLocation.parameters.{key}",
            code="benchmark-credentials-in-args"))
    config = inputs.benchmark_config
    if not (bench.spec.get("podOverride") or {}).get("image") and not config.image:
        raise OmeError(f"no genai-bench image: {config.source} sets no podConfig.image; set "
                       f"spec.podOverride.image", field="spec.podOverride.image")
    # each Job copies the InferenceService's URL and model name, and the model's path four times (volume, mount,
    # MODEL_PATH, --model-tokenizer): charged as runtimes are, so many Jobs of one long path can't multiply it
    charge_copy(text_values(target.api_base) + text_values(target.model_name) + 4 * text_values(target.tokenizer),
                str(bench.ref), "render fewer BenchmarkJobs at a time", "spec.endpoint")
    job = build_job(bench, target, output, config, model_selector)
    check_job_pod(job)
    return job


def _secret_name(bench: str) -> str:
    """The Secret the credentials warning suggests: ``<BenchmarkJob>-output-credentials``, cut to a valid name."""
    suffix = "-output-credentials"
    return f"{bench[:253 - len(suffix)].rstrip('.-')}{suffix}"


def check_job_pod(job: dict) -> None:
    """What the API server refuses in the Job OME writes (the BenchmarkJob would stay Pending): a label or a
    container named after a BenchmarkJob whose name is too long or no DNS label, a volume named after such a model,
    the pod rules (kube.podrules: a request above its limit, a ``podOverride`` mount of no volume, two mounts at one
    path) (v1.3 docs concepts/serving/benchmarks.md, "How a benchmark runs"). Called again after every step that
    changes the Job's pod (the weights' claim, under --model-weights download)."""
    path = "spec.template.spec"
    where = f"rendered Job {job['metadata']['namespace']}/{job['metadata']['name']}"
    try:
        check_object(job)
        check_pod(job["spec"]["template"]["spec"], path)
    except OmeError as err:
        hint = (" (OME names the container after the BenchmarkJob, or genai-bench when spec.podOverride is set: "
                "rename the BenchmarkJob, or set spec.podOverride)" if ".containers[0].name:" in err.text
                else " (the label benchmark carries the BenchmarkJob's name: shorten it)"
                if "labels.benchmark:" in err.text else "")
        raise OmeError(f"{where}: {err.text}{hint}") from None
    found = pod_refusal(job["spec"]["template"]["spec"])
    if found is not None:
        field, hint = _override_source(found)
        raise OmeError(f"{where}: {path}.{found.text}{hint}", field=field)


def _override_source(found) -> tuple[str | None, str]:
    """The podOverride field a refusal of the Job's pod comes from, and the fix."""
    if ".resources" in found.path:
        return "spec.podOverride.resources", "; raise the limit too (spec.podOverride.resources)"
    if ".volumeMounts[" in found.path and found.path.endswith(".name"):
        return "spec.podOverride.volumeMounts", " (add the volume in spec.podOverride.volumes)"
    if ".volumeMounts[" in found.path:
        return "spec.podOverride.volumeMounts", " (spec.podOverride.volumeMounts)"
    if found.path.startswith("volumes["):
        return "spec.podOverride.volumes", " (spec.podOverride.volumes)"
    return None, ""
