"""The ``deniable`` command: a thin click shell over the Python API.

One module per group of commands over :mod:`.common` (the ``--db`` option, opening the
database, one-line errors): :mod:`.serve`, :mod:`.surveys` (import, export), :mod:`.accounts`,
:mod:`.estimate`, :mod:`.analysis` (simulate, plan), :mod:`.regress`, :mod:`.report`, :mod:`.audit` and :mod:`.backup`
(backup, restore).  Every command's docstring ends
with an example, and ``tests/docs/test_cli_reference.py`` fails if a command is missing from the
command reference (docs/cli.md).
"""

from __future__ import annotations

import click

from . import accounts, analysis, audit, backup, check, embed, regress, report, serve, surveys


class Group(click.Group):
    """The ``deniable`` group: every error the project raises on purpose (:class:`deniable.errors.DeniableError`)
    that a command did not turn into a line itself ends the command with one ``Error: …`` line and
    exit status 1 — the one place the command line maps the error hierarchy."""

    def invoke(self, ctx):
        from deniable.errors import DeniableError

        try:
            return super().invoke(ctx)
        except DeniableError as exc:
            raise click.ClickException(str(exc)) from None


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="deniable")
def cli() -> None:
    """deniable: surveys for sensitive questions under local differential privacy."""


for _command in (serve.serve, *surveys.COMMANDS, accounts.create_researcher, *analysis.COMMANDS, *regress.COMMANDS, audit.audit,
                 *backup.COMMANDS, check.check, accounts.end_sessions, *embed.COMMANDS, *report.COMMANDS):
    cli.add_command(_command)
