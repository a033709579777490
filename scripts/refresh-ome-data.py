"""Refresh tests/data/ome, the OME data the tests read, from a checkout of OME's repository.

    python scripts/refresh-ome-data.py OME_CHECKOUT [--dest DIR] [--repository OWNER/NAME]

OME_CHECKOUT is a git work tree of OME (``git clone https://github.com/sgl-project/ome``, then check out the
commit you want). The folders below are copied whole, files that OME no longer has are removed, LICENSE is
copied, and PROVENANCE.md is rewritten with the commit, its date and the file counts. The script prints
what changed, one ``A``/``M``/``D`` line per file and a count at the end, then the tests say whether
omerender still agrees with the new catalog.

Only committed content is copied: a work tree with changes in these folders is refused, since
PROVENANCE.md would name a commit that does not hold them. The work tree is compared with the commit by
hashing its files here (``git ls-tree`` says what the commit holds), so git never looks at the work tree.

Every path is judged by where it leads: a symbolic link anywhere between the checkout and what is read from it
(a copied folder, a folder above one, ``go.mod``, ``LICENSE``), or between DEST and what is written there
(a folder, ``LICENSE``, ``PROVENANCE.md``, any file), is refused before anything is written. git runs with
the machine's and the user's config ignored and ``core.fsmonitor`` off, so the checkout's own config names no
program that runs.
"""
from __future__ import annotations

import argparse
import filecmp
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

# here (under DEST) -> OME's path, and what it is (PROVENANCE.md's table)
FOLDERS = (
    ("runtimes", "config/runtimes",
     "the catalog's ClusterServingRuntimes for SGLang and vLLM"),
    ("models", "config/models",
     "the catalog's ClusterBaseModels, mostly without the metadata the model agent fills"),
    ("modelconfig", "pkg/hfutil/modelconfig/testdata",
     "real Hugging Face `config.json` / `model_index.json` files and a tiny two-shard safetensors model "
     "(`modelconfig/README.md`)"),
    ("samples", "config/samples",
     "OME's sample InferenceServices (`isvc/`) and BenchmarkJobs (`benchmark/`)"),
)
# Files of ours inside DEST, never taken from OME nor removed.
OURS = {"PROVENANCE.md", "modelconfig/README.md"}
# OME's files never copied, and why (PROVENANCE.md says so): a token-shaped value would trip every secret scanner
# (and GitHub's push protection) on a clone of omerender, and no test reads the Secret.
LEFT_OUT = {"samples/benchmark/huggingface-secret.yaml": "a Secret holding a Hugging Face token-shaped value"}
DEST = Path(__file__).resolve().parents[1] / "tests" / "data" / "ome"


class Refused(Exception):
    pass


# git reads no config but the checkout's, and nothing there may start a program: the commands below read
# objects only, never the work tree, and the one setting they would run a program for is off.
GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_TERMINAL_PROMPT": "0",
           "GIT_OPTIONAL_LOCKS": "0", "GIT_NO_REPLACE_OBJECTS": "1"}
GIT_SETTINGS = ("-c", "core.fsmonitor=false", "-c", "log.showSignature=false")
LINK = "is a symbolic link; the data holds regular files only: remove it"


def git(checkout: Path, *args: str, strip: bool = True) -> str:
    env = {name: value for name, value in os.environ.items() if not name.startswith("GIT_")}
    done = subprocess.run(["git", *GIT_SETTINGS, "-C", str(checkout), *args], capture_output=True, text=True,
                          env={**env, **GIT_ENV})
    if done.returncode:
        raise Refused(f"{checkout}: git {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout.strip() if strip else done.stdout


def no_link(root: Path, rel: str) -> Path:
    """``root / rel``, refused when it or any folder between ``root`` and it is a symbolic link: what is read
    stays inside the checkout, and what is written inside the data folder."""
    path = root
    for part in Path(rel).parts:
        path = path / part
        if path.is_symlink():
            raise Refused(f"{path} {LINK}")
    return path


def check_checkout(checkout: Path) -> None:
    """Refuse anything but a clean git work tree of OME with the folders we copy."""
    if not checkout.is_dir():
        raise Refused(f"{checkout}: no such directory")
    if (checkout / "HEAD").is_file() and (checkout / "objects").is_dir():
        raise Refused(f"{checkout} is a bare git repository; clone it into a work tree first: "
                      f"git clone {checkout} /tmp/ome-checkout")
    go_mod = no_link(checkout, "go.mod")
    module = go_mod.read_text().splitlines()[0] if go_mod.is_file() else ""
    if not module.startswith("module ") or not module.rstrip().endswith("/ome"):
        raise Refused(f"{checkout} is not a checkout of OME: its go.mod does not declare OME's module "
                      "(github.com/sgl-project/ome)")
    missing = [ome for _, ome, _ in FOLDERS if not no_link(checkout, ome).is_dir()]
    if not no_link(checkout, "LICENSE").is_file():
        missing.append("LICENSE")
    if missing:
        raise Refused(f"{checkout} is not a checkout of OME with the data the tests read: "
                      f"missing {', '.join(missing)}")
    if git(checkout, "rev-parse", "--is-inside-work-tree") != "true" \
            or Path(git(checkout, "rev-parse", "--show-toplevel")).resolve() != checkout:
        raise Refused(f"{checkout} is not a git work tree, so no commit can be named in PROVENANCE.md")
    dirty = uncommitted(checkout, ["LICENSE", *(ome for _, ome, _ in FOLDERS)])
    if dirty:
        raise Refused(f"{checkout} has uncommitted changes in the folders copied "
                      f"({dirty[0]}...); commit or discard them first")


def uncommitted(checkout: Path, paths: list[str]) -> list[str]:
    """How the work tree's files at ``paths`` differ from HEAD's (``M``, ``D``, ``??`` lines, as ``git status``
    writes them), found without git reading the work tree: HEAD's blobs from ``git ls-tree``, the files' ids
    hashed here."""
    listed = git(checkout, "ls-tree", "-r", "-z", "--full-tree", "HEAD", "--", *paths, strip=False)
    committed = {}
    for entry in filter(None, listed.split("\0")):
        info, name = entry.split("\t", 1)
        committed[name] = info.split()[2]
    algorithm = git(checkout, "rev-parse", "--show-object-format")
    present = set()
    for path in paths:
        present |= {f"{path}/{rel}" for rel in files_under(checkout / path)} if (checkout / path).is_dir() \
            else {path} if (checkout / path).is_file() else set()
    changes = []
    for name in sorted(committed.keys() | present):
        if name not in committed:
            changes.append(f"?? {name}")
        elif name not in present:
            changes.append(f"D {name}")
        elif _object_id(checkout / name, algorithm) != committed[name]:
            changes.append(f"M {name}")
    return changes


def _object_id(path: Path, algorithm: str) -> str:
    data = path.read_bytes()
    return hashlib.new(algorithm, b"blob %d\0" % len(data) + data).hexdigest()


def files_under(root: Path) -> set[str]:
    """The regular files under ``root``; a symbolic link anywhere is refused, so nothing outside the checkout is
    copied in, and nothing outside the data folder is written through one."""
    if not root.is_dir():
        return set()
    files = set()
    for path in root.rglob("*"):
        if path.is_symlink():
            raise Refused(f"{path} is a symbolic link; the data holds regular files only: remove it")
        if path.is_file():
            files.add(path.relative_to(root).as_posix())
    return files


def sync(src: Path, dst: Path, prefix: str, ours: set[str]) -> list[str]:
    """Make dst hold exactly src's files (but ours, and those LEFT_OUT); return the changes as "A path" lines."""
    new = {rel for rel in files_under(src) if f"{prefix}{rel}" not in LEFT_OUT}
    old = files_under(dst) - ours
    changes = []
    for rel in sorted(new | old):
        target = dst / rel
        if rel not in new:
            target.unlink()
            changes.append(f"D {prefix}{rel}")
            continue
        if rel in old and filecmp.cmp(src / rel, target, shallow=False):
            continue
        changes.append(f"{'M' if rel in old else 'A'} {prefix}{rel}")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src / rel, target)
    for folder in sorted((p for p in dst.rglob("*") if p.is_dir()), reverse=True):
        if not any(folder.iterdir()):
            folder.rmdir()
    return changes


def provenance(repository: str, commit: str, date: str, counts: dict[str, int]) -> str:
    rows = "\n".join(f"| `{here}/` | `{ome}/` | {what} ({counts[here]} file{'s' * (counts[here] != 1)}) |"
                     for here, ome, what in FOLDERS)
    trimmed = "; ".join(f"`{rel}`, {why}" for rel, why in sorted(LEFT_OUT.items())) or "nothing inside these folders"
    return f"""# OME's data, vendored for the tests

Copied unchanged from OME's repository `{repository}`, commit `{commit}`
(committed {date}), so that a clone of omerender anywhere passes its tests. Apache-2.0: see `LICENSE` beside
this file.

| here | OME's path | what it is |
| --- | --- | --- |
{rows}

What was trimmed: {trimmed}. The rest of OME's repository (its Go source, the CRDs in
`config/crd/`, charts, docs) is not copied here: OME's CRDs of this commit ship, descriptions and status removed,
in `omerender/kube/crds/ome-*.json.gz` (`scripts/vendor_crds.py`, which records each file's sha256), and
`omerender validate` checks OME's kinds against them. `modelconfig/README.md` and this file
are omerender's.

Used by the catalog sweep (`tests/catalog.py`), the samples sweep (`tests/samples.py`), the multi-node and
prefill-decode tests, `model-info`'s tests (`$OME_DATA` in the docs' snippets) and the benchmark fleets
(`benchmarks/fleet.py`).

Refresh from a checkout of OME (it prints what changed; then run the tests):

    git clone https://github.com/{repository} /tmp/ome && git -C /tmp/ome checkout COMMIT
    python scripts/refresh-ome-data.py /tmp/ome
"""


def refresh(checkout: Path, dest: Path, repository: str) -> list[str]:
    check_checkout(checkout)
    for here, ome, _ in FOLDERS:  # every link refused before anything is written
        files_under(no_link(checkout, ome)), files_under(no_link(dest, here))
    no_link(dest, "LICENSE"), no_link(dest, "PROVENANCE.md")
    commit = git(checkout, "rev-parse", "HEAD")
    date = git(checkout, "log", "-1", "--format=%cs", "HEAD")
    dest.mkdir(parents=True, exist_ok=True)
    changes = []
    for here, ome, _ in FOLDERS:
        ours = {o.removeprefix(f"{here}/") for o in OURS if o.startswith(f"{here}/")}
        changes += sync(checkout / ome, dest / here, f"{here}/", ours)
    if not (dest / "LICENSE").is_file() or not filecmp.cmp(checkout / "LICENSE", dest / "LICENSE", shallow=False):
        changes.append(f"{'M' if (dest / 'LICENSE').is_file() else 'A'} LICENSE")
        shutil.copyfile(checkout / "LICENSE", dest / "LICENSE")
    counts = {here: len(files_under(dest / here) - {o.removeprefix(f"{here}/") for o in OURS})
              for here, _, _ in FOLDERS}
    (dest / "PROVENANCE.md").write_text(provenance(repository, commit, date, counts))
    return changes


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="Refresh tests/data/ome from a checkout of OME's repository.")
    parser.add_argument("checkout", type=Path, help="a git work tree of OME's repository")
    parser.add_argument("--dest", type=Path, default=DEST, help="where the data lives (default: tests/data/ome)")
    parser.add_argument("--repository", default="sgl-project/ome",
                        help="the GitHub repository the checkout is of, for PROVENANCE.md (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        changes = refresh(args.checkout.resolve(), args.dest.resolve(), args.repository)
    except Refused as refused:
        print(f"error: {refused}", file=sys.stderr)
        return 1
    for line in changes:
        print(line)
    kinds = {k: sum(line.startswith(f"{k} ") for line in changes) for k in "AMD"}
    print(f"{len(changes)} files changed: {kinds['A']} added, {kinds['M']} modified, {kinds['D']} removed"
          if changes else "no change: the data already matches this commit")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
