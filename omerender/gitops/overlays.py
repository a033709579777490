"""Overlays in every command (``render``, ``check``, ``diff``, ``config``, ``explain``, ``tree``, ``lock update``,
through :func:`read_inputs`): what ships is a kustomization's build, so a PATH whose kustomization
changes the objects it lists is built the way ``omerender build`` builds it (kustomize with every plugin kind
off, then omerender's render), never read file by file.

A kustomization that only lists files inside its own directory (``resources:`` and nothing else) changes
nothing: its directory is read file by file as before, with no kustomize needed. Any other field (patches,
components, namespace, labels, a transformer, a base outside the directory...) makes it an overlay. An
overlay deeper inside a plain directory PATH is an error naming it: its files are not objects of their own (a
patch is not an InferenceService), and which of several overlays ships is not for omerender to guess.
"""
from __future__ import annotations

import os

from omerender.errors import OmeError, OmeErrors
from omerender.ome.render import Options
from omerender.yamlio import limits, paths as pathrules
from omerender.yamlio.reading import Doc, find_kustomization, parse_text, paths_reading, read_named_file, read_paths

# The fields of a kustomization that list objects without changing them.
PLAIN_FIELDS = ("apiVersion", "kind", "metadata", "resources")
RENDER_FLAGS = "as command-line flags"


def changes(kfile: str, budget: list[int] | None = None) -> list[str]:
    """What in the kustomization ``kfile`` changes the objects it lists: its other fields, and resources that
    come from outside its directory. Empty for a plain listing. ``budget`` ([files, bytes]) is shared by every
    kustomization of one input."""
    return _changes(_kustomization(kfile, budget))


def _changes(data) -> list[str]:
    from .remote import fetched  # here: a render without kustomizations never imports the build planner
    if not isinstance(data, dict):
        return ["not one YAML mapping"]  # kustomize says what is wrong with it
    found = [name for name in data if name not in PLAIN_FIELDS]
    resources = data.get("resources") or []
    if not isinstance(resources, list) or not all(isinstance(e, str) for e in resources):
        return [*found, "resources"]
    outside = [e for e in resources if os.path.isabs(e) or fetched(e) is not None
               or os.path.normpath(e).split(os.sep)[0] == ".."]
    return [*found, f"resources {outside[0]}"] if outside else found


def _kustomization(kfile: str, budget: list[int] | None):
    text = read_named_file(kfile)
    if budget is not None:
        budget[0] += 1
        budget[1] += len(text)
        if budget[0] > limits.MAX_FILES or budget[1] > limits.MAX_TOTAL_BYTES:
            raise OmeError(f"the kustomization files are more than {limits.MAX_FILES:,} or larger than "
                           f"{limits.MAX_TOTAL_BYTES // limits.MIB} MiB in total; render fewer files at a time",
                           file=kfile)
    docs = parse_text(text, kfile)
    return docs[0].data if len(docs) == 1 else None


def overlay_path(paths: list[str]) -> str | None:
    """The PATH that is an overlay (a directory whose kustomization changes what it lists), if any. An
    overlay is built on its own: given with other PATHs, it is an error."""
    overlays = [p for p in paths if is_overlay(p)]
    if overlays and len(paths) > 1:
        raise OmeError(f"{overlays[0]} is a kustomize overlay, built on its own: give it as the only PATH")
    return overlays[0] if overlays else None


def is_overlay(path: str) -> bool:
    """Whether ``path`` is a directory that is an overlay (see :func:`overlay_path`)."""
    return path != "-" and os.path.isdir(pathrules.resolve(path)) and _is_overlay(path)


def _is_overlay(directory: str) -> bool:
    kfile = find_kustomization(directory)
    return kfile is not None and bool(changes(kfile))


def read_plain(paths: list[str], notes: list | None = None) -> list[Doc]:
    """``read_paths``, refusing an overlay found inside a PATH (see the module's doc)."""
    found: list[str] = []
    docs = read_paths(paths, notes=notes, kustomizations=found)
    budget = [0, 0]
    kustomizations = [(kfile, _kustomization(kfile, budget)) for kfile in found]
    refused = [_nested(kfile, data, reasons) for kfile, data in kustomizations if (reasons := _changes(data))]
    if refused:
        raise OmeErrors(refused)
    return docs


def _nested(kfile: str, data, reasons: list[str]) -> OmeError:
    directory = os.path.dirname(kfile) or "."
    if isinstance(data, dict) and data.get("kind") == "Component":
        return OmeError(f"a kustomize component ({', '.join(reasons)}): what ships is the build of each overlay "
                        f"that lists it, not its files one by one; give such an overlay's directory as the only "
                        f"PATH (render and diff build it as omerender build does)", file=kfile)
    return OmeError(f"a kustomize overlay ({', '.join(reasons)}): what ships is its build, not its files one by "
                    f"one; give its directory as the only PATH (omerender render {directory}), or run: omerender "
                    f"build {directory}", file=kfile)


def build_overlay(directory: str, boundary: str | None, options: Options, flag_names: tuple[str, ...],
                  lock_path: str | None, hint: str = "", cluster_config: str | None = None,
                  inputs_only: bool = False):
    """The overlay ``directory`` built as ``omerender build`` builds it, with the command's options (which
    an OMERender config in the tree sets instead, when no flag is given) and the ``--cluster-config`` file
    (inside the build's boundary). Returns a pipeline's :class:`~omerender.gitops.buildrun.Built`, whose
    ``result`` holds the objects and messages as ``build`` prints them (with ``inputs_only``, only what the
    build holds: ``inputs``); a tree that needs the function path is an error."""
    from .buildrun import INSTALL_TOOLS, ToolFailed, build, default_boundary, remote_setting, timeout_setting, tool
    from .clusterfile import OPTION, checked
    boundary = boundary or default_boundary(directory)
    if cluster_config is not None:
        checked(cluster_config, OPTION, boundary, f"{boundary}, what the build of {directory} may read")
    if lock_path:
        raise OmeError(f"--lock {lock_path}: {directory} is a kustomize overlay, whose lock is the RuntimeLock "
                       f"its build holds (what omerender build and Argo CD see); list the lock file under "
                       f"resources: of {find_kustomization(directory) or directory}")
    try:
        tool()
    except OmeError:
        raise OmeError(f"{directory} is a kustomize overlay, built with kustomize or kubectl, and neither is on "
                       f"PATH: {INSTALL_TOOLS}") from None
    try:
        built = build(directory, boundary, options if flag_names else None,
                      flag_names, hint, timeout=timeout_setting(None, os.environ),
                      remote=remote_setting(False, os.environ), flags_from=RENDER_FLAGS, pipeline_only=True,
                      extra=(cluster_config,) if cluster_config else (), extra_name=OPTION, inputs_only=inputs_only)
    except ToolFailed as err:  # kustomize's own words, on the error line (diff prints no raw stderr)
        said = "; ".join(line.removeprefix("Error: ") for line in err.stderr.strip().splitlines() if line.strip())
        raise OmeError(f"{err.text}: {said}" if said else err.text) from None
    if not inputs_only:
        built.result.objects, built.result.messages = built.objects, built.messages  # as build prints them
    return built


def read_inputs(paths: list[str], cluster_config: str | None = None, notes: list | None = None,
                options: Options | None = None, flag_names: tuple[str, ...] = (), lock_path: str | None = None,
                inputs_only: bool = True):
    """What every command sees in PATHs: an overlay's build (:func:`build_overlay`), else the files read
    (:func:`read_plain`), with the ``--cluster-config`` file beside them either way. Returns the
    :class:`~omerender.ome.load.Inputs` and the overlay's build (None for files read)."""
    from omerender.ome.load import index
    overlay = overlay_path(paths)
    if overlay is not None:
        built = build_overlay(overlay, None, options or Options(), flag_names, lock_path, cluster_config=cluster_config,
                              inputs_only=inputs_only)
        return built.inputs, built
    return index(read_with_cluster_config(paths, cluster_config, notes)), None


def read_with_cluster_config(paths: list[str], cluster_config: str | None, notes: list | None = None,
                             name: str = "--cluster-config") -> list[Doc]:
    """:func:`read_plain` of ``paths`` and the ``--cluster-config`` file (read once where a PATH reads it:
    :func:`~omerender.yamlio.reading.paths_reading`), checked to be the one cluster configuration."""
    if cluster_config is None:
        return read_plain(paths, notes)
    from .clusterfile import check_docs, checked
    checked(cluster_config, name)
    docs = read_plain(list(paths_reading(paths, cluster_config)), notes)
    check_docs(docs, cluster_config, name)
    return docs
