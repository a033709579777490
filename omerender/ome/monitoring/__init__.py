"""What OME v1.3 creates for Prometheus beside a component's workload: the PodMonitor (:mod:`.podmonitor`)."""
