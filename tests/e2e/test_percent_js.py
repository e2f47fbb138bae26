"""The dashboard's percentages in the browser (server/web/dashboard/static/percent.js) are the
server's (questions/base.py ``pct``, dashboard/formatting.py ``points`` and ``bound``), run in chromium
on the same numbers."""

from __future__ import annotations

import json
import math

import pytest

from deniable.client.mechanism import mechanism
from deniable.server.web.dashboard.formatting import bound, points
from deniable.server.survey.questions.base import pct

pytestmark = pytest.mark.browser

# 0 and 1, tiny shares on either side of zero, the one-decimal rounding edges (0.0025 and 0.0075
# are exact ties once multiplied by 100: Python rounds them to the even digit, toFixed up), values
# a hair either side of a tie, negatives, and shares above 10 (thousands separators).
SHARES = [0.0, -0.0, 1.0, -1.0, 1e-12, -1e-12, 4.9e-4, 5e-4, 5.1e-4, -4.9e-4, -5e-4, 0.0025, 0.0075, 0.0125,
          -0.0025, -0.0075, 0.0125 + 1e-15, 0.0125 - 1e-15, 0.00049999, 0.2914, 0.29143, -0.0312, 0.01986, 0.5,
          0.999, 0.9995, 0.99949999, 1 / 3, 2 / 3, 0.1 + 0.2, 12.34567, 20.03, -123.4575, 1e6, 123456.789]
SHARES += [i / 4000 for i in range(-20, 4021, 7)]  # every n + 0.25 and n + 0.75 of 100 x on the way
PROBABILITIES = [0.0, 1e-9, 0.0005, 0.001, 0.0010001, 0.1, 0.5, 0.75, 0.8, 0.88, 0.881, 0.88031, 0.8800000001,
                 0.99, 0.999, 0.9990001, 0.9995, 1.0, 1 / 3, 2 / 3]
PROBABILITIES += [mechanism(k, e).p for k in (2, 3, 5, 10) for e in (0.1, 0.5, 1.0, 2.0, 3.0, 5.0)]
PROBABILITIES += [i / 1000 for i in range(1, 1000, 37)]


def test_the_dashboards_percentages_are_the_servers(page, live_server):
    page.goto(f"{live_server}/auth/login")
    got = page.evaluate(
        """async ([shares, probabilities]) => {
             const percent = await import('/dashboard/static/percent.js');
             const back = (x) => (x === "NaN" ? NaN : x === "inf" ? Infinity : x === "-0" ? -0 : x);
             return {pct: shares.map((x) => percent.pct(back(x))), points: shares.map((x) => percent.points(back(x))),
                     bound: probabilities.map((x) => percent.bound(x))};
           }""", [[_js(x) for x in [*SHARES, None, math.nan, math.inf]], PROBABILITIES])
    expected = {"pct": [pct(x) for x in [*SHARES, None, math.nan, math.inf]],
                "points": [points(x) for x in [*SHARES, None, math.nan, math.inf]],
                "bound": [bound(x) for x in PROBABILITIES]}
    for name in expected:
        values = [*SHARES, None, math.nan, math.inf] if name != "bound" else PROBABILITIES
        wrong = [(x, g, e) for x, g, e in zip(values, got[name], expected[name]) if g != e]
        assert not wrong, (name, json.dumps(wrong[:10]))
    assert expected["pct"][SHARES.index(0.0025)] == "0.2%" and expected["pct"][1] == "-0.0%"  # SHARES[1] = -0.0


def _js(x):
    """A number as JSON carries it to the page (NaN, infinity and -0.0 by name)."""
    if x is None:
        return None
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "inf"
    if x == 0 and math.copysign(1, x) < 0:
        return "-0"
    return x
