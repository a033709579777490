"""YAML in and out: files and directories read (:mod:`.reading`) by the limited loader (:mod:`.yamlread`)
within the input limits (:mod:`.limits`), the emitter (:mod:`.emit`) and plain-data helpers (:mod:`.data`)."""
