"""What every command shares: printing messages and exiting with a status."""
from __future__ import annotations

import sys
from typing import Iterable

import click

from omerender.errors import Message, strict_error


def fail(messages: Iterable[Message], status: int = 1) -> None:
    """Print each message as its stderr line and exit with ``status`` (nothing goes to stdout)."""
    for message in messages:
        click.echo(message.line(), err=True)
    sys.exit(status)


def fail_if_strict(strict: bool, messages: Iterable[Message], status: int = 1, switch: str = "--strict") -> None:
    """With ``--strict``, exit with ``status`` and one error line when ``messages`` hold a warning (the warnings
    themselves were printed already)."""
    error = strict_error(messages, switch) if strict else None
    if error is not None:
        fail([error], status)


def deprecated_spelling(old: str, new: str, value: str | None, old_value: str | None) -> str | None:
    """The option's value from its new spelling, or from the old one with a deprecation warning: ``-o`` is the
    output format in every command from the next release on (as in explain, tree and model-info)."""
    if old_value is None:
        return value
    if value is not None:
        raise click.UsageError(f"{old} is the old spelling of {new}; give one of them")
    click.echo(f"warning: {old} is deprecated and goes away in the next release (-o will be the output format, as "
               f"in explain, tree and model-info); use: {new} {old_value}", err=True)
    return old_value
