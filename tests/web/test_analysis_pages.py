"""The regression and monitoring pages, and ``monitoring=1`` on the results page and the results API."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from click.testing import CliRunner

from deniable import estimators
from deniable.server.cli import cli
from deniable.server.store.responses import insert_many
from deniable.server.store.surveys import get_survey
from deniable.server.web.dashboard.formatting import signed
from support.dashboard import ensure_researcher, login, make_survey, open_db, sample_columns

DAYS = ("2026-03-01", "2026-03-02", "2026-03-04")


@pytest.fixture
def habits(app):
    """The habits survey, open, with reports on three days (200, 300 and 500 of them)."""
    make_survey(app, status="open", target_n=2000)
    db = open_db(app)
    try:
        stored = get_survey(db, "habits")
        for seed, (day, n) in enumerate(zip(DAYS, (200, 300, 500))):
            insert_many(db, stored, sample_columns(n, seed=seed), submitted_on=day)
        return stored
    finally:
        db.conn.close()


def cells(html: str, css_class: str) -> list[str]:
    return re.findall(rf'<td class="{css_class}">([^<]*)</td>', html)


def test_the_regression_page_shows_what_deniable_regress_computes_from_the_export(auth_client, habits, tmp_path):
    page = auth_client.get("/dashboard/habits/regression?formula=drugs+~+age")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    for name, url in (("responses.csv", "/dashboard/habits/export/responses.csv"),
                      ("codebook.json", "/dashboard/habits/export/codebook.json")):
        (tmp_path / name).write_bytes(auth_client.get(url).data)
    out = CliRunner().invoke(cli, ["regress", str(tmp_path / "codebook.json"), str(tmp_path / "responses.csv"),
                                   "drugs ~ age", "--format", "json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    # the same numbers, negative ones with the minus sign (formatting.signed)
    assert cells(html, "estimate") == [signed(f"{c['estimate']:,.4f}") for c in data["coefficients"]]
    assert [signed(f"{c['profile_low']:,.4f}") for c in data["coefficients"]][0] in html
    assert "Likelihood-ratio test" in html and f"{data['lr_test']['statistic']:.3f}" in html
    assert '<svg xmlns="http://www.w3.org/2000/svg" class="estimate-bars"' in html  # the effects chart
    assert "n = <span class=\"n\">1,000</span>" in html and "ε = 1.0000" in html


def test_the_default_model_is_the_first_protected_question_on_the_direct_ones(auth_client, habits):
    html = auth_client.get("/dashboard/habits/regression").get_data(as_text=True)
    assert 'value="drugs ~ age"' in html and 'class="coefficients"' in html


@pytest.mark.parametrize("formula,status,message", [
    ("drugs ~ cheat", 400, "covariate &#39;cheat&#39; is protected"),
    ("drugs ~ agee", 400, "unknown question &#39;agee&#39;"),
    ("nonsense", 400, "one &#39;~&#39;"),
])
def test_a_bad_formula_is_a_400_that_says_why(auth_client, habits, formula, status, message):
    response = auth_client.get("/dashboard/habits/regression", query_string={"formula": formula})
    assert response.status_code == status
    assert message in response.get_data(as_text=True)


def test_a_model_the_data_cannot_support_is_explained_on_the_page(app, auth_client):
    make_survey(app, status="open")
    db = open_db(app)
    try:  # every "Yes" report in the group 30+ is gone: its share is below q, so no finite maximum
        columns = sample_columns(300)
        columns["drugs"][columns["age"] == 1] = 1
        insert_many(db, get_survey(db, "habits"), columns)
    finally:
        db.conn.close()
    response = auth_client.get("/dashboard/habits/regression?formula=drugs+~+age")
    assert response.status_code == 200
    assert re.search(r'class="errors" role="alert">separation: .* where age = 30\+', response.get_data(as_text=True))


def test_the_monitoring_page_shows_the_daily_path_and_why_the_band_is_wider(auth_client, habits, app):
    html = auth_client.get("/dashboard/habits/monitoring?question=cheat").get_data(as_text=True)
    assert "why-wider" in html and "that is why the band is wider" in html
    assert html.count('class="sequence-band"') == 3  # one chart per option of cheat
    # independent: the daily counts straight from the rows, then the estimator
    db = open_db(app)
    try:
        rows = db.execute("SELECT submitted_on, json_extract(reports, '$.cheat') FROM responses").fetchall()
    finally:
        db.conn.close()
    table = np.zeros((3, 3), dtype=np.int64)
    for day, option in rows:
        table[DAYS.index(day), option] += 1
    path = estimators.monitor_path(table, 2.0, labels=DAYS, tuned_for=2000)
    # option "Never", each day: the interval exactly in its data attributes, in % with one decimal as shown
    shown = re.findall(r'<td class="sequence-interval" data-low="([^"]*)" data-high="([^"]*)">([^<]*)</td>', html)[:3]
    assert [(float(low), float(high)) for low, high, _ in shown] == [(path.ci_low[t, 0], path.ci_high[t, 0])
                                                                   for t in range(3)]
    assert [text for _, _, text in shown] == [f"[{100 * path.ci_low[t, 0]:.1f}%, {100 * path.ci_high[t, 0]:.1f}%]"
                                              for t in range(3)]
    assert [f"{n}" for n in path.n] == re.findall(r'<th scope="row">2026-03-0\d</th><td class="n" data-value="(\d+)">',
                                                  html)[:3]


def test_monitoring_with_no_answers_says_so(auth_client, app):
    make_survey(app, status="open")
    html = auth_client.get("/dashboard/habits/monitoring").get_data(as_text=True)
    assert "n = 0: no answers" in html


@pytest.mark.parametrize("url", ["/dashboard/habits/monitoring?question=nope", "/dashboard/habits/monitoring?confidence=2",
                                 "/dashboard/habits/regression?confidence=0.5"])
def test_bad_parameters_are_a_400_naming_the_field(auth_client, habits, url):
    response = auth_client.get(url)
    assert response.status_code == 400
    assert re.search(r"(question|confidence): ", response.get_data(as_text=True))


def test_results_page_and_api_take_monitoring(auth_client, habits):
    counts = [np.bincount(sample_columns(n, seed=s)["drugs"], minlength=2) for s, n in enumerate((200, 300, 500))]
    expected = estimators.monitor(np.sum(counts, axis=0), 1.0, tuned_for=2000)
    html = auth_client.get("/dashboard/habits/results?monitoring=1").get_data(as_text=True)
    assert "method confidence-sequence" in html
    shown = re.search(r'<span class="ci-low" data-value="([^"]+)">', html)
    assert shown and float(shown.group(1)) == pytest.approx(expected.ci_low[0], abs=1e-12)
    data = auth_client.get("/api/v1/surveys/habits/estimates?monitoring=1").get_json()
    drugs = data["questions"][0]
    assert drugs["method"] == "confidence-sequence"
    assert drugs["options"][0]["ci_low"] == pytest.approx(expected.ci_low[0], abs=1e-12)
    fixed = auth_client.get("/api/v1/surveys/habits/estimates").get_json()["questions"][0]
    assert fixed["method"] == "exact" and fixed["options"][0]["ci_low"] > drugs["options"][0]["ci_low"]
    export = auth_client.get("/dashboard/habits/export/estimates.json?monitoring=1").get_json()
    assert export["questions"][0]["method"] == "confidence-sequence"


def test_a_viewer_sees_the_analysis_pages(app, habits):
    owner = app.test_client()
    login(owner)
    ensure_researcher(app, "viewer@example.org")
    db = open_db(app)
    try:
        viewer_id = db.execute("SELECT id FROM researchers WHERE email = 'viewer@example.org'").fetchone()[0]
        db.execute("INSERT INTO survey_shares VALUES (?, ?, 'viewer')", [habits.id, viewer_id])
    finally:
        db.conn.close()
    viewer = app.test_client()
    login(viewer, email="viewer@example.org")
    assert viewer.get("/dashboard/habits/regression").status_code == 200
    assert viewer.get("/dashboard/habits/monitoring").status_code == 200
    assert "Publish" not in viewer.get("/dashboard/habits/results").get_data(as_text=True)
