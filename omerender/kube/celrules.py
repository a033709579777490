"""CRD validation rules (``x-kubernetes-validations``) evaluated as the API server evaluates them on create, with the
CEL library of PyPI's ``common-expression-language`` (a compiled evaluator: an expression never runs Python code).

Per rule: ``self`` is the value of the schema node that holds the rule; a rule that reads ``oldSelf`` (a transition
rule) is skipped, as the API server skips it on create, unless ``optionalOldSelf`` is true, where ``oldSelf`` is an
empty optional; ``messageExpression`` gives the message when it evaluates to a string, else ``message``, else the
API server's ``failed rule: RULE``; ``fieldPath`` names the field the message is about. Kubernetes' own CEL library
functions that the vendored CRDs use (and the strings of its library) are defined here. The API server's runtime cost
limit of one rule (1,000,000, apiextensions-apiserver's PerCallLimit) is held by an estimate from the value's size and
the nesting of the rule's comprehensions (``all``, ``exists``, ``exists_one``, ``filter``, ``map``), checked before the
rule runs: a rule that could cost more is an error, never a long run.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

PER_CALL_LIMIT = 1_000_000
MAX_RULE_LENGTH = 10_000  # longer rule text is refused before it is compiled
_MACROS = re.compile(r"\.\s*(all|exists|exists_one|filter|map)\s*\(")
_OLD_SELF = re.compile(r"\boldSelf\b")


@dataclass(frozen=True)
class Failure:
    field: str  # the path of the node (with the rule's fieldPath)
    text: str


def _lower_ascii(text: str) -> str:
    return "".join(c.lower() if c.isascii() else c for c in text)


def _upper_ascii(text: str) -> str:
    return "".join(c.upper() if c.isascii() else c for c in text)


# Kubernetes' CEL library (k8s.io/apiserver/pkg/cel/library) and cel-go's strings extension, as far as the rules of
# the vendored CRDs use them.
FUNCTIONS = {
    "lowerAscii": _lower_ascii,
    "upperAscii": _upper_ascii,
    "trim": lambda text: text.strip(" \t\n\r\v\f"),
}


@lru_cache(maxsize=4096)
def _program(rule: str):
    import cel
    return cel.compile(rule)


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
    """The number of values in ``value`` (itself, its items and map entries, at every depth), counted up to ``cap``."""
    count, todo = 0, [value]
    while todo and count < cap:
        item = todo.pop()
        count += 1
        if isinstance(item, dict):
            todo.extend(item.values())
            count += len(item)
        elif isinstance(item, list):
            todo.extend(item)
        elif isinstance(item, str):
            count += len(item) // 64
    return count


def estimated_cost(rule: str, value) -> int:
    """An upper estimate of the rule's cost on ``value``: the value's size to the power of the nesting of the rule's
    comprehensions (each may visit every value once per visit of the one around it), plus the rule's length."""
    depth = nesting(rule)
    return len(rule) + (size(value) ** depth if depth else size(value))


def evaluate(rules: list, value, path: str) -> list[Failure]:
    """The failures of a node's ``rules`` on ``value`` (a create: no old object)."""
    failures = []
    for rule in rules:
        if not isinstance(rule, dict) or not isinstance(rule.get("rule"), str):
            continue
        failure = _one(rule, value, path)
        if failure is not None:
            failures.append(failure)
    return failures


def _one(rule: dict, value, path: str) -> Failure | None:
    text = rule["rule"]
    variables = {"self": value}
    if _OLD_SELF.search(text):
        if not rule.get("optionalOldSelf"):
            return None  # a transition rule: the API server runs it on updates only
        import cel
        variables["oldSelf"] = cel.OptionalValue.none()
    field = path + _field_path(rule.get("fieldPath"))
    if len(text) > MAX_RULE_LENGTH or estimated_cost(text, value) > PER_CALL_LIMIT:
        return Failure(field, f"the rule {_short(text)} could cost more than the API server's limit of one rule "
                              f"({PER_CALL_LIMIT:,}) on this value; the API server refuses it (\"estimated rule "
                              f"cost exceeds budget\")")
    result = _run(text, variables)
    if result is True:
        return None
    if not isinstance(result, bool):
        return Failure(field, f"the rule {_short(text)} could not be evaluated: {result}")
    return Failure(field, _message(rule, variables))


def _run(text: str, variables: dict):
    """The rule's value, or the text of the error evaluating it."""
    import cel
    try:
        context = cel.Context(variables=variables, functions=FUNCTIONS)
        return _program(text).execute(context)
    except Exception as err:  # noqa: BLE001 - the library raises many types (KeyError for a missing field...)
        return _error_text(err)


def _error_text(err: Exception) -> str:
    if isinstance(err, KeyError):
        return f"no such key: {err.args[0] if err.args else ''}"
    text = str(err).splitlines()[0] if str(err) else type(err).__name__
    return text if len(text) <= 200 else text[:197] + "..."


def _message(rule: dict, variables: dict) -> str:
    expression = rule.get("messageExpression")
    if isinstance(expression, str) and len(expression) <= MAX_RULE_LENGTH and \
            estimated_cost(expression, variables["self"]) <= PER_CALL_LIMIT:
        message = _run(expression, variables)
        if isinstance(message, str) and message.strip() and "\n" not in message:
            return message
    if isinstance(rule.get("message"), str) and rule["message"]:
        return rule["message"]
    return f"failed rule: {rule['rule']}"


def _field_path(field_path) -> str:
    """A rule's ``fieldPath`` (``.spec.x`` or ``['a.b']``), as omerender writes field paths."""
    if not isinstance(field_path, str) or not field_path:
        return ""
    return field_path if field_path.startswith(("[", ".")) else "." + field_path


def _short(text: str) -> str:
    shown = " ".join(text.split())
    return repr(shown if len(shown) <= 80 else shown[:77] + "...")
