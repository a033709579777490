"""The build without kustomize (omerender.gitops.native) against kustomize itself: on every kustomization of the
repository's fixtures and test data, on generated trees full of YAML that Go and Python could read apart, and on
hostile layouts, omerender's own reading is either the documents kustomize's output gives, or not taken.

The rest of the suite runs every build both ways too (tests/conftest.py sets OMERENDER_BUILD_NATIVE=verify)."""
from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from omerender.gitops import buildrun, kbuild, native
from conftest import FIXTURES, ROOT

KUSTOMIZE = shutil.which("kustomize")
pytestmark = pytest.mark.skipif(KUSTOMIZE is None, reason="kustomize is not installed (scripts/setup-tools.sh)")


def both(directory: Path, boundary: Path, tmp: Path):
    """(omerender's reading or None, kustomize's), each as (file, position, repr of the data) and stderr."""
    tree = kbuild.scan(str(directory), str(boundary))
    kbuild.copy_tree(tree, None)
    plan = kbuild.decide(tree)
    assert plan.path == "pipeline", plan.reason
    ours = native.documents(tree, plan)
    work = tmp / f"work-{len(list(tmp.iterdir()))}"
    work.mkdir()
    base = kbuild.copy_tree(tree, str(work / "tree"))
    run = buildrun.Run("kustomize", KUSTOMIZE, str(work), base, 120)
    try:
        theirs = buildrun._kustomize_docs(tree, plan, run)
    except buildrun.ToolFailed:
        theirs = None
    return seen(ours), seen(theirs)


def seen(built):
    if built is None:
        return None
    return [(doc.file, doc.position, repr(doc.data)) for doc in built[0]], built[1]


def kustomizations(root: Path) -> list[Path]:
    return sorted(p.parent for name in ("kustomization.yaml", "kustomization.yml", "Kustomization")
                  for p in root.rglob(name))


ON_DISK = kustomizations(FIXTURES) + kustomizations(ROOT / "tests" / "data")
# Those omerender reads itself; the others use what only kustomize does (patches: fixtures/kustomize).
NATIVE_ON_DISK = {"fixtures/many-clusters/clusters/west", "fixtures/many-clusters/clusters/east",
                  "fixtures/many-clusters/base", "fixtures/quickstart", "fixtures/kustomize/base",
                  "tests/data/ome/runtimes", "tests/data/ome/models"}


@pytest.mark.parametrize("directory", ON_DISK, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_kustomization_on_disk(directory, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    ours, theirs = both(directory, ROOT, tmp_path)
    assert theirs is not None
    name = str(directory.relative_to(ROOT))
    assert (ours is not None) == (name in NATIVE_ON_DISK)
    if ours is not None:
        assert ours == theirs


def test_on_disk_list_is_every_kustomization():
    assert {str(p.relative_to(ROOT)) for p in ON_DISK} >= NATIVE_ON_DISK
    assert len(ON_DISK) >= 9


# ---------------------------------------------------------------- generated trees

# Values as written in YAML: what Go's readers, kustomize's JSON round trip and omerender's reader could take apart.
SCALARS = ["1", "-5", "0o17", "0x1F", "017", "+12", "1_000", "12e3", "1.5", "'1.5'", "'x y'", '"a\\tb"', '"é ü"',
           '"\\u2028"', '"line1\\nline2"', '"trail  \\nx"', '"  lead"', "~", "null", "", "true", "True", "FALSE",
           '"true"', "'yes'", "2001-12-14", '"2001-12-14"', "9007199254740993", "[]", "{}", "[a, b]", "{a: 1}",
           '"#x"', "a #comment", '":colon"', "'it''s'", '"\\0"', '"\\ud800"', '"\\x85"', "a: b", "*alias",
           "&anchor x", "!!str 12", "yes", "y", "0.0", "1e400", "'" + "word " * 30 + "'", '"\\r\\n"', "-", "'-'",
           "|\n    block\n    text\n", "|\n    trailing  \n    x\n", ">\n    folded\n    text\n", "|-\n    k\n",
           '"\\x7f"', "'@at'", "'`tick'", "-0", "0b101", "1:20", "'1:20'", ".5", "'%x'"]
# What real objects hold: omerender reads these itself.
COMMON = [s for s in SCALARS if s not in ("1.5", "2001-12-14", "9007199254740993", '"\\ud800"', '"\\x85"', "a: b",
                                          "*alias", "&anchor x", "!!str 12", "yes", "y", "-", ".5", '"\\x7f"')]
KINDS = [("ome.io/v1beta1", "InferenceService"), ("ome.io/v1beta1", "ClusterServingRuntime"), ("v1", "ConfigMap"),
         ("v1", "Secret"), ("ome.io/v1beta1", "ServingRuntime"), ("apps/v1", "Deployment"), ("v1", "Namespace")]


def generated_object(rng: random.Random, name: str) -> str:
    api, kind = rng.choice(KINDS) if rng.random() < 0.2 else rng.choice(KINDS[:5])
    lines = [f"apiVersion: {api}", f"kind: {kind}", "metadata:", f"  name: {name}"]
    if rng.random() < 0.5:
        lines.append(f"  namespace: {rng.choice(['team-a', 'default', 'x'])}")
    if rng.random() < 0.3:
        lines.append("  labels: {}" if rng.random() < 0.3 else "  labels:\n    app: a\n    tier: '1'")
    if rng.random() < 0.3:
        lines.append("  annotations: {}" if rng.random() < 0.4 else "  annotations:\n    note: hi")
    lines.append("spec:")
    for index in range(rng.randint(1, 4)):
        value = rng.choice(SCALARS) if rng.random() < 0.04 else rng.choice(COMMON)
        lines.append(f"  f{index}: {value}" if "\n" not in value else f"  f{index}: {value.replace(chr(10), chr(10) + '  ')}")
    lines.append(f"  z: 1\n  a:\n    k: {rng.choice([c for c in COMMON if chr(10) not in c])}")
    return "\n".join(lines) + "\n"


def generated_kustomization(rng: random.Random, resources: list[str], top: bool) -> str:
    lines = ["resources:"] + [f"- {r}" for r in resources]
    if rng.random() < 0.3:
        lines.append(f"namespace: {rng.choice(['ns1', 'team-b'])}")
    if rng.random() < 0.25:
        lines.append(f"namePrefix: {rng.choice(['p-', 'x'])}")
    if rng.random() < 0.25:
        lines.append("nameSuffix: -s")
    if rng.random() < 0.25:
        lines.append("commonLabels:\n  team: 'true'")
    if rng.random() < 0.25:
        lines.append("labels:\n- pairs:\n    env: dev\n  includeSelectors: true")
    if rng.random() < 0.25:
        lines.append("commonAnnotations:\n  owner: me")
    if rng.random() < 0.1:
        lines.append("images:\n- name: x\n  newTag: v2")  # only kustomize does this
    if rng.random() < 0.5:
        lines.insert(0, "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization")
    return "\n".join(lines) + "\n"


def generated_tree(rng: random.Random, root: Path) -> Path:
    counter = iter(range(1000))
    base = root / "base"
    base.mkdir(parents=True)
    files = []
    for f in range(rng.randint(1, 3)):
        docs = [generated_object(rng, f"o{next(counter)}") for _ in range(rng.randint(1, 3))]
        (base / f"f{f}.yaml").write_text(("---\n" if rng.random() < 0.3 else "") + "---\n".join(docs))
        files.append(f"f{f}.yaml")
    (base / "kustomization.yaml").write_text(generated_kustomization(rng, files, top=False))
    top = root / "overlay"
    top.mkdir()
    (top / "extra.yaml").write_text(generated_object(rng, f"o{next(counter)}"))
    (top / "kustomization.yaml").write_text(generated_kustomization(rng, ["../base", "extra.yaml"], top=True))
    return top


def test_generated_trees(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rng = random.Random(42)
    taken = compared = 0
    for case in range(80):
        root = tmp_path / f"case{case}"
        top = generated_tree(rng, root)
        work = tmp_path / f"w{case}"
        work.mkdir()
        ours, theirs = both(top, root, work)
        if ours is None:
            continue
        taken += 1
        assert theirs is not None, f"case {case}: kustomize refused what omerender read: {top}"
        assert ours == theirs, f"case {case}"
        compared += 1
    assert compared >= 25, (taken, compared)


# ---------------------------------------------------------------- what must go to kustomize

def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


ISVC = "apiVersion: ome.io/v1beta1\nkind: InferenceService\nmetadata:\n  name: {name}\nspec: {{}}\n"
FALLBACKS = {
    "file outside the kustomization's root": {"app/kustomization.yaml": "resources:\n- ../other.yaml\n",
                                              "other.yaml": ISVC.format(name="a")},
    "an alias": {"app/kustomization.yaml": "resources:\n- a.yaml\n",
                 "app/a.yaml": "apiVersion: ome.io/v1beta1\nkind: InferenceService\nmetadata:\n  name: &n a\n"
                               "  labels: {x: *n}\n"},
    "a tag": {"app/kustomization.yaml": "resources:\n- a.yaml\n", "app/a.yaml": ISVC.format(name="!!str a")},
    "a List": {"app/kustomization.yaml": "resources:\n- a.yaml\n",
               "app/a.yaml": "apiVersion: v1\nkind: List\nitems:\n- " + ISVC.format(name="a").replace("\n", "\n  ")},
    "one id twice": {"app/kustomization.yaml": "resources:\n- a.yaml\n- b.yaml\n", "app/a.yaml": ISVC.format(name="a"),
                     "app/b.yaml": ISVC.format(name="a")},
    "a namespace that makes one id twice": {
        "app/kustomization.yaml": "namespace: nsx\nresources:\n- a.yaml\n",
        "app/a.yaml": ISVC.format(name="a") + "---\n" + ISVC.format(name="a").replace("  name: a", "  name: a\n  namespace: m")},
    "local-config": {"app/kustomization.yaml": "resources:\n- a.yaml\n",
                     "app/a.yaml": ISVC.format(name="a").replace(
                         "spec", "  annotations:\n    config.kubernetes.io/local-config: 'true'\nspec")},
    "a float": {"app/kustomization.yaml": "resources:\n- a.yaml\n", "app/a.yaml": ISVC.format(name="a") + "x: 1.5\n"},
    "a Deployment under a namespace": {"app/kustomization.yaml": "namespace: nsx\nresources:\n- a.yaml\n",
                                       "app/a.yaml": ISVC.format(name="a").replace("ome.io/v1beta1", "apps/v1")
                                       .replace("InferenceService", "Deployment")},
    "a patch": {"app/kustomization.yaml": "resources:\n- a.yaml\npatches:\n- path: p.yaml\n",
                "app/a.yaml": ISVC.format(name="a"), "app/p.yaml": ISVC.format(name="a")},
    "a directory without kustomization": {"app/kustomization.yaml": "resources:\n- sub\n",
                                          "app/sub/a.yaml": ISVC.format(name="a")},
    "two kustomization files": {"app/kustomization.yaml": "resources:\n- a.yaml\n",
                                "app/kustomization.yml": "resources:\n- a.yaml\n", "app/a.yaml": ISVC.format(name="a")},
    "an entry spelled otherwise": {"app/kustomization.yaml": "resources:\n- ./a.yaml\n", "app/a.yaml": ISVC.format(name="a")},
    "a byte order mark": {"app/kustomization.yaml": "resources:\n- a.yaml\n", "app/a.yaml": "\ufeff" + ISVC.format(name="a")},
    "a null label": {"app/kustomization.yaml": "resources:\n- a.yaml\n",
                     "app/a.yaml": ISVC.format(name="a").replace("spec", "  labels:\nspec")},
    "kustomize's own annotation": {"app/kustomization.yaml": "resources:\n- a.yaml\n",
                                   "app/a.yaml": ISVC.format(name="a").replace(
                                       "spec", "  annotations:\n    config.kubernetes.io/index: '0'\nspec")},
    "a conflicting label": {"app/kustomization.yaml": "resources:\n- a.yaml\ncommonLabels: {a: b}\n"
                                                      "labels:\n- pairs: {a: c}\n", "app/a.yaml": ISVC.format(name="a")},
}


@pytest.mark.parametrize("name", FALLBACKS)
def test_what_goes_to_kustomize(name, tmp_path, monkeypatch):
    write(tmp_path, FALLBACKS[name])
    monkeypatch.chdir(tmp_path)
    tree = kbuild.scan(str(tmp_path / "app"), str(tmp_path))
    kbuild.copy_tree(tree, None)
    assert native.documents(tree, kbuild.decide(tree)) is None


def test_a_symbolic_link_on_the_way_goes_to_kustomize(tmp_path, monkeypatch):
    write(tmp_path, {"app/kustomization.yaml": "resources:\n- link/a.yaml\n", "real/a.yaml": ISVC.format(name="a")})
    (tmp_path / "app" / "link").symlink_to(tmp_path / "real")
    monkeypatch.chdir(tmp_path)
    tree = kbuild.scan(str(tmp_path / "app"), str(tmp_path))
    assert native.documents(tree, kbuild.decide(tree)) is None


def test_a_link_outside_is_refused_as_before(tmp_path, monkeypatch):
    outside = tmp_path / "outside"
    write(tmp_path, {"repo/app/kustomization.yaml": "resources:\n- a.yaml\n", "repo/app/a.yaml": ISVC.format(name="a"),
                     "outside/secret.yaml": "x: 1\n"})
    (tmp_path / "repo" / "app" / "leak.yaml").symlink_to(outside / "secret.yaml")
    (tmp_path / "repo" / ".git").mkdir()
    done = subprocess.run([sys.executable, "-m", "omerender.cli", "build", "app"], cwd=tmp_path / "repo",
                          capture_output=True, text=True, env={**os.environ, "OMERENDER_BUILD_NATIVE": "on"})
    assert (done.returncode, done.stdout) == (1, "")
    assert "outside the repository" in done.stderr and "leak.yaml" in done.stderr


# ---------------------------------------------------------------- the commands, both ways

def omerender(directory: Path, mode: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "omerender.cli", *args, str(directory)], cwd=ROOT,
                          capture_output=True, text=True, env={**os.environ, "OMERENDER_BUILD_NATIVE": mode})


@pytest.mark.parametrize("directory", ["fixtures/quickstart", "fixtures/many-clusters/clusters/east"])
def test_build_prints_the_same_both_ways(directory):
    on, off = omerender(ROOT / directory, "on", "build"), omerender(ROOT / directory, "off", "build")
    assert on.returncode == off.returncode == 0, on.stderr
    assert (on.stdout, on.stderr) == (off.stdout, off.stderr)


def test_common_labels_warning_is_kustomize_s(tmp_path):
    shutil.copytree(FIXTURES / "quickstart", tmp_path / "base", ignore=shutil.ignore_patterns("namespace.yaml"))
    text = (tmp_path / "base/kustomization.yaml").read_text().replace("  - namespace.yaml\n", "")
    write(tmp_path, {"base/kustomization.yaml": text + "commonLabels: {team: a}\n",
                     "app/kustomization.yaml": "resources:\n- ../base\ncommonLabels: {env: dev}\nnamespace: nsx\n",
                     ".git/HEAD": ""})
    on = subprocess.run([sys.executable, "-m", "omerender.cli", "build", "app"], cwd=tmp_path, capture_output=True,
                        text=True, env={**os.environ, "OMERENDER_BUILD_NATIVE": "on"})
    off = subprocess.run([sys.executable, "-m", "omerender.cli", "build", "app"], cwd=tmp_path, capture_output=True,
                         text=True, env={**os.environ, "OMERENDER_BUILD_NATIVE": "off"})
    assert (on.returncode, on.stdout, on.stderr) == (off.returncode, off.stdout, off.stderr)
    assert on.stderr.count("'commonLabels' is deprecated") == 2


def test_a_bad_setting_is_an_error(tmp_path):
    done = omerender(ROOT / "fixtures/quickstart", "maybe", "build")
    assert (done.returncode, done.stdout, done.stderr) == (
        1, "", 'error: OMERENDER_BUILD_NATIVE must be on, off or verify, got "maybe"\n')


def test_kustomize_order_by_key_is_the_comparison_s():
    """kbuild.kustomize_order sorts by a key where it can; on random objects (Namespaces of two groups, kinds
    kustomize ranks first and last, empty fields, shared names) it must give the comparison's order."""
    import functools
    rng = random.Random(7)
    kinds = ["Namespace", "Deployment", "Service", "ConfigMap", "InferenceService", "MutatingWebhookConfiguration",
             "X", ""]
    for trial in range(300):
        objects = []
        for index in range(rng.randint(0, 12)):
            api = rng.choice(["v1", "apps/v1", "ome.io/v1beta1", "", "a_b/v1", "x/v_1"])
            meta = {"name": rng.choice(["a", "b", "", "c"])}
            if rng.random() < 0.5:
                meta["namespace"] = rng.choice(["n", "", "m"])
            objects.append({"apiVersion": api, "kind": rng.choice(kinds), "metadata": meta, "i": index})
        options = rng.choice([None, {"sortOptions": {"order": "legacy"}},
                              {"sortOptions": {"legacySortOptions": {"orderFirst": ["X"], "orderLast": ["Service"]}}}])
        ranks_first = ((options or {}).get("sortOptions", {}).get("legacySortOptions", {}).get("orderFirst")
                       or kbuild.ORDER_FIRST)
        ranks_last = ((options or {}).get("sortOptions", {}).get("legacySortOptions", {}).get("orderLast")
                      or kbuild.ORDER_LAST)
        ranks = {kind: i - len(ranks_first) for i, kind in enumerate(ranks_first)}
        ranks.update({kind: 1 + i for i, kind in enumerate(ranks_last)})
        expected = sorted(objects, key=functools.cmp_to_key(
            lambda a, b: kbuild._compare(kbuild._id(a), kbuild._id(b), ranks)))
        assert [o["i"] for o in kbuild.kustomize_order(objects, options)] == [o["i"] for o in expected], trial


def test_risky_text_prefilter_is_the_pattern_s():
    """native._risky looks for what RISKY_TEXT needs before running it: on random texts built of the pattern's
    pieces it must answer as the pattern alone does."""
    rng = random.Random(11)
    pieces = ["a", " ", "\n", ":", "-", "[", "{", ",", "?", "&", "*", "!", "<", "%", "\ufeff", "kind", "List",
              "'", '"', "x.", "List2", "é", "\t"]
    answers = set()
    for trial in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        expected = native.RISKY_TEXT.search(text) is not None
        assert native._risky(text) == expected, repr(text)
        answers.add(expected)
    assert answers == {True, False}
