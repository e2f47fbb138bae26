"""Respondent dead ends in chromium: the no-JavaScript notice above the privacy box in the first screen
at 390 px; a link that cannot answer said on arrival with nothing to fill in; the consent box before
the questions; every number error naming the question's rule (range and step) in English, Spanish and
French; every question type numbered "1.", "2." … with the number read once; and the builder's live
planning panel quoting the sentence the respondent reads."""

from __future__ import annotations

import re

import pytest

from deniable.server.store.db import connect
from deniable.server.store.invitations import generate
from deniable.server.survey import questions
from deniable.server.survey.explain import explain
from support.browser import builder_page, stored_reports
from support.dashboard import make_survey

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
NUMBERS = {"slug": "numbers", "title": "Numbers", "information": "We study habits.", "consent": True, "questions": [
    {"id": "days", "text": "On how many days did you drink last month?", "type": "numeric", "min": 0, "max": 30,
     "epsilon": 1.0},
    {"id": "hours", "text": "Hours of sleep last night?", "type": "numeric", "min": 0, "max": 30, "step": 0.5,
     "epsilon": 1.0},
    {"id": "offset", "text": "An offset?", "type": "numeric", "min": 0.25, "max": 10.25, "step": 0.5},
    {"id": "used", "text": "Used drugs?", "options": ["Yes", "No"], "epsilon": 1.0}]}


@pytest.fixture
def numbers(app):
    return make_survey(app, NUMBERS, status="open")


def test_without_javascript_the_notice_is_above_the_privacy_box_in_the_first_screen(browser, live_server, numbers):
    context = browser.new_context(java_script_enabled=False, viewport=PHONE)
    try:
        page = context.new_page()
        page.goto(f"{live_server}/s/numbers")
        notice = page.locator(".noscript")
        assert notice.is_visible() and "Nothing has been sent" in notice.inner_text()
        box = notice.bounding_box()
        assert box["y"] + box["height"] <= PHONE["height"]  # seen without scrolling
        for later in ("h1", ".privacy-intro", "#consent", "#q-days"):
            assert box["y"] + box["height"] <= page.locator(later).bounding_box()["y"], later
    finally:
        context.close()


@pytest.mark.parametrize("javascript", [True, False])
def test_a_bad_link_is_said_on_arrival_with_nothing_to_fill_in(browser, live_server, app, numbers, db_path,
                                                               javascript):
    db = connect(app.config["DATABASE"])
    try:
        db.execute("UPDATE surveys SET invitation_only = 1 WHERE id = ?", [numbers.id])
        generate(db, numbers.id, 1)
    finally:
        db.conn.close()
    context = browser.new_context(java_script_enabled=javascript, viewport=PHONE)
    try:
        page = context.new_page()
        for query, words in (("?t=not-a-link", "not valid for this survey"), ("", "by invitation only")):
            page.goto(f"{live_server}/s/numbers{query}")
            gate = page.locator("#invitation-gate")
            assert gate.is_visible() and words in gate.inner_text()
            assert gate.bounding_box()["y"] < PHONE["height"]
            assert page.locator("input, button, fieldset, .noscript").count() == 0  # nothing to answer in vain
    finally:
        context.close()
    assert stored_reports(db_path) == []


def test_the_consent_box_comes_before_the_questions_and_is_asked_for(page, live_server, numbers, db_path):
    page.set_default_timeout(10_000)
    page.set_viewport_size(PHONE)
    page.goto(f"{live_server}/s/numbers")
    page.wait_for_selector("#submit-answers:not([disabled])")
    consent = page.locator("#consent").bounding_box()
    assert consent["y"] + consent["height"] <= page.locator("#q-days").bounding_box()["y"]
    page.fill("#days-value", "3")
    page.fill("#hours-value", "7.5")
    page.check("#used-option-0")
    page.click("#submit-answers")
    error = page.locator("#consent-error")
    error.wait_for(state="visible")
    assert "tick the box" in error.inner_text()
    assert stored_reports(db_path) == []


@pytest.mark.parametrize("locale, field, value, words", [
    ("en-US", "days", "2.5", "Please give a whole number from 0 to 30."),
    ("en-US", "days", "31", "Please give a whole number from 0 to 30."),
    ("en-US", "hours", "7.3", "Please give a multiple of 0.5 from 0 to 30."),
    ("en-US", "offset", "1", "Please give a number from 0.25 to 10.25 in steps of 0.5."),
    ("es-ES", "days", "2.5", "Indica un número entero de 0 a 30."),
    ("es-ES", "hours", "7.3", "Indica un múltiplo de 0.5 de 0 a 30."),
    ("fr-FR", "days", "2.5", "Veuillez indiquer un nombre entier de 0 à 30."),
    ("fr-FR", "offset", "1", "Veuillez indiquer un nombre de 0.25 à 10.25 par pas de 0.5."),
])
def test_a_number_off_its_rule_names_the_rule(browser, live_server, numbers, db_path, locale, field, value, words):
    context = browser.new_context(locale=locale)
    try:
        page = context.new_page()
        page.set_default_timeout(10_000)
        page.goto(f"{live_server}/s/numbers")
        page.wait_for_selector("#submit-answers:not([disabled])")
        page.check("#consent-agree")
        answers = {"days": "3", "hours": "7.5", "offset": "0.75", field: value}
        for qid, text in answers.items():
            page.fill(f"#{qid}-value", text)
        page.check("#used-option-0")
        page.click("#submit-answers")
        message = page.locator(f"#{field}-error")
        message.wait_for(state="visible")
        assert message.inner_text() == words
        assert page.url.endswith("/s/numbers")
    finally:
        context.close()
    assert stored_reports(db_path) == []  # nothing was sent


def test_every_question_type_is_numbered_and_a_screen_reader_hears_the_number_once(page, live_server, app):
    examples = [definition for qtype in questions.all_types() for definition, _ in qtype.examples()]
    make_survey(app, {"slug": "every", "title": "Every type", "questions": [
        {"id": f"q{n}", **definition} for n, definition in enumerate(examples, start=1)]}, status="open")
    page.set_default_timeout(10_000)
    page.goto(f"{live_server}/s/every")
    page.wait_for_selector("#submit-answers:not([disabled])")
    numbers = page.locator("fieldset.question .question-number").all_text_contents()
    assert numbers == [f"{n}." for n in range(1, len(examples) + 1)]
    tree = page.locator("#survey-form").aria_snapshot()  # the names a screen reader announces
    for n in range(1, len(examples) + 1):
        assert len(re.findall(rf'"{n}\. ', tree)) == 1, (n, tree)


def test_the_live_planning_panel_quotes_the_sentence_respondents_read(page, live_server, researcher):
    with builder_page(page, live_server):
        page.goto(f"{live_server}/dashboard/new")
        page.fill("#questions-0-text", "Used drugs?")
        page.fill("#questions-0-options", "Yes\nNo\nMaybe")
        page.fill("#questions-0-epsilon", "2")
        page.wait_for_function("() => { const p = document.getElementById('plan-0'); "
                               "return p.dataset.ready && Math.abs(Number(p.dataset.epsilon) - 2) < 1e-6; }")
        info = explain(2.0, 3)
        panel = page.locator("#plan-0")
        assert f"Respondents read: “{info['short']}”" in panel.locator(".explain").inner_text()
        more = panel.locator("details.explain-more")
        assert not more.locator("p").is_visible()  # the rest behind "What does this mean?", as on the survey page
        more.locator("summary").click()
        assert more.locator("p").inner_text() == f"“{info['coin']} {info['posterior']} {info['odds']}”"
