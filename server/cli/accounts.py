"""``deniable create-researcher`` and ``deniable end-sessions``: accounts for the dashboard."""

from __future__ import annotations

from pathlib import Path

import click

from .common import database, db_option, fail, plural


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
    from deniable.server.store.accounts import set_researcher

    with database(db_path, create=True) as db:
        set_researcher(db, email, password, admin=admin)  # an AccountError: one Error line (the deniable group's)
    click.echo(f"researcher {email.strip().lower()}{' (admin)' if admin else ''} can log in at /auth/login")


@click.command("end-sessions")
@click.option("--email", default=None, metavar="EMAIL",
              help="End this account's sessions only [default: every account's].")
@db_option()
def end_sessions(email: str | None, db_path: str) -> None:
    """End every dashboard session (of one account with --email) on every device.

    Whoever was logged in is sent to the login page at their next click; passwords and
    remembered devices stay as they are.  Use it when a session cookie may have left a browser (a
    lost laptop).  Works while the server runs.

    \b
    Example:
        deniable end-sessions --db survey.db
        deniable end-sessions --email ada@example.org --db survey.db
    """
    from deniable.server.store import accounts

    if not Path(db_path).is_file():
        fail(f"{db_path}: no such database file")
    with database(db_path, create=True) as db:  # create: brings an older file's schema up to date
        researcher_id = None
        if email is not None:
            account = accounts.find_researcher(db, email)
            if account is None:
                fail(f"email: no researcher {email.strip().lower()!r} in {db_path}")
            researcher_id = account["id"]
        ended = accounts.end_sessions(db, researcher_id)
    whose = f"of {email.strip().lower()}" if email is not None else "of every account"
    click.echo(f"ended {plural(ended, 'session')} {whose}")
