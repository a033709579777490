"""YAML out reads back identically in every reader: PyYAML (YAML 1.1) and the Go yaml.v3 core schema
that kustomize, kubectl and Argo CD use.

kustomize keeps a plain scalar's text when it only re-emits it, so a misread would stay hidden; a JSON
patch makes kustomize decode every object into Go values and encode them again, exactly as a JSON
patch in a user's overlay (or kubectl's conversion to JSON) does. A value kustomize took for a
number, bool, null or timestamp comes back changed (``0o022`` -> ``18``)."""
from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import FIXTURES, container, render_objects, run_cli

# Strings some reader takes for something else; each must come out quoted and read back as itself.
RETYPED = [
    # yaml.v3 (YAML 1.2 core schema as Go reads it)
    "1e-5", "1E5", "1.5e3", "-1e+5", ".5", "+.5", ".5e3", "1.", "0o022", "0O17", "-0o7", "0x1F", "0X1F",
    "+0x1f", "0b101", "0B11", "-0b1", "09", "0089", "1_000", "1__0", "1_", "+1", "-1", "01", "0", "1.0",
    "99999999999999999999999", "2001-1-2", "2001-12-14", "2001-12-14T21:59:43.10Z",
    "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10",
    # YAML 1.1 (PyYAML, go-yaml v2 as kubectl's sigs.k8s.io/yaml reads it)
    "y", "Y", "n", "N", "yes", "Yes", "no", "NO", "on", "On", "off", "OFF", "1:20", "-1:20:30.5", "190:20:30",
    # out of float64 range, so a string to Go after all: quoting by syntax alone costs two characters
    "1e400",
    # both
    ".inf", ".Inf", "-.Inf", "+.inf", ".nan", ".NaN", "~", "null", "Null", "NULL", "", "true", "True",
    "FALSE", "<<", "=",
]
# Strings no reader retypes: they stay plain, so the output of existing renders does not change.
PLAIN = ["1.2.3", "v1", "0.5.5.post3", "1e", "0o", "0x", "0b", "+", "_1", "0x1G", "0o8", "1e5x", "NaN",
         "inf", "Infinity", "2024-model", "20011-12-14", "nvidia.com/gpu", "30Gi", "http1", "yesno", "nul"]


def configmap(values: list[str]) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "values", "namespace": "ns"},
            "data": {f"k{i}": v for i, v in enumerate(values)}}


class _Yaml12OutputLoader(yaml.SafeLoader):
    """PyYAML reading yaml.v3's output: yaml.v3 writes "=", "<<" and dates Go cannot parse
    ("0000-00-00") plain, as the strings they are to it, where PyYAML would look for YAML 1.1's value
    and merge keys and timestamps. What kustomize took for a timestamp comes back as a changed text."""


_Yaml12OutputLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if not tag.endswith((":value", ":merge", ":timestamp"))]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}

JSON_ROUND_TRIP = """resources: [rendered.yaml]
patches:
- target: {kind: .*}
  patch: '[{"op": "copy", "from": "/kind", "path": "/kind"}]'
"""


def kustomize_read_back(rendered: str) -> list[dict]:
    """What kustomize makes of the rendered YAML once it decodes it into Go values."""
    with tempfile.TemporaryDirectory(prefix="omerender-emit-") as tmp:
        Path(tmp, "rendered.yaml").write_text(rendered)
        Path(tmp, "kustomization.yaml").write_text(JSON_ROUND_TRIP)
        proc = subprocess.run(["kustomize", "build", tmp], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return [d for d in yaml.load_all(proc.stdout, Loader=_Yaml12OutputLoader) if d]


def render_values(values: list[str]) -> str:
    run = run_cli("render", "-", input=yaml.safe_dump(configmap(values)))
    assert (run.code, run.stderr) == (0, ""), run.stderr
    return run.stdout


@pytest.mark.parametrize("value", RETYPED)
def test_a_string_any_reader_would_retype_is_quoted(value):
    rendered = render_values([value])
    assert f"  k0: '{value}'\n" in rendered
    assert yaml.safe_load(rendered)["data"]["k0"] == value


def test_strings_no_reader_retypes_stay_plain():
    rendered = render_values(PLAIN)
    for i, value in enumerate(PLAIN):
        assert f"  k{i}: {value}\n" in rendered


def test_kustomize_reads_back_every_retyped_string_and_plain_one():
    values = RETYPED + PLAIN
    (back,) = kustomize_read_back(render_values(values))
    assert back["data"] == configmap(values)["data"]


def test_an_env_value_reaches_the_deployment_unchanged_through_kustomize(F):
    env = [{"name": "LR", "value": "1e-5"}, {"name": "UMASK", "value": "0o022"}, {"name": "DEBUG", "value": "y"}]
    F["isvc"]["spec"]["engine"]["runner"]["env"] += env
    run = render_objects([F["model"], F["runtime"], F["isvc"]])
    assert run.code == 0, run.stderr
    for name, value in (("LR", "'1e-5'"), ("UMASK", "'0o022'"), ("DEBUG", "'y'")):
        assert f"        - name: {name}\n          value: {value}\n" in run.stdout
    deployment = next(o for o in kustomize_read_back(run.stdout) if o["kind"] == "Deployment")
    values = dict((e["name"], e.get("value")) for e in container(deployment)["env"])
    assert {e["name"]: values[e["name"]] for e in env} == {"LR": "1e-5", "UMASK": "0o022", "DEBUG": "y"}


# Strings biased to what readers take for numbers, bools, nulls and timestamps, plus any text.
_NUMBERISH = st.text(alphabet="0123456789+-._eEoOxXbB:", max_size=8)
_WORDISH = st.text(alphabet="yYnNoOtTrRuUeEfFaAlLsSfF~.iInN", max_size=5)
_DATES = st.from_regex(r"\A[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt ][0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:\.[0-9]{1,3})?"
                       r"(?:Z|[-+][0-9]{2}:[0-9]{2})?)?\Z")
_ANY = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc"), include_characters="\t\n"),
               max_size=10)
_STRINGS = st.one_of(st.sampled_from(RETYPED + PLAIN), _NUMBERISH, _WORDISH, _DATES, _ANY)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_STRINGS, min_size=1, max_size=60))
def test_random_strings_read_back_identically_in_pyyaml_and_kustomize(values):
    rendered = render_values(values)
    expected = configmap(values)["data"]
    assert yaml.safe_load(rendered)["data"] == expected
    (back,) = kustomize_read_back(rendered)
    assert back["data"] == expected


class _Writes:
    def __init__(self):
        self.texts = []

    def write(self, text):
        self.texts.append(text)


@pytest.mark.parametrize("how", ["stream", "resource list"])
def test_a_large_output_goes_out_a_mebibyte_at_a_time(how):
    """8 KiB writes into a pipe wake its reader (kustomize, Argo CD) 128 times a MiB."""
    from omerender.yamlio.emit import dump, dump_resource_list, write_resource_list, write_stream
    objects = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm-{i}"}, "data": {"k": "x" * 2000}}
               for i in range(1700)]
    out = _Writes()
    if how == "stream":
        write_stream(objects, out)
        expected = "".join("---\n" + dump(o) for o in objects)
    else:
        resource_list = {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": objects}
        write_resource_list(resource_list, out)
        expected = dump_resource_list(resource_list)
    assert "".join(out.texts) == expected
    assert len(expected) > 3 << 20
    assert all(1 << 20 <= len(text) < (1 << 20) + (64 << 10) for text in out.texts[:-1])
    assert len(out.texts) == 4


# ---------------------------------------------------------------- the direct writer is PyYAML's text

TRICKY_TEXTS = RETYPED + ["", " ", "-", "--", "---x", "...x", ".x", "..", "a:b", "a: b", "a:", "# x", "x #y", "a\nb",
                          "a\n\nb\n", "'q'", '"d"', "- x", "? x", "[x]", "{x}", "x,y", "café", "\u00e9\u2028x",
                          "tab\there", "\x00", "\x1b[31m", "~", "null", "Null", "true", "@x", "`x", "!x", "&a",
                          "*a", "|", ">", "%x", "x" * 200, "long " * 30, "x=y", "--a=b", "img:1.0", "a@b", "a,b", ":a", "=",
                          "=a", "@a", ",a", "+a", "+1", "a::", "a:-", "-:", "a#b", "a%b", "x:y:", "1:2", "0:0:1"]
_texts = st.one_of(st.sampled_from(TRICKY_TEXTS), st.text(max_size=12),
                   st.from_regex(r"[a-z0-9./-]{1,12}", fullmatch=True))
_scalars = st.one_of(_texts, st.integers(), st.booleans(), st.none())
_data = st.recursive(_scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                     st.dictionaries(_texts, inner, max_size=4)), max_leaves=25)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.dictionaries(_texts, _data, min_size=1, max_size=5), min_size=1, max_size=3))
def test_a_stream_is_written_as_pyyaml_writes_it(objects):
    """emit.write_stream writes most objects itself, for speed; the text must be dump_all's, byte for byte,
    whatever the strings, nesting and empty collections (a text PyYAML spreads over lines goes to PyYAML)."""
    import io

    from omerender.yamlio import emit
    out = io.StringIO()
    emit.write_stream(objects, out)
    assert out.getvalue() == yaml.dump_all(objects, explicit_start=True, **emit._OPTIONS)


def test_the_direct_writer_writes_the_common_objects_itself():
    """The speed comes from objects the writer handles itself: a rendered Deployment is one of them."""
    from omerender.yamlio import emit
    run = run_cli("render", str(FIXTURES / "quickstart"))
    deployment = next(o for o in run.objects if o["kind"] == "Deployment")
    assert emit._direct(deployment) == emit._dumped(deployment)


@settings(max_examples=1000, deadline=None)
@given(st.from_regex(r"(?!---|\.\.\.)(?:[A-Za-z0-9_./=+]|-(?=.))[A-Za-z0-9_./=+:@,%-]{0,8}(?<!:)", fullmatch=True))
def test_a_text_the_writer_prints_as_is_is_what_pyyaml_prints(text):
    """Texts the direct writer prints without asking PyYAML (the shortcut's pattern) come out as PyYAML's."""
    from omerender.yamlio import emit
    assert emit._SAFE_PLAIN.match(text)
    assert emit._value_text(text) == emit._dumped({"k": text})[3:-1]
    assert emit._key_text(text) == emit._dumped({text: 0})[:-4]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_data)
def test_dump_is_pyyaml_s_text(data):
    """emit.dump (what render --output-dir, check, diff and the build's staged files print) writes what it can
    itself: the text must be PyYAML's, byte for byte, for any value, mapping or not."""
    from omerender.yamlio import emit
    assert emit.dump(data) == yaml.dump(data, **emit._OPTIONS)


def test_a_key_set_seen_before_still_prints_each_map_s_own_values_in_sorted_order():
    """The writer remembers each key set's sorted order and key texts (emit._SHAPES), never a map's values: maps
    with the keys of one seen before, in any order, print their own values, and one with a key that cannot be
    written plainly (or is not a string) is still PyYAML's text."""
    from omerender.yamlio import emit
    first = {"name": "a", "image": "img:1", "args": ["--x"], "ports": [{"containerPort": 80}]}
    again = {"ports": [], "args": ["1e3", "y"], "image": "", "name": {"k": None}}
    reordered = dict(reversed(list(first.items())))
    for data in (first, again, reordered, first, {"1": 1, "a": "null"}, {1: "a"}, {"b": 1, "a:": "x", "? c": True}):
        assert emit.dump(data) == yaml.dump(data, **emit._OPTIONS)
        assert emit.dump({"items": [data, data]}) == yaml.dump({"items": [data, data]}, **emit._OPTIONS)
    assert emit.dump(again) == "args:\n- '1e3'\n- 'y'\nimage: ''\nname:\n  k: null\nports: []\n"
