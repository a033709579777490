"""OME's rules: what the OME controller decides, as pure functions over the loaded objects.

Layers, top to bottom (``pyproject.toml``'s import-linter contracts check them):

* :mod:`.render` (the pipeline, render.md) · :mod:`.reach` (what an edit of a runtime reaches);
* :mod:`.ingress` (routes and the external Service) · :mod:`.benchmark` (BenchmarkJobs → Jobs, benchmarks.md);
* :mod:`.pinning` (revisions, the lock file) · :mod:`.workloads` (pods, Deployments, LeaderWorkerSets, HPAs);
* :mod:`.selection` (models and runtimes, auto-selection) · :mod:`.accelerators` (classes and their effects);
* :mod:`.runtimes` (merging components, presets, inheritance);
* :mod:`.budget` (the work a render may do that bytes do not bound);
* :mod:`.load` (the input objects, validated and indexed by role).
"""
