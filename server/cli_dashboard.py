"""``deniable create-researcher``: accounts for the dashboard; the demo researcher for ``serve --demo``."""

from __future__ import annotations

import secrets

import click
import sqlite_utils

from .auth import AccountError, set_researcher
from .db import init_db

DEMO_EMAIL = "demo@deniable.invalid"


def ensure_demo_researcher(db: sqlite_utils.Database) -> tuple[str, str]:
    """Create (or reset) the demo researcher with a fresh random password; return (email, password).

    The password is never stored in clear, so each call sets a new one for the caller to print.
    """
    password = secrets.token_urlsafe(12)
    set_researcher(db, DEMO_EMAIL, password)
    return DEMO_EMAIL, password


@click.command("create-researcher")
@click.argument("email")
@click.option("--db", "db_path", default="deniable.db", show_default=True,
              type=click.Path(dir_okay=False), help="SQLite database file.")
@click.password_option("--password", prompt="Password", hide_input=True, confirmation_prompt=True,
                       help="Asked for twice (hidden) if not given.")
def create_researcher(email: str, db_path: str, password: str) -> None:
    """Create a researcher account for the dashboard (or reset its password).

    Example: deniable create-researcher ada@example.org --db survey.db
    """
    db = init_db(db_path)
    try:
        set_researcher(db, email, password)
    except AccountError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        db.conn.close()
    click.echo(f"researcher {email.strip().lower()} can log in at /auth/login")
