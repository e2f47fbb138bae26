"""The golden-section searches of the worst π look a few steps ahead (``planning.GOLDEN_AHEAD``) when one
or two run side by side: each batch of expected half-widths holds a search's next point and the points
each outcome of its next comparisons would ask for.  The steps, hence the maximum, must be those of the search a point at a
time: compared here bytes for bytes with that search (the generator the planner used before), and the
belts must hold the same ends afterwards (a looked-ahead point fills no count its window lacks).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from deniable.client.mechanism import resolve
from deniable.estimators import planning


def _one_at_a_time(sums, a: float, b: float, iterations: int = 24):
    """Golden-section search for a maximum on [a, b], one :meth:`_Sums.half_width` at a time (Kiefer 1953)."""
    ratio = (math.sqrt(5) - 1) / 2
    f = sums.half_width
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(iterations):
        if fc >= fd:
            b, d, fd = d, c, fc
            c = b - ratio * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + ratio * (b - a)
            fd = f(d)
    return (c, fc) if fc >= fd else (d, fd)


def _brackets():
    """``(n, p, q, a, b)``: brackets around grid maxima, as :func:`planning._compute_worst_cases` sets them,
    and some wider ones (a flat top, both sides of ½ for a yes/no question, a design's report)."""
    out = []
    for epsilon, k, n in [(None, 2, 150), (1.0, 2, 1085), (2.0, 3, 1862), (1.0, 5, 700), (0.5, 3, 40), (4.0, 2, 425)]:
        m = resolve(k, epsilon)
        grid = planning._grid(n, m.p, m.q, 0.95)
        values = planning._Sums(n, m.p, m.q, 0.95).half_widths(grid)
        i = int(np.argmax(values))
        step = grid[1] - grid[0]
        out.append((n, m.p, m.q, max(0.0, grid[i] - step), min(1.0, grid[i] + step)))
        out.append((n, m.p, m.q, 0.2, 0.8))
    out.append((120, 0.6, 0.1, 0.0, 1.0))
    return out


@pytest.mark.parametrize("ahead", [0, 1, 2, 3])
def test_looking_ahead_finds_the_maximum_found_a_point_at_a_time(fresh, ahead):
    cases = _brackets()
    alone = []
    for n, p, q, a, b in cases:
        sums = planning._Sums(n, p, q, 0.95)
        sums.half_widths(np.linspace(a, b, 5))  # the widths kept over the bracket, as after the grid
        alone.append((_one_at_a_time(sums, a, b), sums.belt))
    for together in (True, False):  # all the searches side by side (a few steps ahead once two are left), or each alone
        jobs = []
        for n, p, q, a, b in cases:
            sums = planning._Sums(n, p, q, 0.95)
            sums.half_widths(np.linspace(a, b, 5))
            jobs.append((sums, a, b))
        found = (planning._golden_max_many(jobs, ahead=ahead) if together
                 else [planning._golden_max_many([job], ahead=ahead)[0] for job in jobs])
        for ((x, fx), belt), (y, fy), (sums, _, _) in zip(alone, found, jobs):
            assert np.float64(x).tobytes() == np.float64(y).tobytes()
            assert np.float64(fx).tobytes() == np.float64(fy).tobytes()
            for side in ("low", "high"):  # the same counts' ends, and no others
                assert np.array_equal(belt._ends[side], sums.belt._ends[side], equal_nan=True)


def test_a_point_whose_window_is_not_kept_fills_the_belt_as_alone(fresh):
    """Widths kept over a narrow range only: the search's points reach counts not yet in the belt, and the
    belt is filled with the same counts, in the same batches, as a point at a time."""
    m = resolve(2, 1.0)
    one, two = planning._Sums(1085, m.p, m.q, 0.95), planning._Sums(1085, m.p, m.q, 0.95)
    for sums in (one, two):
        sums.half_widths(np.array([0.5]))
    x, fx = _one_at_a_time(one, 0.3, 0.7)
    [(y, fy)] = planning._golden_max_many([(two, 0.3, 0.7)])
    assert (x, fx) == (y, fy)
    for side in ("low", "high"):
        assert np.array_equal(one.belt._ends[side], two.belt._ends[side], equal_nan=True)
