"""``deniable serve``: the web app (survey pages, JSON API, dashboard) under gunicorn."""

from __future__ import annotations

import os

import click

from .common import database, db_option, fail


def run_gunicorn(options: dict) -> None:
    """Run :func:`deniable.server.web.app.create_app` under gunicorn with ``options`` (gunicorn settings)."""
    from gunicorn.app.base import BaseApplication

    class Application(BaseApplication):
        def load_config(self):
            for key, value in options.items():
                if key in self.cfg.settings:  # settings newer than the installed gunicorn are skipped
                    self.cfg.set(key, value)

        def load(self):
            from deniable.server.web.app import create_app

            return create_app()

    Application().run()


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="Port.")
@click.option("--workers", default=2, show_default=True, type=click.IntRange(1, 64),
              help="Number of gunicorn worker processes.")
@click.option("--threads", default=4, show_default=True, type=click.IntRange(1, 64),
              help="Threads per worker (gthread workers, keep-alive); 1 = sync workers.")
@db_option()
@click.option("--demo", is_flag=True, help="Create (if absent) and open the demo survey 'demo'.")
def serve(host, port, workers, threads, db_path, demo) -> None:
    """Serve the survey pages, the JSON API and the dashboard with gunicorn.

    The database schema is created or upgraded before the workers start; the app is loaded
    once and forked, so all workers share the same secret key (``FILE.secret``).  No access
    log is written: the server logs no IP address and no user agent.

    Example:

        deniable serve --port 8000 --workers 4 --db deniable.db --demo
    """
    from deniable.server.store.demo import ensure_demo, ensure_demo_researcher

    db_path = os.path.abspath(db_path)
    with database(db_path, create=True) as db:
        if demo:
            stored = ensure_demo(db)
            shown_host = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
            shown_host = f"[{shown_host}]" if ":" in shown_host else shown_host
            note = "" if stored.status == "open" else f" (it is {stored.status})"
            click.echo(f"Demo survey: http://{shown_host}:{port}/s/{stored.slug}{note}")
            email, password = ensure_demo_researcher(db)
            click.echo(f"Dashboard:   http://{shown_host}:{port}/dashboard/  "
                       f"(log in as {email} with password {password})")
    os.environ["DENIABLE_DATABASE"] = db_path
    try:  # the configuration is checked here, so a bad setting is one line, not a worker traceback
        from deniable.server.web.app import create_app

        create_app()
    except ValueError as exc:
        fail(f"configuration: {exc}")
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
