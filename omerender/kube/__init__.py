"""Kubernetes' own rules: what the API server accepts (:mod:`.apirules`), field shapes from the core/v1 schema
(:mod:`.shapes`, ``k8s_types.json``), object names (:mod:`.names`) and quantities (:mod:`.quantities`)."""
