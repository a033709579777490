"""``python -m omerender.gitops kustomize-plugin CONFIG``: what the installed legacy kustomize exec plugin runs
(plugins/kustomize-legacy, and the one ``omerender build`` writes for kubectl)."""
import sys

from omerender import without_cycle_collector
from .legacy import plugin_main

without_cycle_collector()
sys.exit(plugin_main(sys.argv[1:]))
