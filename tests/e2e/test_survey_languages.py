"""A survey in several languages, answered in chromium: the switch on the page, the browser's language,
and the report sent — the option's index, whatever language the option was read in."""

from __future__ import annotations


import pytest
from support.browser import stored_reports, serious_axe_violations
from support.dashboard import make_survey

pytestmark = pytest.mark.browser

DEFINITION = {
    "slug": "habits", "title": "Habits", "description": "A test survey.",
    "questions": [
        {"id": "drugs", "text": "Used drugs this year?", "options": ["Yes", "No"], "epsilon": 1.0},
        {"id": "age", "text": "Age group", "options": ["Under 30", "30 to 44", "45 or older"]},
    ],
    "translations": {
        "es": {"title": "Hábitos", "questions": {
            "drugs": {"text": "¿Consumió drogas este año?", "options": ["Sí", "No"]},
            "age": {"text": "Grupo de edad", "options": ["Menos de 30", "De 30 a 44", "45 o más"]}}},
        "fr": {"title": "Habitudes", "questions": {
            "drugs": {"text": "Avez-vous consommé des drogues cette année ?", "options": ["Oui", "Non"]},
            "age": {"text": "Tranche d’âge", "options": ["Moins de 30 ans", "De 30 à 44 ans", "45 ans ou plus"]}}},
    },
}




def ready(page):
    page.wait_for_selector("#submit-answers:not([disabled])")


def test_switching_language_mid_survey_then_sending(page, app, live_server, db_path):
    make_survey(app, DEFINITION, status="open")
    page.goto(f"{live_server}/s/habits")
    ready(page)
    assert page.locator("html").get_attribute("lang") == "en" and page.locator("h1").inner_text() == "Habits"
    page.get_by_label("30 to 44", exact=True).check()
    page.get_by_label("Yes", exact=True).check()
    with page.expect_navigation(url="**/s/habits?lang=es"):
        page.click("#language-switch a[lang=es]")
    ready(page)
    assert page.locator("html").get_attribute("lang") == "es" and page.locator("h1").inner_text() == "Hábitos"
    assert page.locator("#language-switch [aria-current=page]").inner_text() == "Español"
    # the switch opens the page anew: what was ticked before is not carried over (true answers are never
    # stored, not even to survive a new page), and nothing was drawn or kept yet
    assert not page.get_by_label("De 30 a 44", exact=True).is_checked()
    assert page.evaluate("() => localStorage.length + sessionStorage.length") == 0
    page.get_by_label("De 30 a 44", exact=True).check()
    page.get_by_label("Sí", exact=True).check()
    with page.expect_navigation(url="**/s/habits/thanks?lang=es"):
        page.click("#submit-answers")
    [reports] = stored_reports(db_path)
    assert reports["age"] == 1  # "De 30 a 44" is option 1, as "30 to 44" is
    assert reports["drugs"] in (0, 1)
    assert page.evaluate("() => localStorage.getItem('deniable:report:habits:drugs')") == str(reports["drugs"])
    # the thank-you page, in Spanish, names what was sent by its Spanish label
    assert page.locator("html").get_attribute("lang") == "es"
    page.wait_for_selector("#sent-table tr[data-qid]:not([hidden])")
    assert page.locator("tr[data-qid]:not([hidden]) td.sent-label").all_inner_texts() == [
        ["Sí", "No"][reports["drugs"]], "De 30 a 44"]


def test_a_french_browser_reads_french_and_may_switch_to_english(browser, app, live_server, db_path):
    make_survey(app, DEFINITION, status="open")
    context = browser.new_context(locale="fr-FR", viewport={"width": 390, "height": 800})
    try:
        page = context.new_page()
        page.goto(f"{live_server}/s/habits")
        ready(page)
        assert page.locator("html").get_attribute("lang") == "fr" and page.locator("h1").inner_text() == "Habitudes"
        assert page.get_by_role("button", name="Envoyer mes réponses").is_visible()
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390  # the switch fits a phone
        assert serious_axe_violations(page) == []
        with page.expect_navigation(url="**/s/habits?lang=en"):
            page.click("#language-switch a[lang=en]")
        ready(page)
        assert page.locator("h1").inner_text() == "Habits"
        page.get_by_label("45 or older", exact=True).check()
        page.get_by_label("No", exact=True).check()
        with page.expect_navigation(url="**/s/habits/thanks?lang=en"):
            page.click("#submit-answers")
        [reports] = stored_reports(db_path)
        assert reports["age"] == 2 and reports["drugs"] in (0, 1)
    finally:
        context.close()
