"""Feldman–Cousins intervals for Binomial(n, λ) with λ restricted to [q, p].

The acceptance set of λ holds the counts with the highest likelihood ratio
``R(x; λ) = L(x | λ) / L(x | λ̂(x))``, ``λ̂(x) = clip(x/n, q, p)``, until their probability
reaches the confidence level (Feldman & Cousins 1998).  A count ``x`` belongs to it iff the
probability of the counts ranked strictly above ``x`` is below the level, so membership of one
(x, λ) pair costs one masked sum over the counts near ``nλ``.  An interval's endpoints are the
λ where ``x`` enters and leaves the acceptance set, found by bisection on that membership test
(not by a λ grid) to ~1e-13 and rounded outward, so coverage never dips between grid points.

Endpoints are computed lazily and kept in a belt cached per ``(n, q, p, confidence)``: an
estimate needs 2k endpoints, a coverage computation needs all ``2(n + 1)``.
"""

from __future__ import annotations

import functools
import threading

import numpy as np
from scipy.special import bdtr, expit, gammaln, xlogy

from .binomial import z

_TOLERANCE = 1e-13  # bisection stops when the λ bracket is this narrow
_CHUNK_CELLS = 4_000_000  # pairs × window cells evaluated per numpy batch


class Belt:
    """Lazily filled Feldman–Cousins belt for one ``(n, q, p, confidence)``."""

    def __init__(self, n: int, q: float, p: float, confidence: float, mirror: Belt | None = None):
        self.n, self.q, self.p, self.confidence = n, q, p, confidence
        x = np.arange(n + 1)
        self._log_choose = gammaln(n + 1) - gammaln(x + 1) - gammaln(n - x + 1)
        lam_hat = np.clip(x / n, q, p)
        self._lam_hat = lam_hat
        self._log_lik_max = xlogy(x, lam_hat) + xlogy(n - x, 1 - lam_hat)
        self._low = np.full(n + 1, np.nan)
        self._high = np.full(n + 1, np.nan)
        self._lock = threading.Lock()
        self._mirror = mirror

    def _log_lik(self, x: np.ndarray, lam: np.ndarray) -> np.ndarray:
        return xlogy(x, lam) + xlogy(self.n - x, 1 - lam)

    def accepted(self, x: np.ndarray, lam: np.ndarray) -> np.ndarray:
        """Return whether count ``x[i]`` is in the acceptance set of ``lam[i]``."""
        x = np.asarray(x, dtype=np.int64)
        lam = np.asarray(lam, dtype=float)
        out = np.empty(x.shape, dtype=bool)
        sd = np.sqrt(self.n * lam * (1 - lam))
        # 7 sd + 10 counts either side of nλ hold all but ~1e-13 of the mass; the mass left out
        # can only make a count look accepted, so truncation errs toward wider intervals.
        half = int(np.ceil(7 * sd.max(initial=0.0) + 10))
        offsets = np.arange(-half, half + 1)
        step = max(1, _CHUNK_CELLS // offsets.size)
        # ties (e.g. every x <= nq at λ = q) count as "not above": the whole tie is accepted
        tie = 1e-10 * max(1.0, float(self.n))
        for start in range(0, x.size, step):
            xs, lams = x[start:start + step], lam[start:start + step]
            ys = np.rint(self.n * lams).astype(np.int64)[:, None] + offsets
            valid = (ys >= 0) & (ys <= self.n)
            ys = np.clip(ys, 0, self.n)
            log_lik = self._log_lik(ys, lams[:, None])
            ratio_y = log_lik - self._log_lik_max[ys]
            ratio_x = self._log_lik(xs, lams) - self._log_lik_max[xs]
            pmf = np.exp(self._log_choose[ys] + log_lik)
            above = valid & (ratio_y > ratio_x[:, None] + tie)
            out[start:start + step] = np.where(above, pmf, 0.0).sum(axis=1) < self.confidence
        return out

    def upper_ends(self, x: np.ndarray) -> np.ndarray:
        """Return the largest λ whose acceptance set holds ``x`` (the interval's upper end).

        Feldman–Cousins belts are not always convex: a count that has left the acceptance set
        can briefly re-enter it (Feldman & Cousins 1998, sec. IV.B), so the upper end is the
        *last* exit, found exactly rather than by scanning a λ grid.  Above λ̂(x) the counts
        ranked above ``x`` are ``x+1 .. u``; a count ``y > x`` joins them where
        ``R(y; λ) = R(x; λ)``, which is linear in logit(λ): ``logit s_y = (ℓ̂_y − ℓ̂_x)/(y − x)``.
        Between these swap points the probability ``F_λ(u) − F_λ(x)`` of the counts above is
        unimodal in λ (binomial interval probabilities are), so ``x`` can be accepted only at the
        ends of a piece.  Testing both sides of every swap point with the binomial CDF finds
        the outermost accepted piece; bisection finds where it ends.
        """
        n, cl = self.n, self.confidence
        x = np.asarray(x, dtype=np.int64)
        result = np.full(x.shape, self.p)
        todo = np.flatnonzero(~self.accepted(x, np.full(x.shape, self.p)))
        if not todo.size:
            return result
        x = x[todo]
        # A count below nq has its λ̂ clipped to q, so just above q it ranks high however far
        # in the tail it is; its swaps with every count above matter (span n).
        clipped = self._lam_hat[x] <= self.q
        if clipped.any() and not clipped.all():
            result[todo[clipped]] = self._search(x[clipped], n)
            result[todo[~clipped]] = self._search(x[~clipped], None)
        else:
            result[todo] = self._search(x, n if clipped.all() else None)
        return result

    def _search(self, x: np.ndarray, span: int | None) -> np.ndarray:
        """The upper ends of counts not accepted at p (see :meth:`upper_ends`)."""
        n, cl = self.n, self.confidence
        if span is None:
            lam_mid = min(max(0.5, self.q), self.p)
            # a count more than (z + 1.5) sd below nλ is never accepted: swaps further out are moot
            span = 2 * int(np.ceil((z(cl) + 1.5) * np.sqrt(n * lam_mid * (1 - lam_mid)) + 5)) + 10
        ys = x[:, None] + np.arange(1, span + 1)
        valid = ys <= n
        ys = np.minimum(ys, n)
        with np.errstate(divide="ignore", invalid="ignore"):
            logit = (self._log_lik_max[ys] - self._log_lik_max[x][:, None]) / (ys - x[:, None])
        swap = np.where(valid, expit(logit), np.inf)
        lam_hat = self._lam_hat[x]
        in_range = (swap > lam_hat[:, None]) & (swap < self.p)
        rows, cols = np.nonzero(in_range)
        s = swap[rows, cols]
        f_x = bdtr(x[rows], n, s)
        ok_after = np.zeros(in_range.shape, dtype=bool)
        ok_before = np.zeros(in_range.shape, dtype=bool)
        ok_after[rows, cols] = bdtr(ys[rows, cols], n, s) - f_x < cl
        ok_before[rows, cols] = bdtr(ys[rows, cols] - 1, n, s) - f_x < cl
        best_after = np.where(ok_after, swap, -np.inf).max(axis=1)
        best_before = np.where(ok_before, swap, -np.inf).max(axis=1)
        # the piece the outermost accepted point starts: its last count above x and its end
        start = np.maximum(best_after, lam_hat)
        from_swap = best_after >= lam_hat
        upper_count = np.where(
            from_swap,
            ys[np.arange(x.size), np.argmax(np.where(ok_after, swap, -np.inf), axis=1)],
            x + (valid & (swap <= lam_hat[:, None])).sum(axis=1),
        )
        later = np.where(swap > start[:, None], swap, np.inf).min(axis=1)
        end = np.minimum(later, self.p)
        inside, outside = start.copy(), end.copy()
        for _ in range(64):
            open_ = outside - inside > _TOLERANCE
            if not open_.any():
                break
            mid = 0.5 * (inside + outside)
            ok = bdtr(upper_count, n, mid) - bdtr(x, n, mid) < cl
            inside = np.where(open_ & ok, mid, inside)
            outside = np.where(open_ & ~ok, mid, outside)
        ends = np.where(best_before > start, best_before + _TOLERANCE, outside)
        return np.minimum(ends, self.p)

    def _fill(self, x: np.ndarray) -> None:
        if self._mirror is None:
            self._mirror = Belt(self.n, 1.0 - self.p, 1.0 - self.q, self.confidence, mirror=self)
        self._high[x] = np.clip(self.upper_ends(x), self.q, self.p)
        # the lower end of x is the upper end of n − x in the mirrored problem λ -> 1 − λ
        self._low[x] = np.clip(1.0 - self._mirror.upper_ends(self.n - x), self.q, self.p)

    def interval(self, counts) -> tuple[np.ndarray, np.ndarray]:
        """Return the λ interval ``(low, high)`` for each count (computing missing endpoints)."""
        counts = np.asarray(counts, dtype=np.int64)
        with self._lock:
            missing = np.unique(counts[np.isnan(self._low[counts])])
            if missing.size:
                self._fill(missing)
            return self._low[counts].copy(), self._high[counts].copy()


@functools.lru_cache(maxsize=64)
def belt(n: int, q: float, p: float, confidence: float) -> Belt:
    """Return the cached Feldman–Cousins belt for ``(n, q, p, confidence)``."""
    return Belt(n, q, p, confidence)
