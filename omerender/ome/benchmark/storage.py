"""A BenchmarkJob's ``outputLocation``: the URI check of OME's admission webhook, and the genai-bench arguments and
claim mount OME's controller derives from it (benchmarks.md §1, §3).

Facts from OME v1.3's docs (``reference/storage/benchmark-output-storage.md``: URI formats, admission messages,
arguments per backend, the ``..`` check since v1.3) and, where they are silent, OME's Go source
(``pkg/utils/storage/storage.go`` and ``pkg/controller/v1beta1/benchmark/utils/utils.go``, v1.3 and v0.1.5 alike).
"""
from __future__ import annotations

from dataclasses import dataclass

from omerender.gorules.strconv import quote
from omerender.kube.apirules import dns1123_label

PREFIXES = (("oci://", "OCI"), ("pvc://", "PVC"), ("vendor://", "VENDOR"), ("hf://", "HUGGINGFACE"),
            ("s3://", "S3"), ("az://", "AZURE"), ("gs://", "GCS"), ("github://", "GITHUB"), ("local://", "LOCAL"))
# Schemes admission accepts but the controller has no argument builder for (the BenchmarkJob stays Pending).
NOT_WRITABLE = ("VENDOR", "HUGGINGFACE", "LOCAL")
OUTPUT_VOLUME = "benchmark-output-storage"


class StorageURIError(ValueError):
    """OME's text for a URI it refuses."""


class JobRefusedError(ValueError):
    """A URI OME accepts whose Job the API server refuses."""


@dataclass(frozen=True)
class Output:
    """What the controller adds for an output location: container args, and for ``pvc://`` a volume and mount."""

    args: list[str]
    volume: dict | None = None
    mount: dict | None = None


def storage_type(uri: str) -> str:
    for prefix, kind in PREFIXES:
        if uri.startswith(prefix):
            return kind
    raise StorageURIError(f"unknown storage type for URI: {uri}")


def validate_uri(uri: str) -> None:
    """The webhook's ValidateStorageURI: raise :class:`StorageURIError` with OME's reason."""
    kind = storage_type(uri)
    _PARSERS[kind](uri[len(_prefix(kind)):])


def output(uri: str, params: dict) -> Output:
    """The controller's storage args (and claim) for a URI admission accepted; StorageURIError for a scheme
    the controller can't write to, with the text its log shows."""
    kind = storage_type(uri)
    if kind in NOT_WRITABLE:
        raise StorageURIError(f"failed to build storage args: unsupported storage type: {kind}")
    parts = _PARSERS[kind](uri[len(_prefix(kind)):])
    return _BUILDERS[kind](parts, params)


def check_refused_by_api_server(uri: str, output: Output) -> None:
    """Raise :class:`JobRefusedError` for what the controller derives from ``uri`` that the API server refuses in the
    Job (OME accepts the URI and its Job never runs): a ``pvc://`` sub-path that starts with ``/`` becomes an absolute
    ``subPath`` (validateLocalDescendingPath: "must be a relative path"). v1.3's docs
    (reference/storage/benchmark-output-storage.md) list such a URI among those OME can't write to."""
    sub_path = (output.mount or {}).get("subPath", "")
    if sub_path.startswith("/"):
        claim, _, rest = uri[len("pvc://"):].partition("/")
        raise JobRefusedError(
            f"spec.outputLocation.storageUri: {quote(uri)}: the sub-path {quote(sub_path)} is absolute, so OME's Job mounts the claim with subPath "
            f"{quote(sub_path)}, which the API server refuses (volumeMounts[].subPath: Invalid value: "
            f"{quote(sub_path)}: must be a relative path) and the benchmark never runs; write "
            f"{quote('pvc://' + claim + '/' + rest.lstrip('/'))}")


def _prefix(kind: str) -> str:
    return next(p for p, k in PREFIXES if k == kind)


# ---------------------------------------------------------------- parsers (one per scheme)

def _oci(rest: str) -> dict:
    parts = rest.split("/")
    if len(parts) < 6 or parts[0] != "n" or parts[2] != "b" or parts[4] != "o":
        raise StorageURIError("invalid OCI storage URI format. Expected: "
                              "oci://n/{namespace}/b/{bucket}/o/{object_path}")
    return {"namespace": parts[1], "bucket": parts[3], "prefix": "/".join(parts[5:])}


def _pvc(rest: str) -> dict:
    def fail(reason: str) -> StorageURIError:
        return StorageURIError(f"invalid PVC storage URI format: {reason}")

    if not rest:
        raise fail("missing content after prefix")
    first, slash, sub = rest.partition("/")
    if not slash:
        raise fail("missing subpath")
    if ":" in first:
        namespace, _, claim = first.partition(":")
        if not namespace:
            raise fail("empty namespace before colon")
        if not claim:
            raise fail("empty PVC name after colon")
        if ":" in claim:
            raise fail("multiple colons not allowed in namespace:pvc-name")
        if dns1123_label(namespace):
            raise fail(f"invalid namespace {quote(namespace)} (must be lowercase alphanumeric with hyphens, "
                       f"max 63 chars)")
    else:
        claim = first
        if not claim:
            raise fail("missing PVC name")
    if not sub:
        raise fail("missing subpath")
    if ".." in sub.split("/"):   # since v1.3 (benchmark-output-storage.md)
        raise fail("subpath must not contain '..' segments")
    return {"claim": claim, "sub_path": sub}


def _vendor(rest: str) -> dict:
    if not rest:
        raise StorageURIError("invalid vendor storage URI format: missing vendor name")
    parts = rest.split("/", 2)
    if len(parts) < 3 or not all(parts):
        raise StorageURIError("invalid vendor storage URI format. Expected: "
                              "vendor://{vendor-name}/{resource-type}/{resource-path}")
    return {}


def _hf(rest: str) -> dict:
    if not rest:
        raise StorageURIError("invalid Hugging Face storage URI format: missing model ID")
    if not rest.partition("@")[0]:
        raise StorageURIError("invalid Hugging Face storage URI format: model ID cannot be empty")
    return {}


def _s3(rest: str) -> dict:
    if not rest:
        raise StorageURIError("invalid S3 storage URI format: missing bucket name")
    region = ""
    if "@" in rest:
        bucket, _, tail = rest.partition("@")
        region, _, prefix = tail.partition("/")
    else:
        bucket, _, prefix = rest.partition("/")
    if not bucket:
        raise StorageURIError("invalid S3 storage URI format: bucket name cannot be empty")
    return {"bucket": bucket, "prefix": prefix, "region": region}


def _azure(rest: str) -> dict:
    if not rest:
        raise StorageURIError("invalid Azure storage URI format: missing account name")
    endpoint = ".blob.core.windows.net/"
    if endpoint in rest:
        account, _, tail = rest.partition(endpoint)
        container, _, blob = tail.partition("/")
    else:
        parts = rest.split("/", 2)
        if len(parts) < 2:
            raise StorageURIError("invalid Azure storage URI format: missing container name")
        account, container, blob = parts[0], parts[1], parts[2] if len(parts) > 2 else ""
    if not account or not container:
        raise StorageURIError("invalid Azure storage URI format: account name and container name are required")
    return {"account": account, "container": container, "blob": blob}


def _gcs(rest: str) -> dict:
    if not rest:
        raise StorageURIError("invalid GCS storage URI format: missing bucket name")
    bucket, _, obj = rest.partition("/")
    if not bucket:
        raise StorageURIError("invalid GCS storage URI format: bucket name cannot be empty")
    return {"bucket": bucket, "object": obj}


def _github(rest: str) -> dict:
    if not rest:
        raise StorageURIError("invalid GitHub storage URI format: missing owner/repository")
    repo, at, tag = rest.partition("@")
    owner, slash, repository = repo.partition("/")
    if not slash:
        raise StorageURIError("invalid GitHub storage URI format: expected owner/repository")
    if not owner or not repository:
        raise StorageURIError("invalid GitHub storage URI format: owner and repository are required")
    return {"owner": owner, "repository": repository, "tag": tag if at else "latest"}


def _local(rest: str) -> dict:
    if not rest:
        raise StorageURIError("invalid local storage URI format: missing path")
    return {}


_PARSERS = {"OCI": _oci, "PVC": _pvc, "VENDOR": _vendor, "HUGGINGFACE": _hf, "S3": _s3, "AZURE": _azure,
            "GCS": _gcs, "GITHUB": _github, "LOCAL": _local}


# ---------------------------------------------------------------- genai-bench arguments per backend

def _param(params: dict, key: str, flag: str) -> list[str]:
    return [flag, params[key]] if key in params else []


def _oci_args(parts: dict, params: dict) -> Output:
    args = ["--upload-results", "--namespace", parts["namespace"], "--storage-bucket", parts["bucket"],
            "--storage-prefix", parts["prefix"]]
    for key, flag in (("auth", "--auth"), ("config_file", "--config-file"), ("profile", "--profile"),
                      ("security_token", "--security-token"), ("region", "--region")):
        args += _param(params, key, flag)
    return Output(args)


def _pvc_args(parts: dict, params: dict) -> Output:
    mount_path = "/" + parts["sub_path"]
    volume = {"name": OUTPUT_VOLUME, "persistentVolumeClaim": {"claimName": parts["claim"]}}
    mount = {"name": OUTPUT_VOLUME, "mountPath": mount_path, "subPath": parts["sub_path"]}
    return Output(["--experiment-base-dir", mount_path], volume, mount)


def _s3_args(parts: dict, params: dict) -> Output:
    args = ["--upload-results", "--storage-provider", "aws", "--storage-bucket", parts["bucket"]]
    if parts["prefix"]:
        args += ["--storage-prefix", parts["prefix"]]
    for key, flag in (("aws_access_key_id", "--storage-aws-access-key-id"),
                      ("aws_secret_access_key", "--storage-aws-secret-access-key"),
                      ("aws_profile", "--storage-aws-profile")):
        args += _param(params, key, flag)
    region = params.get("aws_region", parts["region"])
    if "aws_region" in params or region:
        args += ["--storage-aws-region", region]
    return Output(args)


def _azure_args(parts: dict, params: dict) -> Output:
    args = ["--upload-results", "--storage-provider", "azure", "--storage-bucket", parts["container"]]
    if parts["blob"]:
        args += ["--storage-prefix", parts["blob"]]
    args += ["--storage-azure-account-name", params.get("azure_account_name", parts["account"])]
    for key, flag in (("azure_account_key", "--storage-azure-account-key"),
                      ("azure_connection_string", "--storage-azure-connection-string"),
                      ("azure_sas_token", "--storage-azure-sas-token")):
        args += _param(params, key, flag)
    return Output(args)


def _gcs_args(parts: dict, params: dict) -> Output:
    args = ["--upload-results", "--storage-provider", "gcp", "--storage-bucket", parts["bucket"]]
    if parts["object"]:
        args += ["--storage-prefix", parts["object"]]
    args += _param(params, "gcp_project_id", "--storage-gcp-project-id")
    args += _param(params, "gcp_credentials_path", "--storage-gcp-credentials-path")
    return Output(args)


def _github_args(parts: dict, params: dict) -> Output:
    args = ["--upload-results", "--storage-provider", "github", "--github-owner", parts["owner"],
            "--github-repo", parts["repository"]]
    if parts["tag"] != "latest":
        args += ["--github-tag", parts["tag"]]
    args += _param(params, "github_token", "--github-token")
    return Output(args)


# Output parameters that are credentials (benchmark-output-storage.md), the flag OME writes each into, and the
# environment variable genai-bench reads when the flag is absent (genai_bench/auth: AWSS3Auth, AzureBlobAuth,
# GitHubAuth).
CREDENTIALS = {"aws_access_key_id": ("--storage-aws-access-key-id", "AWS_ACCESS_KEY_ID"),
               "aws_secret_access_key": ("--storage-aws-secret-access-key", "AWS_SECRET_ACCESS_KEY"),
               "azure_account_key": ("--storage-azure-account-key", "AZURE_STORAGE_ACCOUNT_KEY"),
               "azure_connection_string": ("--storage-azure-connection-string", "AZURE_STORAGE_CONNECTION_STRING"),
               "azure_sas_token": ("--storage-azure-sas-token", "AZURE_STORAGE_SAS_TOKEN"),
               "github_token": ("--github-token", "GITHUB_TOKEN")}


def credentials_in_args(uri: str, params: dict) -> list[tuple[str, str, str]]:
    """(parameter, flag, environment variable) of each credential parameter the storage args of ``uri`` carry."""
    kind = storage_type(uri)
    return [(key, *CREDENTIALS[key]) for key in sorted(params) if key in CREDENTIALS
            and CREDENTIALS[key][0].startswith(_FLAG_PREFIX.get(kind, "\0"))]


_FLAG_PREFIX = {"S3": "--storage-aws-", "AZURE": "--storage-azure-", "GITHUB": "--github-"}


_BUILDERS = {"OCI": _oci_args, "PVC": _pvc_args, "S3": _s3_args, "AZURE": _azure_args, "GCS": _gcs_args,
             "GITHUB": _github_args}
