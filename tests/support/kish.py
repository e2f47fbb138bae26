"""The Kish rule of weighted intervals (estimators/weights.py, "Never more certain than the reports"),
computed here from the weights alone, for the tests that compare a weighted interval with R's: every
weighted or raked interval is R's ``svyciprop(method = "beta")`` recipe joined with the exact unweighted
interval (Feldman–Cousins, :func:`deniable.estimators.intervals.exact`) of the same report share at
Kish's effective sample size, rounded down and at least 1 — at the whole counts on either side of
``n · share`` when that is not whole."""

from __future__ import annotations

import math

import numpy as np

from deniable.estimators.intervals import exact


def kish_n(weights) -> int:
    """``(Σw)²/Σw²`` of the positive weights, rounded down (to 1e-12), at least 1."""
    w = np.asarray(weights, dtype=float)
    w = w[w > 0]
    return max(1, int(math.floor(w.sum() ** 2 / np.sum(w**2) * (1 + 1e-12))))


def exact_interval(share: float, n: int, p: float, q: float, confidence: float = 0.95) -> tuple[float, float]:
    """The exact interval for π of ``n`` reports of which ``share`` have probability ``q + (p − q)π``:
    the hull of the intervals at ``floor(n·share)`` and ``ceil(n·share)``."""
    x = min(max(share, 0.0), 1.0) * n
    counts = {round(x)} if abs(x - round(x)) <= 1e-9 * n else {math.floor(x), math.ceil(x)}
    low, high = exact(np.array(sorted(counts)), n, p, q, confidence)
    return float(low.min()), float(high.max())


def report_interval(share: float, n: int, a: float, b: float, confidence: float = 0.95) -> tuple[float, float]:
    """The exact interval for an answer's share π from ``n`` reports of which ``share`` are a report of
    probability ``b + (a − b)π`` (a binary design's report, ``a`` its probability under the answer)."""
    if a > b:
        return exact_interval(share, n, a, b, confidence)
    low, high = exact_interval(share, n, b, a, confidence)  # the report rises with the other answer
    return 1 - high, 1 - low


def join(low: float, high: float, floor: tuple[float, float]) -> tuple[float, float]:
    """An interval joined with the exact one, kept in [0, 1]."""
    return float(np.clip(min(low, floor[0]), 0, 1)), float(np.clip(max(high, floor[1]), 0, 1))


def with_floor(r_low: float, r_high: float, share: float, n: int, p: float = 1.0, q: float = 0.0,
               confidence: float = 0.95) -> tuple[float, float]:
    """R's interval (on π) joined with the exact one at ``n`` respondents (kept in [0, 1])."""
    return join(r_low, r_high, exact_interval(share, n, p, q, confidence))


def holds_r(ours_low: float, ours_high: float, r_low: float, r_high: float, tolerance: float = 1e-6) -> bool:
    """Whether an interval contains R's (for the designs whose exact interval is a region: it is R's
    where the Kish rule did not set it, and only wider where it did)."""
    return ours_low <= r_low + tolerance and ours_high >= r_high - tolerance
