"""A host page on another origin than deniable's: the embed tests' SurveyJS pages are served from here."""

from __future__ import annotations

import contextlib
import threading

from werkzeug.serving import make_server


@contextlib.contextmanager
def serving(files: dict):
    """Serve ``{path: (content type, bytes)}`` on a free 127.0.0.1 port (another origin); yields its URL."""
    def wsgi(environ, start_response):
        kind, body = files.get(environ["PATH_INFO"], ("text/plain", None))
        start_response("200 OK" if body is not None else "404 Not Found", [("Content-Type", kind)])
        return [body or b""]

    server = make_server("127.0.0.1", 0, wsgi, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
