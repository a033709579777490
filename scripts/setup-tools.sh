#!/usr/bin/env bash
# Installs the standalone kustomize binary that omerender's tests and `omerender build` run.
#
# kustomize is packaged by Debian from trixie on; this machine runs bookworm. The script adds
# a trixie source that apt pinning restricts to the one package `kustomize` (every other
# trixie package gets priority -10, so nothing else is ever installed or upgraded from it).
# Idempotent, and a no-op when kustomize is already installed. Needs root (or sudo).
set -euo pipefail

SOURCES=/etc/apt/sources.list.d/omerender-trixie.sources
PINS=/etc/apt/preferences.d/omerender-trixie

if command -v kustomize >/dev/null 2>&1 && kustomize version >/dev/null 2>&1; then
    echo "setup-tools: kustomize already installed: $(command -v kustomize) ($(dpkg-query -W -f='${Version}' kustomize 2>/dev/null || kustomize version))"
    exit 0
fi

SUDO=""
if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "setup-tools: error: run as root (or install sudo) to install kustomize" >&2; exit 1; }
    SUDO=sudo
fi
command -v apt-get >/dev/null 2>&1 || {
    echo "setup-tools: error: no apt-get here; install kustomize (https://kubectl.docs.kubernetes.io/installation/kustomize/) and put it on PATH" >&2
    exit 1
}

. /etc/os-release
if [ "${VERSION_CODENAME:-}" != trixie ] && [ "${VERSION_CODENAME:-}" != sid ]; then
    $SUDO tee "$SOURCES" >/dev/null <<'SRC'
# Added by omerender's scripts/setup-tools.sh: only for the package kustomize (see omerender-trixie pins).
Types: deb
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    $SUDO tee "$PINS" >/dev/null <<'PIN'
# Added by omerender's scripts/setup-tools.sh: take nothing from trixie but kustomize.
Package: *
Pin: release n=trixie
Pin-Priority: -10

Package: kustomize
Pin: release n=trixie
Pin-Priority: 500
PIN
fi

$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends kustomize >/dev/null
kustomize version >/dev/null
echo "setup-tools: installed kustomize $(dpkg-query -W -f='${Version}' kustomize) at $(command -v kustomize)"
