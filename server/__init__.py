"""The Flask app: the survey page, the JSON API and the researchers' dashboard."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from flask import Flask
from flask_wtf.csrf import CSRFProtect

import client

HERE = Path(__file__).resolve().parent
# An installed wheel carries templates/ inside the package; a source checkout has it at the top.
TEMPLATES = next(p for p in (HERE / "templates", HERE.parent / "templates") if p.is_dir())
STATIC = Path(client.__file__).resolve().parent / "static"

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
    app = Flask(__name__, instance_relative_config=True,
                template_folder=str(TEMPLATES), static_folder=str(STATIC))
    app.config.from_mapping(
        DATABASE=os.path.abspath("deniable.db"),
        MAX_CONTENT_LENGTH=64 * 1024,
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        WTF_CSRF_TIME_LIMIT=None,  # a respondent may take their time; the token is bound to the session
    )
    if test_config is None:
        app.config.from_pyfile("config.py", silent=True)
        app.config.from_prefixed_env("DENIABLE")
    else:
        app.config.update(test_config)
    if not app.config.get("SECRET_KEY"):
        app.config["SECRET_KEY"] = _secret_key(app.config["DATABASE"])

    from . import db, limits, security

    db.init_app(app)
    security.init_app(app)
    csrf.init_app(app)

    # Blueprints: each module exposes `bp` (and `init_app(app)` where it needs wiring).
    from . import api, errors, respond
    app.register_blueprint(respond.bp)
    app.register_blueprint(api.bp)
    errors.init_app(app)
    from . import dashboard; dashboard.init_app(app)  # noqa: E702  login, dashboard, results API
    limits.init_app(app)  # wraps the login and submission views registered above

    return app
