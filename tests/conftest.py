"""Shared test helpers: run the real CLI on objects and look at what a user sees."""
from __future__ import annotations

import copy
import os
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from omerender.cli.app import cli
from schemas import K8S_VERSION, NON_CORE, validate_object  # noqa: F401  (re-exported for the tests)

ROOT = Path(__file__).resolve().parents[1]
CATALOG = ROOT / "tests" / "data" / "ome"   # OME's catalog and model configs (PROVENANCE.md there)
FIXTURES = ROOT / "fixtures"
# scripts/setup-tools.sh installs kustomize here; tests find it without a system install.
os.environ["PATH"] = f"{ROOT / '.tools' / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"
# Every build in the suite, in-process or in a subprocess that inherits this, runs both ways where omerender
# reads the kustomization itself (omerender.gitops.native) and fails where that differs from kustomize's.
os.environ.setdefault("OMERENDER_BUILD_NATIVE", "verify")
# Every YAML text the suite reads, in-process or in a subprocess, is read both by rapidyaml where the fast path
# takes it and by the limited loader (omerender.yamlio.fastread), and a difference fails the test.
os.environ.setdefault("OMERENDER_YAML_FAST", "verify")
# Tests write their inputs with yaml.safe_dump, whose YAML 1.1 rules leave plain some strings that Go's
# readers, and so omerender, take for something else ("1e-5", "0o7", "09", "y", "2001-1-2"). Quoting every
# text with the syntax of a Go number or timestamp, and YAML 1.1's one-letter booleans, keeps them strings.
yaml.SafeDumper.add_implicit_resolver(
    "tag:omerender.io,2026:go-non-string",
    re.compile(r"^(?:[yYnN]|[-+]?(?:[0-9_]+(?:\.[0-9_]*)?|\.[0-9_]+)(?:[eE][-+]?[0-9_]+)?|[-+]?0[xXoObB].*"
               r"|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt ].*)?)$", re.S),
    list("yYnN-+.0123456789"))


# A message's position in its file (``error: f.yaml:12:5: ...``). Tests of a message's text compare the line
# without it; tests/test_lines.py asserts the positions themselves (``Run.placed``).
POSITION = re.compile(r"\b(error|warning|info): ([^\n]*?):\d+:\d+: ")


# A warning's or info's code at the end of its line (omerender.codes): tests of a message's text compare it
# without; tests of codes read ``placed`` (or Run.codes).
CODE = re.compile(r"^((?:warning|info): [^\n]*?) \[([a-z0-9-]+)\]$", re.MULTILINE)


def uncoded(text: str) -> str:
    """``text`` with every warning's and info's code taken out."""
    return CODE.sub(r"\1", text)


def unplaced(text: str) -> str:
    """``text`` with every message's ``:line:column`` after its file, and every warning's code, taken out."""
    return uncoded(POSITION.sub(r"\1: \2: ", text))


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str  # as printed, less the positions (see unplaced)
    placed: str = ""  # stderr less the codes
    printed: str = ""  # stderr as printed

    @property
    def placed_lines(self) -> list[str]:
        return [line for line in self.placed.splitlines() if line]

    @property
    def codes(self) -> list[str]:
        """The codes of the warnings and infos printed, in order."""
        return [m.group(2) for m in CODE.finditer(self.printed)]

    @property
    def objects(self) -> list[dict]:
        return [o for o in yaml.safe_load_all(self.stdout) if o is not None]

    @property
    def lines(self) -> list[str]:
        return [line for line in self.stderr.splitlines() if line]

    def find(self, kind: str, name: str | None = None) -> dict:
        found = [o for o in self.objects if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)]
        assert len(found) == 1, f"expected one {kind} {name}, got {[o['metadata']['name'] for o in found]}"
        return found[0]

    def kinds(self) -> list[tuple[str, str]]:
        return [(o["kind"], o["metadata"]["name"]) for o in self.objects]


# The info every render with InferenceServices and no cluster ConfigMap prints once, first (issue 40), as
# ``Run.lines`` shows it (``CHART_DEFAULTS_CODED``: as printed)
CHART_DEFAULTS_INFO = ("info: no ConfigMap inferenceservice-config among the inputs and no --cluster-config: OME v1.3's "
                       "Helm chart defaults apply (no Ingress or route, at most 3 engine replicas, nvidia.com/gpu the "
                       "only GPU resource); to render with the cluster's, give `kubectl get configmap "
                       "inferenceservice-config -n ome -o yaml` as --cluster-config FILE or among the inputs")
CHART_DEFAULTS_CODED = CHART_DEFAULTS_INFO + " [chart-defaults]"
CHART_DEFAULTS_NOTICE = "::notice title=chart-defaults::" + CHART_DEFAULTS_INFO[len("info: "):]


def run_cli(*args: str, input: str | None = None) -> Run:
    result = CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)
    return Run(result.exit_code, result.stdout, unplaced(result.stderr), uncoded(result.stderr), result.stderr)


def render_objects(objects: list[dict], *flags: str) -> Run:
    text = yaml.safe_dump_all(objects, sort_keys=False)
    return run_cli("render", "-", *flags, input=text)


def load_yaml(path: Path) -> list[dict]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]


def validate_k8s(obj: dict) -> None:
    """Validate a rendered object: the Kubernetes API schema (strict: unknown fields fail) for core kinds,
    the CRD omerender ships (omerender/kube/crds/, read by tests/schemas/) for the NON_CORE kinds (LeaderWorkerSet,
    ScaledObject, TriggerAuthentication, HTTPRoute, BackendTrafficPolicy, PodMonitor). Raises
    jsonschema.ValidationError."""
    validate_object(obj)


def worked_example() -> dict[str, dict]:
    """Fixture F of render.md §16: the worked example's model, runtime and InferenceService."""
    objs = load_yaml(FIXTURES / "worked-example" / "inputs.yaml")
    return {"model": objs[0], "runtime": objs[1], "isvc": objs[2]}


@pytest.fixture
def F():
    return copy.deepcopy(worked_example())


def container(deployment: dict, index: int = -1) -> dict:
    return deployment["spec"]["template"]["spec"]["containers"][index]


def env_pairs(c: dict) -> list[tuple[str, str | None]]:
    return [(e["name"], e.get("value")) for e in c.get("env", [])]


# ---------------------------------------------------------------- every code of the table is emitted by some test

EMITTED: set[str] = set()


def _record_codes() -> None:
    """Note the code of every warning and info omerender itself makes while the tests run (a Message a test
    builds by hand does not count)."""
    import sys
    from omerender.errors import Message
    made = Message.__post_init__

    def post_init(self) -> None:
        made(self)
        if self.code and _maker(sys._getframe(2)).startswith("omerender."):
            EMITTED.add(self.code)
    Message.__post_init__ = post_init


def _maker(frame) -> str:
    """The module that asked for the message: the first caller outside omerender.errors (Report.warn...)."""
    while frame is not None and frame.f_globals.get("__name__") == "omerender.errors":
        frame = frame.f_back
    return frame.f_globals.get("__name__", "") if frame is not None else ""


def _record_printed_codes() -> None:
    """Note the codes a test's subprocess (omerender run as a program, or by kustomize) printed."""
    import subprocess

    def scan(*outputs) -> None:
        for text in outputs:
            if isinstance(text, bytes):
                text = text.decode("utf-8", "replace")
            if isinstance(text, str):
                EMITTED.update(m.group(2) for m in CODE.finditer(text))
                EMITTED.update(re.findall(r"^::(?:warning|notice) .*title=([a-z0-9-]+)::", text, re.MULTILINE))

    run, communicate = subprocess.run, subprocess.Popen.communicate

    def recording_run(*args, **kwargs):
        done = run(*args, **kwargs)
        scan(done.stdout, done.stderr)
        return done

    def recording_communicate(self, *args, **kwargs):
        outputs = communicate(self, *args, **kwargs)
        scan(*outputs)
        return outputs
    subprocess.run, subprocess.Popen.communicate = recording_run, recording_communicate


_record_codes()
_record_printed_codes()


def pytest_sessionfinish(session, exitstatus) -> None:
    """When the whole suite ran (every test file, nothing deselected, no stop on failure), each code of
    omerender/codes.py must have been emitted by some test: a code no test reaches is a message no test reads.
    (That every emitted code is in the table, Message itself checks.)"""
    from omerender.codes import CODES
    config = session.config
    files = {Path(str(item.fspath)).name for item in session.items}
    everything = {p.name for p in Path(__file__).parent.glob("test_*.py")}
    partial = (files != everything or config.option.keyword or config.option.markexpr or session.shouldstop
               or config.getoption("deselect", None) or exitstatus != 0)
    if partial:
        return
    never = sorted(set(CODES) - EMITTED)
    if never:
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(f"error: message codes no test emitted: {', '.join(never)}; add a test that "
                                f"renders an input printing each (tests/test_codes.py)", red=True)
        session.exitstatus = 1
