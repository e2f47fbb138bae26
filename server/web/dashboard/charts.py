"""Server-rendered SVG: estimate bars with interval whiskers, and the ε-DP error region.

No script, no ``style`` attributes (the Content-Security-Policy forbids inline style), only
presentation attributes.  Legible without colour: bars are hatched, every bar carries its
label and its numbers as text, whiskers have end caps.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from markupsafe import Markup, escape

# Estimate bars: geometry in SVG user units.
BAR_LABEL_W = 150  # left column for option labels
BAR_PLOT_W = 360  # the axis
BAR_TEXT_W = 190  # right column for the numbers
BAR_ROW_H = 28
BAR_H = 16
BAR_TOP = 24  # room for the axis ticks above the rows
BAR_BOTTOM = 22

# DP region: the unit square of (α, β) mapped to a REGION_SIDE square with a margin.
REGION_SIDE = 160
REGION_MARGIN = 36


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
    """The x coordinate of ``value`` on the bar chart's axis."""
    lo, hi = domain
    return BAR_LABEL_W + (value - lo) / (hi - lo) * BAR_PLOT_W


def bar_y(row: int) -> float:
    """The y coordinate of the centre of row ``row``."""
    return BAR_TOP + row * BAR_ROW_H + BAR_ROW_H / 2


def estimate_bars(labels: Sequence[str], estimates: Sequence[float], ci_low: Sequence[float],
                  ci_high: Sequence[float], *, title: str, chart_id: str = "chart") -> Markup:
    """Horizontal bars of the estimates with whiskers from ``ci_low`` to ``ci_high``.

    ``chart_id`` must be unique on the page (it names the hatch pattern).
    """
    domain = axis_domain(estimates, ci_low, ci_high)
    width = BAR_LABEL_W + BAR_PLOT_W + BAR_TEXT_W
    height = BAR_TOP + len(labels) * BAR_ROW_H + BAR_BOTTOM
    pattern = f"{chart_id}-hatch"
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="estimate-bars" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" aria-labelledby="{chart_id}-title">',
        f'<title id="{chart_id}-title">{escape(title)}</title>',
        f'<defs><pattern id="{pattern}" width="6" height="6" patternUnits="userSpaceOnUse" '
        'patternTransform="rotate(45)"><rect width="6" height="6" fill="#dbe4f0"/>'
        '<line x1="0" y1="0" x2="0" y2="6" stroke="#2b4a75" stroke-width="2"/></pattern></defs>',
    ]
    # Axis with ticks every 0.1 (every 0.2 when the range is wide).
    lo, hi = domain
    step = 0.1 if hi - lo <= 0.6 else 0.2
    axis_y = BAR_TOP - 6
    out.append(f'<line class="axis" x1="{_f(bar_x(lo, domain))}" y1="{axis_y}" '
               f'x2="{_f(bar_x(hi, domain))}" y2="{axis_y}" stroke="#333" stroke-width="1"/>')
    ticks = int(math.floor((hi - lo) / step + 1e-9))
    for i in range(ticks + 1):
        value = lo + i * step
        x = _f(bar_x(value, domain))
        out.append(f'<line class="tick" x1="{x}" y1="{axis_y - 4}" x2="{x}" y2="{height - BAR_BOTTOM}" '
                   'stroke="#bbb" stroke-width="0.5"/>')
        out.append(f'<text x="{x}" y="{axis_y - 6}" font-size="10" text-anchor="middle">{value:.1f}</text>')
    zero = bar_x(0.0, domain)
    for row, (label, est, low, high) in enumerate(zip(labels, estimates, ci_low, ci_high)):
        y = bar_y(row)
        x_est = bar_x(min(max(est, lo), hi), domain)
        x0, x1 = sorted((zero, x_est))
        out.append(f'<text class="label" x="{BAR_LABEL_W - 6}" y="{_f(y + 4)}" font-size="12" '
                   f'text-anchor="end">{escape(_shorten(label))}</text>')
        out.append(f'<rect class="bar" x="{_f(x0)}" y="{_f(y - BAR_H / 2)}" width="{_f(x1 - x0)}" '
                   f'height="{BAR_H}" fill="url(#{pattern})" stroke="#2b4a75" stroke-width="1"/>')
        xl, xh = _f(bar_x(low, domain)), _f(bar_x(high, domain))
        cap = BAR_H / 2 + 2
        out.append(f'<g class="whisker" data-ci-low="{low!r}" data-ci-high="{high!r}" stroke="#000" '
                   'stroke-width="1.5">'
                   f'<line class="whisker-span" x1="{xl}" y1="{_f(y)}" x2="{xh}" y2="{_f(y)}"/>'
                   f'<line class="whisker-cap" x1="{xl}" y1="{_f(y - cap)}" x2="{xl}" y2="{_f(y + cap)}"/>'
                   f'<line class="whisker-cap" x1="{xh}" y1="{_f(y - cap)}" x2="{xh}" y2="{_f(y + cap)}"/>'
                   '</g>')
        out.append(f'<text class="value" x="{BAR_LABEL_W + BAR_PLOT_W + 8}" y="{_f(y + 4)}" font-size="12">'
                   f'{est:.3f} [{low:.3f}, {high:.3f}]</text>')
    out.append("</svg>")
    return Markup("".join(out))


def _shorten(label: str, limit: int = 22) -> str:
    return label if len(label) <= limit else label[: limit - 1] + "…"


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
        f'<text x="{_f((x0 + x1) / 2)}" y="{_f(y0 + 26)}" font-size="10" text-anchor="middle">'
        'type I error α (false accusation)</text>',
        f'<text x="10" y="{_f((y0 + y1) / 2)}" font-size="10" text-anchor="middle" '
        f'transform="rotate(-90 10 {_f((y0 + y1) / 2)})">type II error β (missed)</text>',
        f'<text x="{_f(x0)}" y="{_f(y0 + 12)}" font-size="9" text-anchor="middle">0</text>',
        f'<text x="{_f(x1)}" y="{_f(y0 + 12)}" font-size="9" text-anchor="middle">1</text>',
        f'<text x="{_f(x0 - 4)}" y="{_f(y1 + 3)}" font-size="9" text-anchor="end">1</text>',
        f'<text x="{_f(region_point(corner, corner)[0] + 5)}" y="{_f(region_point(corner, corner)[1] + 12)}" '
        f'font-size="9">{corner:.3f}</text>',
        "</svg>",
    ]
    return Markup("".join(out))
