"""Numbers as people read them on the dashboard: percentages with one decimal, thousands separators.

Exports and the API keep full precision; pages show these and carry the exact value in a
``data-value`` attribute where a machine (or a test) may want it.

>>> pct(0.29143), pct(-0.0312), points(0.01986), thousands(20030), share(20030, 1000)
('29.1%', '-3.1%', '2.0', '20,030', '2,003.0%')
"""

from __future__ import annotations

import math

from deniable.server.survey.explain import percent
from deniable.server.survey.questions.base import pct


def points(x) -> str:
    """A standard error or margin in percentage points, one decimal."""
    return f"{100 * float(x):,.1f}" if x is not None and math.isfinite(float(x)) else "—"


def thousands(n) -> str:
    return f"{int(n):,}"


def share(part, whole) -> str:
    """``part`` as a percentage of ``whole``, one decimal."""
    return pct(part / whole) if whole else "—"


def bound(x) -> str:
    """A probability that bounds what an observer learns, rounded up, never "100%" (:func:`percent`)."""
    return percent(float(x))


def register(bp) -> None:
    """Make the filters ``pct``, ``points``, ``thousands``, ``share`` and ``bound`` available to every template."""
    for function in (pct, points, thousands, share, bound):
        bp.add_app_template_filter(function)
