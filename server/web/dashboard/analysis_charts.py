"""Server-rendered SVG for the analysis pages: an estimate over time with its confidence-sequence band.

Like :mod:`.charts`: no script and no ``style`` attribute (the Content-Security-Policy forbids
inline style), presentation attributes only, and legible without colour — the band is hatched,
the fixed-n interval dashed, the estimate a solid line with a marker per day, and the numbers of
the last day are written out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from markupsafe import Markup, escape

from .charts import text_width
from .formatting import signed

FONT = 12  # every label (12 px when drawn at its size)
PLOT_X = 48  # left margin (the y-axis labels), wider when they need it
PLOT_W = 520
PLOT_Y = 16
PLOT_H = 200
BOTTOM = 44  # the x-axis labels
RIGHT = 150  # the last day's numbers


def _f(x: float) -> str:
    return f"{x:.2f}".rstrip("0").rstrip(".") if math.isfinite(x) else "0"


def _x(t: int, periods: int) -> float:
    return PLOT_X + (PLOT_W * t / (periods - 1) if periods > 1 else PLOT_W / 2)


def _y_of(value: float, lower: float = 0.0, upper: float = 1.0) -> float:
    share = (value - lower) / (upper - lower) if upper > lower else 0.5
    clipped = min(max(share, 0.0), 1.0) if math.isfinite(share) else 0.0
    return PLOT_Y + (1 - clipped) * PLOT_H


def _tick(value: float, lower: float, upper: float) -> str:
    return signed(f"{value:.2f}" if (lower, upper) == (0.0, 1.0) else f"{value:.4g}")


def _number(value: float) -> str:
    return signed(f"{value:.3f}") if math.isfinite(value) else "—"


def sequence_band(labels: Sequence[str], n: Sequence[int], estimate: Sequence[float], low: Sequence[float],
                  high: Sequence[float], fixed_low: Sequence[float] | None, fixed_high: Sequence[float] | None, *,
                  title: str, chart_id: str, lower: float = 0.0, upper: float = 1.0) -> Markup:
    """The cumulative estimate per period with its confidence-sequence band and the fixed-n interval.

    ``chart_id`` must be unique on the page (it names the hatch pattern).  ``fixed_low`` and
    ``fixed_high`` None: no dashed lines (the band is itself the fixed-n interval).  The y axis runs
    from ``lower`` to ``upper`` (shares: 0 to 1; a mean: the question's min to max).
    """
    periods = len(labels)
    steps = (0.0, 0.25, 0.5, 0.75, 1.0)
    plot_x = max(PLOT_X, 10 + max(text_width(_tick(lower + s * (upper - lower), lower, upper), FONT) for s in steps))
    last_text = ""
    if periods:
        last = periods - 1
        last_text = f"{_number(estimate[last])} [{_number(low[last])}, {_number(high[last])}]"
    right = max(RIGHT, 16 + text_width(last_text, FONT))
    width, height = _f(plot_x + PLOT_W + right), PLOT_Y + PLOT_H + BOTTOM

    def _x(t: int, periods: int) -> float:
        return plot_x + (PLOT_W * t / (periods - 1) if periods > 1 else PLOT_W / 2)
    pattern = f"{chart_id}-hatch"
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="sequence-band" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" aria-labelledby="{chart_id}-title">',
        f'<title id="{chart_id}-title">{escape(title)}</title>',
        f'<defs><pattern id="{pattern}" width="6" height="6" patternUnits="userSpaceOnUse" '
        'patternTransform="rotate(45)"><rect width="6" height="6" fill="#e4ebf5"/>'
        '<line x1="0" y1="0" x2="0" y2="6" stroke="#7c95bd" stroke-width="1.5"/></pattern></defs>',
    ]

    def _y(value: float) -> float:
        return _y_of(value, lower, upper)

    for step in steps:
        tick = lower + step * (upper - lower)
        y = _f(_y(tick))
        out.append(f'<line class="grid" x1="{_f(plot_x)}" y1="{y}" x2="{_f(plot_x + PLOT_W)}" y2="{y}" stroke="#ccc" '
                   'stroke-width="0.5"/>')
        out.append(f'<text class="tick-label" x="{_f(plot_x - 6)}" y="{_f(_y(tick) + 4)}" font-size="{FONT}" '
                   f'text-anchor="end">{_tick(tick, lower, upper)}</text>')
    if periods:
        top = [(_x(t, periods), _y(v)) for t, v in enumerate(high)]
        bottom = [(_x(t, periods), _y(v)) for t, v in reversed(list(enumerate(low)))]
        if periods == 1:  # a band needs some width: draw one period as a short bar
            top = [(top[0][0] - 6, top[0][1]), (top[0][0] + 6, top[0][1])]
            bottom = [(bottom[0][0] + 6, bottom[0][1]), (bottom[0][0] - 6, bottom[0][1])]
        points = " ".join(f"{_f(x)},{_f(y)}" for x, y in top + bottom)
        out.append(f'<polygon class="band" points="{points}" fill="url(#{pattern})" stroke="#2b4a75" '
                   'stroke-width="1"/>')
        for name, values in (("fixed-low", fixed_low), ("fixed-high", fixed_high)):
            if values is None:
                continue
            line = " ".join(f"{_f(_x(t, periods))},{_f(_y(v))}" for t, v in enumerate(values))
            out.append(f'<polyline class="{name}" points="{line}" fill="none" stroke="#000" '
                       'stroke-dasharray="4 3" stroke-width="1"/>')
        finite = [(t, v) for t, v in enumerate(estimate) if math.isfinite(v)]
        line = " ".join(f"{_f(_x(t, periods))},{_f(_y(v))}" for t, v in finite)
        out.append(f'<polyline class="estimate" points="{line}" fill="none" stroke="#000" stroke-width="2"/>')
        for t, v in finite:
            out.append(f'<circle class="marker" cx="{_f(_x(t, periods))}" cy="{_f(_y(v))}" r="2.5" fill="#000" '
                       f'data-n="{int(n[t])}" data-ci-low="{low[t]!r}" data-ci-high="{high[t]!r}"/>')
        base = PLOT_Y + PLOT_H + 16
        for t in sorted({0, periods - 1}):
            # the first day's labels start at its tick, the last day's end at its tick: they never meet
            anchor = "middle" if periods == 1 else "start" if t == 0 else "end"
            out.append(f'<text class="day" x="{_f(_x(t, periods))}" y="{base}" font-size="{FONT}" '
                       f'text-anchor="{anchor}">{escape(str(labels[t]))}</text>')
            out.append(f'<text class="day-n" x="{_f(_x(t, periods))}" y="{base + 15}" font-size="{FONT}" '
                       f'text-anchor="{anchor}">n = {int(n[t]):,}</text>')
        value = estimate[last]
        # beside the last day's estimate, kept inside the plot's height
        y_last = min(max(_y(value) if math.isfinite(value) else PLOT_Y + PLOT_H / 2, PLOT_Y + 8), PLOT_Y + PLOT_H - 4)
        out.append(f'<text class="last" x="{_f(plot_x + PLOT_W + 8)}" y="{_f(y_last + 4)}" font-size="{FONT}">'
                   f'{last_text}</text>')
    out.append("</svg>")
    return Markup("".join(out))
