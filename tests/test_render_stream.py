"""`render` writes each InferenceService's objects as they are rendered (ome.render's sink, emit.Spool) instead of
keeping them: the output is the one the kept objects give, byte for byte, and an error found late (a duplicate of
the first InferenceService's object in the last one, a failure in the last one) still leaves stdout empty and the
output directory untouched."""
from __future__ import annotations

import copy
import io
from pathlib import Path

import pytest
import yaml

from conftest import FIXTURES, run_cli, worked_example
from omerender.errors import OmeError, OmeErrors
from omerender.gitops.outdir import origins, rendered_files
from omerender.gitops.outspool import DirSpool
from omerender.ome.load import index
from omerender.ome.render import Options, render
from omerender.ome.weights.settings import DOWNLOAD
from omerender.yamlio.emit import Spool, write_spliced, write_stream
from omerender.yamlio.reading import read_paths


def _renderable(folder: Path) -> bool:
    try:
        return bool(index(read_paths([str(folder)])).isvcs)
    except OmeErrors:
        return False


# every fixture folder that is an input on its own (the benchmark is the quickstart's: rendered with it below)
FIXTURE_DIRS = sorted(p for p in FIXTURES.rglob("*") if p.is_dir() and any(p.glob("*.yaml")) and _renderable(p))


def _fleet(names: list[str], last: dict | None = None) -> str:
    example = worked_example()
    docs = [example["model"], example["runtime"]]
    for name in names:
        isvc = copy.deepcopy(example["isvc"])
        isvc["metadata"]["name"] = name
        docs.append(isvc)
    if last is not None:
        docs[-1]["spec"].update(last)
    return yaml.safe_dump_all(docs)


def _streamed(inputs, options: Options) -> str:
    spool = Spool()
    result = render(inputs, options, None, spool)
    out = io.StringIO()
    write_spliced(result.objects[:result.streamed_at], spool, result.objects[result.streamed_at:], out)
    return out.getvalue()


def _kept(inputs, options: Options) -> str:
    out = io.StringIO()
    write_stream(render(inputs, options).objects, out)
    return out.getvalue()


def _dir_streamed(inputs, options: Options) -> dict[str, str]:
    spool = DirSpool(origins(inputs))
    result = render(inputs, options, None, spool)
    return dict(spool.files(result.objects[:result.streamed_at], result.objects[result.streamed_at:]).items())


def _dir_kept(inputs, options: Options) -> dict[str, str]:
    return rendered_files(render(inputs, options).objects, origins(inputs))


OPTIONS = [Options(), Options(keep_inputs=True), Options(model_weights=DOWNLOAD)]


@pytest.mark.parametrize("options", OPTIONS, ids=["agent", "keep-inputs", "download"])
@pytest.mark.parametrize("fixture", FIXTURE_DIRS, ids=lambda p: p.name)
def test_the_streamed_output_dir_is_the_kept_objects_output_dir(fixture: Path, options: Options):
    _same(fixture, options, _dir_kept, _dir_streamed)


def _messages(call) -> list[str]:
    with pytest.raises(OmeErrors) as caught:
        call()
    return [e.message().line() for e in caught.value.errors]


def test_an_input_and_a_rendered_object_written_to_one_file_name_the_input_first():
    """A Knative Service named as the engine's Service is no duplicate (another group) but the same file: the
    input, first in the output, owns it, and the error names the rendered one, as without streaming."""
    knative = {"apiVersion": "serving.knative.dev/v1", "kind": "Service",
               "metadata": {"name": "b-engine", "namespace": "llama-demo"}, "spec": {}}
    text = _fleet(["a", "b", "c"]) + "---\n" + yaml.safe_dump(knative)

    def inputs():
        return index(read_paths(["-"], stdin=io.StringIO(text)))
    kept = _messages(lambda: _dir_kept(inputs(), Options()))
    assert _messages(lambda: _dir_streamed(inputs(), Options())) == kept
    assert kept == ["error: <stdin>: InferenceService llama-demo/b: rendered Service llama-demo/b-engine: Service "
                    "llama-demo/b-engine (serving.knative.dev/v1) and this object (v1) would both be written to "
                    "llama-demo/service-b-engine.yaml: one kind, namespace and name can be rendered once"]


def test_the_streamed_output_dir_is_written_as_without_streaming(tmp_path):
    inputs = str(FIXTURES / "accelerators-70b")
    assert run_cli("render", inputs, "--output-dir", str(tmp_path / "streamed")).code == 0
    assert run_cli("render", inputs, "--validate", "--output-dir", str(tmp_path / "kept")).code == 0   # no sink
    read = [{p.relative_to(d): p.read_bytes() for p in d.rglob("*") if p.is_file()}
            for d in (tmp_path / "streamed", tmp_path / "kept")]
    assert read[0] == read[1] and len(read[0]) > 3


@pytest.mark.parametrize("options", OPTIONS, ids=["agent", "keep-inputs", "download"])
@pytest.mark.parametrize("fixture", FIXTURE_DIRS, ids=lambda p: p.name)
def test_the_streamed_output_is_the_kept_objects_output(fixture: Path, options: Options):
    _same(fixture, options, _kept, _streamed)


def _same(fixture: Path, options: Options, kept, streamed) -> None:
    """The same output both ways, or the same errors (each side reads its own inputs: a render may not be run
    twice on one Inputs)."""
    try:
        expected = kept(index(read_paths([str(fixture)])), options)
    except OmeErrors as err:
        assert _messages(lambda: streamed(index(read_paths([str(fixture)])), options)) == \
            [e.message().line() for e in err.errors]
        return
    assert streamed(index(read_paths([str(fixture)])), options) == expected


@pytest.mark.parametrize("options", [Options(), Options(model_weights=DOWNLOAD)], ids=["agent", "download"])
def test_a_benchmark_job_reads_the_objects_of_its_streamed_isvc(options: Options):
    """The BenchmarkJob's Job is built from its InferenceService's rendered objects, which the render keeps for it;
    under download the weights book's claims and Jobs follow, as kept."""
    paths = [str(FIXTURES / "quickstart"), str(FIXTURES / "benchmark")]
    streamed = _streamed(index(read_paths(paths)), options)
    assert streamed == _kept(index(read_paths(paths)), options)
    assert "kind: Job\n" in streamed


def test_a_shared_trigger_authentication_streams_once_at_its_first_isvc():
    from test_metric_providers import configmap, providers, queue_depth
    example = worked_example()
    example["isvc"]["spec"]["engine"]["autoscalerPolicyRef"] = {"name": "queue-depth"}
    twins = [copy.deepcopy(example["isvc"]) for _ in range(3)]
    for i, twin in enumerate(twins):
        twin["metadata"]["name"] = f"llama-twin-{i}"
    text = yaml.safe_dump_all(list(example.values()) + twins + [queue_depth(), configmap(providers())])
    streamed = _streamed(index(read_paths(["-"], stdin=io.StringIO(text))), Options())
    assert streamed == _kept(index(read_paths(["-"], stdin=io.StringIO(text))), Options())
    assert streamed.count("kind: TriggerAuthentication\n") == 1


def test_a_duplicate_of_the_first_isvcs_object_in_the_last_leaves_stdout_empty():
    # "a" renders Service a-engine first; "a-engine", last by name, renders its own Service a-engine
    run = run_cli("render", "-", input=_fleet(["a", "a-c", "a-d", "a-engine"]))
    assert run.code == 1 and run.stdout == ""
    assert run.lines == ["error: <stdin>: InferenceService llama-demo/a-engine: Service llama-demo/a-engine would be "
                         "written twice: rendered from InferenceService llama-demo/a (<stdin>) and rendered from "
                         "InferenceService llama-demo/a-engine (<stdin>); the API server keeps one object per kind, "
                         "namespace and name: rename one"]


def test_a_failure_in_the_last_isvc_leaves_stdout_empty():
    run = run_cli("render", "-", input=_fleet(["a", "b", "c", "z"], last={"runtime": {"name": "no-such-runtime"}}))
    assert run.code == 1 and run.stdout == ""
    assert len(run.lines) == 1 and run.lines[0].startswith("error: <stdin>: InferenceService llama-demo/z: ")


def test_the_render_raises_after_its_sink_got_the_objects_before_the_error():
    inputs = index(read_paths(["-"], stdin=io.StringIO(_fleet(["a", "a-c", "a-d", "a-engine"]))))
    got = []
    with pytest.raises(OmeErrors):
        render(inputs, Options(), None, got.append)
    assert {o["metadata"]["name"] for o in got} >= {"a-engine", "a-c-engine"}   # streamed, then refused whole


@pytest.mark.parametrize("last", [None, {"runtime": {"name": "no-such-runtime"}}], ids=["duplicate", "failure"])
def test_a_late_error_leaves_the_output_dir_untouched(tmp_path, last):
    good = tmp_path / "good.yaml"
    good.write_text(_fleet(["a", "b"]))
    out = tmp_path / "rendered"
    assert run_cli("render", str(good), "--output-dir", str(out)).code == 0
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    bad = tmp_path / "bad.yaml"
    bad.write_text(_fleet(["a", "a-c", "a-d", "a-engine"] if last is None else ["a", "b", "z"], last))
    run = run_cli("render", str(bad), "--output-dir", str(out))
    assert run.code == 1 and run.stdout == "" and run.lines[0].startswith("error: ")
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_a_spooled_object_that_cannot_be_written_raises_before_anything_is_written():
    """The writer's error (a lone surrogate: emit.not_utf8_error) for an object in the middle of the stream, as
    write_stream raises it, and nothing of the objects before it written."""
    spool = Spool()
    spool({"kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "v"}})
    spool({"kind": "ConfigMap", "metadata": {"name": "b"}, "data": {"k": "\ud800"}})
    spool({"kind": "ConfigMap", "metadata": {"name": "c"}})
    out = io.StringIO()
    with pytest.raises(OmeError) as caught:
        write_spliced([{"kind": "Namespace", "metadata": {"name": "n"}}], spool, [], out)
    assert out.getvalue() == ""
    assert caught.value.text.startswith('data.k: the string "\\ud800" cannot be written as UTF-8')


def test_the_spool_holds_any_text_and_gives_it_back_whole():
    objects = [{"kind": "ConfigMap", "metadata": {"name": f"m{i}"}, "data": {"t": "é€😀" * i + "x" * (i * 97)}}
               for i in range(400)]
    class Small(Spool):
        PACK = 1000   # many packed pieces, some ending inside a character
        HOLD = 20_000   # the stream's start held as text, the rest compressed

    spool = Small()
    for obj in objects[1:-1]:
        spool(obj)
    out = io.StringIO()
    write_spliced(objects[:1], spool, objects[-1:], out)
    expected = io.StringIO()
    write_stream(objects, expected)
    assert out.getvalue() == expected.getvalue()
