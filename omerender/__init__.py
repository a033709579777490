"""omerender: render OME serving objects into plain Kubernetes objects."""

__version__ = "0.1.0"
