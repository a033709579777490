"""``$(VAR)`` references in a container's ``env`` values, ``command`` and ``args``, expanded as the kubelet expands
them, so what omerender reads from a pod template is what the container runs with.

The rules are the kubelet's (k8s.io/kubernetes ``third_party/forked/golang/expansion/expand.go``, used by
``pkg/kubelet/kubelet_pods.go`` makeEnvironmentVariables and ``pkg/kubelet/container/helpers.go``
ExpandContainerCommandAndArgs):

* ``$(NAME)`` is replaced by the variable's value; ``NAME`` is everything up to the first ``)``, whatever it holds;
* a reference to a variable that isn't defined stays as written, ``$(NAME)``;
* ``$$`` is an escaped ``$``; a ``$`` before anything else, an unclosed ``$(`` and a ``$`` at the end stay as written;
* a replaced value is not read again (no nested expansion);
* ``env`` is built in order: each entry's ``value`` is expanded against the variables defined before it only (a
  later entry's name is not yet defined); ``command`` and ``args`` are expanded against the whole resulting env.

A variable whose value only the cluster knows (``valueFrom``) is defined with the value None: a reference to it stays
as written, and :func:`unresolved` names it (and any variable whose value refers to it). The names ``envFrom``
brings (a ConfigMap's or Secret's keys) and the Service link variables the kubelet adds (``<SERVICE>_SERVICE_HOST``...)
depend on the cluster and are not known here: a reference to one stays as written, as to any variable the container
doesn't define.
"""
from __future__ import annotations

from typing import Callable



class Env(dict):
    """Variable name -> value (None: defined, but only the cluster knows the value); ``unknown``: the names whose
    value is, or refers to, one only the cluster knows."""

    unknown: set[str]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.unknown = {name for name, value in self.items() if value is None}


def expand(text: str, lookup: Callable[[str], str | None]) -> str:
    """``text`` with each ``$(NAME)`` replaced by ``lookup(NAME)`` (None: left as written) and ``$$`` as ``$``.
    Linear in ``text``: each ``$`` and each ``)`` is looked for once."""
    if "$" not in text:
        return text
    out: list[str] = []
    checkpoint = 0
    closer = -2   # the next ")" at or after where it was last looked for; -1: there is none
    cursor = text.find("$")
    last = len(text) - 1
    while 0 <= cursor < last:   # a "$" at the very end stays as written
        out.append(text[checkpoint:cursor])
        following = text[cursor + 1]
        after = cursor + 2
        if following == "(":
            if closer != -1 and closer < after:
                closer = text.find(")", after)
            if closer < 0:
                out.append("$(")   # incomplete reference: as written
            else:
                name = text[after:closer]
                value = lookup(name)
                out.append(f"$({name})" if value is None else value)
                after = closer + 1
        else:   # "$$" is an escaped "$"; "$" before anything else stays with it
            out.append("$" if following == "$" else "$" + following)
        checkpoint = after
        cursor = text.find("$", after)
    out.append(text[checkpoint:])
    return "".join(out)


def container_env(container: dict) -> Env:
    """The environment the kubelet gives ``container`` from its ``env``: each entry in order, its ``value`` expanded
    against the entries before it; a later entry of a name replaces the earlier one."""
    env = Env()
    for entry in container.get("env") or []:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            continue
        name, value = entry["name"], entry.get("value")
        env.unknown.discard(name)
        if isinstance(value, str) and value:
            if unresolved(value, env):
                env.unknown.add(name)
            env[name] = expand(value, env.get)
        elif entry.get("valueFrom") is not None:
            env[name] = None
            env.unknown.add(name)
        else:
            env[name] = ""
    return env


def expand_argument(text: str, env: Env) -> str:
    """One ``command`` or ``args`` item as the container receives it (``env`` from :func:`container_env`)."""
    return expand(text, env.get)


def unresolved(text: str, env: Env) -> list[str]:
    """The variables ``text`` references whose value is, or refers to, one only the cluster knows."""
    found: list[str] = []

    def note(name: str) -> None:
        if name in env.unknown and name not in found:
            found.append(name)
    expand(text, note)
    return found


def escape(text: str) -> str:
    """``text`` written so the kubelet's expansion gives it back unchanged (each ``$`` doubled)."""
    return text.replace("$", "$$")
