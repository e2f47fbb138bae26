"""Server-rendered SVG: well-formed, whiskers where the numbers say, the ε-DP region's vertices."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import pytest

from deniable.server.web.dashboard import charts

SVG = "{http://www.w3.org/2000/svg}"


def parse(markup) -> ET.Element:
    return ET.fromstring(str(markup))


def test_estimate_bars_is_well_formed_svg_with_a_title_and_text_values():
    svg = parse(charts.estimate_bars(["Yes", "No <&>"], [0.3, 0.7], [0.25, 0.62], [0.36, 0.75],
                                     title="Q1 & friends", chart_id="c1"))
    assert svg.tag == f"{SVG}svg"
    assert svg.get("role") == "img"
    assert svg.find(f"{SVG}title").text == "Q1 & friends"
    texts = [t.text for t in svg.iter(f"{SVG}text")]
    assert "No <&>" in texts  # escaped in the markup, the label intact once parsed
    assert "30.0% [25.0%, 36.0%]" in texts and "70.0% [62.0%, 75.0%]" in texts
    # Legible without colour: every bar is hatched by a pattern, not only coloured.
    assert all(r.get("fill") == "url(#c1-hatch)" for r in svg.iter(f"{SVG}rect") if r.get("class") == "bar")
    assert svg.find(f".//{SVG}pattern").get("id") == "c1-hatch"


def test_whiskers_sit_at_the_interval_ends_for_known_numbers():
    # Domain [0, 0.8] (0.75 rounds up to 0.8): x = 6 + value / 0.8 * PLOT_W.
    svg = parse(charts.estimate_bars(["a", "b"], [0.3, 0.7], [0.2, 0.6], [0.4, 0.75], title="t"))
    assert charts.axis_domain([0.3, 0.7], [0.2, 0.6], [0.4, 0.75]) == (0.0, 0.8)
    whiskers = [g for g in svg.iter(f"{SVG}g") if g.get("class") == "whisker"]
    assert len(whiskers) == 2
    expected = [(0.2, 0.4), (0.6, 0.75)]
    for row, (g, (low, high)) in enumerate(zip(whiskers, expected)):
        span = next(line for line in g if line.get("class") == "whisker-span")
        y = charts.bar_y(row) + 20 + charts.BAR_H / 2
        assert float(span.get("x1")) == pytest.approx(6 + low / 0.8 * charts.PLOT_W, abs=0.01)
        assert float(span.get("x2")) == pytest.approx(6 + high / 0.8 * charts.PLOT_W, abs=0.01)
        assert float(span.get("y1")) == float(span.get("y2")) == pytest.approx(y)
        caps = [line for line in g if line.get("class") == "whisker-cap"]
        assert sorted(float(c.get("x1")) for c in caps) == pytest.approx(
            [6 + low / 0.8 * charts.PLOT_W, 6 + high / 0.8 * charts.PLOT_W], abs=0.01)
    bars = [r for r in svg.iter(f"{SVG}rect") if r.get("class") == "bar"]
    assert float(bars[0].get("x")) == pytest.approx(6)
    assert float(bars[0].get("width")) == pytest.approx(0.3 / 0.8 * charts.PLOT_W, abs=0.01)


def all_charts():
    return [
        charts.estimate_bars(["Yes", "No"], [0.3, 0.7], [0.2, 0.6], [0.4, 0.75], title="t"),
        charts.grouped_bars(["Never", "Often"], [
            {"label": "<30", "n": 120, "estimate": [0.6, 0.4], "ci_low": [0.5, 0.3], "ci_high": [0.7, 0.5]},
            {"label": "not answered", "n": 0, "estimate": [0, 0], "ci_low": [0, 0], "ci_high": [0, 0]}],
            title="g"),
        charts.heatmap(["Yes", "No"], ["Never", "Once", "Often"], [[0.1, 0.2, 0.05], [0.3, 0.25, 0.1]],
                       [[0.0, 0.1, 0.0], [0.2, 0.15, 0.0]], [[0.2, 0.3, 0.1], [0.4, 0.35, 0.2]], title="h"),
        charts.dp_region(1.0),
    ]


@pytest.mark.parametrize("chart", all_charts())
def test_every_label_is_at_least_12_units_and_the_svg_is_drawn_at_its_size(chart):
    """Drawn at its own size (width = viewBox width), a label of 12 units is 12 px on screen."""
    svg = parse(chart)
    assert svg.get("width") == svg.get("viewBox").split()[2]
    sizes = [float(t.get("font-size")) for t in svg.iter(f"{SVG}text")]
    assert sizes and min(sizes) >= 12


def test_grouped_bars_put_each_group_side_by_side_per_option():
    svg = parse(all_charts()[1])
    groups = [g for g in svg.iter(f"{SVG}g") if g.get("class") == "group"]
    assert [(g.get("data-group"), g.get("data-option")) for g in groups] == [("<30", "0"), ("<30", "1")]
    texts = [t.text for t in svg.iter(f"{SVG}text")]
    assert "not answered (n = 0): no respondents" in texts and "60.0% [50.0%, 70.0%]" in texts


def test_heatmap_cells_carry_their_numbers_and_darker_means_larger():
    svg = parse(all_charts()[2])
    cells = [g for g in svg.iter(f"{SVG}g") if g.get("class") == "cell"]
    assert len(cells) == 6
    fills = {(c.get("data-row"), c.get("data-col")): c.find(f"{SVG}rect").get("fill") for c in cells}
    assert charts.HEAT.index(fills[("1", "0")]) > charts.HEAT.index(fills[("0", "2")])
    texts = [t.text for t in svg.iter(f"{SVG}text")]
    assert "30.0%" in texts and "20.0–40.0" in texts


def test_a_negative_unbiased_estimate_extends_the_axis_below_zero():
    domain = charts.axis_domain([-0.03, 1.03], [0.0, 0.9], [0.1, 1.0])
    assert domain == (-0.1, 1.1)
    svg = parse(charts.estimate_bars(["a", "b"], [-0.03, 1.03], [0.0, 0.9], [0.1, 1.0], title="t"))
    bar = next(r for r in svg.iter(f"{SVG}rect") if r.get("class") == "bar")
    zero = charts.bar_x(0.0, domain)
    assert float(bar.get("x")) + float(bar.get("width")) == pytest.approx(zero, abs=0.02)


@pytest.mark.parametrize("epsilon", [0.1, math.log(3), 1.0, 2.5])
def test_dp_region_vertices_for_a_given_epsilon(epsilon):
    corner = 1 / (1 + math.exp(epsilon))
    vertices = charts.dp_region_vertices(epsilon)
    assert vertices == [(0.0, 1.0), pytest.approx((corner, corner)), (1.0, 0.0), (1.0, 1.0)]
    a, b = vertices[1]
    # The corner lies on both boundary lines α + e^ε β = 1 and e^ε α + β = 1.
    assert a + math.exp(epsilon) * b == pytest.approx(1)
    assert math.exp(epsilon) * a + b == pytest.approx(1)

    svg = parse(charts.dp_region(epsilon))
    polygon = next(p for p in svg.iter(f"{SVG}polygon") if p.get("class") == "dp-feasible")
    points = [tuple(map(float, pair.split(","))) for pair in polygon.get("points").split()]
    # Map SVG coordinates back to (α, β).
    back = [((x - charts.REGION_MARGIN) / charts.REGION_SIDE,
             1 - (y - charts.REGION_MARGIN / 2) / charts.REGION_SIDE) for x, y in points]
    for got, want in zip(back, vertices):
        assert got == pytest.approx(want, abs=0.01 / charts.REGION_SIDE * 100)
    assert f"{corner:.3f}" in [t.text for t in svg.iter(f"{SVG}text")]


def test_log3_corner_is_one_quarter():
    assert charts.dp_region_vertices(math.log(3))[1] == pytest.approx((0.25, 0.25))


def test_a_long_label_wraps_whole_over_lines_that_fit():
    label = "Once or twice, but only when the exam was not worth much at"  # 60 characters, words kept whole
    lines = charts.wrap(label, 250)
    assert " ".join(lines) == label and len(lines) > 1
    assert all(charts.text_width(line) <= 250 for line in lines)
    cut = charts.wrap("word " * 40, 100, lines=2)
    assert len(cut) == 2 and cut[-1].endswith("…") and charts.text_width(cut[-1]) <= 100


def test_a_cross_tab_column_label_is_shown_whole():
    svg = parse(charts.heatmap(["Yes", "No"], ["Never", "Once or twice a term"], [[0.1, 0.2], [0.3, 0.4]],
                               [[0.0, 0.1], [0.2, 0.3]], [[0.2, 0.3], [0.4, 0.5]], title="h"))
    heads = [" ".join(t.itertext()) if len(t) else t.text for t in svg.iter(f"{SVG}text") if t.get("class") == "col-label"]
    assert heads[0] == "Never" and " ".join(heads[1].split()) == "Once or twice a term"


@pytest.mark.parametrize("domain", [(0.0, 1.0), (-0.2, 1.0), (-0.1, 1.1), (0.0, 0.1), (-1.0, 2.0)])
def test_the_axis_ticks_include_zero_and_their_labels_keep_apart(domain):
    values = charts.ticks(domain)
    assert 0.0 in values and all(domain[0] - 1e-9 <= v <= domain[1] + 1e-9 for v in values)
    spans = []
    for v in values:
        x, w = charts.bar_x(v, domain), charts.text_width(f"{round(100 * v)}%")
        anchor = charts._tick_anchor(x)
        left = x if anchor == "start" else x - w if anchor == "end" else x - w / 2
        spans.append((left, left + w))
    assert all(b[0] - a[1] >= 8 for a, b in zip(spans, spans[1:]))
