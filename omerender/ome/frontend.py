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
    still knows which setting it is and where it was given, so a message about it can say how another front end
    spells it."""

    key: str
    value: object
    front: "FrontEnd"

    def __new__(cls, text: str, key: str, value: object = None, front: "FrontEnd | None" = None):
        made = super().__new__(cls, text)
        made.key, made.value, made.front = key, value, front or CLI_FRONT
        return made


@dataclass(frozen=True)
class FrontEnd:
    kind: str = CLI

    def name(self, key: str) -> str:
        """The setting's name in this front end."""
        spelling = SETTINGS[key]
        return {CLI: spelling.flag, CONFIG: spelling.config, ARGOCD: spelling.parameter}[self.kind]

    def field(self, key: str) -> str:
        """The setting's name as an error about its value names it (``--weights-storage-class``,
        ``WEIGHTS_STORAGE_CLASS``: the plugin.env name)."""
        return env_name(self.name(key)) if self.kind == ARGOCD else self.name(key)

    def given(self, key: str, value=None) -> Given:
        """The setting as this front end writes it with ``value`` (None: a switch)."""
        name = self.name(key)
        if self.kind == CLI:
            return Given(name if value is None else f"{name} {shlex.quote(str(value))}", key, value, self)
        if self.kind == CONFIG:
            return Given(f"{name}: {'true' if value is None else value}", key, value, self)
        return Given(f"{name}={'true' if value is None else value} ({env_name(name)})", key, value, self)

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


# An OMERender config's spec key -> the setting it sets.
BY_CONFIG_KEY = {spelling.config: key for key, spelling in SETTINGS.items()}


def set_by_config(given: tuple, spec: dict) -> tuple:
    """The settings given beside an OMERender config (flags, Argo CD parameters) that the config's ``spec`` sets
    too: those are refused, so the two can't silently disagree. The others add to what the config sets."""
    return tuple(item for item in given if isinstance(item, Given) and SETTINGS[item.key].config in spec)


def given_values(given: tuple) -> tuple[dict, dict]:
    """The settings ``given`` (flags, Argo CD parameters) as setting key -> value (None for a switch, a list for a
    setting given once per item), and each setting's name (:meth:`FrontEnd.field`) in the front end they were given
    in (empty when nothing is given)."""
    values: dict = {}
    names: dict = {}
    for item in given:
        if not isinstance(item, Given):
            continue
        names = names or {key: item.front.field(key) for key in SETTINGS}
        if item.key in LIST_SETTINGS:
            values.setdefault(item.key, []).append(item.value)
        else:
            values[item.key] = item.value
    return values, names


LIST_SETTINGS = frozenset({"allow", "node_selector", "tolerations", "env", "env_from"})
