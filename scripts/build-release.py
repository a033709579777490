"""The release's artifacts, built here as .github/workflows/release.yml builds them on a tag (no make needed).

    python3 scripts/build-release.py version             the package's version (omerender/__init__.py)
    python3 scripts/build-release.py check-tag TAG       TAG is v<version> and CHANGELOG.md has its section
    python3 scripts/build-release.py notes TAG [DIGEST_FILE...]
                                                         the release notes: the CHANGELOG section, then the images
    python3 scripts/build-release.py build [--out DIR] [--images] [--platform P[,P...]] [--push]
                                                         sdist and wheel into DIR (dist/); with --images, the KRM
                                                         function's and the Argo CD sidecar's images, tagged
                                                         IMAGE:<version> and labelled with the commit, by docker
                                                         (buildx for several platforms) or podman

Image names are release.yml's (KRM_IMAGE, CMP_IMAGE); tests/test_install.py checks that they, the Dockerfiles
and the version agree with the plugin manifests and the docs.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IMAGES = {"Dockerfile": "ghcr.io/omerender/omerender",
          "plugins/argocd/Dockerfile": "ghcr.io/omerender/omerender-argocd-cmp"}


def version() -> str:
    text = (ROOT / "omerender" / "__init__.py").read_text()
    return re.search(r'^__version__ = "([^"]+)"$', text, re.M).group(1)


def changelog_section(wanted: str) -> str:
    """The body of CHANGELOG.md's ``## [wanted] - DATE`` section."""
    text = (ROOT / "CHANGELOG.md").read_text()
    found = re.search(rf"^## \[{re.escape(wanted)}\] - \d{{4}}-\d{{2}}-\d{{2}}\n(.*?)(?=^## |^\[[^\]]+\]: )", text,
                      re.M | re.S)
    if not found:
        sys.exit(f"error: CHANGELOG.md has no section '## [{wanted}] - YYYY-MM-DD'; add it before tagging")
    return found.group(1).strip() + "\n"


def check_tag(tag: str) -> None:
    if tag != f"v{version()}":
        sys.exit(f"error: the tag {tag} is not the package's version v{version()} (omerender/__init__.py); "
                 f"move __version__ and the images' versions together, then tag")
    changelog_section(version())


def notes(tag: str, digest_files: list[str]) -> str:
    check_tag(tag)
    images = [Path(f).read_text().strip() for f in sorted(digest_files)]
    lines = [changelog_section(version()), "### Images", ""]
    lines += [f"- `{image}`" for image in images] or ["- (none recorded)"]
    return "\n".join(lines) + "\n"


def revision() -> str:
    done = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else "unknown"


def build(out: Path, images: bool, platforms: str, push: bool) -> None:
    subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)], check=True)
    if not images:
        return
    engine = shutil.which("docker") or shutil.which("podman")
    if engine is None:
        sys.exit("error: --images needs docker or podman on PATH")
    several = "," in platforms
    for dockerfile, name in IMAGES.items():
        argv = [engine, "buildx", "build"] if several and Path(engine).name == "docker" else [engine, "build"]
        argv += ["--file", str(ROOT / dockerfile), "--platform", platforms, "--tag", f"{name}:{version()}",
                 "--build-arg", f"VERSION={version()}", "--build-arg", f"REVISION={revision()}"]
        argv += ["--push"] if push and several else []
        subprocess.run([*argv, str(ROOT)], check=True)
        if push and not several:
            subprocess.run([engine, "push", f"{name}:{version()}"], check=True)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="build-release.py")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("version")
    commands.add_parser("check-tag").add_argument("tag")
    notes_parser = commands.add_parser("notes")
    notes_parser.add_argument("tag")
    notes_parser.add_argument("digests", nargs="*")
    build_parser = commands.add_parser("build")
    build_parser.add_argument("--out", type=Path, default=ROOT / "dist")
    build_parser.add_argument("--images", action="store_true")
    build_parser.add_argument("--platform", default=f"linux/{'arm64' if os.uname().machine == 'aarch64' else 'amd64'}")
    build_parser.add_argument("--push", action="store_true")
    args = parser.parse_args(argv)
    if args.command == "version":
        print(version())
    elif args.command == "check-tag":
        check_tag(args.tag)
    elif args.command == "notes":
        sys.stdout.write(notes(args.tag, args.digests))
    else:
        build(args.out, args.images, args.platform, args.push)


if __name__ == "__main__":
    main(sys.argv[1:])
