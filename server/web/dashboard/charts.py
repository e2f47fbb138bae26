"""Server-rendered SVG: estimate bars with interval whiskers, grouped bars for subgroups, a
heat-map for cross-tabs, and the ε-DP error region.

No script, no ``style`` attributes (the Content-Security-Policy forbids inline style), only
presentation attributes.  Legible without colour: bars are hatched, every bar and cell carries
its label and its numbers as text, whiskers have end caps.  Legible on a phone: the charts are
340 units wide and drawn at that size (they shrink only in a narrower column), with text of at
least 13 units, so labels are never smaller than 12 px on a 390 px screen.  Numbers read by people
are percentages with one decimal; the exact values sit in ``data-`` attributes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from markupsafe import Markup, escape

from deniable.server.survey.questions.base import pct

TEXT = 13  # font size of every label, in SVG units (= px at the drawn size)
WIDTH = 340  # the bar charts' width
PAD = 6
BAR_TOP = 30  # room for the axis ticks above the rows
ROW_H = 46  # a label line across the chart, then the bar with its whisker and, at the right, the numbers
BAR_H = 14
BAR_BOTTOM = 8
HEADER_H = 24  # an option's heading in the grouped chart
VALUE_W = 142  # room for "100.0% [100.0%, 100.0%]" at the right of the bars
PLOT_W = WIDTH - 2 * PAD - VALUE_W
LABEL_CHARS = 44

# DP region: the unit square of (α, β) mapped to a REGION_SIDE square with a margin.
REGION_SIDE = 180
REGION_MARGIN = 44


def _f(x: float) -> str:
    return f"{x:.2f}".rstrip("0").rstrip(".") if math.isfinite(x) else "0"


def _nice_ceiling(x: float) -> float:
    """Round up to the next multiple of 0.1 (at least 0.1), so ticks fall on round numbers."""
    return max(0.1, math.ceil(round(x * 10, 9)) / 10)


def axis_domain(estimates: Sequence[float], ci_low: Sequence[float], ci_high: Sequence[float]) -> tuple[float, float]:
    """The axis range: from min(0, lowest value) to a round number above the highest."""
    values = [v for v in (*estimates, *ci_low, *ci_high) if math.isfinite(v)]
    low = min([0.0, *values])
    high = max([0.0, *values])
    lo = -_nice_ceiling(-low) if low < 0 else 0.0
    return lo, _nice_ceiling(high)


def bar_x(value: float, domain: tuple[float, float]) -> float:
    """The x coordinate of ``value`` on the bar charts' axis."""
    lo, hi = domain
    return PAD + (value - lo) / (hi - lo) * PLOT_W


def _shorten(label: str, limit: int = LABEL_CHARS) -> str:
    return label if len(label) <= limit else label[: limit - 1] + "…"


def _hatch(pattern: str, fill: str = "#dbe4f0", stroke: str = "#2b4a75") -> str:
    return (f'<pattern id="{pattern}" width="6" height="6" patternUnits="userSpaceOnUse" '
            f'patternTransform="rotate(45)"><rect width="6" height="6" fill="{fill}"/>'
            f'<line x1="0" y1="0" x2="0" y2="6" stroke="{stroke}" stroke-width="2"/></pattern>')


def _axis(domain: tuple[float, float], bottom: float) -> list[str]:
    lo, hi = domain
    step = 0.1 if hi - lo <= 0.5 else 0.2 if hi - lo <= 1.2 else 0.5
    axis_y = BAR_TOP - 8
    out = [f'<line class="axis" x1="{_f(bar_x(lo, domain))}" y1="{axis_y}" x2="{_f(bar_x(hi, domain))}" '
           f'y2="{axis_y}" stroke="#333" stroke-width="1"/>']
    ticks = int(math.floor((hi - lo) / step + 1e-9))
    for i in range(ticks + 1):
        value = lo + i * step
        x = bar_x(value, domain)
        anchor = "start" if i == 0 else "end" if x > PAD + PLOT_W - 14 else "middle"
        out.append(f'<line class="tick" x1="{_f(x)}" y1="{axis_y - 3}" x2="{_f(x)}" y2="{_f(bottom)}" '
                   'stroke="#c4c9d2" stroke-width="0.75"/>')
        out.append(f'<text class="tick-label" x="{_f(x)}" y="{axis_y - 6}" font-size="{TEXT}" '
                   f'text-anchor="{anchor}">{100 * value:.0f}%</text>')
    return out


def _bar_row(y: float, label: str, est: float, low: float, high: float, domain, pattern: str) -> list[str]:
    """One row: the label and the numbers on a line, the bar and its whisker below."""
    lo, hi = domain
    zero = bar_x(0.0, domain)
    x_est = bar_x(min(max(est, lo), hi), domain)
    x0, x1 = sorted((zero, x_est))
    bar_y = y + 20
    mid = bar_y + BAR_H / 2
    xl, xh = bar_x(min(max(low, lo), hi), domain), bar_x(min(max(high, lo), hi), domain)
    cap = BAR_H / 2 + 2
    return [
        f'<text class="label" x="{PAD}" y="{_f(y + 14)}" font-size="{TEXT}">{escape(_shorten(label))}</text>',
        f'<text class="value" x="{WIDTH - PAD}" y="{_f(bar_y + BAR_H - 2)}" font-size="{TEXT}" text-anchor="end" '
        f'data-estimate="{float(est)!r}">{pct(est)} [{pct(low)}, {pct(high)}]</text>',
        f'<rect class="bar" x="{_f(x0)}" y="{_f(bar_y)}" width="{_f(x1 - x0)}" height="{BAR_H}" '
        f'fill="url(#{pattern})" stroke="#2b4a75" stroke-width="1"/>',
        f'<g class="whisker" data-ci-low="{low!r}" data-ci-high="{high!r}" stroke="#000" stroke-width="1.5">'
        f'<line class="whisker-span" x1="{_f(xl)}" y1="{_f(mid)}" x2="{_f(xh)}" y2="{_f(mid)}"/>'
        f'<line class="whisker-cap" x1="{_f(xl)}" y1="{_f(mid - cap)}" x2="{_f(xl)}" y2="{_f(mid + cap)}"/>'
        f'<line class="whisker-cap" x1="{_f(xh)}" y1="{_f(mid - cap)}" x2="{_f(xh)}" y2="{_f(mid + cap)}"/>'
        '</g>',
    ]


def _svg_open(css_class: str, width: float, height: float, chart_id: str, title: str) -> list[str]:
    return [f'<svg xmlns="http://www.w3.org/2000/svg" class="{css_class}" viewBox="0 0 {_f(width)} {_f(height)}" '
            f'width="{_f(width)}" height="{_f(height)}" role="img" aria-labelledby="{chart_id}-title">',
            f'<title id="{chart_id}-title">{escape(title)}</title>']


def bar_y(row: int) -> float:
    """The y coordinate of the top of row ``row`` of :func:`estimate_bars`."""
    return BAR_TOP + row * ROW_H


def estimate_bars(labels: Sequence[str], estimates: Sequence[float], ci_low: Sequence[float],
                  ci_high: Sequence[float], *, title: str, chart_id: str = "chart") -> Markup:
    """Horizontal bars of the estimates with whiskers from ``ci_low`` to ``ci_high``, one row per option.

    ``estimates`` are the headlines a page shows (:func:`deniable.server.survey.questions.base.headline`,
    a type's :meth:`~deniable.server.survey.questions.base.QuestionType.chart`): each inside its
    interval, so a bar never ends outside its own whisker; never pass the unbiased estimates, which
    can leave [0, 1].

    ``chart_id`` must be unique on the page (it names the hatch pattern).
    """
    domain = axis_domain(estimates, ci_low, ci_high)
    height = BAR_TOP + len(labels) * ROW_H + BAR_BOTTOM
    pattern = f"{chart_id}-hatch"
    out = _svg_open("estimate-bars", WIDTH, height, chart_id, title)
    out.append(f"<defs>{_hatch(pattern)}</defs>")
    out += _axis(domain, height - BAR_BOTTOM)
    for row, (label, est, low, high) in enumerate(zip(labels, estimates, ci_low, ci_high)):
        out += _bar_row(bar_y(row), label, est, low, high, domain, pattern)
    out.append("</svg>")
    return Markup("".join(out))


def grouped_bars(options: Sequence[str], groups: Sequence[dict], *, title: str, chart_id: str = "grouped") -> Markup:
    """Subgroups side by side: for each option, one bar per group with its whisker.

    ``groups`` are ``{"label", "n", "estimate", "ci_low", "ci_high"}`` (sequences over the
    options); a group with ``n == 0`` is drawn as a row that says so.
    """
    drawn = [g for g in groups if g["n"]]
    domain = axis_domain(*(([v for g in drawn for v in g[key]] or [0.0]) for key in ("estimate", "ci_low", "ci_high")))
    height = BAR_TOP + len(options) * (HEADER_H + len(groups) * ROW_H) + BAR_BOTTOM
    out = _svg_open("grouped-bars", WIDTH, height, chart_id, title)
    patterns = [f"{chart_id}-g{i}" for i in range(len(groups))]
    fills = [("#dbe4f0", "#2b4a75"), ("#f3e2cf", "#7a4a12"), ("#dcefe3", "#1f5d3a"), ("#ece0f2", "#5b2c73")]
    out.append("<defs>" + "".join(_hatch(p, *fills[i % len(fills)]) for i, p in enumerate(patterns)) + "</defs>")
    out += _axis(domain, height - BAR_BOTTOM)
    y = BAR_TOP
    for i, option in enumerate(options):
        out.append(f'<text class="option-heading" x="{PAD}" y="{_f(y + 17)}" font-size="{TEXT + 1}" '
                   f'font-weight="700">{escape(_shorten(option, 40))}</text>')
        y += HEADER_H
        for g, group in enumerate(groups):
            label = f"{group['label']} (n = {group['n']:,})"
            if group["n"]:
                out.append(f'<g class="group" data-group="{escape(group["label"])}" data-option="{i}">')
                out += _bar_row(y, label, group["estimate"][i], group["ci_low"][i], group["ci_high"][i],
                                domain, patterns[g])
                out.append("</g>")
            else:
                out.append(f'<text class="label" x="{PAD}" y="{_f(y + 14)}" font-size="{TEXT}">'
                           f'{escape(_shorten(label))}: no respondents</text>')
            y += ROW_H
    out.append("</svg>")
    return Markup("".join(out))


HEAT = ["#f4f7fb", "#dce7f5", "#bcd0ec", "#2f5f9e", "#1f4e8c", "#143766"]  # light to dark
HEAT_LABEL_W = 110
HEAT_CELL_W = 78
HEAT_CELL_H = 52
HEAT_TOP = 40


def heatmap(row_labels: Sequence[str], col_labels: Sequence[str], estimates, ci_low, ci_high, *,
            title: str, chart_id: str = "heat") -> Markup:
    """A cross-tab as a heat-map: one cell per pair, darker for larger estimates, each with its
    estimate and interval as text (the shade only repeats what the numbers say)."""
    width = HEAT_LABEL_W + len(col_labels) * HEAT_CELL_W + PAD
    height = HEAT_TOP + len(row_labels) * HEAT_CELL_H + PAD
    values = [v for row in estimates for v in row if v is not None and math.isfinite(v)]
    low_end, top = min(values, default=0.0), max(values, default=0.0)
    span = top - low_end
    out = _svg_open("heatmap", width, height, chart_id, title)
    for j, label in enumerate(col_labels):
        x = HEAT_LABEL_W + (j + 0.5) * HEAT_CELL_W
        out.append(f'<text class="col-label" x="{_f(x)}" y="{HEAT_TOP - 12}" font-size="{TEXT}" '
                   f'text-anchor="middle">{escape(_shorten(label, 10))}</text>')
    for i, label in enumerate(row_labels):
        y = HEAT_TOP + i * HEAT_CELL_H
        out.append(f'<text class="row-label" x="{HEAT_LABEL_W - 8}" y="{_f(y + HEAT_CELL_H / 2 + 5)}" '
                   f'font-size="{TEXT}" text-anchor="end">{escape(_shorten(label, 14))}</text>')
        for j in range(len(col_labels)):
            est, low, high = estimates[i][j], ci_low[i][j], ci_high[i][j]
            est = math.nan if est is None else float(est)
            # darker for larger, over the table's own range (the numbers carry the values)
            level = min(len(HEAT) - 1, int((est - low_end) / span * len(HEAT))) if span and math.isfinite(est) else 0
            ink = "#ffffff" if level >= 3 else "#111111"
            x = HEAT_LABEL_W + j * HEAT_CELL_W
            out.append(f'<g class="cell" data-row="{i}" data-col="{j}" data-estimate="{float(est)!r}">'
                       f'<rect x="{_f(x)}" y="{_f(y)}" width="{HEAT_CELL_W}" height="{HEAT_CELL_H}" '
                       f'fill="{HEAT[level]}" stroke="#ffffff" stroke-width="2"/>'
                       f'<text x="{_f(x + HEAT_CELL_W / 2)}" y="{_f(y + 22)}" font-size="{TEXT + 1}" '
                       f'font-weight="700" text-anchor="middle" fill="{ink}">{pct(est)}</text>'
                       f'<text x="{_f(x + HEAT_CELL_W / 2)}" y="{_f(y + 40)}" font-size="{TEXT - 0.5}" '
                       f'text-anchor="middle" fill="{ink}">{100 * low:.1f}–{100 * high:.1f}</text></g>')
    out.append("</svg>")
    return Markup("".join(out))


def dp_region_vertices(epsilon: float) -> list[tuple[float, float]]:
    """Vertices (α, β) of the pairs of type I/II error any test can reach against ε-DP.

    The region is ``α + e^ε·β ≥ 1`` and ``e^ε·α + β ≥ 1`` inside the unit square; the two
    lines cross at ``α = β = 1/(1 + e^ε)``.
    """
    corner = 1.0 / (1.0 + math.exp(epsilon))
    return [(0.0, 1.0), (corner, corner), (1.0, 0.0), (1.0, 1.0)]


def region_point(alpha: float, beta: float) -> tuple[float, float]:
    """SVG coordinates of (α, β): α grows to the right, β grows upward."""
    return REGION_MARGIN + alpha * REGION_SIDE, REGION_MARGIN / 2 + (1 - beta) * REGION_SIDE


def dp_region(epsilon: float, *, chart_id: str = "region") -> Markup:
    """A small SVG of the ε-DP region of (type I, type II) error pairs, shaded and labelled."""
    size_w = REGION_MARGIN + REGION_SIDE + 12
    size_h = REGION_MARGIN / 2 + REGION_SIDE + REGION_MARGIN
    corner = 1.0 / (1.0 + math.exp(epsilon))
    pattern = f"{chart_id}-hatch"

    def pts(vertices):
        return " ".join(f"{_f(x)},{_f(y)}" for x, y in (region_point(a, b) for a, b in vertices))

    x0, y0 = region_point(0, 0)
    x1, y1 = region_point(1, 1)
    title = (f"Against ε = {epsilon:.3g}, any test of one respondent's answer has errors (α, β) in the "
             f"hatched region: the two error rates cannot both be below {corner:.3f}.")
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="dp-region" viewBox="0 0 {_f(size_w)} {_f(size_h)}" '
        f'width="{_f(size_w)}" height="{_f(size_h)}" role="img" aria-labelledby="{chart_id}-title">',
        f'<title id="{chart_id}-title">{escape(title)}</title>',
        f'<defs><pattern id="{pattern}" width="5" height="5" patternUnits="userSpaceOnUse" '
        'patternTransform="rotate(45)"><rect width="5" height="5" fill="#e6efe6"/>'
        '<line x1="0" y1="0" x2="0" y2="5" stroke="#3c6e3c" stroke-width="1.5"/></pattern></defs>',
        f'<rect class="square" x="{_f(x0)}" y="{_f(y1)}" width="{REGION_SIDE}" height="{REGION_SIDE}" '
        'fill="#fff" stroke="#333" stroke-width="1"/>',
        f'<polygon class="dp-feasible" points="{pts(dp_region_vertices(epsilon))}" '
        f'fill="url(#{pattern})" stroke="#3c6e3c" stroke-width="1.5"/>',
        # No privacy at all would allow everything above α + β = 0 (the whole square); perfect
        # privacy (ε = 0) only α + β ≥ 1: draw that diagonal for reference.
        f'<line class="no-information" x1="{_f(x0)}" y1="{_f(y1)}" x2="{_f(x1)}" y2="{_f(y0)}" '
        'stroke="#777" stroke-dasharray="4 3" stroke-width="1"/>',
        f'<circle class="dp-corner" cx="{_f(region_point(corner, corner)[0])}" '
        f'cy="{_f(region_point(corner, corner)[1])}" r="3" fill="#000"/>',
        f'<text x="{_f((x0 + x1) / 2)}" y="{_f(y0 + 32)}" font-size="{TEXT - 1}" text-anchor="middle">'
        'type I error α (false accusation)</text>',
        f'<text x="14" y="{_f((y0 + y1) / 2)}" font-size="{TEXT - 1}" text-anchor="middle" '
        f'transform="rotate(-90 14 {_f((y0 + y1) / 2)})">type II error β (missed)</text>',
        f'<text x="{_f(x0)}" y="{_f(y0 + 15)}" font-size="{TEXT - 1}" text-anchor="middle">0</text>',
        f'<text x="{_f(x1)}" y="{_f(y0 + 15)}" font-size="{TEXT - 1}" text-anchor="middle">1</text>',
        f'<text x="{_f(x0 - 5)}" y="{_f(y1 + 4)}" font-size="{TEXT - 1}" text-anchor="end">1</text>',
        f'<text x="{_f(region_point(corner, corner)[0] + 6)}" y="{_f(region_point(corner, corner)[1] + 14)}" '
        f'font-size="{TEXT - 1}">{corner:.3f}</text>',
        "</svg>",
    ]
    return Markup("".join(out))
