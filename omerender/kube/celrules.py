"""CRD validation rules (``x-kubernetes-validations``) evaluated as the API server evaluates them on create
(k8s.io/apiextensions-apiserver's ``validateExpressions``), with the CEL evaluator of PyPI's
``common-expression-language`` (compiled: an expression never runs Python code) and Kubernetes' CEL libraries
(:mod:`.cellib`).

Per rule: ``self`` is the value of the schema node that holds the rule; a rule that reads ``oldSelf`` (a transition
rule) is skipped, as the API server skips it on create, unless ``optionalOldSelf`` is true, where ``oldSelf`` is an
empty optional. A failed rule's message is its ``messageExpression``'s value when that evaluates to a non-empty
one-line string (else, as in the API server, the failure is dropped and) its ``message``, else ``failed rule:
RULE``; ``fieldPath`` names the field the message is about and ``reason`` its kind (``FieldValueForbidden``...).
An evaluation error is the API server's ``ERROR evaluating rule: RULE``; a function no library here defines is an
error naming it, never a pass.

Cost: the evaluator has no cost tracking, so the API server's runtime limits (1,000,000 per expression,
apiextensions-apiserver's PerCallLimit; 10,000,000 per object, RuntimeCELCostBudget) are held by an estimate made
before an expression runs, from the value's size and the nesting of its comprehensions (:func:`estimated_cost`):
an expression that could cost more is reported with the API server's text, never run.
"""
from __future__ import annotations

import contextlib
import contextvars
import re
from dataclasses import dataclass
from functools import lru_cache

from . import cellib

PER_CALL_LIMIT = 1_000_000          # celconfig.PerCallLimit
RUNTIME_BUDGET = 10_000_000         # celconfig.RuntimeCELCostBudget, for all the rules of one object
MAX_MESSAGE_BYTES = 5 * 1024        # celconfig.MaxEvaluatedMessageExpressionSizeBytes
MAX_RULE_LENGTH = 10_000            # longer rule text is refused before it is compiled
OUT_OF_BUDGET = "validation failed due to running out of cost budget, no further validation rules will be run"
_MACROS = re.compile(r"\.\s*(all|exists|exists_one|filter|map)\s*\(")
_OLD_SELF = re.compile(r"\boldSelf\b")
_TWO_VARIABLE_MACROS = ("all", "exists", "existsOne", "exists_one", "transformList", "transformMap",
                        "transformMapEntry", "map", "filter")
_NAMESPACES = ("sets", "strings", "lists", "math", "base64", "format", "ip", "cidr", "semver", "regex")
_CALL = re.compile(r"(size|duration)\s*\(")
_CALL_FAILED = re.compile(r"Python function call failed: \w+: (.*)\. Check function arguments", re.S)
_REASONS = {"FieldValueForbidden": "Forbidden", "FieldValueRequired": "Required value",
            "FieldValueDuplicate": "Duplicate value", "FieldValueInvalid": "Invalid value"}
_budget: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar("cel_budget", default=None)


@dataclass(frozen=True)
class Failure:
    field: str   # the path of the node (with the rule's fieldPath)
    text: str    # the rule's message, or the API server's text for an error
    reason: str = "Invalid value"

    def line(self, type_name: str) -> str:
        """The API server's field error text: ``Invalid value: "object": TEXT``, ``Forbidden: TEXT``..."""
        if self.reason == "Invalid value":
            return f'Invalid value: "{type_name}": {self.text}'
        if self.reason == "Duplicate value":
            return f'Duplicate value: "{type_name}"'
        return f"{self.reason}: {self.text}"


@contextlib.contextmanager
def object_budget():
    """Rules evaluated inside share one object's runtime budget (RuntimeCELCostBudget), as in the API server."""
    token = _budget.set([RUNTIME_BUDGET])
    try:
        yield
    finally:
        _budget.reset(token)


@lru_cache(maxsize=4096)
def nesting(rule: str) -> int:
    """How deep the rule's comprehensions nest (0: none), read from its text: each macro call opens a level that its
    closing parenthesis ends."""
    depth = deepest = 0
    stack: list[bool] = []
    i = 0
    while i < len(rule):
        found = _MACROS.match(rule, i)
        if found:
            stack.append(True)
            depth += 1
            deepest = max(deepest, depth)
            i = found.end()
            continue
        char = rule[i]
        if char == "(":
            stack.append(False)
        elif char == ")" and stack:
            depth -= stack.pop()
        elif char in "'\"":
            end = rule.find(char, i + 1)
            i = len(rule) if end < 0 else end
        i += 1
    return deepest


def size(value, cap: int = PER_CALL_LIMIT) -> int:
    """The number of values in ``value`` (itself, its items and map entries, at every depth; a string counts one
    per 64 characters), counted up to ``cap``."""
    return _measure(value, cap)[0]


def _measure(value, cap: int = PER_CALL_LIMIT) -> tuple[int, bool]:
    """:func:`size`, and whether a string in ``value`` (as far as counted) holds a non-ASCII character."""
    count, todo, wide = 0, [value], False
    while todo and count < cap:
        item = todo.pop()
        count += 1
        if isinstance(item, dict):
            todo.extend(item.values())
            todo.extend(key for key in item if isinstance(key, str) and not key.isascii())
            count += len(item)
        elif isinstance(item, list):
            todo.extend(item)
        elif isinstance(item, str):
            count += len(item) // 64
            wide = wide or not item.isascii()
    return count, wide


def estimated_cost(rule: str, value) -> int:
    """An upper estimate of the expression's cost on ``value``: the value's size to the power of the nesting of its
    comprehensions (each may visit every value once per visit of the one around it), plus its length."""
    return _cost(rule, size(value))


def _cost(rule: str, count: int) -> int:
    """The estimate for a value of ``count`` values; a list the rule's text writes out is counted in its length."""
    depth = nesting(rule)
    if not depth:
        return len(rule) + count
    visits = 1
    for _ in range(depth):  # (count + len(rule)) ** depth, no larger than needed to pass the limit
        visits *= count + len(rule)
        if visits > PER_CALL_LIMIT:
            break
    return len(rule) + visits


def evaluate(rules: list, value, path: str, schema: dict | None = None) -> list[Failure]:
    """The failures of a node's ``rules`` on ``value`` (a create: no old object); ``schema``, the node's, makes the
    whole numbers of its ``type: number`` fields doubles, as the API server hands them to CEL."""
    budget = _budget.get() or [RUNTIME_BUDGET]
    failures: list[Failure] = []
    node = _Node(as_typed(value, schema) if schema and _has_numbers(_SchemaKey(schema)) else value)
    for rule in rules:
        if budget[0] < 0:
            break  # the object ran out of budget: the API server runs no further rule
        if isinstance(rule, dict) and isinstance(rule.get("rule"), str) and rule["rule"].strip():
            failure = _one(rule, node, path, budget)
            if failure is not None:
                failures.append(failure)
    return failures


class _SchemaKey:
    """A schema as a cache key, by identity (schemas are dicts, loaded once and never changed)."""

    def __init__(self, schema: dict):
        self.schema = schema

    def __hash__(self):
        return id(self.schema)

    def __eq__(self, other):
        return isinstance(other, _SchemaKey) and other.schema is self.schema


@lru_cache(maxsize=4096)
def _has_numbers(key: _SchemaKey) -> bool:
    return '"number"' in repr(key.schema).replace("'", '"')


def as_typed(value, schema):
    """``value`` with each whole number where its schema says ``type: number`` made a float (the API server's
    UnstructuredToVal makes it a CEL double: ``self.ratio + 0.5`` works on ``ratio: 1``)."""
    if not isinstance(schema, dict):
        return value
    if schema.get("type") == "number" and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, dict):
        properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        extra = schema.get("additionalProperties")
        return {key: as_typed(item, properties.get(key, extra)) for key, item in value.items()}
    if isinstance(value, list):
        return [as_typed(item, schema.get("items")) for item in value]
    return value


class _Node:
    """One node's value, measured and handed to the evaluator once for all its rules."""

    def __init__(self, value):
        self.value = value
        self.count, self.wide = _measure(value)
        self._contexts: dict = {}

    def context(self, functions: dict, old_self: bool):
        key = (tuple(functions), old_self)
        if key not in self._contexts:
            cel = cellib.engine()
            variables = {"self": self.value, **({"oldSelf": cel.OptionalValue.none()} if old_self else {})}
            self._contexts[key] = cel.Context(variables=variables, functions=functions)
        return self._contexts[key]


def _one(rule: dict, node: _Node, path: str, budget: list[int]) -> Failure | None:
    text = rule["rule"]
    old_self = _reads_old_self(text)
    if old_self and rule.get("optionalOldSelf") is not True:
        return None  # a transition rule: the API server runs it on updates only
    problem = _compile_problem(text)
    if problem:
        return Failure(path, problem)
    passed = _charge(text, node, budget)
    if passed == _PER_CALL:
        return Failure(path, f"'operation cancelled: actual cost limit exceeded': no further validation rules will be "
                             f"run due to call cost exceeds limit for rule: {_rule_name(rule)}")
    if passed == _BUDGET:
        return Failure(path, OUT_OF_BUDGET)
    result = _run(text, node, old_self)
    if result is True:
        return None
    field = path + _field_path(rule.get("fieldPath"))
    if isinstance(result, _Error):
        if result.text == cellib.COST_EXCEEDED:
            budget[0] = -1
        return Failure(path, result.message(rule))
    if result is not False:
        return Failure(path, f"rule {_rule_name(rule)} evaluated to {type(result).__name__}, not a bool")
    return _message(rule, node, field, budget)


_PER_CALL, _BUDGET = "per-call limit", "object budget"


def _charge(expression: str, node: _Node, budget: list[int]) -> str | None:
    """Charge ``expression``'s estimated cost on ``node`` to the object's ``budget``; the limit it passes, if any
    (then the budget is spent: the API server runs no further rule of the object)."""
    cost = _cost(expression, node.count)
    if cost > PER_CALL_LIMIT:
        budget[0] = -1
        return _PER_CALL
    if cost > budget[0]:
        budget[0] = -1
        return _BUDGET
    budget[0] -= cost
    return None


@dataclass(frozen=True)
class _Compiled:
    program: object
    functions: dict    # the library functions it calls: only these are handed to each run (each costs ~0.4 us)
    missing: tuple     # the functions it calls that no library defines
    functions_called: frozenset


@lru_cache(maxsize=4096)
def _compiled(text: str) -> _Compiled | str:
    """The compiled expression, or the text of why it cannot be compiled."""
    try:
        program = cellib.engine().compile(text)
    except Exception as err:  # noqa: BLE001 - the evaluator raises ValueError and others for a parse error
        return _first_line(err)
    names, spaces = program.functions(), program.variables()
    # a namespaced call (sets.contains, format.named) is named by its last part, its namespace as a variable
    called = {full for name in names for full in (name, *(f"{space}.{name}" for space in spaces))
              if full in cellib.functions()}
    missing = cellib.unimplemented(name for name in names
                                   if not any(full.rpartition(".")[2] == name for full in called))
    shown = [next((f"{space}.{name}" for space in spaces if space in _NAMESPACES and f"{space}.{name}" in text), name)
             for name in missing]
    return _Compiled(program, {name: cellib.functions()[name] for name in called}, tuple(shown), frozenset(names))


def _compile_problem(text: str) -> str | None:
    """The API server's text for a rule omerender cannot run: too long, not compiled, or calling a function no
    library here defines."""
    if len(text) > MAX_RULE_LENGTH:
        return f"rule compile error: the rule is longer than {MAX_RULE_LENGTH:,} characters"
    compiled = _compiled(text)
    if isinstance(compiled, str):
        return f"rule compile error: {compiled}"
    internal = sorted(compiled.functions_called & {cellib.CODE_POINT_SIZE, cellib.GO_DURATION})
    if internal:  # omerender's stand-ins for size and duration, which no API server defines
        return (f"rule {_short(text)} calls {', '.join(internal)}, which Kubernetes' CEL libraries do not define; it "
                f"cannot check this rule")
    macros = [name for name in compiled.missing if name.rpartition(".")[2] in _TWO_VARIABLE_MACROS]
    if macros:
        return (f"rule {_short(text)} uses the two-variable comprehension {macros[0]}(key, value, ...) (Kubernetes "
                f"1.32), which omerender's CEL evaluator does not support; it cannot check this rule")
    if compiled.missing:
        names = ", ".join(compiled.missing)
        return (f"rule {_short(text)} calls {names}, which omerender's CEL libraries do not define; it cannot check "
                f"this rule (a function of Kubernetes' CEL libraries not implemented, or a misspelled name)")
    return None


class _Error:
    """An evaluation error, as cel-go words it."""

    def __init__(self, text: str):
        self.text = text

    def message(self, rule: dict) -> str:
        if self.text == cellib.COST_EXCEEDED:
            return (f"'{self.text}': no further validation rules will be run due to call cost exceeds limit for rule: "
                    f"{_rule_name(rule)}")
        if self.text.startswith("no such overload"):
            return (f"'{self.text}': call arguments did not match a supported operator, function or macro signature "
                    f"for rule: {_rule_name(rule)}")
        return f"{self.text} evaluating rule: {_rule_name(rule)}"


def _run(text: str, node: _Node, old_self: bool = False):
    """The expression's value on the node (``oldSelf`` an empty optional if ``old_self``), or an :class:`_Error`.
    Where a string it reads may hold a non-ASCII character, the evaluator's own ``size`` (which counts UTF-8 bytes)
    gives way to CEL's (which counts code points)."""
    compiled = _compiled(text)
    calls = compiled.functions_called
    if "duration" in calls or ("size" in calls and (node.wide or not text.isascii())):
        compiled = _compiled(_rewritten(text, "size" in calls and (node.wide or not text.isascii())))
    try:
        with cellib.metered(PER_CALL_LIMIT - len(text), node.count + len(text), nesting(text)):
            return compiled.program.execute(node.context(compiled.functions, old_self))
    except Exception as err:  # noqa: BLE001 - the evaluator raises many types (KeyError for a missing field...)
        return _Error(_error_text(err))


@lru_cache(maxsize=4096)
def _reads_old_self(text: str) -> bool:
    """Whether the expression refers to ``oldSelf`` (not merely a string holding the word), as the API server's
    compiler finds it; read from the text where it does not compile."""
    compiled = _compiled(text) if len(text) <= MAX_RULE_LENGTH else None
    if isinstance(compiled, _Compiled):
        return "oldSelf" in compiled.program.variables()
    return _OLD_SELF.search(text) is not None


@lru_cache(maxsize=4096)
def _rewritten(text: str, sizes: bool) -> str:
    """The expression with each call of ``duration`` made one of Go's ParseDuration (cel-rust's takes ``1h-5m``) and,
    with ``sizes``, each call of ``size`` (``size(x)``, ``x.size()``) one that counts code points; string literals
    are left as they are."""
    calls = {"duration": cellib.GO_DURATION, **({"size": cellib.CODE_POINT_SIZE} if sizes else {})}
    out, i = [], 0
    while i < len(text):
        char = text[i]
        if char in "'\"":
            end = _literal_end(text, i)
            out.append(text[i:end])
            i = end
            continue
        found = _CALL.match(text, i)
        if found and found.group(1) in calls and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            out.append(calls[found.group(1)])
            i += len(found.group(1))
            continue
        out.append(char)
        i += 1
    return "".join(out)


def _literal_end(text: str, start: int) -> int:
    """Where the string literal opening at ``start`` ends (past its closing quote)."""
    quote = text[start] * 3 if text.startswith(text[start] * 3, start) else text[start]
    raw = start > 0 and text[start - 1] in "rR"
    i = start + len(quote)
    while i < len(text):
        if text[i] == "\\" and not raw:
            i += 2
            continue
        if text.startswith(quote, i):
            return i + len(quote)
        i += 1
    return len(text)


def _error_text(err: Exception) -> str:
    """cel-go's text for the evaluator's error."""
    text = str(err)
    called = _CALL_FAILED.search(text)
    if called:
        return _shorter(called.group(1))
    if isinstance(err, KeyError):
        return f"no such key: {err.args[0] if err.args else ''}"
    if isinstance(err, OverflowError):
        return "integer overflow"
    if isinstance(err, ZeroDivisionError):
        return "modulus by zero" if "modulo" in text else "division by zero"
    if isinstance(err, TypeError) and text.lower().startswith(("no such overload", "unsupported operation")):
        return "no such overload"
    if isinstance(err, IndexError):
        return text.replace("index out of bounds", "index out of range")
    return _shorter(_first_line(err))


def _message(rule: dict, node: _Node, field: str, budget: list[int]) -> Failure:
    """The failure of a rule that evaluated to false, its message from ``messageExpression`` where that gives a
    usable string (the API server drops any other outcome, and takes ``message``), else ``message``."""
    reason = _REASONS.get(rule.get("reason"), "Invalid value")
    expression = rule.get("messageExpression")
    if isinstance(expression, str) and expression.strip() and not _compile_problem(expression):
        passed = _charge(expression, node, budget)
        if passed == _PER_CALL:
            return Failure(field, f"no further validation rules will be run due to call cost exceeds limit for "
                                  f"messageExpression: {_go_quoted(expression)}")
        if passed == _BUDGET:
            return Failure(field, "messageExpression evaluation failed due to running out of cost budget, no further "
                                  "validation rules will be run")
        message = _run(expression, node)  # with no oldSelf, as the API server runs it
        if isinstance(message, _Error) and message.text == cellib.COST_EXCEEDED:
            budget[0] = -1
            return Failure(field, f"no further validation rules will be run due to call cost exceeds limit for "
                                  f"messageExpression: {_go_quoted(expression)}")
        if isinstance(message, str):
            message = message.strip()
            if message and "\n" not in message and len(message.encode()) <= MAX_MESSAGE_BYTES:
                return Failure(field, message, reason)
    return Failure(field, _message_or_default(rule), reason)


def _message_or_default(rule: dict) -> str:
    message = rule.get("message")
    if isinstance(message, str) and message:
        return message.strip()
    return f"failed rule: {_rule_name(rule)}"


def _rule_name(rule: dict) -> str:
    """ruleErrorString: the rule's message, else its text."""
    message = rule.get("message")
    return message.strip() if isinstance(message, str) and message else rule["rule"].strip()


def _field_path(field_path) -> str:
    """A rule's ``fieldPath`` (``.spec.x`` or ``['a.b']``), as omerender writes field paths."""
    if not isinstance(field_path, str) or not field_path:
        return ""
    return field_path if field_path.startswith(("[", ".")) else "." + field_path


def _go_quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _first_line(err: Exception) -> str:
    return str(err).splitlines()[0] if str(err) else type(err).__name__


def _shorter(text: str) -> str:
    return text if len(text) <= 300 else text[:297] + "..."


def _short(text: str) -> str:
    shown = " ".join(text.split())
    return repr(shown if len(shown) <= 80 else shown[:77] + "...")
