"""``deniable import`` and ``export``: survey definitions into the database, responses out of it."""

from __future__ import annotations

import click

from .common import database, db_option, fail


@click.command("import")
@click.argument("survey_path", metavar="SURVEY.json", type=click.Path(dir_okay=False))
@db_option()
@click.option("--open", "open_now", is_flag=True, help="Open the survey for responses right away.")
def import_survey(survey_path, db_path, open_now) -> None:
    """Store a survey definition (as a draft, or open with --open).

    Example:

        deniable import student-life.json --db deniable.db --open
    """
    from deniable.server.store.surveys import insert_survey
    from deniable.server.survey.definition import DefinitionError, load_definition

    try:
        survey = load_definition(survey_path)
    except DefinitionError as exc:
        fail(str(exc))
    with database(db_path, create=True) as db:
        try:
            stored = insert_survey(db, survey, status="open" if open_now else "draft")
        except DefinitionError as exc:
            fail(f"{db_path}: {exc}")
    n = len(stored.survey.questions)
    click.echo(f"Imported survey {stored.slug!r} ({n} question{'s' if n != 1 else ''}, "
               f"{stored.status}) into {db_path}; survey page: /s/{stored.slug}")


@click.command("export")
@click.argument("slug")
@db_option()
@click.option("-o", "--out", "out_dir", default=".", show_default=True, metavar="DIR",
              type=click.Path(file_okay=False), help="Directory for the CSV and the JSON codebook.")
def export(slug, db_path, out_dir) -> None:
    """Export a survey's reports as CSV (option labels) with its definition as JSON codebook.

    Writes ``DIR/SLUG-responses.csv`` and ``DIR/SLUG.json``, the pair ``deniable estimate``
    reads.

    Example:

        deniable export student-life --db deniable.db -o exports/
    """
    from deniable.server.store.responses import export_survey

    with database(db_path, readonly=True) as db:
        try:
            csv_path, json_path = export_survey(db, slug, out_dir)
        except LookupError as exc:
            fail(f"{db_path}: {exc.args[0] if exc.args else exc}")
        except OSError as exc:
            fail(f"{out_dir}: cannot write the export: {exc.strerror or exc}")
    click.echo(f"Wrote {csv_path} and {json_path}")


COMMANDS = (import_survey, export)
