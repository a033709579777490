"""The command shell: one module per command, each parsing its options, calling the layers below and
turning their results and errors into output lines and an exit status (:mod:`.shell`).

``app`` holds the ``omerender`` group, ``render`` and ``fn``; the other commands are imported when they run.
"""
from .app import cli, main

__all__ = ["cli", "main"]
