"""The builder in chromium with randomized-response designs: a single choice's "Randomization" shows
ε for k-ary randomized response and the chosen design's fields otherwise; the live panel shows the
design's realized ε and its precision as /dashboard/plan.json computes them (the server's code), says
what is wrong with a parameter, and the saved draft keeps the design."""

from __future__ import annotations

import json
import math

import pytest

from deniable.server.store.surveys import get_survey
from deniable.server.survey.definition import parse_question
from support.browser import log_in
from support.dashboard import open_db

pytestmark = pytest.mark.browser


@pytest.fixture
def builder(page, live_server, researcher):
    """``page`` logged in (as support.browser.builder_page), failing afterwards on any page error or
    console error but the 400s of /dashboard/plan.json: a bad design parameter is the server saying why."""
    errors = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" and "status of 400" not in m.text
            else None)
    page.on("requestfinished", lambda r: errors.append(f"{r.url}") if r.response().status == 400
            and "/dashboard/plan.json?" not in r.url else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_viewport_size({"width": 1280, "height": 900})
    log_in(page, live_server)
    yield page
    assert errors == []


def panel_says(page, i: int, text: str) -> None:
    page.wait_for_function("([i, text]) => document.getElementById(`plan-${i}`).textContent.includes(text)",
                           arg=[i, text])


def needed(design: dict, options: list[str]) -> int:
    """The respondents a design needs for ± 5 points, by the server's own planner (DesignedChoice.plan)."""
    q = parse_question({"id": "q", "text": "q", "options": options, "design": design})
    return q.qtype.plan(q, 1000, 0.05)["needed"]


def test_the_live_panel_shows_each_designs_epsilon_and_precision(builder, live_server, app):
    page = builder
    page.goto(f"{live_server}/dashboard/new")
    page.fill("#title", "Designs live")
    page.fill("#questions-0-text", "Have you ever cheated in an exam?")
    page.fill("#questions-0-qid", "cheated")
    page.fill("#questions-0-options", "Yes\nNo")
    page.fill("#questions-0-epsilon", "1")
    panel_says(page, 0, "realized ε = 1.0000")
    assert not page.locator("#questions-0-design_p").is_visible()
    # forced response with unequal forced shares: ε = ln 5 (the report "No": (0.6 + 0.15)/0.15)
    page.check("#questions-0-randomization-1")
    assert not page.locator("#questions-0-epsilon").is_visible()
    page.fill("#questions-0-design_p", "0,6")  # a comma is a decimal point
    page.fill("#questions-0-design_forced", "0.25\n0.15")
    panel_says(page, 0, f"ε = {math.log(5):.4f}")
    forced = needed({"name": "forced", "p": 0.6, "forced": [0.25, 0.15]}, ["Yes", "No"])
    panel_says(page, 0, f"{forced:,}")
    assert "forced response" in page.inner_text("#plan-0")
    page.wait_for_function("() => document.getElementById('total-epsilon-value').textContent === '1.609'")
    # a share that makes the sum miss 1: the panel says so, in the server's words
    page.fill("#questions-0-design_forced", "0.25\n0.25")
    panel_says(page, 0, "must add up to 1")
    # decimals that add up to 1 only as typed (0.62 + 0.23 + 0.15 in binary floats does not): ε = ln(0.77/0.15)
    page.fill("#questions-0-design_p", "0.62")
    page.fill("#questions-0-design_forced", "0.23\n0.15")
    panel_says(page, 0, f"ε = {math.log(0.77 / 0.15):.4f}")
    page.fill("#questions-0-design_p", "0,6")
    page.fill("#questions-0-design_forced", "0.25\n0.25")
    panel_says(page, 0, "must add up to 1")
    # Warner's design: only p; p = 1/2 says nothing (a singular design)
    page.check("#questions-0-randomization-2")
    assert not page.locator("#questions-0-design_forced").is_visible()
    page.fill("#questions-0-design_p", "0.5")
    panel_says(page, 0, "must not be 1/2")
    page.fill("#questions-0-design_p", "0.75")
    panel_says(page, 0, f"ε = {math.log(3):.4f}")
    panel_says(page, 0, f"{needed({'name': 'warner', 'p': 0.75}, ['Yes', 'No']):,}")
    page.wait_for_function("() => document.getElementById('total-epsilon-value').textContent === '1.099'")
    # Kuk's two decks: their own two fields, and p hidden
    page.check("#questions-0-randomization-4")
    assert not page.locator("#questions-0-design_p").is_visible()
    page.fill("#questions-0-design_theta_1", "0.7")
    page.fill("#questions-0-design_theta_2", "0.3")
    panel_says(page, 0, f"ε = {math.log(7 / 3):.4f}")
    assert "Kuk's two decks" in page.inner_text("#plan-0")
    # back to k-ary randomized response at ε, and to Warner again
    page.check("#questions-0-randomization-0")
    assert page.locator("#questions-0-epsilon").is_visible()
    panel_says(page, 0, "realized ε = 1.0000")
    page.check("#questions-0-randomization-2")
    panel_says(page, 0, f"ε = {math.log(3):.4f}")
    with page.expect_navigation():
        page.click("#save")
    assert page.url.endswith("/dashboard/designs-live/edit")
    question = get_survey(open_db(app), "designs-live").survey.questions[0]
    assert json.loads(question.design) == {"name": "warner", "p": 0.75}
    assert page.locator("#questions-0-randomization-2").is_checked()  # the saved draft opens with its design
    panel_says(page, 0, f"ε = {math.log(3):.4f}")


def test_each_type_offers_only_the_designs_it_can_use(builder, live_server, app):
    """A check-all question is not offered the respondent-side crosswise model (a tick would need its own private
    fact), a single choice is; switching a question to check-all while that design is chosen falls back to
    randomized response at ε, so the saved draft holds what was shown."""
    page = builder
    page.goto(f"{live_server}/dashboard/new")
    page.fill("#title", "Offered designs")
    page.fill("#questions-0-text", "Which of these have you used?")
    page.fill("#questions-0-qid", "used")
    page.fill("#questions-0-options", "Cannabis\nCocaine")
    respondent_side = page.locator("label:has(#questions-0-randomization-6)")
    device_side = page.locator("label:has(#questions-0-randomization-5)")
    assert respondent_side.is_visible() and device_side.is_visible()  # a single choice: both crosswise models
    page.check("#questions-0-randomization-6")
    page.check("#questions-0-kind-2")  # check all that apply
    assert not respondent_side.is_visible() and device_side.is_visible()
    assert page.locator("#questions-0-randomization-0").is_checked()
    assert page.locator("#questions-0-epsilon").is_visible()
    page.check("#questions-0-kind-0")  # back to a single choice: offered again
    assert respondent_side.is_visible()
    page.check("#questions-0-kind-2")
    page.fill("#questions-0-epsilon", "2")
    with page.expect_navigation():
        page.click("#save")
    assert page.url.endswith("/dashboard/offered-designs/edit")
    question = get_survey(open_db(app), "offered-designs").survey.questions[0]
    assert (question.qtype.name, question.design, question.epsilon) == ("multi", None, 2.0)
    assert not respondent_side.is_visible() and page.locator("#questions-0-randomization-0").is_checked()
