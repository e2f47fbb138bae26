"""Root finding on many brackets at once, each bracket's numbers depending on its own values only:
the Illinois method (modified regula falsi) and safeguarded Newton steps that close a bracket to a
tolerance.  :mod:`deniable.estimators.exact` finds where an interval probability crosses the
confidence level with them, and re-exports both.
"""

from __future__ import annotations

import numpy as np


def illinois(f, left, right, f_left, f_right, tolerance, iterations=100):
    """Vectorized Illinois (modified regula falsi) on brackets with ``f_left < 0 ≤ f_right``.

    Returns the bracket ``(left, right)`` once narrower than ``tolerance`` (a number or one per
    bracket; the sign condition is kept throughout, so ``right`` is on the non-negative side).
    ``f(points, idx)`` is f at the points of the brackets ``idx`` (an index array): each round
    evaluates the brackets still open, and only those.  Dowell & Jarratt (1971).
    """
    left, right = np.array(left, dtype=float), np.array(right, dtype=float)
    f_left, f_right = np.array(f_left, dtype=float), np.array(f_right, dtype=float)
    side = np.zeros(left.shape)
    tolerance = np.broadcast_to(np.asarray(tolerance, dtype=float), left.shape)
    live = np.flatnonzero((right - left) > tolerance)  # a bracket once closed stays closed
    for _ in range(iterations):
        if not live.size:
            break
        low, high, f_low, f_high = left[live], right[live], f_left[live], f_right[live]
        with np.errstate(divide="ignore", invalid="ignore"):
            mid = high - f_high * (high - low) / (f_high - f_low)
        bad = ~np.isfinite(mid) | (mid <= low) | (mid >= high)
        mid = np.where(bad, 0.5 * (low + high), mid)
        f_mid = f(mid, live)
        up = f_mid < 0
        last = side[live]
        f_high = np.where(up & (last == 1), f_high / 2, f_high)  # halve a stale end
        f_low = np.where(~up & (last == -1), f_low / 2, f_low)
        left[live], f_left[live] = np.where(up, mid, low), np.where(up, f_mid, f_low)
        right[live], f_right[live] = np.where(up, high, mid), np.where(up, f_high, f_mid)
        side[live] = np.where(up, 1.0, -1.0)
        live = live[(right[live] - left[live]) > tolerance[live]]
    return left, right


def newton_bracket(f, slope, left, right, f_left, f_right, tolerance, iterations=8):
    """Narrow brackets with ``f_left < 0 ≤ f_right`` around a rising root by safeguarded Newton
    steps (Press et al., *Numerical Recipes*, 3rd ed., sec. 9.4, ``rtsafe``), then close each to
    ``tolerance`` by probing half of it either side of the Newton point.

    Each round evaluates f and its slope at one point per open bracket, keeps the sign condition
    (the point replaces the end of its sign) and steps by Newton, or bisects where the step would
    leave the bracket.  A bracket whose Newton step fell below a quarter of its tolerance is probed
    at ``x ∓ tolerance/2``; where the probes straddle the root it is closed, else the next round
    starts half a tolerance past the probe that came out on the wrong side.  Returns the brackets
    ``(left, right, f_left, f_right)``: closed ones narrower than ``tolerance``, the others narrowed
    as far as the rounds went (finish them with :func:`illinois`).  ``f(points, idx)`` and
    ``slope(points, idx)`` are evaluated at the points of the brackets ``idx``; each bracket's
    numbers depend on its own values only.
    """
    left, right = np.array(left, dtype=float), np.array(right, dtype=float)
    f_left, f_right = np.array(f_left, dtype=float), np.array(f_right, dtype=float)
    tolerance = np.broadcast_to(np.asarray(tolerance, dtype=float), left.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        x = right - f_right * (right - left) / (f_right - f_left)  # the secant point to start
    x = np.where(np.isfinite(x) & (x > left) & (x < right), x, 0.5 * (left + right))
    live = np.flatnonzero((right - left) > tolerance)
    for _ in range(iterations):
        if not live.size:
            break
        point = x[live]
        value, rate = f(point, live), slope(point, live)
        negative = value < 0
        left[live] = np.where(negative, point, left[live])
        f_left[live] = np.where(negative, value, f_left[live])
        right[live] = np.where(negative, right[live], point)
        f_right[live] = np.where(negative, f_right[live], value)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = value / rate
        following = point - step
        inside = np.isfinite(following) & (following > left[live]) & (following < right[live])
        x[live] = np.where(inside, following, 0.5 * (left[live] + right[live]))
        settled = inside & (np.abs(step) < tolerance[live] / 4)
        ready, live = live[settled], live[~settled & ((right[live] - left[live]) > tolerance[live])]
        if ready.size:  # probe either side of the Newton point, both in one evaluation
            half = tolerance[ready] / 2
            below = np.maximum(x[ready] - half, left[ready])
            above = np.minimum(x[ready] + half, right[ready])
            values = f(np.concatenate([below, above]), np.concatenate([ready, ready]))
            f_below, f_above = values[:ready.size], values[ready.size:]
            low_ok, high_ok = f_below < 0, f_above >= 0
            left[ready] = np.where(low_ok, below, left[ready])
            f_left[ready] = np.where(low_ok, f_below, f_left[ready])
            right[ready] = np.where(high_ok, above, right[ready])
            f_right[ready] = np.where(high_ok, f_above, f_right[ready])
            # a probe on the wrong side (the last bits of f are rounding): step on past it
            x[ready] = np.where(high_ok, below - half, above + half)
            x[ready] = np.where((x[ready] > left[ready]) & (x[ready] < right[ready]), x[ready],
                                0.5 * (left[ready] + right[ready]))
            live = np.sort(np.concatenate([live, ready[(right[ready] - left[ready]) > tolerance[ready]]]))
    return left, right, f_left, f_right
