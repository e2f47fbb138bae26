"""The builder in chromium with every question type: a numeric, a check-all-that-apply and a
list-experiment question are built with their live planning panels, saved and opened; a
respondent answers in Spanish and reads the typed questions' texts in Spanish."""

from __future__ import annotations

import pytest

from deniable.server.store.surveys import get_survey
from support.browser import builder_page, stored_reports
from support.dashboard import open_db

pytestmark = pytest.mark.browser


@pytest.fixture
def builder(page, live_server, researcher):
    with builder_page(page, live_server) as logged_in:
        yield logged_in


def panel_says(page, i: int, text: str) -> None:
    page.wait_for_function("([i, text]) => document.getElementById(`plan-${i}`).textContent.includes(text)",
                           arg=[i, text])


def add_question(page) -> None:
    with page.expect_navigation():
        page.click("#add_question")


def test_build_every_type_open_it_and_answer_in_spanish(builder, live_server, app, browser, db_path):
    page = builder
    page.goto(f"{live_server}/dashboard/new")
    page.fill("#title", "Habits typed")
    # a number: the planner chooses the mechanism; the researcher may override it
    page.check("#questions-0-kind-1")
    assert page.locator("#questions-0-minimum").is_visible() and not page.locator("#questions-0-options").is_visible()
    page.fill("#questions-0-text", "How many drinks last week?")
    page.fill("#questions-0-qid", "drinks")
    page.fill("#questions-0-minimum", "0")
    page.fill("#questions-0-maximum", "40")
    page.fill("#questions-0-epsilon", "1")
    panel_says(page, 0, "the planner's choice")
    assert "discrete Laplace" in page.inner_text("#plan-0 .plan-alternatives")
    page.check("#questions-0-mechanism-2")
    panel_says(page, 0, "your choice")
    page.check("#questions-0-mechanism-0")
    panel_says(page, 0, "the planner's choice")
    # check all that apply: ε split over the options
    add_question(page)
    page.check("#questions-1-kind-2")
    page.fill("#questions-1-text", "Which have you used?")
    page.fill("#questions-1-qid", "used")
    page.fill("#questions-1-options", "Cannabis\nCocaine\nEcstasy")
    page.fill("#questions-1-epsilon", "1.5")
    panel_says(page, 1, "ε/3 = 0.5")
    # a list experiment: plain says so plainly, then protected by ε
    add_question(page)
    page.check("#questions-2-kind-3")
    assert page.locator("#questions-2-items").is_visible() and page.locator("#questions-2-sensitive").is_visible()
    page.fill("#questions-2-text", "How many of these apply to you?")
    page.fill("#questions-2-qid", "shop")
    page.fill("#questions-2-items", "I own a bicycle\nI have been abroad\nI read a book")
    page.fill("#questions-2-sensitive", "I have taken something from a shop")
    page.check("#questions-2-protection-1")
    assert page.locator("#question-2 .only-list-text").is_visible()
    assert not page.locator("#question-1 .only-list-text").is_visible()
    panel_says(page, 2, "Plain list experiment: not protected by ε.")
    page.check("#questions-2-protection-0")
    page.fill("#questions-2-epsilon", "1")
    panel_says(page, 2, "Randomized list experiment, protected by ε")
    page.wait_for_function("() => document.getElementById('total-epsilon-value').textContent === '3.500'")
    with page.expect_navigation():
        page.click("#save")
    assert page.url.endswith("/dashboard/habits-typed/edit")
    survey = get_survey(open_db(app), "habits-typed").survey
    assert [(q.id, q.type, q.epsilon) for q in survey.questions] == [
        ("drinks", "numeric", 1.0), ("used", "multi", 1.5), ("shop", "list", 1.0)]
    assert page.locator("#questions-2-kind-3").is_checked()  # the saved draft opens in the builder
    with page.expect_navigation():
        page.click("#open-survey")
    with page.expect_navigation():
        page.click("#confirm-action")
    assert get_survey(open_db(app), "habits-typed").status == "open"

    context = browser.new_context(locale="es-ES")
    try:
        respondent = context.new_page()
        respondent.goto(f"{live_server}/s/habits-typed")
        respondent.wait_for_selector("#submit-answers:not([disabled])")
        text = respondent.inner_text("#survey-form")
        for spanish in ("Tu respuesta, de 0 a 40:", "Marca todas las que correspondan (o ninguna).",
                        "¿Cuántas de estas afirmaciones se aplican a ti? No digas cuáles."):
            assert spanish in text, spanish
        respondent.fill("#drinks-value", "41")
        respondent.get_by_label("Cannabis", exact=True).check()
        respondent.check("#shop-count-1")
        respondent.click("#submit-answers")
        respondent.wait_for_selector("#drinks-error:not([hidden])")
        assert respondent.inner_text("#drinks-error") == "Indica un número entero de 0 a 40."  # whole numbers: step 1
        assert stored_reports(db_path) == []
        respondent.fill("#drinks-value", "12")
        with respondent.expect_navigation(url="**/s/habits-typed/thanks"):
            respondent.click("#submit-answers")
        respondent.wait_for_selector("#sent-table tr[data-qid]:not([hidden])")
        assert "elementos mostrados)" in respondent.inner_text("#sent-table")
        assert len(stored_reports(db_path)) == 1
    finally:
        context.close()
