"""The Flask app factory: configuration, extensions, and every blueprint, registered here.

Configuration is layered: defaults → the instance ``config.py`` and ``DENIABLE_*`` environment
variables → ``test_config``.  Nothing runs at import time.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from flask import Flask
from flask_wtf.csrf import CSRFProtect

import deniable.client
import deniable.server.templates

from .security import DEFAULT_TRUSTED_HOSTS

STATIC = Path(deniable.client.__file__).resolve().parent / "static"
TEMPLATES = Path(deniable.server.templates.__file__).resolve().parent

csrf = CSRFProtect()


def _secret_key(database: str) -> str:
    """Read (or create, readable by the owner only) the key file beside the database.

    Every gunicorn worker reads the same file, so sessions and CSRF tokens work across workers.
    """
    path = Path(f"{database}.secret")
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_hex(32))
    return path.read_text().strip()


def create_app(test_config: dict | None = None) -> Flask:
    """Create the app: defaults → instance ``config.py`` and ``DENIABLE_*`` variables → ``test_config``."""
    app = Flask("deniable.server", instance_relative_config=True,
                template_folder=str(TEMPLATES), static_folder=str(STATIC))
    app.config.from_mapping(
        DATABASE=os.path.abspath("deniable.db"),
        MAX_CONTENT_LENGTH=64 * 1024,
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        WTF_CSRF_TIME_LIMIT=None,  # a respondent may take their time; the token is bound to the session
        TRUSTED_HOSTS=list(DEFAULT_TRUSTED_HOSTS),
        BASE_URL=None,  # e.g. "https://survey.example.org": how invitation links begin
    )
    if test_config is None:
        app.config.from_pyfile("config.py", silent=True)
        app.config.from_prefixed_env("DENIABLE")
    else:
        app.config.update(test_config)
    if not app.config.get("SECRET_KEY"):
        app.config["SECRET_KEY"] = _secret_key(app.config["DATABASE"])

    from . import connections, errors, i18n, public, ratelimit, security
    from .dashboard import analysis, auth, lifecycle, planner, publish, views  # noqa: F401 (lifecycle, planner: their routes)
    from .dashboard import api as results_api
    from .respondent import api, pages, submit_route

    connections.init_app(app)
    submit_route.install(app)  # inside security's ProxyFix, which must see the request first
    security.init_app(app)
    csrf.init_app(app)
    i18n.init_app(app)
    for blueprint in (pages.bp, api.bp, auth.bp, views.bp, results_api.bp, analysis.bp, publish.bp, public.bp):
        app.register_blueprint(blueprint)
    errors.init_app(app)
    ratelimit.init_app(app)
    return app
