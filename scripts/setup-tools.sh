#!/usr/bin/env bash
# Installs the programs omerender's tests run that no Python package brings, into the project-local, git-ignored
# .tools/ (touches no system configuration, needs no root):
#   kustomize  the standalone binary, from Debian trixie's package (Debian packages it from trixie on), into .tools/bin
#   zsh        Debian bookworm's zsh and zsh-common, unpacked into .tools/zsh (tests/test_install.py loads omerender's
#              zsh completion there); bookworm's, built against the glibc of this project's Debian 12 machines
# For each package this reads the suite's signed InRelease, checks its signature with gpgv against the Debian
# archive keyring when both are present, follows the SHA-256 sums from there to the package index and from the
# index to the .deb, and unpacks it with dpkg-deb (or ar + tar). Idempotent: a tool that already runs is kept.
set -euo pipefail
cd "$(dirname "$0")/.."

TOOLS="$PWD/.tools"
BIN="$TOOLS/bin"
MIRROR="${OMERENDER_DEBIAN_MIRROR:-http://deb.debian.org/debian}"

die() { echo "setup-tools: error: $*" >&2; exit 1; }
fetch() { curl -fsSL --retry 3 -m 300 -o "$2" "$1" || die "could not download $1"; }
sha256_of() { sha256sum "$1" | cut -d' ' -f1; }

case "$(uname -m)" in
    x86_64) arch=amd64 ;;
    aarch64) arch=arm64 ;;
    *) die "no Debian packages here for $(uname -m); install kustomize 5.x into $BIN and zsh into $TOOLS/zsh" ;;
esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# index SUITE: fetch SUITE's signed InRelease and its main package index for $arch into $work/SUITE/.
index() {
    local suite=$1 dir="$work/$1"
    [ -f "$dir/Packages.xz" ] && return 0
    command -v curl >/dev/null || die "curl is needed"
    mkdir -p "$dir"
    fetch "$MIRROR/dists/$suite/InRelease" "$dir/InRelease"
    local keyring=/usr/share/keyrings/debian-archive-keyring.gpg
    if command -v gpgv >/dev/null && [ -f "$keyring" ]; then
        gpgv --keyring "$keyring" "$dir/InRelease" 2>/dev/null \
            || gpgv --keyring "/usr/share/keyrings/debian-archive-$suite-stable.gpg" "$dir/InRelease" 2>/dev/null \
            || die "the signature of $suite's InRelease does not verify"
    else
        echo "setup-tools: warning: gpgv or the Debian keyring is missing: $suite's InRelease is not signature-checked" >&2
    fi
    local file="main/binary-$arch/Packages.xz" want
    want=$(awk -v f="$file" '/^SHA256:/{s=1;next} /^[^ ]/{s=0} s && $3==f {print $1}' "$dir/InRelease")
    [ -n "$want" ] || die "$file is not listed in $suite's InRelease"
    fetch "$MIRROR/dists/$suite/$file" "$dir/Packages.xz"
    [ "$(sha256_of "$dir/Packages.xz")" = "$want" ] || die "$file does not match its SHA-256 in $suite's InRelease"
}

# unpack SUITE PACKAGE ROOT: the package's files under ROOT; prints its version.
unpack() {
    local suite=$1 package=$2 root=$3 stanza filename deb_sum
    index "$suite"
    stanza=$(xz -dc "$work/$suite/Packages.xz" \
        | awk -v p="Package: $package" '$0 == p && !done {s=1} s{print} s && /^$/{s=0; done=1}')
    filename=$(printf '%s\n' "$stanza" | awk '/^Filename:/{print $2}')
    deb_sum=$(printf '%s\n' "$stanza" | awk '/^SHA256:/{print $2}')
    [ -n "$filename" ] && [ -n "$deb_sum" ] || die "no $package package in $suite for $arch"
    fetch "$MIRROR/$filename" "$work/$package.deb"
    [ "$(sha256_of "$work/$package.deb")" = "$deb_sum" ] || die "$filename does not match its SHA-256"
    mkdir -p "$root"
    if command -v dpkg-deb >/dev/null; then
        dpkg-deb -x "$work/$package.deb" "$root"
    else
        (cd "$work" && rm -f data.tar.* && ar x "$package.deb" && tar -xf data.tar.* -C "$root")
    fi
    printf '%s\n' "$stanza" | awk '/^Version:/{print $2}'
}

if [ -x "$BIN/kustomize" ] && "$BIN/kustomize" version >/dev/null 2>&1; then
    echo "setup-tools: kustomize already in $BIN ($("$BIN/kustomize" version))"
else
    version=$(unpack trixie kustomize "$work/kustomize")
    mkdir -p "$BIN"
    install -m 0755 "$work/kustomize/usr/bin/kustomize" "$BIN/kustomize.new"
    mv -f "$BIN/kustomize.new" "$BIN/kustomize"
    "$BIN/kustomize" version >/dev/null || die "the unpacked kustomize does not run"
    echo "setup-tools: installed kustomize $version into $BIN"
fi

if [ -x "$TOOLS/zsh/bin/zsh" ] && "$TOOLS/zsh/bin/zsh" -fc 'true' 2>/dev/null; then
    echo "setup-tools: zsh already in $TOOLS/zsh"
else
    rm -rf "$TOOLS/zsh.new"
    version=$(unpack bookworm zsh "$TOOLS/zsh.new")
    unpack bookworm zsh-common "$TOOLS/zsh.new" >/dev/null
    "$TOOLS/zsh.new/bin/zsh" -fc 'true' || die "the unpacked zsh does not run"
    rm -rf "$TOOLS/zsh" && mv "$TOOLS/zsh.new" "$TOOLS/zsh"
    echo "setup-tools: installed zsh $version into $TOOLS/zsh"
fi
