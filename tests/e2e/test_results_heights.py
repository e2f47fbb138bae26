"""The results page of examples/everything.json (13 questions: every type and every design, display logic)
with 1,534 simulated answers, measured in chromium (issue 39): in its default, compact view the page is
under 6,000 px tall at 1280 × 900 and under 12,000 px at 390 × 844
(``document.documentElement.scrollHeight``); at both sizes axe finds no serious or critical violation and
nothing scrolls sideways, in the compact view and with every question open.  The compact line of each
question says what its table says: the first estimate with its interval, and n."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from support.browser import log_in
from support.browser import serious_axe_violations as axe_violations
from support.dashboard import make_survey, open_db

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
SIZES = {(1280, 900): 6000, (390, 844): 12000}
N = 1534
HEIGHTS = {}  # (width, height) → the measured compact height, for the report at the end


@pytest.fixture
def everything(app):
    """examples/everything.json, open, with N answers simulated from examples/everything-truth.json."""
    from deniable.server.store.responses import insert_many
    from deniable.server.survey.simulate import load_truth, simulate_dataset

    stored = make_survey(app, json.loads((ROOT / "examples" / "everything.json").read_text(encoding="utf-8")),
                         status="open", target_n=2000)
    columns = simulate_dataset(stored.survey, load_truth(ROOT / "examples" / "everything-truth.json", stored.survey),
                               N, np.random.default_rng(5)).columns
    db = open_db(app)
    try:
        insert_many(db, stored, columns)
    finally:
        db.conn.close()
    return stored


@pytest.mark.parametrize("size", list(SIZES), ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_compact_results_page_is_short_accessible_and_fits(browser, live_server, researcher, everything, size):
    width, height = size
    context = browser.new_context(viewport={"width": width, "height": height})
    try:
        page = context.new_page()
        log_in(page, live_server)
        page.goto(f"{live_server}/dashboard/everything/results")
        sections = page.locator("section.question-results")
        assert sections.count() == len(everything.survey.questions)
        assert page.locator("details.result-detail[open]").count() == 0  # compact by default
        measured = page.evaluate("document.documentElement.scrollHeight")
        HEIGHTS[size] = measured
        print(f"results page, compact, {width}x{height}: {measured} px")
        assert measured < SIZES[size], f"{measured} px at {width}x{height}"
        assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
        assert axe_violations(page) == []
        # each line: n as the detail says it, and the first estimate with its interval as the table prints them
        for q in everything.survey.questions:
            line = page.inner_text(f"#q-{q.id}-line")
            n = int(page.locator(f"#q-{q.id} span.n").first.get_attribute("data-value"))
            assert f"n = {n:,}" in line, (q.id, line)
            first = page.locator(f"#q-{q.id} table.estimates tbody tr").first
            cell = lambda css: first.locator(css).text_content().strip()  # noqa: E731 — closed: not rendered
            shown = f"{cell('.estimate')} [{cell('.ci-low')}, {cell('.ci-high')}]"
            assert shown in line, (q.id, shown, line)
        assert "n = 1,534" in page.inner_text("#q-year-line")
        # a click opens one question on its chart and table
        page.click("#q-drugs-line")
        assert page.locator("#q-drugs svg.estimate-bars:visible").count() == 1  # one of its two widths
        assert page.locator("#q-drugs table.estimates").is_visible()
    finally:
        context.close()


@pytest.mark.parametrize("size", list(SIZES), ids=lambda s: f"{s[0]}x{s[1]}")
def test_every_question_open_is_accessible_and_fits(browser, live_server, researcher, everything, size):
    width, height = size
    context = browser.new_context(viewport={"width": width, "height": height})
    try:
        page = context.new_page()
        log_in(page, live_server)
        page.goto(f"{live_server}/dashboard/everything/results?view=detail")
        assert page.locator("details.result-detail[open]").count() == len(everything.survey.questions)
        assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
        assert axe_violations(page) == []
        # every chart shown (of its two widths, one) as wide as its card's content at most and, at 1280 px, at
        # least 85 % of it; its text at least 11 px tall as drawn
        problems = page.evaluate("""() => [...document.querySelectorAll("section.question-results figure.chart svg")]
          .filter(svg => svg.getBoundingClientRect().width > 0).flatMap(svg => {
            const card = svg.closest("section").getBoundingClientRect(), box = svg.getBoundingClientRect();
            const out = box.right > card.right + 0.5 ? [`${svg.id}: wider than its card`] : [];
            if (innerWidth >= 1280 && box.width < 0.85 * (card.width - 42))
              out.push(`${svg.closest("section").id}: chart ${box.width} px in a card of ${card.width}`);
            const small = [...svg.querySelectorAll("text")].filter(t => t.textContent.trim()
              && t.getBoundingClientRect().height < 11);
            return small.length ? [...out, `${svg.closest("section").id}: ${small.length} texts under 11 px`] : out;
          })""")
        assert problems == []
        shown = page.locator("section.question-results figure.chart svg:visible")
        assert shown.count() == page.locator("section.question-results figure.chart").count()
    finally:
        context.close()
