"""Server-rendered SVG: estimate bars with interval whiskers, grouped bars for subgroups, a
heat-map for cross-tabs, and the ε-DP error region.

No script, no ``style`` attributes (the Content-Security-Policy forbids inline style), only
presentation attributes.  Legible without colour: bars are hatched, every bar and cell carries
its label and its numbers as text, whiskers have end caps.  Legible on a phone: the charts are
340 units wide and drawn at that size (they shrink only in a narrower column), with text of at
least 13 units, so labels are never smaller than 12 px on a 390 px screen.  Numbers read by people
are percentages with one decimal, negative ones with the minus sign (:mod:`.formatting`); the
exact values sit in ``data-`` attributes.

No text overlaps another or leaves the chart, whatever the values: text is placed from its width
(:func:`text_width`, generous for DejaVu Sans), long labels wrap (:func:`wrap`), each row's numbers
sit on its label's line and the bars and whiskers below, where no text is, and the axis keeps only
the round ticks whose labels fit apart (:func:`ticks`).  ``tests/e2e/test_charts_layout.py``
measures every text box in chromium at 0 %, 100 %, negative values and 60-character labels.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from contextlib import contextmanager
from contextvars import ContextVar

from markupsafe import Markup, escape

from .formatting import pct, signed

TEXT = 13  # font size of every label, in SVG units (= px at the drawn size)
WIDTH = 340  # the bar charts' width
PAD = 6
BAR_TOP = 30  # room for the axis ticks above the rows
ROW_H = 46  # a label line with the numbers at its right, then the bar with its whisker across the chart
LINE_H = 16  # each further line of a long label
BAR_H = 14
BAR_BOTTOM = 8
HEADER_H = 24  # an option's heading in the grouped chart
PLOT_W = WIDTH - 2 * PAD  # the bars run across the whole chart: the numbers sit on the label's line
WIDE = 1100  # the results page's charts beside the narrow ones, shown where the card is at least this wide
_DRAWN_WIDTH: ContextVar[float] = ContextVar("chart_width", default=WIDTH)


def _width() -> float:
    """The width the charts are being drawn at (:data:`WIDTH`, or another inside :func:`drawn_at`)."""
    return _DRAWN_WIDTH.get()


def _plot_w() -> float:
    return _width() - 2 * PAD


@contextmanager
def drawn_at(width: float):
    """Draw the bar and scale charts at ``width`` (text at the same size, bars longer, labels on fewer
    lines) inside the block: the results page draws each chart at :data:`WIDTH`, readable at 390 px, and
    at :data:`WIDE`, the width of its card on a wide screen (issue 39)."""
    token = _DRAWN_WIDTH.set(width)
    try:
        yield
    finally:
        _DRAWN_WIDTH.reset(token)
LABEL_LINES = 3  # a longer label is cut, with "…", on its last line (the table has it whole)
GAP = 10  # between a label and the numbers on its line

# Advance widths of DejaVu Sans (the sans-serif of Debian's chromium, and among the widest of the
# usual sans-serif fonts), in em, a little generous: the charts place text from these so that no
# two labels overlap and none leaves the chart (tests/e2e/test_charts_layout.py measures them).
_NARROW = dict.fromkeys("ijl.,:;'|!", 0.30) | dict.fromkeys("ft()[]-", 0.40) | dict.fromkeys(" ", 0.33)
_WIDE = dict.fromkeys("mwMW%—", 1.0) | dict.fromkeys("−=+<>–~", 0.85)


def text_width(text: str, size: float = TEXT) -> float:
    """The width, in SVG units, of ``text`` at font size ``size`` (an upper estimate for DejaVu Sans)."""
    em = 0.0
    for c in text:
        if c in _NARROW:
            em += _NARROW[c]
        elif c in _WIDE:
            em += _WIDE[c]
        elif c.isdigit() or c.islower():
            em += 0.65
        elif c.isupper():
            em += 0.78
        elif ord(c) > 0x2E80:  # CJK and the like: one em
            em += 1.0
        else:
            em += 0.7
    return em * size


def wrap(label: str, width: float, lines: int = LABEL_LINES, size: float = TEXT) -> list[str]:
    """``label`` broken at spaces into at most ``lines`` lines of at most ``width`` units each; what
    does not fit is cut with "…" (a word longer than a line is cut too)."""
    words, out, line = label.split(), [], ""
    for word in words:
        candidate = f"{line} {word}" if line else word
        if text_width(candidate, size) <= width:
            line = candidate
            continue
        if line:
            out.append(line)
        line = word
        while text_width(line, size) > width:  # one word wider than a line: break it
            cut = len(line)
            while cut > 1 and text_width(line[:cut], size) > width:
                cut -= 1
            out.append(line[:cut])
            line = line[cut:]
    if line or not out:
        out.append(line)
    if len(out) > lines:
        out = out[:lines]
        out[-1] += "…"
    if text_width(out[-1], size) > width:
        last = out[-1].rstrip("…")
        while last and text_width(last + "…", size) > width:
            last = last[:-1]
        out[-1] = last.rstrip() + "…"
    return out

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
    return PAD + (value - lo) / (hi - lo) * _plot_w()


def _tick_text(value: float) -> str:
    return signed(f"{round(100 * value):.0f}%")


def ticks(domain: tuple[float, float]) -> list[float]:
    """The axis ticks: multiples of the smallest round step (10, 20, 25, 50 or 100 points) whose
    labels, centred on their ticks (the first starts at its tick, the last ends at it), keep a gap
    between them; 0 is always one of them."""
    lo, hi = domain
    for step in (0.1, 0.2, 0.25, 0.5, 1.0):
        values = [k * step for k in range(math.ceil(lo / step - 1e-9), math.floor(hi / step + 1e-9) + 1)]
        spans = []
        for i, value in enumerate(values):
            x, w = bar_x(value, domain), text_width(_tick_text(value))
            anchor = _tick_anchor(x)
            left = x if anchor == "start" else x - w if anchor == "end" else x - w / 2
            spans.append((left, left + w))
        if all(b[0] - a[1] >= 8 for a, b in zip(spans, spans[1:])):
            return values
    return [0.0]


def _tick_anchor(x: float) -> str:
    return "start" if x < PAD + 14 else "end" if x > PAD + _plot_w() - 14 else "middle"


def _hatch(pattern: str, fill: str = "#dbe4f0", stroke: str = "#2b4a75") -> str:
    return (f'<pattern id="{pattern}" width="6" height="6" patternUnits="userSpaceOnUse" '
            f'patternTransform="rotate(45)"><rect width="6" height="6" fill="{fill}"/>'
            f'<line x1="0" y1="0" x2="0" y2="6" stroke="{stroke}" stroke-width="2"/></pattern>')


def _axis(domain: tuple[float, float], bottom: float) -> list[str]:
    lo, hi = domain
    axis_y = BAR_TOP - 8
    out = [f'<line class="axis" x1="{_f(bar_x(lo, domain))}" y1="{axis_y}" x2="{_f(bar_x(hi, domain))}" '
           f'y2="{axis_y}" stroke="#333" stroke-width="1"/>']
    for value in ticks(domain):
        x = bar_x(value, domain)
        out.append(f'<line class="tick{" zero" if value == 0 else ""}" x1="{_f(x)}" y1="{axis_y - 3}" x2="{_f(x)}" '
                   f'y2="{_f(bottom)}" stroke="{"#333" if value == 0 else "#c4c9d2"}" stroke-width="0.75"/>')
        out.append(f'<text class="tick-label" x="{_f(x)}" y="{axis_y - 6}" font-size="{TEXT}" '
                   f'text-anchor="{_tick_anchor(x)}">{_tick_text(value)}</text>')
    return out


def _value_text(est: float, low: float, high: float) -> str:
    return f"{pct(est)} [{pct(low)}, {pct(high)}]"


def _row_lines(label: str, value: str) -> list[str]:
    """A row's label, in lines that leave room for the numbers at the right of the first."""
    return wrap(label, _plot_w() - text_width(value) - GAP)


def _row_height(lines: int) -> float:
    return ROW_H + (lines - 1) * LINE_H


def _text_lines(css_class: str, x: float, y: float, lines: Sequence[str], attrs: str = "") -> str:
    """One ``text`` of one or more lines (``tspan`` per line, :data:`LINE_H` apart)."""
    return f'<text class="{css_class}" x="{_f(x)}" y="{_f(y)}" font-size="{TEXT}"{attrs}>{_spans(x, lines)}</text>'


def _spans(x: float, lines: Sequence[str]) -> str:
    """A text's content: its one line as is, or a ``tspan`` per line, :data:`LINE_H` apart."""
    if len(lines) == 1:
        return str(escape(lines[0]))
    return "".join(f'<tspan x="{_f(x)}" dy="{0 if i == 0 else LINE_H}">{escape(line)}</tspan>'
                   for i, line in enumerate(lines))


def _bar_row(y: float, label: str, est: float, low: float, high: float, domain, pattern: str) -> list[str]:
    """One row: the label (on one or more lines) with the numbers at the right of its first line,
    then the bar and its whisker across the whole chart, where no text is."""
    lo, hi = domain
    zero = bar_x(0.0, domain)
    x_est = bar_x(min(max(est, lo), hi), domain)
    x0, x1 = sorted((zero, x_est))
    value = _value_text(est, low, high)
    lines = _row_lines(label, value)
    bar_y = y + 20 + (len(lines) - 1) * LINE_H
    mid = bar_y + BAR_H / 2
    xl, xh = bar_x(min(max(low, lo), hi), domain), bar_x(min(max(high, lo), hi), domain)
    cap = BAR_H / 2 + 2
    return [
        _text_lines("label", PAD, y + 14, lines),
        f'<text class="value" x="{_width() - PAD}" y="{_f(y + 14)}" font-size="{TEXT}" text-anchor="end" '
        f'data-estimate="{float(est)!r}">{value}</text>',
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


FONT_FAMILY = "DejaVu Sans, system-ui, -apple-system, Segoe UI, Roboto, Arial, sans-serif"


def standalone(markup) -> str:
    """A chart as an SVG file of its own: an XML declaration, the font the page gives it, and a
    white background (for slides and papers)."""
    text = str(markup)
    head, sep, rest = text.partition("</title>")
    if not sep:
        head, rest = text.split(">", 1)[0] + ">", text.split(">", 1)[1]
    head = head.replace("<svg ", f'<svg font-family="{FONT_FAMILY}" ', 1)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n' + head + sep
            + '<rect class="background" width="100%" height="100%" fill="#ffffff"/>' + rest)


def bar_y(row: int) -> float:
    """The y coordinate of the top of row ``row`` of :func:`estimate_bars`."""
    return BAR_TOP + row * ROW_H


def drawable(drawn) -> bool:
    """Whether a type's chart data (:meth:`~deniable.server.survey.questions.base.QuestionType.chart`) has
    every estimate and interval end: a list experiment with an arm of fewer than two respondents has none."""
    return bool(drawn) and not any(v is None for key in ("estimate", "ci_low", "ci_high") for v in drawn[key])


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
    rows = list(zip(labels, estimates, ci_low, ci_high))
    heights = [_row_height(len(_row_lines(label, _value_text(est, low, high)))) for label, est, low, high in rows]
    height = BAR_TOP + sum(heights) + BAR_BOTTOM
    pattern = f"{chart_id}-hatch"
    out = _svg_open("estimate-bars", _width(), height, chart_id, title)
    out.append(f"<defs>{_hatch(pattern)}</defs>")
    out += _axis(domain, height - BAR_BOTTOM)
    y = BAR_TOP
    for (label, est, low, high), row_height in zip(rows, heights):
        out += _bar_row(y, label, est, low, high, domain, pattern)
        y += row_height
    out.append("</svg>")
    return Markup("".join(out))


def grouped_bars(options: Sequence[str], groups: Sequence[dict], *, title: str, chart_id: str = "grouped") -> Markup:
    """Subgroups side by side: for each option, one bar per group with its whisker.

    ``groups`` are ``{"label", "n", "estimate", "ci_low", "ci_high"}`` (sequences over the
    options); a group with ``n == 0`` is drawn as a row that says so.
    """
    drawn = [g for g in groups if g["n"]]
    domain = axis_domain(*(([v for g in drawn for v in g[key]] or [0.0]) for key in ("estimate", "ci_low", "ci_high")))

    def group_label(group):
        return f"{group['label']} (n = {group['n']:,})"

    def group_lines(group, i):
        if not group["n"]:
            return wrap(f"{group_label(group)}: no respondents", _plot_w())
        return _row_lines(group_label(group), _value_text(group["estimate"][i], group["ci_low"][i],
                                                          group["ci_high"][i]))

    headings = [wrap(option, _plot_w(), 2, (TEXT + 1) * 1.1) for option in options]  # bold: wider
    height = BAR_TOP + BAR_BOTTOM + sum(
        HEADER_H + (len(headings[i]) - 1) * LINE_H + sum(_row_height(len(group_lines(g, i))) for g in groups)
        for i in range(len(options)))
    out = _svg_open("grouped-bars", _width(), height, chart_id, title)
    patterns = [f"{chart_id}-g{i}" for i in range(len(groups))]
    fills = [("#dbe4f0", "#2b4a75"), ("#f3e2cf", "#7a4a12"), ("#dcefe3", "#1f5d3a"), ("#ece0f2", "#5b2c73")]
    out.append("<defs>" + "".join(_hatch(p, *fills[i % len(fills)]) for i, p in enumerate(patterns)) + "</defs>")
    out += _axis(domain, height - BAR_BOTTOM)
    y = BAR_TOP
    for i, option in enumerate(options):
        spans = _spans(PAD, headings[i])
        out.append(f'<text class="option-heading" x="{PAD}" y="{_f(y + 17)}" font-size="{TEXT + 1}" '
                   f'font-weight="700">{spans}</text>')
        y += HEADER_H + (len(headings[i]) - 1) * LINE_H
        for g, group in enumerate(groups):
            lines = group_lines(group, i)
            if group["n"]:
                out.append(f'<g class="group" data-group="{escape(group["label"])}" data-option="{i}">')
                out += _bar_row(y, group_label(group), group["estimate"][i], group["ci_low"][i],
                                group["ci_high"][i], domain, patterns[g])
                out.append("</g>")
            else:
                out.append(_text_lines("label", PAD, y + 14, lines))
            y += _row_height(len(lines))
    out.append("</svg>")
    return Markup("".join(out))


HEAT = ["#f4f7fb", "#dce7f5", "#bcd0ec", "#2f5f9e", "#1f4e8c", "#143766"]  # light to dark
HEAT_LABEL_W = 110  # the row labels' column, wider (up to HEAT_LABEL_MAX) for long labels
HEAT_LABEL_MAX = 200
HEAT_CELL_W = 96
HEAT_CELL_H = 52
HEAT_HEAD_LINES = 4  # a column label's lines at most
HEAT_ROW_LINES = 3


def _interval_text(low: float, high: float) -> str:
    return f"{signed(f'{100 * low:.1f}')}–{signed(f'{100 * high:.1f}')}"


def heatmap(row_labels: Sequence[str], col_labels: Sequence[str], estimates, ci_low, ci_high, *,
            title: str, chart_id: str = "heat") -> Markup:
    """A cross-tab as a heat-map: one cell per pair, darker for larger estimates, each with its
    estimate and interval as text (the shade only repeats what the numbers say).  Column labels
    wrap over up to four lines above their column, row labels over up to three beside their row."""
    longest = max((text_width(label) for label in row_labels), default=0.0)
    label_w = min(HEAT_LABEL_MAX, max(HEAT_LABEL_W, longest + 8 + PAD))
    rows = [wrap(label, label_w - 8 - PAD, HEAT_ROW_LINES) for label in row_labels]
    cols = [wrap(label, HEAT_CELL_W - 8, HEAT_HEAD_LINES) for label in col_labels]
    top = 12 + LINE_H * max((len(c) for c in cols), default=1)
    width = label_w + len(col_labels) * HEAT_CELL_W + PAD
    height = top + len(row_labels) * HEAT_CELL_H + PAD
    values = [v for row in estimates for v in row if v is not None and math.isfinite(v)]
    low_end, high_end = min(values, default=0.0), max(values, default=0.0)
    span = high_end - low_end
    out = _svg_open("heatmap", width, height, chart_id, title)
    for j, lines in enumerate(cols):
        x = label_w + (j + 0.5) * HEAT_CELL_W
        y = top - 8 - (len(lines) - 1) * LINE_H  # the last line just above the cells
        spans = _spans(x, lines)
        out.append(f'<text class="col-label" x="{_f(x)}" y="{_f(y)}" font-size="{TEXT}" '
                   f'text-anchor="middle">{spans}</text>')
    for i, lines in enumerate(rows):
        y = top + i * HEAT_CELL_H
        first = y + HEAT_CELL_H / 2 + 5 - (len(lines) - 1) * LINE_H / 2
        spans = _spans(label_w - 8, lines)
        out.append(f'<text class="row-label" x="{_f(label_w - 8)}" y="{_f(first)}" '
                   f'font-size="{TEXT}" text-anchor="end">{spans}</text>')
        for j in range(len(col_labels)):
            est, low, high = estimates[i][j], ci_low[i][j], ci_high[i][j]
            est = math.nan if est is None else float(est)
            # darker for larger, over the table's own range (the numbers carry the values)
            level = min(len(HEAT) - 1, int((est - low_end) / span * len(HEAT))) if span and math.isfinite(est) else 0
            ink = "#ffffff" if level >= 3 else "#111111"
            x = label_w + j * HEAT_CELL_W
            out.append(f'<g class="cell" data-row="{i}" data-col="{j}" data-estimate="{float(est)!r}">'
                       f'<rect x="{_f(x)}" y="{_f(y)}" width="{HEAT_CELL_W}" height="{HEAT_CELL_H}" '
                       f'fill="{HEAT[level]}" stroke="#ffffff" stroke-width="2"/>'
                       f'<text x="{_f(x + HEAT_CELL_W / 2)}" y="{_f(y + 22)}" font-size="{TEXT + 1}" '
                       f'font-weight="700" text-anchor="middle" fill="{ink}">{pct(est)}</text>'
                       f'<text x="{_f(x + HEAT_CELL_W / 2)}" y="{_f(y + 40)}" font-size="{TEXT - 0.5}" '
                       f'text-anchor="middle" fill="{ink}">{_interval_text(low, high)}</text></g>')
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


NUMERIC_COLUMNS_H = 90  # the distribution's columns, at most this tall


def _value_ticks(lo: float, hi: float, left: float, width: float) -> list[float]:
    """Round ticks (1, 2 or 5 × 10^k apart) over [lo, hi] whose labels keep a gap between them."""
    span = hi - lo
    if not span > 0:
        return [lo]
    base = 10 ** math.floor(math.log10(span)) / 10
    for mult in (1, 2, 5, 10, 20, 50, 100):
        step = base * mult
        values = [k * step for k in range(math.ceil(lo / step - 1e-9), math.floor(hi / step + 1e-9) + 1)]
        edges = []
        for v in values:
            x = left + (v - lo) / span * width
            w = text_width(_plain(v, step))
            edges.append((max(left, x - w / 2), max(left, x - w / 2) + w))
        if len(values) <= 8 and all(b[0] - a[1] >= 10 for a, b in zip(edges, edges[1:])):
            return values
    return [lo, hi]


def _plain(value: float, step: float = 1.0) -> str:
    digits = 0 if float(step).is_integer() else min(3, max(1, -math.floor(math.log10(step))))
    return signed(f"{value:,.{digits}f}")


def _mean_text(value, step: float) -> str:
    if value is None or not math.isfinite(float(value)):
        return "—"
    digits = 1 if float(step).is_integer() else min(4, 1 + max(1, -math.floor(math.log10(step))))
    return signed(f"{float(value):,.{digits}f}")


def is_scale_record(record: dict | None) -> bool:
    """Whether ``record`` estimates a mean on a scale from ``min`` to ``max`` (drawn by :func:`scale_chart`)."""
    return bool(record) and isinstance(record.get("mean"), dict) and "min" in record and "max" in record


def scale_chart(record: dict, *, title: str, chart_id: str = "scale") -> Markup:
    """A numeric question as such: the estimated mean as a point with its interval on the question's
    own scale (min to max), and below it the estimated distribution — the deconvolved histogram of a
    discrete Laplace question, or the share at each grid point of a grid with more than two points.

    A grid of two points (G = 1) estimates no distribution: each answer was rounded at random to
    the lower or the upper end, with the chance that keeps its expected value, so the shares at
    the ends say only what the mean says (share at the top = (mean − min)/(max − min)).  The chart
    then says so instead of drawing "79 % at 0", which reads as "79 % answered 0".
    """
    lo, hi = float(record["min"]), float(record["max"])
    step = float(record.get("step") or 1)
    span = hi - lo if hi > lo else 1.0
    mean = record["mean"]

    def x(v: float) -> float:
        return PAD + (min(max(float(v), lo), hi) - lo) / span * (_plot_w() - 2 * PAD) + PAD

    ticks_v = _value_ticks(lo, hi, 2 * PAD, _plot_w() - 2 * PAD)

    def axis(y: float) -> list[str]:
        out = [f'<line class="axis" x1="{_f(x(lo))}" y1="{_f(y)}" x2="{_f(x(hi))}" y2="{_f(y)}" stroke="#333" '
               'stroke-width="1"/>']
        for v in ticks_v:
            label, at = _plain(v, step), x(v)
            half = text_width(label) / 2
            anchor = "start" if at - half < PAD else "end" if at + half > _width() - PAD else "middle"
            out.append(f'<line class="tick" x1="{_f(at)}" y1="{_f(y)}" x2="{_f(at)}" y2="{_f(y + 4)}" '
                       'stroke="#333" stroke-width="1"/>')
            out.append(f'<text class="tick-label" x="{_f(at)}" y="{_f(y + 18)}" font-size="{TEXT}" '
                       f'text-anchor="{anchor}">{label}</text>')
        return out

    body: list[str] = []
    headline_ = mean.get("headline", mean.get("estimate"))
    low, high = mean.get("ci_low"), mean.get("ci_high")
    body.append(f'<text class="value mean" x="{PAD}" y="18" font-size="{TEXT}" font-weight="700" '
                f'data-estimate="{headline_!r}">Mean {_mean_text(headline_, step)} '
                f'[{_mean_text(low, step)}, {_mean_text(high, step)}]</text>')
    mid = 40
    if all(v is not None and math.isfinite(float(v)) for v in (headline_, low, high)):
        xl, xh = x(low), x(high)
        body.append(f'<g class="whisker" data-ci-low="{low!r}" data-ci-high="{high!r}" stroke="#000" '
                    f'stroke-width="1.5"><line class="whisker-span" x1="{_f(xl)}" y1="{mid}" x2="{_f(xh)}" '
                    f'y2="{mid}"/><line class="whisker-cap" x1="{_f(xl)}" y1="{mid - 8}" x2="{_f(xl)}" '
                    f'y2="{mid + 8}"/><line class="whisker-cap" x1="{_f(xh)}" y1="{mid - 8}" x2="{_f(xh)}" '
                    f'y2="{mid + 8}"/></g>')
        body.append(f'<circle class="mean-point" cx="{_f(x(headline_))}" cy="{mid}" r="5" fill="#2b4a75" '
                    'stroke="#000" stroke-width="1"/>')
    body += axis(56)
    y = 56 + 18 + 12
    histogram = record.get("histogram") or []
    grid = record.get("distribution") or []
    if histogram or len(grid) > 2:
        heading = ("Estimated distribution of the answers" if histogram else
                   "Estimated share at each grid point (answers rounded at random to the grid)")
        lines = wrap(heading, _plot_w())
        body.append(_text_lines("label distribution-heading", PAD, y + 14, lines))
        y += 14 + (len(lines) - 1) * LINE_H + 10
        points = [(float(p["value"]), float(p.get("headline", p.get("estimate")) or 0.0),
                   p.get("ci_low"), p.get("ci_high")) for p in (histogram or grid)]
        top_share = max([max(s, float(h if h is not None else 0)) for _, s, _, h in points] + [0.01])
        top_share = _nice_ceiling(top_share) if top_share > 0.1 else math.ceil(top_share * 100) / 100
        body.append(f'<text class="tick-label" x="{PAD}" y="{_f(y + 12)}" font-size="{TEXT}">{pct(top_share)}</text>')
        y += 18
        base = y + NUMERIC_COLUMNS_H
        body.append(f'<line class="grid" x1="{_f(x(lo))}" y1="{_f(y)}" x2="{_f(x(hi))}" y2="{_f(y)}" stroke="#c4c9d2" '
                    'stroke-width="0.75"/>')
        column_w = max(1.0, min(24.0, (_plot_w() - 2 * PAD) / max(1, len(points)) * 0.8))
        for value, share, c_low, c_high in points:
            height = max(0.0, min(share, top_share)) / top_share * NUMERIC_COLUMNS_H
            body.append(f'<rect class="bar column" x="{_f(x(value) - column_w / 2)}" y="{_f(base - height)}" '
                        f'width="{_f(column_w)}" height="{_f(height)}" fill="#9fb6d6" stroke="#2b4a75" '
                        f'stroke-width="0.5" data-value="{value!r}" data-estimate="{share!r}"/>')
            if c_low is not None and c_high is not None and not histogram:
                y_low = base - max(0.0, min(float(c_low), top_share)) / top_share * NUMERIC_COLUMNS_H
                y_high = base - max(0.0, min(float(c_high), top_share)) / top_share * NUMERIC_COLUMNS_H
                body.append(f'<line class="column-interval" x1="{_f(x(value))}" y1="{_f(y_low)}" x2="{_f(x(value))}" '
                            f'y2="{_f(y_high)}" stroke="#000" stroke-width="1.5"/>')
        body += axis(base)
        y = base + 18 + 8
    elif len(grid) == 2:
        note = (f"Only the mean is estimated: each answer was rounded at random to {_plain(lo, step)} or "
                f"{_plain(hi, step)}, keeping its expected value, so the shares at the two ends are not the "
                "shares of people who answered them.")
        lines = wrap(note, _plot_w(), 5)
        body.append(_text_lines("scale-note", PAD, y + 14, lines))
        y += 14 + (len(lines) - 1) * LINE_H + 4
    height = y + BAR_BOTTOM
    out = _svg_open("scale-chart", _width(), height, chart_id, title) + body + ["</svg>"]
    return Markup("".join(out))
