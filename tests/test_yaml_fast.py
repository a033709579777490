"""The fast YAML read path (omerender/yamlio/fastread.py): rapidyaml where it reads a document as the limited loader
does, the loader everywhere else. Every case is read both ways (the suite runs with OMERENDER_YAML_FAST=verify,
conftest.py, so a difference fails), and each hazard is shown to reach the loader."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

from omerender.errors import OmeError
from omerender.yamlio import fastread, limits
from omerender.yamlio.reading import parse_text
from omerender.yamlio.yamlread import Budget, load_all, load_one

from conftest import ROOT, run_cli

BORING = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  port: '8080'\n  count: \"1\"\n"
          "  flag: 'true'\n")

# Each reads differently in rapidyaml than in Go's readers (or than the loader's rules), or is refused by the loader.
HAZARDS = {
    "octal": "a: 0o22\n",
    "hex": "a: 0x1F\n",
    "underscore": "a: 1_000\n",
    "True": "a: True\n",
    "TRUE": "a: TRUE\n",
    "tilde": "a: ~\n",
    "Null": "a: Null\n",
    "plus": "a: +12\n",
    "huge exponent": "a: 1e400\n",
    "leading zero": "a: 0777\n",
    "yes": "a: yes\n",
    "off": "a: off\n",
    "y": "a: y\n",
    "timestamp": "a: 2001-12-14\n",
    "timestamp time": "a: 2001-12-14t21:59:43.10-05:00\n",
    "inf": "a: .inf\n",
    "nan": "a: nan\n",
    "NaN": "a: .NaN\n",
    "str tag": "a: !!str 1\n",
    "int tag": "a: !!int '1'\n",
    "local tag": "a: !foo x\n",
    "non-specific tag": "a: ! 12\n",
    "timestamp tag": "a: !!timestamp 2001-12-14\n",
    "anchor and alias": "a: &x 1\nb: *x\n",
    "merge": "base: &b {x: 1}\nc:\n  <<: *b\n  y: 2\n",
    "quoted merge key": "'<<': 1\n",
    "duplicate key": "a: 1\na: 2\n",
    "duplicate quoted key": "a: 1\n'a': 2\n",
    "number key": "1: a\n",
    "bool key": "true: a\n",
    "null key": "~: a\n",
    "empty key": "'': a\n",
    "explicit key": "? a\n: 1\n",
    "complex key": "? [a]\n: 1\n",
    "directive": "%YAML 1.1\n---\na: yes\n",
    "document end": "a: 1\n...\n",
    "content on ---": "--- a\n",
    "tab": "a:\tb\n",
    "tab indent": "a:\n\tb: 1\n",
    "CRLF": "a: 1\r\nb: 2\r\n",
    "BOM": "\ufeffa: 1\n",
    "line separator": "a: '\u2028'\nb: 1\n",  # a line break in the loader's marks
    "paragraph separator": "a: x\u2029y\n",
    "next line": "a: x\x85y\n",
    "control": "a: \"x\x07\"\n",
    "escape": "a: \"\\x41\\u00e9\\N\"\n",
    "backslash plain": "a: c:\\dir\n",
    "starts with ]": "]\n",
    "value ]": "a: ]\n",
    "value ,": "a: ,b\n",
    "at sign": "a: @x\n",
    "root block scalars": "|\n|\n",
    "root block scalar": "|\n x\n",
    "bracket value": "a: }\n- b: ]\n",
    "backtick": "a: `x`\n",
    "deep": "a:\n" + "".join(" " * i + "- \n" for i in range(1, 120)),
    "deep flow": "a: " + "[" * 150 + "]" * 150 + "\n",
    "deeper than rapidyaml writes": "a: " + "[" * 80 + "]" * 80 + "\n",  # under the limit: the loader reads it
    "long line": "a: " + "x" * 3000 + "\n",
    "malformed": "a: [\n",
    "unterminated quote": "a: 'x\n",
}

# Read by rapidyaml, and the same as the loader reads them.
BORING_CASES = {
    "configmap": BORING,
    "quoted numbers": "a: '1'\nb: \"0.9\"\nc: 'true'\nd: '~'\ne: ''\nport: 8080\nname: '8080'\n",
    "block scalars": "a: |\n  x\n  y\nb: >\n  x\n  y\nc: |-\n  z\nd: |+\n  w\n\n",
    "multi-line plain": "a: b\n  c\n  d\n",
    "flow": "a: {b: 1, c: [x, 'y', \"z\"]}\nd: []\ne: {}\n",
    "nulls": "a:\nb: null\nc: [null]\n",
    "floats": "a: 0.5\nb: 1.5e3\nc: -2.25\nd: 1.0\n",
    "bools": "a: true\nb: false\n",
    "comments": "# head\na: 1 # trailing\n# between\nb: x#y\n",
    "non-ASCII": "a: é\nb: 日本\n\u00e9: '\U0001F600'\n",
    "indented root": "  a: 1\n  b: 2\n",
    "list root": "- a\n- 1\n- {b: c}\n",
    "scalar root": "hello\n",
    "url with &": "a: http://x/?a=1&b=2\nb: x*y\nc: x!y\n",
    # numbers rapidyaml writes as JSON numbers: their text read by goscalars, as the loader reads it
    "exponent": "a: 12e3\n",
    "minus zero": "a: -0\n",
    "dot": "a: .5\n",
    "trailing dot": "a: 1.\n",
    "big int": "a: 123456789012345678901234\n",
    "plain merge value": "a: <<\n",
    "quoted number key": "'1': a\n",
    "quoted y": "a: 'y'\nb: \"no\"\n",
}


def read(text: str):
    roots: list = []
    data = load_all(text, Budget(), roots)
    return data, [(r.index, r.line, r.column) for r in roots]


def fast_documents(text: str) -> int:
    before = fastread.READ["fast"]
    try:
        load_all(text, Budget())
    except yaml.YAMLError:
        pass
    return fastread.READ["fast"] - before


def test_the_suite_reads_both_ways():
    assert os.environ["OMERENDER_YAML_FAST"] == "verify"
    assert fastread.AVAILABLE, "rapidyaml is a dependency: pip install -e '.[test]'"


@pytest.mark.parametrize("name", sorted(HAZARDS))
def test_each_hazard_goes_to_the_loader(name, monkeypatch):
    text = HAZARDS[name]
    assert fast_documents(text) == 0
    # beside boring documents, only its own document goes to the loader (or the whole text, where the hazard
    # changes how documents split or read), and the result is the loader's, positions too
    mixed = BORING + "---\n" + text + ("" if text.endswith("\n") else "\n") + "---\n" + BORING
    monkeypatch.setenv("OMERENDER_YAML_FAST", "off")
    try:
        expected = read(mixed)
    except yaml.YAMLError as err:
        expected = str(err)
    for mode in ("on", "verify"):
        monkeypatch.setenv("OMERENDER_YAML_FAST", mode)
        try:
            got = read(mixed)
        except yaml.YAMLError as err:
            got = str(err)
        assert got == expected


@pytest.mark.parametrize("name", sorted(BORING_CASES))
def test_boring_documents_are_read_fast_and_the_same(name, monkeypatch):
    text = BORING_CASES[name]
    assert fast_documents(text) == 1
    monkeypatch.setenv("OMERENDER_YAML_FAST", "off")
    expected = read(text)
    monkeypatch.setenv("OMERENDER_YAML_FAST", "on")
    assert read(text) == expected


def test_values_and_types():
    assert read(BORING_CASES["quoted numbers"])[0] == [
        {"a": "1", "b": "0.9", "c": "true", "d": "~", "e": "", "port": 8080, "name": "8080"}]
    data = read(BORING_CASES["floats"])[0][0]
    assert data == {"a": 0.5, "b": 1500, "c": -2.25, "d": 1} and type(data["b"]) is int  # as Go's JSON reads them


@pytest.mark.parametrize("text", [
    "---\n---\na: 1\n", "a: 1\n---\n", "a: 1\n---\n# c\n\n---\nb: 2\n", "# c\n---\na: 1\n", "é: 1\n---\nb: 2\n",
    "---\n  a: 1\n", "---   \nx\n", "a: 1\n--- \n", "a: 1\n---", "", "# only\n", "\n\n", "---\n",
    "a: 1\n---\nb: 0o7\n---\nc: 3\n"])
def test_document_splits_and_root_marks(text, monkeypatch):
    monkeypatch.setenv("OMERENDER_YAML_FAST", "off")
    expected = read(text)
    monkeypatch.setenv("OMERENDER_YAML_FAST", "on")
    assert read(text) == expected


@given(st.text(alphabet="-\n #a", max_size=40))
def test_document_separators_are_the_lines_the_regex_finds(text):
    assert [m.span() for m in fastread._separators(text)] == [m.span() for m in fastread._SEPARATOR.finditer(text)]


def test_messages_name_the_same_place_either_way(monkeypatch):
    text = BORING + "---\n" + BORING + "---\na: 1\nb: [\n"
    messages = []
    for mode in ("off", "on"):
        monkeypatch.setenv("OMERENDER_YAML_FAST", mode)
        with pytest.raises(OmeError) as caught:
            parse_text(text, "f.yaml")
        messages.append(caught.value.lines() if hasattr(caught.value, "lines") else str(caught.value))
    assert messages[0] == messages[1]
    docs = parse_text(BORING + "---\n" + BORING, "f.yaml")
    assert [d.origin.mark("data.port") for d in docs] == [(6, 3), (15, 3)]


def test_limits_hold_across_texts_and_documents(monkeypatch):
    monkeypatch.setattr(limits, "MAX_OBJECTS", 3)
    budget = Budget()
    load_all("a: 1\n---\nb: 2\n", budget)
    with pytest.raises(yaml.YAMLError, match="more than 3 YAML documents"):
        load_all("c: 3\n---\nd: 4\n", budget)
    monkeypatch.setenv("OMERENDER_YAML_FAST", "on")
    with pytest.raises(yaml.YAMLError, match="nesting deeper than 100 levels"):
        load_all(HAZARDS["deep"], Budget())


def test_load_one(monkeypatch):
    monkeypatch.setenv("OMERENDER_YAML_FAST", "on")
    assert load_one(BORING, Budget())["data"]["port"] == "8080"
    assert load_one("# nothing\n", Budget()) is None
    with pytest.raises(yaml.YAMLError, match="expected a single document"):
        load_one("a: 1\n---\nb: 2\n", Budget())


def test_a_wrong_setting_is_refused(tmp_path, monkeypatch):
    (tmp_path / "a.yaml").write_text(BORING)
    monkeypatch.setenv("OMERENDER_YAML_FAST", "fast")
    result = run_cli("validate", str(tmp_path / "a.yaml"))
    assert result.code == 1 and result.stdout == ""
    assert result.stderr == 'error: OMERENDER_YAML_FAST must be on, off or verify, got "fast"\n'


def _omerender(args, env_extra, blocked: bool = False):
    code = ("import sys\nsys.modules['ryml'] = None\n" if blocked else "import sys\n") + \
        "from omerender.cli import main\nsys.argv = ['omerender'] + sys.argv[1:]\nmain()\n"
    env = {**os.environ, **env_extra}
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=300)


def test_without_rapidyaml_the_output_is_the_same(tmp_path):
    (tmp_path / "bad.yaml").write_text(BORING + "---\na: [\n")
    for args in (["render", str(ROOT / "fixtures" / "quickstart")], ["validate", str(tmp_path / "bad.yaml")]):
        fast = _omerender(args, {"OMERENDER_YAML_FAST": "on"})
        without = _omerender(args, {"OMERENDER_YAML_FAST": "on"}, blocked=True)
        assert (fast.returncode, fast.stdout, fast.stderr) == (without.returncode, without.stdout, without.stderr)
        assert fast.stdout or fast.stderr
    # rapidyaml's own error print never reaches stderr: the message is the loader's alone
    assert fast.returncode == 1 and fast.stderr.startswith("error: ") and "[parse]" not in fast.stderr


def test_the_module_reports_the_missing_engine():
    run = subprocess.run([sys.executable, "-c", "import sys; sys.modules['ryml'] = None\n"
                          "from omerender.yamlio import fastread; print(fastread.AVAILABLE)"],
                         capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert run.stdout == "False\n"


# ---------------------------------------------------------------- generated documents

_SCALARS = ["a", "x y", "8080", "'8080'", '"1"', "1", "-1", "+1", "0.5", ".5", "1.", "1e3", "0o7", "0x1F", "07",
            "1_0", "true", "True", "'true'", "yes", "no", "on", "y", "~", "null", "Null", "''", '""', "2001-12-14",
            "1:20", ".inf", "nan", "-", "a-b", "x: y", "'a: b'", "a #c", "a#c", "<<", "'<<'", "=", "é", "'\u2028'",
            "[]", "{}",
            "|\n  block\n", ">-\n  folded\n  text\n", "'it''s'", '"q\\"x"', "*a", "&a b", "!!str 1", "- a"]
_KEYS = ["a", "b", "'a'", "1", "'1'", "true", "~", "<<", "x y", "'8080'"]


def _value(draw, depth: int) -> str:
    kind = draw(st.sampled_from(["scalar", "scalar", "map", "list", "flow"] if depth < 3 else ["scalar"]))
    if kind == "scalar":
        return draw(st.sampled_from(_SCALARS))
    if kind == "flow":
        items = draw(st.lists(st.sampled_from([s for s in _SCALARS if "\n" not in s]), max_size=3))
        return "[" + ", ".join(items) + "]"
    indent = "  " * (depth + 1)
    if kind == "map":
        keys = draw(st.lists(st.sampled_from(_KEYS), min_size=1, max_size=3))
        return "\n" + "".join(f"{indent}{k}: {_value(draw, depth + 1).replace(chr(10), chr(10) + '  ')}\n"
                              for k in keys).rstrip("\n")
    items = draw(st.lists(st.just(None), min_size=1, max_size=3))
    return "\n" + "".join(f"{indent}- {_value(draw, depth + 1).replace(chr(10), chr(10) + '  ')}\n"
                          for _ in items).rstrip("\n")


@st.composite
def _documents(draw) -> str:
    docs = []
    for _ in range(draw(st.integers(1, 3))):
        keys = draw(st.lists(st.sampled_from(_KEYS), min_size=1, max_size=4))
        docs.append("".join(f"{k}: {_value(draw, 0)}\n" for k in keys))
    return "---\n".join(docs)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_documents())
def test_generated_documents_read_the_same_both_ways(text):
    try:
        load_all(text, Budget())  # OMERENDER_YAML_FAST=verify: a difference raises FastPathDifference
    except yaml.YAMLError:
        pass
