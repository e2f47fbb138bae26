"""In chromium, the charts as drawn: no two text boxes of a chart overlap, no text leaves its chart's view
box, and no text lies on a bar or a whisker, at estimates of 0 %, 100 % and below 0, with 60-character
labels, at 1280 and 390 px; and the analysis, publishing and public pages do not scroll sideways at 390 px.

The boxes are measured by the browser (``getBoundingClientRect`` of every ``text``), in the font it
really uses, so the layout's width estimates (:func:`deniable.server.web.dashboard.charts.text_width`)
are checked against real glyphs.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from support.browser import log_in
from support.charts import CHART_PAGE, LONG, extreme_charts
from support.dashboard import DEFINITION, login, make_survey, open_db, post

pytestmark = pytest.mark.browser

WIDTHS = [1280, 390]

# Every problem of every chart on the page, in words ([] when the charts are clean).  Boxes are
# shrunk by half a pixel so that touching is not overlapping.
OVERLAPS = """() => {
  const problems = [];
  const inset = (r, d) => ({left: r.left + d, right: r.right - d, top: r.top + d, bottom: r.bottom - d});
  const meet = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  document.querySelectorAll("svg[viewBox]").forEach((svg, k) => {
    const name = `${svg.getAttribute("class")}#${k}`;
    const frame = svg.getBoundingClientRect();
    const texts = [...svg.querySelectorAll("text")].filter(t => t.textContent.trim());
    const boxes = texts.map(t => inset(t.getBoundingClientRect(), 0.5));
    const marks = [...svg.querySelectorAll("rect.bar, g.whisker line")].map(m => {
      const r = m.getBoundingClientRect();
      return {left: r.left, right: r.right, top: r.top, bottom: r.bottom};
    }).filter(r => r.right - r.left > 0.5);
    boxes.forEach((a, i) => {
      if (a.left < frame.left - 0.5 || a.right > frame.right + 0.5 || a.top < frame.top - 0.5
          || a.bottom > frame.bottom + 0.5)
        problems.push(`${name}: "${texts[i].textContent}" leaves the view box`);
      for (let j = i + 1; j < boxes.length; j++)
        if (meet(a, boxes[j]))
          problems.push(`${name}: "${texts[i].textContent}" overlaps "${texts[j].textContent}"`);
      for (const m of marks)
        if (meet(a, m)) { problems.push(`${name}: "${texts[i].textContent}" lies on a bar or whisker`); break; }
    });
  });
  return problems;
}"""


@pytest.mark.parametrize("width", WIDTHS)
def test_no_text_of_any_chart_overlaps_or_leaves_it_at_the_extremes(browser, width):
    context = browser.new_context(viewport={"width": width, "height": 900})
    try:
        page = context.new_page()
        page.set_content(CHART_PAGE.format(body=extreme_charts()))
        assert page.locator("svg").count() == 8
        assert page.evaluate(OVERLAPS) == []
    finally:
        context.close()


@pytest.fixture
def extreme_survey(app, tmp_path):
    """A survey whose answers to drugs all report its first option (estimates at 100 % and below 0),
    with a 60-character option label of cheat, answered on three days, and a release on its public
    page; and the survey ``typed`` (:func:`typed_survey`)."""
    definition = {**DEFINITION, "questions": [
        DEFINITION["questions"][0],
        {**DEFINITION["questions"][1], "options": ["Never", LONG, "Often"]},
        DEFINITION["questions"][2],
    ]}
    make_survey(app, definition, status="open", target_n=900)
    from deniable.server.store.responses import insert_many
    from deniable.server.store.surveys import get_survey

    rng = np.random.default_rng(3)
    db = open_db(app)
    try:
        stored = get_survey(db, "habits")
        for day in ("2026-03-01", "2026-03-02", "2026-03-03"):
            n = 200  # drugs: always the first option; cheat at random (the regression needs it)
            insert_many(db, stored, {"drugs": np.zeros(n, dtype=int), "cheat": rng.integers(0, 3, n),
                                     "age": rng.integers(0, 2, n)}, submitted_on=day)
    finally:
        db.conn.close()
    typed_survey(app, tmp_path)
    client = app.test_client()
    assert login(client).status_code == 302
    assert post(client, "/dashboard/habits/publish/budget", {"budget": "2"}).status_code == 303
    assert post(client, "/dashboard/habits/publish/release", {"counts-age": "1", "top-age": "0.5",
                                                              "groups-drugs-age": "0.5"}).status_code == 303
    return "habits"


CUPS = {"id": "cups", "text": "How many cups of coffee did you drink yesterday?", "type": "numeric", "min": 0,
        "max": 10, "grid": 5, "epsilon": 2.0}


def typed_survey(app, tmp_path) -> None:
    """examples/habits.json (numeric by a grid of two points and by discrete Laplace, check-all, a list
    experiment) with a numeric question on a grid of six points, as slug ``typed``, 1,500 simulated answers."""
    from deniable.server.store.responses import insert_many
    from deniable.server.survey.simulate import load_truth, simulate_dataset

    root = Path(__file__).resolve().parents[2] / "examples"
    data = json.loads((root / "habits.json").read_text(encoding="utf-8"))
    data = {**data, "slug": "typed", "questions": [*data["questions"], CUPS]}
    stored = make_survey(app, data, status="open")
    truth = {**json.loads((root / "habits-truth.json").read_text(encoding="utf-8")),
             "cups": {"values": [0, 1, 2, 4], "probabilities": [0.3, 0.3, 0.3, 0.1]}}
    (tmp_path / "truth.json").write_text(json.dumps(truth), encoding="utf-8")
    db = open_db(app)
    try:
        columns = simulate_dataset(stored.survey, load_truth(tmp_path / "truth.json", stored.survey), 1500,
                                   np.random.default_rng(5)).columns
        insert_many(db, stored, columns)
    finally:
        db.conn.close()


CHART_PAGES = [
    ("results of every type", "/dashboard/typed/results?view=detail", 5),
    ("results", "/dashboard/habits/results?view=detail", 3),
    ("cross-tab", "/dashboard/habits/crosstab?row=drugs&col=cheat", 2),
    ("subgroups", "/dashboard/habits/subgroups?question=cheat&by=age", 1),
    ("over time", "/dashboard/habits/monitoring?question=cheat", 3),
    ("regression", "/dashboard/habits/regression?formula=cheat+~+age", 1),
    ("public page", "/r/habits", 2),
]
NARROW_PAGES = ["/dashboard/habits/regression?formula=cheat+~+age", "/dashboard/habits/monitoring?question=cheat",
                "/dashboard/habits/publish", "/r/habits"]


@pytest.mark.parametrize("width", WIDTHS)
def test_the_charts_of_every_analysis_page_keep_their_text_apart(browser, live_server, researcher, extreme_survey,
                                                                 width):
    context = browser.new_context(viewport={"width": width, "height": 900})
    problems = []
    try:
        page = context.new_page()
        log_in(page, live_server)
        for label, path, count in CHART_PAGES:
            response = page.goto(live_server + path)
            assert response.status == 200, (label, response.status)
            assert page.locator("svg[viewBox]").count() >= count, label
            problems += [f"{label}: {p}" for p in page.evaluate(OVERLAPS)]
        if width == 390:
            for path in NARROW_PAGES:
                page.goto(live_server + path)
                scroll = page.evaluate("() => document.documentElement.scrollWidth")
                if scroll > 390:
                    problems.append(f"{path} is {scroll} px wide")
        # the check itself finds what it looks for
        page.set_content('<svg viewBox="0 0 100 40" width="100" height="40"><text x="5" y="15">overlap</text>'
                         '<text x="8" y="17">overlap</text><text x="90" y="35">outside</text></svg>')
        found = page.evaluate(OVERLAPS)
        assert any("overlaps" in f for f in found) and any("leaves the view box" in f for f in found)
    finally:
        context.close()
    assert problems == [], "\n".join(problems)


def png_size(data: bytes) -> tuple[int, int]:
    """A PNG's width and height, from its IHDR chunk (the first, right after the signature)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def test_every_chart_downloads_as_svg_and_as_a_png_made_in_the_browser(browser, live_server, researcher,
                                                                        extreme_survey):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    try:
        page = context.new_page()
        violations = []
        page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
        log_in(page, live_server)
        for path, count in (("/dashboard/typed/results?view=detail", 5),  # every question open ("/dashboard/habits/crosstab?row=drugs&col=cheat", 2),
                            ("/dashboard/habits/subgroups?question=cheat&by=age", 1),
                            ("/dashboard/habits/monitoring?question=cheat", 1),
                            ("/dashboard/habits/regression?formula=cheat+~+age", 1)):
            page.goto(live_server + path)
            blocks = page.locator("p.chart-downloads")
            assert blocks.count() >= count, path
            for i in range(count):
                block = blocks.nth(i)
                with page.expect_download() as svg_download:
                    block.locator("a").click()
                svg = Path(svg_download.value.path()).read_text(encoding="utf-8")
                assert svg.startswith('<?xml version="1.0"') and "</svg>" in svg
                assert svg_download.value.suggested_filename.endswith(".svg")
                width = float(svg.split('viewBox="0 0 ', 1)[1].split()[0])
                height = float(svg.split('viewBox="0 0 ', 1)[1].split()[1].rstrip('"'))
                button = block.locator("button.chart-png")
                assert button.is_visible()
                with page.expect_download() as png_download:
                    button.click()
                data = Path(png_download.value.path()).read_bytes()
                assert len(data) > 1000
                assert png_size(data) == (round(2 * width), round(2 * height))
                assert png_download.value.suggested_filename == svg_download.value.suggested_filename[:-4] + ".png"
        assert violations == []
    finally:
        context.close()
