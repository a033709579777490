"""The two fixed programs ``--model-weights download`` runs, under ``python3 -c``. They are constants of omerender,
never built from repository text: every value they use (the model id, revision, paths) comes in environment
variables the rendered objects set."""

# The download Job's container: the model's files into the claim, then the completion marker, written last and
# atomically (a temporary file renamed over it), so a pod never sees a marker before every file is in place.
# huggingface_hub reads HF_TOKEN and HF_ENDPOINT itself. Before 0.23, snapshot_download put symbolic links into
# local_dir unless told not to; links into a cache would dangle under the pods' subPath mount.
DOWNLOAD = """\
import inspect
import os
import sys

from huggingface_hub import snapshot_download

marker = os.environ["OMERENDER_MARKER"]
if os.path.exists(marker):
    print("omerender: the weights are already downloaded:", marker, flush=True)
    sys.exit(0)
kwargs = {"repo_id": os.environ["OMERENDER_REPO_ID"], "revision": os.environ["OMERENDER_REVISION"],
          "local_dir": os.environ["OMERENDER_TARGET_DIR"]}
if "local_dir_use_symlinks" in inspect.signature(snapshot_download).parameters:
    kwargs["local_dir_use_symlinks"] = False
print("omerender: downloading", kwargs["repo_id"], "at", kwargs["revision"], "into", kwargs["local_dir"], flush=True)
snapshot_download(**kwargs)
partial = marker + ".partial"
with open(partial, "w") as out:
    out.write(kwargs["repo_id"] + "@" + kwargs["revision"] + "\\n")
    out.flush()
    os.fsync(out.fileno())
os.replace(partial, marker)
print("omerender: done", flush=True)
"""

# The serving pods' first init container: wait for the marker, checking every OMERENDER_POLL_SECONDS.
WAIT = """\
import os
import time

marker = os.environ["OMERENDER_MARKER"]
interval = min(max(float(os.environ.get("OMERENDER_POLL_SECONDS", "5")), 1.0), 60.0)
checks = 0
while not os.path.exists(marker):
    if checks % 12 == 0:
        print("omerender: waiting for the model weights download to finish:", marker, flush=True)
    checks += 1
    time.sleep(interval)
print("omerender: the model weights are in place", flush=True)
"""
