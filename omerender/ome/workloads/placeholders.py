"""Placeholders: a strict, safe subset of Go text/template (render.md §5, api.md §8.6).

A hand-written lexer and evaluator over the InferenceService's metadata only.
Supported actions, with Go's lexing rules (white space is space, tab, CR, LF;
``{{- `` and `` -}}`` trim adjacent white space, and need that space):

- ``{{.Name}}``, ``{{.Namespace}}``
- ``{{.Labels.<key>}}``, ``{{.Annotations.<key>}}``: a missing key prints ``<no value>``
- ``{{index .Labels "<key>"}}`` (or a backquoted key; likewise ``.Annotations``):
  a missing key prints nothing
- ``{{"..."}}`` and ``{{`...`}}``: print the literal (how Go writes literal braces)
- ``{{/* comment */}}``: prints nothing

Everything else is a :class:`PlaceholderError`. Nothing here can reach the
environment, files or Python objects: the only data is the metadata dict.
"""
from __future__ import annotations

import contextlib
import contextvars

from omerender.errors import OmeError
from omerender.yamlio import limits
from ..budget import BudgetError

MAX_TEXT_CHARS = 1 << 20
MAX_OUTPUT_CHARS = 1 << 20
MAX_ACTIONS = 10_000
SNIPPET_CHARS = 60

SPACE = " \t\r\n"
NO_VALUE = "<no value>"
MAPS = {"Labels": "labels", "Annotations": "annotations"}
SCALARS = {"Name": "name", "Namespace": "namespace"}
GO_KEYWORDS = ("block", "break", "continue", "define", "else", "end", "if", "range", "template",
               "with", "nil", "true", "false")
ESCAPE_HINT = 'to pass literal braces, write {{"{{"}} and {{"}}"}}'
SIMPLE_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
                  "\\": "\\", '"': '"'}


class _Spent:
    """Characters expanded and actions run so far in one render."""

    def __init__(self):
        self.chars = 0
        self.actions = 0
        self.over = False  # reported once; the render fails, so later values are left unexpanded


class _OutOfActions(Exception):
    """The render's action budget (:data:`limits.MAX_PLACEHOLDER_ACTIONS`) ran out inside one value."""


# The render opens one budget (:func:`render_budget`); the pod builders that expand placeholders stay unaware.
_SPENT: contextvars.ContextVar[_Spent | None] = contextvars.ContextVar("omerender_expanded_chars", default=None)


@contextlib.contextmanager
def render_budget():
    """Count every expansion inside against :data:`limits.MAX_EXPANDED_CHARS`, across all InferenceServices."""
    token = _SPENT.set(_Spent())
    try:
        yield
    finally:
        _SPENT.reset(token)


class PlaceholderError(ValueError):
    """A placeholder that does not parse or names data that does not exist."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def expand(text: str, meta: dict) -> str:
    """Evaluate the placeholders in ``text`` over the isvc metadata ``meta``.

    Strings without ``{{`` are returned unchanged.
    """
    if "{{" not in text:
        return text
    return _expander(text, meta, MAX_ACTIONS).run()


def _expander(text: str, meta: dict, actions_left: int, scalars: dict = SCALARS) -> "_Expander":
    if len(text) > MAX_TEXT_CHARS:
        raise PlaceholderError(f"value is longer than {MAX_TEXT_CHARS} characters; "
                               "placeholders are not expanded in values this long")
    return _Expander(text, meta, actions_left, scalars)


def expand_container(container: dict, meta: dict, path: str) -> dict:
    """The container with every string value holding ``{{`` expanded (map keys never): a new one, or ``container``
    itself where no string holds one (the pod build's own copy, so no second copy is made).

    Errors name the field: ``invalid placeholder in <path>.command[17]: <reason>``.
    """
    if "{{" not in repr(container):  # no string holds one (repr keeps braces): nothing to walk
        return container
    return {key: _expand_value(value, meta, path, key) for key, value in container.items()}


def _expand_value(value, meta: dict, path: str, subpath: str):
    if isinstance(value, str):
        return _expand_field(value, meta, f"{path}.{subpath}")
    if isinstance(value, dict):
        return {key: _expand_value(item, meta, path, f"{subpath}.{key}") for key, item in value.items()}
    if isinstance(value, list):
        return [_expand_value(item, meta, path, f"{subpath}[{i}]") for i, item in enumerate(value)]
    return value


def expand_template(text: str, meta: dict, field: str, scalars: dict, where: str) -> str:
    """Expand one template from the input (an ingress ``domainTemplate``), counted against the render's budget.

    ``scalars`` maps the template's string fields (``.Name``) to keys of ``meta``; ``where`` names the template in
    messages (``invalid placeholder in <where>: <reason>``); ``field`` is the input field the error points at.
    """
    return _expand_field(text, meta, field, scalars, where)


def _expand_field(text: str, meta: dict, field: str, scalars: dict = SCALARS, where: str | None = None) -> str:
    where = where or field
    if "{{" not in text:
        return text
    spent = _SPENT.get()
    if spent is None:
        spent = _Spent()  # outside a render: this value alone is counted
    if spent.over:
        return text
    expander = None
    try:
        expander = _expander(text, meta, limits.MAX_PLACEHOLDER_ACTIONS - spent.actions, scalars)
        value = expander.run()
    except PlaceholderError as err:
        # the actions run before the failure count too: a template shared by every InferenceService (a
        # domainTemplate) that fails after 10,000 actions would otherwise run them again for each one
        spent.actions += expander.actions if expander is not None else 0
        raise OmeError(f"invalid placeholder in {where}: {err.reason}", field=field) from None
    except _OutOfActions:
        spent.over = True  # a limit of the whole render: it stops here (every later value would pass it too)
        raise BudgetError(f"placeholders in {where} take the actions run across the render past "
                       f"{limits.MAX_PLACEHOLDER_ACTIONS:,} (an action prints something or nothing, {{{{\"\"}}}} "
                       "included); use fewer placeholders, or render fewer InferenceServices at a time",
                       field=field) from None
    spent.actions += expander.actions
    _spend(spent, len(value), field, where)
    return value


def charge_printed(chars: int, actions: int) -> bool:
    """Count text another template printed (an AutoscalerPolicy's trigger metadata) against the render's budgets
    of printed characters and actions; False once past either (the caller reports it)."""
    spent = _SPENT.get()
    if spent is None:
        return True
    spent.actions += actions
    spent.chars += chars
    if spent.actions > limits.MAX_PLACEHOLDER_ACTIONS or spent.chars > limits.MAX_EXPANDED_CHARS:
        spent.over = True
    return not spent.over


def _spend(spent: _Spent, chars: int, field: str, where: str) -> None:
    spent.chars += chars
    if spent.chars > limits.MAX_EXPANDED_CHARS:
        spent.over = True
        raise BudgetError(f"placeholders in {where} take the text they print past {limits.MAX_EXPANDED_CHARS:,} "
                       "characters across the render; print shorter labels and annotations, or fewer of them",
                       field=field)


class _Expander:
    """One pass over one string: text is copied, each action is lexed and evaluated."""

    def __init__(self, text: str, meta: dict, actions_left: int = MAX_ACTIONS, scalars: dict = SCALARS):
        self.text = text
        self.meta = meta
        self.scalars = scalars
        self.out: list[str] = []
        self.out_len = 0
        self.actions = 0
        self.actions_left = actions_left  # of the render's budget

    def run(self) -> str:
        text, pos = self.text, 0
        while True:
            start = text.find("{{", pos)
            if start < 0:
                self.emit(text[pos:])
                return "".join(self.out)
            self.actions += 1
            if self.actions > MAX_ACTIONS:
                raise PlaceholderError(f"more than {MAX_ACTIONS} actions in one value")
            if self.actions > self.actions_left:
                raise _OutOfActions()
            left_trim = _has_left_trim(text, start + 2)
            before = text[pos:start]
            self.emit(before.rstrip(SPACE) if left_trim else before)
            pos = self.action(start, start + 4 if left_trim else start + 2)

    def emit(self, piece: str) -> None:
        self.out_len += len(piece)
        if self.out_len > MAX_OUTPUT_CHARS:
            raise PlaceholderError(f"the expanded value is longer than {MAX_OUTPUT_CHARS} characters")
        self.out.append(piece)

    def action(self, start: int, body: int) -> int:
        """Handle the action whose ``{{`` is at ``start``; return where the text resumes."""
        text = self.text
        if text.startswith("/*", body):
            return self.comment(start, body)
        if text.startswith("-", start + 2) and body == start + 2:
            self.check_no_bad_left_trim(start)
        lexer = _ActionLexer(text, start, body)
        tokens = lexer.tokens()
        self.emit(_evaluate(tokens, self.meta, lexer.snippet(), self.scalars))
        end = lexer.end
        if lexer.right_trim:
            while end < len(text) and text[end] in SPACE:
                end += 1
        return end

    def check_no_bad_left_trim(self, start: int) -> None:
        # "{{-3}}" is the number -3 in Go; here it can only be a mistyped trim marker.
        raise PlaceholderError(f'{_snippet_from(self.text, start)}: a trim marker needs white space '
                               'after it: write "{{- " (Go reads "{{-x" as a negative number)')

    def comment(self, start: int, body: int) -> int:
        text = self.text
        close = text.find("*/", body + 2)
        if close < 0:
            raise PlaceholderError(f"{_snippet_from(text, start)}: unclosed comment")
        pos = close + 2
        if text.startswith("}}", pos):
            return pos + 2
        if _has_right_trim(text, pos):
            pos += 4
            while pos < len(text) and text[pos] in SPACE:
                pos += 1
            return pos
        raise PlaceholderError(f'{_snippet_from(text, start)}: a comment must end right before '
                               '"}}" or " -}}": write {{/* ... */}}')


def _has_left_trim(text: str, pos: int) -> bool:
    return text.startswith("-", pos) and pos + 1 < len(text) and text[pos + 1] in SPACE


def _has_right_trim(text: str, pos: int) -> bool:
    return pos + 1 < len(text) and text[pos] in SPACE and text.startswith("-}}", pos + 1)


def _is_ident_char(ch: str) -> bool:
    return ch == "_" or ch.isalpha() or ch.isdecimal()


def _snippet_from(text: str, start: int) -> str:
    piece = text[start:start + SNIPPET_CHARS]
    return piece + "..." if len(text) > start + SNIPPET_CHARS else piece


class _ActionLexer:
    """Tokens of one action: ``("field", [names])``, ``("dot",)``, ``("ident", name)``,
    ``("string", value)``. Sets ``end`` (just past the closing delimiter) and ``right_trim``."""

    def __init__(self, text: str, start: int, body: int):
        self.text = text
        self.start = start
        self.pos = body
        self.end = body
        self.right_trim = False

    def snippet(self) -> str:
        text = self.text[self.start:self.end]
        return text if len(text) <= SNIPPET_CHARS else text[:SNIPPET_CHARS] + "..."

    def fail(self, detail: str, unsupported: bool = True) -> PlaceholderError:
        """An error quoting the action (up to its ``}}`` if there is one)."""
        close = self.text.find("}}", self.pos)
        if close >= 0:
            self.end = close + 2
            return _error(self.snippet(), detail, unsupported)
        return _error(_snippet_from(self.text, self.start), detail, unsupported)

    def tokens(self) -> list[tuple]:
        found: list[tuple] = []
        while not self.at_close():
            if self.pos >= len(self.text):
                raise PlaceholderError(f'{_snippet_from(self.text, self.start)}: "{{{{" without "}}}}"; '
                                       f"{ESCAPE_HINT}")
            ch = self.text[self.pos]
            if ch in SPACE:
                self.pos += 1
            else:
                found.append(self.token(ch))
        return found

    def at_close(self) -> bool:
        if self.text.startswith("}}", self.pos):
            self.end = self.pos + 2
            return True
        if _has_right_trim(self.text, self.pos):
            self.end = self.pos + 4
            self.right_trim = True
            return True
        return False

    def token(self, ch: str) -> tuple:
        if ch == ".":
            return self.field()
        if ch == '"':
            return ("string", self.quoted())
        if ch == "`":
            return ("string", self.raw())
        if ch.isdecimal() or ch in "+-":
            raise self.fail("numbers are not supported")
        if _is_ident_char(ch):
            return ("ident", self.ident())
        if ch == "/" and self.text.startswith("*", self.pos + 1):
            raise self.fail('a comment must start right after "{{": write {{/* ... */}}', False)
        raise self.fail(_unexpected(ch))

    def ident(self) -> str:
        begin = self.pos
        while self.pos < len(self.text) and _is_ident_char(self.text[self.pos]):
            self.pos += 1
        self.check_terminator()
        return self.text[begin:self.pos]

    def is_terminated(self, pos: int) -> bool:
        text = self.text
        return pos >= len(text) or text[pos] in SPACE or text.startswith("}}", pos)

    def check_terminator(self) -> None:
        """Go needs white space or the closing delimiter after a word."""
        if self.is_terminated(self.pos):
            return
        if self.text.startswith("-}}", self.pos):
            raise self.fail('a trim marker needs white space before it: write " -}}"', False)
        raise self.fail(_unexpected(self.text[self.pos]))

    def field(self) -> tuple:
        text, begin = self.text, self.pos
        names: list[str] = []
        bad_name = False
        while self.pos < len(text) and text[self.pos] == ".":
            name_start = self.pos = self.pos + 1
            while self.pos < len(text) and _is_ident_char(text[self.pos]):
                self.pos += 1
            name = text[name_start:self.pos]
            if not names and not name and self.is_terminated(name_start):
                return ("dot",)
            if not names and name[:1].isdecimal():
                raise self.fail("numbers are not supported")
            bad_name = not name or name[0].isdecimal()
            if bad_name:
                break
            names.append(name)
        if names and names[0] in MAPS and self.pos > begin + len(names[0]) + 1:
            if bad_name or len(names) > 2 or not self.is_terminated(self.pos):
                raise self.fail(_key_detail(names[0], self.map_key(begin + len(names[0]) + 2)), False)
        self.check_terminator()
        return ("field", names)

    def map_key(self, key_start: int) -> str:
        """The key as the user meant it: up to white space or the closing delimiter."""
        key_end = key_start
        while not self.is_terminated(key_end) and not self.text.startswith("-}}", key_end):
            key_end += 1
        return self.text[key_start:key_end]

    def quoted(self) -> str:
        text, pos = self.text, self.pos + 1
        while pos < len(text) and text[pos] not in '"\n':
            if text[pos] == "\\" and text.startswith("\n", pos + 1):
                break  # Go: an escaped newline ends the literal unterminated
            pos += 2 if text[pos] == "\\" else 1
        if pos >= len(text) or text[pos] != '"':
            raise self.fail("unterminated quoted string", False)
        body = text[self.pos + 1:pos]
        self.pos = pos + 1
        self.check_terminator()
        return _unquote(body, self)

    def raw(self) -> str:
        close = self.text.find("`", self.pos + 1)
        if close < 0:
            raise self.fail("unterminated raw quoted string", False)
        body = self.text[self.pos + 1:close]
        self.pos = close + 1
        self.check_terminator()
        return body.replace("\r", "")  # Go drops carriage returns from raw strings


def _error(where: str, detail: str, unsupported: bool) -> PlaceholderError:
    if unsupported:
        return PlaceholderError(f"{where} is not a supported placeholder: {detail}; {ESCAPE_HINT}")
    return PlaceholderError(f"{where}: {detail}")


def _unexpected(ch: str) -> str:
    if ch == "|":
        return "pipelines are not supported"
    if ch == "$":
        return "variables are not supported"
    if ch in "()":
        return "parentheses are not supported"
    return f'unexpected "{ch}"'


def _key_detail(map_name: str, key: str) -> str:
    if not key:
        return f'.{map_name}. needs a key after the dot: write .{map_name}.<key> or index .{map_name} "<key>"'
    example = f"{{{{index .{map_name} `{key}`}}}}" if "`" not in key else f'{{{{index .{map_name} "<key>"}}}}'
    return (f'the key "{key}" cannot be written as .{map_name}.<key>, which allows only letters, digits '
            f'and "_" (Go reads "." as a field chain and stops at "-" or "/"); write {example}')


def _unquote(body: str, lexer: _ActionLexer) -> str:
    """Go's strconv.Unquote for a double-quoted literal (escapes build UTF-8 bytes)."""
    out = bytearray()
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out += ch.encode("utf-8", "surrogatepass")
            i += 1
            continue
        esc = body[i + 1]
        if esc in SIMPLE_ESCAPES:
            out += SIMPLE_ESCAPES[esc].encode()
            i += 2
        elif esc in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[esc]
            digits = body[i + 2:i + 2 + width]
            if len(digits) != width or any(c not in "0123456789abcdefABCDEF" for c in digits):
                raise lexer.fail(f'invalid escape "\\{esc}{digits}" in string literal', False)
            value = int(digits, 16)
            if esc == "x":
                out.append(value)
            elif value > 0x10FFFF or 0xD800 <= value <= 0xDFFF:
                raise lexer.fail(f'invalid escape "\\{esc}{digits}" in string literal', False)
            else:
                out += chr(value).encode("utf-8")
            i += 2 + width
        elif esc in "01234567":
            digits = body[i + 1:i + 4]
            if len(digits) != 3 or any(c not in "01234567" for c in digits) or int(digits, 8) > 255:
                raise lexer.fail(f'invalid escape "\\{digits}" in string literal', False)
            out.append(int(digits, 8))
            i += 4
        else:
            raise lexer.fail(f'invalid escape "\\{esc}" in string literal', False)
    try:
        return out.decode("utf-8")
    except UnicodeDecodeError:
        raise lexer.fail("string literal is not valid UTF-8", False) from None


def _evaluate(tokens: list[tuple], meta: dict, snippet: str, scalars: dict = SCALARS) -> str:
    if not tokens:
        raise _error(snippet, "empty action", False)
    head, rest = tokens[0], tokens[1:]
    if head[0] == "ident":
        return _call(head[1], rest, meta, snippet)
    if rest:
        raise _error(snippet, "an action holds one value; write one action per value", True)
    if head[0] == "string":
        return head[1]
    if head[0] == "dot":
        raise _error(snippet, f'"." is the whole object; use {_field_list(scalars, ".Labels.<key>", " or ")}.'
                              f'Annotations.<key>', False)
    return _field_value(head[1], meta, snippet, scalars)


def _call(name: str, args: list[tuple], meta: dict, snippet: str) -> str:
    if name in GO_KEYWORDS:
        raise _error(snippet, f'"{name}" is not supported (no if, range, with or other control actions)',
                     True)
    if name != "index":
        raise _error(snippet, f'function "{name}" is not defined (the only function is index)', True)
    if (len(args) != 2 or args[0][0] != "field" or len(args[0][1]) != 1 or args[0][1][0] not in MAPS
            or args[1][0] != "string"):
        raise _error(snippet, 'index takes .Labels or .Annotations and one quoted key, e.g. '
                              '{{index .Labels "app.kubernetes.io/name"}}', False)
    value = _map_of(meta, args[0][1][0]).get(args[1][1])
    return "" if value is None else _go_print(value)


def _field_list(scalars: dict, last_map: str, conjunction: str) -> str:
    return ", ".join(f".{name}" for name in scalars) + f", {last_map}{conjunction}"


def _field_value(names: list[str], meta: dict, snippet: str, scalars: dict = SCALARS) -> str:
    first = names[0]
    if first in scalars:
        if len(names) > 1:
            raise _error(snippet, f'.{first} is a string and has no field "{names[1]}"', False)
        return _go_print(meta.get(scalars[first]))
    if first not in MAPS:
        raise _error(snippet, f"unknown field .{first}; the fields are {_field_list(scalars, '.Labels', ' and ')}"
                              ".Annotations", False)
    if len(names) == 1:
        raise _error(snippet, f'.{first} needs a key: write .{first}.<key> or index .{first} "<key>"',
                     False)
    mapping = _map_of(meta, first)
    return _go_print(mapping[names[1]]) if names[1] in mapping else NO_VALUE


def _map_of(meta: dict, field: str) -> dict:
    value = meta.get(MAPS[field])
    return value if isinstance(value, dict) else {}


def _go_print(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
