"""``deniable check``: the integrity of deniable's own structures (:mod:`deniable.server.store.integrity`)."""

from __future__ import annotations

import click

from .common import database, db_option, fail, plural
from .progress import progress as progress_bar


@click.command("check")
@click.argument("slugs", nargs=-1, metavar="[SLUG]...")
@db_option()
@click.option("--repair", is_flag=True,
              help="Upgrade the file if it was written by an earlier deniable, write every aggregate that "
                   "disagrees again from the stored responses, then check again.")
def check(slugs, db_path, repair) -> None:
    """Check that every survey's aggregates agree with its stored responses, as PRAGMA integrity_check
    does for SQLite's own structures.

    The stored responses are the record; the per-option counts, the other types' cell counts, the
    answer patterns (per day), the raking cells and the slots' sizes are derived from them, and
    every view and export reads those.  Each is computed again from the responses and compared,
    and the release ledger is checked against the budget.  Without --repair the file is opened
    read-only and nothing changes (no upgrade runs either).  Exit status 0 when everything
    agrees; otherwise 1, with one line per disagreement naming the survey, the structure and the
    gap (``demo: answer patterns: 50, responses 400``).  A public release already published from
    a short aggregate cannot be undone: its ε is spent.

    \b
    Example:
        deniable check --db deniable.db
        deniable check demo --db deniable.db --repair
    """
    from deniable.server.store import integrity

    upgraded = False
    if repair and _before_slots(db_path):  # the upgrade (m13 … m19) rebuilds every survey's aggregates
        _check(db_path, slugs, readonly=False)
        upgraded = True
    gaps, surveys, responses = _check(db_path, slugs, readonly=True)
    for gap in gaps:
        click.echo(str(gap))
    if upgraded:
        click.echo(f"{db_path}: upgraded; every aggregate written again from the stored responses")
    if repair and gaps:
        with database(db_path, create=True) as db:  # upgraded on opening; the surveys found wrong rebuilt once
            integrity.rebuild_surveys(db, sorted({gap.slug for gap in gaps}))
        for slug in sorted({gap.slug for gap in gaps}):
            click.echo(f"{slug}: rebuilt every aggregate from the stored responses")
        gaps, surveys, responses = _check(db_path, slugs, readonly=True)
        for gap in gaps:
            click.echo(f"still: {gap}")
    what = f"{plural(surveys, 'survey')}, {plural(responses, 'response')}"
    if gaps:
        click.echo(f"check: {plural(len(gaps), 'disagreement')} in {what}", err=True)
        raise SystemExit(1)
    click.echo(f"check: {what}: every aggregate agrees with the stored responses")


def _check(db_path, slugs, *, readonly: bool):
    """``(gaps, surveys, responses)`` of the file, opened read-only (no upgrade), or for writing (upgraded)."""
    from deniable.server.store import integrity

    with database(db_path, create=not readonly, readonly=readonly) as db:
        if readonly and _before_slots(db):
            fail(f"{db_path}: written by a deniable older than its response slots (m13); "
                 "upgrade it with deniable check --repair")
        try:
            surveys = integrity.surveys_of(db, slugs or None)
        except LookupError as exc:
            fail(str(exc.args[0]))
        responses = sum(integrity.respondents(db, survey) for survey in surveys)
        gaps = []
        if readonly:  # every response read: a bar on a terminal
            with progress_bar(responses, "checking", "responses") as bar:
                gaps = integrity.check(db, slugs or None, progress=bar.update)
    return gaps, len(surveys), responses


def _before_slots(where) -> bool:
    """Whether the database (a path or a handle) was written by a deniable before its response slots (m13)."""
    if isinstance(where, str):
        with database(where, readonly=True) as db:
            return _before_slots(db)
    return not where.execute("SELECT 1 FROM sqlite_master WHERE name = 'response_slots'").fetchone()
