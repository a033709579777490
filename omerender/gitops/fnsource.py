"""Where the KRM function's items were written, so that its results and stderr name ``file:line:column`` as the
CLI does (:mod:`omerender.yamlio.provenance`).

kustomize runs an exec function in the directory of the kustomization being built. An item's file is the one its
origin annotation names (``buildMetadata: [originAnnotations]``), else the one omerender's own reading of that
kustomization finds it in (every resource file of every kustomization it reaches), matched by the kind and the name
the item had before kustomize renamed it (kustomize's ``previousKinds``/``previousNames`` annotations). Nothing
outside the repository is read: the Git work tree holding that directory, else the directory itself; under
``omerender build`` the staged copy (``OMERENDER_FN_ROOT``), whose paths the build writes back as the user's.
"""
from __future__ import annotations

import os

from omerender.errors import OmeError
from omerender.yamlio.paths import within
from omerender.yamlio.provenance import Sources
from omerender.yamlio.reading import find_kustomization
from . import kbuild, patches

ROOT_ENV = "OMERENDER_FN_ROOT"
ORIGIN_ANNOTATION = "config.kubernetes.io/origin"
PREVIOUS = ("internal.config.kubernetes.io/previousKinds", "internal.config.kubernetes.io/previousNames")


class FunctionSources:
    """The repository around the kustomization the function runs in, read only when a message needs it."""

    def __init__(self, directory: str, boundary: str, absolute: bool):
        self.directory = directory
        self._tree = self._finder = self._files = None
        self.show = (lambda path: path) if absolute else (lambda path: os.path.relpath(path, directory))
        self.sources = Sources(boundary, self.show, self._find_patch)

    def tree(self) -> kbuild.Tree | None:
        if self._tree is None:
            try:
                self._tree = kbuild.scan(self.directory, self.sources.boundary)
            except OmeError:
                self._tree = False  # kustomize ran it, so it is readable; past the boundary, no position
        return self._tree or None

    def _find_patch(self, kind, name, field):
        tree = self.tree()
        if tree is not None and self._finder is None:
            self._finder = patches.finder(tree, self.show)
        return self._finder(kind, name, field) if tree is not None else None

    def _resource_files(self) -> list[str]:
        if self._files is None:
            self._files = self._read_resource_files()
        return self._files

    def _read_resource_files(self) -> list[str]:
        tree = self.tree()
        found = []
        for kfile, data in (tree.kustomizations.items() if tree is not None else ()):
            for key in kbuild.DIR_FIELDS:
                entries = data.get(key)
                for entry in entries if isinstance(entries, list) else ():
                    path = os.path.join(os.path.dirname(kfile), entry) if isinstance(entry, str) else None
                    if path is not None and os.path.isfile(path):
                        found.append(path)
        return found

    def origin_of(self, item: dict, named: str):
        meta = item["metadata"]
        annotations = meta.get("annotations") if isinstance(meta.get("annotations"), dict) else {}
        kind, name = (_first(annotations.get(key)) for key in PREVIOUS)
        kind, name = kind or item.get("kind"), name or meta.get("name")
        origin = annotations.get(ORIGIN_ANNOTATION)
        if isinstance(origin, str) and "repo:" in origin:
            return None
        if isinstance(origin, str) and origin.startswith("path: "):
            paths = (os.path.normpath(os.path.join(self.directory, origin[len("path: "):].splitlines()[0].strip())),)
        else:
            paths = self._resource_files
        return self.sources.origin(paths, kind, name, item, named)


def _first(value) -> str | None:
    return value.split(",")[0] if isinstance(value, str) and value else None


def function_sources(items: list) -> FunctionSources | None:
    """Where the function's items may be looked up, or None when it doesn't run in a kustomization's directory."""
    directory = os.getcwd()
    if find_kustomization(directory) is None:
        return None
    root = os.environ.get(ROOT_ENV)
    if root:
        real = os.path.realpath(root)
        return FunctionSources(directory, real, True) if within(os.path.realpath(directory), real) else None
    return FunctionSources(directory, _work_tree(directory), False)


def _work_tree(directory: str) -> str:
    """The Git work tree holding ``directory``, else ``directory`` itself."""
    folder = os.path.realpath(directory)
    while True:
        if os.path.exists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return os.path.realpath(directory)
        folder = parent
