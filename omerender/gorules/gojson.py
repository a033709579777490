"""JSON read as Go's ``encoding/json`` reads it (Go 1.21+ semantics), for every JSON value OME reads.

OME's controller parses each data value of ``inferenceservice-config`` with ``json.Unmarshal`` into a Go struct
(pkg/controller/v1beta1/controllerconfig/configmap.go), the ``ome.io/ingress-additional-gateways`` annotation into
``[]IngressGatewaySpec``, and its model agent a model's ``config.json``. What that means, and what this module
reproduces:

* the whole text is checked first; a syntax error is the scanner's message (``invalid character 'x' looking for
  beginning of value``, ``unexpected end of JSON input``), whatever the types;
* an object key names a struct field by its json name, exactly or else case-insensitively; unknown keys are
  skipped; a key given twice is decoded twice, into the same field (the last scalar wins, objects merge);
* a value of the wrong type is ``json: cannot unmarshal <what> into Go struct field <Struct>.<path> of type <T>``
  (the innermost struct's name and the json path from the top), the first one in document order;
* ``null`` clears a pointer, slice or map and leaves anything else as it was;
* ``NaN``, ``Infinity`` and any other literal JSON lacks are syntax errors (Python's ``json`` takes them);
* a lone surrogate escape (``\\ud800``) or character is U+FFFD, as Go's decoder writes it (Python's ``json``
  keeps it, and the text then cannot be written as UTF-8);
* containers nest at most 10,000 deep, read without recursion.

:func:`loads` is ``json.Unmarshal`` into ``interface{}`` (numbers kept as Python reads them: an int or a
float). :func:`scan` parses text into :class:`Obj` / list / :class:`Num` / str / bool / None nodes (keys kept in order,
duplicates kept); :func:`decode` decodes a node against a :class:`GoType` into plain Python values: a struct is a
dict of the json names set (a field cleared by ``null`` is absent), a pointer is its target, ``None`` is nil.
"""
from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field

from .text import fold, go_string

MAX_DEPTH = 10000  # encoding/json's maxNestingDepth
_WS = " \t\r\n"
_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"')
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_LITERALS = {"t": ("true", True), "f": ("false", False), "n": ("null", None)}


class GoJSONError(Exception):
    """An error in Go's words (the text ``err.Error()`` gives); ``offset``: for a syntax error, where in the text
    the scanner stopped (the character it names, or the end), so a message can point at it."""

    def __init__(self, text: str, offset: int | None = None):
        super().__init__(text)
        self.offset = offset


class Obj(list):
    """A JSON object: its (key, value) pairs in document order, duplicates kept; ``starts``: where each key starts
    in the text (for messages about a key)."""

    def __init__(self, *args):
        super().__init__(*args)
        self.starts: list[int] = []


@dataclass(frozen=True)
class Num:
    """A JSON number as written (Go decodes the literal text, not a float)."""

    text: str


# ---------------------------------------------------------------- the scanner (encoding/json/scanner.go)

def quote_char(char: str) -> str:
    """Go's quoteChar: the first byte of ``char``'s UTF-8, quoted as strconv.Quote quotes that byte as a rune."""
    byte = char.encode("utf-8", "surrogatepass")[0]
    if byte == 0x27:
        return "'\\''"
    if byte == 0x22:
        return "'\"'"
    escapes = {7: "\\a", 8: "\\b", 12: "\\f", 10: "\\n", 13: "\\r", 9: "\\t", 11: "\\v", 0x5c: "\\\\"}
    if byte in escapes:
        return f"'{escapes[byte]}'"
    if byte < 0x20 or byte == 0x7F:
        return f"'\\x{byte:02x}'"
    if 0x80 <= byte <= 0xA0 or byte == 0xAD:  # not printable to unicode.IsPrint
        return f"'\\u{byte:04x}'"
    return f"'{chr(byte)}'"


def _invalid(char: str, context: str, offset: int | None = None) -> GoJSONError:
    return GoJSONError(f"invalid character {quote_char(char)} {context}", offset)


_EOF = "unexpected end of JSON input"


class _Scanner:
    def __init__(self, text: str):
        self.text = text
        self.pos = 0

    def skip_ws(self) -> str | None:
        text, pos = self.text, self.pos
        while pos < len(text) and text[pos] in _WS:
            pos += 1
        self.pos = pos
        return text[pos] if pos < len(text) else None

    def expect(self) -> str:
        char = self.skip_ws()
        if char is None:
            raise GoJSONError(_EOF)
        return char

    def string(self) -> str:
        match = _STRING.match(self.text, self.pos)
        if match is None:
            raise self._string_error()
        self.pos = match.end()
        return go_string(json.loads(match.group()))

    def _string_error(self) -> GoJSONError:
        text, pos = self.text, self.pos + 1
        while pos < len(text):
            char = text[pos]
            if char == '"':
                break
            if char < " ":
                return _invalid(char, "in string literal", pos)
            if char == "\\":
                pos += 1
                if pos >= len(text):
                    break
                if text[pos] == "u":
                    for offset in range(1, 5):
                        if pos + offset >= len(text):
                            return GoJSONError(_EOF)
                        if text[pos + offset] not in "0123456789abcdefABCDEF":
                            return _invalid(text[pos + offset], "in \\u hexadecimal character escape", pos + offset)
                    pos += 4
                elif text[pos] not in '"\\/bfnrt':
                    return _invalid(text[pos], "in string escape code", pos)
            pos += 1
        return GoJSONError(_EOF)

    def number(self) -> Num:
        match = _NUMBER.match(self.text, self.pos)
        if match is None or match.end() == self.pos:
            raise self._number_error(self.pos + 1, "in numeric literal")
        end = match.end()
        if end < len(self.text) and self.text[end] in ".eE":  # a fraction or exponent left unfinished
            after = end + 1
            if self.text[end] == "." and not ("." in match.group() or "e" in match.group().lower()):
                raise self._number_error(after, "after decimal point in numeric literal")
            if self.text[end] in "eE" and "e" not in match.group().lower():
                if after < len(self.text) and self.text[after] in "+-":
                    after += 1
                raise self._number_error(after, "in exponent of numeric literal")
        self.pos = end
        return Num(match.group())

    def _number_error(self, pos: int, context: str) -> GoJSONError:
        if pos >= len(self.text):
            return GoJSONError(_EOF)
        return _invalid(self.text[pos], context, pos)

    def literal(self):
        word, value = _LITERALS[self.text[self.pos]]
        for i, expected in enumerate(word[1:], start=1):
            at = self.pos + i
            if at >= len(self.text):
                raise GoJSONError(_EOF)
            if self.text[at] != expected:
                raise _invalid(self.text[at], f"in literal {word} (expecting {quote_char(expected)})", at)
        self.pos += len(word)
        return value


def scan(text: str):
    """The JSON value of ``text``; :class:`GoJSONError` with the scanner's message when it is not one."""
    scanner = _Scanner(text)
    try:
        value = _value(scanner)
        char = scanner.skip_ws()
        if char is not None:
            raise _invalid(char, "after top-level value")
    except GoJSONError as err:
        raise _placed(err, scanner) from None
    return value


def loads(text: str):
    """``text`` as Go decodes it: dict (a key given twice: the last value), list, str, int or float, bool, None.
    :class:`GoJSONError` with Go's message when it is not JSON to Go."""
    return plain(scan(text))


def plain(node):
    """A scanned node as plain Python values, built without recursion (a node may nest 10,000 deep)."""
    if not isinstance(node, list):
        return _plain_scalar(node)
    out = {} if isinstance(node, Obj) else []
    stack = [(node, iter(node), out)]
    while stack:
        source, items, target = stack[-1]
        for item in items:
            key, value = item if isinstance(source, Obj) else (None, item)
            child = ({} if isinstance(value, Obj) else []) if isinstance(value, list) else _plain_scalar(value)
            if key is None:
                target.append(child)
            else:
                target[key] = child
            if isinstance(value, list):
                stack.append((value, iter(value), child))
                break
        else:
            stack.pop()
    return out


_INTEGER = re.compile(r"-?[0-9]{1,300}")


def _plain_scalar(node):
    """A number as Python's json reads it: an int where written as one, else a float (infinite past float64's
    range: the typed reader that wants the field says so, as Go's decoder does for the struct field it fills,
    while a field nobody reads may hold it)."""
    if not isinstance(node, Num):
        return node
    return int(node.text) if _INTEGER.fullmatch(node.text) else float(node.text)


def scan_prefix(text: str) -> tuple[object, int]:
    """The first JSON value of ``text`` and where it ends (a json.Decoder's Decode)."""
    scanner = _Scanner(text)
    try:
        return _value(scanner), scanner.pos
    except GoJSONError as err:
        raise _placed(err, scanner) from None


def _placed(err: GoJSONError, scanner: _Scanner) -> GoJSONError:
    """``err`` with its offset: where it was raised if it says, else for an end of input just past the last
    character that is not white space (where the text stops short), else the scanner's position (the character
    a structural error names)."""
    if str(err) == _EOF:
        err.offset = len(scanner.text.rstrip(_WS))
    elif err.offset is None:
        err.offset = scanner.pos
    return err


def _value(scanner: _Scanner):
    """One value, iteratively (nesting as deep as Go allows never reaches Python's recursion limit)."""
    stack: list[tuple[list, str | None]] = []  # open containers and, for objects, the pending key
    while True:
        char = scanner.expect()
        value, opened = _start(scanner, char, len(stack))
        if opened is not None:
            stack.append((opened, None))
            if _closes_empty(scanner, opened):
                value, opened = stack.pop()[0], None
            elif isinstance(opened, Obj):
                stack[-1] = (opened, _placed_key(scanner, opened))
                continue
            else:
                continue
        while True:  # place the finished value, closing every container it finishes
            if not stack:
                return value
            container, key = stack[-1]
            if isinstance(container, Obj):
                container.append((key, value))
                char = scanner.expect()
                if char == ",":
                    scanner.pos += 1
                    stack[-1] = (container, _placed_key(scanner, container))
                    break
                if char != "}":
                    raise _invalid(char, "after object key:value pair")
            else:
                container.append(value)
                char = scanner.expect()
                if char == ",":
                    scanner.pos += 1
                    break
                if char != "]":
                    raise _invalid(char, "after array element")
            scanner.pos += 1
            value = stack.pop()[0]


def _start(scanner: _Scanner, char: str, depth: int):
    if char in "{[":
        if depth + 1 > MAX_DEPTH:
            raise _invalid(char, "exceeded max depth")
        scanner.pos += 1
        return None, (Obj() if char == "{" else [])
    if char == '"':
        return scanner.string(), None
    if char == "-" or "0" <= char <= "9":
        return scanner.number(), None
    if char in _LITERALS:
        return scanner.literal(), None
    raise _invalid(char, "looking for beginning of value")


def _closes_empty(scanner: _Scanner, opened: list) -> bool:
    char = scanner.expect()
    if char == ("}" if isinstance(opened, Obj) else "]"):
        scanner.pos += 1
        return True
    return False


def _key(scanner: _Scanner) -> str:
    char = scanner.expect()
    if char != '"':
        raise _invalid(char, "looking for beginning of object key string")
    key = scanner.string()
    char = scanner.expect()
    if char != ":":
        raise _invalid(char, "after object key")
    scanner.pos += 1
    return key


def _placed_key(scanner: _Scanner, container: Obj) -> str:
    """The next key of ``container``, its start noted in ``container.starts``."""
    scanner.skip_ws()
    start = scanner.pos
    key = _key(scanner)
    container.starts.append(start)
    return key


# ---------------------------------------------------------------- Go types and the decoder (decode.go)

@dataclass(frozen=True)
class GoType:
    kind: str                     # struct, ptr, int, float, string, bool, slice, map, intorstr, any
    name: str                     # as reflect.Type.String() prints it
    bits: int = 64
    elem: "GoType | None" = None
    fields: tuple = ()            # struct: ((json name, GoType), ...)
    exact: dict = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self):
        if self.kind == "struct":
            self.exact.update(self.fields)

    @property
    def short(self) -> str:
        return self.name.rpartition(".")[2]


def struct(name: str, *fields: tuple[str, GoType]) -> GoType:
    return GoType("struct", name, fields=tuple(fields))


def ptr(elem: GoType) -> GoType:
    return GoType("ptr", elem.name, elem=elem)


def slice_of(elem: GoType) -> GoType:
    return GoType("slice", f"[]{elem.name}", elem=elem)


def map_of(elem: GoType) -> GoType:
    return GoType("map", f"map[string]{elem.name}", elem=elem)


INT = GoType("int", "int", 64)
INT32 = GoType("int", "int32", 32)
INT64 = GoType("int", "int64", 64)
FLOAT64 = GoType("float", "float64")
STRING = GoType("string", "string")
BOOL = GoType("bool", "bool")
INT_OR_STRING = GoType("intorstr", "intstr.IntOrString")
ANY = GoType("any", "interface {}")


@dataclass(frozen=True)
class IntOrString:
    """k8s.io/apimachinery intstr.IntOrString: an int32 or a string, as written."""

    value: int | str

    @property
    def is_int(self) -> bool:
        return isinstance(self.value, int)


@dataclass
class Decoded:
    """What decoding found beside the value: keys Go read but a reader should hear about."""

    duplicates: list[str] = field(default_factory=list)   # json paths given twice (the last one counts)
    unknown: list[str] = field(default_factory=list)      # json paths Go skipped
    folded: list[tuple[str, str]] = field(default_factory=list)  # (path as written, field it matched)
    near: dict[str, str] = field(default_factory=dict)  # an unknown path to the field it nearly names
    starts: dict[str, int] = field(default_factory=dict)  # an unknown path to where its key starts in the text


NEAR_CUTOFF = 0.8   # how alike an unknown key and a field's json name must be to suggest the field
NEAR_KEYS = 100     # unknown keys compared per decode: a flood of them costs no more than this


def _suggest(key: str, gotype: GoType, ctx: _Context) -> None:
    """Note the field an unknown ``key`` nearly names (``enabelGatewayAPI``: ``enableGatewayAPI``)."""
    if len(ctx.found.near) >= NEAR_KEYS or len(ctx.found.unknown) > 10 * NEAR_KEYS or len(key) > 100:
        return
    close = difflib.get_close_matches(key, [name for name, _ in gotype.fields], n=1, cutoff=NEAR_CUTOFF)
    if close:
        ctx.found.near[_join(ctx.path, key)] = _join(ctx.path, close[0])


def _kind_of(node) -> str:
    if isinstance(node, Obj):
        return "object"
    if isinstance(node, list):
        return "array"
    if isinstance(node, str):
        return "string"
    if isinstance(node, bool):
        return "bool"
    return "number"


class _Context:
    def __init__(self, found: Decoded):
        self.struct: GoType | None = None
        self.stack: list[str] = []
        self.found = found

    def type_error(self, what: str, gotype: GoType) -> GoJSONError:
        if self.struct is not None or self.stack:
            where = f"{self.struct.short if self.struct else ''}.{'.'.join(self.stack)}"
            return GoJSONError(f"json: cannot unmarshal {what} into Go struct field {where} of type {gotype.name}")
        return GoJSONError(f"json: cannot unmarshal {what} into Go value of type {gotype.name}")

    @property
    def path(self) -> str:
        return ".".join(self.stack)


def decode(node, gotype: GoType, found: Decoded | None = None, current=None):
    """``node`` (from :func:`scan`) decoded into ``gotype``, over ``current`` (what the target held)."""
    return _decode(node, gotype, current, _Context(found if found is not None else Decoded()))


def _decode(node, gotype: GoType, current, ctx: _Context):
    kind = gotype.kind
    if node is None:
        return None if kind in ("ptr", "slice", "map", "any") else current
    if kind == "ptr":
        return _decode(node, gotype.elem, current, ctx)
    if kind == "any":
        return node
    if kind == "intorstr":
        return _int_or_string(node, ctx)
    if kind == "struct":
        return _struct(node, gotype, current, ctx)
    if kind == "map":
        return _map(node, gotype, current, ctx)
    if kind == "slice":
        return _slice(node, gotype, current, ctx)
    return _scalar(node, gotype, ctx)


def _scalar(node, gotype: GoType, ctx: _Context):
    kind = gotype.kind
    if kind == "string" and isinstance(node, str):
        return node
    if kind == "bool" and isinstance(node, bool):
        return node
    if isinstance(node, Num) and kind == "int":
        if len(node.text) > 40 or not re.fullmatch(r"-?[0-9]+", node.text):  # 40 digits: past any int64
            raise ctx.type_error(f"number {_shown(node.text)}", gotype)
        value = int(node.text)
        if not -(1 << (gotype.bits - 1)) <= value < (1 << (gotype.bits - 1)):
            raise ctx.type_error(f"number {node.text}", gotype)
        return value
    if isinstance(node, Num) and kind == "float":
        value = float(node.text)
        if value in (float("inf"), float("-inf")):
            raise ctx.type_error(f"number {_shown(node.text)}", gotype)
        return value
    raise ctx.type_error(_kind_of(node), gotype)


def _shown(literal: str) -> str:
    """A number literal as Go's message prints it, cut short past 64 characters (Go prints it all)."""
    return literal if len(literal) <= 64 else f"{literal[:32]}... ({len(literal)} characters)"


def _int_or_string(node, ctx: _Context) -> IntOrString:
    """intstr.IntOrString.UnmarshalJSON: a string, else json.Unmarshal into an int32 (its error in context)."""
    if isinstance(node, str):
        return IntOrString(node)
    return IntOrString(_scalar(node, INT32, ctx))


def _struct(node, gotype: GoType, current, ctx: _Context) -> dict:
    if not isinstance(node, Obj):
        raise ctx.type_error(_kind_of(node), gotype)
    result = dict(current) if isinstance(current, dict) else {}
    folded = {fold(name): (name, ftype) for name, ftype in gotype.fields}
    seen: set[str] = set()
    outer_struct, depth = ctx.struct, len(ctx.stack)
    for index, (key, value) in enumerate(node):
        if key in gotype.exact:
            name, ftype = key, gotype.exact[key]
        elif fold(key) in folded:
            name, ftype = folded[fold(key)]
            ctx.found.folded.append((_join(ctx.path, key), _join(ctx.path, name)))
        else:
            ctx.found.unknown.append(_join(ctx.path, key))
            if index < len(node.starts):
                ctx.found.starts.setdefault(_join(ctx.path, key), node.starts[index])
            _suggest(key, gotype, ctx)
            continue
        if name in seen:
            ctx.found.duplicates.append(_join(ctx.path, name))
        seen.add(name)
        ctx.stack.append(name)
        ctx.struct = gotype
        decoded = _decode(value, ftype, result.get(name), ctx)
        del ctx.stack[depth:]
        ctx.struct = outer_struct
        if decoded is None and ftype.kind in ("ptr", "slice", "map", "any"):
            result.pop(name, None)
        else:
            result[name] = decoded
    return result


def _map(node, gotype: GoType, current, ctx: _Context) -> dict:
    if not isinstance(node, Obj):
        raise ctx.type_error(_kind_of(node), gotype)
    result = dict(current) if isinstance(current, dict) else {}
    seen: set[str] = set()
    for key, value in node:
        if key in seen:
            ctx.found.duplicates.append(_join(ctx.path, f"[{json.dumps(key)}]"))
        seen.add(key)
        result[key] = _decode(value, gotype.elem, None, ctx)  # a map element starts from zero each time
    return result


def _slice(node, gotype: GoType, current, ctx: _Context) -> list:
    if not isinstance(node, list) or isinstance(node, Obj):
        raise ctx.type_error(_kind_of(node), gotype)
    old = current if isinstance(current, list) else []
    # Go decodes element i into the slice's existing element i, so a repeated key merges element-wise.
    return [_decode(item, gotype.elem, old[i] if i < len(old) else None, ctx) for i, item in enumerate(node)]


def _join(path: str, key: str) -> str:
    if key.startswith("["):
        return f"{path}{key}"
    return f"{path}.{key}" if path else key
