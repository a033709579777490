"""Runtime revisions and pinning: spec hashes and revision names (:mod:`.revisions`), the lock file's records
(:mod:`.lockfile`) and the pinning decisions (:mod:`.lock`)."""
