"""A file named as the cluster configuration: ``--cluster-config FILE`` on every command, Argo CD's
``CLUSTER_CONFIG`` (plugin parameter ``cluster-config``). It holds OME's ConfigMap ``inferenceservice-config``
(docs/how-to/cluster-config-and-ingress.md) and is read beside the command's inputs, under the same rules:

* judged by where it resolves (:mod:`omerender.yamlio.paths`): a symbolic link leading out of its directory is
  refused, and so is a place outside ``root`` where the command has one (the repository for Argo CD, the build's
  boundary for an overlay);
* a regular file: a directory, a FIFO, a socket or a device is never opened;
* it holds exactly one ConfigMap ``inferenceservice-config``, and the inputs hold no other: giving both is an
  error naming both, never a silent choice.
"""
from __future__ import annotations

import os

from omerender.errors import ObjRef, OmeError
from omerender.ome.cluster.configmap import NAME, is_cluster_config
from omerender.yamlio import paths
from omerender.yamlio.reading import Doc

OPTION = "--cluster-config"


def checked(value: str, name: str = OPTION, root: str | None = None, outside: str = "") -> str:
    """``value`` when it names a regular file (as spelled: ``cm.yaml/`` is none) reached without a link leading
    out of its directory, inside ``root`` where given (``outside`` says what ``root`` is); OmeError naming
    ``name`` and the value otherwise."""
    shown = value.encode("unicode_escape").decode("ascii")  # a newline must not forge an error: line
    resolved = paths.resolve(value)
    if root is not None and not paths.within(resolved, os.path.realpath(root)):
        raise OmeError(f'{name} "{shown}" leads to {resolved}, outside {outside or root}; {paths.READS}')
    problem = not_a_file(value)
    if problem:
        raise OmeError(f'{name} "{shown}": {problem}')
    return value


def not_a_file(value: str) -> str | None:
    """What keeps ``value`` (as spelled: ``cm.yaml/`` is no file) from being read as the ConfigMap's file."""
    if os.path.isdir(value):
        return f"is a directory; name the file that holds the ConfigMap {NAME}"
    if not os.path.exists(value):
        return "no such file"
    if not os.path.isfile(value):
        return "is not a regular file (a FIFO, socket or device is never read)"
    return None


def check_docs(docs: list[Doc], file: str, name: str = OPTION) -> None:
    """The documents read with the named ``file`` hold its one ConfigMap ``inferenceservice-config`` and no
    other: OmeError naming the file (and the other ConfigMap's file and object) otherwise."""
    real = os.path.realpath(file)
    found = [doc for doc in docs if isinstance(doc.data, dict) and is_cluster_config(doc.data)]
    named = [doc for doc in found if os.path.realpath(doc.file) == real]
    if not named:
        raise OmeError(f"{name} names this file, which holds no ConfigMap {NAME} (apiVersion v1); name the file "
                       f"`kubectl get configmap {NAME} -n ome -o yaml` wrote", file=file)
    if len(named) > 1:
        raise OmeError(f"{name} names this file, which holds {len(named)} ConfigMaps {NAME}; OME reads one: keep "
                       f"one", _ref(named[1]), file, "metadata.name")
    others = [doc for doc in found if os.path.realpath(doc.file) != real]
    if others:
        other = others[0]
        raise OmeError(f"this ConfigMap is among the inputs, and {name} names another ({file}): OME reads one; "
                       f"give one of them (drop {name}, or this file from the inputs)", _ref(other), other.file,
                       "metadata.name")


def _ref(doc: Doc) -> ObjRef:
    meta = doc.data.get("metadata") or {}
    return ObjRef("ConfigMap", NAME, meta.get("namespace") or None, "v1", doc.origin)
