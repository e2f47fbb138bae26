"""Which unexpected exceptions are written at once: a researcher's route's, with its traceback (no
address, the route's rule rather than its path, and the query's, form's, cookies' and path's values
blanked out of the exception's message); a respondent's route's only counted for the summary
(server/web/logs.py, docs/security.md).  Through the one logging
configuration ``deniable serve`` gives gunicorn's error log (:func:`logs.configure`)."""

from __future__ import annotations

import io
import logging
import os
import warnings

import pytest

from deniable.server.web import logs
from support.dashboard import csrf_token, make_survey

ADDRESS = "203.0.113.9"


@pytest.fixture
def log():
    """The error log as ``deniable serve`` configures it (a stream here); the root logger as it was after."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    stream = io.StringIO()
    logs.configure([logging.StreamHandler(stream)])
    logs.TALLY.take()
    try:
        yield stream
    finally:
        logging.captureWarnings(False)
        root.handlers, root.level = handlers, level
        logs.TALLY.take()


@pytest.fixture
def served(app, auth_client):
    """The app as served: an unexpected exception is a 500, not raised into the test."""
    app.testing = False
    make_survey(app, status="open")
    return auth_client


def _broken(message: str):
    def view(*args, **kwargs):
        raise RuntimeError(message)
    return view


def _quoting(*args, **kwargs):
    """A view whose exception's message quotes what the request carried."""
    from flask import request

    carried = [*kwargs.values(), *request.args.values(), *request.form.values(), *request.cookies.values()]
    raise RuntimeError(f"the cause, for the operator; it quotes {carried}")


@pytest.mark.parametrize("endpoint, method, url", [
    ("dashboard.views.create", "GET", "/dashboard/new"),
    ("dashboard.weighting.weighting", "POST", "/dashboard/habits/weighting?q=a-secret-query-value"),
    ("dashboard.api.estimates", "GET", "/api/v1/surveys/habits/estimates"),
    ("auth.login", "POST", "/auth/login"),
    ("join.join", "GET", "/auth/join/the-invitation-token-itself"),
])
def test_a_researchers_route_writes_its_exception_at_once(app, served, log, endpoint, method, url):
    token = csrf_token(served, "/dashboard/")
    app.view_functions[endpoint] = _quoting
    served.set_cookie("extra-cookie", "cookie-value-xyz")
    response = served.open(url, method=method, data={"csrf_token": token, "share_0_0": "0.987654321"},
                           environ_base={"REMOTE_ADDR": ADDRESS})
    assert response.status_code == 500
    text = log.getvalue()
    rule = next(r.rule for r in app.url_map.iter_rules() if r.endpoint == endpoint)
    assert text.startswith(f"[{os.getpid()}] [ERROR] unexpected error in {method} {rule} (answered 500)\n"), text
    assert "Traceback (most recent call last):" in text and "RuntimeError: the cause, for the operator" in text
    assert f'File "{__file__}"' in text and "[request value]" in text  # the frames, whole; the values, blanked
    for secret in (ADDRESS, "cookie-value-xyz", "0.987654321", "a-secret-query-value", "the-invitation-token-itself",
                   token, served.get_cookie("session").value):
        assert secret not in text
    assert logs.TALLY.take() == []  # written, not counted as well


@pytest.mark.parametrize("endpoint, url", [("respond.survey", "/s/habits"), ("public.results", "/r/habits"),
                                           ("embed.module", "/embed/1/deniable-embed.mjs"),
                                           ("api.survey", "/api/v1/surveys/habits")])
def test_a_respondents_route_writes_nothing_and_counts_its_exception(app, served, log, endpoint, url):
    app.view_functions[endpoint] = _broken("counted")
    response = served.get(url, environ_base={"REMOTE_ADDR": ADDRESS})
    assert response.status_code == 500
    assert log.getvalue() == ""
    (kind, n, example), = logs.TALLY.take()
    assert n == 1 and kind.startswith("unexpected errors in GET ") and "RuntimeError: counted" in example


def test_a_warning_during_a_request_is_counted_not_written(app, served, log):
    """numpy's RuntimeWarning went straight to stderr (the log) at the moment of the request."""
    def view(slug):
        warnings.warn("overflow encountered in divide", RuntimeWarning)
        return "shown"

    app.view_functions["dashboard.views.results"] = view
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        assert served.get("/dashboard/habits/results").status_code == 200
    assert log.getvalue() == ""
    assert [(kind, n) for kind, n, _ in logs.TALLY.take()] == [("WARNING messages from py.warnings", 1)]
