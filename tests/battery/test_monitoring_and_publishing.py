"""Battery: monitoring over time, releases (Publish) and the public page /r/SLUG work for every
question type — a chart or a reason in words, never a 500 — and the public page shows every
protected question's headlines inside their own intervals."""

from __future__ import annotations

import html as htmllib
import json
import re

import numpy as np
import pytest

from deniable.server.store import releases
from deniable.server.store.db import connect
from deniable.server.store.responses import insert_many
from deniable.server.store.surveys import get_survey, insert_survey
from deniable.server.survey.definition import parse_definition
from deniable.server.survey.release import candidates
from deniable.server.survey.simulate import simulate_dataset

from support.battery import SLUG, battery_definition, battery_questions, battery_truth, question_ids
from support.dashboard import post

EARLIER = "2020-01-01"  # a second day of answers, before the battery's own (today)


@pytest.fixture
def two_days(db_path, battery):
    """The battery with 300 more respondents on an earlier day: every question has a path of two days."""
    db = connect(db_path)
    try:
        data = simulate_dataset(battery.survey, battery_truth(battery.survey), 300, np.random.default_rng(5))
        insert_many(db, battery, data.columns, submitted_on=EARLIER)
    finally:
        db.conn.close()
    return battery


def section_rows(html: str, qid: str) -> list[tuple[float, float, float]]:
    """``(headline, low, high)`` of every estimate row of a question's section on the public page."""
    section = html.split(f'id="q-{qid}"')[1].split("</section>")[0]
    found = re.findall(r'<td class="estimate" data-value="([^"]*)">.*?<td class="interval" data-low="([^"]*)" '
                       r'data-high="([^"]*)"', section, flags=re.S)
    return [tuple(float(v) for v in row) for row in found]


@pytest.mark.parametrize("qid", question_ids())
def test_the_monitoring_page_charts_every_question_by_day(auth_client, two_days, qid):
    response = auth_client.get(f"/dashboard/{SLUG}/monitoring?question={qid}")
    assert response.status_code == 200, qid
    html = response.get_data(as_text=True)
    assert html.count('class="sequence-band"') >= 1, qid
    assert "n = 0: no answers" not in html and "Not available" not in html
    assert [EARLIER] == re.findall(r'<th scope="row">(2020-01-01)</th>', html)[:1]
    q = two_days.survey.question(qid)
    if not q.protected:  # the type's words: a randomized answer that ε does not protect is not "asked directly"
        assert f"{q.qtype.unprotected(q)} ·" in htmllib.unescape(html), qid
    if not q.qtype.anytime:  # said in words: fixed-n intervals, not anytime-valid; each headline inside its own
        assert "not anytime-valid" in html and 'class="explain fixed-n"' in html
        shown = re.findall(r'<td class="estimate" data-value="([^"]*)">.*?<td class="fixed-interval" '
                           r'data-low="([^"]*)" data-high="([^"]*)"', html, flags=re.S)
        assert len(shown) >= 2
        for value, low, high in shown:
            value, low, high = float(value), float(low), float(high)
            assert np.isnan(value) or low - 1e-9 <= value <= high + 1e-9, (qid, value, low, high)
    else:
        assert "that is why the band is wider" in html


def test_monitoring_a_question_without_answers_says_so(auth_client, db_path, owner_id):
    from support.battery import battery_survey

    battery_survey(db_path, n=0, owner_id=owner_id)
    for qid in question_ids():
        html = auth_client.get(f"/dashboard/{SLUG}/monitoring?question={qid}").get_data(as_text=True)
        assert "n = 0: no answers" in html, qid


def test_a_release_with_every_item_offered_succeeds_and_the_public_page_shows_every_protected_question(
        app, auth_client, battery):
    offered = candidates(battery.survey)
    assert {kind for kind, *_ in offered} == {"counts", "top", "groups"}
    page = auth_client.get(f"/dashboard/{SLUG}/publish").get_data(as_text=True)
    assert "Not offered for release" in page
    grouped = {qid for kind, qid, *_ in offered if kind == "groups"}
    for q in battery.survey.questions:  # what a type does not offer is said in words
        if not q.protected and not any(qid == q.id for _, qid, *_ in offered):
            assert f"<code>{q.id}</code>: counts and most common answer: " in page, q.id
        if q.protected and q.id not in grouped:
            assert f"<code>{q.id}</code>: estimates within groups: " in page, q.id
    protected = [q for q in battery.survey.questions if q.protected]
    # the only protected question without a table within groups is the one whose type says why (above): the
    # number with discrete Laplace noise (the respondent-side crosswise model at a prevalence below ½ has
    # its two reports swapped, each then likelier under its own answer), and the protected two-group design
    # (CDMsym), whose π needs both groups' counts and the non-compliance share
    assert {q.id for q in protected} - grouped == {q.id for q in protected if _no_groups(q)} == \
        {"numeric_1", "two_group_1"}
    assert post(auth_client, f"/dashboard/{SLUG}/publish/budget", {"budget": "20"}).status_code == 303
    items = {"-".join(p for p in (kind, qid, by) if p): "0.1" for kind, qid, by, _ in offered}
    response = post(auth_client, f"/dashboard/{SLUG}/publish/release", items)
    assert response.status_code == 303, response.get_data(as_text=True)[:2000]
    public = app.test_client().get(f"/r/{SLUG}")
    assert public.status_code == 200
    html = public.get_data(as_text=True)
    for q in battery.survey.questions:
        if not q.protected:
            continue
        rows = section_rows(html, q.id)
        assert rows, q.id
        for value, low, high in rows:
            assert low - 1e-9 <= value <= high + 1e-9, (q.id, value, low, high)
    for kind, qid, by, _ in offered:
        assert f'data-kind="{kind}" data-question="{qid}"' in html
    groups = re.findall(r'class="group-estimate" data-value="([^"]*)" data-low="([^"]*)" data-high="([^"]*)"', html)
    assert groups
    for value, low, high in groups:  # released estimates within groups: headlines inside their intervals too
        assert value == "None" or float(low) - 1e-9 <= float(value) <= float(high) + 1e-9, (value, low, high)


def _no_groups(q) -> bool:
    """Whether ``q``'s type declares it has no released table within groups (NotAvailable)."""
    from deniable.server.survey.questions.base import NotAvailable

    try:
        q.qtype.group_columns(q)
    except NotAvailable:
        return True
    return False


def test_the_public_page_estimates_from_the_stored_statistics_of_each_type(app, auth_client, battery, db_path):
    """The document stores each protected question's statistics in its type's JSON form; the page's
    headlines are the type's summary of its estimate from them."""
    from deniable.server.store.surveys import survey_stats

    post(auth_client, f"/dashboard/{SLUG}/publish/budget", {"budget": "1"})
    assert post(auth_client, f"/dashboard/{SLUG}/publish/release", {"protected-only": "1"}).status_code == 303
    db = connect(db_path)
    try:
        document = releases.latest_release(db, battery.id)
        stats = survey_stats(db, battery)
    finally:
        db.conn.close()
    assert document["items"] == [] and document["epsilon"] == 0
    html = app.test_client().get(f"/r/{SLUG}").get_data(as_text=True)
    assert "estimates alone" in html
    for q in battery.survey.questions:
        if not q.protected:
            continue
        assert json.loads(json.dumps(document["protected"][q.id])) == q.qtype.stats_to_json(q, stats[q.id])
        record = q.qtype.record(q, q.qtype.estimate(q, stats[q.id], method="exact", confidence=0.95,
                                                    simultaneous=False))
        expected = [(s["headline"], s["ci_low"], s["ci_high"]) for s in q.qtype.summary(q, record)]
        shown = section_rows(html, q.id)
        assert len(shown) == len(expected) and all(a == pytest.approx(b) for a, b in zip(shown, expected)), q.id


def _protected(definition: dict) -> bool:
    """Whether a battery question is protected: at ε, or by an ε-LDP design."""
    from deniable.server.survey.definition import parse_question

    return ("epsilon" in definition or "design" in definition) and parse_question(definition).protected


def test_a_survey_without_direct_questions_publishes_its_protected_estimates_alone(app, auth_client, db_path,
                                                                                    owner_id):
    definition = battery_definition()
    kept = [(d, t) for d, t in battery_questions() if _protected(d)]  # at ε, or by an ε-LDP design
    definition["questions"] = [d for d, _ in kept]
    definition.update(slug="onlyprotected", title="Only protected")
    survey = parse_definition(definition)
    assert any(q.design for q in survey.questions)
    truth = {q.id: q.qtype.truth(q, t, q.id) for q, (d, t) in zip(survey.questions, kept)}
    db = connect(db_path)
    try:
        stored = insert_survey(db, survey, status="open", owner_id=owner_id)
        insert_many(db, stored, simulate_dataset(survey, truth, 400, np.random.default_rng(3)).columns)
        stored = get_survey(db, "onlyprotected")
    finally:
        db.conn.close()
    assert candidates(survey) == []
    page = auth_client.get("/dashboard/onlyprotected/publish").get_data(as_text=True)  # no budget needed
    assert "the public page can show the protected questions' estimates alone, at no cost" in htmllib.unescape(page)
    refused = post(auth_client, "/dashboard/onlyprotected/publish/release", {})
    assert refused.status_code == 400 and "estimates alone (ε spent: 0)" in htmllib.unescape(
        refused.get_data(as_text=True))
    assert post(auth_client, "/dashboard/onlyprotected/publish/release", {"protected-only": "1"}).status_code == 303
    public = app.test_client().get("/r/onlyprotected")
    assert public.status_code == 200
    html = public.get_data(as_text=True)
    assert "ε spent: 0" in html
    for q in survey.questions:
        assert section_rows(html, q.id), q.id
    db = connect(db_path)
    try:
        assert releases.budget(db, stored.id).spent == 0 and releases.ledger(db, stored.id) == []
    finally:
        db.conn.close()


def test_a_release_stored_before_there_were_types_still_displays(app, battery, db_path):
    """Old documents hold a list of option counts for each (choice) protected question."""
    db = connect(db_path)
    try:
        releases.set_budget(db, battery, 1.0)
        releases.record_release(db, battery, {"survey": SLUG, "released_on": "2025-01-01", "n": 600,
                                              "epsilon": 0.0, "confidence": 0.95,
                                              "protected": {"choice_0": [250, 350], "choice_1": [300, 200, 100]},
                                              "items": []}, [])
    finally:
        db.conn.close()
    response = app.test_client().get(f"/r/{SLUG}")
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    assert len(section_rows(html, "choice_0")) == 2 and len(section_rows(html, "choice_1")) == 3
    assert "Not shown: not part of this release" in html  # the other protected questions


def test_releasing_a_question_a_type_does_not_offer_is_ignored_and_says_so(auth_client, battery):
    post(auth_client, f"/dashboard/{SLUG}/publish/budget", {"budget": "5"})
    response = post(auth_client, f"/dashboard/{SLUG}/publish/release", {"counts-list_1": "1", "top-list_1": "1",
                                                                           "groups-numeric_1-group": "1"})
    assert response.status_code == 400
    assert "choose at least one thing to release" in response.get_data(as_text=True)


def test_a_type_that_shows_nothing_over_time_or_in_public_says_why(app, auth_client, battery, monkeypatch):
    """A type without headlines raises NotAvailable: the pages show its reason in words, not a 500."""
    from deniable.server.survey.questions.base import NotAvailable

    from support import rating

    def nothing(self, q, *args, **kwargs):
        raise NotAvailable("a rating scale has no headline to show here")

    monkeypatch.setattr(rating.Rating, "monitor_series", nothing)
    monkeypatch.setattr(rating.Rating, "summary", nothing)
    qid = f"{rating.NAME}_0"
    response = auth_client.get(f"/dashboard/{SLUG}/monitoring?question={qid}")
    assert response.status_code == 200
    assert "Not available for <code>rating_0</code>: a rating scale has no headline to show here." in \
        response.get_data(as_text=True)
    post(auth_client, f"/dashboard/{SLUG}/publish/budget", {"budget": "1"})
    assert post(auth_client, f"/dashboard/{SLUG}/publish/release", {"protected-only": "1"}).status_code == 303
    public = app.test_client().get(f"/r/{SLUG}")
    assert public.status_code == 200
    section = public.get_data(as_text=True).split(f'id="q-{qid}"')[1].split("</section>")[0]
    assert "Not shown: a rating scale has no headline to show here." in section


def test_monitoring_a_question_the_patterns_do_not_hold_reads_the_days_of_the_stored_rows(auth_client, db_path,
                                                                                          owner_id):
    """A check-all question of 8 options is not in the answer patterns: its days come from the rows."""
    options = [f"O{i}" for i in range(8)]
    survey = parse_definition({"slug": "wide", "title": "Wide", "questions": [
        {"id": "many", "text": "Which?", "type": "multi", "options": options, "epsilon": 4.0}]})
    q = survey.question("many")
    assert not q.qtype.in_patterns(q)
    truth = {"many": q.qtype.truth(q, [0.3] * 8, "many")}
    db = connect(db_path)
    try:
        stored = insert_survey(db, survey, status="open", owner_id=owner_id)
        for day, seed in ((EARLIER, 1), ("2020-01-03", 2)):
            insert_many(db, stored, simulate_dataset(survey, truth, 150, np.random.default_rng(seed)).columns,
                        submitted_on=day)
    finally:
        db.conn.close()
    html = auth_client.get("/dashboard/wide/monitoring?question=many").get_data(as_text=True)
    assert html.count('class="sequence-band"') == 9  # each option, and the number ticked
    assert re.findall(r'<th scope="row">(2020-01-0\d)</th><td class="n" data-value="(\d+)">', html)[:2] == [(EARLIER, "150"),
                                                                                       ("2020-01-03", "300")]


def test_the_habits_example_monitors_every_question_and_publishes_every_item(app, auth_client, db_path, owner_id):
    from deniable.server.survey.definition import load_definition
    from deniable.server.survey.simulate import load_truth

    survey = load_definition("examples/habits.json")
    db = connect(db_path)
    try:
        stored = insert_survey(db, survey, status="open", owner_id=owner_id)
        truth = load_truth("examples/habits-truth.json", survey)
        insert_many(db, stored, simulate_dataset(survey, truth, 800, np.random.default_rng(2)).columns)
    finally:
        db.conn.close()
    for q in survey.questions:
        html = auth_client.get(f"/dashboard/habits/monitoring?question={q.id}").get_data(as_text=True)
        assert 'class="sequence-band"' in html, q.id
    post(auth_client, "/dashboard/habits/publish/budget", {"budget": "50"})
    items = {"-".join(p for p in (kind, qid, by) if p): "0.5" for kind, qid, by, _ in candidates(survey)}
    assert post(auth_client, "/dashboard/habits/publish/release", items).status_code == 303
    html = app.test_client().get("/r/habits").get_data(as_text=True)
    for q in survey.questions:
        if q.protected:
            rows = section_rows(html, q.id)
            assert rows and all(low - 1e-9 <= v <= high + 1e-9 for v, low, high in rows), q.id
