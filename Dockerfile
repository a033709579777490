# omerender as a containerized KRM function:
#   docker build -t omerender:0.1.0 .
# then in a kustomization's transformer config (plugins/kustomize/omerender-container.yaml):
#   config.kubernetes.io/function: |
#     container:
#       image: omerender:0.1.0
# and `kustomize build --enable-alpha-plugins DIR`. The function reads a ResourceList on stdin
# and writes one on stdout; it needs no network and no mounts.
FROM python:3.11-slim
COPY pyproject.toml README.md /src/
COPY omerender /src/omerender
RUN pip install --no-cache-dir /src && rm -rf /src
USER 65534:65534
ENTRYPOINT ["omerender-fn"]
