"""In chromium: log in, design a survey, open it, answer it on the survey page, read the chart."""

from __future__ import annotations

import pytest

from conftest import ARTIFACTS
from support.dashboard import EMAIL, PASSWORD

pytestmark = pytest.mark.browser


def respond(browser, base: str, slug: str, option: int) -> None:
    """One respondent on a fresh device (its own browser context)."""
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(f"{base}/s/{slug}")
        page.check(f"#secret-option-{option}")
        page.locator("#submit-answers:not([disabled])").wait_for()
        with page.expect_navigation():
            page.click("#submit-answers")
        assert page.url.startswith(f"{base}/s/{slug}")
    finally:
        context.close()


def test_design_open_answer_and_read_the_chart(browser, page, live_server, researcher):
    errors = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.goto(f"{live_server}/dashboard/")
    assert "/auth/login" in page.url
    page.fill("#email", EMAIL)
    page.fill("#password", PASSWORD)
    with page.expect_navigation():
        page.click("#submit")
    assert page.url.endswith("/dashboard/")

    page.goto(f"{live_server}/dashboard/new")
    page.fill("#title", "Secrets")
    assert page.input_value("#slug") == "secrets"  # made from the title as it is typed
    page.fill("#target_n", "10")
    page.fill("#questions-0-text", "Have you ever kept a secret?")
    assert page.input_value("#questions-0-qid") == "kept_secret"
    page.fill("#questions-0-qid", "secret")
    page.fill("#questions-0-options", "Yes\nNo")
    page.fill("#questions-0-epsilon", "1.5")
    with page.expect_navigation():
        page.click("#save")
    assert page.url.endswith("/dashboard/secrets/edit")
    assert page.locator("svg.dp-region").count() == 1  # the ε-DP region beside the question's ε
    assert "Total ε per respondent" in page.inner_text("#total-epsilon")

    with page.expect_navigation():
        page.click("#open-survey")
    assert "/dashboard/secrets/confirm?to=open" in page.url and "What becomes frozen" in page.inner_text("main")
    with page.expect_navigation():
        page.click("#confirm-action")
    assert page.url.endswith("/dashboard/secrets/edit#share-title")
    assert page.input_value("#public-url") == f"{live_server}/s/secrets"
    assert page.locator(".share-box svg.qr-code").is_visible()

    for option in (0, 1, 0):
        respond(browser, live_server, "secrets", option)

    page.goto(f"{live_server}/dashboard/secrets/results?method=wilson")
    assert page.inner_text("#respondents") == "3"
    line = page.inner_text("#q-secret-line")  # the compact view: one line, opened by a click for the chart and table
    assert "n = 3" in line and page.locator("#q-secret svg.estimate-bars:visible").count() == 0
    page.click("#q-secret-line")
    chart = page.locator("#q-secret svg.estimate-bars:visible")  # drawn at two widths, one shown
    chart.wait_for()
    assert chart.locator("g.whisker").count() == 2
    assert chart.locator("rect.bar").count() == 2
    values = chart.locator("text.value").all_text_contents()
    table = page.locator("#q-secret table.estimates")
    for row, value in zip(table.locator("tbody tr").all(), values, strict=True):
        estimate = row.locator(".estimate").inner_text()
        low, high = row.locator(".ci-low").inner_text(), row.locator(".ci-high").inner_text()
        assert value == f"{estimate} [{low}, {high}]"  # the chart and the table say the same, in percent
        exact = float(row.locator(".ci-low").get_attribute("data-value"))
        assert low == f"{100 * exact:.1f}%"
    first = table.locator("tbody tr").first
    assert (f"{first.locator('.estimate').inner_text()} [{first.locator('.ci-low').inner_text()}, "
            f"{first.locator('.ci-high').inner_text()}]") in line  # the line says the first option's numbers
    assert page.locator("#q-secret .meta").inner_text().startswith("n = 3")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "results.png"), full_page=True)
    assert not [e for e in errors if "Content Security Policy" in e], errors
