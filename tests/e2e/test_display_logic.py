"""Display logic and pages in chromium (client/static/logic.js): answering a direct question shows or
hides the questions that depend on it; the pages show one at a time with Back, Next and "Page N of M"
(counting only pages with a question asked); the one submission at the end carries no report of a
hidden question; a protected question's report is drawn once and memoized as before; no serious axe
violation on the paged form; without JavaScript every question shows on one page."""

from __future__ import annotations

from urllib.parse import parse_qs

import pytest
from e2e.test_accessibility import axe_violations
from support.browser import record_requests, stored_reports

from deniable.server.store.db import connect
from deniable.server.store.surveys import insert_survey
from deniable.server.survey.definition import parse_definition

pytestmark = pytest.mark.browser

SURVEY = parse_definition({"slug": "paged", "title": "Paged", "consent": True, "information": "A study.",
                           "questions": [
    {"id": "smoke", "text": "Do you smoke?", "options": ["Yes", "No", "Sometimes"]},
    {"id": "kinds", "text": "Which do you smoke?", "type": "multi", "options": ["Pipe", "Cigar"],
     "show_if": {"question": "smoke", "in": ["Yes", "Sometimes"]}},
    # ε = 20: the true option is kept with probability 1 − 2·10⁻⁹, so the report decodes to the answer
    {"id": "many", "text": "How many a day?", "options": ["1-5", "6+"], "epsilon": 20.0, "page_break": True,
     "show_if": {"question": "smoke", "in": ["Yes", "Sometimes"]}},
    {"id": "pipe", "text": "Pipe brand?", "options": ["Oak", "Briar"], "show_if": {"question": "kinds", "in": ["Pipe"]}},
    {"id": "age", "text": "Your age?", "type": "numeric", "min": 18, "max": 99, "page_break": True},
]})


@pytest.fixture
def paged_survey(app):
    db = connect(app.config["DATABASE"])
    try:
        insert_survey(db, SURVEY, status="open")
    finally:
        db.conn.close()


def visible(page) -> list[str]:
    return page.evaluate("""() => Array.from(document.querySelectorAll("fieldset.question"))
      .filter((f) => !f.hidden).map((f) => f.dataset.qid)""")


def progress(page) -> tuple[str, int, int]:
    return (page.inner_text("#page-progress-text"), page.eval_on_selector("#page-progress-bar", "b => b.value"),
            page.eval_on_selector("#page-progress-bar", "b => b.max"))


def test_answers_show_and_hide_questions_and_the_pages_count_only_what_is_asked(page, live_server, paged_survey,
                                                                                db_path):
    requests = record_requests(page)
    page.goto(f"{live_server}/s/paged")
    page.wait_for_selector("#submit-answers:not([disabled])", state="attached", timeout=10_000)
    assert visible(page) == ["smoke"] and progress(page) == ("Page 1 of 2", 1, 2)  # pages 1 and 3: "No" so far
    assert page.is_hidden("#submit-answers") and page.is_hidden("#page-back") and page.is_visible("#page-next")
    page.get_by_label("Sometimes", exact=True).check()
    assert visible(page) == ["smoke", "kinds"] and progress(page) == ("Page 1 of 3", 1, 3)
    page.get_by_label("No", exact=True).check()
    assert visible(page) == ["smoke"] and progress(page)[0] == "Page 1 of 2"
    page.get_by_label("Yes", exact=True).check()
    page.click("#page-next")  # the consent box is not ticked yet: stay, and say so
    assert visible(page) == ["smoke", "kinds"] and page.is_visible("#consent-error")
    page.check("#consent-agree")
    page.get_by_label("Pipe", exact=True).check()
    page.click("#page-next")
    assert visible(page) == ["many", "pipe"] and progress(page) == ("Page 2 of 3", 2, 3)
    page.click("#page-next")  # required, unanswered: stay, with the message on the question
    assert visible(page) == ["many", "pipe"] and page.inner_text("#many-error") != ""
    page.get_by_label("6+", exact=True).check()
    page.get_by_label("Briar", exact=True).check()
    page.click("#page-back")
    assert visible(page) == ["smoke", "kinds"] and progress(page)[0] == "Page 1 of 3"
    page.get_by_label("Pipe", exact=True).uncheck()  # pipe is no longer asked (its answer stays unsent)
    page.get_by_label("Cigar", exact=True).check()
    page.click("#page-next")
    assert visible(page) == ["many"]
    page.click("#page-next")
    assert visible(page) == ["age"] and progress(page) == ("Page 3 of 3", 3, 3) and page.is_visible("#submit-answers")
    page.fill("#age-value", "40")
    assert axe_violations(page) == []
    with page.expect_navigation(url="**/s/paged/thanks"):
        page.click("#submit-answers")
    bodies = [parse_qs(r.post_data, keep_blank_values=True) for r in requests if r.method == "POST"]
    assert len(bodies) == 1  # one submission, at the end: nothing about the pages was sent before
    assert set(bodies[0]) == {"csrf_token", "smoke", "kinds", "many", "age"}  # no "pipe": it was hidden
    assert stored_reports(db_path) == [{"smoke": 0, "kinds": [0, 1], "many": 1, "age": 22}]  # a number is sent as its step from min
    # the protected question's report was memoized once, as before; the hidden one drew none
    keys = page.evaluate("() => Object.keys(localStorage).filter((k) => k.startsWith('deniable:report:'))")
    assert keys == ["deniable:report:paged:many"]


def test_a_hidden_question_sends_nothing_and_send_finds_a_missing_answer_on_its_page(page, live_server, paged_survey,
                                                                                     db_path):
    requests = record_requests(page)
    page.set_viewport_size({"width": 390, "height": 800})
    page.goto(f"{live_server}/s/paged")
    page.wait_for_selector("#submit-answers:not([disabled])", state="attached", timeout=10_000)
    assert axe_violations(page) == []  # the first page, with Next and the progress bar, on a phone
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390  # no sideways scrolling
    page.check("#consent-agree")
    page.get_by_label("No", exact=True).check()
    page.click("#page-next")
    assert visible(page) == ["age"] and progress(page) == ("Page 2 of 2", 2, 2)
    page.click("#submit-answers")  # age is required: Send says so on its page, nothing is sent
    assert visible(page) == ["age"] and page.inner_text("#age-error") != ""
    page.fill("#age-value", "30")
    with page.expect_navigation(url="**/s/paged/thanks"):
        page.click("#submit-answers")
    bodies = [parse_qs(r.post_data, keep_blank_values=True) for r in requests if r.method == "POST"]
    assert len(bodies) == 1 and set(bodies[0]) == {"csrf_token", "smoke", "age"}
    assert stored_reports(db_path) == [{"smoke": 1, "age": 12}]


def test_without_javascript_every_question_shows_on_one_page_with_its_condition_in_words(browser, live_server,
                                                                                       paged_survey):
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(f"{live_server}/s/paged")
        shown = [f.get_attribute("data-qid") for f in page.query_selector_all("fieldset.question") if f.is_visible()]
        assert shown == ["smoke", "kinds", "many", "pipe", "age"]
        assert page.is_hidden("#page-nav") and page.is_hidden("#page-progress")
        assert page.inner_text("#pipe-condition") == "Answer this only if you answered “Pipe” to question 2."
    finally:
        context.close()


def test_the_builder_picker_lists_earlier_direct_questions_and_the_panel_plans_on_the_reach(page, live_server, app,
                                                                                         researcher):
    from support.browser import builder_page
    from support.dashboard import make_survey

    definition = {"slug": "habits", "title": "Habits", "questions": [
        {"id": "smoke", "text": "Do you smoke?", "options": ["Yes", "No"]},
        {"id": "drugs", "text": "Used drugs?", "options": ["Yes", "No"], "epsilon": 1.0},
        {"id": "kinds", "text": "Which?", "type": "multi", "options": ["Pipe", "Cigar"]},
        {"id": "many", "text": "How many?", "options": ["1-5", "6+"], "epsilon": 2.0,
         "show_if": {"question": "smoke", "in": ["Yes"]}}]}
    with builder_page(page, live_server) as logged_in:
        make_survey(app, definition, status="draft")
        logged_in.goto(f"{live_server}/dashboard/habits/edit")
        options = "(s) => Array.from(document.querySelector(s).options, (o) => o.value)"
        assert logged_in.evaluate(options, "#questions-3-show_if_question") == ["", "smoke", "kinds"]
        assert logged_in.evaluate(options, "#questions-1-show_if_question") == ["", "smoke"]
        logged_in.click("#question-2-line")  # a saved draft's cards open closed (issue 39): open kinds
        logged_in.check("#questions-2-protection-0")  # kinds becomes protected: no longer listed
        assert logged_in.evaluate(options, "#questions-3-show_if_question") == ["", "smoke"]
        logged_in.fill("#target_n", "1000")
        logged_in.click("#question-3-line")
        logged_in.fill("#questions-3-reach", "40")
        note = logged_in.locator("#question-3 .plan-reach")
        note.wait_for(timeout=10_000)
        assert note.inner_text().startswith("Planned on the 400 respondents expected to reach this question "
                                            "(40 % of 1,000)")
        assert "at 400 respondents" in logged_in.inner_text("#question-3 .plan-panel")


def test_question_numbers_count_only_the_questions_asked(page, live_server, paged_survey):
    """A walkthrough found "10." then "12." around a hidden question: numbers count what is asked."""
    page.goto(f"{live_server}/s/paged")
    page.wait_for_selector("#submit-answers:not([disabled])", state="attached", timeout=10_000)
    numbers = """() => Object.fromEntries(Array.from(document.querySelectorAll("fieldset.question:not([disabled])"))
      .map((f) => [f.dataset.qid, f.querySelector(".question-number").textContent]))"""
    assert page.evaluate(numbers) == {"smoke": "1.", "age": "2."}  # kinds, many and pipe are not asked
    page.get_by_label("Sometimes", exact=True).check()
    assert page.evaluate(numbers) == {"smoke": "1.", "kinds": "2.", "many": "3.", "age": "4."}
    page.get_by_label("No", exact=True).check()
    assert page.evaluate(numbers) == {"smoke": "1.", "age": "2."}
