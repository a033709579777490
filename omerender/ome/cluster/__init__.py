"""OME's cluster configuration: the ConfigMap ``inferenceservice-config`` (namespace ``ome``) as OME v1.3 reads it.

:mod:`.settings` holds the values (frozen dataclasses), :mod:`.parse` parses each data key as OME's loader does
(JSON read by :mod:`omerender.gorules.gojson`, as Go's encoding/json reads it), :mod:`.configmap` finds the
ConfigMap among the inputs.
:data:`CHART_DEFAULTS` is the configuration of the Helm chart's own ConfigMap, used when the input has none.
"""
from .configmap import CHART_DEFAULTS
from .settings import ClusterConfig

__all__ = ["CHART_DEFAULTS", "ClusterConfig"]
