#!/usr/bin/env bash
# Installs the standalone kustomize binary that omerender's tests run into .tools/bin (project-local,
# git-ignored). Touches no system configuration and needs no root.
#
# kustomize is packaged by Debian from trixie on. This script reads trixie's signed InRelease,
# checks its signature with gpgv against the Debian archive keyring when both are present, follows
# the SHA-256 sums from there to the package index and from the index to the .deb, and unpacks the
# binary with dpkg-deb (or ar + tar). Idempotent: a no-op when .tools/bin/kustomize runs.
set -euo pipefail
cd "$(dirname "$0")/.."

TOOLS="$PWD/.tools"
BIN="$TOOLS/bin"
MIRROR="${OMERENDER_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
SUITE=trixie

if [ -x "$BIN/kustomize" ] && "$BIN/kustomize" version >/dev/null 2>&1; then
    echo "setup-tools: kustomize already in $BIN ($("$BIN/kustomize" version))"
    exit 0
fi

die() { echo "setup-tools: error: $*" >&2; exit 1; }
fetch() { curl -fsSL --retry 3 -m 300 -o "$2" "$1" || die "could not download $1"; }
sha256_of() { sha256sum "$1" | cut -d' ' -f1; }

case "$(uname -m)" in
    x86_64) arch=amd64 ;;
    aarch64) arch=arm64 ;;
    *) die "no Debian kustomize for $(uname -m); install kustomize 5.x on PATH or into $BIN" ;;
esac
command -v curl >/dev/null || die "curl is needed"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fetch "$MIRROR/dists/$SUITE/InRelease" "$work/InRelease"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
if command -v gpgv >/dev/null && [ -f "$keyring" ]; then
    gpgv --keyring "$keyring" "$work/InRelease" 2>/dev/null \
        || gpgv --keyring /usr/share/keyrings/debian-archive-trixie-stable.gpg "$work/InRelease" 2>/dev/null \
        || die "the signature of $SUITE's InRelease does not verify"
else
    echo "setup-tools: warning: gpgv or the Debian keyring is missing: InRelease is not signature-checked" >&2
fi

index="main/binary-$arch/Packages.xz"
want=$(awk -v f="$index" '/^SHA256:/{s=1;next} /^[^ ]/{s=0} s && $3==f {print $1}' "$work/InRelease")
[ -n "$want" ] || die "$index is not listed in $SUITE's InRelease"
fetch "$MIRROR/dists/$SUITE/$index" "$work/Packages.xz"
[ "$(sha256_of "$work/Packages.xz")" = "$want" ] || die "$index does not match its SHA-256 in InRelease"

stanza=$(xz -dc "$work/Packages.xz" | awk '/^Package: kustomize$/ && !done {p=1} p{print} p && /^$/{p=0; done=1}')
filename=$(printf '%s\n' "$stanza" | awk '/^Filename:/{print $2}')
deb_sum=$(printf '%s\n' "$stanza" | awk '/^SHA256:/{print $2}')
version=$(printf '%s\n' "$stanza" | awk '/^Version:/{print $2}')
[ -n "$filename" ] && [ -n "$deb_sum" ] || die "no kustomize package in $SUITE for $arch"

fetch "$MIRROR/$filename" "$work/kustomize.deb"
[ "$(sha256_of "$work/kustomize.deb")" = "$deb_sum" ] || die "$filename does not match its SHA-256"

mkdir -p "$work/root"
if command -v dpkg-deb >/dev/null; then
    dpkg-deb -x "$work/kustomize.deb" "$work/root"
else
    (cd "$work" && ar x kustomize.deb && tar -xf data.tar.* -C root)
fi
mkdir -p "$BIN"
install -m 0755 "$work/root/usr/bin/kustomize" "$BIN/kustomize.new"
mv -f "$BIN/kustomize.new" "$BIN/kustomize"
"$BIN/kustomize" version >/dev/null || die "the unpacked kustomize does not run"
echo "setup-tools: installed kustomize $version into $BIN"
