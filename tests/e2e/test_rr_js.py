"""The shipped browser randomizer ``client/static/rr.js``, run in chromium.

It must reproduce the shared test vectors (``tests/rr_vectors.json``, made by the Python
reference through ``python scripts/make_rr_vectors.py``) draw for draw, and with
``crypto.getRandomValues`` its reports must follow k-ary randomized response.

The distribution tests use a chi-square goodness-of-fit test at ``ALPHA = 1e-4`` each (seven
tests: a correct sampler fails one of them with probability below 0.1%).  A browser's CSPRNG
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
