"""YAML anchors and aliases share one node between places in the input; the render copies specs
(omerender/data.py) and must treat each place as its own, exactly as if the YAML were written out."""
from __future__ import annotations

from conftest import FIXTURES, run_cli

INPUTS = (FIXTURES / "worked-example" / "inputs.yaml").read_text()
TOLERATIONS = "tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]"


def test_an_aliased_spec_part_renders_as_if_written_out_twice():
    assert INPUTS.count(TOLERATIONS) == 1 and "  routerConfig:\n" in INPUTS
    written_out = INPUTS.replace("  routerConfig:\n", f"  routerConfig:\n    {TOLERATIONS}\n", 1)
    aliased = INPUTS.replace(TOLERATIONS, "tolerations: &tol [{key: nvidia.com/gpu, operator: Exists, "
                                          "effect: NoSchedule}]").replace(
        "  routerConfig:\n", "  routerConfig:\n    tolerations: *tol\n", 1)
    expected, got = run_cli("render", "-", input=written_out), run_cli("render", "-", input=aliased)
    assert (expected.code, got.code) == (0, 0), got.stderr
    assert got.stdout == expected.stdout
    router = next(o for o in got.objects if o["kind"] == "Deployment" and o["metadata"]["name"].endswith("-router"))
    assert router["spec"]["template"]["spec"]["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
