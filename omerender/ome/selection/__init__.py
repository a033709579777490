"""Model and runtime resolution, runtime auto-selection (spec: selection.md), one module per concept.

:func:`~omerender.ome.selection.resolve.resolve` walks selection.md §2.4 for one InferenceService.
:func:`~omerender.ome.selection.evaluation.evaluate` judges every candidate runtime (checks 1-7 of §3.2) and ranks
the qualifying ones (§3.9); ``resolve`` and ``omerender explain`` share it. Candidates are indexed per
:class:`~omerender.ome.load.Inputs` by (format, framework, architecture, quantization) in
:mod:`~omerender.ome.selection.runtimes`, so a successful selection only looks at runtimes that can match the model.

``lookup`` (models and named runtimes, §2.2, §2.3) · ``named`` (a named runtime, §4) · ``auto`` (§3,
admission) · ``evaluation`` (checks 1-7, ranking and tie-breaks) · ``explain`` (what ``omerender explain``
evaluates) · ``request`` (checks 2, 3) · ``entries`` (check 4, §6.4) · ``versions`` (§3.4) · ``sizes``
(§3.5) · ``scoring`` (§3.8, §3.11) · ``facts`` (what the checks read of a model, a runtime and its entries) ·
``runtimes`` (the index of candidates) · ``validation`` (api.md §7.1, selection.md §1.3) · ``nomatch`` (the §3.10 error
text) · ``result`` (what resolution returns) · ``fields`` (typed field reads, parameter counts of §1.4).
"""
