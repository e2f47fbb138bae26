"""Several plans, worst cases and belts computed side by side give each one's numbers bit for bit.

``deniable plan`` asks for every ε and the baseline at once, the builder's panel for a question's ε
and its baseline: their searches run together and each step's belts are filled in one batch
(``deniable.estimators.exact.fill_belts``), which shares the Python and numpy overhead of every
round of the search.  The answers must not move at all: the worst π is the argmax of a function
flat at its top, where the last bits of the sums decide between points, so a batch that moved
them would move the π a plan reports.  So every comparison below is exact (bytes, or ``==``),
against the same numbers computed one at a time.  Every test points the cache directory at its own
``tmp_path``, so each number is computed.
"""

from __future__ import annotations

import numpy as np
import pytest
from support.plan_cache import GOLDEN, forget

from deniable.client.mechanism import resolve
from deniable.estimators import exact, planning
from deniable.estimators.exact import Belt, fill_belts





def _belts():
    """Belts of every kind: yes/no (its own mirror), k = 3 and 5, asked directly, a design's
    report (p + q ≠ 1), tiny n, and n above the dense limit (ends kept in dicts)."""
    out = []
    for epsilon, k, n in [(None, 2, 150), (1.0, 2, 1085), (0.5, 2, 5015), (2.0, 3, 1862), (1.0, 5, 700),
                          (0.5, 3, 40), (1.0, 2, 1086)]:
        m = resolve(k, epsilon)
        sd = np.sqrt(n / 4)
        out.append((n, m.q, m.p, np.arange(max(0, int(n / 2 - 6 * sd)), min(n, int(n / 2 + 6 * sd)) + 1)))
    out.append((120, 0.1, 0.6, np.arange(121)))
    out.append((21_000, resolve(2, 1.0).q, resolve(2, 1.0).p, np.arange(10_400, 10_560)))
    return out


def test_belts_filled_together_have_each_belts_own_ends_bit_for_bit():
    cases = _belts()
    alone = [Belt(n, q, p, 0.95).interval(counts) for n, q, p, counts in cases]
    belts = [Belt(n, q, p, 0.95) for n, q, p, _ in cases]
    fill_belts([(b, counts) for b, (_, _, _, counts) in zip(belts, cases)])
    for b, (n, q, p, counts), (low, high) in zip(belts, cases, alone):
        got_low, got_high = b.interval(counts)
        assert got_low.tobytes() == low.tobytes() and got_high.tobytes() == high.tobytes(), (n, q, p)


def test_a_batch_costs_the_rounds_of_one_belt(monkeypatch):
    """Work, not time: a batch of belts runs as many rounds of the search (``_Search.run`` calls)
    as its slowest belt, not the sum of every belt's."""
    runs = []
    original = exact._Search.run

    def counted(self, *args, **kwargs):
        runs.append(self.x.size)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(exact._Search, "run", counted)
    cases = _belts()[:5]
    alone = []
    for n, q, p, counts in cases:
        runs.clear()
        Belt(n, q, p, 0.95).interval(counts)
        alone.append(len(runs))
    runs.clear()
    fill_belts([(Belt(n, q, p, 0.95), counts) for n, q, p, counts in cases])
    assert len(runs) <= max(alone) + 2 < sum(alone)


def test_a_belt_named_twice_and_mixed_levels():
    m = resolve(2, 1.0)
    b = Belt(300, m.q, m.p, 0.95)
    fill_belts([(b, np.arange(100, 150)), (b, np.arange(140, 200))])  # one lock, taken once
    low, high = b.interval(np.arange(100, 200))
    alone = Belt(300, m.q, m.p, 0.95).interval(np.arange(100, 200))
    assert low.tobytes() == alone[0].tobytes() and high.tobytes() == alone[1].tobytes()
    with pytest.raises(ValueError, match="one confidence level"):
        fill_belts([(Belt(300, m.q, m.p, 0.95), [1]), (Belt(300, m.q, m.p, 0.9), [1])])


def test_half_widths_side_by_side_are_each_ones_own(fresh):
    """The golden-section points of several n evaluated in one batch, one of them off the grid's
    windows (its belt grows): each value is :meth:`_Sums.half_width`'s, to the last bit."""
    specs = [(1.0, 2, 1085, 0.5), (None, 2, 400, 0.3), (2.0, 3, 900, 0.62), (0.5, 2, 6000, 0.02)]
    one = [planning._Sums(n, resolve(k, e).p, resolve(k, e).q, 0.95) for e, k, n, _ in specs]
    many = [planning._Sums(n, resolve(k, e).p, resolve(k, e).q, 0.95) for e, k, n, _ in specs]
    for sums in one + many:
        sums.half_widths(np.linspace(0.45, 0.55, 5))
    expected = [sums.half_width(pi) for sums, (*_, pi) in zip(one, specs)]
    got = planning._half_width_many([(sums, pi) for sums, (*_, pi) in zip(many, specs)])
    assert got == expected


def test_plans_together_are_plans_one_by_one(fresh):
    asked = [(None, 2, 0.05), (1.0, 2, 0.05), (2.0, 2, 0.1), (1.0, 3, 0.1), (2.0, 5, 0.1)]
    together = planning.plans(asked)
    forget(fresh)
    one_by_one = [planning.plan(*request) for request in asked]
    assert together == one_by_one
    golden = {(c["epsilon"], c["k"], c["margin"]): c["n"] for c in GOLDEN["plans"] if c["confidence"] == 0.95}
    assert [r.n for r in together] == [golden[request] for request in asked]


def test_worst_cases_together_are_worst_cases_one_by_one(fresh):
    asked = [(1.0, 2, 1000), (None, 2, 1000), (2.0, 3, 250), (1.0, 2, 1000)]
    together = planning.worst_cases(asked)
    forget(fresh)
    assert together == [planning.worst_case(*request) for request in asked]


def test_plans_read_back_from_memory_and_disk(fresh):
    first = planning.plans([(1.0, 2, 0.1), (None, 2, 0.1)])
    assert planning.plans([(None, 2, 0.1), (1.0, 2, 0.1)]) == first[::-1]  # from memory
    forget()
    assert planning.plans([(1.0, 2, 0.1)]) == first[:1]  # from disk
    with pytest.raises(ValueError, match="margin"):
        planning.plans([(1.0, 2, 0.1), (1.0, 2, 0.7)])


def test_searches_side_by_side_share_their_steps(fresh, monkeypatch):
    """Work, not time: three searches run together fill their belts in as many batches as the
    longest search takes steps, not in one batch per step of each."""
    batches = []
    original = exact.fill_belts

    def counted(requests):
        batches.append(len(requests))
        return original(requests)

    monkeypatch.setattr(exact, "fill_belts", counted)
    asked = [(None, 2, 0.1), (1.0, 2, 0.1), (2.0, 3, 0.1)]
    alone = []
    for request in asked:
        batches.clear()
        planning.plans([request])
        alone.append(len(batches))
    forget(fresh)
    batches.clear()
    planning.plans(asked)
    assert len(batches) <= max(alone) < sum(alone) and max(batches) == len(asked)


def _asked(p: float, q: float, margin: float) -> list[int]:
    """Every n a search asks for, replayed from the numbers in memory."""
    search, asked, sent = planning._search(p, q, margin, 0.95), [], None
    try:
        while True:
            n, _ = search.send(sent)
            asked.append(n)
            sent = planning._worst_case.get((n, p, q, 0.95))
    except StopIteration:
        return asked


def test_an_oscillating_correction_is_computed_ahead_in_one_batch(fresh, monkeypatch):
    """Work, not time: at ε = 1 and a margin of 0.05 the model's correction asks for 1799, 1824,
    1815, 1823, 1816, 1822, 1817, 1821, 1818, 1819 (then 1818 again): once two swings in a row
    have shrunk, the n between the last two are computed with the last (``planning._ahead``).
    Ten n asked for in four batches instead of ten, at most one computed and never asked for, and
    the plan the one computed without looking ahead, to the last bit."""
    batches = []
    original = planning._compute_worst_cases

    def counted(keys):
        batches.append([key[0] for key in keys])
        return original(keys)

    monkeypatch.setattr(planning, "_compute_worst_cases", counted)
    m = resolve(2, 1.0)
    ahead = planning.plans([(1.0, 2, 0.05)])
    asked = _asked(m.p, m.q, 0.05)
    computed = [n for batch in batches for n in batch]
    assert len(set(asked)) == 10 and len(batches) == 4
    assert set(asked) <= set(computed) and len(set(computed) - set(asked)) <= 1
    forget(fresh)
    monkeypatch.setattr(planning, "AHEAD_SPAN", 0)
    batches.clear()
    assert planning.plans([(1.0, 2, 0.05)]) == ahead
    assert len(batches) == 10


def test_the_panel_computes_its_target_with_the_first_batch(fresh, monkeypatch):
    """``plans(..., also=...)``: the builder's margins at the target n join the searches' first
    batch, and are then the numbers :func:`worst_cases` computes alone."""
    batches = []
    original = planning._compute_worst_cases

    def counted(keys):
        batches.append(sorted(key[0] for key in keys))
        return original(keys)

    monkeypatch.setattr(planning, "_compute_worst_cases", counted)
    planning.plans([(1.0, 2, 0.05)], also=[(1.0, 2, 1000), (None, 2, 1000)])
    assert batches[0] == [1000, 1000, 1799]
    got = planning.worst_cases([(1.0, 2, 1000), (None, 2, 1000)])
    forget(fresh)
    assert planning.worst_cases([(1.0, 2, 1000), (None, 2, 1000)]) == got


def test_window_densities_are_exact_and_each_windows_own():
    """The sums' binomial densities by the ratio of neighbours (``planning._window_densities``):
    against 60-digit decimal arithmetic (``math.comb`` and powers of the float λ taken exactly) as
    accurate as the kernel scipy.stats calls, and a window's numbers the same in a batch as alone."""
    import math
    from decimal import Decimal, localcontext

    from deniable.estimators.binomial import pmf_kernel

    kernel = pmf_kernel()
    cases = [(17_831, 0.3), (1_085, 0.5), (250_000, 0.73), (40, 0.02), (2, 0.5)]
    for n, lam in cases:
        lo, hi = planning._window(n, np.array([lam]), planning.PLAN_WINDOW_SD)
        got = planning._window_densities(np.array([n]), np.array([lam]), lo, hi - lo + 1)
        counts = np.linspace(lo[0], hi[0], 12).astype(int)
        ours, theirs = [], []
        with localcontext() as ctx:
            ctx.prec = 60
            for x in counts.tolist():
                exact = Decimal(math.comb(n, x)) * Decimal(lam) ** x * (1 - Decimal(lam)) ** (n - x)
                ours.append(abs(float((Decimal(float(got[x - lo[0]])) - exact) / exact)))
                theirs.append(abs(float((Decimal(float(kernel(float(x), float(n), lam))) - exact) / exact)))
        assert max(ours) <= 2 * max(theirs) + 1e-14, (n, lam, max(ours), max(theirs))
    # together, with a window of λ = 1 (the kernel's numbers), each window's own bytes
    specs = [(n, lam) for n, lam in cases] + [(30, 1.0), (30, 0.0)]
    alone, firsts, sizes = [], [], []
    for n, lam in specs:
        lo, hi = planning._window(n, np.array([lam]), planning.PLAN_WINDOW_SD)
        alone.append(planning._window_densities(np.array([n]), np.array([lam]), lo, hi - lo + 1))
        firsts.append(lo[0])
        sizes.append(hi[0] - lo[0] + 1)
    together = planning._window_densities(np.array([n for n, _ in specs]), np.array([lam for _, lam in specs]),
                                          np.array(firsts), np.array(sizes))
    assert together.tobytes() == np.concatenate(alone).tobytes()
    assert alone[-2][-1] == 1.0 and alone[-1][0] == 1.0  # all the probability at n, at 0


def test_several_points_of_one_n_in_one_batch_are_each_ones_own(fresh):
    """One n asked at several π in one batch (``half_widths`` asks so for its whole grid): every window's
    widths are kept, whatever the order, and each value is the one that π gives asked alone of the same
    belt (a belt's ends depend, in their last bits, on which counts were searched together)."""
    m = resolve(2, 1.0)
    points = [0.1, 0.9, 0.5]  # windows far apart: the last one asked holds neither of the others
    sums = planning._Sums(1085, m.p, m.q, 0.95)
    together = planning._half_width_many([(sums, pi) for pi in points])
    assert together == [sums.half_width(pi) for pi in points]
    assert sums.half_widths(np.array(points)).tolist() == together
