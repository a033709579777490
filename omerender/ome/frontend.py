"""How each front end spells a render setting, so a message's fix names what the user can type where they are: the
``omerender`` flag, the OMERender config's ``spec`` key (the KRM function, an overlay that lists the transformer, an
app's ``omerender.yaml``), or the Argo CD plugin parameter. The front end is where the render's options came from
(:class:`~omerender.ome.render.Options` ``.front``), so every message made during a render reads it there.
"""
from __future__ import annotations

import shlex
from dataclasses import dataclass

CLI, CONFIG, ARGOCD = "cli", "config", "argocd"


@dataclass(frozen=True)
class Spelling:
    flag: str        # omerender render's flag
    config: str      # the OMERender config's spec key
    parameter: str   # the Argo CD plugin parameter (its plugin.env name: upper case, "-" as "_")


SETTINGS = {
    "keep_inputs": Spelling("--keep-inputs", "keepInputs", "keep-inputs"),
    "no_model_node_selector": Spelling("--no-model-node-selector", "noModelNodeSelector", "no-model-node-selector"),
    "locked": Spelling("--locked", "locked", "locked"),
    "pod_monitors": Spelling("--pod-monitors", "podMonitors", "pod-monitors"),
    "strict": Spelling("--strict", "strict", "strict"),
    "allow": Spelling("--allow", "allow", "allow"),
    "mode": Spelling("--model-weights", "modelWeights", "model-weights"),
    "storage_class": Spelling("--weights-storage-class", "weightsStorageClass", "weights-storage-class"),
    "access_mode": Spelling("--weights-access-mode", "weightsAccessMode", "weights-access-mode"),
    "image": Spelling("--downloader-image", "downloaderImage", "downloader-image"),
    "node_selector": Spelling("--weights-node-selector", "weightsNodeSelector", "weights-node-selector"),
    "tolerations": Spelling("--weights-toleration", "weightsTolerations", "weights-tolerations"),
    "download_resources": Spelling("--downloader-resources", "downloaderResources", "downloader-resources"),
    "wait_resources": Spelling("--weights-wait-resources", "weightsWaitResources", "weights-wait-resources"),
    "deadline": Spelling("--download-deadline", "downloadDeadline", "download-deadline"),
    "env": Spelling("--downloader-env", "downloaderEnv", "downloader-env"),
    "env_from": Spelling("--downloader-env-from", "downloaderEnvFrom", "downloader-env-from"),
}


def env_name(parameter: str) -> str:
    """An Argo CD parameter's plugin.env name (``weights-access-mode`` -> ``WEIGHTS_ACCESS_MODE``)."""
    return parameter.upper().replace("-", "_")


class Given(str):
    """A setting as the user gave it, in their front end's words (``--keep-inputs``, ``keep-inputs=true``), that
    still knows which setting it is, so a message about it can say how another front end spells it."""

    key: str
    value: object

    def __new__(cls, text: str, key: str, value: object = None):
        made = super().__new__(cls, text)
        made.key, made.value = key, value
        return made


@dataclass(frozen=True)
class FrontEnd:
    kind: str = CLI

    def name(self, key: str) -> str:
        """The setting's name in this front end."""
        spelling = SETTINGS[key]
        return {CLI: spelling.flag, CONFIG: spelling.config, ARGOCD: spelling.parameter}[self.kind]

    def given(self, key: str, value=None) -> Given:
        """The setting as this front end writes it with ``value`` (None: a switch)."""
        name = self.name(key)
        if self.kind == CLI:
            return Given(name if value is None else f"{name} {shlex.quote(str(value))}", key, value)
        if self.kind == CONFIG:
            return Given(f"{name}: {'true' if value is None else value}", key, value)
        return Given(f"{name}={'true' if value is None else value} ({env_name(name)})", key, value)

    def set(self, *settings: tuple[str, object]) -> str:
        """The fix that sets each (key, value): "render with --a X --b Y", "set a: X and b: Y in the OMERender
        config's spec", "set the plugin parameters a=X and b=Y"."""
        parts = [self.given(key, value) for key, value in settings]
        if self.kind == CLI:
            return f"render with {' '.join(parts)}"
        if self.kind == CONFIG:
            return f"set {' and '.join(parts)} in the OMERender config's spec"
        plural = "s" if len(parts) > 1 else ""
        return f"set the Argo CD plugin parameter{plural} {' and '.join(parts)}"


CLI_FRONT, CONFIG_FRONT, ARGOCD_FRONT = FrontEnd(CLI), FrontEnd(CONFIG), FrontEnd(ARGOCD)


def in_config(given: tuple[str, ...]) -> str:
    """Where settings given outside an OMERender config go instead: its spec keys, each with its value."""
    keys = [CONFIG_FRONT.given(item.key, item.value) if isinstance(item, Given) else str(item) for item in given]
    return ", ".join(keys)
