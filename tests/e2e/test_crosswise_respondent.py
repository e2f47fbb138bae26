"""The respondent-side crosswise model in chromium: the survey page asks the sensitive question and
the private fact and offers only "same" and "different"; the device sends that choice as is (no
randomization by the device: the randomization is the fact nobody else knows), nothing on the page
holds a true answer, and the thank-you page shows the choice.  The builder offers the design with its
fields and the live panel's range of ε."""

from __future__ import annotations

import math
from urllib.parse import parse_qs

import pytest
from support.browser import log_in, record_requests, stored_reports
from e2e.test_accessibility import axe_violations

from deniable.server.store.db import connect
from deniable.server.store.surveys import get_survey, insert_survey
from deniable.server.survey.definition import parse_definition
from support.dashboard import open_db

pytestmark = pytest.mark.browser

FACT = "Is your mother's birthday in January, February or March?"
DESIGN = {"name": "crosswise", "side": "respondent", "prevalence": 0.25, "fact": FACT, "prevalence_range": [0.23, 0.27]}
SURVEY = parse_definition({"slug": "crosswise", "title": "Crosswise", "questions": [
    {"id": "evaded", "text": "Have you ever evaded a tax?", "options": ["Yes", "No"], "design": DESIGN},
    {"id": "cheated", "text": "Have you ever cheated in an exam?", "options": ["Yes", "No"], "epsilon": 1.0}]})
LOW, HIGH = math.log(0.73 / 0.27), math.log(0.77 / 0.23)


@pytest.mark.parametrize("choice", [0, 1])
def test_the_page_sends_only_same_or_different_as_chosen(page, live_server, app, db_path, choice):
    db = connect(app.config["DATABASE"])
    try:
        insert_survey(db, SURVEY, status="open")
    finally:
        db.conn.close()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    requests = record_requests(page)
    page.goto(f"{live_server}/s/crosswise")
    page.wait_for_selector("#submit-answers:not([disabled])")
    card = page.locator("#q-evaded")
    assert FACT in card.locator("#evaded-fact").inner_text()
    assert "Are your answers to both questions the same (both yes or both no) or different?" in card.inner_text()
    assert "never sees your answer" in page.locator("#evaded-note").inner_text()
    assert "between 73% and 77% sure" in page.locator("#evaded-more").text_content()
    # no true answer exists in the card: its only inputs are "same", "different" and the hidden report
    inputs = card.evaluate("""(card) => Array.from(card.querySelectorAll('input')).map((input) =>
        [input.type, input.name, input.labels && input.labels.length ? input.labels[0].textContent.trim() : null])""")
    assert inputs == [["radio", "", "same"], ["radio", "", "different"], ["hidden", "evaded", None]]
    assert not any(label in card.locator("label").all_inner_texts() for label in ("Yes", "No"))
    assert axe_violations(page) == []
    page.check(f"#evaded-option-{choice}")
    page.check("#cheated-option-0")
    with page.expect_navigation(url="**/s/crosswise/thanks"):
        page.click("#submit-answers")
    body = [parse_qs(r.post_data, keep_blank_values=True) for r in requests if r.method == "POST"][0]
    assert set(body) == {"csrf_token", "evaded", "cheated"} and body["evaded"] == [str(choice)]
    assert [r["evaded"] for r in stored_reports(db_path)] == [choice]
    storage = page.evaluate("() => Object.fromEntries(Object.entries(localStorage))")
    # only the k-ary question's randomized report is memoized: the crosswise choice was not randomized
    assert set(storage) == {"deniable:report:crosswise:cheated", "deniable:sent:crosswise"}
    page.wait_for_selector("#sent-table tr[data-qid]:not([hidden])")
    shown = dict(zip(page.locator("tr[data-qid]:not([hidden]) th").all_inner_texts(),
                     page.locator("tr[data-qid]:not([hidden]) td.sent-label").all_inner_texts()))
    assert shown["Have you ever evaded a tax?"] == ["same", "different"][choice]
    assert "as you chose" in page.locator("tr[data-qid='evaded']").inner_text()
    assert errors == []


def test_the_builder_offers_it_with_the_live_range_of_epsilon(page, live_server, app, researcher):
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_viewport_size({"width": 1280, "height": 900})
    log_in(page, live_server)
    page.goto(f"{live_server}/dashboard/new")
    page.fill("#title", "Crosswise live")
    page.fill("#questions-0-text", "Have you ever evaded a tax?")
    page.fill("#questions-0-qid", "evaded")
    page.fill("#questions-0-options", "Yes\nNo")
    page.check("#design-form input.q-randomization[value='respondent_crosswise'] >> nth=0")
    assert page.locator("#questions-0-design_fact").is_visible() and not page.locator("#questions-0-design_p").is_visible()
    page.fill("#questions-0-design_prevalence", "0,25")
    page.fill("#questions-0-design_fact", FACT)
    page.fill("#questions-0-design_range", "0.23\n0.3")
    page.wait_for_function("(text) => document.getElementById('plan-0').textContent.includes(text)",
                           arg=f"ε between {math.log(0.7 / 0.3):.4f} and {HIGH:.4f}")  # |ln(π/(1 − π))| at 0.3 and 0.23
    page.fill("#questions-0-design_range", "0.23\n0.27")
    page.fill("#questions-0-design_prevalence", "0.3")
    page.wait_for_function("() => document.getElementById('plan-0').textContent.includes('must lie in prevalence_range')")
    page.fill("#questions-0-design_prevalence", "0.25")
    page.wait_for_function("(text) => document.getElementById('plan-0').textContent.includes(text)",
                           arg=f"ε between {LOW:.4f} and {HIGH:.4f}")
    assert "not ε-LDP" in page.inner_text("#plan-0")
    page.wait_for_function("(text) => document.getElementById('total-epsilon-value').textContent === text",
                           arg=f"{HIGH:.3f}")
    with page.expect_navigation():
        page.click("#save")
    survey = get_survey(open_db(app), "crosswise-live").survey
    assert survey.question("evaded").design == parse_definition({"slug": "x", "title": "X", "questions": [
        {"id": "evaded", "text": "x", "options": ["Yes", "No"], "design": DESIGN}]}).question("evaded").design
    assert errors == []
