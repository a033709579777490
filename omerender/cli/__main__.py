"""``python -m omerender.cli``: the ``omerender`` command (what omerender's own function wrapper runs)."""
from .app import main

main()
