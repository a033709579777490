#!/bin/sh
# Installs omerender's legacy kustomize exec plugin where kustomize looks for it:
# $KUSTOMIZE_PLUGIN_HOME, else $XDG_CONFIG_HOME/kustomize/plugin, else ~/.config/kustomize/plugin.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
home=${KUSTOMIZE_PLUGIN_HOME:-${XDG_CONFIG_HOME:-$HOME/.config}/kustomize/plugin}
target=$home/omerender.io/v1alpha1/omerender
mkdir -p "$target"
cp "$here/omerender.io/v1alpha1/omerender/OMERender" "$target/OMERender"
chmod +x "$target/OMERender"
command -v omerender-fn >/dev/null 2>&1 || echo "install.sh: warning: omerender-fn is not on PATH; run pip install . in a clone of omerender (or set OMERENDER_PYTHON)" >&2
echo "installed $target/OMERender"
