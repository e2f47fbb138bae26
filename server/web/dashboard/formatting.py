"""Numbers as people read them on the dashboard: percentages with one decimal, thousands separators.

Exports and the API keep full precision; pages show these and carry the exact value in a
``data-value`` attribute where a machine (or a test) may want it.

Negative numbers carry one sign, the minus sign U+2212 (never a hyphen), and a number that
rounds to zero carries none (never "−0.0%"); :func:`signed` does it for every formatter here.

>>> pct(0.29143), pct(-0.0312), pct(-0.00001), points(0.01986), thousands(20030), share(20030, 1000)
('29.1%', '−3.1%', '0.0%', '2.0', '20,030', '2,003.0%')
>>> signed("-0.0000"), signed("-263.96"), signed("12")
('0.0000', '−263.96', '12')

Every proportion is a percent with one decimal (:func:`pct`), on every page; a value on a question's own
scale (a mean, a median, a mean count) has four significant digits (:func:`figure`); which is which,
:func:`is_share`.

>>> figure(6.79621), figure(1534.2), figure(-0.01234), figure(""), is_share({"lower": 0.0, "upper": 1.0})
('6.796', '1,534', '−0.01234', '—', True)
"""

from __future__ import annotations

import math

from deniable.server.survey.explain import percent
from deniable.server.survey.parsing import number_or_none
from deniable.server.survey.questions.base import pct as _plain_pct

MINUS = "\u2212"


def signed(text: str) -> str:
    """A formatted number as pages show it: a leading hyphen becomes the minus sign, and dropped
    when every digit is zero (``"-0.0%"`` is ``"0.0%"``)."""
    text = str(text)
    if text.startswith(("-", MINUS)):
        rest = text[1:]
        return rest if not any(c in "123456789" for c in rest) else MINUS + rest
    return text


def pct(x) -> str:
    """A share as a percent with one decimal (:func:`deniable.server.survey.questions.base.pct`) with
    one minus sign and never a negative zero (:func:`signed`)."""
    return signed(_plain_pct(x))


def number(x, digits: int = 3) -> str:
    """A number with ``digits`` decimals and thousands separators, signed like :func:`pct` ("—" when
    not a number)."""
    value = number_or_none(x)
    return signed(f"{value:,.{digits}f}") if value is not None and math.isfinite(value) else "—"


def points(x) -> str:
    """A standard error or margin in percentage points, one decimal (never negative; the twin of
    ``percent.js``'s ``points``, so formatted as it is)."""
    return f"{100 * float(x):,.1f}" if x is not None and math.isfinite(float(x)) else "—"


def thousands(n) -> str:
    return f"{int(n):,}"


def share(part, whole) -> str:
    """``part`` as a percentage of ``whole``, one decimal."""
    return pct(part / whole) if whole else "—"


def bound(x) -> str:
    """A probability that bounds what an observer learns, rounded up, never "100%" (:func:`percent`)."""
    return percent(float(x))


def figure(x, digits: int = 4) -> str:
    """A number on a question's own scale with ``digits`` significant digits (never fewer whole digits),
    thousands separators and one minus sign ("—" when not a number)."""
    value = number_or_none(x)
    if value is None or not math.isfinite(value):
        return "—"
    if value == 0:
        return "0"
    decimals = max(digits - 1 - math.floor(math.log10(abs(value))), 0)
    return signed(f"{value:,.{decimals}f}")


def is_share(row) -> bool:
    """Whether a row's value is a proportion (shown in %): its ``share`` when it says, else a range
    (``lower``, ``upper``) of [0, 1], or [−1, 1] for a difference of two shares."""
    if "share" in row:
        return bool(row["share"])
    return row.get("upper") == 1.0 and row.get("lower") in (0.0, -1.0)


FILTERS = (pct, points, thousands, share, bound, signed, number, figure, is_share)  # every page's number filters


def register(bp) -> None:
    """Make the filters ``pct``, ``points``, ``thousands``, ``share``, ``bound``, ``signed``, ``number``,
    ``figure`` and ``is_share`` (:data:`FILTERS`) available to every template."""
    for function in FILTERS:
        bp.add_app_template_filter(function)
