"""The ``deniable`` command: a thin click shell over the Python API.

Every command's docstring ends with an example, and ``tests/test_readme.py`` fails if a
command is missing from the README's command reference.
"""

from __future__ import annotations

import click


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="deniable")
def cli() -> None:
    """deniable: surveys for sensitive questions under local differential privacy."""


# Commands live in modules with one concern each; register them here.
from . import cli_audit, cli_dashboard, cli_offline, cli_server  # noqa: E402

for _command in (*cli_offline.COMMANDS, *cli_server.COMMANDS, cli_dashboard.create_researcher,
                 cli_audit.audit):
    cli.add_command(_command)
