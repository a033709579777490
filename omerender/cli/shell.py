"""What every command shares: printing messages and exiting with a status."""
from __future__ import annotations

import sys
from typing import Iterable

import click

from omerender.errors import Message


def fail(messages: Iterable[Message], status: int = 1) -> None:
    """Print each message as its stderr line and exit with ``status`` (nothing goes to stdout)."""
    for message in messages:
        click.echo(message.line(), err=True)
    sys.exit(status)
