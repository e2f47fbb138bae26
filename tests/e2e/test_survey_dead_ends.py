"""Respondent dead ends in chromium: without JavaScript the notice is the first thing seen at 390 px,
and a number off its rule names the rule (range and step), before anything is sent."""

from __future__ import annotations

import pytest

from deniable.server.store.db import connect
from deniable.server.store.surveys import insert_survey
from deniable.server.survey.definition import parse_definition

pytestmark = pytest.mark.browser

DRINKS = {"slug": "drinks", "title": "Drinks", "information": "We study habits.", "consent": True, "questions": [
    {"id": "days", "text": "On how many days did you drink last month?", "type": "numeric", "min": 0, "max": 30,
     "epsilon": 1.0},
    {"id": "used", "text": "Used drugs?", "options": ["Yes", "No"], "epsilon": 1.0}]}


@pytest.fixture
def open_drinks(app):
    db = connect(app.config["DATABASE"])
    try:
        return insert_survey(db, parse_definition(DRINKS), status="open")
    finally:
        db.conn.close()


def test_without_javascript_the_notice_is_in_the_first_screen_at_390_px(browser, live_server, open_drinks):
    context = browser.new_context(java_script_enabled=False, viewport={"width": 390, "height": 844})
    try:
        page = context.new_page()
        page.goto(f"{live_server}/s/drinks")
        notice = page.locator(".noscript")
        box = notice.bounding_box()
        assert notice.is_visible() and box["y"] + box["height"] <= 844  # seen without scrolling
        assert "needs JavaScript" in notice.inner_text()
    finally:
        context.close()


def test_a_number_off_its_step_names_the_rule(page, live_server, open_drinks):
    page.set_default_timeout(10_000)
    page.goto(f"{live_server}/s/drinks")
    page.wait_for_selector("#submit-answers:not([disabled])")
    page.check("#consent-agree")
    page.fill("#days-value", "2.5")
    page.check("#used-option-0")
    page.click("#submit-answers")
    message = page.locator("#days-error")
    message.wait_for(state="visible")
    assert message.inner_text() == "Please give a whole number from 0 to 30."
    assert page.url.endswith("/s/drinks")  # nothing was sent
