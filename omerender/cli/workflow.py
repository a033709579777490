"""``--messages github``: messages as GitHub Actions annotations, and nothing else on stdout or stderr read as a
workflow command.

The runner reads every line of a step's stdout and stderr (split at ``\\n``, ``\\r`` and ``\\r\\n``) that starts
with ``::`` after whitespace as a command. In github mode both streams are put behind :class:`Guard` once, when the
option is read: whatever any command writes (kustomize's or git's stderr relayed, a unified diff, a table, a model
card) passes as it is unless a line of it would be a command; then that text is fenced between
``::stop-commands::TOKEN`` and ``::TOKEN::`` with a fresh random token, which GitHub documents for printing
untrusted text ("Stopping and starting workflow commands"). omerender's own annotations alone go round the guard
(:meth:`Guard.command`), escaped as actions/toolkit's ``core/src/command.ts`` escapes them.
"""
from __future__ import annotations

import re
import secrets
import sys

from omerender.errors import Message

_COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}
# a line the runner would read as a command: at the start of the text or after a line break, any whitespace
# (.NET's TrimStart; Python's \s is a superset), then "::"
_COMMAND_LINE = re.compile(r"(?:\A|[\r\n])[^\S\r\n]*::")


ERROR_TITLE = "omerender"  # an error has no code: its annotation's title names the tool


def github_line(message: Message) -> str:
    """``message`` as a GitHub Actions workflow command (escaped as actions/toolkit's core/src/command.ts does):
    ``::warning file=F,line=L,col=C,title=CODE::TEXT``; an error's title is :data:`ERROR_TITLE`."""
    properties = []
    if message.file:
        properties.append(("file", message.file))
        position = message.position()
        if position:
            properties += [("line", str(position[0])), ("col", str(position[1]))]
    properties.append(("title", message.code or ERROR_TITLE))
    said = ",".join(f"{key}={escape_property(value)}" for key, value in properties)
    return f"::{_COMMANDS[message.severity]}{' ' + said if said else ''}::{escape_data(message.located_text())}"


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def fenced(text: str) -> str:
    """``text`` as it is when no line of it is a workflow command, else between ``::stop-commands::TOKEN`` and
    ``::TOKEN::`` (a token the text does not hold)."""
    if not _COMMAND_LINE.search(text):
        return text
    token = secrets.token_hex(16)
    while token in text:  # pragma: no cover - 128 random bits
        token = secrets.token_hex(16)
    end = "" if text.endswith(("\n", "\r")) else "\n"
    return f"::stop-commands::{token}\n{text}{end}::{token}::\n"


class Guard:
    """A text stream in front of stdout or stderr that fences every run of written lines holding a workflow
    command (:func:`fenced`). A line is judged whole: a partial one waits for its end (or :meth:`flush`)."""

    def __init__(self, stream):
        self.stream = stream
        self._held = ""

    @property
    def encoding(self):
        return getattr(self.stream, "encoding", "utf-8")

    @property
    def errors(self):
        return getattr(self.stream, "errors", "strict")

    def write(self, text: str) -> int:
        whole = self._held + text  # bytes raise here, as click's probe for a binary stream expects
        last = max(whole.rfind("\n"), whole.rfind("\r"))
        if last < 0:
            self._held = whole
            return len(text)
        self._held = whole[last + 1:]
        self.stream.write(fenced(whole[:last + 1]))
        return len(text)

    def flush(self) -> None:
        if self._held:
            held, self._held = self._held, ""
            self.stream.write(fenced(held))
        self.stream.flush()

    def command(self, line: str) -> None:
        """Write one of omerender's own workflow commands (one line, escaped already), outside any fence."""
        self.flush()
        self.stream.write(line + "\n")
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()

    def fileno(self) -> int:
        return self.stream.fileno()

    def writable(self) -> bool:
        return True


def guard_streams() -> callable:
    """Put stdout and stderr behind a :class:`Guard` (once); returns what puts them back."""
    if isinstance(sys.stderr, Guard):
        return lambda: None
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = Guard(sys.stdout), Guard(sys.stderr)

    def restore() -> None:
        for guard in (sys.stdout, sys.stderr):
            if isinstance(guard, Guard):
                guard.flush()
        sys.stdout, sys.stderr = saved
    return restore


def annotate(message: Message) -> None:
    """Print ``message`` as an annotation on stderr, past the guard when there is one."""
    line = github_line(message)
    if isinstance(sys.stderr, Guard):
        sys.stderr.command(line)
    else:
        sys.stderr.write(line + "\n")
