"""Commands that run and fill the server: ``serve``, ``import`` and ``export``.

A thin click shell over :mod:`server.surveys` and :mod:`server.responses`; every error is one
line (``Error: …``) and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import click

DEFAULT_DB = "deniable.db"

db_option = click.option("--db", "db_path", default=DEFAULT_DB, show_default=True, metavar="FILE",
                         help="The SQLite database file.")


def _fail(message: str):
    raise click.ClickException(message)


def _open_db(db_path: str, *, create: bool):
    from .db import connect, init_db

    if not create and not Path(db_path).is_file():
        _fail(f"{db_path}: no such database file")
    try:
        return init_db(db_path) if create else connect(db_path)
    except (OSError, sqlite3.Error) as exc:
        _fail(f"{db_path}: cannot open the database: {exc}")


def run_gunicorn(options: dict) -> None:
    """Run :func:`server.create_app` under gunicorn with ``options`` (gunicorn settings)."""
    from gunicorn.app.base import BaseApplication

    class Application(BaseApplication):
        def load_config(self):
            for key, value in options.items():
                if key in self.cfg.settings:  # settings newer than the installed gunicorn are skipped
                    self.cfg.set(key, value)

        def load(self):
            from . import create_app

            return create_app()

    Application().run()


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="Port.")
@click.option("--workers", default=2, show_default=True, type=click.IntRange(1, 64),
              help="Number of gunicorn worker processes.")
@click.option("--threads", default=4, show_default=True, type=click.IntRange(1, 64),
              help="Threads per worker (gthread workers, keep-alive); 1 = sync workers.")
@db_option
@click.option("--demo", is_flag=True, help="Create (if absent) and open the demo survey 'demo'.")
def serve(host, port, workers, threads, db_path, demo) -> None:
    """Serve the survey pages, the JSON API and the dashboard with gunicorn.

    The database schema is created or upgraded before the workers start; the app is loaded
    once and forked, so all workers share the same secret key (``FILE.secret``).  No access
    log is written: the server logs no IP address and no user agent.

    Example:

        deniable serve --port 8000 --workers 4 --db deniable.db --demo
    """
    from .cli_dashboard import ensure_demo_researcher
    from .demo import ensure_demo

    db_path = os.path.abspath(db_path)
    db = _open_db(db_path, create=True)
    try:
        if demo:
            stored = ensure_demo(db)
            shown_host = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
            shown_host = f"[{shown_host}]" if ":" in shown_host else shown_host
            note = "" if stored.status == "open" else f" (it is {stored.status})"
            click.echo(f"Demo survey: http://{shown_host}:{port}/s/{stored.slug}{note}")
            email, password = ensure_demo_researcher(db)
            click.echo(f"Dashboard:   http://{shown_host}:{port}/dashboard/  "
                       f"(log in as {email} with password {password})")
    finally:
        db.conn.close()
    os.environ["DENIABLE_DATABASE"] = db_path
    try:  # the configuration is checked here, so a bad setting is one line, not a worker traceback
        from . import create_app

        create_app()
    except ValueError as exc:
        _fail(f"configuration: {exc}")
    bind = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    run_gunicorn({
        "bind": bind,
        "workers": workers,
        "threads": threads,
        "worker_class": "gthread" if threads > 1 else "sync",
        "preload_app": True,
        "accesslog": None,
        "errorlog": "-",
        "loglevel": "info",
        "proc_name": "deniable",
        "control_socket_disable": True,  # gunicorn ≥ 27: no shared socket in the home directory
    })


@click.command("import")
@click.argument("survey_path", metavar="SURVEY.json", type=click.Path(dir_okay=False))
@db_option
@click.option("--open", "open_now", is_flag=True, help="Open the survey for responses right away.")
def import_survey(survey_path, db_path, open_now) -> None:
    """Store a survey definition (as a draft, or open with --open).

    Example:

        deniable import student-life.json --db deniable.db --open
    """
    from .definition import DefinitionError, load_definition
    from .surveys import insert_survey

    try:
        survey = load_definition(survey_path)
    except DefinitionError as exc:
        _fail(str(exc))
    db = _open_db(db_path, create=True)
    try:
        stored = insert_survey(db, survey, status="open" if open_now else "draft")
    except DefinitionError as exc:
        _fail(f"{db_path}: {exc}")
    except sqlite3.Error as exc:
        _fail(f"{db_path}: cannot store the survey: {exc}")
    finally:
        db.conn.close()
    n = len(stored.survey.questions)
    click.echo(f"Imported survey {stored.slug!r} ({n} question{'s' if n != 1 else ''}, "
               f"{stored.status}) into {db_path}; survey page: /s/{stored.slug}")


@click.command("export")
@click.argument("slug")
@db_option
@click.option("-o", "--out", "out_dir", default=".", show_default=True, metavar="DIR",
              type=click.Path(file_okay=False), help="Directory for the CSV and the JSON codebook.")
def export(slug, db_path, out_dir) -> None:
    """Export a survey's reports as CSV (option labels) with its definition as JSON codebook.

    Writes ``DIR/SLUG-responses.csv`` and ``DIR/SLUG.json``, the pair ``deniable estimate``
    reads.

    Example:

        deniable export student-life --db deniable.db -o exports/
    """
    from .responses import export_survey

    db = _open_db(db_path, create=False)
    try:
        csv_path, json_path = export_survey(db, slug, out_dir)
    except LookupError as exc:
        _fail(f"{db_path}: {exc.args[0] if exc.args else exc}")
    except OSError as exc:
        _fail(f"{out_dir}: cannot write the export: {exc.strerror or exc}")
    except sqlite3.Error as exc:
        _fail(f"{db_path}: cannot read the database: {exc}")
    finally:
        db.conn.close()
    click.echo(f"Wrote {csv_path} and {json_path}")


COMMANDS = (serve, import_survey, export)
