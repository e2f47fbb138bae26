"""``deniable create-researcher``: accounts for the dashboard."""

from __future__ import annotations

import click

from .common import database, db_option, fail


@click.command("create-researcher")
@click.argument("email")
@db_option()
@click.password_option("--password", prompt="Password", hide_input=True, confirmation_prompt=True,
                       help="Asked for twice (hidden) if not given.")
def create_researcher(email: str, db_path: str, password: str) -> None:
    """Create a researcher account for the dashboard (or reset its password).

    Example: deniable create-researcher ada@example.org --db survey.db
    """
    from deniable.server.store.accounts import AccountError, set_researcher

    with database(db_path, create=True) as db:
        try:
            set_researcher(db, email, password)
        except AccountError as exc:
            fail(str(exc))
    click.echo(f"researcher {email.strip().lower()} can log in at /auth/login")
