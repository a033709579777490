"""The ``--model-weights`` options of one render, from the values a front end was given (None: not given), each
checked and named in an error as that front end spells it (a CLI flag, an OMERender config field, an Argo CD
parameter)."""
from __future__ import annotations

from omerender.errors import OmeError
from ..frontend import CLI_FRONT, FrontEnd, given_values
from . import jobsettings as job
from .settings import (AGENT, DOWNLOAD, DOWNLOAD_ONLY, DOWNLOAD_RESOURCES, WAIT_RESOURCES, WeightsSettings,
                       check_access_mode, check_image, check_mode, check_storage_class)

KEYS = ("mode",) + DOWNLOAD_ONLY


def weights_options(given: dict, names: dict | None = None, front: FrontEnd = CLI_FRONT,
                    mode_elsewhere: bool = False) -> tuple[str, WeightsSettings]:
    """The mode and the settings from ``given`` (setting key -> value as given, None or missing: not given),
    checked; ``names`` says how each was spelled where it differs from ``front``'s names (the KRM function's
    ``functionConfig.spec.<key>``), and each error's field is that name. A download setting given with ``agent``
    is an error: it would do nothing. ``mode_elsewhere``: an OMERender config beside these settings may set the
    mode, so with none given the values are only checked (as for download), and the build decides (agent and no
    settings are returned: :func:`given_options` or the config's options replace them)."""
    names = {**{key: front.name(key) for key in KEYS}, **(names or {})}
    unknown = set(given) - set(KEYS)
    assert not unknown, unknown
    if mode_elsewhere and given.get("mode") is None:
        weights_options({**given, "mode": DOWNLOAD}, names, front)
        return AGENT, WeightsSettings()
    mode = check_mode(AGENT if given.get("mode") is None else given["mode"], names["mode"])
    present = {key: value for key, value in given.items() if key != "mode" and value not in (None, (), [])}
    if mode == AGENT:
        extra = [names[key] for key in DOWNLOAD_ONLY if key in present]
        if extra:
            raise OmeError(f"{', '.join(extra)} {'is' if len(extra) == 1 else 'are'} used only with "
                           f"{names['mode']} download", field=extra[0])
        return mode, WeightsSettings()
    checks = {
        "storage_class": lambda v, n: check_storage_class(v, n),
        "access_mode": lambda v, n: check_access_mode(v, n),
        "image": lambda v, n: check_image(v, n),
        "node_selector": job.check_node_selector,
        "tolerations": job.check_tolerations,
        "download_resources": lambda v, n: job.check_resources(v, n, DOWNLOAD_RESOURCES),
        "wait_resources": lambda v, n: job.check_resources(v, n, WAIT_RESOURCES),
        "deadline": job.check_deadline,
        "env": lambda v, n: job.check_env(v, n, names["env_from"]),
        "env_from": job.check_env_from,
    }
    values = {key: checks[key](value, names[key]) for key, value in present.items()}
    return mode, WeightsSettings(**values)


def given_options(given: tuple) -> tuple[str, WeightsSettings]:
    """The mode and settings of the weights settings among ``given`` (:class:`~omerender.ome.frontend.Given` flags
    or Argo CD parameters) alone, named as given: where no OMERender config is beside them, a download setting
    without download is this error, which the front end left to the build because a config could set the mode."""
    values, names = given_values(given)
    return weights_options({key: values[key] for key in KEYS if key in values},
                           {key: names[key] for key in KEYS} if names else None)
