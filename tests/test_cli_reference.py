"""docs/reference/cli.md, the command-line reference, is what scripts/cli_reference.py writes from the click
commands' own help, so it cannot drift from the code (issue 35)."""
from __future__ import annotations

import difflib
import importlib.util
import re

import click

from conftest import ROOT, run_cli
from omerender.cli import cli

PAGE = ROOT / "docs" / "reference" / "cli.md"
GENERATOR = ROOT / "scripts" / "cli_reference.py"


def generator():
    spec = importlib.util.spec_from_file_location("cli_reference", GENERATOR)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def commands(ctx=None):
    """Every command's context, found here on its own rather than through the script."""
    ctx = ctx or click.Context(cli, info_name="omerender", **cli.context_settings)
    yield ctx
    if isinstance(ctx.command, click.Group):
        for name in ctx.command.list_commands(ctx):
            command = ctx.command.get_command(ctx, name)
            yield from commands(click.Context(command, info_name=name, parent=ctx, **command.context_settings))


def section(page: str, path: str) -> str:
    return re.split(r"^##+ ", page.split(f" {path}\n", 1)[1], maxsplit=1, flags=re.M)[0]


def test_the_committed_reference_is_what_the_script_writes_from_the_commands():
    committed, written = PAGE.read_text(), generator().page()
    diff = "".join(list(difflib.unified_diff(committed.splitlines(True), written.splitlines(True),
                                             "docs/reference/cli.md (committed)", "the commands' help"))[:40])
    assert committed == written, ("docs/reference/cli.md differs from the commands' help; run: "
                                  "python scripts/cli_reference.py\n" + diff)


def test_the_script_writes_the_same_page_every_time():
    assert generator().page() == generator().page()


def test_every_command_has_a_heading_its_usage_and_every_visible_option():
    page = PAGE.read_text()
    for ctx in commands():
        path = ctx.command_path
        level = "##" if len(path.split()) <= 2 else "###"
        assert f"\n{level} {path}\n" in page, path
        assert f"- [{path}](#{path.replace(' ', '-')})" in page, path
        text = section(page, path)
        if path == "omerender fn":  # the KRM function's own help, which `omerender fn --help` prints
            assert run_cli("fn", "--help").stdout.rstrip() in text
            continue
        usage = run_cli(*path.split()[1:], "--help").stdout.splitlines()[0].replace("Usage: cli", "Usage: omerender")
        assert f"```text\n{usage}\n```" in text, path
        listed = {name.split(" ")[0] for cell in re.findall(r"^\| `([^`]+)` \|", text, re.M)
                  for name in cell.split(", ")}
        for param in ctx.command.get_params(ctx):
            if isinstance(param, click.Option):
                assert all((name in listed) != param.hidden for name in param.opts), (path, param.opts)


def test_an_option_row_gives_its_type_choices_default_and_help():
    render = section(PAGE.read_text(), "omerender render")
    assert ("| `--messages [text\\|github]` | one of `text`, `github` | `text` | How to print errors, warnings and "
            "infos on stderr:") in render
    assert "| `-a, --api-versions LIST` | text, repeatable |  | The API versions the target cluster serves" in render
    assert "| `--output-dir DIR` | text |  | Write one file per object plus a kustomization.yaml" in render
    diff = section(PAGE.read_text(), "omerender diff")
    assert "| `-U, --unified N` | integer, 0 to 1000 |  |" in diff
    assert "- `[--] [PATH]...` (optional, any number)" in diff


def test_the_old_spellings_click_hides_are_left_out():
    page = PAGE.read_text()
    assert "| `--output-dir DIR` |" in section(page, "omerender render")
    assert "| `-o` |" not in page and "`-o DIR`" not in page
    assert "| `--output-file FILE` |" in section(page, "omerender build")
    assert "`-o, --output FILE`" not in page


def test_help_text_stays_text_in_markdown():
    generate = generator()
    assert generate._prose("RUNTIME is <name> or `a|<b>`") == "RUNTIME is \\<name> or `a|<b>`"
    assert generate._prose("*.safetensors, model_index.json, _x_") == "\\*.safetensors, model_index.json, \\_x\\_"
    assert "KIND/NAME is \\<name> (when one input has it), KIND/\\<name>" in section(PAGE.read_text(), "omerender tree")
