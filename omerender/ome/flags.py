"""The shared reader of annotation values that OME reads otherwise than they look (api.md §8.13).

OME v1.3 reads most of its on/off annotations with Go's ``value == "true"``: only the exact text ``true`` turns
the feature on, and ``"yes"``, ``"True"``, ``"1"`` or ``"true "`` are off. A choice among names (such as a
deployment mode) is compared exactly, and an unknown one is skipped. Each concept lists its own keys and what OME
does with a misread value (``ingress.misread``, ``podwebhook.FLAGS``, ``runtimes.components``); this module words
the warning and places it at the annotation.
"""
from __future__ import annotations

from omerender.errors import ObjRef, Report


def warn_flags(annotations, flags: dict[str, str], report: Report, prefix: str = "metadata.annotations",
               ref: ObjRef | None = None, file: str | None = None) -> None:
    """One warning per key of ``flags`` whose value in ``annotations`` is neither ``true`` nor ``false``: OME reads
    it as false, so the feature is off (``flags[key]`` says what that means). ``prefix`` is the field path of the
    annotations, ``ref``/``file`` the object that holds them when it is not the report's."""
    if not isinstance(annotations, dict):
        return
    for key, value in annotations.items():   # in the order written
        effect = flags.get(key) if isinstance(key, str) else None
        if effect is not None and isinstance(value, str) and value not in ("true", "false"):
            report.warn(f'annotation {key}: "{value}" is not "true": OME reads only "true" as true, so {effect}; '
                        f'write "true" or "false"', ref=ref, field=f"{prefix}.{key}", file=file,
                        code="misread-annotation")


def unknown_choice(value, choices: tuple[str, ...]) -> str | None:
    """The hint for a value that is none of ``choices`` (exact comparison), None for a known value or a non-string:
    ``did you mean`` the choice it matches ignoring case and surrounding spaces, if any."""
    if not isinstance(value, str) or value in choices:
        return None
    near = next((c for c in choices if c.lower() == value.strip().lower()), None)
    return f'; did you mean "{near}"?' if near else ""


def one_of(choices: tuple[str, ...]) -> str:
    """``A, B or C``."""
    return ", ".join(choices[:-1]) + f" or {choices[-1]}" if len(choices) > 1 else choices[0]
