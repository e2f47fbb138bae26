"""``deniable backup`` and ``deniable restore`` (:mod:`deniable.server.store.backup`)."""

from __future__ import annotations

import click

from .common import db_option, fail, plural


def _size(n: int) -> str:
    return f"{n / 1e6:,.1f} MB" if n >= 100_000 else f"{n / 1e3:,.1f} kB"


@click.command()
@click.argument("dest", type=click.Path(dir_okay=False))
@db_option()
def backup(dest, db_path) -> None:
    """Copy the database to DEST while the server runs: one consistent snapshot, compacted.

    The copy has no WAL and no free pages, its rows are laid out by their random keys (not in the
    order they were written), it is readable by its owner only, and it leaves out the key file
    FILE.secret.  DEST must not exist.

    \b
    Example:
        deniable backup /var/backups/deniable-2026-11-24.db --db /srv/deniable/deniable.db
    """
    from deniable.server.store.backup import backup as make_backup

    try:  # a BackupError is one line through the deniable group (deniable.errors)
        summary = make_backup(db_path, dest)
    except OSError as exc:
        fail(f"{dest}: cannot write: {exc.strerror or exc}")
    click.echo(f"Backed up {db_path} to {summary.path}: {plural(summary.surveys, 'survey')}, "
               f"{plural(summary.responses, 'response')}, {_size(summary.size)}.")


@click.command()
@click.argument("src", type=click.Path(dir_okay=False))
@db_option()
def restore(src, db_path) -> None:
    """Replace the database with the backup SRC; the server must be stopped.

    Refuses while a server runs on the database.  The database's key file FILE.secret is kept,
    so researchers stay logged in; the schema is upgraded if the backup is older than this version.

    \b
    Example:
        deniable restore /var/backups/deniable-2026-11-24.db --db /srv/deniable/deniable.db
    """
    from deniable.server.store.backup import restore as put_back

    from .common import database

    try:  # a BackupError is one line through the deniable group (deniable.errors)
        summary = put_back(src, db_path)
    except OSError as exc:
        fail(f"{db_path}: cannot write: {exc.strerror or exc}")
    with database(db_path, create=True):  # upgrade the schema, WAL mode, scrubbed
        pass
    click.echo(f"Restored {db_path} from {src}: {plural(summary.surveys, 'survey')}, "
               f"{plural(summary.responses, 'response')}.")


COMMANDS = (backup, restore)
