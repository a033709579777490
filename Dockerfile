# syntax=docker/dockerfile:1
# omerender as a containerized KRM function:
#   docker build --build-arg REVISION="$(git rev-parse HEAD)" -t omerender:0.1.0 .
# then in a kustomization's transformer config (plugins/kustomize/omerender-container.yaml):
#   config.kubernetes.io/function: |
#     container:
#       image: omerender:0.1.0
# and `kustomize build --enable-alpha-plugins DIR`. The function reads a ResourceList on stdin
# and writes one on stdout; it needs no network and no mounts.
# The base is pinned by digest and the dependencies by constraints.txt, as in plugins/argocd/Dockerfile
# (which says where the digest comes from).
ARG PYTHON_IMAGE=python:3.11-slim-trixie@sha256:90744cff8f32887f075c47d747a173ff333e9e98801667af93c357fa9f5e28ff

FROM ${PYTHON_IMAGE} AS build
COPY pyproject.toml README.md constraints.txt /src/
COPY omerender /src/omerender
RUN pip install --no-cache-dir --no-compile --prefix=/install --constraint /src/constraints.txt /src

FROM ${PYTHON_IMAGE}
ARG VERSION=0.1.0
ARG REVISION=unknown
LABEL org.opencontainers.image.title="omerender KRM function" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
COPY --from=build /install /usr/local
RUN python -m pip uninstall --yes --no-cache-dir pip setuptools wheel \
 && python -m compileall -q /usr/local/lib/python3.11
USER 65534:65534
ENTRYPOINT ["omerender-fn"]
