"""omerender: render OME serving objects into plain Kubernetes objects."""
import atexit
import gc

# omerender's version, in this one place: pyproject.toml reads it ([tool.setuptools.dynamic]) into the wheel's
# and the sdist's metadata, and a checkout run without installing (PYTHONPATH) prints the same.
__version__ = "0.1.0"
OME_RELEASE = "v1.3"   # the OME release whose controller output omerender renders
SOURCES = ("the OME v1.3 documentation (github.com/ome-projects/ome-docs), then OME's Go source "
           "(github.com/ome-projects/ome) where the docs are silent; without a cluster ConfigMap, the defaults of "
           "OME's Helm chart ome-resources (docs/spec/README.md)")


def version_text(prog: str) -> str:
    """What ``--version`` prints: omerender's version, the OME release it renders and the sources it follows."""
    return f"{prog}, version {__version__}\nrenders OME {OME_RELEASE}\nfollows {SOURCES}\n"


def without_cycle_collector() -> None:
    """Turn Python's cyclic garbage collector off for the rest of the process. Every command is one pass that
    builds a large heap of parsed objects and exits: the collector's full scans of that growing heap cost 8-11 %
    of a render at 1,000-10,000 InferenceServices and free nothing (peak memory is the same). Memory that no
    cycle holds is still freed at once, and the input limits bound what a cycle could hold. The interpreter's exit
    still runs one full collection over everything left alive (0.3 s of CPU, 3 % of a 10,000 InferenceService
    render): at exit every object is frozen first (``gc.freeze``), so that collection has nothing to scan."""
    gc.disable()
    atexit.register(gc.freeze)
