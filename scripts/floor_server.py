"""The floors ``deniable serve`` is measured against: the same gunicorn/gevent stack, next to nothing behind it.

    python scripts/floor_server.py bare   --port 8001 --workers 4
    python scripts/floor_server.py insert --port 8002 --workers 4 --db /tmp/floor.db

Both run gunicorn's gevent worker (``gunicorn.workers.ggevent.GeventPyWSGIWorker``, the class
``deniable serve``'s own worker extends; ``--worker deniable``: that worker itself), ``--workers`` of them, the app loaded before the fork, no
access log, as ``deniable serve`` runs.  Every POST, to any path:

* ``bare``: reads the body, parses the JSON (``json.loads``), answers ``201 {"id": …}``; stores nothing;
* ``insert``: the same, then one row in SQLite per request, ``BEGIN IMMEDIATE``, one ``INSERT``,
  ``COMMIT``: one transaction each, in WAL mode with ``synchronous = NORMAL`` (as deniable's
  connections), one connection per worker, SQLite's own busy timeout (5 s) for the write lock.

A GET answers 200 (the readiness check).  Used by ``scripts/bench_wrk.py`` (``--floors``).
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import sqlite3
import sys
from datetime import date

SCHEMA = "CREATE TABLE IF NOT EXISTS responses (id TEXT PRIMARY KEY, submitted_on TEXT NOT NULL, reports TEXT NOT NULL)"


def read_body(environ) -> bytes:
    length = int(environ.get("CONTENT_LENGTH") or 0)
    return environ["wsgi.input"].read(length) if length else b""


def answer(start_response, status: str, payload: dict) -> list[bytes]:
    body = (json.dumps(payload, separators=(",", ":")) + "\n").encode()
    start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
    return [body]


def parsed(environ, start_response):
    """``(body, None)``: a POST's JSON object; else ``(None, answer)``: the page a GET (readiness) or a bad
    body gets (both floors answer alike up to here)."""
    if environ["REQUEST_METHOD"] != "POST":
        return None, answer(start_response, "200 OK", {"ok": True})
    try:
        body = json.loads(read_body(environ))
    except ValueError:
        return None, answer(start_response, "400 BAD REQUEST", {"error": "not JSON"})
    if not isinstance(body, dict):
        return None, answer(start_response, "400 BAD REQUEST", {"error": "not an object"})
    return body, None


def bare_app(environ, start_response):
    body, answered = parsed(environ, start_response)
    if body is None:
        return answered
    return answer(start_response, "201 CREATED", {"id": secrets.token_urlsafe(12)})


class InsertApp:
    """One row per request, one transaction each, through this worker's own connection."""

    def __init__(self, path: str):
        self.path = path
        self.conn = None
        self.pid = None
        conn = self.connect()
        conn.execute(SCHEMA)
        conn.close()

    def connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=5.0, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        return conn

    def __call__(self, environ, start_response):
        body, answered = parsed(environ, start_response)
        if body is None:
            return answered
        if self.pid != os.getpid():  # a forked worker opens its own connection
            self.conn, self.pid = self.connect(), os.getpid()
        rid = secrets.token_urlsafe(12)
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute("INSERT INTO responses VALUES (?, ?, ?)",
                         [rid, date.today().isoformat(), json.dumps(body.get("reports"), separators=(",", ":"))])
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return answer(start_response, "201 CREATED", {"id": rid})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=("bare", "insert"))
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--connections", type=int, default=1000, help="gunicorn's worker_connections")
    parser.add_argument("--db", help="the SQLite file (insert)")
    parser.add_argument("--worker", choices=("stock", "deniable"), default="stock",
                        help="gunicorn's gevent worker as it comes (default), or deniable serve's own "
                             "(deniable.server.cli.serving.Worker: the whole body read before the app, the "
                             "per-request read deadline; no per-address bound)")
    args = parser.parse_args()
    if args.kind == "insert" and not args.db:
        parser.error("insert needs --db")
    app = bare_app if args.kind == "bare" else InsertApp(args.db)

    from gunicorn.app.base import BaseApplication

    options = {"bind": f"127.0.0.1:{args.port}", "workers": args.workers,
               "worker_class": ("gunicorn.workers.ggevent.GeventPyWSGIWorker" if args.worker == "stock"
                                else "deniable.server.cli.serving.Worker"),
               "worker_connections": args.connections, "preload_app": True, "accesslog": None,
               "errorlog": "-", "loglevel": "warning", "proc_name": f"floor-{args.kind}",
               "control_socket_disable": True}

    class Application(BaseApplication):
        def load_config(self):
            for key, value in options.items():
                if key in self.cfg.settings:
                    self.cfg.set(key, value)

        def load(self):
            return app

    sys.argv = sys.argv[:1]  # gunicorn parses no arguments of ours
    Application().run()


if __name__ == "__main__":
    main()
