"""The exact planner gives the answers frozen from it before it was made fast: the same n exactly;
the decided planner (``plans(..., decided=True)``, issue 40) an n that meets the margin exactly, within
1 % of the frozen n.

The n of every plan (respondents needed) must equal the frozen one; the half-widths may differ
from the frozen ones by at most ``RELATIVE`` (1e-9, relative).  Up to commit a73f93f they were the
same to the last bit; since the belts' ends are searched between their neighbours' ends and their
crossings closed by Newton steps (``deniable.estimators.exact``), each end is the same to about
1e-14 but not always to the last bit, so the sums differ in their last digits.

The worst-case π is not compared with the frozen one: it is the argmax of a function flat at its
top, and the last bits of the sums decide between points of the top that differ by up to 2e-6
(at n = 1 or 2 every π is a worst case: each interval is [0, 1]).  What is checked is that it is
a worst case: the half-width summed afresh at the reported π is the reported maximum (to 1e-12),
which is the frozen one (to 1e-9).  A yes/no question's worst π is reported at or below ½, since
w(π) = w(1 − π) makes its mirror twin as bad.

The golden file ``tests/data/plan_golden.json`` was written by the planner of commit 86115c5
(before the disk cache, the planner's own belts and scipy.special's binomial density), with

    python scripts/freeze_plan.py

(k = 2, 3, 5 × ε none, 0.5, 1, 2, 4 × margins 0.1, 0.05, 0.03, a few other confidence levels, the
ε per option of ``deniable plan --multi``, and worst cases at n on both sides of the full-grid
switch).  ``python scripts/freeze_plan.py --check`` compares the whole grid from the command line.
Every test here points the cache directory at its own ``tmp_path``, so each number is computed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binom
from support.plan_cache import GOLDEN

from deniable.client.mechanism import resolve
from deniable.estimators import planning
from deniable.estimators.binomial import binom_pmf
from deniable.estimators.exact import Belt, upper_ends

CHEAP_N = 2_000  # the fast lane checks the plans and worst cases up to this n; the slow one all of them
RELATIVE = 1e-9  # the half-widths' tolerance; n is compared exactly



def _plans(cheap: bool):
    return [case for case in GOLDEN["plans"] if (case["n"] <= CHEAP_N) == cheap]


def _check_worst_pi(case, n: int, pi: float, value: float) -> None:
    """π is a worst case: the expected half-width summed afresh at π (a belt of its own) is the
    reported maximum, which equals the frozen one.  A yes/no question's is at or below ½."""
    m = resolve(case["k"], case["epsilon"])
    level = case.get("confidence", 0.95)
    again = planning._Sums(n, m.p, m.q, level).half_widths(np.array([pi]))[0]
    assert again == pytest.approx(value, rel=1e-12, abs=0), case
    if 1.0 - m.p == m.q and 1.0 - m.q == m.p:
        assert pi <= 0.5, case


def _check_plans(cases):
    for case in cases:
        r = planning.plan(case["epsilon"], case["k"], case["margin"], confidence=case["confidence"])
        assert r.n == case["n"], case  # exactly
        for key in ("half_width", "half_width_one_fewer"):
            assert getattr(r, key) == pytest.approx(case[key], rel=RELATIVE, abs=0), (key, case)
        _check_worst_pi(case, r.n, r.worst_pi, r.half_width)


def _check_decided(cases):
    """The decided planner (``plans(..., decided=True)``, what ``deniable plan`` and the builder's
    panel use): the n it returns meets the margin exactly — the worst case at n, computed afresh
    by :func:`planning.worst_case` (the exact sums, its own memory cleared), is at most the margin —
    and is within 1 % (``planning.DECIDED``) of the frozen n, the tooth edge the exhaustive search
    found."""
    for case in cases:
        epsilon, k, margin, level = case["epsilon"], case["k"], case["margin"], case["confidence"]
        [r] = planning.plans([(epsilon, k, margin)], confidence=level, decided=True)
        planning._worst_case.cache_clear()
        again = planning.worst_case(epsilon, k, r.n, confidence=level)
        assert again.half_width <= margin, (again, case)
        assert r.half_width == again.half_width, case
        assert abs(r.n - case["n"]) <= planning.DECIDED * case["n"], (r.n, case)
        _check_worst_pi(case, r.n, r.worst_pi, r.half_width)


def test_plans_up_to_2000_respondents_are_the_frozen_ones(fresh):
    _check_plans(_plans(cheap=True))


def test_decided_plans_up_to_2000_respondents_meet_the_margin_within_1_percent_of_the_frozen_n(fresh):
    _check_decided(_plans(cheap=True))


@pytest.mark.slow
def test_every_frozen_plan(fresh):
    _check_plans(_plans(cheap=False))


@pytest.mark.slow
def test_every_decided_plan(fresh):
    _check_decided(_plans(cheap=False))


def test_decided_plans_of_the_larger_n_meet_the_margin_within_1_percent(fresh):
    """Two of the slow lane's plans in the fast lane (the decided search costs a few exact h(n))."""
    _check_decided([case for case in _plans(cheap=False)
                    if (case["epsilon"], case["k"], case["margin"]) in {(0.5, 2, 0.03), (1.0, 2, 0.03)}])


def test_worst_cases_are_the_frozen_ones(fresh):
    for case in GOLDEN["worst_case"]:
        if case["n"] > CHEAP_N:
            continue
        w = planning.worst_case(case["epsilon"], case["k"], case["n"])
        assert w.half_width == pytest.approx(case["half_width"], rel=RELATIVE, abs=0), case
        _check_worst_pi(case, case["n"], w.worst_pi, w.half_width)


def test_the_grid_reaches_both_sides_of_the_cheap_lane():
    cheap, dear = _plans(cheap=True), _plans(cheap=False)
    assert len(cheap) >= 25 and len(dear) >= 15
    assert {case["k"] for case in cheap} >= {2, 3, 5} and any(case["epsilon"] is None for case in cheap)


# ---------------------------------------------------------------- the disk cache


def _entries(root: Path) -> list[Path]:
    return sorted((root / "deniable").glob("worst-case-*/*/*.json"))


def test_worst_cases_are_cached_on_disk_and_read_back(fresh):
    first = planning.worst_case(1.0, 2, 700)
    [entry] = _entries(fresh)
    assert entry.name == "700.json" and json.loads(entry.read_text()) == [first.half_width, first.worst_pi]
    # a new process (empty memory) reads the file: a value planted there is what comes back
    planning._worst_case.cache_clear()
    entry.write_text(json.dumps([0.25, 0.5]))
    planted = planning.worst_case(1.0, 2, 700)
    assert (planted.half_width, planted.worst_pi) == (0.25, 0.5)


@pytest.mark.parametrize("content", ["", "not json", "[0.1]", "[0.1, 2.0]", '["0.1", 0.5]', "[NaN, 0.5]", "{}"])
def test_an_unreadable_entry_is_computed_again_and_replaced(fresh, content):
    good = planning.worst_case(2.0, 3, 400)
    [entry] = _entries(fresh)
    entry.write_text(content)
    planning._worst_case.cache_clear()
    again = planning.worst_case(2.0, 3, 400)
    assert again == good
    assert json.loads(entry.read_text()) == [good.half_width, good.worst_pi]


def test_without_a_usable_cache_directory_everything_is_computed(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))  # mkdir under a file fails
    planning._worst_case.cache_clear()
    expected = next(c for c in GOLDEN["worst_case"] if (c["epsilon"], c["k"], c["n"]) == (1.0, 2, 1000))
    w = planning.worst_case(1.0, 2, 1000)
    assert w.half_width == pytest.approx(expected["half_width"], rel=RELATIVE, abs=0)
    _check_worst_pi(expected, 1000, w.worst_pi, w.half_width)
    planning._worst_case.cache_clear()


def test_the_cache_directory_follows_xdg(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert planning.cache_dir() == tmp_path / "xdg" / "deniable"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for ignored in ("", "relative/path"):  # the specification: only an absolute path counts
        monkeypatch.setenv("XDG_CACHE_HOME", ignored)
        assert planning.cache_dir() == tmp_path / "home" / ".cache" / "deniable"


def test_entries_are_keyed_by_their_inputs(fresh):
    planning.worst_case(1.0, 2, 500)
    planning.worst_case(1.0, 2, 500, confidence=0.9)
    planning.worst_case(1.0, 3, 500)
    planning.worst_case(None, 2, 500)
    keys = {entry.parent.name for entry in _entries(fresh)}
    assert len(keys) == 4 and len({entry.parent.parent.name for entry in _entries(fresh)}) == 1


def test_plans_are_cached_on_disk_and_a_wrong_entry_is_not_believed(fresh):
    first = planning.plan(2.0, 2, 0.1)
    [entry] = sorted((fresh / "deniable").glob("plan-*/*/*.json"))
    assert entry.name == f"{(0.1).hex()}.json"
    assert json.loads(entry.read_text()) == [first.n, first.half_width, first.worst_pi, first.half_width_one_fewer]
    planning._plan.cache_clear()
    planning._worst_case.cache_clear()
    assert planning.plan(2.0, 2, 0.1) == first  # from the file
    for wrong in ([first.n, 0.2, 0.5, 0.3], [0, 0.05, 0.5, 0.2], [1.5, 0.05, 0.5, 0.2], [first.n, 0.05, 0.5], "[]"):
        entry.write_text(json.dumps(wrong))  # a half-width above the margin, n = 0, not an integer, too short
        planning._plan.cache_clear()
        assert planning.plan(2.0, 2, 0.1) == first


def test_a_cached_plan_needs_no_scipy(tmp_path):
    code = ("import sys; from deniable.server.survey import planning; "
            "rows = planning.plan_rows(2, 0.1, [1.0, 2.0]); print(rows[0]['n'], rows[1]['n']); "
            "print(sorted(m for m in sys.modules if m == 'scipy' or m.startswith('scipy.')))")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
            for _ in range(2)]
    assert [r.returncode for r in runs] == [0, 0], runs[0].stderr + runs[1].stderr
    computed, cached = (r.stdout.splitlines() for r in runs)
    assert computed[0] == cached[0] == "456 171"  # tests/data/plan_golden.json: ε = 1 and 2, margin 0.1
    assert "scipy.special" in computed[1] and cached[1] == "[]"


# ---------------------------------------------------------------- a yes/no belt is its own mirror


@pytest.mark.parametrize("epsilon, n", [(1.0, 600), (None, 250), (0.5, 3001)])
def test_a_symmetric_belt_has_the_ends_of_the_two_sided_batch(epsilon, n):
    """With ``1 − p = q`` a yes/no belt searches each count once (the lower end of x is the upper
    end of n − x); its ends are the ones the general batch — the counts' upper ends beside the
    mirrored counts' in the mirrored problem — gives, on counts whose mirrors overlap them in
    part.  To 1e-12, not to the last bit: a count's end is searched between the ends of its
    neighbours in the batch, and the two batches hold different neighbours."""
    m = resolve(2, epsilon)
    assert 1.0 - m.p == m.q and 1.0 - m.q == m.p
    counts = np.arange(n // 3, n // 2 + n // 5)
    low, high = Belt(n, m.q, m.p, 0.95).interval(counts)
    size = counts.size
    xs = np.concatenate([counts, n - counts]).astype(float)
    qs = np.concatenate([np.full(size, m.q), np.full(size, 1.0 - m.p)])
    ps = np.concatenate([np.full(size, m.p), np.full(size, 1.0 - m.q)])
    ends, at_top = upper_ends(xs, n, qs, ps, 0.95)
    expected_high = np.where(at_top[:size], m.p, np.clip(ends[:size], m.q, m.p))
    mirrored = ends[size:]
    expected_low = np.where(at_top[size:] | (mirrored >= 1.0 - m.q), m.q, np.clip(1.0 - mirrored, m.q, m.p))
    assert np.abs(high - expected_high).max() < 1e-12 and np.abs(low - expected_low).max() < 1e-12
    # and the belt is the one mirrored: low(x) = 1 − high(n − x)
    mirror = np.clip(1.0 - Belt(n, m.q, m.p, 0.95).interval(n - counts)[1], m.q, m.p)
    assert np.abs(low - mirror).max() < 1e-12


# ---------------------------------------------------------------- scipy.special only


def test_binom_pmf_is_scipy_stats_bit_for_bit():
    rng = np.random.default_rng(29)
    for _ in range(200):
        n = int(rng.integers(1, 10**6))
        lam = float(rng.random())
        x = np.arange(max(0, int(n * lam) - 300), min(n, int(n * lam) + 300) + 1)
        assert binom_pmf(x, n, lam).tobytes() == binom.pmf(x, n, lam).tobytes()
    # off the support, or π out of range: scipy.stats' own answers (0 and NaN)
    assert binom_pmf(np.array([-1, 11]), 10, 0.5).tolist() == [0.0, 0.0]
    assert np.isnan(binom_pmf(np.array([3]), 10, 1.5)).all()


def test_the_planner_does_not_import_scipy_stats():
    code = ("import sys; import deniable.server.survey.planning, deniable.server.survey.type_planning; "
            "from deniable.estimators import plan; plan(2.0, 2, 0.1); "
            "assert 'scipy.stats' not in sys.modules, 'scipy.stats imported'")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
