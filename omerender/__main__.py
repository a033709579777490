"""``python -m omerender``: the ``omerender`` command."""
from omerender.cli.app import main

main()
