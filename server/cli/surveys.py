"""``deniable import``, ``export`` and ``invite``: survey definitions into the database, responses
out of it, invitation links for it."""

from __future__ import annotations

import click

from .common import database, db_option, fail, import_sqlite_utils, load_survey, no_pandas


@click.command("import")
@click.argument("survey_path", metavar="SURVEY.json", type=click.Path(dir_okay=False))
@db_option()
@click.option("--open", "open_now", is_flag=True, help="Open the survey for responses right away.")
@click.option("--owner", metavar="EMAIL",
              help="The researcher it belongs to [default: none, so only admins see it in the dashboard].")
def import_survey(survey_path, db_path, open_now, owner) -> None:
    """Store a survey definition (as a draft, or open with --open).

    \b
    Example:
        deniable import student-life.json --db deniable.db --open --owner ada@example.org
    """
    from deniable.server.store.accounts import find_researcher
    from deniable.server.store.surveys import insert_survey
    from deniable.server.survey.definition import DefinitionError

    survey = load_survey(survey_path)
    with database(db_path, create=True) as db:
        owner_id = None
        if owner is not None:
            account = find_researcher(db, owner)
            if account is None:
                fail(f"--owner: no researcher {owner!r} in {db_path} (create one with `deniable create-researcher`)")
            owner_id = account["id"]
        try:
            stored = insert_survey(db, survey, status="open" if open_now else "draft", owner_id=owner_id)
        except DefinitionError as exc:
            fail(f"{db_path}: {exc}")
    n = len(stored.survey.questions)
    whose = f"owned by {owner.strip().lower()}" if owner else "no owner: admins only, until one shares it"
    click.echo(f"Imported survey {stored.slug!r} ({n} question{'s' if n != 1 else ''}, "
               f"{stored.status}, {whose}) into {db_path}; survey page: /s/{stored.slug}")


@click.command("export")
@click.argument("slug")
@db_option()
@click.option("-o", "--out", "out_dir", default=".", show_default=True, metavar="DIR",
              type=click.Path(file_okay=False), help="Directory for the exported files.")
@click.option("--format", "fmt", type=click.Choice(["csv", "parquet"]), default="csv", show_default=True,
              help="The responses file's format: CSV, or Parquet for pandas, R's arrow, DuckDB or Spark.")
@click.option("--spss", is_flag=True, help="Also write SLUG-responses.sav (SPSS, with value labels).")
@click.option("--stata", is_flag=True, help="Also write SLUG-responses.dta (Stata, with value labels).")
def export(slug, db_path, out_dir, fmt, spss, stata) -> None:
    """Export a survey's reports (option labels) with its JSON codebook.

    Writes ``DIR/SLUG-responses.csv`` (or ``.parquet``) and ``DIR/SLUG-codebook.json``, the pair
    ``deniable estimate`` reads: the codebook states each question's mechanism (k, threshold,
    declared and realized ε) and a design fingerprint that the CSV's first line repeats.
    --spss and --stata add the same responses as .sav / .dta files, each question's variables as
    its type gives them: option labels as value labels, numbers as numbers, one 0/1 variable per
    option of a check-all question, arm and count of a list experiment.

    \b
    Example:
        deniable export student-life --db deniable.db -o exports/ --spss --stata
        deniable export student-life --format parquet -o exports/
    """
    from contextlib import nullcontext

    import_sqlite_utils()  # before the store's modules import it: without pandas
    from deniable.server.store.exports import write_export

    formats = (fmt, *(("sav",) if spss else ()), *(("dta",) if stata else ()))
    with no_pandas() if not (spss or stata) else nullcontext(), database(db_path, readonly=True) as db:
        try:
            paths = write_export(db, slug, out_dir, formats)
        except LookupError as exc:
            fail(f"{db_path}: {exc.args[0] if exc.args else exc}")
        except OSError as exc:
            fail(f"{out_dir}: cannot write the export: {exc.strerror or exc}")
    click.echo(f"Wrote {', '.join(str(p) for p in paths[:-1])} and {paths[-1]}")


@click.command("invite")
@click.argument("slug")
@click.option("--count", "n", type=click.IntRange(1, 100_000), required=True, help="How many links.")
@db_option()
@click.option("-o", "--output", metavar="FILE.csv", type=click.Path(dir_okay=False),
              help="Write the CSV here (created readable by you only) [default: standard output].")
@click.option("--base-url", envvar="DENIABLE_BASE_URL", default="http://127.0.0.1:8000", show_default=True,
              metavar="URL", help="How the links begin: the server's public address (or DENIABLE_BASE_URL).")
@click.option("--only-invited/--keep-mode", default=True, show_default=True,
              help="Also switch the survey to invitation-only.")
def invite(slug, n, db_path, output, base_url, only_invited) -> None:
    """Make N single-use invitation links for survey SLUG: a CSV of token,url.

    The same tokens as the dashboard's: 144 random bits each, of which the database keeps only a
    hash; each link works once.  Hand each person their own link.

    \b
    Example:
        deniable invite student-life --count 200 --db deniable.db -o links.csv --base-url https://survey.example.org
    """
    import os

    from deniable.server.store import invitations
    from deniable.server.store.surveys import get_survey

    with database(db_path, create=True) as db:
        stored = get_survey(db, slug)
        if stored is None:
            fail(f"{db_path}: no survey {slug!r}")
        if stored.status == "closed":
            fail(f"{db_path}: survey {slug!r} is closed: it takes no more responses")
        tokens = invitations.generate(db, stored.id, n)
        if only_invited:
            invitations.set_invitation_only(db, stored.id, True)
    body = invitations.links_csv(tokens, f"{base_url.rstrip('/')}/s/{slug}")
    if output is None:
        click.echo(body, nl=False)
    else:
        try:
            fd = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(body)
        except OSError as exc:
            fail(f"{output}: cannot write: {exc.strerror or exc}")
        click.echo(f"Wrote {n:,} invitation link{'s' if n != 1 else ''} for {slug!r} to {output}"
                   f"{' (the survey now takes invited responses only)' if only_invited else ''}", err=True)


COMMANDS = (import_survey, export, invite)
