"""``deniable report``: a survey's methods report as one self-contained HTML file.

A thin click shell over :func:`deniable.server.web.dashboard.report.render_report`, which the
dashboard's ``/dashboard/SLUG/report`` serves too: the same file.
"""

from __future__ import annotations

import click

from .common import database, db_option, fail


@click.command("report")
@click.argument("slug")
@db_option()
@click.option("-o", "--output", metavar="FILE.html", type=click.Path(dir_okay=False),
              help="Write the report here  [default: SLUG-report.html in the current directory].")
def report(slug, db_path, output) -> None:
    """Write a survey's methods report: one HTML file for an ethics application or a paper.

    The survey's title, dates and number of responses; for each question its text, how it is
    protected (the design in words, its randomization matrix, its ε), and its estimates with
    95% exact intervals, as the dashboard's results page computes them; the survey's total ε;
    what the server stores and what it does not; and a paragraph for a paper's methods
    section, with its references.  The file is self-contained (inline stylesheet and SVG
    charts, no request leaves it) and prints one question per page at most.  Prints the path
    written.

    \b
    Example:
        deniable report student-life --db deniable.db
        deniable report student-life --db deniable.db -o methods/student-life.html
    """
    from deniable.server.store.surveys import get_survey
    from deniable.server.web.dashboard.report import render_report

    with database(db_path, readonly=True) as db:
        stored = get_survey(db, slug)
        if stored is None:
            fail(f"{db_path}: no survey {slug!r} in the database")
        html, _policy = render_report(db, stored)
    path = output or f"{slug}-report.html"
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(html)
    except OSError as exc:
        fail(f"{path}: cannot write the report: {exc.strerror or exc}")
    click.echo(path)


COMMANDS = (report,)
