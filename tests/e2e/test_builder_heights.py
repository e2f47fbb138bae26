"""The builder of a long survey reads like a survey tool's (issue 39): each question one line that opens on click.

Measured in chromium on examples/everything.json (every question type and design, 13 questions, a
translation) as ``document.documentElement.scrollHeight``: under 3,000 px at 1280 × 900 with every card
closed (the draft's page as it opens), under 6,000 px at 390 × 844; no sideways scroll and no serious or
critical axe violation at either width, closed and opened.  And the cards behave: a line says the question's
number, id, type, protection and planning n; a click opens it; a link to a field inside a closed card opens
the card; moving a question keeps the focus on its button; every field keeps its name (the form saves as it
was imported).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.browser import builder_page, serious_axe_violations
from support.dashboard import make_survey

pytestmark = pytest.mark.browser

EVERYTHING = json.loads((Path(__file__).resolve().parents[2] / "examples" / "everything.json").read_text())
WIDTHS = {1280: (900, 3000), 390: (844, 6000)}


@pytest.fixture
def builder(page, live_server, researcher):
    with builder_page(page, live_server) as logged_in:
        yield logged_in


def _open_draft(page, live_server, app, width):
    make_survey(app, EVERYTHING)
    page.set_viewport_size({"width": width, "height": WIDTHS[width][0]})
    page.goto(f"{live_server}/dashboard/{EVERYTHING['slug']}/edit")
    page.wait_for_selector("#design-form[data-ready='true']")


def _sideways(page) -> int:
    return page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")


@pytest.mark.parametrize("width", [1280, 390])
def test_the_builder_of_a_long_survey_fits_closed_and_has_no_sideways_scroll(builder, live_server, app, width):
    page = builder
    _open_draft(page, live_server, app, width)
    cards = page.locator("article.question-card")
    assert cards.count() == len(EVERYTHING["questions"]) >= 11
    assert page.locator("details.question-details[open]").count() == 0  # a saved draft opens closed
    height = page.evaluate("() => document.documentElement.scrollHeight")
    print(f"builder, {len(EVERYTHING['questions'])} questions, every card closed, {width} px: {height} px")
    assert height < WIDTHS[width][1], height
    assert _sideways(page) <= 0
    assert serious_axe_violations(page) == []
    # opened, every card still fits the width and axe finds nothing serious
    page.evaluate("() => document.querySelectorAll('details.question-details').forEach((d) => { d.open = true; })")
    opened = page.evaluate("() => document.documentElement.scrollHeight")
    print(f"builder, every card open, {width} px: {opened} px")
    assert opened > height and _sideways(page) <= 0
    assert serious_axe_violations(page) == []


def test_each_line_says_the_question_and_opens_on_click(builder, live_server, app):
    page = builder
    _open_draft(page, live_server, app, 1280)
    ids = [q["id"] for q in EVERYTHING["questions"]]
    for i, qid in enumerate(ids):
        line = page.inner_text(f"#question-{i}-line")
        assert f"Question {i + 1}" in line and qid in line, line
    protections = [page.inner_text(f"#question-{i}-line-protection") for i in range(len(ids))]
    for i, q in enumerate(EVERYTHING["questions"]):
        design = q.get("design")
        if q.get("epsilon") is None and not design and q.get("type") != "two_group":
            assert protections[i] == "asked directly", (q["id"], protections[i])
        elif isinstance(design, dict):
            assert protections[i] != "asked directly" and "ε not set" not in protections[i], (q["id"], protections[i])
        elif q.get("epsilon") is not None:
            assert protections[i] == f"ε = {q['epsilon']:g}", (q["id"], protections[i])
    # the planning n on the line is the panel's
    for i in range(len(ids)):
        needed = page.get_attribute(f"#plan-{i}", "data-needed")
        plan_line = page.inner_text(f"#question-{i}-line-plan")
        if needed and needed.isdigit() and int(needed) > 0:
            assert f"n = {int(needed):,}" in plan_line, (ids[i], plan_line)
    # closed: its fields are hidden; a click on the line opens it
    assert not page.locator("#questions-3-text").is_visible()
    page.click("#question-3-line")
    assert page.locator("#questions-3-text").is_visible()
    # the line follows the fields as one types
    page.fill("#questions-3-epsilon", "0.5")
    assert page.inner_text("#question-3-line-protection") in ("ε = 0.5",) or "ε" in page.inner_text(
        "#question-3-line-protection")
    page.fill("#questions-3-text", "A new wording of the question")
    assert "A new wording of the question" in page.inner_text("#question-3-line-text")
    page.click("#question-3-line")  # and closes again
    assert not page.locator("#questions-3-text").is_visible()
    # every card at once, and back
    page.click("#open-all-questions")
    assert page.locator("details.question-details[open]").count() == len(ids)
    page.click("#close-all-questions")
    assert page.locator("details.question-details[open]").count() == 0


def test_a_link_to_a_field_in_a_closed_card_opens_it(builder, live_server, app):
    page = builder
    _open_draft(page, live_server, app, 1280)
    assert not page.locator("#questions-5-qid").is_visible()
    page.evaluate("""() => { const a = document.createElement("a"); a.href = "#questions-5-qid"; a.id = "jump";
      a.textContent = "jump"; document.querySelector("main").prepend(a); }""")
    page.click("#jump")
    assert page.locator("#questions-5-qid").is_visible()
    page.goto(f"{live_server}/dashboard/{EVERYTHING['slug']}/edit#questions-7-text")
    page.wait_for_selector("#design-form[data-ready='true']")
    assert page.locator("#questions-7-text").is_visible()


def test_a_save_error_opens_its_card_and_the_summary_links_to_the_field(builder, live_server, app):
    page = builder
    _open_draft(page, live_server, app, 1280)
    page.click("#question-2-line")
    page.fill("#questions-2-options", "")
    page.click("#question-2-line")  # closed again before saving: the error must still show
    with page.expect_navigation():
        page.click("#save")
    assert page.locator("#error-summary").count() == 1
    assert page.locator("#question-2-details[open]").count() == 1
    assert page.locator("details.question-details[open]").count() == 1  # the others stay closed
    link = page.locator("#error-summary a[href='#questions-2-options']")
    assert link.count() == 1
    link.click()
    assert page.evaluate("() => document.activeElement.id") == "questions-2-options"


def test_moving_a_closed_question_keeps_the_focus_on_its_button_and_saves_as_imported(builder, live_server, app):
    page = builder
    _open_draft(page, live_server, app, 1280)
    ids = [q["id"] for q in EVERYTHING["questions"]]
    with page.expect_navigation():
        page.click("#questions-4-up")
    page.wait_for_selector("#design-form[data-ready='true']")
    assert page.evaluate("() => document.activeElement.id") == "questions-3-up"
    assert ids[4] in page.inner_text("#question-3-line") and ids[3] in page.inner_text("#question-4-line")
    with page.expect_navigation():
        page.click("#questions-3-down")
    page.wait_for_selector("#design-form[data-ready='true']")
    assert page.evaluate("() => document.activeElement.id") == "questions-4-down"
    # a card open before a move is open after it
    page.click("#question-4-line")
    with page.expect_navigation():
        page.click("#questions-4-up")
    page.wait_for_selector("#design-form[data-ready='true']")
    assert page.locator("#question-3-details[open]").count() == 1 and ids[4] in page.inner_text("#question-3-line")
    assert page.locator("details.question-details[open]").count() == 1
    with page.expect_navigation():
        page.click("#questions-3-down")
    page.wait_for_selector("#design-form[data-ready='true']")
    assert page.locator("#question-4-details[open]").count() == 1
    # back in order; the closed cards' fields save the survey as it was imported
    before = page.evaluate("() => fetch(location.pathname.replace('/edit', '/definition.json')).then((r) => r.text())")
    with page.expect_navigation():
        page.click("#save")
    assert "Draft saved." in page.inner_text("main")
    after = page.evaluate("() => fetch(location.pathname.replace('/edit', '/definition.json')).then((r) => r.text())")
    assert json.loads(after)["questions"] == json.loads(before)["questions"]


def test_without_javascript_the_cards_open_and_an_error_s_card_is_open(browser, live_server, app, researcher):
    """<details> needs no script: a click opens a card, and a failed save's card is open with its error."""
    from support.browser import log_in

    make_survey(app, EVERYTHING)
    context = browser.new_context(java_script_enabled=False, viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        log_in(page, live_server)
        page.goto(f"{live_server}/dashboard/{EVERYTHING['slug']}/edit")
        assert page.locator("details.question-details[open]").count() == 0
        page.click("#question-1-line")
        assert page.locator("#questions-1-epsilon").is_visible()
        page.fill("#questions-1-epsilon", "lots")
        with page.expect_navigation():
            page.click("#save")
        assert page.locator("#error-summary a[href='#questions-1-epsilon']").count() == 1
        assert page.locator("#question-1-details[open]").count() == 1
        assert page.locator("#questions-1-epsilon-errors").is_visible()
    finally:
        context.close()
