"""What a model's ``spec.storage`` says to download, read for ``--model-weights download``.

``hf://ORG/NAME[@REVISION]`` is read as OME v1.3's ``ParseHuggingFaceStorageURI`` reads it
(pkg/utils/storage/storage.go: the text after ``hf://`` up to the first ``@`` is the model id, the rest the
revision, ``main`` without one). The Hugging Face token is read as OME's model agent reads it
(pkg/modelagent/gopher.go): from the Secret ``spec.storage.key`` names, data key ``token`` unless
``spec.storage.parameters.secretKey`` names another. OME's agent falls back to ``parameters.token``, a literal;
omerender never writes a credential into its output, so that is an error here.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from omerender.kube.apirules import SUBDOMAIN_MAX, dns1123_subdomain
from ..frontend import CLI_FRONT, FrontEnd
from ..load import Obj
from .settings import shown

HF = "hf://"
PVC = "pvc://"
DEFAULT_REVISION = "main"
DEFAULT_SECRET_KEY = "token"
# The schemes OME v1.3's model agent downloads besides hf:// (pkg/utils/storage/storage.go).
AGENT_SCHEMES = ("oci", "s3", "gs", "az", "github", "local", "vendor")
# Hugging Face repository ids: "name" or "namespace/name", letters, digits, "-", "_", "." (at most 96).
REPO_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?")
MAX_REPO_ID = 96
REVISION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/+-]*")
MAX_REVISION = 255
SECRET_KEY = re.compile(r"[-._a-zA-Z0-9]+")
# Storage parameters whose value would be a literal credential in the repository.
CREDENTIAL_WORDS = ("token", "password", "passwd", "secret", "apikey", "api_key", "accesskey", "access_key",
                    "privatekey", "private_key", "credential")
NOT_CREDENTIALS = ("secretKey",)   # the name of a key in the Secret, not a secret


@dataclass(frozen=True)
class HfSource:
    uri: str
    repo_id: str
    revision: str
    secret: str | None      # the Secret holding the token, None for a public model
    secret_key: str


def is_pvc(model: Obj) -> bool:
    uri = (model.spec.get("storage") or {}).get("storageUri")
    return isinstance(uri, str) and uri.startswith(PVC)


def hf_source(model: Obj, front: FrontEnd = CLI_FRONT) -> HfSource:
    """The model's Hugging Face source; an error for anything ``--model-weights download`` can't download."""
    storage = model.spec.get("storage") or {}
    if not isinstance(storage, dict):
        raise model.error("spec.storage must be an object", "spec.storage")
    uri = storage.get("storageUri")
    field = "spec.storage.storageUri"
    if not isinstance(uri, str) or not uri:
        raise model.error(f"{model.kind} {model.name} has no spec.storage.storageUri: --model-weights download needs "
                          f"one to know what to download (hf://ORG/NAME[@REVISION])", field)
    if not uri.startswith(HF):
        raise model.error(_scheme_problem(uri, front), field)
    repo_id, _, revision = uri[len(HF):].partition("@")
    revision = revision if "@" in uri else DEFAULT_REVISION
    if len(repo_id) > MAX_REPO_ID or not REPO_ID.fullmatch(repo_id):
        raise model.error(f'storageUri "{shown(uri)}": "{shown(repo_id)}" is not a Hugging Face model id (ORG/NAME: '
                          f'letters, digits, "-", "_", ".", at most {MAX_REPO_ID} characters)', field)
    if len(revision) > MAX_REVISION or not REVISION.fullmatch(revision):
        raise model.error(f'storageUri "{shown(uri)}": "{shown(revision)}" after @ is not a revision (a branch, tag or '
                          f'commit: letters, digits, "-", "_", ".", "/", "+", at most {MAX_REVISION} characters)',
                          field)
    _check_no_literal_credentials(model, storage)
    secret, key = _token_secret(model, storage)
    return HfSource(uri, repo_id, revision, secret, key)


def _scheme_problem(uri: str, front: FrontEnd) -> str:
    scheme = uri.split("://", 1)[0] if "://" in uri else None
    alternatives = f"{front.set(('mode', 'agent'))} (OME's model agent downloads it), or serve it from a pvc:// model"
    if scheme in AGENT_SCHEMES:
        return (f"storageUri {scheme}://: --model-weights download downloads hf:// models only; {alternatives}")
    return (f'storageUri "{shown(uri)}" has no scheme OME knows; --model-weights download downloads hf:// models only; '
            f"{alternatives}")


def _check_no_literal_credentials(model: Obj, storage: dict) -> None:
    parameters = storage.get("parameters") or {}
    if not isinstance(parameters, dict):
        return
    for key in sorted(str(k) for k in parameters):
        lowered = key.lower()
        if key not in NOT_CREDENTIALS and any(word in lowered for word in CREDENTIAL_WORDS):
            raise model.error(
                f"spec.storage.parameters.{shown(key)} is a literal credential, and --model-weights download never "
                f"writes one into its output: put the token in a Secret (data key token) in the InferenceService's "
                f"namespace, name the Secret in spec.storage.key and remove the parameter",
                f"spec.storage.parameters.{key}")


def _token_secret(model: Obj, storage: dict) -> tuple[str | None, str]:
    secret = storage.get("key")
    parameters = storage.get("parameters") if isinstance(storage.get("parameters"), dict) else {}
    key = parameters.get("secretKey") or DEFAULT_SECRET_KEY
    if secret in (None, ""):
        return None, key
    if not isinstance(secret, str) or dns1123_subdomain(secret):
        raise model.error(f'spec.storage.key "{shown(secret)}" is not a Secret name (a DNS subdomain)',
                          "spec.storage.key")
    if not isinstance(key, str) or len(key) > SUBDOMAIN_MAX or not SECRET_KEY.fullmatch(key) \
            or key in (".", "..") or key.startswith(".."):  # as the API server's IsConfigMapKey
        raise model.error(f'spec.storage.parameters.secretKey "{shown(key)}" is not a Secret data key (letters, '
                          f'digits, "-", "_", ".", not "." or "..", not starting with "..")',
                          "spec.storage.parameters.secretKey")
    return secret, key
