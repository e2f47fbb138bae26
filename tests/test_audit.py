"""``deniable audit``: the ε lower bound is exact where it can be checked, passes the shipped
randomizers and catches a broken one."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.stats import binom

from client import randomize
from client.mechanism import mechanism
from estimators.audit import cp_lower, cp_upper, epsilon_lower_bound
from server.cli import cli

RR_JS = Path(__file__).resolve().parent.parent / "client" / "static" / "rr.js"


@pytest.mark.parametrize("x,n", [(1, 10), (37, 100), (731, 1000), (99_000, 100_000)])
def test_clopper_pearson_bounds_solve_the_binomial_tail_equations(x, n):
    alpha = 0.01
    low, high = float(cp_lower(x, n, alpha)), float(cp_upper(x, n, alpha))
    assert binom.sf(x - 1, n, low) == pytest.approx(alpha, rel=1e-6)  # P(X ≥ x | low) = α
    assert binom.cdf(x, n, high) == pytest.approx(alpha, rel=1e-6)    # P(X ≤ x | high) = α
    assert float(cp_lower(0, n, alpha)) == 0.0 and float(cp_upper(n, n, alpha)) == 1.0


def test_bound_on_exact_expected_counts_is_just_below_epsilon():
    k, eps, n = 3, 1.0, 10**7
    mech = mechanism(k, eps)
    table = np.where(np.eye(k, dtype=bool), mech.p, mech.q)
    counts = np.round(table * n).astype(np.int64)
    counts[:, -1] = n - counts[:, :-1].sum(axis=1)
    found = epsilon_lower_bound(counts)
    assert 0.99 * eps < found.lower_bound < eps
    assert found.point == pytest.approx(mech.epsilon, abs=1e-5)
    assert found.bounds_tested == 2 * k * k and found.worst[0] == found.worst[2]


def test_bad_tables_are_clear_errors():
    with pytest.raises(ValueError, match="k × k"):
        epsilon_lower_bound([[1, 2, 3]])
    with pytest.raises(ValueError, match="same positive number"):
        epsilon_lower_bound([[5, 5], [3, 3]])


def python_table(k, epsilon, n, seed):
    rng = np.random.default_rng(seed)
    return np.array([np.bincount(randomize(np.full(n, a), k, epsilon, rng), minlength=k) for a in range(k)])


def test_python_randomizer_stays_below_and_a_stronger_one_is_caught():
    honest = epsilon_lower_bound(python_table(2, 1.0, 10**6, seed=3), confidence=0.999)
    assert honest.lower_bound <= 1.0
    # a randomizer that really runs at ε = 1.2 while claiming 1.0
    broken = epsilon_lower_bound(python_table(2, 1.2, 10**6, seed=3), confidence=0.999)
    assert broken.lower_bound > 1.0


def run(*args):
    return CliRunner().invoke(cli, ["audit", *args])


@pytest.mark.browser
def test_shipped_rr_js_and_python_pass():
    # all bounds of both randomizers in both settings hold together with probability ≥ 1 − 4 · 0.001
    result = run("--k", "2", "--k", "5", "--epsilon", "1", "--samples", "200000", "--confidence", "0.999",
                 "--format", "json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output[result.output.index("{"):])["results"]
    assert [(r["k"], r["ok"]) for r in rows] == [(2, True), (5, True)]
    for r in rows:
        assert r["browser_lower_bound"] <= 1.0 and r["python_lower_bound"] <= 1.0
        assert r["browser_point"] == pytest.approx(r["realized_epsilon"], abs=0.05)


@pytest.mark.browser
def test_a_threshold_five_percent_too_high_is_caught(tmp_path):
    """At k = 2, ε = 1 a 5% higher threshold is ε ≈ 1.19; the audit must say so.

    At confidence 0.999 the bound on the honest file exceeds ε with probability ≤ 0.001; the
    broken file escapes only if its bound falls ~0.17 short of its true ε, which at 200,000
    runs per value is more than ten standard errors away.
    """
    source = RR_JS.read_text()
    keep = "if (draw(nextUint32) < threshold) {"
    assert keep in source
    broken = tmp_path / "rr-broken.js"
    broken.write_text(source.replace(keep, "if (draw(nextUint32) < Math.min(threshold * 1.05, 4294967296)) {"))
    result = run("--k", "2", "--epsilon", "1", "--samples", "200000", "--confidence", "0.999",
                 "--script", str(broken))
    assert result.exit_code == 1, result.output
    assert "VIOLATION" in result.output
    line = next(l for l in result.output.splitlines() if re.match(r"\s+2\s", l))
    browser_bound = float(line.split()[3])
    assert browser_bound > 1.0 and math.isclose(browser_bound, 1.19, abs_tol=0.05)
