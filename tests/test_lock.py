"""Revisions, pinning and omerender.lock.yaml (inheritance-and-pinning.md Parts B, C; §20 X16-X30)."""
import copy
import importlib.util
import os
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from omerender.cli.app import cli  # through the group, as users call it: a command invoked alone caches click's bare --help

from omerender.errors import OmeError, OmeErrors, Report
from omerender.ome.pinning.lock import check_locked_entries, resolve_with_lock, update_lock
from omerender.ome.pinning.lockfile import Lock, Revision, dump_lock, find_lock, lock_from_inputs, parse_lock
from omerender.ome.pinning.revisions import canonical_json, check_revision_field, revision_name, spec_hash
from omerender.ome.runtimes.inherit import Chains

_spec = importlib.util.spec_from_file_location("inherit_fixtures", Path(__file__).with_name("test_inherit.py"))
fx = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fx)
build, edit = fx.build, fx.edit

R0 = "r-llama-demo-sglang-llama-3-2-3b-610fd024"
R1 = "r-llama-demo-sglang-llama-3-2-3b-1fb2cd4b"
H9 = "sha256:610fd024170cb2d594f6e1969211fe8e863a3bffa3e2dd7f3e44dd0aab42df80"
ISVC_P = edit(fx.ISVC_I, lambda d: d["spec"]["runtime"].update({"kind": "ServingRuntime", "autoSync": False}))


def plain(mem="0.9", **spec_changes):
    def change(d):
        d["spec"]["engineConfig"]["runner"]["args"][-1] = f"--mem-frac={mem}"
        d["spec"].update(spec_changes)
    return edit(fx.PLAIN, change)


def isvc_p(token=None, **runtime):
    def change(d):
        d["spec"]["runtime"].update(runtime)
        for key in [k for k, v in runtime.items() if v is None]:
            del d["spec"]["runtime"][key]
        if token is not None:
            d["metadata"]["annotations"] = {"ome.io/runtime-sync": token}
    return edit(ISVC_P, change)


def update(texts, old=None, advance=()):
    inputs = build(*texts)
    report = Report()
    new = update_lock(inputs, Chains(inputs, report), old, advance, report)
    return new, [m.text for m in report.messages]


def render(texts, lock=None, locked=False):
    """(the engine runner's args the ISVC would render from, message texts) of the only ISVC."""
    inputs = build(*texts)
    report = Report()
    pinned = resolve_with_lock(inputs.isvcs[0], inputs, Chains(inputs, report), lock, report, locked)
    return pinned.spec["engineConfig"]["runner"]["args"], [m.text for m in report.messages]


def render_error(texts, lock=None, locked=False):
    with pytest.raises(OmeError) as caught:
        render(texts, lock, locked)
    return caught.value.text


W_P1 = ("RuntimeDrifted (RevisionMismatch): pinned {}, live spec differs; bump ome.io/runtime-sync annotation to "
        "advance")


# ---------------------------------------------------------------- §12 hash vectors


def runner_spec(**runner):
    return {"engineConfig": {"runner": dict({"name": "ome-container"}, **runner)}}


@pytest.mark.parametrize("spec, digest", [
    ({}, "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"),
    (runner_spec(args=["--tp-size=1", "--mem-frac=0.9"]),
     "1771eb08ef715aa0a06a29459e31b4d105b5ec465345c411f0550f5c92b26bb4"),
    ({"nodeSelector": {}, "engineConfig": {"runner": {"image": "", "env": [], "args": ["--tp-size=1", "--mem-frac=0.9"],
                                                      "name": "ome-container"}}},
     "1771eb08ef715aa0a06a29459e31b4d105b5ec465345c411f0550f5c92b26bb4"),
    (runner_spec(args=["--tp-size=1", "--mem-frac=0.85"]),
     "89f10f33364ba35accb93a89130506a695a32ff3a5b13753277ee8ec7b242595"),
    ({"disabled": False}, "1d11441a60f0c81871548ccecf0b533ae2fff9f3b47aeb8d8d25ff1f2f10f54f"),
    (runner_spec(resources={"limits": {"cpu": 10}}), "897dc4f58c646069a1aca2f3e99c0738d2ff6b42c63f5a6a7a8b98b64529c416"),
    (runner_spec(resources={"limits": {"cpu": "10"}}), "dfaa29a8b8c19112a00d17ac09ad7fa316b42191cb931cfb1e6872ebd2963d69"),
], ids=["H1", "H2", "H3", "H4", "H5", "H6-int", "H6-str"])
def test_hash_vectors_h1_to_h6(spec, digest):
    assert spec_hash(spec) == "sha256:" + digest


def test_canonical_json_h2_h4_h5_text():
    assert canonical_json(runner_spec(args=["--tp-size=1", "--mem-frac=0.9"])) == \
        '{"engineConfig":{"runner":{"args":["--tp-size=1","--mem-frac=0.9"],"name":"ome-container"}}}'
    assert canonical_json({"disabled": False}) == '{"disabled":false}'
    assert canonical_json({"b": [{}, None, ""], "a": {"x": {"y": None}}}) == '{"b":[{},null,""]}'
    assert canonical_json({"name": "é", "f": 0.1}) == '{"f":0.1,"name":"é"}'


def _merged_x1(child=fx.CHILD):
    inputs = build(fx.PROFILE, child)
    return Chains(inputs, Report()).merged_spec(inputs.runtimes[("llama-demo", "sglang-llama-3-2-3b")])


def test_hash_vectors_h7_to_h10():
    assert len(canonical_json(_merged_x1()).encode()) == 1218
    assert spec_hash(_merged_x1()) == "sha256:0ed2116bcbe633dfd13bef65d39fa88992b3c57f7bd296aa55a04a4d8e272c70"
    child = edit(fx.CHILD, lambda d: d["spec"]["engineConfig"]["runner"]["args"].__setitem__(1, "--mem-frac=0.85"))
    assert len(canonical_json(_merged_x1(child)).encode()) == 1219
    assert spec_hash(_merged_x1(child)) == "sha256:d1aef4f5b8043bdc3c177245ec681a36195dc21f1bb0d8eebcc27dd2e7b5309f"
    h9 = yaml.safe_load(fx.PLAIN)["spec"]
    assert len(canonical_json(h9).encode()) == 1213
    assert spec_hash(h9) == H9
    assert spec_hash(yaml.safe_load(plain("0.85"))["spec"]) == \
        "sha256:1fb2cd4b9f15563181fbd4dd97bfcf90214939c77071a24f431c756905c541aa"


def test_non_finite_numbers_cannot_be_hashed():
    with pytest.raises(OmeError):
        spec_hash({"x": float("inf")})


# ---------------------------------------------------------------- §13 revision names, E-P1, E-P2


def test_x30_revision_name_follows_the_isvc_kind():
    inputs = build(fx.PROFILE, fx.CHILD, fx.MODEL, fx.ISVC_I,
                   edit(fx.ISVC_I, lambda d: (d["metadata"].update(name="b"),
                                              d["spec"]["runtime"].update(kind="ServingRuntime"))))
    runtime = inputs.runtimes[("llama-demo", "sglang-llama-3-2-3b")]
    digest = spec_hash(_merged_x1())
    names = sorted(revision_name(isvc, runtime, digest) for isvc in inputs.isvcs)
    assert names == ["cr-sglang-llama-3-2-3b-0ed2116b", "r-llama-demo-sglang-llama-3-2-3b-0ed2116b"]


def test_auto_selected_revision_name_follows_the_runtime_kind():
    inputs = build(fx.PLAIN, fx.csr("c"), edit(fx.ISVC_I, lambda d: d["spec"].pop("runtime")))
    isvc = inputs.isvcs[0]
    assert revision_name(isvc, inputs.runtimes[("llama-demo", "sglang-llama-3-2-3b")], H9) == R0
    assert revision_name(isvc, inputs.cluster_runtimes["c"], H9) == "cr-c-610fd024"


def test_x22_revision_form_and_autosync_checks():
    inputs = build(isvc_p(revision="cr-sglang-llama-3-2-3b-590753e8"), edit(isvc_p(revision=R0, autoSync=None),
                                                                            lambda d: d["metadata"].update(name="b")))
    by_name = {isvc.name: isvc for isvc in inputs.isvcs}
    with pytest.raises(OmeError) as caught:
        check_revision_field(by_name["llama-3-2-3b-instruct"])
    assert caught.value.text == (
        'spec.runtime.revision "cr-sglang-llama-3-2-3b-590753e8" does not match the expected naming convention for '
        'runtime "sglang-llama-3-2-3b" (ServingRuntime); expected the form '
        "r-llama-demo-sglang-llama-3-2-3b-<8 lowercase hex chars>")
    with pytest.raises(OmeError) as caught:
        check_revision_field(by_name["b"])
    assert caught.value.text == "spec.runtime.revision requires spec.runtime.autoSync: false"


def test_revision_form_for_cluster_kind_and_uppercase_hex():
    inputs = build(edit(fx.ISVC_I, lambda d: d["spec"]["runtime"].update(autoSync=False, revision="cr-sglang-llama-3-2-3b-0ED2116B")))
    with pytest.raises(OmeError) as caught:
        check_revision_field(inputs.isvcs[0])
    assert caught.value.text.endswith('(ClusterServingRuntime); expected the form cr-sglang-llama-3-2-3b-<8 lowercase '
                                      'hex chars>')


# ---------------------------------------------------------------- §14 the file


def test_lock_file_format_is_stable_and_round_trips():
    lock, messages = update([fx.PLAIN, fx.MODEL, ISVC_P])
    assert messages == [f"pinned to {R0}"]
    text = dump_lock(lock)
    data = yaml.safe_load(text)
    assert list(data) == ["apiVersion", "kind", "metadata", "hash", "inferenceServices", "revisions"]
    assert data["inferenceServices"] == [{
        "namespace": "llama-demo", "name": "llama-3-2-3b-instruct", "selection": "Named",
        "runtime": "ServingRuntime/llama-demo/sglang-llama-3-2-3b",
        "chain": ["ServingRuntime/llama-demo/sglang-llama-3-2-3b"], "autoSync": False, "revision": R0,
        "specHash": H9, "pinnedRevision": R0, "syncToken": ""}]
    record = data["revisions"][0]
    assert list(record) == ["name", "runtime", "chain", "specHash", "serial", "spec"]
    assert (record["name"], record["serial"], record["specHash"]) == (R0, 1, H9)
    assert record["spec"] == yaml.safe_load(fx.PLAIN)["spec"]
    assert dump_lock(parse_lock(text)) == text
    again, messages = update([fx.PLAIN, fx.MODEL, ISVC_P], parse_lock(text))
    assert dump_lock(again) == text and messages == []


def test_entries_sorted_and_unpinned_entries_have_no_pinned_revision():
    b = edit(fx.ISVC_I, lambda d: d["metadata"].update(name="a-first", namespace="llama-demo"))
    lock, _ = update([fx.PROFILE, fx.CHILD, fx.MODEL, fx.ISVC_I, b])
    data = yaml.safe_load(dump_lock(lock))
    assert [e["name"] for e in data["inferenceServices"]] == ["a-first", "llama-3-2-3b-instruct"]
    entry = data["inferenceServices"][1]
    assert "pinnedRevision" not in entry
    assert entry["chain"] == ["ClusterServingRuntime/sglang-profile", "ServingRuntime/llama-demo/sglang-llama-3-2-3b"]
    assert entry["revision"] == "cr-sglang-llama-3-2-3b-0ed2116b"
    assert entry["specHash"] == "sha256:0ed2116bcbe633dfd13bef65d39fa88992b3c57f7bd296aa55a04a4d8e272c70"
    assert len(data["revisions"]) == 1


def test_x28_edited_snapshot_is_e_p5():
    lock, _ = update([fx.PLAIN, fx.MODEL, ISVC_P])
    text = dump_lock(lock).replace("--mem-frac=0.9", "--mem-frac=0.5")
    with pytest.raises(OmeError) as caught:
        parse_lock(text)
    edited = yaml.safe_load(plain("0.5"))["spec"]
    assert caught.value.text == (f"omerender.lock.yaml: revision {R0} hashes to {spec_hash(edited)}, not the recorded "
                                 f"{H9}")


@pytest.mark.parametrize("text", ["apiVersion: v1\nkind: RuntimeLock\nhash: omerender-canonical-json/v1\n",
                                  "apiVersion: omerender.io/v1alpha1\nkind: RuntimeLock\nhash: sha1\n",
                                  "- a\n"])
def test_wrong_header_is_e_p6(text):
    with pytest.raises(OmeError) as caught:
        parse_lock(text)
    assert caught.value.text == ("omerender.lock.yaml: expected apiVersion omerender.io/v1alpha1, kind RuntimeLock and "
                                 "hash omerender-canonical-json/v1")


def test_find_lock_paths(tmp_path):
    (tmp_path / "x.yaml").write_text("")
    assert find_lock([str(tmp_path)]) == str(tmp_path / "omerender.lock.yaml")
    assert find_lock([str(tmp_path / "x.yaml")]) == str(tmp_path / "omerender.lock.yaml")
    assert find_lock(["-"]) is None
    assert find_lock([str(tmp_path)], "other.yaml") == "other.yaml"


def test_lock_as_an_input_item():
    lock, _ = update([fx.PLAIN, fx.MODEL, ISVC_P])
    text = dump_lock(lock)
    inputs = build(fx.PLAIN, text)
    assert dump_lock(lock_from_inputs(inputs)) == text
    with pytest.raises(OmeError) as caught:
        lock_from_inputs(build(text, text))
    assert caught.value.text.startswith("more than one RuntimeLock in the input")
    assert lock_from_inputs(build(fx.PLAIN)) is None


# ---------------------------------------------------------------- §15/§16 X16 - X25


def test_x16_first_pin():
    args, messages = render([fx.PLAIN, fx.MODEL, ISVC_P])
    assert args[-1] == "--mem-frac=0.9"
    assert messages == [f"spec.runtime.autoSync is false but omerender.lock.yaml has no pinned revision; rendered from "
                        f'the live spec ({R0}); run "omerender lock update" to pin it']
    lock, messages = update([fx.PLAIN, fx.MODEL, ISVC_P])
    assert messages == [f"pinned to {R0}"]
    assert render([fx.PLAIN, fx.MODEL, ISVC_P], lock, locked=True) == (args, [])


def test_pinning_scenario_lock_change_render_roll_forward_render():
    lock, _ = update([fx.PLAIN, fx.MODEL, ISVC_P])
    changed = [plain("0.85"), fx.MODEL, ISVC_P]
    args, messages = render(changed, lock)                       # X17: pinned, drift warned
    assert args[-1] == "--mem-frac=0.9" and messages == [W_P1.format(R0)]
    assert render(changed, lock, locked=True) == (args, messages)
    kept, messages = update(changed, lock)
    assert dump_lock(kept) == dump_lock(lock) and messages == [W_P1.format(R0)]
    tokened = [plain("0.85"), fx.MODEL, isvc_p(token="mem-frac-0-85")]   # X18
    args, messages = render(tokened, lock)
    assert args[-1] == "--mem-frac=0.9"
    assert messages == [f'ome.io/runtime-sync "mem-frac-0-85" is new; run "omerender lock update" to advance from '
                        f"{R0} to {R1}"]
    assert render_error(tokened, lock, locked=True) == (
        'omerender.lock.yaml is out of date: ome.io/runtime-sync "mem-frac-0-85" of InferenceService '
        'llama-demo/llama-3-2-3b-instruct is pending; run "omerender lock update"')
    advanced, messages = update(tokened, lock)
    assert messages == [f'advanced from {R0} to {R1} (ome.io/runtime-sync "mem-frac-0-85")']
    entry = advanced.entries[("llama-demo", "llama-3-2-3b-instruct")]
    assert (entry.revision, entry.pinnedRevision, entry.syncToken) == (R1, R1, "mem-frac-0-85")
    assert sorted(advanced.revisions) == [R1, R0]                # R0 kept: among the newest 10
    assert render(tokened, advanced, locked=True) == (args[:-1] + ["--mem-frac=0.85"], [])
    # X19: the token was consumed, so a new change drifts again and the pin holds
    again = [plain("0.8"), fx.MODEL, isvc_p(token="mem-frac-0-85")]
    assert render(again, advanced)[1] == [W_P1.format(R1)]
    held, _ = update(again, advanced)
    assert held.entries[("llama-demo", "llama-3-2-3b-instruct")].pinnedRevision == R1


def test_x20_token_without_a_change_is_held_then_fires():
    lock, _ = update([fx.PLAIN, fx.MODEL, ISVC_P])
    tokened = [fx.PLAIN, fx.MODEL, isvc_p(token="t1")]
    assert render(tokened, lock, locked=True)[1] == []
    held, messages = update(tokened, lock)
    assert messages == ['ome.io/runtime-sync "t1" held: the runtime spec has not changed']
    assert dump_lock(held) == dump_lock(lock)
    changed = [plain("0.85"), fx.MODEL, isvc_p(token="t1")]
    assert render(changed, held)[1] == [f'ome.io/runtime-sync "t1" is new; run "omerender lock update" to advance '
                                        f"from {R0} to {R1}"]
    advanced, messages = update(changed, held)
    assert messages == [f'advanced from {R0} to {R1} (ome.io/runtime-sync "t1")']
    assert advanced.entries[("llama-demo", "llama-3-2-3b-instruct")].syncToken == "t1"


def test_advance_flag_moves_the_pin_and_keeps_the_token():
    lock, _ = update([fx.PLAIN, fx.MODEL, ISVC_P])
    changed = [plain("0.85"), fx.MODEL, ISVC_P]
    for advance in ({"llama-demo/llama-3-2-3b-instruct"}, True):
        moved, messages = update(changed, lock, advance)
        assert messages == [f"advanced from {R0} to {R1} (--advance)"]
        entry = moved.entries[("llama-demo", "llama-3-2-3b-instruct")]
        assert (entry.pinnedRevision, entry.syncToken) == (R1, "")
    assert update(changed, lock, {"other/x"})[1] == [W_P1.format(R0)]


def test_x21_explicit_revision_renders_that_snapshot_and_never_drifts():
    lock, _ = update([fx.PLAIN, fx.MODEL, ISVC_P])
    lock, _ = update([plain("0.85"), fx.MODEL, isvc_p(token="go")], lock)
    named = [plain("0.7"), fx.MODEL, isvc_p(token="other", revision=R0)]
    args, messages = render(named, lock)
    assert args[-1] == "--mem-frac=0.9" and messages == []
    pinned, messages = update(named, lock)
    entry = pinned.entries[("llama-demo", "llama-3-2-3b-instruct")]
    assert (entry.revision, entry.pinnedRevision, entry.syncToken, messages) == (R0, R0, "go", [])
    assert render(named, pinned, locked=True) == (args, [])


def test_x23_unknown_revision_is_e_p3():
    lock, _ = update([fx.PLAIN, fx.MODEL, ISVC_P])
    bad = [fx.PLAIN, fx.MODEL, isvc_p(revision="r-llama-demo-sglang-llama-3-2-3b-590753e8")]
    assert render_error(bad, lock) == ("RuntimeDrifted (RevisionMissing): revision "
                                       "r-llama-demo-sglang-llama-3-2-3b-590753e8 is not in omerender.lock.yaml")
    with pytest.raises(OmeErrors) as caught:
        update(bad, lock)
    assert caught.value.errors[0].message().line().endswith("is not in omerender.lock.yaml")


def test_x23_revision_of_another_runtime_is_e_p4():
    x_sr = fx.sr("x", spec={"engineConfig": {"runner": {"name": "ome-container", "image": "x"}}})
    isvc = edit(fx.ISVC_I, lambda d: (d["metadata"].update(namespace="llama-demo", name="old"),
                                      d["spec"].pop("model"), d["spec"].update(runtime={"name": "x", "autoSync": False})))
    lock, messages = update([x_sr, isvc])
    rev = lock.entries[("llama-demo", "old")].revision
    assert rev.startswith("cr-x-")
    team_b = edit(isvc, lambda d: (d["metadata"].update(namespace="team-b", name="new"),
                                   d["spec"]["runtime"].update(revision=rev)))
    x_csr = fx.csr("x", spec={"engineConfig": {"runner": {"name": "ome-container", "image": "y"}}})
    assert render_error([x_sr, x_csr, team_b], lock) == (
        f"RuntimeDrifted (RuntimeMismatch): revision {rev} belongs to ServingRuntime/llama-demo/x, not "
        "ClusterServingRuntime/x")


def test_x24_stop_pinning_then_resume_from_the_stored_pin():
    lock, _ = update([fx.PLAIN, fx.MODEL, ISVC_P])
    following = [plain("0.85"), fx.MODEL, isvc_p(autoSync=None)]
    args, messages = render(following, lock)
    assert args[-1] == "--mem-frac=0.85"
    assert messages == [f"runtime spec changed since omerender.lock.yaml ({R0} -> {R1})"]
    assert render_error(following, lock, locked=True) == (
        "omerender.lock.yaml is out of date: runtime spec of InferenceService llama-demo/llama-3-2-3b-instruct "
        f'changed ({R0} -> {R1}); run "omerender lock update"')
    lock, messages = update(following, lock)
    entry = lock.entries[("llama-demo", "llama-3-2-3b-instruct")]
    assert (entry.revision, entry.pinnedRevision, entry.autoSync, messages) == (R1, R0, True, [])
    args, messages = render([plain("0.85"), fx.MODEL, ISVC_P], lock)
    assert args[-1] == "--mem-frac=0.9" and messages == [W_P1.format(R0)]


def test_x25_pinned_with_model_and_runtime_gone_or_disabled_is_an_error():
    lock, _ = update([fx.PLAIN, fx.MODEL, ISVC_P])
    assert render_error([fx.MODEL, ISVC_P], lock) == (
        "runtime sglang-llama-3-2-3b does not support model llama-3-2-3b-instruct: ServingRuntime "
        "sglang-llama-3-2-3b not found in namespace llama-demo")
    assert render_error([plain(disabled=True), fx.MODEL, ISVC_P], lock) == (
        "runtime sglang-llama-3-2-3b does not support model llama-3-2-3b-instruct: namespace-scoped runtime "
        "sglang-llama-3-2-3b is disabled")
    with pytest.raises(OmeErrors):
        update([fx.MODEL, ISVC_P], lock)


def test_x25_pinned_without_model_keeps_serving_from_the_snapshot():
    no_model = edit(ISVC_P, lambda d: d["spec"].pop("model"))
    lock, _ = update([fx.PLAIN, no_model])
    args, messages = render([no_model], lock)
    assert args[-1] == "--mem-frac=0.9"
    assert messages == [f'RuntimeDrifted (SourceRuntimeMissing): runtime "sglang-llama-3-2-3b" is not in the input; '
                        f"rendered from pinned revision {R0}"]
    inputs = build(no_model)
    pinned = resolve_with_lock(inputs.isvcs[0], inputs, Chains(inputs, Report()), lock, Report())
    assert str(pinned.resolution.runtime.ref) == "ServingRuntime llama-demo/sglang-llama-3-2-3b"
    args, messages = render([plain("0.85", disabled=True), no_model], lock)
    assert args[-1] == "--mem-frac=0.9"
    assert messages == [f"runtime ServingRuntime/llama-demo/sglang-llama-3-2-3b is disabled; rendered from pinned "
                        f"revision {R0}"]
    kept, messages = update([no_model], lock)
    assert dump_lock(kept) == dump_lock(lock)


def test_x25_without_a_pin_a_missing_runtime_is_still_an_error():
    no_model = edit(ISVC_P, lambda d: d["spec"].pop("model"))
    assert render_error([no_model]) == "ServingRuntime sglang-llama-3-2-3b not found in namespace llama-demo"


# ---------------------------------------------------------------- X26, X29, W-P7, GC, E-P7, E-P8


def test_x26_pinned_and_following_isvcs_after_a_profile_edit():
    a = edit(fx.ISVC_I, lambda d: (d["metadata"].update(name="a"), d["spec"]["runtime"].update(autoSync=False)))
    b = edit(fx.ISVC_I, lambda d: d["metadata"].update(name="b"))
    lock, messages = update([fx.PROFILE, fx.CHILD, fx.MODEL, a, b])
    assert messages == ["pinned to cr-sglang-llama-3-2-3b-0ed2116b"]
    profile = edit(fx.PROFILE, lambda d: d["spec"]["engineConfig"]["runner"].update(image="sglang:new"))
    inputs = build(profile, fx.CHILD, fx.MODEL, a, b)
    chains = Chains(inputs, Report())
    by_name = {isvc.name: isvc for isvc in inputs.isvcs}
    report_a, report_b = Report(), Report()
    pinned_a = resolve_with_lock(by_name["a"], inputs, chains, lock, report_a)
    pinned_b = resolve_with_lock(by_name["b"], inputs, chains, lock, report_b)
    assert pinned_a.spec["engineConfig"]["runner"]["image"] == "docker.io/lmsysorg/sglang:v0.5.5.post3-cu129-amd64"
    assert pinned_b.spec["engineConfig"]["runner"]["image"] == "sglang:new"
    new_rev = pinned_b.revision
    assert [m.text for m in report_a.messages] == [W_P1.format("cr-sglang-llama-3-2-3b-0ed2116b")]
    assert [m.text for m in report_b.messages] == [
        f"runtime spec changed since omerender.lock.yaml (cr-sglang-llama-3-2-3b-0ed2116b -> {new_rev})"]
    with pytest.raises(OmeError) as caught:
        resolve_with_lock(by_name["b"], inputs, chains, lock, Report(), locked=True)
    assert caught.value.text.startswith("omerender.lock.yaml is out of date: runtime spec of InferenceService "
                                        "llama-demo/b changed")


def test_x29_new_isvc_under_locked_and_auto_runtime_change():
    lock, _ = update([fx.PLAIN, fx.MODEL, ISVC_P])
    new = edit(ISVC_P, lambda d: d["metadata"].update(name="new"))
    assert render_error([fx.PLAIN, fx.MODEL, new], lock, locked=True) == (
        'omerender.lock.yaml is out of date: no entry for InferenceService llama-demo/new; run "omerender lock update"')
    auto = edit(fx.ISVC_I, lambda d: d["spec"].pop("runtime"))
    auto_a = fx.csr("a", spec=yaml.safe_load(fx.PLAIN)["spec"])
    lock, messages = update([auto_a, fx.MODEL, auto])
    assert lock.entries[("llama-demo", "llama-3-2-3b-instruct")].selection == "Auto"
    auto_b = fx.sr("b", spec=yaml.safe_load(fx.PLAIN)["spec"])
    args, messages = render([auto_a, auto_b, fx.MODEL, auto], lock)
    assert messages == ["Runtime b will be auto-selected for model llama-3-2-3b-instruct",
                        "auto-selected runtime changed since omerender.lock.yaml: ClusterServingRuntime/a -> "
                        "ServingRuntime/llama-demo/b"]
    assert render_error([auto_a, auto_b, fx.MODEL, auto], lock, locked=True) == (
        "omerender.lock.yaml is out of date: runtime of InferenceService llama-demo/llama-3-2-3b-instruct changed "
        '(ClusterServingRuntime/a -> ServingRuntime/llama-demo/b); run "omerender lock update"')


def test_entry_for_a_removed_isvc_is_stale_under_locked_and_dropped_by_update():
    lock, _ = update([fx.PLAIN, fx.MODEL, ISVC_P])
    inputs = build(fx.PLAIN)
    with pytest.raises(OmeError) as caught:
        check_locked_entries(inputs, lock)
    assert caught.value.text == ("omerender.lock.yaml is out of date: entry for InferenceService "
                                 'llama-demo/llama-3-2-3b-instruct, which is not in the input; run "omerender lock update"')
    empty, _ = update([fx.PLAIN], lock)
    assert empty.entries == {} and list(empty.revisions) == [R0]  # among the 10 newest of its runtime


def test_w_p7_named_runtime_now_resolves_elsewhere_and_update_repins():
    lock, _ = update([fx.PLAIN, fx.MODEL, ISVC_I_PINNED := edit(fx.ISVC_I, lambda d: d["spec"]["runtime"].update(autoSync=False))])
    shadow = fx.csr("sglang-llama-3-2-3b", spec=yaml.safe_load(plain("0.5"))["spec"])
    texts = [fx.PLAIN, shadow, fx.MODEL, ISVC_I_PINNED]
    args, messages = render(texts, lock)
    assert args[-1] == "--mem-frac=0.5"
    assert messages == ["omerender.lock.yaml pins ServingRuntime/llama-demo/sglang-llama-3-2-3b, but spec.runtime now "
                        "resolves to ClusterServingRuntime/sglang-llama-3-2-3b; rendered from the live spec; run "
                        '"omerender lock update"']
    repinned, messages = update(texts, lock)
    entry = repinned.entries[("llama-demo", "llama-3-2-3b-instruct")]
    assert entry.runtime == "ClusterServingRuntime/sglang-llama-3-2-3b"
    assert messages == [f"pinned to {entry.pinnedRevision}"]


def test_unpinned_entries_follow_and_gc_keeps_ten_newest_per_runtime():
    isvc = edit(fx.ISVC_I, lambda d: d["spec"]["runtime"].update(kind="ServingRuntime"))
    lock = None
    for i in range(12):
        lock, _ = update([plain(f"0.{i + 10}"), fx.MODEL, isvc], lock)
    serials = sorted(r.serial for r in lock.revisions.values())
    assert serials == list(range(3, 13))
    entry = lock.entries[("llama-demo", "llama-3-2-3b-instruct")]
    assert lock.revisions[entry.revision].serial == 12 and entry.pinnedRevision is None


def test_e_p7_collision_of_eight_hex_names():
    live = yaml.safe_load(fx.PLAIN)["spec"]
    other = {"x": 1}
    lock = Lock(revisions={R0: Revision(R0, "ServingRuntime/llama-demo/sglang-llama-3-2-3b",
                                        ("ServingRuntime/llama-demo/sglang-llama-3-2-3b",), spec_hash(other), 1, other)})
    with pytest.raises(OmeErrors) as caught:
        update([fx.PLAIN, fx.MODEL, ISVC_P], lock)
    assert caught.value.errors[0].text == (f"revision name {R0} already holds a different spec "
                                           f"({spec_hash(other)}, {spec_hash(live)})")


def test_inputs_are_not_mutated():
    inputs = build(fx.PLAIN, fx.MODEL, ISVC_P)
    before = copy.deepcopy([o.data for o in inputs.objects])
    report = Report()
    lock = update_lock(inputs, Chains(inputs, report), None, (), report)
    resolve_with_lock(inputs.isvcs[0], inputs, Chains(inputs, report), lock, report)
    assert [o.data for o in inputs.objects] == before


# ---------------------------------------------------------------- the command


def write(tmp_path, **files):
    for name, text in files.items():
        (tmp_path / f"{name}.yaml").write_text(text)


def test_lock_update_command_writes_once_and_never_rewrites(tmp_path):
    write(tmp_path, runtime=fx.PLAIN, model=fx.MODEL, isvc=ISVC_P)
    result = CliRunner().invoke(cli, ['lock', "update", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert result.stderr == (f"info: {tmp_path}/isvc.yaml:1:1: InferenceService llama-demo/llama-3-2-3b-instruct: "
                             f"pinned to {R0} [pinned]\n")
    path = tmp_path / "omerender.lock.yaml"
    text = path.read_text()
    assert parse_lock(text).entries[("llama-demo", "llama-3-2-3b-instruct")].pinnedRevision == R0
    mtime = os.stat(path).st_mtime_ns
    os.utime(path, ns=(mtime - 10_000_000, mtime - 10_000_000))
    result = CliRunner().invoke(cli, ['lock', "update", str(tmp_path)])
    assert result.exit_code == 0 and result.stderr == ""
    assert os.stat(path).st_mtime_ns == mtime - 10_000_000
    write(tmp_path, runtime=plain("0.85"))
    result = CliRunner().invoke(cli, ['lock', "update", str(tmp_path), "--advance", "llama-demo/llama-3-2-3b-instruct"])
    assert result.exit_code == 0, result.output
    assert result.stderr.endswith(f"advanced from {R0} to {R1} (--advance) [pin-advanced]\n")
    assert parse_lock(path.read_text()).entries[("llama-demo", "llama-3-2-3b-instruct")].pinnedRevision == R1


def test_lock_update_command_errors_write_nothing(tmp_path):
    write(tmp_path, runtime=fx.CHILD, model=fx.MODEL, isvc=fx.ISVC_I)
    result = CliRunner().invoke(cli, ['lock', "update", str(tmp_path)])
    assert result.exit_code == 1
    assert result.stderr == (f"error: {tmp_path}/runtime.yaml:8:5: ServingRuntime llama-demo/sglang-llama-3-2-3b: "
                             'inherit-from parent "sglang-profile" not found (chain so far: [sglang-llama-3-2-3b])\n')
    assert not (tmp_path / "omerender.lock.yaml").exists()
    write(tmp_path, profile=fx.PROFILE)
    result = CliRunner().invoke(cli, ['lock', "update", str(tmp_path), "--advance", "x/y"])
    assert result.exit_code == 1 and result.stderr == "error: --advance x/y: no InferenceService x/y in the input\n"


def test_lock_update_command_explicit_lock_path(tmp_path):
    write(tmp_path, runtime=fx.PLAIN, model=fx.MODEL, isvc=ISVC_P)
    target = tmp_path / "locks" / "pins.yaml"
    target.parent.mkdir()
    result = CliRunner().invoke(cli, ['lock', "update", str(tmp_path / "isvc.yaml"), str(tmp_path / "runtime.yaml"),
                                             str(tmp_path / "model.yaml"), "--lock", str(target)])
    assert result.exit_code == 0, result.output
    assert target.exists() and not (tmp_path / "omerender.lock.yaml").exists()


def test_lock_update_into_a_missing_folder_is_an_error_line_not_an_internal_error(tmp_path):
    write(tmp_path, runtime=fx.PLAIN, model=fx.MODEL, isvc=ISVC_P)
    target = tmp_path / "missing" / "pins.yaml"
    result = CliRunner().invoke(cli, ['lock', "update", str(tmp_path), "--lock", str(target)])
    assert result.exit_code == 1
    assert result.stderr.endswith(f"error: cannot write {target}: No such file or directory\n")
    assert "internal error" not in result.stderr


def test_snapshot_keeps_empty_volume_sources_but_hashes_without_them():
    spec = {"engineConfig": {"volumes": [{"name": "cache", "emptyDir": {}}], "runner": {"name": "ome-container",
                                                                                      "image": "x"}}}
    runtime = fx.sr("r", spec=spec)
    isvc = edit(fx.ISVC_I, lambda d: (d["spec"].pop("model"),
                                      d["spec"].update(runtime={"name": "r", "kind": "ServingRuntime",
                                                                "autoSync": False})))
    lock, _ = update([runtime, isvc])
    text = dump_lock(lock)
    record = parse_lock(text).revisions[lock.entries[("llama-demo", "llama-3-2-3b-instruct")].pinnedRevision]
    assert record.spec["engineConfig"]["volumes"] == [{"name": "cache", "emptyDir": {}}]
    assert record.specHash == spec_hash({"engineConfig": {"runner": {"name": "ome-container", "image": "x"},
                                                          "volumes": [{"name": "cache"}]}})
    changed = fx.sr("r", spec=dict(spec, engineConfig=dict(spec["engineConfig"], runner={"name": "ome-container",
                                                                                          "image": "y"})))
    inputs = build(changed, isvc)
    pinned = resolve_with_lock(inputs.isvcs[0], inputs, Chains(inputs, Report()), parse_lock(text), Report())
    assert pinned.spec["engineConfig"]["volumes"] == [{"name": "cache", "emptyDir": {}}]
    assert pinned.spec["engineConfig"]["runner"]["image"] == "x"


def test_x27_accelerator_class_is_read_live_and_never_drifts():
    def h100(value):
        return yaml.safe_dump({"apiVersion": "ome.io/v1beta1", "kind": "AcceleratorClass",
                               "metadata": {"name": "nvidia-h100"},
                               "spec": {"discovery": {"nodeSelector": {"gpu": value}}}})
    a = edit(ISVC_P, lambda d: d["spec"].update(acceleratorSelector={"acceleratorClass": "nvidia-h100"}))
    lock, _ = update([fx.PLAIN, fx.MODEL, h100("h100-a"), a])
    changed = [fx.PLAIN, fx.MODEL, h100("h100-b"), a]
    args, messages = render(changed, lock, locked=True)
    assert not [m for m in messages if "RuntimeDrifted" in m]
    again, _ = update(changed, lock)
    assert dump_lock(again) == dump_lock(lock)


def test_check_reads_the_lock_as_render_does(tmp_path):
    """check renders with the lock (and takes --lock/--locked): a pinned service stays current after a runtime edit."""
    from conftest import CHART_DEFAULTS_INFO, run_cli
    deploy = tmp_path / "deploy"
    deploy.mkdir()
    (deploy / "model.yaml").write_text(fx.MODEL)
    (deploy / "isvc.yaml").write_text(ISVC_P)
    (deploy / "runtime.yaml").write_text(fx.PLAIN)
    assert run_cli("lock", "update", str(deploy)).code == 0
    out = tmp_path / "rendered"
    assert run_cli("render", str(deploy), "--output-dir", str(out)).code == 0
    (deploy / "runtime.yaml").write_text(plain("0.85"))  # pinned: the render does not change
    check = run_cli("check", str(deploy), str(out))
    assert (check.code, check.stdout) == (0, "")
    assert check.lines == [CHART_DEFAULTS_INFO, f"warning: {deploy}/isvc.yaml: InferenceService "
                           "llama-demo/llama-3-2-3b-instruct: " + W_P1.format(R0)]
    moved = tmp_path / "elsewhere.lock.yaml"
    (deploy / "omerender.lock.yaml").rename(moved)
    stale = run_cli("check", str(deploy), str(out))
    assert stale.code == 1 and stale.lines[-1] == (f"error: {out} is out of date with {deploy}; run: omerender render "
                                                   f"{deploy} --output-dir {out}")
    assert run_cli("check", str(deploy), str(out), "--lock", str(moved), "--locked").code == 0
