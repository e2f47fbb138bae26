"""Accessibility as a test: axe-core (tests/support/axe, from the npm registry) inside chromium on every
respondent and dashboard page, in every state the app shows; no serious or critical violation."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import pytest

from support.browser import log_in
from support.pages import (DASHBOARD_PAGES, FLASH_PAGES, RESPONDENT_PAGES, WEIGHTING_MARGINS, WEIGHTING_PAGE,
                           WEIGHTING_REFUSED, populate)

pytestmark = pytest.mark.browser

AXE = Path(__file__).resolve().parents[1] / "support" / "axe" / "axe.min.js"
# axe-core 4.14.1's published integrity hash of axe.min.js (sri-history.json in the npm package)
AXE_SHA256 = "KTSJmUUM3yhJqOcLeRL8LahahJ2jnA0NU5T1HUqe2Vw="
RUN_AXE = """async () => {
  const result = await axe.run(document, {resultTypes: ["violations"]});
  return result.violations.filter(v => v.impact === "serious" || v.impact === "critical").map(v =>
    `${v.impact} ${v.id}: ${v.help} — ${v.nodes.slice(0, 3).map(n => n.target.join(" ")).join(" | ")}`);
}"""


def test_the_vendored_axe_is_the_published_one():
    digest = base64.b64encode(hashlib.sha256(AXE.read_bytes()).digest()).decode()
    assert digest == AXE_SHA256


def axe_violations(page) -> list[str]:
    # Injected through the DevTools protocol (page.evaluate), not a <script>: the page's CSP stays as it is.
    if not page.evaluate("() => typeof axe !== 'undefined'"):
        page.evaluate(AXE.read_text(encoding="utf-8"))
    return page.evaluate(RUN_AXE)


@pytest.fixture
def pages_app(app, db_path):
    populate(db_path)
    return app


@pytest.mark.parametrize("width", [1280, 390])
def test_every_respondent_page_has_no_serious_violation(browser, live_server, pages_app, width):
    problems = []
    for label, path, language in RESPONDENT_PAGES:
        context = browser.new_context(locale=language, viewport={"width": width, "height": 900})
        try:
            page = context.new_page()
            page.goto(live_server + path)
            problems += [f"{label}: {v}" for v in axe_violations(page)]
        finally:
            context.close()
    assert problems == []


@pytest.mark.parametrize("width", [1280, 390])
def test_every_dashboard_page_has_no_serious_violation(browser, live_server, pages_app, width):
    context = browser.new_context(viewport={"width": width, "height": 900})
    problems = []
    try:
        page = context.new_page()
        page.goto(f"{live_server}/auth/login")
        problems += [f"login: {v}" for v in axe_violations(page)]
        log_in(page, live_server)
        for label, path in DASHBOARD_PAGES[1:]:
            response = page.goto(live_server + path)
            assert response.status == 200, (label, response.status)
            problems += [f"{label}: {v}" for v in axe_violations(page)]
        # and the states a failed action leaves: the builder's error summary, a refused wording fix
        page.goto(f"{live_server}/dashboard/new")
        page.fill("#title", "Broken")
        page.fill("#questions-0-text", "A question?")
        page.fill("#questions-0-options", "Yes\nNo")
        page.fill("#questions-0-epsilon", "one")
        with page.expect_navigation():
            page.click("#save")
        assert page.locator("#error-summary").count() == 1
        problems += [f"builder with errors: {v}" for v in axe_violations(page)]
        page.goto(f"{live_server}/dashboard/old-survey/edit")
        page.fill("#wording-questions-0-options-0", "No")  # option 2's label: refused
        with page.expect_navigation():
            page.click("#fix-wording")
        assert page.locator("#error-summary").count() == 1
        problems += [f"refused wording fix: {v}" for v in axe_violations(page)]
        problems += _flash_and_weighting_states(page, live_server)
    finally:
        context.close()
    assert problems == []


def _post_weighting(page, live_server, shares: dict) -> None:
    """Fill the Weighting page's margins and send them (a real form POST)."""
    page.goto(live_server + WEIGHTING_PAGE[1])
    for name, value in shares.items():
        page.fill(f"[name='{name}']", value)
    with page.expect_navigation():
        page.click("form.weighting-form button[type=submit]")


def _flash_and_weighting_states(page, live_server) -> list[str]:
    """The states of pages with a flash message, the Weighting page (empty, weighted, refused) and the
    builder's live checks; each checked to be in that state before axe runs."""
    problems = []
    for label, path, words in FLASH_PAGES:
        page.goto(live_server + path)
        assert words in page.inner_text(".flashes"), label
        problems += [f"{label}: {v}" for v in axe_violations(page)]
    page.goto(f"{live_server}/dashboard/draft-survey/edit")
    with page.expect_navigation():
        page.click("#duplicate-survey")
    assert "Copied as the draft" in page.inner_text(".flashes")
    problems += [f"flash: duplicated: {v}" for v in axe_violations(page)]
    label, path = WEIGHTING_PAGE
    response = page.goto(live_server + path)
    assert response.status == 200
    problems += [f"{label}: {v}" for v in axe_violations(page)]
    _post_weighting(page, live_server, WEIGHTING_MARGINS)
    assert page.locator("#raking-title").count() == 1
    problems += [f"{label}, weighted: {v}" for v in axe_violations(page)]
    _post_weighting(page, live_server, WEIGHTING_REFUSED)
    assert page.locator("[aria-invalid='true'], .errors").count() >= 1
    problems += [f"{label}, refused margins: {v}" for v in axe_violations(page)]
    page.goto(f"{live_server}/dashboard/new")
    page.fill("#questions-0-options", "Yes\nYes")  # builder.js says so under the field
    page.locator("#questions-0-options-live li").wait_for()
    problems += [f"builder, live check: {v}" for v in axe_violations(page)]
    return problems
