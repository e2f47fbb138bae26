"""The researchers' side of the web app: login, survey design and lifecycle, results, exports.

Each module that has routes has its own blueprint (:mod:`.views`, :mod:`.lifecycle`,
:mod:`.planner`, :mod:`.analysis`, :mod:`.publish`, the results API :mod:`.api`); the app factory
registers them all under the one parent :func:`blueprint`, whose hook is the only login check:
a route added to any of them needs a logged-in researcher without a line of its own
(``tests/web/test_wiring.py`` requests every rule of the app logged out).  Endpoints are named
by module: ``dashboard.views.edit``, ``dashboard.publish.release``, ``dashboard.api.estimates``.
"""

from __future__ import annotations

from flask import Blueprint, request

from . import formatting
from .auth import require_login

STATIC_ENDPOINT = "dashboard.static"  # the stylesheet, which the login page uses too
API_BLUEPRINT = "dashboard.api"  # its refusal is the API's JSON 401, not the login page


def blueprint() -> Blueprint:
    """A new parent of the dashboard's blueprints (one per app: a registered blueprint takes no children).

    It serves ``/dashboard/static/`` and makes the dashboard's template filters; its hook
    refuses every anonymous request to it or to any blueprint registered under it.
    """
    parent = Blueprint("dashboard", __name__, static_folder="static", static_url_path="/dashboard/static")
    formatting.register(parent)
    parent.before_request(_login)
    return parent


def _login():
    if request.endpoint == STATIC_ENDPOINT:
        return None
    return require_login(api=request.blueprint == API_BLUEPRINT)
