"""The builder in chromium with a two-group design (issue 38): the researcher picks the model, the p fields
follow it (two, or four labelled for CDMsym; the unrelated question for UQTunknown only), fills p, sees the
planning panel update with deniable.estimators.plan_two_group's numbers, and saves; axe finds no serious or
critical violation on the page with the fields and their errors."""

from __future__ import annotations

import pytest

from deniable.estimators import plan_two_group
from deniable.server.store.surveys import get_survey
from support.browser import builder_page, serious_axe_violations
from support.dashboard import open_db

pytestmark = pytest.mark.browser


@pytest.fixture
def builder(page, live_server, researcher):
    with builder_page(page, live_server) as logged_in:
        yield logged_in


def panel_says(page, i: int, text: str) -> None:
    page.wait_for_function("([i, text]) => document.getElementById(`plan-${i}`).textContent.includes(text)",
                           arg=[i, text])


def test_pick_the_model_fill_p_see_the_panel_and_save(builder, live_server, app):
    page = builder
    page.goto(f"{live_server}/dashboard/new")
    page.fill("#title", "Honesty")
    page.check("#questions-0-protection-1")  # "asked directly" under another type: a two-group design has no "Asked"
    page.check('#question-0 input.q-kind[value="two_group"]')
    assert "is-direct" not in page.get_attribute("#question-0", "class")
    assert page.locator("#questions-0-group_model").is_visible()
    assert not page.locator("#questions-0-options").is_visible() and not page.locator("#questions-0-epsilon").is_visible()
    page.fill("#questions-0-text", "Have you ever copied someone's homework?")
    page.fill("#questions-0-qid", "copied")
    # CDM: two p fields, each labelled by what the instruction says
    assert page.locator("label[for='questions-0-group_p1']").inner_text() == "group 1: told to say Yes"
    assert not page.locator("#questions-0-group_p3").is_visible()
    assert not page.locator("#questions-0-unrelated").is_visible()
    page.fill("#questions-0-group_p1", "0.3")
    page.fill("#questions-0-group_p2", "0,7")
    exact = plan_two_group("CDM", [0.3, 0.7], 0.05)
    panel_says(page, 0, f"{exact.n:,}")
    panel_says(page, 0, f"{round(100 * exact.share)} % in group 1 minimizes n")
    panel_says(page, 0, "not ε-LDP")
    # CDMsym: four fields, labelled per group and instruction; the panel follows
    page.select_option("#questions-0-group_model", "CDMsym")
    assert page.locator("#questions-0-group_p4").is_visible()
    labels = [page.locator(f"label[for='questions-0-group_p{i}']").inner_text() for i in range(1, 5)]
    assert labels == ["group 1: told to say Yes", "group 1: told to say No", "group 2: told to say Yes",
                      "group 2: told to say No"]
    page.fill("#questions-0-group_p1", "0.2")
    page.fill("#questions-0-group_p2", "0.3")
    page.fill("#questions-0-group_p3", "0.3")
    page.fill("#questions-0-group_p4", "0.2")
    sym = plan_two_group("CDMsym", [0.2, 0.3, 0.3, 0.2], 0.05)
    wald = plan_two_group("CDMsym", [0.2, 0.3, 0.3, 0.2], 0.05, interval="wald")
    panel_says(page, 0, f"{sym.n:,}")
    panel_says(page, 0, f"{wald.n:,}")
    panel_says(page, 0, "ε = 1.2528")
    page.wait_for_function("() => document.getElementById('total-epsilon-value').textContent === '1.253'")
    # UQTunknown shows the unrelated question; back to CDMsym to save
    page.select_option("#questions-0-group_model", "UQTunknown")
    assert page.locator("#questions-0-unrelated").is_visible() and not page.locator("#questions-0-group_p4").is_visible()
    page.select_option("#questions-0-group_model", "CDMsym")
    # a group's Yes and No above 1: the server's message at the field, the page still accessible
    page.fill("#questions-0-group_p4", "0.8")
    with page.expect_navigation():
        page.click("#save")
    assert "group 2's yes and no probabilities must sum to at most 1" in page.inner_text("#questions-0-group_p4-errors")
    assert page.locator("#questions-0-group_p4").get_attribute("aria-invalid") == "true"
    assert serious_axe_violations(page) == []
    page.fill("#questions-0-group_p4", "0.2")
    page.fill("#questions-0-group_share", "0.4")
    with page.expect_navigation():
        page.click("#save")
    assert page.url.endswith("/dashboard/honesty/edit")
    copied = get_survey(open_db(app), "honesty").survey.questions[0]
    assert copied.to_dict() == {"id": "copied", "text": "Have you ever copied someone's homework?", "type": "two_group",
                                "model": "CDMsym", "p": [0.2, 0.3, 0.3, 0.2], "group_share": 0.4}
    # the saved draft opens in the builder with its model and p, and its panel
    assert page.locator("#questions-0-group_model").input_value() == "CDMsym"
    assert page.locator("#questions-0-group_p3").input_value() == "0.3"
    panel_says(page, 0, f"{sym.n:,}")
    assert serious_axe_violations(page) == []
