"""The builder's limits in chromium: repeated options and over-long labels are said under their
field as one types (before any save), and the message goes once the line is fixed."""

from __future__ import annotations

import pytest

from support.browser import builder_page

pytestmark = pytest.mark.browser


@pytest.fixture
def builder(page, live_server, researcher):
    with builder_page(page, live_server) as logged_in:
        yield logged_in


def test_repeated_and_long_labels_and_a_long_title_are_said_as_one_types(builder, live_server):
    page = builder
    page.set_default_timeout(10_000)
    page.goto(f"{live_server}/dashboard/new")
    page.wait_for_selector("#design-form[data-ready='true']")
    options = page.locator("#questions-0-options")
    options.fill("Yes\nNo\nYes")
    live = page.locator("#questions-0-options-live")
    assert live.inner_text() == "option 3 repeats option 1 (“Yes”): each line must differ from the others"
    assert options.get_attribute("aria-invalid") == "true"
    assert "questions-0-options-live" in options.get_attribute("aria-describedby")  # read with the field
    options.fill("Yes\n" + "x" * 201)
    assert live.inner_text() == "option 2 has 201 characters: at most 200"
    options.fill("Yes\nNo")
    assert live.is_hidden() and options.get_attribute("aria-invalid") is None
    page.fill("#title", "t" * 201)
    assert page.locator("#title-live").inner_text() == "201 characters: at most 200"
    page.locator("#question-0 input.q-kind[value='list']").check()  # a list experiment's control items too
    page.fill("#questions-0-items", "Walked\nWalked")
    assert "item 2 repeats item 1" in page.locator("#questions-0-items-live").inner_text()
    assert page.url.endswith("/dashboard/new")  # nothing was sent


def test_the_total_warning_and_uninformative_precision_follow_the_edits(builder, live_server):
    page = builder
    page.set_default_timeout(10_000)
    page.goto(f"{live_server}/dashboard/new")
    page.wait_for_selector("#design-form[data-ready='true']")
    warning = page.locator("#total-epsilon-warning")
    assert warning.is_hidden()
    page.fill("#questions-0-text", "Used drugs?")
    page.fill("#questions-0-options", "Yes\nNo")
    page.fill("#questions-0-epsilon", "8")
    warning.wait_for(state="visible")
    assert warning.inner_text().startswith("Warning: At a total ε of 8.000 per respondent, every respondent reads")
    page.fill("#questions-0-epsilon", "1")
    warning.wait_for(state="hidden")
    page.fill("#target_n", "10")
    page.locator("#plan-0 .plan-uninformative").wait_for()
    assert "at 10 respondents this share is known only to within ± " in page.inner_text("#plan-0 .plan-uninformative")
