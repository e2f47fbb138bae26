"""The exact (Feldman–Cousins) belt: by definition at small n, at the boundaries, and at any n.

The references here do not use the module under test: acceptance sets are built from the
definition (sort the counts by likelihood ratio, accumulate probability), with scipy's binomial
pmf, on a grid of λ or at single λ values.
"""

import numpy as np
import pytest
from scipy.special import betainc, xlogy
from scipy.stats import binom

from deniable.client.mechanism import MechanismError, mechanism, resolve
from deniable.estimators import coverage, estimate, exact
from deniable.estimators.evaluation import DENSE_N
from deniable.estimators.exact import PAD, TIE, Belt, upper_ends

TIE_REF = 1e-9  # the same tie rule as the definition in estimators/exact.py: within 1e-9 is a tie


def log_ratio_ref(y, n, lam, q, p):
    """log L(y | λ) − log L(y | clip(y/n, q, p)), straight from the definition."""
    hat = np.clip(y / n, q, p)
    return xlogy(y, lam) + xlogy(n - y, 1 - lam) - xlogy(y, hat) - xlogy(n - y, 1 - hat)


def accepted_ref(x, n, lam, q, p, confidence):
    """Whether count x is in the acceptance set at λ: mass strictly above it (ties excluded) < CL."""
    sd = np.sqrt(n * lam * (1 - lam))
    ys = np.arange(max(0, int(n * lam - 10 * sd - 50)), min(n, int(n * lam + 10 * sd + 50)) + 1)
    ys = np.union1d(ys, [x])
    r = log_ratio_ref(ys.astype(float), n, lam, q, p)
    rx = log_ratio_ref(float(x), n, lam, q, p)
    return binom.pmf(ys, n, lam)[r > rx + TIE_REF].sum() < confidence


def brute_force_belt(n, q, p, confidence, points=20_001):
    """Feldman–Cousins on a λ grid by definition: for each λ, which counts are accepted."""
    lam = np.linspace(q, p, points)[:, None]
    x = np.arange(n + 1)[None, :]
    r = log_ratio_ref(x.astype(float), n, lam, q, p)
    pmf = binom.pmf(x, n, lam)
    above = r[:, None, :] > r[:, :, None] + TIE_REF  # [λ, x, y]: y ranks above x
    mass = np.einsum("lxy,ly->lx", above, pmf)
    accepted = mass < confidence
    low = np.array([lam[accepted[:, i], 0].min() for i in range(n + 1)])
    high = np.array([lam[accepted[:, i], 0].max() for i in range(n + 1)])
    return low, high


@pytest.mark.parametrize("n,k,epsilon,confidence", [
    (10, 2, 1.0, 0.95), (12, 3, 2.0, 0.95), (12, 4, 0.3, 0.95), (15, 10, 2.5, 0.9), (20, 2, 5.0, 0.99),
    (25, 6, 0.9, 0.95), (8, 2, None, 0.95),
])
def test_belt_matches_the_definition_on_a_grid(n, k, epsilon, confidence):
    m = mechanism(k, epsilon) if epsilon else None
    q, p = (m.q, m.p) if m else (0.0, 1.0)
    step = (p - q) / 20_000
    low_ref, high_ref = brute_force_belt(n, q, p, confidence)
    low, high = Belt(n, q, p, confidence).interval(np.arange(n + 1))
    # the exact ends are within one grid step outside the grid's accepted points
    assert np.all(low <= low_ref + 1e-12) and np.all(low_ref - low <= 1.01 * step)
    assert np.all(high >= high_ref - 1e-12) and np.all(high - high_ref <= 1.01 * step)


@pytest.mark.parametrize("n,q,p,confidence", [
    (10**6, 0.2, 0.6, 0.95), (10**6, 0.0049574, 0.0134756, 0.95),
    pytest.param(10**9, 0.26894142, 0.73105858, 0.9, marks=pytest.mark.slow),  # 300,000-count sums
    pytest.param(10**9, 0.0966197, 0.1304229, 0.99, marks=pytest.mark.slow),
])
def test_ends_at_large_n_by_definition(n, q, p, confidence):
    # a few counts across [nq, np] and just outside: accepted just inside each end, rejected past it
    lam_mid = (q + p) / 2
    sd = np.sqrt(n * lam_mid * (1 - lam_mid))
    xs = np.array([n * q - 2 * sd, n * q + 0.5 * sd, n * lam_mid, n * p - 3 * sd, n * p + sd]).astype(np.int64)
    low, high = Belt(n, q, p, confidence).interval(xs)
    for x, lo, hi in zip(xs, low, high):
        if hi < p:
            assert accepted_ref(x, n, hi - 3 * PAD, q, p, confidence)
            for beyond in (hi, hi + 1e-9, hi + 1e-7, hi + 4 * sd / n):
                if beyond <= p:
                    assert not accepted_ref(x, n, beyond, q, p, confidence)
        if lo > q:
            assert accepted_ref(x, n, lo + 3 * PAD, q, p, confidence)
            for before in (lo, lo - 1e-9, lo - 1e-7, lo - 4 * sd / n):
                if before >= q:
                    assert not accepted_ref(x, n, before, q, p, confidence)


def test_the_audit_example_covers_pi_zero():
    # issue 14: ci_low was 3.45e-16 for every option, so an option nobody picks was excluded
    r = estimate([3, 3, 3, 3], epsilon=0.3)
    assert np.all(r.ci_low == 0.0)
    assert coverage("exact", 12, 4, 0.3, [0.0])[0] >= 0.95
    # simultaneous intervals keep π = 0 for every option, so a zero option is covered jointly
    assert np.all(estimate([3, 3, 3, 3], epsilon=0.3, simultaneous=True).ci_low == 0.0)


EPSILONS = [0.1, 0.2, 0.3, 0.45, 0.6, 0.75, 0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0,
            6.0, 8.0, 10.0]


def boundary_coverage(n, k, epsilon, confidence=0.95):
    try:
        mechanism(k, epsilon)
    except MechanismError:  # ε too small to realize for this k with 32-bit thresholds
        return None
    return coverage("exact", n, k, epsilon, [0.0, 1.0], confidence=confidence)


@pytest.mark.parametrize("k", range(2, 61))
def test_boundaries_covered_for_every_k(k):
    # every k from 2 to 60, with the ε grid visited in turn (the whole grid: the slow test below)
    for epsilon in (EPSILONS[k % len(EPSILONS)], EPSILONS[(3 * k + 7) % len(EPSILONS)]):
        cov = boundary_coverage(12, k, epsilon)
        if cov is not None:
            assert cov.min() >= 0.95, (k, epsilon, cov)


@pytest.mark.slow
@pytest.mark.parametrize("n", [12, 40])
def test_boundaries_covered_for_every_k_and_epsilon(n):
    for k in range(2, 61):
        for epsilon in EPSILONS:
            for confidence in (0.9, 0.99):
                cov = boundary_coverage(n, k, epsilon, confidence)
                if cov is not None:
                    assert cov.min() >= confidence, (n, k, epsilon, confidence, cov)


def test_boundary_ends_are_exactly_q_and_p():
    # the counts accepted at λ = q (by the definition) get ci_low = 0 exactly, not 1e-16
    m = mechanism(7, 0.45)  # k − 1 = 6: q is not a short binary fraction
    n = 30
    low, high = Belt(n, m.q, m.p, 0.95).interval(np.arange(n + 1))
    at_q = [x for x in range(n + 1) if accepted_ref(x, n, m.q, m.q, m.p, 0.95)]
    at_p = [x for x in range(n + 1) if accepted_ref(x, n, m.p, m.q, m.p, 0.95)]
    assert at_q and at_p
    assert np.all(low[at_q] == m.q) and np.all(high[at_p] == m.p)
    r = estimate([0, n] + [0] * 5, 0.45)
    assert r.ci_low[0] == 0.0 and r.ci_high[1] == 1.0


@pytest.mark.parametrize("n,k,epsilon", [
    (2_000, 4, 0.9), (DENSE_N + 1_000, 10, 2.5),
    # both levels end at the same swap point: it must come out the same to the last bit
    (12, 4, 5.0), (40, 10, 5.0),
])
def test_ends_nondecreasing_and_nested(n, k, epsilon):
    m = mechanism(k, epsilon)
    x = np.arange(n + 1)
    ends = {cl: Belt(n, m.q, m.p, cl).interval(x) for cl in (0.9, 0.95, 0.99)}
    for low, high in ends.values():
        assert np.all(np.diff(low) >= 0) and np.all(np.diff(high) >= 0) and np.all(low < high)
    assert np.all(ends[0.99][0] <= ends[0.95][0]) and np.all(ends[0.95][0] <= ends[0.9][0])
    assert np.all(ends[0.9][1] <= ends[0.95][1]) and np.all(ends[0.95][1] <= ends[0.99][1])


def test_monotone_coverage_equals_the_full_sum():
    # above DENSE_N coverage of "exact" is P(x_a ≤ Y ≤ x_b); here against the sum over every count
    n, k, epsilon = DENSE_N + 500, 3, 1.5
    m = mechanism(k, epsilon)
    low, high = Belt(n, m.q, m.p, 0.95).interval(np.arange(n + 1))
    low, high = (low - m.q) / (m.p - m.q), (high - m.q) / (m.p - m.q)
    pi = np.array([0.0, 0.013, 0.25, 0.5, 0.77, 0.999, 1.0])
    lam = m.q + (m.p - m.q) * pi
    pmf = binom.pmf(np.arange(n + 1)[None, :], n, lam[:, None])
    covered = (np.clip(low, 0, 1)[None, :] <= pi[:, None]) & (pi[:, None] <= np.clip(high, 0, 1)[None, :])
    np.testing.assert_allclose(coverage("exact", n, k, epsilon, pi), (pmf * covered).sum(axis=1), atol=1e-12)


@pytest.mark.parametrize("n,k,epsilon,confidence", [(10**6, 2, 0.9, 0.95), (10**7, 10, 5.0, 0.9)])
def test_large_n_is_exact_with_coverage_at_least_nominal(n, k, epsilon, confidence):
    r = estimate([n // 3, n - n // 3] + [0] * (k - 2), epsilon, confidence=confidence)
    assert r.method == "exact" and r.note == ""
    pi = np.linspace(0, 1, 101)
    assert coverage("exact", n, k, epsilon, pi, confidence=confidence).min() >= confidence


def test_tie_rule_is_the_one_documented():
    assert TIE == TIE_REF


# ---------------------------------------------------------------- each end found between its neighbours'


def upper_end_by_definition(x, n, q, p, confidence):
    """The sup of the λ where x is accepted, from the definition, with neither the module's search
    nor its incomplete beta: each count y > x joins the set above x at its swap point, the root of
    ``log R(y; λ) − log R(x; λ) = TIE`` (increasing in λ), found by bisection; between two swap
    points the set is fixed and its probability (scipy.stats' pmf, summed) is unimodal in λ, so
    walking the pieces down from p, the first piece accepting x somewhere holds the end: its right
    end (x accepted there, the joining count a tie), or a crossing found by bisection."""
    hat = min(max(x / n, q), p)
    if hat >= p:  # nothing ranks above x at p
        return p
    ys = np.arange(x + 1, n + 1)
    lo, hi = np.full(ys.size, hat), np.full(ys.size, p)
    rises = log_ratio_ref(ys.astype(float), n, p, q, p) - log_ratio_ref(float(x), n, p, q, p) > TIE_REF
    for _ in range(200):
        mid = (lo + hi) / 2
        up = log_ratio_ref(ys.astype(float), n, mid, q, p) - log_ratio_ref(float(x), n, mid, q, p) > TIE_REF
        hi, lo = np.where(up, mid, hi), np.where(up, lo, mid)
    swaps = np.where(rises, hi, np.inf)  # y ranks above x for λ > swaps[y − x − 1]
    order = np.argsort(swaps, kind="stable")
    ys, swaps = ys[order], swaps[order]
    joined = int(np.isfinite(swaps).sum())
    edges = np.concatenate([[hat], swaps[:joined], [p]])  # piece k is (edges[k], edges[k + 1]]

    def mass(k, lam):  # the first k counts of ys are above x on piece k
        return binom.pmf(ys[:k], n, lam).sum()

    for k in range(joined, -1, -1):
        left, right = edges[k], edges[k + 1]
        if right <= left:
            continue
        if mass(k, right) < confidence:
            return right
        if mass(k, left) < confidence:  # rising through CL inside the piece
            for _ in range(200):
                mid = (left + right) / 2
                if mass(k, mid) < confidence:
                    left = mid
                else:
                    right = mid
            return right
    raise AssertionError("unreachable: piece 0 holds no count above x")


@pytest.mark.parametrize("n,q,p,confidence", [
    (60, mechanism(3, 1.0).q, mechanism(3, 1.0).p, 0.95),
    (150, mechanism(2, 1.0).q, mechanism(2, 1.0).p, 0.9),  # a yes/no belt: its own mirror
    (120, 0.1, 0.6, 0.99),  # a design's report: p + q ≠ 1
])
def test_every_end_is_the_definitions_to_1e_12(n, q, p, confidence):
    """Every upper end (each count's sup, then rounded out by PAD) and every lower end (the mirrored
    problem's upper end) of a whole belt — searched from scratch for every 4th count, between the
    neighbours' ends for the others — equals the one from the definition to 1e-12."""
    low, high = Belt(n, q, p, confidence).interval(np.arange(n + 1))
    for x in range(n + 1):
        upper = min(upper_end_by_definition(x, n, q, p, confidence) + PAD, p)
        assert abs(high[x] - upper) < 1e-12, (x, high[x], upper)
        mirrored = upper_end_by_definition(n - x, n, 1 - p, 1 - q, confidence)
        lower = q if mirrored >= 1 - q else max(1 - mirrored - PAD, q)
        assert abs(low[x] - lower) < 1e-12, (x, low[x], lower)


@pytest.mark.parametrize("epsilon, n", [(0.5, 17_831), (None, 1_085), (2.0, 3_001)])
def test_ends_between_neighbours_are_the_ends_searched_alone(epsilon, n):
    """The planner's belts (a contiguous run of counts) against the same counts searched one by one
    from scratch, each in a batch of its own (the search before the neighbours' ends were used)."""
    m = mechanism(2, epsilon) if epsilon else None
    q, p = (m.q, m.p) if m else (0.0, 1.0)
    sd = np.sqrt(n / 4)
    counts = np.arange(int(n / 2 - 3 * sd), int(n / 2 + 3 * sd))
    ends, _ = upper_ends(counts.astype(float), n, q, p, 0.95)
    alone = [upper_ends(np.array([float(x)]), n, q, p, 0.95)[0][0] for x in counts[::7]]
    assert np.abs(ends[::7] - alone).max() < 1e-12


def test_a_belt_needs_few_incomplete_beta_evaluations(monkeypatch):
    """Work, not time: the incomplete-beta evaluations of a planner-sized belt (n = 17,831 at ε = 0.5,
    1,468 counts) are counted.  Searched from scratch, each count cost 28; between its neighbours'
    ends a count costs about 6, and no count that fact 3 rejects at p has its probability there
    computed: the whole belt about 10.5 per count (12.5 with that probability)."""
    calls = []

    def counted(a, b, x):
        calls.append(np.size(a))
        return betainc(a, b, x)

    monkeypatch.setattr(exact, "betainc", counted)
    m = mechanism(2, 0.5)
    n = 17_831
    counts = np.arange(n // 2 - 734, n // 2 + 734)
    Belt(n, m.q, m.p, 0.95).interval(counts)
    assert sum(calls) / counts.size < 11.5


def test_a_neighbour_bound_that_is_wrong_below_costs_time_not_the_answer():
    """Between neighbours, A (the lower neighbour's end) is assumed accepted until the walk reaches
    it; where it is not (here A is set at or above the count's own end), the count is searched again
    from scratch, and the ends are those searched alone."""
    m = mechanism(2, 1.0)
    n = 300
    x = np.arange(120.0, 180.0)
    alone, _ = upper_ends(x, n, m.q, m.p, 0.95)
    q, p = np.full(x.size, m.q), np.full(x.size, m.p)
    higher, _ = upper_ends(x + 1, n, m.q, m.p, 0.95)  # a valid upper bound: the next count's end
    for low in (higher, alone, np.full(x.size, m.p)):  # A at, just above, or far above the end
        got = exact._Search(x, n, q, p, 0.95).run(low, higher)
        assert np.abs(got - alone).max() < 1e-12


@pytest.mark.parametrize("confidence", [0.8, 0.95, 0.99])
def test_acceptance_at_p_skips_only_counts_fact_3_rejects(confidence):
    """Whether a count is accepted at λ = p is decided by the probability of the counts above it
    there, except where fact 3 (Chernoff) already says it is rejected: on every count of many
    problems, both sides of each, the shortcut gives the same answer as that probability."""
    for epsilon, k in [(None, 2), (0.5, 2), (1.0, 3), (2.0, 5), (4.0, 2), (8.0, 3)]:
        m = resolve(k, epsilon)
        for n in (1, 2, 7, 60, 301, 2000):
            for q, p in ((m.q, m.p), (1 - m.p, 1 - m.q)):
                x = np.arange(n + 1, dtype=float)
                nn, qq, pp = (np.full(x.size, v) for v in (float(n), q, p))
                with np.errstate(all="ignore"):
                    lo, hi = exact.above(x, nn, pp.copy(), qq, pp)
                    direct = exact.interval_mass(lo, hi, nn, pp) < confidence
                    assert np.array_equal(exact._accepted_at_p(x, nn, qq, pp, confidence), direct), (epsilon, k, n)


def test_newton_brackets_close_on_the_crossing_brentq_finds():
    """The crossings of fixed sets' probabilities through CL, narrowed by safeguarded Newton steps
    with the probability's derivative ``n[b(lo − 1; n − 1, λ) − b(hi; n − 1, λ)]`` and closed by
    Illinois where the rounds ran out (as ``_Search.root`` does): each bracket keeps the sign
    condition, ends narrower than its tolerance, and holds the root scipy's brentq finds on the
    mass written as a sum of scipy.stats' binomial densities (an independent computation)."""
    from scipy.optimize import brentq

    rng = np.random.default_rng(5)
    n = np.array([40.0, 300.0, 1800.0, 17831.0, 250_000.0])
    lo = np.floor(n * 0.45)
    hi = np.floor(n * 0.45 + 2.2 * np.sqrt(n * 0.25)) + 1
    cl = 0.6
    mass = lambda lam, idx: exact.interval_mass(lo[idx], hi[idx], n[idx], lam) - cl  # noqa: E731
    # rising crossings: mass < CL at the left end (the set still above λ), ≥ CL at the right
    left = np.maximum(lo - 3 * np.sqrt(n), 1.0) / n
    right = (lo + hi) / (2 * n)
    every = np.arange(n.size)
    f_left, f_right = mass(left, every), mass(right, every)
    assert (f_left < 0).all() and (f_right >= 0).all()
    tolerance = 1e-15 + 1e-14 * right
    a, b, fa, fb = exact.newton_bracket(mass, lambda lam, idx: exact._mass_slope(lo[idx], hi[idx], n[idx], lam),
                                        left, right, f_left, f_right, tolerance)
    assert (fa < 0).all() and (fb >= 0).all()
    assert ((b - a) < (right - left) * 1e-6).all()  # narrowed; those not closed, Illinois closes
    a, b = exact.illinois(mass, a, b, fa, fb, tolerance)
    assert (b - a <= tolerance).all() and (mass(a, every) < 0).all() and (mass(b, every) >= 0).all()
    for i in range(n.size):
        ys = np.arange(lo[i], hi[i] + 1)
        root = brentq(lambda lam: binom.pmf(ys, n[i], lam).sum() - cl, left[i], right[i], xtol=1e-15, rtol=1e-15)
        assert a[i] - 1e-12 <= root <= b[i] + 1e-12, i
    # the slope is the derivative: a central difference agrees
    lam = rng.uniform(left, right)
    h = 1e-7
    numeric = (mass(lam + h, every) - mass(lam - h, every)) / (2 * h)
    assert exact._mass_slope(lo, hi, n, lam) == pytest.approx(numeric, rel=1e-5)
