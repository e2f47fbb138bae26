"""``deniable backup`` and ``deniable restore`` (:mod:`deniable.server.store.backup`).

On a terminal, each shows a bar of the file it writes as it grows (the backup's ``DEST.partial``,
the restore's ``FILE.restoring``, the names :mod:`deniable.server.store.backup` writes to before
renaming) towards the size of the file it comes from: a compacted backup may end smaller, and
the bar then jumps to its end.
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from .common import db_option, fail, plural
from .progress import watching


def _size_of(path) -> int:
    try:
        return os.path.getsize(path)
    except OSError:  # the command says what is wrong with it
        return 0


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

    partial = Path(dest).with_name(Path(dest).name + ".partial")
    try:  # a BackupError is one line through the deniable group (deniable.errors)
        with watching(partial, _size_of(db_path) + _size_of(f"{db_path}-wal"), "backing up"):
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

    copy = Path(db_path).with_name(Path(db_path).name + ".restoring")
    try:  # a BackupError is one line through the deniable group (deniable.errors)
        with watching(copy, _size_of(src), "restoring"):
            summary = put_back(src, db_path)
    except OSError as exc:
        fail(f"{db_path}: cannot write: {exc.strerror or exc}")
    with database(db_path, create=True):  # upgrade the schema, WAL mode, scrubbed
        pass
    click.echo(f"Restored {db_path} from {src}: {plural(summary.surveys, 'survey')}, "
               f"{plural(summary.responses, 'response')}.")


COMMANDS = (backup, restore)
