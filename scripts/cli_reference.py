#!/usr/bin/env python3
"""Write docs/reference/cli.md, the reference of every omerender command and option, from the click commands'
own help (omerender.cli): usage line, help text, arguments, options with their type, choices and default, and
examples, one heading per command (``## omerender render`` is ``#omerender-render``).

Run it after changing a command, an option or its help: ``python scripts/cli_reference.py``
(tests/test_cli_reference.py fails while the committed page differs from what this writes)."""
from __future__ import annotations

import inspect
import re
import sys
import textwrap
from pathlib import Path

import click

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "reference" / "cli.md"

HEADER = """# Command-line reference

<!-- Written by scripts/cli_reference.py from the click commands in omerender/cli; edit their help, then run the
script. -->

Every `omerender` command with its arguments and options, as `omerender COMMAND --help` prints them. An option's
Default column is the value omerender uses when the option is not given, where click knows it; otherwise its
description says what happens.

Shell completion of the commands, options and choices: `_OMERENDER_COMPLETE=bash_source omerender` (or
`zsh_source`, `fish_source`) prints the script to load from your shell's startup file
([Install](../how-to/install.md#shell-completion)).

"""


def page() -> str:
    """The whole page, the same on every machine: commands in name order, nothing from the terminal."""
    sys.path.insert(0, str(ROOT))
    from omerender.cli import cli
    root = click.Context(cli, info_name="omerender", **cli.context_settings)
    contexts = list(_walk(root))
    index = "\n".join(f"{'  ' * (len(ctx.command_path.split()) - 1)}- [{ctx.command_path}](#{_slug(ctx)})"
                      for ctx in contexts)
    return HEADER + index + "\n\n" + "\n".join(_section(ctx) for ctx in contexts)


def _walk(ctx):
    yield ctx
    if isinstance(ctx.command, click.Group):
        for name in ctx.command.list_commands(ctx):
            command = ctx.command.get_command(ctx, name)
            if not command.hidden:
                yield from _walk(click.Context(command, info_name=name, parent=ctx, **command.context_settings))


def _section(ctx) -> str:
    command = ctx.command
    level = "##" if len(ctx.command_path.split()) <= 2 else "###"
    parts = [f"{level} {ctx.command_path}\n"]
    full_help = _own_help(ctx)
    if full_help:  # its usage line and examples are in its help
        return "\n".join(parts + _blocks(command.help or "")
                         + [f"`{ctx.command_path} --help` prints the function's own help:\n", _fence(full_help)])
    parts += [_fence(_usage(ctx))] + _blocks(command.help or "")
    arguments = [param for param in command.get_params(ctx) if isinstance(param, click.Argument)]
    if arguments:
        parts.append("Arguments:\n\n" + "\n".join(f"- `{arg.make_metavar(ctx)}` ({_arity(arg)})" for arg in arguments)
                     + "\n")
    options = [param for param in command.get_params(ctx)
               if isinstance(param, click.Option) and not param.hidden]
    if options:
        rows = [_option_row(option, ctx) for option in options]
        parts.append("Options:\n\n| Option | Type | Default | Description |\n|---|---|---|---|\n"
                     + "\n".join(rows) + "\n")
    if isinstance(command, click.Group):
        rows = [f"| [`{name}`](#{_slug(ctx, name)}) | {_cell(_first_paragraph(sub.help or ''))} |"
                for name in command.list_commands(ctx)
                if not (sub := command.get_command(ctx, name)).hidden]
        parts.append("Commands:\n\n| Command | What it does |\n|---|---|\n" + "\n".join(rows) + "\n")
    parts += _blocks(command.epilog or "")
    return "\n".join(parts)


def _own_help(ctx) -> str | None:
    """``omerender fn`` hands its arguments to the KRM function, whose help is its own text, not click's."""
    if ctx.command_path == "omerender fn":
        from omerender.cli.fn import HELP
        return HELP.format(prog=ctx.command_path)
    return None


def _usage(ctx) -> str:
    return f"Usage: {ctx.command_path} {' '.join(ctx.command.collect_usage_pieces(ctx))}"


def _option_row(option, ctx) -> str:
    record = option.get_help_record(ctx)
    names = record[0] if record else ", ".join(option.opts)
    description = _prose(" ".join((option.help or "").split()))
    if option.envvar:
        description += f" Environment variable: `{option.envvar}`."
    return f"| `{_cell(names)}` | {_cell(_type(option))} | {_cell(_default(option))} | {_cell(description)} |"


def _type(option) -> str:
    if option.is_flag:
        kind = "flag"
    elif isinstance(option.type, click.Choice):
        kind = "one of " + ", ".join(f"`{choice}`" for choice in option.type.choices)
    elif isinstance(option.type, click.IntRange):
        kind = f"integer, {option.type.min} to {option.type.max}"
    else:
        kind = {"text": "text", "integer": "integer", "float": "number"}.get(option.type.name, option.type.name)
    return kind + (", repeatable" if option.multiple else "")


def _default(option) -> str:
    default = option.default
    if option.is_flag or default is None or default in ((), []) or type(default).__name__ == "Sentinel":
        return ""
    return f"`{default}`"



def _arity(argument) -> str:
    many = argument.nargs == -1
    if argument.required:
        return "required, one or more" if many else "required"
    return "optional, any number" if many else "optional"


def _blocks(text: str) -> list[str]:
    """Click's help paragraphs as Markdown: a paragraph that starts with \\b keeps its lines (a fenced block,
    after its first line where that is a heading such as "Examples:"); the others are joined into one line."""
    blocks = []
    for paragraph in re.split(r"\n\s*\n", inspect.cleandoc(text).split("\f")[0]):
        if not paragraph.strip():
            continue
        if paragraph.startswith("\b"):
            lines = paragraph[1:].strip("\n").splitlines()
            if lines and lines[0].endswith(":") and not lines[0].startswith(" "):
                blocks.append(_prose(lines[0]) + "\n")
                lines = lines[1:]
            blocks.append(_fence(textwrap.dedent("\n".join(lines))))
        else:
            blocks.append(_prose(" ".join(paragraph.split())) + "\n")
    return blocks


def _first_paragraph(text: str) -> str:
    return _prose(" ".join(re.split(r"\n\s*\n", inspect.cleandoc(text))[0].split()))


def _fence(text: str) -> str:
    return f"```text\n{text.rstrip()}\n```\n"


def _prose(text: str) -> str:
    """Help text as Markdown text: backtick spans stay code; elsewhere the characters Markdown would read as
    markup (``<name>`` as HTML, ``*`` and a word-edge ``_`` as emphasis) are escaped."""
    pieces = re.split(r"(`[^`]*`)", text)
    return "".join(piece if piece.startswith("`") else
                   re.sub(r"[\\<*]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])", lambda m: "\\" + m.group(0), piece)
                   for piece in pieces)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _slug(ctx, name: str | None = None) -> str:
    return "-".join(ctx.command_path.split() + ([name] if name else []))


if __name__ == "__main__":
    PAGE.parent.mkdir(parents=True, exist_ok=True)
    PAGE.write_text(page())
