"""In chromium at 390 px: the Weighting page's links to the results, cross-tab and subgroups pages
weighted by the margins just posted, the "Weighted by raking to …" / "Unweighted" switch on each (and
back), the selectors keeping the weights; no serious axe violation in any of these states."""

from __future__ import annotations

import pytest
from support.browser import log_in
from support.pages import WEIGHTING_MARGINS, WEIGHTING_PAGE, populate

from .test_accessibility import axe_violations

pytestmark = pytest.mark.browser


@pytest.fixture
def pages_app(app, db_path):
    populate(db_path, n=600)
    return app


def test_the_weighted_pages_switch_to_unweighted_and_back(browser, live_server, pages_app):
    context = browser.new_context(viewport={"width": 390, "height": 900})
    problems = []
    try:
        page = context.new_page()
        log_in(page, live_server)
        page.goto(live_server + WEIGHTING_PAGE[1])
        for name, value in WEIGHTING_MARGINS.items():
            page.fill(f"[name='{name}']", value)
        with page.expect_navigation():
            page.click("form.weighting-form button[type=submit]")
        kish = page.locator(".raking .effective-n").get_attribute("data-value")

        for name in ("Results", "Cross-tab", "Subgroups"):
            page.goto(live_server + WEIGHTING_PAGE[1])
            for field, value in WEIGHTING_MARGINS.items():
                page.fill(f"[name='{field}']", value)
            with page.expect_navigation():
                page.click("form.weighting-form button[type=submit]")
            with page.expect_navigation():
                page.get_by_role("link", name=f"{name}, weighted").click()
            switch = page.get_by_role("navigation", name="Weighted or unweighted")
            weighted = switch.get_by_role("link", name="Weighted by raking to year")
            assert weighted.get_attribute("aria-current") == "page", name
            assert page.locator(".weighting .kish").get_attribute("data-value") == kish, name
            assert page.locator("table.weighted").count() >= 1, name
            problems += [f"{name}, weighted: {v}" for v in axe_violations(page)]
            with page.expect_navigation():
                switch.get_by_role("link", name="Unweighted").click()
            assert switch.get_by_role("link", name="Unweighted").get_attribute("aria-current") == "page", name
            assert page.locator("table.weighted").count() == 0, name
            problems += [f"{name}, unweighted: {v}" for v in axe_violations(page)]
            with page.expect_navigation():
                switch.get_by_role("link", name="Weighted by raking to year").click()
            assert page.locator("table.weighted").count() >= 1, name

        # the selectors keep the weights: another confidence, still weighted
        page.select_option("#confidence", "0.99")
        with page.expect_navigation():
            page.click("form.selectors button[type=submit]")
        assert page.locator("table.weighted").count() >= 1
        assert "99% intervals" in page.inner_text("table.weighted caption >> nth=0")
        # nothing wider than the phone's screen but the tables' own scrolling boxes
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    finally:
        context.close()
    assert problems == []
