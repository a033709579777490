"""``omerender diff``: what a change to runtimes, models or InferenceServices does to the rendered fleet.

:mod:`.sides` reads and renders each side, :mod:`.compare` matches the objects, :mod:`.why` explains runtime
and accelerator-class changes, :mod:`.gpus` counts capacity, :func:`.compare.compare_warnings` finds new and gone
warnings, :mod:`.cluster` the cluster settings that differ, :mod:`.report` and :mod:`.markdown` print.
"""
from __future__ import annotations

from . import cluster, gpus
from .compare import Diff, compare_isvcs, compare_objects, compare_warnings, generated_changes, passthrough
from .sides import Side


def diff(base: Side, head: Side) -> Diff:
    settings = cluster.compare(base, head)
    result = Diff(compare_isvcs(base, head, settings), compare_objects(passthrough(base), passthrough(head)),
                  gpus.compare(gpus.capacity(base), gpus.capacity(head)), *compare_warnings(base, head))
    result.cluster = settings
    result.generated = generated_changes(base, head)
    return result
