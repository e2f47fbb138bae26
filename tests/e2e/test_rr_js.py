"""The shipped browser randomizer ``client/static/rr.js``, run in chromium.

It must reproduce the shared test vectors (``tests/rr_vectors.json``, made by the Python
reference through ``python scripts/make_rr_vectors.py``) draw for draw, and with
``crypto.getRandomValues`` its reports must follow k-ary randomized response.

The distribution tests use a chi-square (or binomial) goodness-of-fit test at ``ALPHA = 1e-4`` each
(ten tests: a correct sampler fails one of them with probability below 0.1%).  The numeric,
check-all-that-apply and list-experiment samplers reproduce ``tests/type_vectors.json``
(``python scripts/make_type_vectors.py``) the same way.  A browser's CSPRNG
cannot be seeded, so these are the only tests here that are random.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from deniable.client.mechanism import mechanism
from deniable.client.randomizer import randomize_draws

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
VECTORS = ROOT / "tests" / "rr_vectors.json"
ALPHA = 1e-4
N_PER_VALUE = 20_000

IMPORT = "const rr = await import('/static/rr.js');"


@pytest.fixture
def rr_page(page, live_server, open_demo):
    """A page on the live server's origin, so that ``import('/static/rr.js')`` loads the shipped file."""
    page.goto(f"{live_server}/s/demo")
    return page


def test_reproduces_the_shared_vectors(rr_page):
    cases = json.loads(VECTORS.read_text())["cases"]
    assert len(cases) >= 20
    results = rr_page.evaluate(
        """async (cases) => {
            const rr = await import('/static/rr.js');
            return cases.map((c) => {
                let used = 0;
                const next = () => c.draws[used++];
                const reports = c.values.map((v) => rr.randomize(v, c.k, c.threshold, next));
                return {reports, used};
            });
        }""",
        [{"k": c["k"], "threshold": c["threshold"], "values": c["values"], "draws": c["draws"]} for c in cases],
    )
    for case, result in zip(cases, results):
        assert mechanism(case["k"], case["epsilon"]).threshold == case["threshold"]
        assert result["reports"] == case["reports"], (case["k"], case["epsilon"])
        assert result["reports"] == randomize_draws(case["values"], case["k"], case["epsilon"], case["draws"])
        assert result["used"] == len(case["draws"])


def test_rejection_region_is_redrawn(rr_page):
    # k = 4: m = 3, 2^32 mod 3 = 1, so u = 2^32 - 1 is rejected and the next draw decides.
    reports = rr_page.evaluate(
        """async () => {
            const rr = await import('/static/rr.js');
            const draws = [4294967295, 4294967295, 4];  // move, rejected, r = 4 % 3 = 1
            let i = 0;
            return [rr.randomize(0, 4, 100, () => draws[i++]), i];
        }""")
    assert reports == [2, 3]


@pytest.mark.parametrize("k, epsilon", [(2, 1.0), (5, 1.0)])
def test_distribution_with_crypto_random_values(rr_page, k, epsilon):
    mech = mechanism(k, epsilon)
    tallies = rr_page.evaluate(
        """async ([k, threshold, n]) => {
            const rr = await import('/static/rr.js');
            const out = [];
            for (let value = 0; value < k; value++) {
                const counts = new Array(k).fill(0);
                for (let i = 0; i < n; i++) counts[rr.randomize(value, k, threshold)] += 1;
                out.push(counts);
            }
            return out;
        }""", [k, mech.threshold, N_PER_VALUE])
    for value, counts in enumerate(tallies):
        expected = np.full(k, mech.q * N_PER_VALUE)
        expected[value] = mech.p * N_PER_VALUE
        result = stats.chisquare(counts, expected)
        assert result.pvalue > ALPHA, (value, counts, expected)


@pytest.mark.parametrize("call, message", [
    ("rr.randomize(2, 2, 3221225472)", "value must be an integer in 0..1"),
    ("rr.randomize(0, 1, 3221225472)", "k must be an integer"),
    ("rr.randomize(0, 2, 1.5)", "threshold must be an integer"),
    ("rr.randomize(0, 2, 10, () => -1)", "a uint32 draw must be an integer"),
])
def test_bad_arguments_throw(rr_page, call, message):
    error = rr_page.evaluate(
        f"async () => {{ {IMPORT} try {{ {call}; return null; }} catch (e) {{ return e.message; }} }}")
    assert error is not None and message in error


def test_fails_closed_without_crypto(browser, live_server, open_demo):
    context = browser.new_context()
    try:
        page = context.new_page()
        page.add_init_script("Object.defineProperty(globalThis, 'crypto', {value: undefined, configurable: true});")
        page.goto(f"{live_server}/s/demo")
        error = page.evaluate(
            f"async () => {{ {IMPORT} try {{ rr.randomize(0, 2, 3221225472); return null; }} "
            "catch (e) { return e.message; } }")
        assert "crypto.getRandomValues is not available" in error
        assert page.locator("#submit-answers").is_disabled()
        assert "no secure random number generator" in page.locator("#js-status").inner_text()
    finally:
        context.close()


TYPE_VECTORS = ROOT / "tests" / "type_vectors.json"


def test_reproduces_the_type_vectors(rr_page):
    """The numeric, check-all-that-apply and list-experiment samplers draw for draw (scripts/make_type_vectors.py)."""
    cases = json.loads(TYPE_VECTORS.read_text())
    results = rr_page.evaluate(
        """async (data) => {
            const rr = await import('/static/rr.js');
            const run = (c, each) => {
                let used = 0;
                const next = () => { if (used >= c.draws.length) throw new Error('out of draws'); return c.draws[used++]; };
                return {reports: c.values.map((v) => each(v, next)), used};
            };
            return {
                laplace: data.laplace.map((c) => run(c, (v, next) => rr.randomizeLaplace(v, c.m, c.threshold, c.tail, next))),
                grid: data.grid.map((c) => run(c, (v, next) => rr.randomizeGrid(v, c.m, c.grid, c.threshold, next))),
                multi: data.multi.map((c) => run(c, (v, next) => rr.randomizeTicks(v, c.threshold, next))),
                list: data.list.map((c) => run(c, (v, next) => {
                    const arm = rr.assignArm(next);
                    return [arm, rr.randomizeCount(v, c.items, arm, c.threshold, next)];
                })),
            };
        }""", cases)
    for kind in ("laplace", "grid", "multi", "list"):
        assert len(cases[kind]) >= 4
        for case, result in zip(cases[kind], results[kind]):
            assert result["reports"] == case["reports"], (kind, case)
            assert result["used"] == len(case["draws"]), (kind, case)


@pytest.mark.parametrize("call, message", [
    ("rr.randomizeLaplace(11, 10, 3886247119, 278)", "value must be an integer in 0..10"),
    ("rr.randomizeLaplace(0, 10, 4294967296, 278)", "threshold must be an integer"),
    ("rr.randomizeGrid(3, 40, 3, 3139872686)", "grid must divide m"),
    ("rr.randomizeTicks([0, 2], 3139872686)", "a tick must be an integer in 0..1"),
    ("rr.randomizeCount(4, 3, 0, 3139872686)", "count must be an integer in 0..3"),
])
def test_bad_arguments_of_the_type_samplers_throw(rr_page, call, message):
    error = rr_page.evaluate(
        f"async () => {{ {IMPORT} try {{ {call}; return null; }} catch (e) {{ return e.message; }} }}")
    assert error is not None and message in error


def test_type_samplers_with_crypto_random_values(rr_page):
    """With crypto.getRandomValues: the Laplace noise, the grid's rounding and the arm coin follow
    their distributions (chi-square at ALPHA each)."""
    from deniable.client.numeric import grid_mechanism, laplace

    mech = laplace(4, 1.0)
    grid = grid_mechanism(10, 2, 2.0)
    data = rr_page.evaluate(
        """async ([lap, grid, n]) => {
            const rr = await import('/static/rr.js');
            const noise = {};
            for (let i = 0; i < n; i++) {
                const y = rr.randomizeLaplace(2, 4, lap.threshold, lap.tail) - 2;
                noise[y] = (noise[y] || 0) + 1;
            }
            const rounded = [0, 0, 0];
            for (let i = 0; i < n; i++) rounded[rr.roundToGrid(7, 10, 2)] += 1;
            let arms = 0;
            for (let i = 0; i < n; i++) arms += rr.assignArm();
            return {noise, rounded, arms};
        }""", [{"threshold": mech.threshold, "tail": mech.tail}, {"threshold": grid.threshold}, N_PER_VALUE])
    z = np.array(sorted(int(k) for k in data["noise"]))
    observed = np.array([data["noise"][str(k)] for k in z])
    inner = np.abs(z) <= 6  # pool the tails beyond ±6
    probs = mech.pmf(np.arange(-6, 7))
    expected = np.append(probs, 1 - probs.sum()) * N_PER_VALUE
    counts = np.append([observed[z == k].sum() for k in range(-6, 7)], observed[~inner].sum())
    assert stats.chisquare(counts, expected).pvalue > ALPHA
    # 7 = 1 · 5 + 2: rounds to grid index 1 or 2 with probabilities 3/5 and 2/5
    assert data["rounded"][0] == 0
    assert stats.chisquare(data["rounded"][1:], [0.6 * N_PER_VALUE, 0.4 * N_PER_VALUE]).pvalue > ALPHA
    assert stats.binomtest(data["arms"], N_PER_VALUE, 0.5).pvalue > ALPHA
