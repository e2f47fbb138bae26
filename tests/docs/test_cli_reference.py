"""The command reference (docs/cli.md) documents every command, and what it shows is true.

Each command has a ``## `deniable NAME` `` section whose ``deniable-help`` directive generates
its usage and options from the command itself (sphinx-click); every ``deniable …`` line shown
in a code block of the docs or the README uses only options that command has.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import click
from click.testing import CliRunner
import pytest

from deniable.server.cli import cli

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
CLI_PAGE = DOCS / "cli.md"


def command_paths(group: click.Group, prefix: str = "deniable") -> list[str]:
    """Every command of the click group, nested groups included, as ``deniable NAME [SUB]``."""
    paths = []
    for name, command in sorted(group.commands.items()):
        path = f"{prefix} {name}"
        paths.append(path)
        if isinstance(command, click.Group):
            paths += command_paths(command, path)
    return paths


def command_at(path: str) -> click.Command:
    command = cli
    for name in path.split()[1:]:
        command = command.commands[name]
    return command


def sections() -> dict[str, str]:
    """The page's ``## `deniable NAME` `` sections, by command path."""
    text = CLI_PAGE.read_text(encoding="utf-8")
    parts = re.split(r"^## `([^`]+)`\n", text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


def test_every_command_has_a_section():
    missing = [path for path in command_paths(cli) if path not in sections()]
    assert not missing, f"add a '## `COMMAND`' section to docs/cli.md for: {missing}"


def test_every_section_generates_its_commands_help():
    for path, body in sections().items():
        found = re.findall(r"^\.\. deniable-help:: (\S+):(\S+)\n\s+:prog: (.+)$", body, re.M)
        assert len(found) == 1, f"docs/cli.md, {path}: one '.. deniable-help:: MODULE:COMMAND' directive"
        module, name, prog = found[0]
        assert prog == path
        assert getattr(importlib.import_module(module), name) is command_at(path), (
            f"docs/cli.md, {path}: the directive shows another command's --help"
        )


def test_the_offline_commands_are_there():
    assert {"deniable estimate", "deniable simulate", "deniable plan"} <= set(command_paths(cli))


def code_blocks(page: Path) -> list[tuple[str, list[str]]]:
    """The info string and lines of every fenced code block of a markdown page."""
    blocks, info, block = [], "", None
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            if block is None:
                info, block = line[3:].strip(), []
            else:
                blocks.append((info, block))
                block = None
        elif block is not None:
            block.append(line)
    return blocks


def invocations(info: str, block: list[str]) -> list[str]:
    """The ``deniable …`` command lines a block shows, not a program's output.

    Those are the lines of a ``sh`` block, the ``$ `` prompts of a transcript, and a synopsis (a
    plain block of nothing but ``deniable …`` lines, each continued on indented lines).
    """
    lines: list[str] = []
    synopsis = info == "" and all(line.startswith(("deniable ", " ")) for line in block)
    for line in block:
        if line.startswith("$ deniable ") or (info == "sh" or synopsis) and line.startswith("deniable "):
            lines.append(line.removeprefix("$ ").split("  #")[0])
        elif synopsis and lines and line.startswith(" "):
            lines[-1] += " " + line.strip()
    return lines


def shown_command_lines() -> list[tuple[str, str]]:
    """(page, line) for every ``deniable …`` invocation in a code block of the docs and README."""
    return [(page.name, line)
            for page in [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
            for info, block in code_blocks(page)
            for line in invocations(info, block)]


def problems(line: str) -> list[str]:
    """What is wrong with a shown ``deniable NAME …`` line: an unknown command or option."""
    name = line.split()[1]
    if name not in cli.commands:
        return [f"no command {name!r}"]
    command = cli.commands[name]
    for word in line.split()[2:]:  # a group's subcommand (deniable embed build): its own options
        if not isinstance(command, click.Group) or word not in command.commands:
            break
        command, name = command.commands[word], f"{name} {word}"
    known = {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)} | {"--help", "-h"}
    return [f"{option} is not an option of deniable {name}"
            for option in re.findall(r"(?<![\w-])--?[a-zA-Z][\w-]*", line) if option not in known]


def test_every_shown_invocation_uses_options_its_command_has():
    shown = shown_command_lines()
    assert len(shown) > 30  # the reference's synopses and examples, the README's example
    wrong = [f"{page}: {line!r}: {problem}" for page, line in shown for problem in problems(line)]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("line", [
    "deniable estimate x.json r.csv --methd wilson",
    "deniable plot --k 2",
    "deniable serve [--host 127.0.0.1] [--demo [--reset-demo-pasword]]",
])
def test_a_wrong_invocation_is_caught(line):
    assert problems(line)


def example_lines(command: click.Command) -> list[str]:
    """The ``deniable …`` lines of the example that ends the command's docstring."""
    _, _, example = (command.help or "").rpartition("Example:")
    return [line.strip() for line in example.splitlines() if line.strip().startswith("deniable ")]


@pytest.mark.parametrize("path", command_paths(cli))
def test_every_help_ends_with_an_example_shown_one_command_a_line(path):
    command = command_at(path)
    lines = example_lines(command)
    assert lines, f"{path}: end the docstring with 'Example:' and one or more command lines"
    shown = CliRunner().invoke(cli, [*path.split()[1:], "--help"], terminal_width=80)
    assert shown.exit_code == 0, shown.output
    # click rewraps a paragraph unless it starts with \b: the lines must come out as written
    shown_lines = [line.strip() for line in shown.output.splitlines()]
    rewrapped = [line for line in lines if line not in shown_lines]
    assert not rewrapped, f"{path} --help rewraps its example: put a line '\\b' before 'Example:'\n{shown.output}"
    assert not [line for line in lines for problem in problems(line)], f"{path}: the example uses unknown options"
