"""A runtime's effective spec: strategic merges (:mod:`.merge`), components (:mod:`.components`), the presets
OME applies (:mod:`.presets`) and runtime inheritance (:mod:`.inherit`)."""
