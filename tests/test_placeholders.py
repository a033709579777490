"""Placeholders: render.md §5, api.md §8.6, §16 examples 22-26; Go text/template semantics."""
import copy
from pathlib import Path

import pytest
import yaml

from omerender.errors import OmeError
from omerender.ome.workloads.placeholders import PlaceholderError, expand, expand_container

OME = Path(__file__).resolve().parent / "data" / "ome"
ESCAPE_HINT = 'to pass literal braces, write {{"{{"}} and {{"}}"}}'

# metadata of the isvc of fixture F (render.md §15)
F_META = {"name": "llama-3-2-3b-instruct", "namespace": "llama-demo", "labels": {"team": "llm"}}


def meta(labels=None, annotations=None):
    data = copy.deepcopy(F_META)
    data["labels"].update(labels or {})
    if annotations is not None:
        data["annotations"] = annotations
    return data


def runtime_runner(relative_path):
    runtime = yaml.safe_load((OME / "runtimes" / relative_path).read_text())
    return runtime["spec"]["engineConfig"]["runner"]


def reason(text, data=F_META):
    with pytest.raises(PlaceholderError) as caught:
        expand(text, data)
    return caught.value.reason


# §16 examples 22-26 at function level

def test_example_22_name_in_a_command_entry():
    container = {"name": "ome-container", "command": ["python3", "--served-model-name={{.Name}}"]}
    result = expand_container(container, F_META, "engine.runner")
    assert result["command"] == ["python3", "--served-model-name=llama-3-2-3b-instruct"]


def test_example_23_missing_label_field_form_and_index_form():
    container = {"env": [{"name": "A", "value": "{{.Labels.owner}}"},
                         {"name": "B", "value": '{{index .Labels "owner"}}'}]}
    result = expand_container(container, F_META, "engine.runner")
    assert result["env"] == [{"name": "A", "value": "<no value>"}, {"name": "B", "value": ""}]


def test_example_24_index_with_backquotes_and_field_form_error():
    data = meta(labels={"app.kubernetes.io/name": "chat"})
    good = {"env": [{"name": "X", "value": "{{index .Labels `app.kubernetes.io/name`}}"}]}
    assert expand_container(good, data, "engine.runner")["env"] == [{"name": "X", "value": "chat"}]
    bad = {"env": good["env"] + [{"name": "Y", "value": "{{.Labels.app.kubernetes.io/name}}"}]}
    with pytest.raises(OmeError) as caught:
        expand_container(bad, data, "engine.runner")
    assert caught.value.text == (
        'invalid placeholder in engine.runner.env[1].value: {{.Labels.app.kubernetes.io/name}}: the key '
        '"app.kubernetes.io/name" cannot be written as .Labels.<key>, which allows only letters, digits and '
        '"_" (Go reads "." as a field chain and stops at "-" or "/"); write '
        "{{index .Labels `app.kubernetes.io/name`}}")
    assert caught.value.field == "engine.runner.env[1].value"


def test_example_25_values_are_not_html_escaped():
    data = meta(annotations={"owner": "a&b <c>"})
    container = {"env": [{"name": "O", "value": "{{.Annotations.owner}}"}]}
    assert expand_container(container, data, "engine.runner")["env"] == [{"name": "O", "value": "a&b <c>"}]


def test_example_26_jinja_entry_at_command_17():
    runner = runtime_runner("srt/meta/llama-3-2-3b-instruct-rt.yaml")
    runner["command"].append("--chat-template={{ message['content'] }}")
    with pytest.raises(OmeError) as caught:
        expand_container(runner, F_META, "engine.runner")
    assert caught.value.text == (
        "invalid placeholder in engine.runner.command[17]: {{ message['content'] }} is not a supported "
        f'placeholder: unexpected "["; {ESCAPE_HINT}')


def test_f_service_id_placeholder():
    assert expand("{{.Namespace}}/{{.Name}}", F_META) == "llama-demo/llama-3-2-3b-instruct"


# every syntax form

@pytest.mark.parametrize("text, expected", [
    ("{{.Name}}", "llama-3-2-3b-instruct"),
    ("{{.Namespace}}", "llama-demo"),
    ("{{.Labels.team}}", "llm"),
    ("{{.Annotations.owner}}", "me"),
    ('{{index .Labels "team"}}', "llm"),
    ("{{index .Labels `team`}}", "llm"),
    ('{{index .Annotations "owner"}}', "me"),
    ("{{index .Annotations `ome.io/x`}}", "y"),
    ("{{ .Name }}", "llama-3-2-3b-instruct"),
    ("{{\t.Name\n}}", "llama-3-2-3b-instruct"),
    ('{{  index   .Labels   "team"  }}', "llm"),
    ("x={{.Name}}-{{.Namespace}}", "x=llama-3-2-3b-instruct-llama-demo"),
    ("{{.Labels.team}}{{.Labels.team}}", "llmllm"),
])
def test_syntax_forms(text, expected):
    data = meta(annotations={"owner": "me", "ome.io/x": "y"})
    assert expand(text, data) == expected


def test_strings_without_braces_are_untouched():
    for text in ["$(MODEL_PATH)", "}}", "{ {.Name}}", "{%if x%}", ""]:
        assert expand(text, F_META) == text


def test_string_literals_print_braces():
    assert expand('{{"{{"}} system_message {{"}}"}}', F_META) == "{{ system_message }}"
    assert expand("{{`{{`}}x{{`}}`}}", F_META) == "{{x}}"
    assert expand('{{"{{ system_message }}"}}', F_META) == "{{ system_message }}"


def test_string_literal_escapes_follow_go():
    assert expand(r'{{"a\tb\"c\\d"}}', F_META) == 'a\tb"c\\d'
    assert expand(r'{{"\u00e9\xc3\xa9\101"}}', F_META) == "ééA"
    assert expand("{{`a\\n\r\nb`}}", F_META) == "a\\n\nb"  # raw: no escapes, CR dropped


def test_comments_print_nothing():
    assert expand("a{{/* a comment */}}b", F_META) == "ab"
    assert expand("a {{- /* trimmed */ -}} b", F_META) == "ab"
    assert expand("a{{/* multi\nline */}}b", F_META) == "ab"


# trimming, as Go's lexer does it

@pytest.mark.parametrize("text, expected", [
    ("a \t\r\n {{- .Namespace}}", "allama-demo"),
    ("{{.Namespace -}} \n\t b", "llama-demob"),
    ("[ {{- .Namespace -}} ]", "[llama-demo]"),
    ("{{.Namespace -}}   {{- .Namespace}}", "llama-demollama-demo"),
    ("a {{-\n.Namespace\n-}} b", "allama-demob"),
    ("a {{ .Namespace }} b", "a llama-demo b"),
    ("a\u00a0{{- .Namespace}}", "a\u00a0llama-demo"),  # only space, tab, CR and LF are trimmed
    ("{{.Namespace   -}}  x", "llama-demox"),
    ('a {{- "" -}} b', "ab"),
])
def test_trimming(text, expected):
    assert expand(text, F_META) == expected


def test_trim_markers_need_white_space():
    assert reason("a {{-.Name}}") == ('{{-.Name}}: a trim marker needs white space after it: write "{{- " '
                                      '(Go reads "{{-x" as a negative number)')
    assert reason("{{.Name-}} b") == '{{.Name-}}: a trim marker needs white space before it: write " -}}"'


# missing keys

def test_missing_keys_field_form_no_value_index_form_empty():
    assert expand("{{.Labels.absent}}|{{index .Labels `absent`}}", F_META) == "<no value>|"
    assert expand("{{.Annotations.absent}}|{{index .Annotations `absent`}}", F_META) == "<no value>|"


def test_missing_maps_behave_as_empty():
    bare = {"name": "n", "namespace": "ns"}
    assert expand('{{.Labels.a}} {{.Annotations.a}} {{index .Labels "a"}}.', bare) == "<no value> <no value> ."
    nulls = {"name": "n", "namespace": "ns", "labels": None, "annotations": None}
    assert expand("{{.Labels.a}}{{index .Annotations `a`}}", nulls) == "<no value>"


def test_empty_label_value_is_printed_empty():
    assert expand("[{{.Labels.e}}]", meta(labels={"e": ""})) == "[]"


# errors

@pytest.mark.parametrize("text, expected", [
    ("{{.Name", f'{{{{.Name: "{{{{" without "}}}}"; {ESCAPE_HINT}'),
    ("x {{ .Labels.team", f'{{{{ .Labels.team: "{{{{" without "}}}}"; {ESCAPE_HINT}'),
    ("{{.UID}}", "{{.UID}}: unknown field .UID; the fields are .Name, .Namespace, .Labels and .Annotations"),
    ("{{.name}}", "{{.name}}: unknown field .name; the fields are .Name, .Namespace, .Labels and .Annotations"),
    ("{{.Labels}}", '{{.Labels}}: .Labels needs a key: write .Labels.<key> or index .Labels "<key>"'),
    ("{{.}}", '{{.}}: "." is the whole object; use .Name, .Namespace, .Labels.<key> or .Annotations.<key>'),
    ("{{.Name.x}}", '{{.Name.x}}: .Name is a string and has no field "x"'),
    ("{{}}", "{{}}: empty action"),
    ("{{ -}}", "{{ -}}: empty action"),
    ("{{.Name | printf}}", f"{{{{.Name | printf}}}} is not a supported placeholder: pipelines are not "
                           f"supported; {ESCAPE_HINT}"),
    ('{{printf "%s" .Name}}', f'{{{{printf "%s" .Name}}}} is not a supported placeholder: function "printf" '
                              f"is not defined (the only function is index); {ESCAPE_HINT}"),
    ("{{if .Name}}x{{end}}", f'{{{{if .Name}}}} is not a supported placeholder: "if" is not supported (no if, '
                             f"range, with or other control actions); {ESCAPE_HINT}"),
    ("{{range .Labels}}{{end}}", f'{{{{range .Labels}}}} is not a supported placeholder: "range" is not '
                                 f"supported (no if, range, with or other control actions); {ESCAPE_HINT}"),
    ("{{$x := .Name}}", f"{{{{$x := .Name}}}} is not a supported placeholder: variables are not supported; "
                        f"{ESCAPE_HINT}"),
    ("{{(.Name)}}", f"{{{{(.Name)}}}} is not a supported placeholder: parentheses are not supported; "
                    f"{ESCAPE_HINT}"),
    ("{{3}}", f"{{{{3}}}} is not a supported placeholder: numbers are not supported; {ESCAPE_HINT}"),
    ("{{ system_message }}", f'{{{{ system_message }}}} is not a supported placeholder: function '
                             f'"system_message" is not defined (the only function is index); {ESCAPE_HINT}'),
    ("{{.Name .Namespace}}", f"{{{{.Name .Namespace}}}} is not a supported placeholder: an action holds one "
                             f"value; write one action per value; {ESCAPE_HINT}"),
    ("{{index .Labels}}", '{{index .Labels}}: index takes .Labels or .Annotations and one quoted key, e.g. '
                          '{{index .Labels "app.kubernetes.io/name"}}'),
    ('{{index .Name "a"}}', '{{index .Name "a"}}: index takes .Labels or .Annotations and one quoted key, '
                            'e.g. {{index .Labels "app.kubernetes.io/name"}}'),
    ('{{index .Labels "a" "b"}}', '{{index .Labels "a" "b"}}: index takes .Labels or .Annotations and one '
                                  'quoted key, e.g. {{index .Labels "app.kubernetes.io/name"}}'),
    ("{{ /* c */ }}", '{{ /* c */ }}: a comment must start right after "{{": write {{/* ... */}}'),
    ("{{/* c */ }}", '{{/* c */ }}: a comment must end right before "}}" or " -}}": write {{/* ... */}}'),
    ("{{/* c }}", "{{/* c }}: unclosed comment"),
    ('{{"abc}}', '{{"abc}}: unterminated quoted string'),
    ('{{"a\nb"}}', '{{"a\nb"}}: unterminated quoted string'),
    ("{{`abc}}", "{{`abc}}: unterminated raw quoted string"),
    (r'{{"\q"}}', r'{{"\q"}}: invalid escape "\q" in string literal'),
])
def test_error_reasons(text, expected):
    assert reason(text) == expected


@pytest.mark.parametrize("text, key", [
    ("{{.Labels.my-label}}", "my-label"),
    ("{{.Labels.app.kubernetes.io/name}}", "app.kubernetes.io/name"),
    ("{{ .Labels.a.b }}", "a.b"),
    ("{{.Labels.1abc}}", "1abc"),
    ("{{.Labels.my-label -}}", "my-label"),
])
def test_field_form_key_errors_point_to_index(text, key):
    assert reason(text) == (f'{text}: the key "{key}" cannot be written as .Labels.<key>, which allows only '
                            f'letters, digits and "_" (Go reads "." as a field chain and stops at "-" or '
                            f'"/"); write {{{{index .Labels `{key}`}}}}')


def test_map_with_a_dot_and_no_key():
    assert reason("{{.Labels.}}") == ('{{.Labels.}}: .Labels. needs a key after the dot: write .Labels.<key> or '
                                      'index .Labels "<key>"')


def test_annotation_key_error_names_annotations():
    assert reason("{{.Annotations.team/owner}}").endswith("write {{index .Annotations `team/owner`}}")


def test_cohere_chat_template_error_tells_how_to_escape():
    runner = runtime_runner("srt/CohereForAI/c4ai-command-r-v01-rt.yaml")
    index = next(i for i, entry in enumerate(runner["command"]) if "{{" in entry)
    assert index == 18
    with pytest.raises(OmeError) as caught:
        expand_container(runner, F_META, "engine.runner")
    assert caught.value.text == (
        "invalid placeholder in engine.runner.command[18]: {{ system_message }} is not a supported "
        'placeholder: function "system_message" is not defined (the only function is index); '
        'to pass literal braces, write {{"{{"}} and {{"}}"}}')


def test_escaped_cohere_template_renders_as_jinja():
    template = "<|SYSTEM_TOKEN|>{{ system_message }}<|END|>{{ message['content'] }}"
    escaped = ('<|SYSTEM_TOKEN|>{{"{{"}} system_message {{"}}"}}<|END|>'
               "{{`{{ message['content'] }}`}}")
    assert expand(escaped, F_META) == template


# expand_container

def test_expand_container_walks_lists_and_maps_and_never_keys():
    container = {
        "name": "ome-container",
        "args": ["--id={{.Name}}", 8080, True, None],
        "env": [{"name": "NS", "value": "{{.Namespace}}"},
                {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
        "resources": {"limits": {"cpu": 4}},
        "readinessProbe": {"exec": {"command": ["check", "{{.Labels.team}}"]}},
        "extra": {"{{.Name}}": "{{.Name}}"},
    }
    original = copy.deepcopy(container)
    result = expand_container(container, F_META, "decoder.worker.runner")
    assert container == original
    assert result == {
        "name": "ome-container",
        "args": ["--id=llama-3-2-3b-instruct", 8080, True, None],
        "env": [{"name": "NS", "value": "llama-demo"},
                {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
        "resources": {"limits": {"cpu": 4}},
        "readinessProbe": {"exec": {"command": ["check", "llm"]}},
        "extra": {"{{.Name}}": "llama-3-2-3b-instruct"},
    }
    result["env"][0]["value"] = "changed"
    assert container == original


def test_expand_container_error_path_in_nested_maps():
    container = {"env": [{"name": "A", "value": "ok"}, {"name": "B", "value": "ok"},
                         {"name": "C", "value": "ok"}, {"name": "D", "value": "{{.UID}}"}],
                 "livenessProbe": {"exec": {"command": ["{{.Name"]}}}
    with pytest.raises(OmeError) as caught:
        expand_container(container, F_META, "decoder.worker.runner")
    assert caught.value.field == "decoder.worker.runner.env[3].value"
    assert caught.value.text.startswith("invalid placeholder in decoder.worker.runner.env[3].value: {{.UID}}: ")
    with pytest.raises(OmeError) as caught:
        expand_container({"livenessProbe": container["livenessProbe"]}, F_META, "router.runner")
    assert caught.value.field == "router.runner.livenessProbe.exec.command[0]"


# bounds: crafted input cannot make it work long or produce huge output

def test_too_many_actions():
    assert expand("{{.Labels.team}}" * 10_000, F_META) == "llm" * 10_000
    assert reason("{{.Labels.team}}" * 10_001) == "more than 10000 actions in one value"


def test_too_long_input():
    text = "{{.Name}}" + "x" * (1 << 20)
    assert reason(text) == ("value is longer than 1048576 characters; placeholders are not expanded in values "
                            "this long")
    long_plain = "x" * (2 << 20)
    assert expand(long_plain, F_META) is long_plain  # no "{{": not evaluated, no limit


def test_output_bomb_is_bounded():
    data = meta(annotations={"big": "y" * 200_000})
    assert reason("{{.Annotations.big}}" * 6, data) == "the expanded value is longer than 1048576 characters"


@pytest.mark.parametrize("text", [
    "{{" * 500_000,
    "{{/*" * 250_000,
    '{{"' + "\\\\" * 400_000,
    "{{ index" + " " * 900_000,
    "{{-  " * 200_000,
])
def test_pathological_inputs_fail_fast(text):
    with pytest.raises(PlaceholderError):
        expand(text, F_META)
