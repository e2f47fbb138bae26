"""The README documents every command: a test fails if one is missing from its command reference."""

from __future__ import annotations

import re
from pathlib import Path

import click

from deniable.server.cli import cli

README = Path(__file__).resolve().parents[2] / "README.md"


def command_paths(group: click.Group, prefix: str = "deniable") -> list[str]:
    """Every command of the click group, nested groups included, as ``deniable NAME [SUB]``."""
    paths = []
    for name, command in sorted(group.commands.items()):
        path = f"{prefix} {name}"
        paths.append(path)
        if isinstance(command, click.Group):
            paths += command_paths(command, path)
    return paths


def reference_section() -> str:
    text = README.read_text(encoding="utf-8")
    match = re.search(r"^## Command reference\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, "README.md needs a '## Command reference' section"
    return match.group(1)


def test_every_command_has_a_subsection():
    section = reference_section()
    headings = set(re.findall(r"^### `([^`]+)`", section, re.M))
    missing = [path for path in command_paths(cli) if path not in headings]
    assert not missing, f"add a '### `COMMAND`' subsection to README.md's command reference for: {missing}"


def test_the_offline_commands_are_there():
    assert {"deniable estimate", "deniable simulate", "deniable plan"} <= set(command_paths(cli))
