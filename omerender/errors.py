"""One error type and the messages a render reports.

Every user-facing problem is an :class:`OmeError` (or a :class:`Message` of
severity ``warning``/``info`` collected in a :class:`Report`). Each carries
the file, the object (kind, namespace/name) and the field where known, so the
shell can print ``error: <file>:<line>:<column>: <Kind> <ns>/<name>: <text>`` or turn it into a
KRM result. A warning or info also carries its code (:mod:`omerender.codes`), printed after the text as
`` [<code>]`` and read by ``--allow``. The line and column are asked of the object's origin (:mod:`omerender.yamlio.marks`) only
when the line is printed: nothing is kept per field while rendering. :func:`run_guarded` is the edge every
command and the function share: any exception becomes messages (:func:`failure_messages`), an unexpected one
a single internal error.
"""
from __future__ import annotations

import re
import traceback
from dataclasses import dataclass, field as dc_field
from typing import Callable

from omerender.codes import CODES

# C0 and C1 controls, DEL, and the Unicode line separators and direction overrides that can make one
# message line look like several (a newline in a name would forge an extra "error:" line).
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def escape(text: str) -> str:
    """``text`` on one line: every control character written as its escape (``\\n``, ``\\x1b``, ``\\u2028``)."""
    return _CONTROL.sub(lambda m: _NAMED.get(m.group()) or _code(m.group()), text)


MAX_TEXT = 10_000  # characters of a message's text printed: a value quoted from a 1 MB input must not be 1 MB


def bounded(text: str) -> str:
    """``text``, or :data:`MAX_TEXT` characters of it, its start and its end (where the fix is said), with how many
    were left out between them."""
    if len(text) <= MAX_TEXT:
        return text
    head, tail = MAX_TEXT * 3 // 4, MAX_TEXT // 4
    return f"{text[:head]} … ({len(text) - head - tail:,} characters left out) … {text[-tail:]}"


def _code(char: str) -> str:
    return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"


@dataclass(frozen=True)
class ObjRef:
    """A Kubernetes object reference as messages print it."""

    kind: str
    name: str
    namespace: str | None = None
    api_version: str | None = None
    # Where the object was read (omerender.yamlio.marks.Origin: ``mark(field)`` and ``index``); not part of
    # what the reference names, so equal references stay equal.
    origin: object = dc_field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        if self.namespace:
            return f"{self.kind} {self.namespace}/{self.name}"
        return f"{self.kind} {self.name}"


class _Unplaced:
    """The origin of a message whose file is not where its object was read: no position is printed."""

    index = None

    def mark(self, field: str | None) -> None:
        return None


UNPLACED = _Unplaced()


@dataclass(frozen=True)
class Message:
    severity: str  # "error", "warning" or "info"
    text: str
    ref: ObjRef | None = None
    file: str | None = None
    field: str | None = None
    origin: object = dc_field(default=None, compare=False, repr=False)  # else the ref's origin
    folded: int = dc_field(default=0, compare=False, repr=False)  # a count line: the messages it stands for
    code: str | None = None  # a warning's or info's name in omerender.codes (required for them)
    # a count line: (code, count) of the messages it stands for, so --allow can tell them apart
    folded_codes: tuple = dc_field(default=(), compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.severity != "error" and self.code not in CODES:
            raise ValueError(f"{self.severity} without a code of omerender.codes: {self.code!r}")
        # An object a build changed (omerender.yamlio.provenance) names the file and field it was written in, or
        # the patch that set the value, and says the value came through the overlay: decided now, so that the
        # fields stay what every printer reads.
        written = getattr(self.where(), "written", None) if self.file else None
        moved = written(self.field, self.file) if written is not None else None
        if moved is not None:
            file, origin, note = moved
            if note and not self.text.endswith(f"({note})"):
                object.__setattr__(self, "text", f"{self.text} ({note})")
            if file is not None:
                object.__setattr__(self, "file", file)
            object.__setattr__(self, "origin", origin)
        # Say now which field this message's line will name: the fields of all messages made before the first
        # is printed are placed in one composition of their document (omerender.yamlio.marks).
        want = getattr(self.where(), "want", None) if self.file else None
        if want is not None:
            want(self.field)

    def line(self) -> str:
        """The CLI line: ``<severity>: [<file>[:<line>:<column>]: ][<Kind> <ns>/<name>: ]<text>``, the
        position that of the field in the file, else of the object (the compiler convention that editors and
        CI annotators read)."""
        parts = [f"{self.severity}:"]
        if self.file:
            position = self.position()
            parts.append(f"{self.file}:{position[0]}:{position[1]}:" if position else f"{self.file}:")
        if self.ref is not None:
            parts.append(f"{self.ref}:")
        parts.append(bounded(self.text))
        if self.code:
            parts.append(f"[{self.code}]")
        return escape(" ".join(parts))

    def where(self):
        """The origin of what the message is about, if it was read from a file: its own or its object's."""
        return self.origin if self.origin is not None else getattr(self.ref, "origin", None)

    def position(self) -> tuple[int, int] | None:
        """The 1-based line and column of the field (else the object) in the file, when they are known."""
        origin = self.where()
        return origin.mark(self.field) if origin is not None and self.file else None

    def located_text(self) -> str:
        """The text after the object, as KRM results word it; on one line."""
        return escape((f"{self.ref}: " if self.ref else "") + bounded(self.text))


class OmeError(Exception):
    """A problem with the user's input. Never a bug in omerender."""

    def __init__(self, text: str, ref: ObjRef | None = None, file: str | None = None,
                 field: str | None = None, origin: object = None):
        super().__init__(text)
        self.text = text
        self.ref = ref
        self.file = file
        self.field = field
        self.origin = origin  # where in the file, when there is no ref to say it (see Message.origin)

    def located(self, ref: ObjRef | None, file: str | None) -> "OmeError":
        """Fill in the object and file where the raiser did not know them."""
        if self.file is None and self.ref is not None and self.ref != ref and self.origin is None:
            self.origin = UNPLACED  # ``file`` is another object's: no line of this one's in it
        if self.ref is None:
            self.ref = ref
        if self.file is None:
            self.file = file
        return self

    def message(self) -> Message:
        return Message("error", self.text, self.ref, self.file, self.field, self.origin)


class OmeErrors(Exception):
    """Several errors found in one pass (for example, bad input in many files)."""

    def __init__(self, errors: list[OmeError]):
        super().__init__("; ".join(e.text for e in errors))
        self.errors = errors


MAX_MESSAGES_PER_OBJECT = 100
MORE_SUFFIX = f"about this object are not shown: omerender prints at most {MAX_MESSAGES_PER_OBJECT} per object"


@dataclass
class Report:
    """Warnings and infos collected while rendering, in the order they arose."""

    messages: list[Message] = dc_field(default_factory=list)
    ref: ObjRef | None = None
    file: str | None = None
    _seen: set = dc_field(default_factory=set, repr=False, compare=False)
    _counts: dict = dc_field(default_factory=dict, repr=False, compare=False)  # (severity, ref, file) -> shown
    _summaries: dict = dc_field(default_factory=dict, repr=False, compare=False)  # same key -> its index

    def warn(self, text: str, ref: ObjRef | None = None, field: str | None = None,
             file: str | None = None, *, code: str) -> None:
        self._add("warning", text, ref, field, file, code)

    def info(self, text: str, ref: ObjRef | None = None, field: str | None = None,
             file: str | None = None, *, code: str) -> None:
        self._add("info", text, ref, field, file, code)

    def _add(self, severity, text, ref, field, file, code) -> None:
        self.add(Message(severity, text, ref or self.ref, file or (self.file if ref is None else None), field,
                         code=code))

    def add(self, message: Message) -> None:
        """Add a message once; the same message twice is reported once. Past :data:`MAX_MESSAGES_PER_OBJECT`
        warnings (or infos) about one object, the rest are counted in one line in their place: a 1 MB input must
        not print a million lines into a CI log."""
        if message in self._seen:
            return
        self._seen.add(message)
        key = (message.severity, message.ref, message.file)
        count = self._counts[key] = self._counts.get(key, 0) + (not message.folded)
        if message.severity == "error" or count <= MAX_MESSAGES_PER_OBJECT:
            self.messages.append(message)
            return
        more = count - MAX_MESSAGES_PER_OBJECT
        plural = message.severity + ("s" if more > 1 else "")
        codes = dict(self.messages[self._summaries[key]].folded_codes) if key in self._summaries else {}
        for code, n in message.folded_codes or ((message.code, message.folded or 1),):
            codes[code] = codes.get(code, 0) + n
        summary = Message(message.severity, f"{more:,} more {plural} {MORE_SUFFIX}", message.ref, message.file,
                          folded=more, code="more-messages", folded_codes=tuple(codes.items()))
        if key in self._summaries:
            self.messages[self._summaries[key]] = summary
        else:
            self._summaries[key] = len(self.messages)
            self.messages.append(summary)

    def extend(self, messages) -> None:
        for message in messages:
            self.add(message)

    def error(self, text: str, ref: ObjRef | None = None, field: str | None = None) -> OmeError:
        """Build (not raise) an error located at this report's object."""
        return OmeError(text, ref or self.ref, self.file if ref is None else None, field)


def type_name(value) -> str:
    """The JSON type name Kubernetes messages use for a value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def failure_messages(exc: BaseException, debug: bool = False) -> list[Message]:
    """Messages for any exception a render raised; unexpected ones become one internal error."""
    if isinstance(exc, OmeErrors):
        return [e.message() for e in exc.errors]
    if isinstance(exc, OmeError):
        return [exc.message()]
    detail = "".join(traceback.format_exception(exc)) if debug else f"{type(exc).__name__}: {exc}"
    return [Message("error", f"internal error, please report it: {detail}"
                    + ("" if debug else " (run with --debug for a traceback)"))]


def strict_error(messages, switch: str, allow=frozenset()) -> Message | None:
    """The error that fails a strict run (``switch`` names how strictness was asked for) whose messages hold
    warnings whose codes are not in ``allow``; None when they hold none. Infos never count."""
    count = sum(_unallowed(message, allow) for message in messages if message.severity == "warning")
    if not count:
        return None
    said = "1 warning" if count == 1 else f"{count} warnings"
    accepted = " not allowed (--allow)" if allow else ""
    return Message("error", f"{said}{accepted}, and {switch} makes every warning fail the run")


def _unallowed(message: Message, allow) -> int:
    """How many warnings ``message`` stands for whose codes ``allow`` does not accept."""
    if message.folded_codes:
        return sum(n for code, n in message.folded_codes if code not in allow)
    return 0 if message.code in allow else message.folded or 1


def relayed_warning(line: str) -> Message | None:
    """The warning a ``warning: ...`` line of a nested omerender (the KRM function under kustomize) printed, its
    code read back from the line's end and its ``file:line:column:``, where it names one, from its start; None for
    any other line."""
    if not line.startswith("warning: "):
        return None
    text = line[len("warning: "):]
    placed = _PLACED.match(text)  # the function names file:line:column as the CLI does: read them back
    file, origin = (placed.group(1), At(int(placed.group(2)), int(placed.group(3)))) if placed else (None, None)
    text = text[placed.end():] if placed else text
    match = _CODE_SUFFIX.search(text)
    if match and match.group(1) in CODES:
        return _warning(text[:match.start()], match.group(1), file, origin)
    return Message("warning", text, file=file, origin=origin, code="relayed-warning")


def _warning(text: str, code: str, file: str | None, origin) -> Message:
    return Message("warning", text, file=file, origin=origin, code=code)


class At:
    """A fixed place in a file: the line and column a relayed line named, or text that is no object (malformed
    YAML: omerender.yamlio.marks)."""

    __slots__ = ("line", "column")
    index = None
    item = None

    def __init__(self, line: int, column: int):
        self.line, self.column = line, column

    def mark(self, field: str | None) -> tuple[int, int]:
        return self.line, self.column


_CODE_SUFFIX = re.compile(r" \[([a-z0-9-]+)\]$")
_PLACED = re.compile(r"([^\s:][^:]*?):([1-9][0-9]{0,8}):([1-9][0-9]{0,8}): ")


def run_guarded(action: Callable, debug: bool = False):
    """Run ``action``; return (value, None) or (None, messages)."""
    try:
        return action(), None
    except RecursionError:
        return None, [Message("error", "input nests too deeply")]
    except Exception as exc:  # noqa: BLE001 - the edge turns every failure into a message
        return None, failure_messages(exc, debug)
