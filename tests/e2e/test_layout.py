"""Layout in chromium at 1280 and 390 px: no page scrolls sideways, chart labels are at least 12 px
as drawn, options are 48 px tap targets and long question texts stay inside their card."""

from __future__ import annotations

import pytest

from support.browser import log_in
from support.pages import DASHBOARD_PAGES, RESPONDENT_PAGES, SMALLEST_CHART_TEXT, no_sideways_scroll, populate

pytestmark = pytest.mark.browser


@pytest.fixture
def pages_app(app, db_path):
    populate(db_path)
    return app


@pytest.mark.parametrize("width", [390, 1280])
def test_no_dashboard_page_scrolls_sideways_and_chart_text_is_legible(browser, live_server, pages_app, width):
    context = browser.new_context(viewport={"width": width, "height": 844})
    problems = []
    try:
        page = context.new_page()
        log_in(page, live_server)
        for label, path in DASHBOARD_PAGES[1:]:
            page.goto(live_server + path)
            if no_sideways_scroll(page) > 0:
                problems.append(f"{label}: scrolls {no_sideways_scroll(page)} px sideways at {width} px")
            smallest, text = page.evaluate(SMALLEST_CHART_TEXT)
            if smallest < 12 - 1e-6:
                problems.append(f"{label}: chart text {text!r} is {smallest:.1f} px at {width} px")
        assert 12 <= page.evaluate(SMALLEST_CHART_TEXT)[0] < 40  # the last page (results) has charts: measured
    finally:
        context.close()
    assert problems == []


@pytest.mark.parametrize("width", [390, 1280])
def test_respondent_pages_fit_with_48_px_options_and_wrapping_legends(browser, live_server, pages_app, width):
    context = browser.new_context(viewport={"width": width, "height": 844})
    try:
        page = context.new_page()
        for label, path, _ in RESPONDENT_PAGES:
            page.goto(live_server + path)
            assert no_sideways_scroll(page) == 0, label
        page.goto(f"{live_server}/s/campus-health")
        heights = page.evaluate("() => [...document.querySelectorAll('.option label')]"
                                ".map(l => l.getBoundingClientRect().height)")
        assert heights and min(heights) >= 48
        overflow = page.evaluate("""() => [...document.querySelectorAll('fieldset.question')].filter(f => {
            const card = f.getBoundingClientRect(), legend = f.querySelector('legend').getBoundingClientRect();
            return legend.right > card.right + 0.5 || legend.top < card.top - 0.5; }).length""")
        assert overflow == 0
        long_legend = page.locator("#q-cheat-legend").bounding_box()
        if width == 390:
            assert long_legend["height"] > 40  # the long question wraps over several lines, inside the card
    finally:
        context.close()
