"""Go's value rules, for every reader of a value OME's Go code reads: :mod:`.gojson` (encoding/json), :mod:`.text`
(strings.EqualFold, strings.TrimSpace, UTF-8) and :mod:`.strconv` (integer and float parsing). Below the YAML
layer, so that the YAML reader and writer, the cluster configuration, the ingress annotations, the
AutoscalerPolicy bindings, the PodMonitor and model-info all ask the same module."""
