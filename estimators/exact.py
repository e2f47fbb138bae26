"""Feldman–Cousins intervals for Binomial(n, λ) with λ restricted to [q, p], exact at every n.

The construction (Feldman & Cousins 1998)
-----------------------------------------
A count x has likelihood ratio ``R(x; λ) = L(x | λ) / L(x | λ̂(x))`` with ``λ̂(x) = clip(x/n, q, p)``.
The acceptance set of λ holds the counts of highest R until their probability reaches the
confidence level CL: x is *accepted* at λ iff the probability of the counts ranked strictly
above it is below CL.  Counts whose log R differs from x's by at most ``TIE`` (1e-9) count as
ties, and ties are not "above": that can only enlarge acceptance sets, so coverage stays ≥ CL.
The interval of x is ``[inf, sup]`` of the λ whose acceptance set holds x.  The belt need not be
convex in λ (a count can leave and re-enter, Feldman & Cousins 1998, sec. IV.B), so the ends
are the *outermost* acceptance, found exactly, never by scanning a grid.

How an upper end is found without summing over counts
-----------------------------------------------------
For λ above λ̂(x) the count x lies left of nλ, and ``log R(·; λ)`` is unimodal with its peak at nλ
(concave on the right, increasing on the left), so the counts above x are an integer interval
``[lo, hi]`` (``lo = x + 1`` except within ~TIE of λ̂(x)); its probability is
``S(lo − 1) − S(hi)`` with ``S(y) = P(Y > y) = I_λ(y + 1, n − y)``, the regularized incomplete
beta function (``scipy.special.betainc``, accurate to ~1e-13 relative even at n = 10⁹).  ``hi``
is the integer part of the root of ``log R(y; λ) = log R(x; λ) + TIE``, found by Newton's
method from the right, where concavity makes it monotone, and checked on the integers.  One
membership test costs two incomplete-beta calls and does not depend on n.

Three facts bound the search:

1. ``log R(y; λ) − log R(x; λ) = (y − x) logit λ − (ℓ̂_y − ℓ̂_x)`` increases with λ for y > x, so
   the set above x only grows with λ: y joins it at the *swap point*
   ``logit s_y = (ℓ̂_y − ℓ̂_x + TIE)/(y − x)``.
2. A binomial interval probability ``P_λ(lo ≤ Y ≤ hi)`` is unimodal in λ (its derivative
   ``n[b(lo − 1; n − 1, λ) − b(hi; n − 1, λ)]`` changes sign once).  With 1., the mass above x
   on ``[t, t']`` is at least ``min(P_t(A_t), P_t'(A_t))``, ``A_t`` the set above x at t: two
   incomplete-beta calls certify that x is rejected on a whole stretch of λ.
3. Chernoff: ``P(Y ≤ x) ≤ R(x; λ)`` and ``P(Y > hi) ≤ R(hi + 1; λ) ≤ e^TIE R(x; λ)``, so x is
   rejected wherever ``(1 + e^TIE) R(x; λ) ≤ 1 − CL``; R(x; λ) decreases in λ, so this holds
   on a whole ``[λ_C, p]``.

The search brackets the crossing starting from a normal-approximation guess (the Wilson bound
at x + 1/2), certifies ``[B, λ_C]`` with 2. in steps predicted by the normal approximation,
and, between the last accepted point A and B (a few swaps apart), walks the swap points down
from B: the last piece where x is accepted ends at a swap point (ties are accepted) or at the
rising crossing of a fixed interval probability, found by safeguarded Newton steps (the
probability's derivative is a difference of two binomial densities) and closed by the Illinois
method where they leave it open.  Endpoints are rounded outward by ``PAD`` (1e-12 in λ).  At
large n the crossing is a few swaps from the normal guess and the cost is a few dozen incomplete-beta calls per endpoint, independent of n
(measured: ``scripts/benchmark.py``).

Counts searched together lean on their neighbours
-------------------------------------------------
The upper end is nondecreasing in x (proved in :class:`Belt`).  So when a batch holds a run of
counts of one problem (the planner's belts hold about 22σ of them), only every ``_STRIDE``-th
count (4th) and each run's ends are searched as above; the others, in rounds that halve the
gaps, are searched between two computed neighbours x′ < x < x″.  The end of x″ is an upper
bound B with x rejected on all of ``[B, p]``, so neither λ_C nor the certification of
``[B, λ_C]`` is needed; the end of x′, less the pad, is tried as A (x usually is accepted
there; if the walk of the swaps down from B reaches A, its acceptance is checked, and a count
not accepted there is searched from scratch), and the walk starts at once when A and B are at
most ``_SCAN_BETWEEN`` swaps apart, as they nearly always are.  The ends are the same as
searched alone to about 1e-14 (the last bits of a crossing depend on its bracket), and the
incomplete-beta evaluations of a planner belt fall from 28 to about 11 per count
(``tests/unit/test_estimators_exact.py`` counts them).  The walk takes the probability at a
swap point itself as the one just after it less the joining count's density (Boost's binomial
density, a third of an incomplete beta's cost).

Several belts in one batch
--------------------------
:func:`upper_ends` takes one n per count as it takes one ``(q, p)`` per count, and a ``group``
per count naming the batch it would have been searched in alone; :func:`fill_belts` fills
several belts so.  A count's search reads only its own problem's numbers and its neighbours
within its own run (runs break where the group or n changes), and the Illinois tolerance of the
crossings is the largest bracket end of its own group, so every end is the one its belt alone
gives, bit for bit; what the batch shares is the overhead of each round, which dominates the cost
of a belt below n ≈ 10,000 (the planner's searches, :mod:`deniable.estimators.planning`).

Counts rejected at p by fact 3 (every count of a planner's belt, many standard deviations below
np) are known to be so without the probability of their set above at p: two incomplete-beta
evaluations fewer per count.

Lower ends are upper ends of the mirrored problem ``x → n − x``, ``λ → 1 − λ``,
``[q, p] → [1 − p, 1 − q]``.  A lower end whose mirrored count is accepted at ``1 − q`` *is* q
(returned exactly, so it maps to π = 0), and an upper end accepted at p is p (π = 1).  When
``1 − p = q`` in floating point (a yes/no question, or one asked directly) the mirrored problem
is the problem itself, so a belt searches the upper ends of the counts and of their mirrors
``n − x`` once each, in one batch: half the work for the counts near n/2 that the planner sums
over, and the same ends, to about 1e-14, as the two-sided batch.

References
----------
.. [1] G. J. Feldman, R. D. Cousins, "Unified approach to the classical statistical analysis
   of small signals", Phys. Rev. D 57 (1998) 3873.
.. [2] H. Chernoff, "A measure of asymptotic efficiency for tests of a hypothesis based on the
   sum of observations", Annals of Mathematical Statistics 23 (1952) 493–507 (the bound
   ``P(Y ≤ x) ≤ exp(−n KL(x/n‖λ))``).
.. [3] M. Dowell, P. Jarratt, "A modified regula falsi method for computing the root of an
   equation", BIT 11 (1971) 168–174 (the Illinois method).
.. [4] M. Abramowitz, I. A. Stegun, *Handbook of Mathematical Functions* (1964), 26.5.24: the
   binomial tail as a regularized incomplete beta function.
.. [5] W. H. Press et al., *Numerical Recipes*, 3rd ed. (2007), sec. 9.4 (Newton's method
   safeguarded by a bracket, ``rtsafe``).
"""

from __future__ import annotations

import functools
import math
import threading

import numpy as np
from scipy.special import betainc, expit, logit, ndtr

from deniable.errors import FieldError

from .binomial import pmf_kernel
from .likelihood_ratio import TIE, above, log_ratio, swap_point
from .root_finding import illinois, newton_bracket

# The ranking of the counts (likelihood_ratio.py) and the root finders (root_finding.py) are modules of
# their own; the names they had here stay importable from here (``exact.above``, ``exact.illinois``, ``exact.TIE``).

PAD = 1e-12  # endpoints are rounded outward by this much in λ
_SCAN = 8  # swaps walked one at a time between the last accepted point and B
_SCAN_BETWEEN = 24  # the same between neighbours' ends, where the walk usually stops within a few
_STRIDE = 4  # counts searched from scratch: every 4th of a run, the others between neighbours' ends
_DENSE_N = 20_000  # belts up to this n keep their endpoints in arrays (320 kB), larger ones in dicts


def survival(y, n, lam):
    """Return ``P(Y > y)`` for ``Y ~ Binomial(n, λ)``: ``I_λ(y + 1, n − y)`` (1 below 0, 0 from n)."""
    y, lam = np.asarray(y, dtype=float), np.asarray(lam, dtype=float)
    if y.shape != lam.shape:
        y, lam = np.broadcast_arrays(y, lam)
    inside = (y >= 0) & (y < n)
    if inside.all():
        return betainc(y + 1.0, n - y, lam)
    out = np.where(y < 0, 1.0, 0.0)
    n = np.broadcast_to(n, y.shape)[inside] if np.ndim(n) else n  # one n, or one per count
    out[inside] = betainc(y[inside] + 1.0, n - y[inside], lam[inside])
    return out


def _pmf(y, n, lam):
    """``P(Y = y)``, Boost's binomial density in scipy.special (a third of an incomplete beta's
    cost); as the difference of two tails where a scipy lacks that kernel."""
    kernel = pmf_kernel()
    if kernel is None:  # pragma: no cover - every scipy this project supports has it
        return survival(y - 1, n, lam) - survival(y, n, lam)
    return kernel(y, np.asarray(n, dtype=float), lam)


def interval_mass(lo, hi, n, lam):
    """Return ``P_λ(lo ≤ Y ≤ hi)`` (0 for an empty range)."""
    return np.where(lo <= hi, survival(lo - 1, n, lam) - survival(hi, n, lam), 0.0)


def _mass_slope(lo, hi, n, lam):
    """``d/dλ P_λ(lo ≤ Y ≤ hi) = n[b(lo − 1; n − 1, λ) − b(hi; n − 1, λ)]`` (each tail
    ``P(Y > y) = I_λ(y + 1, n − y)`` has derivative ``n·b(y; n − 1, λ)``, A&S 26.5.24 and 6.6.8);
    a term is 0 where its tail is constant (``lo − 1 < 0``, ``hi ≥ n``)."""
    below = np.where(lo - 1 >= 0, _pmf(np.maximum(lo - 1, 0), n - 1, lam), 0.0)
    over = np.where(hi <= n - 1, _pmf(np.minimum(hi, n - 1), n - 1, lam), 0.0)
    return n * (below - over)


def upper_ends(x, n, q, p, confidence: float, group=None):
    """Return ``(ends, at_p)``: the sup of the λ whose acceptance set holds each count x.

    ``at_p`` marks counts accepted at λ = p, whose end is p exactly.  ``n``, ``q`` and ``p`` may
    be arrays (one problem per count), so a batch can mix a belt and its mirror, or several
    belts; ``group`` (one integer per count) then says which counts would have been one batch
    on their own: each count's end is the one its own batch gives, bit for bit (see
    :func:`fill_belts`).
    """
    x = np.asarray(x, dtype=float)
    n = np.broadcast_to(np.asarray(n, dtype=float), x.shape).copy()
    q = np.broadcast_to(np.asarray(q, dtype=float), x.shape).copy()
    p = np.broadcast_to(np.asarray(p, dtype=float), x.shape).copy()
    group = np.zeros(x.shape, dtype=np.int64) if group is None else np.asarray(group, dtype=np.int64)
    ends = p.copy()
    # λ = 0 or 1 (a question asked directly) makes infinite log ratios on purpose: they are
    # compared, never returned, so the floating-point warnings they raise are noise here
    with np.errstate(all="ignore"):
        at_p = _accepted_at_p(x, n, q, p, confidence)
        todo = np.flatnonzero(~at_p)
        if todo.size:
            ends[todo] = _neighbour_search(x[todo], n[todo], q[todo], p[todo], confidence, group[todo])
    return np.minimum(ends, p), at_p


def _accepted_at_p(x, n, q, p, confidence: float) -> np.ndarray:
    """Whether each count is accepted at λ = p, computed only where fact 3 does not already say no.

    Fact 3 of the module notes: the probability of the counts above x at λ is at least
    ``1 − (1 + e^TIE) R(x; λ)``, so x is rejected at p wherever ``(1 + e^TIE) R(x; p) ≤ 1 − CL``
    (checked with half of ``1 − CL``, far beyond the rounding of log R); the counts of a planner's
    belt, many standard deviations below np, all are, and cost no incomplete beta here.  The others
    are decided by the probability of their set above, as before.
    """
    at_p = np.zeros(x.shape, dtype=bool)
    bound = log_ratio(x, n, p, q, p) + np.log1p(np.exp(TIE))
    check = np.flatnonzero(~(bound <= math.log((1 - confidence) / 2)))
    if check.size:
        xc, nc, qc, pc = x[check], n[check], q[check], p[check]
        lo, hi = above(xc, nc, pc.copy(), qc, pc)
        at_p[check] = interval_mass(lo, hi, nc, pc) < confidence
    return at_p


def _neighbour_search(x, n, q, p, confidence: float, group) -> np.ndarray:
    """Upper ends of counts rejected at p: every ``_STRIDE``-th count of a run from scratch, the
    others between the ends of their nearest computed neighbours, halving the gaps.

    Counts of one problem (the same q and p) sorted, a *run* is a stretch without gaps wider than
    ``_STRIDE``; its first and last counts, and every ``_STRIDE``-th, are searched from scratch
    (:class:`_Search`).  Then, in rounds, the count midway between two computed ones x′ < x < x″
    is searched with ``high`` = the end of x″ and ``low`` = the end of x′: the upper end is
    nondecreasing in x (the proof is in :class:`Belt`), so x is rejected everywhere above the
    true end of x″, which the computed one exceeds by the pad; and x is usually accepted just
    below the end of x′ (tried, not assumed).  Neither the certification of [B, C] nor the
    Chernoff point is needed then, and A and B start a few swaps apart.
    """
    order = np.lexsort((x, p, q, n, group))
    xs, ns, qs, ps, gs = x[order], n[order], q[order], p[order], group[order]
    m = xs.size
    where = np.arange(m)
    starts = np.ones(m, dtype=bool)
    starts[1:] = ((gs[1:] != gs[:-1]) | (ns[1:] != ns[:-1]) | (qs[1:] != qs[:-1]) | (ps[1:] != ps[:-1])
                  | (xs[1:] - xs[:-1] > _STRIDE))
    ends_run = np.ones(m, dtype=bool)
    ends_run[:-1] = starts[1:]
    first_of_run = np.maximum.accumulate(np.where(starts, where, 0))
    done = starts | ends_run | ((where - first_of_run) % _STRIDE == 0)
    found = np.full(m, np.nan)
    scratch = np.flatnonzero(done)
    found[scratch] = _Search(xs[scratch], ns[scratch], qs[scratch], ps[scratch], confidence, gs[scratch]).run()
    while not done.all():
        before = np.maximum.accumulate(np.where(done, where, -1))
        after = np.minimum.accumulate(np.where(done, where, m)[::-1])[::-1]
        pick = np.flatnonzero(~done & (where == (before + after) // 2))
        low, high = found[before[pick]], found[after[pick]]
        share = (xs[pick] - xs[before[pick]]) / (xs[after[pick]] - xs[before[pick]])
        found[pick] = _Search(xs[pick], ns[pick], qs[pick], ps[pick], confidence, gs[pick]).run(
            low, high, low + share * (high - low))
        done[pick] = True
    ends = np.empty(m)
    ends[order] = found
    return ends


class _Search:
    """The vectorized search for the upper ends of counts rejected at p (see the module notes).

    Per count: A (accepted, with the set above x there), B (rejected), C (x rejected on all of
    [C, p]).  Phase 0 narrows [A, B] to a few swaps; phase 1 certifies [B, C] (an acceptance
    found on the way becomes the new A, back to phase 0); phase 2 walks the swaps from B to A.
    """

    def __init__(self, x, n, q, p, confidence, group=None):
        self.x, self.q, self.p, self.cl = x, q, p, confidence
        self.n = np.broadcast_to(np.asarray(n, dtype=float), x.shape).copy()  # one per count
        self.group = np.zeros(x.shape, dtype=np.int64) if group is None else group
        self.evaluations = 0
        self.last_swaps = np.full(x.shape, np.inf)
        self.scan_limit = _SCAN  # A and B this few swaps apart: walk the swaps (run raises it)

    def state(self, lam, idx):
        """The set above x at λ and its probability, for the counts ``idx``."""
        n = self.n[idx]
        lo, hi = above(self.x[idx], n, lam, self.q[idx], self.p[idx])
        self.evaluations += 1
        return lo, hi, interval_mass(lo, hi, n, lam)

    def chernoff(self):
        """λ_C: ``(1 + e^TIE) R(x; λ) ≤ 1 − CL`` on [λ_C, p] (p when there is no such λ below p)."""
        x, n, q, p = self.x, self.n, self.q, self.p
        hat = np.minimum(np.maximum(x / n, q), p)
        target = np.log((1 - self.cl) / (1 + np.exp(TIE)))
        # log R(x; λ) ≤ −2n(λ − λ̂)² (Pinsker), so this start is right of the root; below 1 even
        # when p = 1 (asked directly), where every count but n has log R = −∞ and ranks degenerate
        lam = np.minimum(np.minimum(p, 1.0 - 2.0**-40), hat + np.sqrt(-target / (2.0 * n)))
        good = log_ratio(x, n, lam, q, p) <= target
        w = logit(np.where(good, lam, 0.5))
        for _ in range(6):  # log R(x; expit w) is concave in w: Newton from the right
            lam_w = expit(w)
            f = log_ratio(x, n, lam_w, q, p) - target
            d = x - n * lam_w
            with np.errstate(divide="ignore", invalid="ignore"):
                w_new = np.where(d < 0, w - f / d, w)
            lam_new = expit(w_new)
            ok = good & (lam_new > hat) & (log_ratio(x, n, lam_new, q, p) <= target)
            w = np.where(ok, w_new, w)
        return np.where(good, np.minimum(expit(w), p), p)

    def run(self, low=None, high=None, centre=None) -> np.ndarray:
        """The upper ends; with ``low`` and ``high`` (one each per count), between neighbours' ends.

        ``high`` must be a λ where x is rejected together with all of ``[high, p]`` — the end of a
        larger count of the same problem (:func:`upper_ends`) — and replaces the Chernoff point
        C; ``low − PAD`` (a smaller count's end, or λ̂(x) if that is higher) is A, whose
        acceptance is checked only if the walk of the swaps down from B reaches it.  A count not
        accepted there, or with λ̂(x) ≥ ``high``, is searched again from scratch.  ``centre`` is
        where narrowing starts if A and B are more than ``_SCAN_BETWEEN`` swaps apart.
        """
        x, n, cl = self.x, self.n, self.cl
        size = x.size
        everyone = np.arange(size)
        hat = np.minimum(np.maximum(x / n, self.q), self.p)
        # A = λ̂(x): nothing ranks above x there
        a = np.stack([hat, x + 1.0, x.copy(), np.zeros(size)])  # λ, lo, hi, mass
        phase = np.zeros(size, dtype=np.int8)
        if high is None:
            c_lam = self.chernoff()
            c = np.stack([c_lam, *self.state(c_lam, everyone)])
            weak = c[3] < cl  # cannot happen in exact arithmetic; then certify from p instead
            if weak.any():
                a[:, weak] = c[:, weak]
                c[0, weak] = self.p[weak]
                c[1:, weak] = np.stack(self.state(self.p[weak], np.flatnonzero(weak)))
            guess = self.guess(hat, c[0])
            first = np.ones(size, dtype=bool)
            redo = np.zeros(size, dtype=bool)
        else:
            high = np.minimum(high, self.p)
            start = np.minimum(np.maximum(low - PAD, hat), high)
            # the sets above x at B and at A, but not their probabilities: x is rejected at B
            # (the theorem), and A's acceptance is checked only if the walk of the swaps down
            # from B reaches it (scan); NaN marks a probability not computed
            both_lo, both_hi = above(np.concatenate([x, x]), np.concatenate([n, n]), np.concatenate([high, start]),
                                     np.concatenate([self.q, self.q]), np.concatenate([self.p, self.p]))
            c = np.stack([high, both_lo[:size], both_hi[:size], np.full(size, np.nan)])
            tried = np.stack([start, both_lo[size:], both_hi[size:], np.full(size, np.nan)])
            good = start > hat
            a[:, good] = tried[:, good]
            redo = ~(hat < high)
            phase[redo] = 3
            self.scan_limit = _SCAN_BETWEEN
            # narrowing, if A and B are more than a few swaps apart, starts around ``centre``
            guess = np.full(size, np.nan) if centre is None else np.asarray(centre, dtype=float)
            first = np.isfinite(guess)
        b = c.copy()
        certified = np.ones(size, dtype=bool)  # [B, p] is known to reject x
        t = b.copy()  # phase 1: [B, t] certified so far
        reach = c[0].copy()  # phase 1: how far the next step may go
        result = np.full(size, np.nan)
        for _ in range(500):
            # ---- phase 0: narrow [A, B] to a few swaps
            i0 = np.flatnonzero(phase == 0)
            if i0.size:
                narrow = (self.swaps_between(a[:, i0], b[:, i0]) <= self.scan_limit) | (b[0, i0] - a[0, i0] <= PAD / 4)
                go = i0[narrow]
                phase[go] = np.where(certified[go], 2, 1)
                t[:, go] = b[:, go]
                reach[go] = c[0, go]
                i0 = i0[~narrow]
            if i0.size:
                self.narrow(i0, a, b, c, certified, guess, first)
            # ---- phase 1: certify [B, C]
            i1 = np.flatnonzero(phase == 1)
            if i1.size:
                self.certify(i1, a, b, c, t, reach, certified, phase)
            # ---- phase 2: walk the swaps between A and B, once every count is ready (one batch)
            i2 = np.flatnonzero(phase == 2)
            if i2.size and np.all(phase >= 2):
                result[i2] = self.scan(i2, a[:, i2], b[:, i2])
                phase[i2] = 3
            if np.all(phase == 3):
                break
        else:  # pragma: no cover - the loop ends long before; never return a wrong end silently
            raise RuntimeError("Feldman–Cousins endpoint search did not finish")
        redo |= np.isnan(result)  # A was not accepted after all (scan)
        ends = np.minimum(result + PAD, self.p)
        if redo.any():
            again = np.flatnonzero(redo)
            ends[again] = _Search(x[again], n[again], self.q[again], self.p[again], cl, self.group[again]).run()
        return ends

    def guess(self, low, high):
        """Where the normal approximation puts the crossing, between λ̂(x) and λ_C.

        The set above x is ``(x, u]`` with u from ``log R(u; λ) = log R(x; λ)``: on the right of
        nλ, ``n·KL(u/n‖λ) ≈ d²/(2σ²) − (1 − 2λ) d³/(6σ⁴)`` gives ``d = u − nλ ≈ σ√(2L) + (1 − 2λ)L/3``
        with ``L = −log R(x; λ)`` (exact, so clipping at q counts), and beyond np, where log R is
        linear in u, the line.  Its probability ``Φ((u + ½ − nλ)/σ) − Φ((x + ½ − nλ)/σ)`` reaches
        CL at the guess (Illinois); it is usually within a count or two of the end.
        """
        x, n, q, p, cl = self.x, self.n, self.q, self.p, self.cl
        top = n * p

        def approx(lam, idx=slice(None)):
            x_, n_, q_, p_, top_ = x[idx], n[idx], q[idx], p[idx], top[idx]
            sd = np.sqrt(np.maximum(n_ * lam * (1 - lam), 1e-300))
            depth = np.maximum(-log_ratio(x_, n_, lam, q_, p_), 0.0)
            u = n_ * lam + sd * np.sqrt(2 * depth) + (1 - 2 * lam) * depth / 3
            with np.errstate(divide="ignore", invalid="ignore"):
                line = top_ + (log_ratio(top_, n_, lam, q_, p_) + depth) / (logit(p_) - logit(lam))
            u = np.where((u > top_) & np.isfinite(line), np.maximum(line, top_), u)
            return ndtr((u + 0.5 - n_ * lam) / sd) - ndtr((x_ + 0.5 - n_ * lam) / sd)

        f_low, f_high = approx(low) - cl, approx(high) - cl
        solvable = (f_low < 0) & (f_high >= 0)
        inner, outer = illinois(lambda lam, idx: approx(lam, idx) - cl, np.where(solvable, low, 0.0),
                                np.where(solvable, high, 0.0), np.where(solvable, f_low, -1.0),
                                np.where(solvable, f_high, 1.0), 0.05 / n, iterations=30)
        return np.where(solvable, 0.5 * (inner + outer), np.nan)

    def swaps_between(self, a, b):
        """How many counts join the set above x between A and B."""
        empty = a[1] > a[2]
        joined_low = np.where(empty, 0.0, a[1] - b[1])
        joined_high = b[2] - np.where(empty, b[1] - 1, a[2])
        return joined_low + joined_high

    def swap_at(self, idx, a, b, position):
        """The swap point of the count ``position`` places into those joining between A and B."""
        x, n, q, p = self.x[idx], self.n[idx], self.q[idx], self.p[idx]
        empty = a[1] > a[2]
        joined_low = np.where(empty, 0.0, a[1] - b[1])
        a_hi = np.where(empty, b[1] - 1, a[2])
        j = np.floor(position)
        y = np.where(j < joined_low, b[1] + j, a_hi + 1 + (j - joined_low))
        return swap_point(x, y, n, q, p)

    def narrow(self, idx, a, b, c, certified, guess, first):
        """Two trial points inside (A, B): the normal guess ± a few counts, then interpolation of
        the mass between A and B, or — when that last failed to halve the swaps in between (a
        bent staircase, e.g. swaps piling up at the boundary) — the swap points a third and two
        thirds of the way through the counts that join between A and B."""
        n, cl = self.n, self.cl
        lam_a, lam_b = a[0, idx], b[0, idx]
        width = lam_b - lam_a
        swaps = self.swaps_between(a[:, idx], b[:, idx])
        with np.errstate(divide="ignore", invalid="ignore"):
            interp = lam_a + (cl - a[3, idx]) / (b[3, idx] - a[3, idx]) * width
        trust = first[idx] | (self.last_swaps[idx] >= 2 * swaps)
        centre = np.where(first[idx], guess[idx], interp)
        spread = np.where(first[idx], 2.0 / n[idx], width / 8)
        first[idx] = False
        self.last_swaps[idx] = swaps
        inside = trust & np.isfinite(centre) & (centre > lam_a) & (centre < lam_b)
        low = np.maximum(centre - spread, lam_a + width / 64)
        high = np.minimum(centre + spread, lam_b - width / 64)
        split = np.flatnonzero(~inside)
        if split.size:
            low[split] = self.swap_at(idx[split], a[:, idx[split]], b[:, idx[split]], swaps[split] / 3)
            high[split] = self.swap_at(idx[split], a[:, idx[split]], b[:, idx[split]], 2 * swaps[split] / 3)
            low[split] = np.clip(low[split], lam_a[split], lam_b[split])
            high[split] = np.clip(high[split], lam_a[split], lam_b[split])
        both_lo, both_hi, both_mass = self.state(np.concatenate([low, high]), np.concatenate([idx, idx]))
        m = idx.size
        for half, point in ((slice(0, m), low), (slice(m, 2 * m), high)):
            lo, hi, mass = both_lo[half], both_hi[half], both_mass[half]
            accepted = mass < cl
            raise_a = accepted & (point > a[0, idx])
            ia = idx[raise_a]
            a[:, ia] = np.stack([point, lo, hi, mass])[:, raise_a]
            lower_b = ~accepted & (point < b[0, idx]) & (point > a[0, idx])
            ib = idx[lower_b]
            b[:, ib] = np.stack([point, lo, hi, mass])[:, lower_b]
            certified[ib] = False

    def certify(self, idx, a, b, c, t, reach, certified, phase):
        """Extend the certified stretch [B, t] toward C.

        A step ends at the next swap point s when the normal approximation does not expect to
        pass it: the set above x is constant on [t, s], so by fact 2 its probability at s
        decides the whole piece — rejected throughout, or x accepted at s itself (the joining
        count is a tie there).  Otherwise the step goes as far as predicted and is certified by
        fact 2 with the set at t; a failed step is halved next time.
        """
        n, cl = self.n[idx], self.cl
        x, q, p = self.x[idx], self.q[idx], self.p[idx]
        lam, lo, hi, mass = t[:, idx]
        limit = c[0, idx]
        # the next count to join: hi + 1 on the right, or lo − 1 on the left (near-ties only)
        right = np.where(hi < n, swap_point(x, hi + 1, n, q, p), np.inf)
        left = np.where(lo > x + 1, swap_point(x, lo - 1, n, q, p), np.inf)
        s_next = np.maximum(np.minimum(right, left), lam)
        predicted = self.predict(lam, lo, hi, mass, reach[idx], n)
        single = predicted <= s_next
        nxt = np.where(single, np.minimum(s_next, limit), predicted)
        self.evaluations += 1
        below_lo, above_hi = survival(lo - 1, n, nxt), survival(hi, n, nxt)
        fixed = np.where(lo <= hi, below_lo - above_hi, 0.0)
        kept = fixed >= cl  # with fact 2: rejected on all of [t, nxt]

        # single steps: no above() call; past s the set gains the joining count
        one = np.flatnonzero(single)
        if one.size:
            i1 = idx[one]
            joins_right = right[one] <= left[one]
            grown_lo = np.where(joins_right, lo[one], lo[one] - 1)
            grown_hi = np.where(joins_right, np.minimum(hi[one] + 1, n[one]), hi[one])
            end_here = nxt[one] >= limit[one]  # reached C inside the piece
            grown_lo = np.where(end_here, lo[one], grown_lo)
            grown_hi = np.where(end_here, hi[one], grown_hi)
            grown = np.where(joins_right, below_lo[one] - survival(grown_hi, n[one], nxt[one]),
                             survival(grown_lo - 1, n[one], nxt[one]) - above_hi[one])
            grown = np.where(end_here, fixed[one], grown)
            ok = kept[one]
            t[:, i1[ok]] = np.stack([nxt[one], grown_lo, grown_hi, grown])[:, ok]
            reach[i1[ok]] = limit[one][ok]
            done = i1[ok][nxt[one][ok] >= limit[one][ok]]
            certified[done] = True
            phase[done] = 2
            bad = ~ok  # accepted at s: back to bracketing above it
            ib = i1[bad]
            a[:, ib] = np.stack([nxt[one], lo[one], hi[one], fixed[one]])[:, bad]
            b[:, ib] = c[:, ib]
            certified[ib] = True
            phase[ib] = 0

        many = np.flatnonzero(~single)
        if not many.size:
            return
        idx, nxt, kept, below_lo = idx[many], nxt[many], kept[many], below_lo[many]
        lam, lo, hi, n = lam[many], lo[many], hi[many], n[many]
        new_lo, new_hi = above(self.x[idx], n, nxt, self.q[idx], self.p[idx])
        moved = new_lo != lo  # the set above x nearly always starts at x + 1: S(lo − 1) is shared
        below_new = below_lo.copy()
        if moved.any():
            below_new[moved] = survival(new_lo[moved] - 1, n, nxt[moved])
        new_mass = np.where(new_lo <= new_hi, below_new - survival(new_hi, n, nxt), 0.0)
        ik = idx[kept]
        t[:, ik] = np.stack([nxt, new_lo, new_hi, new_mass])[:, kept]
        reach[ik] = c[0, ik]
        finished = ik[t[0, ik] >= c[0, ik]]
        certified[finished] = True
        phase[finished] = 2
        failed = ~kept
        same = failed & (new_lo == lo) & (new_hi == hi)  # no swap in (t, nxt]: accepted at nxt
        found = idx[same]
        a[:, found] = np.stack([nxt, new_lo, new_hi, new_mass])[:, same]
        b[:, found] = c[:, found]
        certified[found] = True
        phase[found] = 0
        shrink = failed & ~same  # rejected at nxt but not certified in between: half the step next
        reach[idx[shrink]] = lam[shrink] + 0.5 * (nxt[shrink] - lam[shrink])

    def predict(self, lam, lo, hi, mass, limit, n):
        """The farthest λ' ≤ limit where the normal approximation keeps ``P_λ'(lo..hi)`` above CL.

        The approximation ``Φ((hi + ½ − nλ')/σ') − Φ((lo − ½ − nλ')/σ')`` is anchored to the
        exact mass at λ and asked to keep a quarter of the slack (n: one per count).
        """
        cl = self.cl

        def approx(v, idx=slice(None)):
            n_ = n[idx]
            sd = np.sqrt(np.maximum(n_ * v * (1 - v), 1e-300))
            return ndtr((hi[idx] + 0.5 - n_ * v) / sd) - ndtr((lo[idx] - 0.5 - n_ * v) / sd)

        goal = approx(lam) - 0.75 * (mass - cl)
        f_limit = approx(limit) - goal
        far = f_limit >= 0
        # Illinois on −(approx − goal): negative at λ (above the goal), non-negative at the limit
        inner, _ = illinois(lambda v, idx: goal[idx] - approx(v, idx), lam, np.where(far, lam, limit),
                            np.full(lam.shape, -1e-300), np.where(far, 0.0, -f_limit),
                            0.02 * (limit - lam) + 1e-300, iterations=30)
        step = np.where(far, limit, inner)
        # at least a hundredth of the way, so that a poor approximation cannot stall the walk
        return np.minimum(limit, np.maximum(step, lam + 0.01 * (limit - lam)))

    def scan(self, idx, a, b):
        """The last accepted λ in [A, B]: walk the swap points down from B (module notes)."""
        x, n, q, p, cl = self.x[idx], self.n[idx], self.q[idx], self.p[idx], self.cl
        group = self.group[idx]
        size = idx.size
        lam_a, lam_b = a[0], b[0]
        empty = a[1] > a[2]
        a_lo = np.where(empty, b[1], a[1])
        a_hi = np.where(empty, b[1] - 1, a[2])
        joined_low = (a_lo - b[1]).astype(np.int64)
        joined_high = (b[2] - a_hi).astype(np.int64)
        total = joined_low + joined_high
        result = np.full(size, np.nan)
        crowded = total > 4 * _SCAN  # B − A below the pad (swaps closer than rounding): B is the end
        result[crowded] = lam_b[crowded]
        width = int(max(total[~crowded].max(initial=0), 1))
        j = np.arange(width)[None, :]
        ys = np.where(j < joined_low[:, None], b[1][:, None] + j, a_hi[:, None] + 1 + (j - joined_low[:, None]))
        valid = j < total[:, None]
        ys = np.where(valid, ys, x[:, None] + 1)
        # swap points from fact 1
        swap = swap_point(x[:, None], ys, n[:, None], q[:, None], p[:, None])
        swap = np.where(valid, np.clip(swap, lam_a[:, None], lam_b[:, None]), -np.inf)
        # latest swap first; equal swaps: the outer count leaves first, so the set stays an interval
        outer_first = -np.abs(ys - n[:, None] * lam_b[:, None])
        order = np.lexsort((outer_first, -swap), axis=-1)
        swap = np.take_along_axis(swap, order, axis=1)
        ys = np.take_along_axis(ys, order, axis=1)
        lo, hi, right = b[1].copy(), b[2].copy(), lam_b.copy()
        active = ~crowded
        roots = []  # (counts, lo, hi, left, right, left is A): the crossings, found together at the end
        for col in range(width + 1):
            live = np.flatnonzero(active)
            if not live.size:
                break
            more = swap[live, col] > -np.inf if col < width else np.zeros(live.size, dtype=bool)
            last = live[~more]  # the lowest piece (A, right): accepted at A, rejected at its right end
            if last.size:
                roots.append((last, lo[last], hi[last], lam_a[last], right[last], np.ones(last.size, bool)))
                active[last] = False
            live = live[more]
            if not live.size:
                continue
            s, y = swap[live, col], ys[live, col]
            self.evaluations += 1
            below_lo, above_hi = survival(lo[live] - 1, n[live], s), survival(hi[live], n[live], s)
            just_after = np.where(lo[live] <= hi[live], below_lo - above_hi, 0.0)
            rising = just_after < cl  # accepted just after s, rejected at the right end: a crossing
            hit = live[rising]
            if hit.size:
                roots.append((hit, lo[hit], hi[hit], s[rising], right[hit], np.zeros(hit.size, bool)))
            active[hit] = False
            keep = ~rising
            live, s, y = live[keep], s[keep], y[keep]
            below_lo, above_hi = below_lo[keep], above_hi[keep]
            at_hi = y == hi[live]
            lo[live] = np.where(at_hi, lo[live], lo[live] + 1)
            hi[live] = np.where(at_hi, hi[live] - 1, hi[live])
            # at s itself y is a tie, not above: the set loses y's probability
            at_s = below_lo - above_hi - _pmf(y, n[live], s)
            accepted = (at_s < cl) | (lo[live] > hi[live])
            result[live[accepted]] = s[accepted]
            active[live[accepted]] = False
            right[live[~accepted]] = s[~accepted]
        if roots:
            where, lo, hi, left, right, at_a = (np.concatenate(part) for part in zip(*roots))
            # the walk reached A: its probability, when not computed before (a neighbour's end:
            # run); where x is not accepted at A, the count is searched again from scratch (NaN)
            unknown = where[at_a & np.isnan(a[3, where])]
            if unknown.size:
                self.evaluations += 1
                a[3, unknown] = interval_mass(a[1, unknown], a[2, unknown], n[unknown], lam_a[unknown])
                fine = ~(at_a & (a[3, where] >= cl))
                where, lo, hi, left, right = where[fine], lo[fine], hi[fine], left[fine], right[fine]
            result[where] = self.root(lo, hi, left, right, n[where], group[where])
        return result

    def root(self, lo, hi, left, right, n, group):
        """Where ``P_λ(lo ≤ Y ≤ hi)`` rises through CL in (left, right); the right bracket end.

        Solved to ``1e-15 + 1e-14·max(right)``, the max over the roots of the same ``group``
        (the batch a count would have been searched in alone)."""
        if not lo.size:
            return right
        cl = self.cl

        def f(lam, live):
            self.evaluations += 1
            return interval_mass(lo[live], hi[live], n[live], lam) - cl

        top = np.full(int(group.max()) + 1, -np.inf)
        np.maximum.at(top, group, right)
        tolerance = 1e-15 + 1e-14 * top[group]
        f_left, f_right = f(np.concatenate([left, right]), np.concatenate([np.arange(lo.size)] * 2)).reshape(2, -1)
        left, right, f_left, f_right = newton_bracket(f, lambda lam, live: _mass_slope(lo[live], hi[live], n[live], lam),
                                                      left, right, f_left, f_right, tolerance)
        _, right = illinois(f, left, right, f_left, f_right, tolerance)
        return right


class Belt:
    """The Feldman–Cousins belt for one ``(n, q, p, confidence)``, filled lazily and cached.

    An estimate needs the endpoints of its k counts; a coverage or expected-width sum needs the
    counts near nλ.  Endpoints are kept in arrays up to n = 20,000 and in dicts above (at most
    128 belts are cached, so a worker holds a few tens of megabytes at most).

    Both ends are nondecreasing in x.  Proof for the upper end: let x < x′ and λ_j ↑ high(x)
    with x accepted at λ_j.  Acceptance sets are integer intervals ``[a(λ), b(λ)]`` (a
    superlevel set of the unimodal R(·; λ)) holding the top-ranked count ⌊nλ⌋ or ⌈nλ⌉.  If
    ``x′ ≤ b(λ_j)`` then x′ is accepted at λ_j; otherwise ``x′ > nλ_j`` and x′ is accepted at
    ``λ̂(x′) ≥ λ_j``.  Either way ``high(x′) ≥ λ_j`` for every j.  The lower end follows by the
    mirror.  So the counts whose interval holds π are the integer interval ``[x_a, x_b]`` with
    ``x_a = min{x : high(x) ≥ π}``, ``x_b = max{x : low(x) ≤ π}`` (used by
    :func:`deniable.estimators.coverage`).
    """

    def __init__(self, n: int, q: float, p: float, confidence: float):
        self.n, self.q, self.p, self.confidence = int(n), float(q), float(p), float(confidence)
        self._dense = self.n <= _DENSE_N
        if self._dense:
            self._ends = {"low": np.full(self.n + 1, np.nan), "high": np.full(self.n + 1, np.nan)}
        else:
            self._ends = {"low": {}, "high": {}}
        self._lock = threading.Lock()

    def _missing(self, side: str, counts: np.ndarray) -> np.ndarray:
        unique = np.unique(counts)
        known = self._ends[side]
        if self._dense:
            return unique[np.isnan(known[unique])]
        return np.array([c for c in unique.tolist() if c not in known], dtype=np.int64)

    def _fill(self, high: np.ndarray, low: np.ndarray) -> None:
        """Compute the upper ends of ``high`` and the lower ends of ``low`` in one batch."""
        xs, qs, ps, where = self._batch(high, low)
        self._store(high, low, *upper_ends(xs, self.n, qs, ps, self.confidence), where)

    def _batch(self, high: np.ndarray, low: np.ndarray):
        """The counts whose upper ends give the upper ends of ``high`` and the lower ends of
        ``low``, with their problems ``(q, p)``, and where each requested end is among them."""
        n, q, p = self.n, self.q, self.p
        if 1.0 - p == q and 1.0 - q == p:
            # a symmetric channel (yes/no, or asked directly) is its own mirror: the lower end of
            # x is the upper end of n − x in the same problem, so each count is searched once
            unique, where = np.unique(np.concatenate([high, n - low]), return_inverse=True)
            return unique.astype(float), np.full(unique.size, q), np.full(unique.size, p), where
        m = high.size
        xs = np.concatenate([high, n - low]).astype(float)
        qs = np.concatenate([np.full(m, q), np.full(low.size, 1.0 - p)])
        ps = np.concatenate([np.full(m, p), np.full(low.size, 1.0 - q)])
        return xs, qs, ps, None

    def _store(self, high: np.ndarray, low: np.ndarray, found: np.ndarray, at_found: np.ndarray, where) -> None:
        """Keep the ends :meth:`_batch`'s counts were found to have."""
        q, p = self.q, self.p
        m = high.size
        ends, at_top = (found, at_found) if where is None else (found[where], at_found[where])
        upper = np.where(at_top[:m], p, np.clip(ends[:m], q, p))
        mirrored = ends[m:]
        # the mirrored count accepted at its boundary 1 − q: this end *is* q (π = 0 exactly)
        at_q = at_top[m:] | (mirrored >= 1.0 - q)
        lower = np.where(at_q, q, np.clip(1.0 - mirrored, q, p))
        for side, counts, values in (("high", high, upper), ("low", low, lower)):
            if self._dense:
                self._ends[side][counts] = values
            else:
                self._ends[side].update(zip(counts.tolist(), values.tolist()))

    def _get(self, side: str, counts: np.ndarray) -> np.ndarray:
        known = self._ends[side]
        if self._dense:
            return known[counts].copy()
        return np.array([known[c] for c in counts.ravel().tolist()], dtype=float).reshape(counts.shape)

    def ends(self, counts, sides=("low", "high")) -> tuple[np.ndarray, ...]:
        """Return the λ ends named in ``sides`` for each count, computing the missing ones."""
        counts = np.asarray(counts, dtype=np.int64)
        flat = counts.ravel()
        with self._lock:
            missing = {side: (self._missing(side, flat) if side in sides else np.zeros(0, np.int64))
                       for side in ("low", "high")}
            if missing["low"].size or missing["high"].size:
                self._fill(missing["high"], missing["low"])
            return tuple(self._get(side, counts) for side in sides)

    def interval(self, counts) -> tuple[np.ndarray, np.ndarray]:
        """Return the λ interval ``(low, high)`` of each count (computing missing endpoints)."""
        return self.ends(counts)


def fill_belts(requests) -> None:
    """Fill the missing ends of several belts' counts in one batch: ``requests`` is a list of
    ``(belt, counts)``, the belts of one confidence level.

    One batch of :func:`upper_ends` serves them all, each belt's counts marked as a group of
    their own, so every end is the one ``belt.interval(counts)`` would have computed alone, bit
    for bit: a count's search reads only its own problem's numbers, its neighbours within its
    own belt, and the largest bracket among its own belt's roots.  What the batch saves is the
    Python and numpy overhead of each round, which dominates below n ≈ 10,000.
    """
    merged: dict[int, tuple[Belt, list]] = {}
    for b, counts in requests:  # a belt named twice: its counts together (one lock each)
        merged.setdefault(id(b), (b, []))[1].append(np.asarray(counts, dtype=np.int64).ravel())
    # locks taken in one order (by id), so that two batches sharing belts cannot deadlock
    requests = [(b, np.concatenate(counts)) for _, (b, counts) in sorted(merged.items())]
    if len({b.confidence for b, _ in requests}) > 1:
        raise FieldError("fill_belts: the belts must share one confidence level", "requests")
    locks = [b._lock for b, _ in requests]
    for lock in locks:
        lock.acquire()
    try:
        parts = []
        for b, counts in requests:
            high, low = b._missing("high", counts), b._missing("low", counts)
            if high.size or low.size:
                parts.append((b, high, low, *b._batch(high, low)))
        if not parts:
            return
        if len(parts) == 1:
            b, high, low, xs, qs, ps, where = parts[0]
            b._store(high, low, *upper_ends(xs, b.n, qs, ps, b.confidence), where)
            return
        sizes = [part[3].size for part in parts]
        found, at_found = upper_ends(
            np.concatenate([part[3] for part in parts]), np.repeat([part[0].n for part in parts], sizes),
            np.concatenate([part[4] for part in parts]), np.concatenate([part[5] for part in parts]),
            parts[0][0].confidence, np.repeat(np.arange(len(parts)), sizes))
        start = 0
        for (b, high, low, _, _, _, where), k in zip(parts, sizes):
            b._store(high, low, found[start:start + k], at_found[start:start + k], where)
            start += k
    finally:
        for lock in reversed(locks):
            lock.release()


@functools.lru_cache(maxsize=128)
def belt(n: int, q: float, p: float, confidence: float) -> Belt:
    """Return the cached Feldman–Cousins belt for ``(n, q, p, confidence)``."""
    return Belt(n, q, p, confidence)
