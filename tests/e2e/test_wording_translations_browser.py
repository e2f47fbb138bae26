"""A translation fixed after launch, in chromium: the researcher corrects a French question text and an
option on the launched survey's design page, the change log lists it, and a respondent reading the survey
in French sees the new words (the same design: the option is still the same index)."""

from __future__ import annotations


import pytest
from support.browser import researcher_context, serious_axe_violations
from support.dashboard import make_survey

pytestmark = pytest.mark.browser

DEFINITION = {
    "slug": "habits", "title": "Habits", "description": "A test survey.",
    "questions": [
        {"id": "drugs", "text": "Used drugs this year?", "options": ["Yes", "No"], "epsilon": 1.0},
        {"id": "age", "text": "Age group", "options": ["Under 30", "30 or older"]},
    ],
    "translations": {"fr": {"title": "Habitudes", "questions": {
        "drugs": {"text": "Avez-vous consomé des drogues cette année ?", "options": ["Oui", "Non"]},
        "age": {"text": "Tranche d’âge", "options": ["Moins de 30 ans", "30 ans et plus"]}}}},
}


def test_fix_the_french_text_on_the_launched_page_and_read_it_in_french(browser, app, live_server, researcher):
    make_survey(app, DEFINITION, status="open")
    with researcher_context(browser, live_server) as (context, page):
        page.goto(f"{live_server}/dashboard/habits/edit")
        assert serious_axe_violations(page) == []
        form = page.locator("#translation-fr-form")
        assert form.get_by_role("heading").inner_text() == "French fr"
        drugs, age = form.locator("fieldset").nth(0), form.locator("fieldset").nth(1)
        assert drugs.locator("legend").inner_text() == "Question 1 drugs: Used drugs this year?"
        text = drugs.get_by_label("Question text")
        assert text.input_value() == "Avez-vous consomé des drogues cette année ?"
        text.fill("Avez-vous consommé des drogues cette année ?")
        age.get_by_label("Option 2").fill("30 ans ou plus")
        with page.expect_navigation():
            page.click("#fix-translation-fr")
        assert "French text fixed." in page.inner_text(".flashes")
        log = page.locator("#change-log tbody tr").all_inner_texts()
        assert any("French: Question 1 (drugs), text" in row and "consommé" in row for row in log), log
        assert any("French: Question 2 (age), option 2" in row and "30 ans ou plus" in row for row in log), log
        # a respondent reading French sees the new words at once
        survey = context.new_page()
        survey.goto(f"{live_server}/s/habits?lang=fr")
        survey.wait_for_selector("#submit-answers:not([disabled])")
        assert survey.locator("html").get_attribute("lang") == "fr"
        assert survey.get_by_text("Avez-vous consommé des drogues cette année ?").is_visible()
        assert survey.get_by_label("30 ans ou plus", exact=True).is_visible()
        assert survey.get_by_text("consomé").count() == 0
        # a refused fix: the error names the language and the field and leads to it
        page.goto(f"{live_server}/dashboard/habits/edit")
        page.locator("#translation-fr-form fieldset").nth(0).get_by_label("Question text").fill("")
        page.click("#fix-translation-fr")
        page.wait_for_selector("#error-summary")
        link = page.locator("#error-summary a")
        assert link.inner_text() == "French, Question 1, text: must not be empty"
        link.click()
        assert page.evaluate("() => location.hash") == "#translation-fr-questions-0-text"
        assert page.locator("#translation-fr-questions-0-text").get_attribute("aria-invalid") == "true"
        assert serious_axe_violations(page) == []
