"""The render options of ``--model-weights``: the mode and the download settings, each checked with the name the
user gave it (a CLI flag, a KRM function field, an Argo CD variable), so an error names what to fix
(:mod:`.options` reads them all; :mod:`.jobsettings` checks the Job's own)."""
from __future__ import annotations

import re
from dataclasses import dataclass

from omerender.errors import OmeError
from omerender.kube.apirules import SUBDOMAIN_MAX, dns1123_subdomain

AGENT, DOWNLOAD = "agent", "download"
MODES = (AGENT, DOWNLOAD)
# Kubernetes' four access modes but ReadOnlyMany: the download Job writes the claim.
ACCESS_MODES = ("ReadWriteOnce", "ReadWriteMany", "ReadWriteOncePod")
READ_ONLY_MANY = "ReadOnlyMany"
# The image the catalog's SGLang runtimes pin: it has python3 and huggingface_hub (docs/how-to/model-weights.md).
DEFAULT_IMAGE = "docker.io/lmsysorg/sglang:v0.5.5.post3-cu129-amd64"
MAX_IMAGE = 1024
IMAGE_TEXT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/:@-]*")  # what an image reference is made of
# Requests that a ResourceQuota namespace accepts and that a download of the largest catalog models fits in: the
# downloader is network and disk bound; huggingface_hub holds a few chunks of each of its 8 parallel files.
DOWNLOAD_RESOURCES = (("limits", "cpu", "2"), ("limits", "memory", "4Gi"),
                      ("requests", "cpu", "500m"), ("requests", "memory", "1Gi"))
WAIT_RESOURCES = (("limits", "cpu", "100m"), ("limits", "memory", "128Mi"),
                  ("requests", "cpu", "10m"), ("requests", "memory", "64Mi"))
# 8 hours: the catalog's largest model, Kimi-K2-Instruct (about 1 TB), at 36 MB/s (a 300 Mbit/s link or mirror).
DEFAULT_DEADLINE = 28800


@dataclass(frozen=True)
class WeightsSettings:
    """How ``download`` mode writes the claim and the Job; unused in ``agent`` mode."""

    storage_class: str | None = None   # None: the cluster's default StorageClass
    access_mode: str = "ReadWriteOnce"
    image: str = DEFAULT_IMAGE
    node_selector: tuple | None = None  # (key, value) pairs; None with tolerations None: the serving pods' placement
    tolerations: tuple | None = None    # Kubernetes tolerations
    download_resources: tuple = DOWNLOAD_RESOURCES   # (group, resource, quantity): the download container's
    wait_resources: tuple = WAIT_RESOURCES           # the same for the serving pods' wait step
    deadline: int = DEFAULT_DEADLINE    # the Job's activeDeadlineSeconds
    env: tuple = ()                     # (name, value) for the downloader
    env_from: tuple = ()                # envFrom entries for the downloader

    @property
    def placed(self) -> bool:
        """Whether the render sets the download's placement (else it takes the serving pods')."""
        return self.node_selector is not None or self.tolerations is not None


DOWNLOAD_ONLY = ("storage_class", "access_mode", "image", "node_selector", "tolerations", "download_resources",
                 "wait_resources", "deadline", "env", "env_from")


def shown(value) -> str:
    """A value as an error quotes it: one line (a newline must not forge an ``error:`` line), at most 80 characters."""
    text = str(value).encode("unicode_escape").decode("ascii")
    return text if len(text) <= 80 else f"{text[:76]}... ({len(text):,} characters)"


def check_mode(value, name: str) -> str:
    if value not in MODES:
        raise OmeError(f'{name} must be agent or download, got "{shown(value)}"', field=name)
    return value


def check_storage_class(value, name: str) -> str:
    if not isinstance(value, str) or dns1123_subdomain(value):
        raise OmeError(f'{name} must be a StorageClass name (a DNS subdomain: lower case letters, digits, "-" and ".", '
                       f'at most {SUBDOMAIN_MAX} characters), got "{shown(value)}"', field=name)
    return value


def check_access_mode(value, name: str) -> str:
    if value == READ_ONLY_MANY:
        raise OmeError(f"{name} ReadOnlyMany can't be used: the download Job writes the claim; use ReadWriteMany "
                       f"for pods on several nodes", field=name)
    if value not in ACCESS_MODES:
        raise OmeError(f'{name} must be one of {", ".join(ACCESS_MODES)}, got "{shown(value)}"', field=name)
    return value


def check_image(value, name: str) -> str:
    if not isinstance(value, str) or len(value) > MAX_IMAGE or not IMAGE_TEXT.fullmatch(value):
        raise OmeError(f'{name} must be a container image reference (letters, digits, ".", "_", "-", "/", ":", "@", '
                       f'at most {MAX_IMAGE} characters), got "{shown(value)}"', field=name)
    return value

