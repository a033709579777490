"""A command's messages are written to stderr at once (cli.shell.say_all), a line each, in the order they arose: a
large render prints thousands, and one write (and flush) apiece cost it. The lines are what each message says."""
from __future__ import annotations

import pytest

from conftest import FIXTURES, run_cli


def test_the_report_is_a_line_per_message_in_order_and_quiet_leaves_out_only_the_infos():
    loud = run_cli("render", str(FIXTURES / "quickstart"))
    quiet = run_cli("render", "--quiet", str(FIXTURES / "quickstart"))
    lines = loud.printed.splitlines()
    assert loud.code == quiet.code == 0 and loud.printed.endswith("\n")
    assert [line.split(":")[0] for line in lines] == ["info", "warning"]
    assert quiet.printed.splitlines() == [line for line in lines if not line.startswith("info:")]
    assert quiet.stdout == loud.stdout


@pytest.mark.parametrize("count", [3, 1001])
def test_a_failed_render_prints_its_errors_a_line_each_and_nothing_on_stdout(tmp_path, count):
    """Past a thousand lines (written a thousand at a time) as below."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("".join(f"---\napiVersion: ome.io/v1beta1\nkind: InferenceService\nmetadata:\n  name: s{i}\n"
                           f"spec: 7\n" for i in range(count)))
    run = run_cli("render", str(bad))
    assert run.code == 1 and run.stdout == "" and run.printed.endswith("\n")
    errors = run.printed.splitlines()
    assert len(errors) == count and all(line.startswith(f"error: {bad}:") for line in errors)
    assert [f"InferenceService default/s{i}: spec:" in line for i, line in enumerate(errors)] == [True] * count
