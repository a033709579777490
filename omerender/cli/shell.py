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
