"""GitOps plumbing: the safe kustomize build (:mod:`.kbuild` decides, :mod:`.buildrun` runs, :mod:`.remote` tells
a remote base from a local one), which PATHs ``render`` and ``diff`` build (:mod:`.overlays`), the KRM
function's ResourceList in and out (:mod:`.krm`), the legacy exec plugin (:mod:`.legacy`), Argo CD's options
(:mod:`.argocd`), and rendered manifests written to a directory (:mod:`.outdir`, atomically by
:mod:`.atomicdir`). It calls OME's rules; it prints nothing and never exits.
"""
