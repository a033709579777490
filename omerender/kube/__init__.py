"""Kubernetes' own rules: what the API server accepts (:mod:`.apirules`), field shapes from the core/v1 schema
(:mod:`.shapes`, the field table of each Kubernetes version in :mod:`.k8stypes`), object names (:mod:`.names`) and
quantities (:mod:`.quantities`)."""
