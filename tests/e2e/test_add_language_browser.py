"""A language added after launch, in chromium: on the launched survey's design page the researcher chooses
Spanish under "Add a language", fills some texts (each input labelled with the original words), and a
respondent then finds Spanish on the survey page's language switch and reads the survey in it (the texts left
empty in the original words); axe finds no serious violation on the launched page, before and after."""

from __future__ import annotations


import pytest
from support.browser import researcher_context, serious_axe_violations
from support.dashboard import make_survey

pytestmark = pytest.mark.browser

DEFINITION = {
    "slug": "habits", "title": "Habits", "description": "A test survey.", "contact": "ethics@example.org",
    "questions": [
        {"id": "drugs", "text": "Used drugs this year?", "options": ["Yes", "No"], "epsilon": 1.0},
        {"id": "age", "text": "Age group", "options": ["Under 30", "30 or older"]},
    ],
    "translations": {"fr": {"title": "Habitudes", "questions": {
        "drugs": {"text": "Avez-vous consommé des drogues cette année ?", "options": ["Oui", "Non"]}}}},
}


def test_add_spanish_on_the_launched_page_and_read_the_survey_in_it(browser, app, live_server, researcher):
    make_survey(app, DEFINITION, status="open")
    with researcher_context(browser, live_server) as (context, page):
        page.goto(f"{live_server}/dashboard/habits/edit")
        assert serious_axe_violations(page) == []
        form = page.locator("#translation-new-form")
        assert page.locator("#add-language-heading").inner_text() == "Add a language"
        assert form.get_by_label("Language").locator("option").all_inner_texts() == ["Spanish (es)"]
        form.get_by_label("Language").select_option("es")
        form.get_by_label("Title: Habits").fill("Hábitos")
        drugs = form.locator("fieldset").nth(0)
        assert drugs.locator("legend").inner_text() == "Question 1 drugs: Used drugs this year?"
        drugs.get_by_label("Question text: Used drugs this year?").fill("¿Consumió drogas este año?")
        drugs.get_by_label("Option 1: Yes").fill("Sí")
        drugs.get_by_label("Option 2: No").fill("No")
        with page.expect_navigation():
            page.click("#add-translation")
        assert "Spanish added." in page.inner_text(".flashes")
        log = page.locator("#change-log tbody tr").all_inner_texts()
        assert any("Spanish: added" in row for row in log), log
        assert page.locator("#translation-es-form").is_visible()  # now fixed like the other translations
        assert page.locator("#translation-new-form").count() == 0  # no language left to add
        assert serious_axe_violations(page) == []
        # a respondent finds Spanish on the switch and reads the survey in it
        survey = context.new_page()
        survey.goto(f"{live_server}/s/habits")
        survey.get_by_role("link", name="Español").click()
        survey.wait_for_selector("#submit-answers:not([disabled])")
        assert survey.locator("html").get_attribute("lang") == "es"
        assert survey.locator("h1").inner_text() == "Hábitos"
        assert survey.get_by_text("¿Consumió drogas este año?").is_visible()
        assert survey.get_by_label("Sí", exact=True).is_visible()
        assert survey.get_by_text("Age group").is_visible()  # left empty: the original words
        assert survey.get_by_label("30 or older", exact=True).is_visible()
