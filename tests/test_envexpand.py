"""omerender.kube.envexpand against the kubelet's own test table (k8s.io/kubernetes
third_party/forked/golang/expansion/expand_test.go: doExpansionTest and TestMapReference)."""
from __future__ import annotations

import time

import pytest

from omerender.kube.envexpand import container_env, escape, expand, expand_argument, unresolved

CONTEXT = {"VAR_A": "A", "VAR_B": "B", "VAR_C": "C", "VAR_REF": "$(VAR_A)", "VAR_EMPTY": ""}

# (name, input, expected), as expand_test.go lists them
KUBELET_CASES = [
    ("whole string", "$(VAR_A)", "A"),
    ("repeat", "$(VAR_A)-$(VAR_A)", "A-A"),
    ("beginning", "$(VAR_A)-1", "A-1"),
    ("middle", "___$(VAR_B)___", "___B___"),
    ("end", "___$(VAR_C)", "___C"),
    ("compound", "$(VAR_A)_$(VAR_B)_$(VAR_C)", "A_B_C"),
    ("escape & expand", "$$(VAR_B)_$(VAR_A)", "$(VAR_B)_A"),
    ("compound escape", "$$(VAR_A)_$$(VAR_B)", "$(VAR_A)_$(VAR_B)"),
    ("mixed in escapes", "f000-$$VAR_A", "f000-$VAR_A"),
    ("backslash escape ignored", "foo\\$(VAR_C)bar", "foo\\Cbar"),
    ("backslash escape ignored 2", "foo\\\\$(VAR_C)bar", "foo\\\\Cbar"),
    ("lots of backslashes", "foo\\\\\\\\$(VAR_A)bar", "foo\\\\\\\\Abar"),
    ("nested var references", "$(VAR_A$(VAR_B))", "$(VAR_A$(VAR_B))"),
    ("nested var references second type", "$(VAR_A$(VAR_B)", "$(VAR_A$(VAR_B)"),
    ("value is a reference", "$(VAR_REF)", "$(VAR_A)"),
    ("value is a reference x 2", "%%$(VAR_REF)--$(VAR_REF)%%", "%%$(VAR_A)--$(VAR_A)%%"),
    ("empty var", "foo$(VAR_EMPTY)bar", "foobar"),
    ("unterminated expression", "foo$(VAR_Awhoops!", "foo$(VAR_Awhoops!"),
    ("expression without operator", "f00__(VAR_A)__", "f00__(VAR_A)__"),
    ("shell special vars pass through", "$?_boo_$!", "$?_boo_$!"),
    ("bare operators are ignored", "$VAR_A", "$VAR_A"),
    ("undefined vars are passed through", "$(VAR_DNE)", "$(VAR_DNE)"),
    ("multiple (even) operators, var undefined", "$$$$$$(BIG_MONEY)", "$$$(BIG_MONEY)"),
    ("multiple (even) operators, var defined", "$$$$$$(VAR_A)", "$$$(VAR_A)"),
    ("multiple (odd) operators, var undefined", "$$$$$$$(GOOD_ODDS)", "$$$$(GOOD_ODDS)"),
    ("multiple (odd) operators, var defined", "$$$$$$$(VAR_A)", "$$$A"),
    ("missing open expression", "$VAR_A)", "$VAR_A)"),
    ("shell syntax ignored", "${VAR_A}", "${VAR_A}"),
    ("trailing incomplete expression not consumed", "$(VAR_B)_______$(A", "B_______$(A"),
    ("trailing incomplete expression, no content, is not consumed", "$(VAR_C)_______$(", "C_______$("),
    ("operator at end of input string is preserved", "$(VAR_A)foobarzab$", "Afoobarzab$"),
    ("shell escaped incomplete expr", "foo-\\$(VAR_A", "foo-\\$(VAR_A"),
    ("lots of $( in middle", "--$($($($($--", "--$($($($($--"),
    ("lots of $( in beginning", "$($($($($--foo$(", "$($($($($--foo$("),
    ("lots of $( at end", "foo0--$($($($(", "foo0--$($($($("),
    ("escaped operators in variable names are not escaped", "$(foo$$var)", "$(foo$$var)"),
    ("newline not expanded", "\n", "\n"),
]


@pytest.mark.parametrize("name, text, expected", KUBELET_CASES, ids=[case[0] for case in KUBELET_CASES])
def test_expand_follows_the_kubelets_table(name, text, expected):
    assert expand(text, CONTEXT.get) == expected


def test_env_values_see_only_the_variables_defined_before_them():
    # TestMapReference: each value expanded in order, against the earlier ones
    env = container_env({"env": [{"name": "FOO", "value": "bar"}, {"name": "ZOO", "value": "$(FOO)-1"},
                                 {"name": "BLU", "value": "$(ZOO)-2"}]})
    assert env == {"FOO": "bar", "ZOO": "bar-1", "BLU": "bar-1-2"}
    later = container_env({"env": [{"name": "A", "value": "$(B)-x"}, {"name": "B", "value": "b"}]})
    assert later == {"A": "$(B)-x", "B": "b"}
    assert expand_argument("--name=$(A)", later) == "--name=$(B)-x"   # a value is not expanded twice


def test_a_variable_only_the_cluster_knows_stays_as_written_and_is_named():
    env = container_env({"env": [{"name": "NS", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
                                 {"name": "EMPTY"}, {"name": "NAME", "value": "m-$(NS)"}]})
    assert env == {"NS": None, "EMPTY": "", "NAME": "m-$(NS)"}
    assert expand_argument("$(NAME)/$(EMPTY)x", env) == "m-$(NS)/x"
    assert unresolved("$(NS)-$(NS)-$(OTHER)-$$(NS)", env) == ["NS"]
    assert unresolved("$(NAME)", env) == ["NAME"]   # its value refers to NS
    assert unresolved("$(EMPTY)", env) == []


def test_a_later_entry_of_a_name_replaces_the_earlier_one():
    env = container_env({"env": [{"name": "A", "value": "1"}, {"name": "A", "value": "$(A)2"}]})
    assert env == {"A": "12"}


@pytest.mark.parametrize("text", ["", "plain", "$", "$$", "a$(B)c", "$$(B)", "$(", "x$", "$(A$(B))", "é$(é)"])
def test_an_escaped_text_comes_back_unchanged(text):
    assert expand(escape(text), CONTEXT.get) == text


@pytest.mark.parametrize("text", ["$(" * 500_000, "$$" * 500_000, "$(A)" * 250_000, "x$" * 500_000,
                                  "$(" * 250_000 + ")"])
def test_a_megabyte_of_operators_is_expanded_in_linear_time(text):
    started = time.process_time()
    expanded = expand(text, {"A": "b"}.get)
    assert time.process_time() - started < 2
    expected = {"$$$$": "$" * 500_000, "$(A)": "b" * 250_000}.get(text[:4], text)
    assert expanded == expected
    assert expand(escape(text), {}.get) == text
