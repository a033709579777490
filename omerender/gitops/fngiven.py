"""The settings ``omerender build`` was given (flags, Argo CD parameters), handed to the omerender function that
kustomize runs for each OMERender config on the function path, so each config gets them added as the pipeline path
adds them (:func:`omerender.gitops.krm.function_options`; a setting a config sets too was refused before kustomize
ran). They travel in the function's environment, which only the build sets: a repository can't."""
from __future__ import annotations

import json

from omerender.errors import OmeError
from omerender.ome.frontend import FrontEnd, SETTINGS

GIVEN_ENV = "OMERENDER_FN_GIVEN"
KINDS = ("cli", "argocd")


def given_env(given: tuple) -> str:
    """``given`` (:class:`~omerender.ome.frontend.Given` items) as the variable's value."""
    return json.dumps([[item.front.kind, item.key, item.value] for item in given])


def given_from_env(environ) -> tuple:
    """The settings :func:`given_env` wrote, as Given items again; none when the variable is unset."""
    text = environ.get(GIVEN_ENV)
    if not text:
        return ()
    try:
        items = json.loads(text)
    except ValueError:
        items = None
    if not isinstance(items, list) or not all(
            isinstance(item, list) and len(item) == 3 and item[0] in KINDS and item[1] in SETTINGS
            and (item[2] is None or isinstance(item[2], str)) for item in items):
        raise OmeError(f"{GIVEN_ENV} is not what omerender build writes; unset it")
    return tuple(FrontEnd(kind).given(key, value) for kind, key, value in items)
