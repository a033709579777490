"""OME's own samples (tests/data/ome/samples, api.md §9.9) rendered with the catalog, and the checks a cluster
without OME's controller, webhook and agent needs the output to pass.

One render per sample file, in-process through the CLI (``render -``), so each outcome is what a user sees and
belongs to one file. What a sample renders with:

- the sample file's own text, unchanged (its Namespace objects included);
- for each InferenceService in it, the catalog runtime it names; or, when it names none, every catalog runtime
  that declares the model's architecture (selection can pick no other, api.md §2.3);
- the catalog model it names, completed from a runtime as the model agent would (api.md §9.5, ``completed_model``):
  from the runtime it names, else from the runtime the catalog pairs with the model (api.md §9.4). A model the
  catalog pairs with no runtime stays as the catalog has it, without the agent's metadata.

Four runtime names occur in two catalog files (api.md §9.1); the one OME's ``runtimes/kustomization.yaml`` lists is
used (the first file in ``runtime_files()`` order when it lists neither).

Every sample that renders today must also fit a cluster with nothing of OME once issue 31 is in; the sweep takes
render flags (``failures_on_a_cluster_without_ome`` returns what is wrong, file by file)::

    assert_samples_fit_a_cluster_without_ome("--model-weights", "download")
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache

import jsonschema
import yaml

from catalog import completed_model, load_runtime, models, paired_model_name, runtime_files
from conftest import CATALOG, ROOT, Run, run_cli, validate_k8s

SAMPLES = CATALOG / "samples"
EXPECTED = ROOT / "tests" / "data" / "samples-expected.yaml"
RENDERS = "renders"

# Kubernetes' own API groups (Kubernetes 1.30 API reference); "" is the core group.
BUILT_IN_GROUPS = frozenset({
    "", "apps", "batch", "autoscaling", "policy", "networking.k8s.io", "rbac.authorization.k8s.io",
    "storage.k8s.io", "scheduling.k8s.io", "coordination.k8s.io", "discovery.k8s.io", "node.k8s.io",
    "admissionregistration.k8s.io", "apiextensions.k8s.io", "certificates.k8s.io", "events.k8s.io",
    "flowcontrol.apiserver.k8s.io", "apiregistration.k8s.io", "resource.k8s.io"})
# The add-ons a cluster without OME may run (issue 31): LeaderWorkerSet, KEDA, Gateway API, Envoy Gateway and
# the Prometheus Operator.
ADD_ON_GROUPS = frozenset({"leaderworkerset.x-k8s.io", "keda.sh", "gateway.networking.k8s.io",
                           "gateway.envoyproxy.io", "monitoring.coreos.com"})
AGENT_MODE_KINDS = frozenset({("ome.io", "BaseModel"), ("ome.io", "ClusterBaseModel")})
MODEL_LABEL_PREFIX = "models.ome.io/"


# --- the samples and what they render with --------------------------------------------------------------------

def sample_files() -> tuple[str, ...]:
    """Every sample file, relative to tests/data/ome/samples (``isvc/meta/llama-3-1-8b-instruct.yaml``)."""
    return tuple(sorted(p.relative_to(SAMPLES).as_posix() for p in SAMPLES.rglob("*.yaml")))


@lru_cache(maxsize=None)
def catalog_runtimes() -> dict[str, dict]:
    """Catalog runtimes by name; of two files with one name, the one OME's runtimes/kustomization.yaml installs,
    else the first."""
    listed = yaml.safe_load((CATALOG / "runtimes" / "kustomization.yaml").read_text())["resources"]
    installed = {CATALOG / "runtimes" / rel for rel in listed}
    chosen: dict[str, tuple[bool, dict]] = {}
    for path in runtime_files():
        runtime = load_runtime(path)
        name = runtime["metadata"]["name"]
        if name not in chosen or (path in installed and not chosen[name][0]):
            chosen[name] = (path in installed, runtime)
    return {name: runtime for name, (_, runtime) in chosen.items()}


@lru_cache(maxsize=None)
def _paired_runtimes() -> dict[str, tuple[dict, ...]]:
    """Model name -> the catalog runtimes paired with it (api.md §9.4), those with an autoSelect entry first."""
    pairs: dict[str, list[dict]] = {}
    for runtime in catalog_runtimes().values():
        name = paired_model_name(runtime)
        if name:
            pairs.setdefault(name, []).append(runtime)
    return {name: tuple(sorted(found, key=lambda r: not _auto_selectable(r))) for name, found in pairs.items()}


def _auto_selectable(runtime: dict) -> bool:
    return any(e.get("autoSelect") is True for e in runtime["spec"]["supportedModelFormats"])


def _architectures(runtime: dict) -> set[str | None]:
    return {e.get("modelArchitecture") for e in runtime["spec"]["supportedModelFormats"]}


def catalog_objects(isvc: dict) -> list[dict]:
    """The catalog runtimes and the completed model one sample InferenceService renders with."""
    spec = isvc.get("spec") or {}
    model_name = (spec.get("model") or {}).get("name")
    runtime_name = (spec.get("runtime") or {}).get("name")
    named = catalog_runtimes().get(runtime_name) if runtime_name else None
    model = models().get(model_name) if model_name else None
    source = named or next(iter(_paired_runtimes().get(model_name, ())), None)
    if model is not None and source is not None:
        model = completed_model(model, source)
    if runtime_name:
        runtimes = [named] if named else []
    elif model is None:
        runtimes = []
    else:
        wanted = model["spec"].get("modelArchitecture")
        runtimes = [r for r in catalog_runtimes().values() if _architectures(r) & {wanted, None}]
    return runtimes + ([model] if model is not None else [])


@lru_cache(maxsize=None)
def _sample(rel: str) -> tuple[str, tuple[dict, ...], tuple[dict, ...]]:
    """A sample's text, its own objects, and the catalog objects its InferenceServices use."""
    text = (SAMPLES / rel).read_text()
    own = tuple(d for d in yaml.safe_load_all(text) if isinstance(d, dict))
    extra: list[dict] = []
    for doc in own:
        if doc.get("kind") == "BenchmarkJob":  # the sample InferenceService it benchmarks, with that sample's objects
            ref = ((doc.get("spec") or {}).get("endpoint") or {}).get("inferenceService") or {}
            extra += [o for o in _isvc_samples().get((ref.get("namespace"), ref.get("name")), ()) if o not in extra]
    for doc in own + tuple(extra):
        if doc.get("kind") == "InferenceService":
            extra += [o for o in catalog_objects(doc) if o not in extra]
    return text, own, tuple(extra)


@lru_cache(maxsize=None)
def _isvc_samples() -> dict[tuple[str, str], tuple[dict, ...]]:
    """(namespace, name) of each sample InferenceService -> the objects of its sample file."""
    found = {}
    for rel in sample_files():
        if rel.startswith("isvc/"):
            docs = tuple(d for d in yaml.safe_load_all((SAMPLES / rel).read_text()) if isinstance(d, dict))
            for doc in docs:
                if doc.get("kind") == "InferenceService":
                    meta = doc.get("metadata") or {}
                    found.setdefault((meta.get("namespace"), meta.get("name")), docs)
    return found


@lru_cache(maxsize=None)
def _dumped_runtime(name: str) -> str:
    return yaml.safe_dump(catalog_runtimes()[name], sort_keys=False)


def _dumped(obj: dict) -> str:
    name = obj["metadata"]["name"]
    if obj.get("kind") == "ClusterServingRuntime" and catalog_runtimes().get(name) is obj:
        return _dumped_runtime(name)  # the same runtimes serve many samples: written once
    return yaml.safe_dump(obj, sort_keys=False)


@lru_cache(maxsize=None)
def sample_input(rel: str) -> str:
    """The text ``render -`` reads for one sample: the file unchanged, then what its InferenceServices use."""
    text, _, extra = _sample(rel)
    if not extra:
        return text
    return "---\n".join([text.rstrip() + "\n", *map(_dumped, extra)])


def sample_inputs(rel: str) -> list[dict]:
    """The objects of ``sample_input(rel)``."""
    _, own, extra = _sample(rel)
    return [*own, *extra]


def output_objects(run: Run) -> list[dict]:
    """The objects a run printed (``Run.objects``, read by libyaml: the sweep reads a lot)."""
    return [o for o in yaml.load_all(run.stdout, Loader=yaml.CSafeLoader) if o is not None]


def render_sample(rel: str, *flags: str) -> Run:
    return run_cli("render", "-", *flags, input=sample_input(rel))


def render_samples(*flags: str) -> dict[str, Run]:
    """Every sample rendered with ``flags``: file -> Run."""
    return {rel: render_sample(rel, *flags) for rel in sample_files()}


def outcome(run: Run) -> str:
    """``renders``, or the first error line as printed (less its position)."""
    if run.code == 0:
        return RENDERS
    return next((line for line in run.lines if line.startswith("error: ")), f"exit {run.code}: {run.stderr}")


def expected() -> dict[str, dict]:
    """tests/data/samples-expected.yaml: file -> {outcome, kinds, problems, why} (its header says what each is)."""
    return yaml.safe_load(EXPECTED.read_text())


def observed(runs: dict[str, Run], checks: Iterable[Check] | None = None) -> dict[str, dict]:
    """What each sample does: its outcome; when it renders, its objects (kind, namespace/name) and what the
    checks (default ``AGENT_MODE``) find in them. The form of samples-expected.yaml, less ``why``."""
    checks = AGENT_MODE if checks is None else tuple(checks)
    found = {}
    for rel, run in runs.items():
        entry: dict = {"outcome": outcome(run)}
        if run.code == 0:
            rendered = output_objects(run)
            entry["kinds"] = [_label(o) for o in rendered]
            entry["problems"] = problems(rendered, checks, sample_inputs(rel))
        found[rel] = entry
    return found


HEADER = """\
# What each of OME's samples (tests/data/ome/samples) does when omerender renders it today with the catalog
# (tests/samples.py says with which runtime and model), checked by tests/test_samples.py.
#   outcome:  "renders", or the first error line as printed (less its line:column)
#   kinds:    the rendered objects, in output order
#   problems: what the AGENT_MODE checks of tests/samples.py find in the output (a cluster with OME's CRDs and
#             model agent, no controller, no webhook); each one names a gap of issue 31. When a fix lands the
#             test fails: delete the lines it no longer finds (or rewrite the file, see below) and review the diff.
#   why:      our explanation of a failure or a problem (required there, refused elsewhere)
# Rewrite from a fresh render, keeping the "why" of each file that still fails or has problems:
#   python -c "import sys; sys.path[:0] = ['tests']; import samples; samples.write_expected()"
"""


def expected_text(runs: dict[str, Run]) -> str:
    """samples-expected.yaml as ``runs`` make it, with the ``why`` of each file that still fails or has problems."""
    old = expected() if EXPECTED.is_file() else {}
    entries = observed(runs)
    for rel, entry in entries.items():
        if not entry.get("problems"):
            entry.pop("problems", None)
        if (old.get(rel) or {}).get("why") and (entry["outcome"] != RENDERS or entry.get("problems")):
            entry["why"] = old[rel]["why"]
    return HEADER + yaml.safe_dump(entries, sort_keys=False, width=10**6, allow_unicode=True)


def write_expected(*flags: str) -> None:
    """Rewrite samples-expected.yaml from a fresh render with ``flags`` (``expected_text``)."""
    EXPECTED.write_text(expected_text(render_samples(*flags)))


# --- what a cluster without OME needs of the output -----------------------------------------------------------
# Each check takes the rendered objects and returns one line per problem ([] when the output passes).

def _group(obj: dict) -> str:
    api_version = obj.get("apiVersion") or ""
    return api_version.rpartition("/")[0]


def _label(obj: dict) -> str:
    meta = obj.get("metadata") or {}
    where = f"{meta['namespace']}/" if meta.get("namespace") else ""
    return f"{obj.get('kind')} {where}{meta.get('name')}"


def pod_specs(obj: dict) -> Iterator[tuple[str, dict]]:
    """Each pod spec in a rendered object, with where it is: Pod, any workload's ``spec.template``, a
    LeaderWorkerSet's leader and worker templates, a CronJob's job template."""
    spec = obj.get("spec") or {}
    if obj.get("kind") == "Pod":
        yield "spec", spec
    if isinstance((spec.get("template") or {}).get("spec"), dict):
        yield "spec.template.spec", spec["template"]["spec"]
    job = ((spec.get("jobTemplate") or {}).get("spec") or {}).get("template") or {}
    if isinstance(job.get("spec"), dict):
        yield "spec.jobTemplate.spec.template.spec", job["spec"]
    group = spec.get("leaderWorkerTemplate") or {}
    for key in ("leaderTemplate", "workerTemplate"):
        if isinstance((group.get(key) or {}).get("spec"), dict):
            yield f"spec.leaderWorkerTemplate.{key}.spec", group[key]["spec"]


def _containers(pod: dict) -> Iterator[dict]:
    for key in ("initContainers", "containers", "ephemeralContainers"):
        yield from pod.get(key) or []


def _node_terms(pod: dict) -> Iterator[dict]:
    node = (pod.get("affinity") or {}).get("nodeAffinity") or {}
    yield from (node.get("requiredDuringSchedulingIgnoredDuringExecution") or {}).get("nodeSelectorTerms") or []
    for preferred in node.get("preferredDuringSchedulingIgnoredDuringExecution") or []:
        yield preferred.get("preference") or {}


def model_node_placement(objects: Iterable[dict]) -> list[str]:
    """A ``models.ome.io/`` node selector or node affinity: only OME's model agent labels nodes so."""
    found = []
    for obj in objects:
        for where, pod in pod_specs(obj):
            keys = [k for k in pod.get("nodeSelector") or {} if k.startswith(MODEL_LABEL_PREFIX)]
            found += [f"{_label(obj)}: {where}.nodeSelector selects {k}" for k in keys]
            for term in _node_terms(pod):
                for expr in (term.get("matchExpressions") or []) + (term.get("matchFields") or []):
                    if str(expr.get("key", "")).startswith(MODEL_LABEL_PREFIX):
                        found.append(f"{_label(obj)}: {where}.affinity.nodeAffinity selects {expr['key']}")
    return found


def host_path_volumes(objects: Iterable[dict]) -> list[str]:
    """A hostPath volume, such as the model agent's weights directory; a device (``/dev/...``, the RDMA runtimes'
    ``/dev/infiniband``) is the node's hardware, which every mode needs, and passes."""
    found = []
    for obj in objects:
        for where, pod in pod_specs(obj):
            for volume in pod.get("volumes") or []:
                path = str((volume.get("hostPath") or {}).get("path", ""))
                if "hostPath" in volume and not path.startswith("/dev/"):
                    found.append(f"{_label(obj)}: {where}.volumes {volume.get('name')} is hostPath {path}")
    return found


def mounts_without_volume(objects: Iterable[dict]) -> list[str]:
    """A volumeMount (or volumeDevice) naming no volume of its pod: the API server refuses such a pod."""
    found = []
    for obj in objects:
        for where, pod in pod_specs(obj):
            volumes = {v.get("name") for v in pod.get("volumes") or []}
            for c in _containers(pod):
                for m in (c.get("volumeMounts") or []) + (c.get("volumeDevices") or []):
                    if m.get("name") not in volumes:
                        found.append(f"{_label(obj)}: {where}: container {c.get('name')} mounts {m.get('name')}, "
                                     "which no volume of its pod defines")
    return found


def pvc_model_claims(inputs: Iterable[dict]) -> set[str]:
    """The claim names of the input's ``pvc://`` models (``pvc://[<ns>:]<claim>/<path>``)."""
    claims = set()
    for obj in inputs:
        uri = ((obj.get("spec") or {}).get("storage") or {}).get("storageUri")
        if obj.get("kind") in ("BaseModel", "ClusterBaseModel") and str(uri).startswith("pvc://"):
            claims.add(str(uri)[len("pvc://"):].partition("/")[0].rpartition(":")[2])
    return claims


def unknown_claims(objects: Iterable[dict], pvc_models: Iterable[str] = ()) -> list[str]:
    """A ``claimName`` that is neither a PersistentVolumeClaim of the output (same namespace) nor a pvc:// model's."""
    objects = list(objects)
    claims = {((o.get("metadata") or {}).get("namespace"), (o.get("metadata") or {}).get("name"))
              for o in objects if o.get("kind") == "PersistentVolumeClaim"}
    allowed = set(pvc_models)
    found = []
    for obj in objects:
        namespace = (obj.get("metadata") or {}).get("namespace")
        for where, pod in pod_specs(obj):
            for volume in pod.get("volumes") or []:
                claim = (volume.get("persistentVolumeClaim") or {}).get("claimName")
                if claim is not None and (namespace, claim) not in claims and claim not in allowed:
                    found.append(f"{_label(obj)}: {where}.volumes {volume.get('name')} claims {claim}, "
                                 "which is no PersistentVolumeClaim of the output nor a pvc:// model's")
    return found


def foreign_kinds(objects: Iterable[dict]) -> list[str]:
    """A kind that is neither Kubernetes' own nor one of the add-ons' (so no ``ome.io`` kind)."""
    return [f"{_label(obj)}: {obj.get('apiVersion')} is neither Kubernetes' own nor an add-on's"
            for obj in objects if _group(obj) not in BUILT_IN_GROUPS | ADD_ON_GROUPS]


def kinds_beyond_agent_mode(objects: Iterable[dict]) -> list[str]:
    """As ``foreign_kinds``, but the models' kinds pass: with ``--model-weights agent`` the cluster has OME's CRDs
    and model agent, which reads them (and nothing else of OME: no controller makes a BenchmarkJob's Job)."""
    return foreign_kinds(o for o in objects if (_group(o), o.get("kind")) not in AGENT_MODE_KINDS)


Check = Callable[..., list[str]]
# With OME's CRDs and model agent on the cluster (``--model-weights agent``, today's output): the API server
# accepts every object and pod.
AGENT_MODE: tuple[Check, ...] = (mounts_without_volume, unknown_claims, kinds_beyond_agent_mode)
# With nothing of OME on the cluster (``--model-weights download``): no OME kind at all, no trace of the agent.
NO_OME: tuple[Check, ...] = (mounts_without_volume, unknown_claims, foreign_kinds, model_node_placement,
                             host_path_volumes)


def problems(objects: list[dict], checks: Iterable[Check] = AGENT_MODE, inputs: Iterable[dict] = ()) -> list[str]:
    """Every problem ``checks`` find in ``objects``; ``inputs`` supply the pvc:// models' claims."""
    claims = pvc_model_claims(inputs)
    found = []
    for check in checks:
        found += check(objects, claims) if check is unknown_claims else check(objects)
    return found


def failures_on_a_cluster_without_ome(*flags: str, checks: Iterable[Check] = NO_OME,
                                     files: Iterable[str] | None = None) -> dict[str, list[str]]:
    """Render each sample that renders today (samples-expected.yaml), or each of ``files``, with ``flags``;
    return file -> what is wrong, for the files where something is: a failed render, an object the Kubernetes
    schema refuses, a problem one of ``checks`` finds, a second render that differs."""
    checks = tuple(checks)
    wanted = [rel for rel, entry in expected().items() if entry["outcome"] == RENDERS] if files is None else files
    failures = {}
    for rel in wanted:
        run = render_sample(rel, *flags)
        if run.code != 0:
            failures[rel] = [f"exit {run.code}: {outcome(run)}"]
            continue
        rendered = output_objects(run)
        found = problems(rendered, checks, sample_inputs(rel))
        for obj in rendered:
            if not foreign_kinds([obj]):  # a foreign kind is a problem already, and has no schema here
                try:
                    validate_k8s(obj)
                except jsonschema.ValidationError as error:
                    found.append(f"{_label(obj)}: the schema refuses it: {error.message}")
        if render_sample(rel, *flags).stdout != run.stdout:
            found.append("a second render differs")
        if found:
            failures[rel] = found
    return failures


def assert_samples_fit_a_cluster_without_ome(*flags: str, checks: Iterable[Check] = NO_OME,
                                             files: Iterable[str] | None = None) -> None:
    """``failures_on_a_cluster_without_ome`` finds nothing; after issue 31, with ``"--model-weights", "download"``."""
    failures = failures_on_a_cluster_without_ome(*flags, checks=checks, files=files)
    assert not failures, "\n".join(f"{rel}: {line}" for rel, lines in failures.items() for line in lines)
