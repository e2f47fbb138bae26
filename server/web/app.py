"""The Flask app factory: configuration, extensions, and every blueprint, registered here.

Configuration is layered: defaults → the instance ``config.py`` and ``DENIABLE_*`` environment
variables → ``test_config``.  Nothing runs at import time.  The extensions are made in
:mod:`.extensions`, the paths of the served files are :mod:`.paths`: no module imports this one.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from flask import Flask, redirect, url_for
from werkzeug.routing import Rule

from .extensions import csrf
from .paths import STATIC, TEMPLATES
from .security import DEFAULT_TRUSTED_HOSTS


class LazyRule(Rule):
    """A URL rule whose two URL builders are compiled the first time ``url_for`` needs them.

    werkzeug generates and compiles the Python code of both builders of every rule as the rule is
    added (0.3 ms a rule: two thirds of ``create_app`` once the database exists); a worker builds
    URLs for some of its rules, and the tests make an app per test.  Matching is unchanged.  This
    reaches into werkzeug's ``Rule._compile_builder``: if a werkzeug release changes it, every page
    that builds a URL fails its tests at once, and deleting this class restores werkzeug's way.
    """

    def _compile_builder(self, append_unknown: bool = True):
        compile_now = super()._compile_builder

        def build(rule, *args, **kwargs):
            compiled = compile_now(append_unknown).__get__(rule, None)
            setattr(rule, "_build_unknown" if append_unknown else "_build", compiled)  # compiled once
            return compiled(*args, **kwargs)
        return build


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
    app.url_rule_class = LazyRule  # every rule but /static's, which Flask adds as it starts
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

    from . import connections, dashboard, embed, errors, i18n, public, ratelimit, security
    from .dashboard import analysis, auth, chart_files, colleagues, join, lifecycle, planner, publish, views, weighting
    from .dashboard import embedding
    from .dashboard import api as results_api
    from .respondent import api, pages, submit_route

    connections.init_app(app)
    # POST /api/v1/surveys/<slug>/responses is answered here, in front of Flask (faster); its rule, api.submit,
    # is listed with the API's below, and its view never runs.  Inside security's ProxyFix, which sees the
    # request first.
    submit_route.install(app)
    security.init_app(app)
    csrf.init_app(app)
    i18n.init_app(app)

    # The respondents' side and the public results page: no login.
    app.register_blueprint(pages.bp)  # /s/<slug>, /favicon.ico
    app.register_blueprint(api.bp)  # /api/v1/surveys/<slug>, and POST …/responses (answered by submit_route)
    app.register_blueprint(public.bp)  # /r/<slug>
    app.register_blueprint(auth.bp)  # /auth/login, /auth/logout
    app.register_blueprint(join.bp)  # /auth/join/<token>: an invitation link (the link is the credential)
    app.register_blueprint(embed.bp)  # /embed/<version>/deniable-embed.mjs, .js: for other origins
    # The researchers' side: every blueprint under the one parent whose hook requires a login.
    researchers = dashboard.blueprint()  # /dashboard/static/…, and the login hook
    researchers.register_blueprint(views.bp)  # /dashboard/: the surveys, design, results, exports
    researchers.register_blueprint(lifecycle.bp)  # /dashboard/<slug>/confirm, status, …, preview
    researchers.register_blueprint(planner.bp)  # /dashboard/plan.json, /dashboard/types.css
    researchers.register_blueprint(analysis.bp)  # /dashboard/<slug>/regression, monitoring
    researchers.register_blueprint(publish.bp)  # /dashboard/<slug>/publish…
    researchers.register_blueprint(weighting.bp)  # /dashboard/<slug>/weighting
    researchers.register_blueprint(results_api.bp)  # /api/v1/surveys/<slug>/estimates
    researchers.register_blueprint(chart_files.bp)  # /dashboard/<slug>/…/chart….svg
    researchers.register_blueprint(colleagues.bp)  # /dashboard/colleagues/: admins only
    researchers.register_blueprint(embedding.bp)  # /dashboard/<slug>/embed: use in another survey tool
    app.register_blueprint(researchers)
    # The address alone is the researchers' way in (a respondent always has a survey's link).
    app.add_url_rule("/", "home", lambda: redirect(url_for("dashboard.views.index")))

    errors.init_app(app)
    ratelimit.init_app(app)
    return app
