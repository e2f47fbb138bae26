"""The ``deniable`` command: a thin click shell over the Python API.

One module per group of commands over :mod:`.common` (the ``--db`` option, opening the
database, one-line errors): :mod:`.serve`, :mod:`.surveys` (import, export), :mod:`.accounts`,
:mod:`.analysis` (estimate, simulate, plan), :mod:`.regress`, :mod:`.audit` and :mod:`.backup`
(backup, restore).  Every command's docstring ends
with an example, and ``tests/cli/test_readme.py`` fails if a command is missing from the
README's command reference.
"""

from __future__ import annotations

import click

from . import accounts, analysis, audit, backup, regress, serve, surveys


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="deniable")
def cli() -> None:
    """deniable: surveys for sensitive questions under local differential privacy."""


for _command in (serve.serve, *surveys.COMMANDS, accounts.create_researcher, *analysis.COMMANDS, *regress.COMMANDS, audit.audit,
                 *backup.COMMANDS):
    cli.add_command(_command)
