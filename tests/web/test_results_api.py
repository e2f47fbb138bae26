"""``GET /api/v1/surveys/<slug>/estimates``: login, parameters, and the docs/design.md estimates format."""

from __future__ import annotations

import math

import pytest

from deniable import estimators
from deniable.server.store.surveys import get_survey, option_counts
from support.dashboard import make_survey, open_db, sample_columns, store_reports

URL = "/api/v1/surveys/habits/estimates"


@pytest.fixture
def stored(app):
    make_survey(app, status="open")
    store_reports(app, "habits", sample_columns(300, seed=3))
    db = open_db(app)
    yield get_survey(db, "habits"), option_counts(db, get_survey(db, "habits").id)
    db.conn.close()


def test_logged_out_gets_401_json(client, stored):
    response = client.get(URL)
    assert response.status_code == 401 and response.mimetype == "application/json"
    assert response.get_json()["error"] == "login required"


@pytest.mark.parametrize("args", [{}, {"method": "wilson", "confidence": "0.99", "simultaneous": "y"}])
def test_estimates_in_the_design_format(auth_client, stored, args):
    survey, counts = stored
    response = auth_client.get(URL, query_string=args)
    assert response.status_code == 200 and response.mimetype == "application/json"
    data = response.get_json()
    assert data["survey"] == "habits" and data["n_responses"] == 300
    method, confidence = args.get("method", "exact"), float(args.get("confidence", 0.95))
    for question, q in zip(data["questions"], survey.survey.questions, strict=True):
        result = estimators.estimate(counts[q.id], q.epsilon, confidence=confidence, method=method,
                                     simultaneous="simultaneous" in args)
        assert question["id"] == q.id and question["n"] == 300
        assert {"n", "epsilon", "p", "q", "method", "confidence", "options"} <= set(question)
        assert question["method"] == method and question["confidence"] == confidence
        assert question["simultaneous"] is ("simultaneous" in args)
        if q.protected:
            assert question["epsilon"] == pytest.approx(q.mechanism.epsilon)
            assert question["p"] == q.mechanism.p
        else:
            assert question["epsilon"] is None
        for i, option in enumerate(question["options"]):
            assert option["label"] == q.options[i]
            assert option["noisy_count"] == int(counts[q.id][i])
            for key in ("estimate", "consistent", "std_error", "ci_low", "ci_high"):
                assert math.isclose(option[key], float(getattr(result, key)[i]), rel_tol=0, abs_tol=1e-12)


@pytest.mark.parametrize("args, field", [({"method": "bayes"}, "method"), ({"confidence": "0.8"}, "confidence")])
def test_bad_parameters_are_400_json(auth_client, stored, args, field):
    response = auth_client.get(URL, query_string=args)
    assert response.status_code == 400
    assert response.get_json()["error"].startswith(f"{field}:")


def test_unknown_survey_is_404_json(auth_client):
    response = auth_client.get("/api/v1/surveys/nope/estimates")
    assert response.status_code == 404 and "no survey 'nope'" in response.get_json()["error"]


def test_the_api_equals_the_estimates_export(auth_client, stored):
    args = {"method": "clopper-pearson", "confidence": "0.90"}
    assert auth_client.get(URL, query_string=args).get_json() == auth_client.get(
        "/dashboard/habits/export/estimates.json", query_string=args).get_json()
