"""The render options of ``--model-weights``: the mode and the download settings, each checked with the name the
user gave it (a CLI flag, a KRM function field, an Argo CD variable), so an error names what to fix."""
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


@dataclass(frozen=True)
class WeightsSettings:
    """How ``download`` mode writes the claim and the Job; unused in ``agent`` mode."""

    storage_class: str | None = None   # None: the cluster's default StorageClass
    access_mode: str = "ReadWriteOnce"
    image: str = DEFAULT_IMAGE


# The names of each setting as the CLI spells them; other front ends pass their own.
CLI_NAMES = {"mode": "--model-weights", "storage_class": "--weights-storage-class",
             "access_mode": "--weights-access-mode", "image": "--downloader-image"}
DOWNLOAD_ONLY = ("storage_class", "access_mode", "image")


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


def weights_options(mode, storage_class=None, access_mode=None, image=None,
                    names: dict | None = None) -> tuple[str, WeightsSettings]:
    """The mode and the settings from values as given (None: not given), checked; ``names`` says how each was
    spelled (default: the CLI's flags), and each error's field is that name. A download setting given with ``agent``
    is an error: it would do nothing."""
    names = {**CLI_NAMES, **(names or {})}
    mode = check_mode(AGENT if mode is None else mode, names["mode"])
    given = {"storage_class": storage_class, "access_mode": access_mode, "image": image}
    if mode == AGENT:
        extra = [names[key] for key in DOWNLOAD_ONLY if given[key] is not None]
        if extra:
            raise OmeError(f"{', '.join(extra)} {'is' if len(extra) == 1 else 'are'} used only with "
                           f"{names['mode']} download", field=extra[0])
        return mode, WeightsSettings()
    settings = WeightsSettings(
        storage_class=None if storage_class is None else check_storage_class(storage_class, names["storage_class"]),
        access_mode="ReadWriteOnce" if access_mode is None else check_access_mode(access_mode, names["access_mode"]),
        image=DEFAULT_IMAGE if image is None else check_image(image, names["image"]))
    return mode, settings
