"""``deniable create-researcher``: accounts for the dashboard."""

from __future__ import annotations

import click

from .common import database, db_option, fail


@click.command("create-researcher")
@click.argument("email")
@db_option()
@click.option("--admin/--no-admin", default=None,
              help="An admin sees and manages every survey [default: unchanged; new accounts are not admins].")
@click.password_option("--password", prompt="Password", hide_input=True, confirmation_prompt=True,
                       help="Asked for twice (hidden) if not given.")
def create_researcher(email: str, db_path: str, admin: bool | None, password: str) -> None:
    """Create a researcher account for the dashboard (or reset its password).

    The password needs at least 12 characters and must not be easy to guess.  Resetting it
    ends every session of the account.  Surveys belong to the researcher who makes them and
    can be shared; an --admin account sees every survey.

    \b
    Example:
        deniable create-researcher ada@example.org --db survey.db
        deniable create-researcher lead@example.org --admin
    """
    from deniable.server.store.accounts import AccountError, set_researcher

    with database(db_path, create=True) as db:
        try:
            set_researcher(db, email, password, admin=admin)
        except AccountError as exc:
            fail(str(exc))
    click.echo(f"researcher {email.strip().lower()}{' (admin)' if admin else ''} can log in at /auth/login")
