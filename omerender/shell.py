"""What the CLI and the KRM function share: running a render and turning failures into messages."""
from __future__ import annotations

import gc
import sys
import traceback
from typing import Callable, Iterable

import click

from .errors import Message, OmeError, OmeErrors


def without_cycle_collector() -> None:
    """Turn Python's cyclic garbage collector off for the rest of the process. Every command is one pass that
    builds a large heap of parsed objects and exits: the collector's full scans of that growing heap cost 8-11 %
    of a render at 1,000-10,000 InferenceServices and free nothing (peak memory is the same). Memory that no
    cycle holds is still freed at once, and the input limits bound what a cycle could hold."""
    gc.disable()


def failure_messages(exc: BaseException, debug: bool = False) -> list[Message]:
    """Messages for any exception a render raised; unexpected ones become one internal error."""
    if isinstance(exc, OmeErrors):
        return [e.message() for e in exc.errors]
    if isinstance(exc, OmeError):
        return [exc.message()]
    detail = "".join(traceback.format_exception(exc)) if debug else f"{type(exc).__name__}: {exc}"
    return [Message("error", f"internal error, please report it: {detail}"
                    + ("" if debug else " (run with --debug for a traceback)"))]


def fail(messages: Iterable[Message], status: int = 1) -> None:
    """Print each message as its stderr line and exit with ``status`` (nothing goes to stdout)."""
    for message in messages:
        click.echo(message.line(), err=True)
    sys.exit(status)


def run_guarded(action: Callable, debug: bool = False):
    """Run ``action``; return (value, None) or (None, messages)."""
    try:
        return action(), None
    except RecursionError:
        return None, [Message("error", "input nests too deeply")]
    except Exception as exc:  # noqa: BLE001 - the edge turns every failure into a message
        return None, failure_messages(exc, debug)
