"""The respondent-side crosswise design's private fact is words, like the question's text and labels, on the
real app: a translation holds it and the French page shows it, a launched survey's French fact can be fixed
(the design fingerprint, the stored design and the estimates stay), an empty fact is refused by name with
nothing stored.  In the survey's own language the store keeps the fact as launched (it is stored inside the
design, which the frozen-questions trigger keeps): a fix of it is refused by name, nothing stored."""

from __future__ import annotations

import html
import re
from dataclasses import replace

import pytest

from deniable.server.store.surveys import get_survey
from deniable.server.survey.definition import design_fingerprint, parse_definition
from support.dashboard import make_survey, open_db, post, store_reports

FACT = "Is your mother's birthday in January, February or March?"
TYPO, FIXED = "Votre mère est-elle née en janvier, févier ou mars ?", "Votre mère est-elle née en janvier, février ou mars ?"
DEFINITION = {
    "slug": "taxes", "title": "Taxes",
    "questions": [{"id": "tax", "text": "Have you ever evaded a tax?", "options": ["Yes", "No"],
                   "design": {"name": "crosswise", "side": "respondent", "prevalence": 0.25, "fact": FACT,
                              "prevalence_range": [0.23, 0.27]}}],
    "translations": {"fr": {"questions": {"tax": {"text": "Avez-vous déjà fraudé le fisc ?", "options": ["Oui", "Non"],
                                                  "fact": TYPO}}}},
}


@pytest.fixture
def taxes(app):
    survey = make_survey(app, DEFINITION, status="open")
    store_reports(app, "taxes", {"tax": [0, 1, 1, 0, 1, 1, 1, 0, 1, 1]})
    return survey



def text_of(response) -> str:
    return html.unescape(response.get_data(as_text=True))


def fact_shown(page: str) -> str:
    """The private fact the survey page's crosswise card shows (cards/crosswise.html)."""
    return re.search(r'class="crosswise-fact"[^>]*><strong>[^<]*</strong>\s*(.*?)</p>', page, re.S).group(1).strip()


def form_inputs(page: str, form_id: str) -> dict[str, str]:
    form = re.search(rf'<form[^>]*id="{form_id}".*?</form>', page, re.S)
    assert form, f"no {form_id} on the launched page"
    fields = dict(re.findall(r'<input type="text" id="[^"]*" name="([^"]*)" value="([^"]*)"', form.group(0)))
    fields.update(re.findall(r'<textarea id="[^"]*" name="([^"]*)"[^>]*>\n?(.*?)</textarea>', form.group(0), re.S))
    return fields


def state(app, client) -> dict:
    """What a fix of words must leave alone (and, refused, all of it): the stored survey, its reports, its
    wordings, the design the API publishes and the estimates."""
    db = open_db(app)
    try:
        stored = get_survey(db, "taxes")
        return {"stored": stored, "fingerprint": design_fingerprint(stored.survey),
                "rows": db.execute("SELECT reports, text_version FROM responses ORDER BY id").fetchall(),
                "specs": db.execute("SELECT spec FROM questions").fetchall(),
                "versions": db.execute("SELECT count(*) FROM wording_versions").fetchone()[0],
                "estimates": client.get("/api/v1/surveys/taxes/estimates").get_json()}
    finally:
        db.conn.close()


def test_rewording_the_fact_changes_the_card_and_nothing_the_reports_mean():
    """The type's protocol: the fact is one of the question's words (``wording``, ``wording_labels``), and
    ``reworded`` puts a new one into the design's parameters, keeping its name, prevalence and range, so the
    fingerprint, the stored design and the design's weights are the same."""
    survey = parse_definition({key: value for key, value in DEFINITION.items() if key != "translations"})
    q = survey.questions[0]
    assert q.qtype.wording(q) == {"text": q.text, "options": ["Yes", "No"], "fact": FACT}
    assert q.qtype.wording_labels(q)["fact"] == ("private fact", "fact")
    new = replace(q, **q.qtype.reworded(q, {**q.qtype.wording(q), "fact": "Were you born on an odd day?"}))
    assert new.qtype.page_data(new)["crosswise"]["fact"] == "Were you born on an odd day?"
    assert new.qtype.wording(new)["fact"] == "Were you born on an odd day?"
    spec, was = new.qtype.spec(new)["design"], q.qtype.spec(q)["design"]
    assert {**spec, "fact": FACT} == was and list(spec) == list(was)  # the fact only, in its place
    assert new.qtype.design(new) == q.qtype.design(q) and new.qtype.stored_design(new) == q.qtype.stored_design(q)
    assert design_fingerprint(replace(survey, questions=(new,))) == design_fingerprint(survey)
    # a design without a private fact has none to reword
    warner = parse_definition({"slug": "w", "title": "W", "questions": [
        {"id": "lied", "text": "Lied?", "options": ["Yes", "No"], "design": {"name": "warner", "p": 0.75}}]}).questions[0]
    assert "fact" not in warner.qtype.wording(warner) and "fact" not in warner.qtype.wording_labels(warner)


def test_the_french_page_shows_the_french_fact_and_a_fix_of_it_keeps_the_design(app, auth_client, client, taxes):
    assert fact_shown(text_of(client.get("/s/taxes?lang=fr"))) == TYPO
    assert fact_shown(text_of(client.get("/s/taxes?lang=en"))) == FACT
    page = text_of(auth_client.get("/dashboard/taxes/edit"))
    assert '<label for="wording-questions-0-fact">Private fact</label>' in page
    french = form_inputs(page, "translation-fr-form")
    assert french["translation-fr-questions-0-fact"] == TYPO
    before = state(app, auth_client)
    response = post(auth_client, "/dashboard/taxes/wording/fr", {**french, "translation-fr-questions-0-fact": FIXED})
    assert response.status_code == 302, text_of(response)[:2000]
    assert fact_shown(text_of(client.get("/s/taxes?lang=fr"))) == FIXED
    assert fact_shown(text_of(client.get("/s/taxes?lang=en"))) == FACT
    after = state(app, auth_client)
    assert after["stored"].survey.translations["fr"]["questions"]["tax"]["fact"] == FIXED
    assert after["stored"].survey.questions == before["stored"].survey.questions
    for key in ("fingerprint", "rows", "specs", "estimates"):
        assert after[key] == before[key], key
    assert after["stored"].text_version == 2 and after["versions"] == 2
    edit = text_of(auth_client.get("/dashboard/taxes/edit"))
    assert f"French: Question 1 (tax), private fact {TYPO} {FIXED}" in " ".join(re.sub(r"<[^>]+>", " ", edit).split())
    assert client.get("/api/v1/surveys/taxes").get_json()["translations"]["fr"]["questions"]["tax"]["fact"] == FIXED


@pytest.mark.parametrize("url, form_id, field, value, message", [
    ("/dashboard/taxes/wording/fr", "translation-fr-form", "translation-fr-questions-0-fact", "  ",
     "French, Question 1, private fact: must be the private fact's question in words"),
    ("/dashboard/taxes/wording", "wording-form", "wording-questions-0-fact", "",
     "Question 1, private fact: must be the private fact's question in words"),
])
def test_a_refused_fact_is_named_and_nothing_is_stored(app, auth_client, client, taxes, url, form_id, field, value,
                                                       message):
    page = text_of(auth_client.get("/dashboard/taxes/edit"))
    form = form_inputs(page, form_id)
    assert field in form
    before = state(app, auth_client)
    response = post(auth_client, url, {**form, field: value})
    assert response.status_code == 422
    text = text_of(response)
    summary = re.search(r'<div class="error-summary".*?</div>', text, re.S).group(0)
    assert f'<a href="#{field}">{message}' in summary, summary
    assert re.search(rf'id="{field}"[^>]*aria-invalid="true"', text)
    assert state(app, auth_client) == before
    assert fact_shown(text_of(client.get("/s/taxes?lang=en"))) == FACT
    assert fact_shown(text_of(client.get("/s/taxes?lang=fr"))) == TYPO


def test_the_own_languages_fact_is_fixed_and_the_design_is_not(app, auth_client, client, taxes):
    """The frozen-design trigger (migration m18) lets a launched spec change in ``$.design.fact`` only."""
    form = form_inputs(text_of(auth_client.get("/dashboard/taxes/edit")), "wording-form")
    before = state(app, auth_client)
    fixed = "Is your mother's birthday in spring?"
    response = post(auth_client, "/dashboard/taxes/wording", {**form, "wording-questions-0-fact": fixed})
    assert response.status_code == 302, text_of(response)[:2000]
    assert fact_shown(text_of(client.get("/s/taxes?lang=en"))) == fixed
    assert fact_shown(text_of(client.get("/s/taxes?lang=fr"))) == TYPO  # the translation keeps its own
    after = state(app, auth_client)
    for key in ("fingerprint", "rows", "estimates"):
        assert after[key] == before[key], key
    assert after["stored"].text_version == 2


def test_the_trigger_still_refuses_any_other_change_of_a_launched_design(app, taxes):
    import json
    import sqlite3

    from deniable.server.store.db import connect

    db = connect(app.config["DATABASE"])
    try:
        (spec,) = db.execute("SELECT spec FROM questions WHERE qid = 'tax'").fetchone()
        design = json.loads(spec)["design"]
        assert "fact" in design
        for change in ({"fact": "Spring?"}, {"prevalence_range": [0.1, 0.2]}, {"prevalence": 0.3}, {"name": "warner"}):
            moved = json.dumps({**json.loads(spec), "design": {**design, **change}})
            if "fact" in change:
                db.execute("UPDATE questions SET spec = ? WHERE qid = 'tax'", [moved])
                db.execute("UPDATE questions SET spec = ? WHERE qid = 'tax'", [spec])
                continue
            with pytest.raises(sqlite3.IntegrityError, match="only the wording"):
                db.execute("UPDATE questions SET spec = ? WHERE qid = 'tax'", [moved])
    finally:
        db.conn.close()
