"""Values read as OME's Go code reads them (issue 33, causes 1 and 2): encoding/json's syntax, its U+FFFD for a lone
surrogate and its depth, strings.EqualFold and strings.TrimSpace; a string the writer cannot write as UTF-8 is
refused; names the API server validates are checked before they are written."""
from __future__ import annotations

import json

import pytest
import yaml

from conftest import CHART_DEFAULTS_INFO, render_objects, run_cli
from omerender.errors import Report
from omerender.gorules.strconv import quote
from omerender.gorules.text import equal_fold, trim_space
from omerender.ome.monitoring.podmonitor import extra_endpoints

GATEWAYS = "ome.io/ingress-additional-gateways"
IGNORED = ("; OME ignores the annotation and keeps the cluster's additionalIngressGateways: write a JSON array such "
           'as [{"omeIngressGateway": "gateway-ns/gateway", "ingressDomain": "example.com"}]')
ISVC_REF = "<stdin>: InferenceService llama-demo/llama-3-2-3b-instruct"


def configmap(**ingress) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "inferenceservice-config", "namespace": "ome"},
            "data": {"ingress": json.dumps({"disableIngressCreation": False, "ingressDomain": "example.com",
                                            "ingressGateway": "istio-system/ingress-gateway",
                                            "ingressService": "istio-ingressgateway.istio-system.svc", **ingress})}}


GATEWAY_API = dict(enableGatewayAPI=True, omeIngressGateway="envoy-gateway-system/ome-gateway")


def with_annotation(F, value: str, **ingress) -> list[dict]:
    F["isvc"]["metadata"]["annotations"] = {GATEWAYS: value}
    return [configmap(**(ingress or GATEWAY_API)), *F.values()]


def messages(run) -> list[str]:
    """The run's messages but the info a ConfigMap lacking keys of OME v1.3's chart gets (these carry ingress only)."""
    return [line for line in run.lines if "which OME v1.3's Helm chart writes" not in line]


def parents(run) -> list[str]:
    route = run.find("HTTPRoute", "llama-3-2-3b-instruct")
    return [f"{p['namespace']}/{p['name']}" for p in route["spec"]["parentRefs"]]


# ---------------------------------------------------------------- encoding/json in annotations

@pytest.mark.parametrize("literal, error", [("NaN", "'N' looking for beginning of value"),
                                            ("Infinity", "'I' looking for beginning of value"),
                                            ("-Infinity", "'I' in numeric literal")])
def test_nan_and_infinity_make_the_annotation_invalid_as_to_go(F, literal, error):
    value = f'[{{"omeIngressGateway": "evil/gw", "ingressDomain": "evil.io", "weight": {literal}}}]'
    run = render_objects(with_annotation(F, value))
    assert run.code == 0, run.stderr
    assert parents(run) == ["envoy-gateway-system/ome-gateway"]
    assert messages(run) == [f"warning: {ISVC_REF}: {GATEWAYS}: not valid JSON (invalid character {error}){IGNORED}"]


def test_a_lone_surrogate_is_replaced_as_go_replaces_it(F):
    value = '[{"omeIngressGateway": "other/gw", "ingressDomain": "other.io", "\\ud800": "x"}]'
    run = render_objects(with_annotation(F, value))
    assert run.code == 0, run.stderr
    assert parents(run) == ["envoy-gateway-system/ome-gateway", "other/gw"]
    assert messages(run) == [f'warning: {ISVC_REF}: {GATEWAYS}: entry 0: unknown key "\ufffd", which OME ignores']


def test_a_lone_surrogate_in_the_function_and_argocd(F, tmp_path, monkeypatch):
    value = '[{"omeIngressGateway": "other/gw", "ingressDomain": "other.io", "\\udfff": 1}]'
    items = with_annotation(F, value)
    rl = yaml.safe_dump({"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items})
    run = run_cli("fn", input=rl)
    assert run.code == 0, run.stderr
    assert any(r["message"].endswith('unknown key "\ufffd", which OME ignores')
               for r in yaml.safe_load(run.stdout)["results"])
    (tmp_path / "all.yaml").write_text(yaml.safe_dump_all(items))
    monkeypatch.chdir(tmp_path)
    run = run_cli("argocd", "generate")
    assert run.code == 0, run.stderr
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr


def test_a_deep_array_in_the_annotation_is_ignored_as_go_ignores_it(F):
    value = "[" * 2000 + "]" * 2000
    run = render_objects(with_annotation(F, value))
    assert run.code == 0, run.stderr
    assert parents(run) == ["envoy-gateway-system/ome-gateway"]
    assert messages(run) == [f"warning: {ISVC_REF}: {GATEWAYS}: entry 0 is not an object{IGNORED}"]


def test_past_go_depth_the_annotation_is_ignored(F):
    value = "[" * 10_001 + "]" * 10_001
    run = render_objects(with_annotation(F, value))
    assert run.code == 0, run.stderr
    assert messages(run) == [f"warning: {ISVC_REF}: {GATEWAYS}: not valid JSON (invalid character '[' exceeded max "
                         f"depth){IGNORED}"]


def test_gateway_keys_fold_as_go_folds_them(F):
    """encoding/json matches a key to a field with Unicode simple folding: the long s is an s, the Kelvin sign a k."""
    value = '[{"omeIngreſſGateway": "other/gw", "ingressDomain": "other.io"}]'
    run = render_objects(with_annotation(F, value))
    assert run.code == 0, run.stderr
    assert parents(run) == ["envoy-gateway-system/ome-gateway", "other/gw"]


# ---------------------------------------------------------------- strings.EqualFold and TrimSpace

def test_equal_fold_is_go_simple_folding():
    assert equal_fold("ſerverAddress", "serverAddress") and equal_fold("authModeſ", "AUTHMODES")
    assert equal_fold("\u212aey", "key") and equal_fold("ẞ", "ß")
    assert not equal_fold("ß", "ss") and not equal_fold("ı", "i") and not equal_fold("İ", "i")


def test_trim_space_keeps_what_go_keeps():
    assert trim_space("\x1c a \u3000\x85") == "\x1c a"
    assert trim_space("\t\n\v\f\r \xa0x\u2028") == "x"


@pytest.mark.parametrize("key", ["ſerverAddress", "authModeſ", "SERVERADDREſS"])
def test_forbidden_policy_keys_compare_as_go_compares_them(F, key):
    from test_autoscaler_policy import errors_of, policy, policy_error, prometheus_trigger
    spec = {"class": "KEDA", "keda": {"triggers": [prometheus_trigger()]}}
    spec["keda"]["triggers"][0]["metadata"][key] = "http://attacker.invalid"
    text = (f'ForbiddenMetadataKey: trigger 0: metadata key "{key}" is provider-owned; bind endpoints via '
            f'providerRef')
    assert errors_of(list(F.values()) + [policy("queue-depth", spec)]) == [policy_error("queue-depth", text)]


@pytest.mark.parametrize("kind", ["prometheuſ", "PROMETHEUS"])
def test_endpoint_trigger_types_compare_as_go_compares_them(F, kind):
    """render.go IsEndpointTriggerType (ome-projects/ome, 2af192b3): strings.EqualFold with "prometheus"."""
    from test_autoscaler_policy import errors_of, policy, policy_error, prometheus_trigger
    trigger = prometheus_trigger(type=kind)
    trigger.pop("providerRef")
    spec = {"class": "KEDA", "keda": {"triggers": [trigger]}}
    text = f"ProviderRefRequired: trigger 0 ({kind}): providerRef is required for endpoint trigger types"
    assert errors_of(list(F.values()) + [policy("queue-depth", spec)]) == [policy_error("queue-depth", text)]


def test_extra_endpoints_are_trimmed_as_go_trims_them():
    report = Report()
    found = extra_endpoints({"prometheus.ome.io/extra-endpoints": " side:/x\x1c , \x1fother:/y"}, report)
    assert found == [{"port": "side", "path": "/x\x1c", "interval": "10s"},
                     {"port": "\x1fother", "path": "/y", "interval": "10s"}]


# ---------------------------------------------------------------- model-info's config.json

def model_with(tmp_path, replace: tuple[str, str]):
    from conftest import CATALOG
    text = (CATALOG / "modelconfig" / "llama3_2_1b.json").read_text()
    assert replace[0] in text
    directory = tmp_path / "model"
    directory.mkdir(parents=True)
    (directory / "config.json").write_text(text.replace(*replace, 1))
    return directory


def test_a_lone_surrogate_in_config_json_is_u_fffd(tmp_path):
    directory = model_with(tmp_path, ('"model_type": "llama"', '"model_type": "llama", "x\\udc00": "\\ud800"'))
    run = run_cli("model-info", str(directory), "-o", "yaml")
    assert run.code == 0, run.stderr
    assert yaml.safe_load(run.stdout)["spec"]["modelType"] == "llama"
    directory = model_with(tmp_path / "b", ('"LlamaForCausalLM"', '"LlamaForCausalLM\\ud800"'))
    run = run_cli("model-info", str(directory), "-o", "yaml")
    assert run.code == 0, run.stderr
    assert yaml.safe_load(run.stdout)["spec"]["modelArchitecture"] == "LlamaForCausalLM\ufffd"
    target = tmp_path / "model.yaml"
    target.write_text("apiVersion: ome.io/v1beta1\nkind: ClusterBaseModel\nmetadata:\n  name: m\nspec:\n"
                      "  storage:\n    storageUri: hf://meta/m\n")
    run = run_cli("model-info", "--update", str(target), str(directory))
    assert run.code == 0, run.stderr
    assert yaml.safe_load(target.read_text())["spec"]["modelArchitecture"] == "LlamaForCausalLM\ufffd"


def test_nan_in_config_json_is_not_json_to_go(tmp_path):
    directory = model_with(tmp_path, ('"rope_theta": 500000.0', '"rope_theta": NaN'))
    run = run_cli("model-info", str(directory), "-o", "yaml")
    assert (run.code, run.stdout) == (1, "")
    assert run.lines == [f"error: {directory}/config.json: not valid JSON: invalid character 'N' looking for "
                         f"beginning of value"]


# ---------------------------------------------------------------- the writer takes UTF-8 only

BAD = "team-\udcff"  # what os.fsdecode keeps of the byte 0xff


@pytest.mark.parametrize("value, path", [
    ({"metadata": {"labels": {"team": BAD}}}, "metadata.labels.team"),
    ({"metadata": {"labels": {BAD: "a"}}}, f"metadata.labels.{BAD}"),
    ({"spec": {"args": ["--x", f"line\n{BAD}"]}}, "spec.args[1]"),  # a text PyYAML writes over lines
])
def test_the_writer_refuses_a_string_it_cannot_write_as_utf8(value, path):
    from omerender.errors import OmeError
    from omerender.yamlio.emit import dump_stream
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "ns"}}
    for key, part in value.items():
        obj[key] = {**obj.get(key, {}), **part}
    with pytest.raises(OmeError) as err:
        dump_stream([{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ok"}}, obj])
    assert str(err.value.ref) == "ConfigMap ns/cm" and err.value.field == path
    shown = (BAD if "line" not in path and "args" not in path else f"line\n{BAD}")
    shown = shown.encode("utf-8", "backslashreplace").decode()
    where = path.encode("utf-8", "backslashreplace").decode()
    assert err.value.text == (f'{where}: the string "{shown}" cannot be written as UTF-8: it holds half of a UTF-16 '
                              f"surrogate pair (U+D800 to U+DFFF), which no UTF-8 text can hold; write the "
                              f"character it stands for")


def bad_label_in_the_output(monkeypatch, where: str) -> None:
    """The render's first object gets a label value no UTF-8 holds (no input can give one: this is the last guard)."""
    from omerender.ome import render as render_module
    real = render_module.render

    def with_bad_label(*args, **kwargs):
        result = real(*args, **kwargs)
        result.objects[0]["metadata"].setdefault("labels", {})["team"] = BAD
        return result
    monkeypatch.setattr(where, with_bad_label)


def test_the_render_refuses_it_with_an_error_line_and_nothing_on_stdout(F, monkeypatch):
    bad_label_in_the_output(monkeypatch, "omerender.cli.app.render")
    run = render_objects(list(F.values()))
    assert (run.code, run.stdout) == (1, "")
    assert len(run.lines) == 2 and run.lines[0] == CHART_DEFAULTS_INFO
    assert run.lines[1].startswith("error: ") and "metadata.labels.team: the string" in run.lines[1] and \
        "cannot be written as UTF-8" in run.lines[1]


def test_the_function_refuses_it_with_an_error_line(F, monkeypatch):
    bad_label_in_the_output(monkeypatch, "omerender.gitops.krm.render")
    rl = yaml.safe_dump({"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": list(F.values())})
    run = run_cli("fn", input=rl)
    assert (run.code, run.stdout) == (1, "")
    (error,) = [line for line in run.lines if line.startswith("error: ")]
    assert "metadata.labels.team: the string" in error and "cannot be written as UTF-8" in error


# ---------------------------------------------------------------- fields the API server validates

SUBDOMAIN_TEXT = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
                  "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation "
                  "is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")


@pytest.mark.parametrize("name, problem", [
    ("Bad Class!", SUBDOMAIN_TEXT), ("NGINX", SUBDOMAIN_TEXT), ("a/b", SUBDOMAIN_TEXT),
    ("a" * 254, "must be no more than 253 characters"),
])
def test_an_invalid_ingress_class_is_the_api_servers_error(F, name, problem):
    """k8s.io/kubernetes pkg/apis/networking/validation: spec.ingressClassName must be a DNS-1123 subdomain."""
    run = render_objects([configmap(ingressClassName=name), *F.values()])
    assert (run.code, run.stdout) == (1, "")
    shown = name if len(name) <= 80 else f"{name[:80]}... ({len(name)} characters)"
    assert run.lines == [f"error: {ISVC_REF}: the Ingress's spec.ingressClassName: Invalid value: \"{shown}\": "
                         f"{problem} (it comes from ingress.ingressClassName in <stdin>: ConfigMap "
                         f"ome/inferenceservice-config); name the IngressClass of your ingress controller "
                         f"(kubectl get ingressclass), such as nginx"]


def test_a_valid_ingress_class_renders(F):
    run = render_objects([configmap(ingressClassName="nginx.example"), *F.values()])
    assert run.code == 0, run.stderr
    assert run.find("Ingress")["spec"]["ingressClassName"] == "nginx.example"


def test_a_passed_through_ingress_is_checked_too():
    ingress = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "x", "namespace": "a"},
               "spec": {"ingressClassName": "Bad Class!", "defaultBackend": {"service": {"name": "s",
                                                                                          "port": {"number": 80}}}}}
    run = render_objects([ingress])
    assert (run.code, run.stdout) == (1, "")
    assert run.lines == [f'error: <stdin>: Ingress a/x: spec.ingressClassName: Invalid value: "Bad Class!": '
                         f"{SUBDOMAIN_TEXT}"]


def test_a_superscript_digit_in_a_parallelism_flag_is_not_a_crash(F):
    """str.isdigit() holds for "²", which int() refuses: the flag's value is then not a number, as $(VAR) is."""
    runner = F["runtime"]["spec"]["engineConfig"]["runner"]
    part = next(p for p in ("command", "args") if "--tp-size" in (runner.get(p) or []))
    runner[part][runner[part].index("--tp-size") + 1] = "²"
    run = render_objects(list(F.values()))
    assert run.code == 0, run.stderr
    assert "internal error" not in run.stderr


def test_to_lower_is_go_simple_lowercase():
    from omerender.gorules.text import to_lower
    assert to_lower("ΟΔΟΣ") == "οδοσ" and to_lower("İ") == "i" and to_lower("FP16") == "fp16"


def test_accelerator_families_compare_as_go_compares_them():
    """acceleratorclassselector/policy_helpers.go (ome-projects/ome, 87db7db8): strings.EqualFold against the lowered
    vendor-family."""
    from omerender.ome.accelerators.choice import _family_matches
    from omerender.ome.load import Obj
    cls = Obj({"apiVersion": "ome.io/v1beta1", "kind": "AcceleratorClass", "metadata": {"name": "h100"},
               "spec": {"vendor": "NVIDIA", "family": "Hopper"}}, "classes.yaml", 0)
    assert _family_matches("nvidia-hopper", cls) and _family_matches("NVIDIA-HOPPER", cls)
    cls.spec["family"] = "Grace-Superchip"
    assert _family_matches("grace-ſuperchip", cls) is False  # has "-": compared with vendor-family
    assert _family_matches("nvidia-grace-ſuperchip", cls) and _family_matches("nvidia-grace-\u017fuperchip", cls)


def test_a_configmap_value_of_unicode_white_space_is_blank_as_to_go(F):
    """strings.TrimSpace of the podDisruptionBudget value: U+3000 and U+2028 are white space to Go too."""
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "inferenceservice-config", "namespace": "ome"},
          "data": {"podDisruptionBudget": "\u3000\u2028 "}}
    run = render_objects([cm, *F.values()])
    assert run.code == 0, run.stderr


@pytest.mark.parametrize("text, quoted", [
    ('a"b\\', '"a\\"b\\\\"'),
    ("café ü 中", '"café ü 中"'),                       # printable beyond ASCII stays as it is
    ("\a\b\f\n\r\t\v", '"\\a\\b\\f\\n\\r\\t\\v"'),
    ("\x01\x1b\x7f", '"\\x01\\x1b\\x7f"'),
    ("\u00a0\u2028\ufeff", '"\\u00a0\\u2028\\ufeff"'),  # spaces and formats Go does not print
    ("\U000e0001", '"\\U000e0001"'),
])
def test_quote_writes_what_go_s_strconv_quote_writes(text, quoted):
    assert quote(text) == quoted
