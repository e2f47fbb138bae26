"""Each chart of the result pages as an SVG file: behind the login like the page, the page's own
chart, a 404 for a chart the page would not draw, a 400 naming a bad option; and the page's
numbers with one minus sign."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from deniable.server.web.dashboard import charts, formatting
from support.dashboard import DEFINITION, make_survey, sample_columns, store_reports

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def habits(app):
    make_survey(app, status="open")
    store_reports(app, "habits", sample_columns(600))


URLS = ["/dashboard/habits/results/chart/q1.svg", "/dashboard/habits/crosstab/chart/joint.svg?row=drugs&col=cheat",
        "/dashboard/habits/crosstab/chart/conditional.svg?row=drugs&col=cheat",
        "/dashboard/habits/subgroups/chart.svg?question=cheat&by=age",
        "/dashboard/habits/regression/chart/effect0.svg?formula=cheat+~+age",
        "/dashboard/habits/monitoring/chart/band1.svg?question=cheat"]


@pytest.mark.parametrize("url", URLS)
def test_a_chart_file_needs_a_login(client, habits, url):
    response = client.get(url)
    assert response.status_code == 302 and "/auth/login" in response.headers["Location"]


@pytest.mark.parametrize("url", URLS)
def test_a_chart_file_is_the_pages_chart_as_a_standalone_svg(auth_client, habits, url):
    response = auth_client.get(url)
    assert response.status_code == 200
    assert response.mimetype == "image/svg+xml"
    assert response.headers["Content-Disposition"].startswith('attachment; filename="habits-')
    body = response.get_data(as_text=True)
    assert body.startswith('<?xml version="1.0" encoding="UTF-8"?>')
    svg = ET.fromstring(body.split("\n", 1)[1])
    assert svg.tag == f"{SVG}svg" and "sans-serif" in svg.get("font-family")
    page_url = re.sub(r"/chart(/[a-z]+[0-9]*)?\.svg", "", url)
    page = auth_client.get(page_url).get_data(as_text=True)
    title = svg.find(f"{SVG}title")
    assert title.get("id") in page  # the same chart as on the page
    assert f'href="{url.split("?")[0]}' in page  # and the page links to it


def test_the_question_page_chart_keeps_the_pages_options(auth_client, habits):
    body = auth_client.get("/dashboard/habits/results/chart/q1.svg?method=wilson&confidence=0.99").get_data(
        as_text=True)
    assert "99% wilson intervals" in body


def test_a_chart_the_page_does_not_draw_is_refused_saying_why(app, auth_client, habits):
    missing = auth_client.get("/dashboard/habits/results/chart/q9.svg")
    assert missing.status_code == 404 and "position" in missing.get_data(as_text=True)
    assert auth_client.get("/dashboard/nope/results/chart/q0.svg").status_code == 404
    refused = auth_client.get("/dashboard/habits/results/chart/q0.svg?confidence=2")
    assert refused.status_code == 400 and "confidence" in refused.get_data(as_text=True)
    same = auth_client.get("/dashboard/habits/crosstab/chart/joint.svg?row=drugs&col=drugs")
    assert same.status_code == 400 and "two different questions" in same.get_data(as_text=True)
    make_survey(app, {**DEFINITION, "slug": "empty"}, status="open")
    empty = auth_client.get("/dashboard/empty/results/chart/q0.svg")
    assert empty.status_code == 409 and "no answers yet" in empty.get_data(as_text=True)


@pytest.mark.parametrize("value, shown", [(-0.0312, "−3.1%"), (-0.00001, "0.0%"), (-0.0, "0.0%"), (0.5, "50.0%"),
                                          (float("nan"), "—"), (None, "—")])
def test_percentages_on_pages_have_one_minus_sign_and_no_negative_zero(value, shown):
    assert formatting.pct(value) == shown


@pytest.mark.parametrize("text, shown", [("-0.0000", "0.0000"), ("-263.96", "−263.96"), ("−0.00", "0.00"),
                                         ("12", "12"), ("-1,234.5", "−1,234.5")])
def test_signed_numbers(text, shown):
    assert formatting.signed(text) == shown


def test_charts_draw_negative_numbers_with_the_minus_sign():
    markup = str(charts.estimate_bars(["a", "b"], [-0.031, 0.6], [-0.2, 0.5], [0.05, 0.7], title="t"))
    assert "−20%" in markup and "−3.1% [−20.0%, 5.0%]" in markup
    assert "-2" not in markup.split("</title>")[1].replace('data-', '').split('"')[0]


def test_a_scale_chart_shows_the_mean_with_its_interval_and_says_what_a_two_point_grid_cannot():
    record = {"min": 0, "max": 30, "step": 1, "n": 500,
              "mean": {"headline": 6.3, "ci_low": 4.9, "ci_high": 7.75},
              "distribution": [{"value": 0.0, "headline": 0.79, "ci_low": 0.74, "ci_high": 0.84},
                               {"value": 30.0, "headline": 0.21, "ci_low": 0.16, "ci_high": 0.26}]}
    svg = ET.fromstring(str(charts.scale_chart(record, title="drinks")))
    texts = ["".join(t.itertext()) for t in svg.iter(f"{SVG}text")]
    assert "Mean 6.3 [4.9, 7.8]" in texts
    assert not any("79" in t for t in texts)  # the grid ends are not drawn as a distribution
    assert any(t.startswith("Only the mean is estimated") for t in texts)
    point = next(c for c in svg.iter(f"{SVG}circle") if c.get("class") == "mean-point")
    # x runs from 12 (min) to 328 (max): 6.3 of 30
    assert float(point.get("cx")) == pytest.approx(12 + 6.3 / 30 * 316, abs=0.01)
    record["distribution"] = [{"value": float(v), "headline": p, "ci_low": p - 0.05, "ci_high": p + 0.05}
                              for v, p in zip(range(0, 31, 5), [0.3, 0.3, 0.2, 0.1, 0.05, 0.03, 0.02])]
    svg = ET.fromstring(str(charts.scale_chart(record, title="drinks")))
    columns = [r for r in svg.iter(f"{SVG}rect") if "column" in (r.get("class") or "")]
    assert [float(c.get("data-value")) for c in columns] == [0, 5, 10, 15, 20, 25, 30]
    heights = [float(c.get("height")) for c in columns]
    assert heights[0] == pytest.approx(heights[1]) and heights[0] == pytest.approx(charts.NUMERIC_COLUMNS_H, rel=0.35)
    assert heights[2] / heights[0] == pytest.approx(2 / 3, abs=0.01)


def test_the_public_page_links_each_released_chart_as_an_svg_file_without_login(app, habits):
    owner = app.test_client()
    from support.dashboard import login, post

    assert login(owner).status_code == 302
    assert post(owner, "/dashboard/habits/publish/release", {"protected-only": "1"}).status_code == 303
    visitor = app.test_client()  # no account
    page = visitor.get("/r/habits").get_data(as_text=True)
    assert 'href="/r/habits/chart/drugs.svg"' in page and 'href="/r/habits/chart/cheat.svg"' in page
    response = visitor.get("/r/habits/chart/cheat.svg")
    assert response.status_code == 200 and response.mimetype == "image/svg+xml"
    assert response.headers["Content-Disposition"] == 'attachment; filename="habits-cheat.svg"'
    svg = ET.fromstring(response.get_data(as_text=True).split("\n", 1)[1])
    assert svg.find(f"{SVG}title").get("id") in page
    assert visitor.get("/r/habits/chart/age.svg").status_code == 404  # asked directly: no chart
    assert visitor.get("/r/nope/chart/cheat.svg").status_code == 404
