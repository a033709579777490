"""Ingress (OME v1.3's ingress and external-Service reconcilers): the Kubernetes Ingress, or the Gateway API
HTTPRoutes and default BackendTrafficPolicy, OME writes for an InferenceService, and whether it keeps the
external Service. See ``routes`` for the entry points."""
from .routes import ComponentRoute, external_service_wanted, ingress_objects

__all__ = ["ComponentRoute", "external_service_wanted", "ingress_objects"]
