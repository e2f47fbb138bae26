"""Every page works under the Content-Security-Policy: no violation, no console error, in chromium."""

from __future__ import annotations

import pytest

from support.browser import watched_page
from support.dashboard import EMAIL, PASSWORD, make_survey, sample_columns, store_reports

pytestmark = pytest.mark.browser

CROSSTAB_SURVEY = {
    "slug": "pages", "title": "Every page", "description": "",
    "questions": [
        {"id": "drugs", "text": "Drugs?", "options": ["Yes", "No"], "epsilon": 1.0},
        {"id": "cheat", "text": "Cheated?", "options": ["Never", "Once", "Sometimes", "Often"], "epsilon": 2.0},
        {"id": "age", "text": "Age group", "options": ["<30", "30-49", "50+"]},
    ],
}


def test_every_page_runs_under_the_policy(app, browser, live_server, researcher, open_demo):
    stored = make_survey(app, CROSSTAB_SURVEY, status="open")
    store_reports(app, stored.slug, sample_columns())
    # The error page's own 404 is logged to the console; any other failed load is a problem.
    context, page, problems = watched_page(browser)
    # The favicon loads at low priority and is cancelled when the test moves on quickly: not a failure.
    page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url} {r.failure}")
            if not (r.url.endswith("/favicon.svg") and "ERR_ABORTED" in (r.failure or "")) else None)
    visited = []

    def check(label):
        visited.append(label)
        for violation in page.evaluate("window.__cspViolations"):
            problems.append(f"{label}: CSP violation {violation}")

    try:
        page.goto(f"{live_server}/s/demo")
        check("survey page")
        page.check("#drug_use-option-0")
        page.check("#cheating-option-1")
        page.locator("#submit-answers:not([disabled])").wait_for()
        with page.expect_navigation():
            page.click("#submit-answers")
        assert "/thanks" in page.url
        check("thank-you page")
        page.goto(f"{live_server}/s/no-such-survey")
        check("error page")

        page.goto(f"{live_server}/auth/login")
        check("login")
        page.fill("#email", EMAIL)
        page.fill("#password", "not the password")
        with page.expect_navigation():
            page.click("#submit")
        assert page.locator("#password").count() == 1  # the login page again, with its message
        check("login, refused")
        page.fill("#email", EMAIL)
        page.fill("#password", PASSWORD)
        with page.expect_navigation():
            page.click("#submit")
        for label, path in [
            ("dashboard", "/dashboard/"),
            ("new survey", "/dashboard/new"),
            ("edit", "/dashboard/pages/edit"),
            ("results", "/dashboard/pages/results"),
            ("results, options", "/dashboard/pages/results?method=likelihood&confidence=0.99&simultaneous=y"),
            ("cross-tab", "/dashboard/pages/crosstab?row=drugs&col=cheat"),
            ("subgroups", "/dashboard/pages/subgroups?question=cheat&by=age"),
            ("preview", "/dashboard/pages/preview"),
            ("confirm", "/dashboard/pages/confirm?to=close"),
        ]:
            response = page.goto(live_server + path)
            assert response.status == 200, (label, response.status)
            check(label)
        page.goto(f"{live_server}/dashboard/new")
        with page.expect_navigation():
            page.click("#save")  # nothing filled in: the form comes back with its messages
        assert "/dashboard/new" in page.url
        check("new survey, refused")
    finally:
        context.close()
    assert len(visited) == 15
    assert problems == []
