"""In chromium, under the Content-Security-Policy: the regression and monitoring pages, an owner
publishing through the forms, and the public page a visitor without an account sees."""

from __future__ import annotations

import pytest

from conftest import ARTIFACTS
from deniable.server.store.responses import insert_many
from deniable.server.store.surveys import get_survey
from support.browser import log_in, watched_page
from support.dashboard import make_survey, open_db, sample_columns

pytestmark = pytest.mark.browser


def test_analysis_publish_and_public_pages_in_chromium(app, browser, live_server, researcher):
    make_survey(app, status="open", target_n=900)
    db = open_db(app)
    try:
        stored = get_survey(db, "habits")
        for seed, day in enumerate(("2026-03-01", "2026-03-02", "2026-03-03")):
            insert_many(db, stored, sample_columns(300, seed=seed), submitted_on=day)
    finally:
        db.conn.close()
    context, page, problems = watched_page(browser)
    try:
        log_in(page, live_server)

        page.goto(f"{live_server}/dashboard/habits/results")
        with page.expect_navigation():
            page.click("text=Regression")
        page.fill("#formula", "cheat ~ age")
        with page.expect_navigation():
            page.click("button:has-text('Fit')")
        assert page.locator("table.coefficients tbody tr").count() == 4  # 2 options × (Intercept, age[30+])
        assert page.locator("svg.estimate-bars").count() == 1
        assert page.locator("svg.estimate-bars").bounding_box()["width"] > 300
        page.screenshot(path=str(ARTIFACTS / "regression.png"), full_page=True)

        page.goto(f"{live_server}/dashboard/habits/monitoring?question=drugs")
        assert page.locator("svg.sequence-band").count() == 2
        assert page.locator("svg.sequence-band circle.marker").count() == 6  # 3 days × 2 options
        assert "that is why the band is wider" in page.locator("p.why-wider").inner_text()
        page.screenshot(path=str(ARTIFACTS / "monitoring.png"), full_page=True)

        page.goto(f"{live_server}/dashboard/habits/results?monitoring=1")
        assert page.locator("text=method confidence-sequence").count() == 3  # every question

        page.goto(f"{live_server}/dashboard/habits/results")
        with page.expect_navigation():
            page.click("text=Publish")
        page.fill("#budget", "2")
        with page.expect_navigation():
            page.click("button:has-text('Set budget')")
        page.fill("#counts-age", "1")
        page.fill("#top-age", "0.5")
        page.fill("#groups-drugs-age", "0.5")
        with page.expect_navigation():
            page.click("button:has-text('Release')")
        assert page.locator("strong.spent").inner_text() == "2"
        page.fill("#counts-age", "0.1")
        with page.expect_navigation():
            page.click("button:has-text('Release')")
        assert "refused, nothing was released" in page.locator("p.errors").inner_text()
        for label in ("regression", "monitoring", "results", "publish"):
            for violation in page.evaluate("window.__cspViolations"):
                problems.append(f"{label}: CSP violation {violation}")
    finally:
        context.close()

    visitor, public, public_problems = watched_page(browser)  # no account, another device
    try:
        response = public.goto(f"{live_server}/r/habits")
        assert response.status == 200
        assert public.locator("table.released-counts tbody tr").count() == 2
        assert "ε = 2" in public.locator("strong.budget").inner_text()
        assert public.locator("p.top-answer strong").inner_text() in ("<30", "30+")
        assert public.locator("svg.estimate-bars").count() == 2  # the protected questions
        first = public.locator("table.released-counts").inner_text()
        public.reload()
        assert public.locator("table.released-counts").inner_text() == first  # drawn once
        public.screenshot(path=str(ARTIFACTS / "public.png"), full_page=True)
        public_problems += [f"public: CSP violation {v}" for v in public.evaluate("window.__cspViolations")]
    finally:
        visitor.close()
    assert problems == [] and public_problems == []
