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

from deniable.client import randomize
from deniable.client.mechanism import mechanism
from deniable.estimators.audit import epsilon_lower_bound
from deniable.estimators.binomial import cp_lower, cp_upper
from deniable.server.cli import cli

RR_JS = Path(__file__).resolve().parents[2] / "client" / "static" / "rr.js"


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
    with pytest.raises(ValueError, match="r × s"):
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
    # all bounds of both randomizers in both settings hold together with probability ≥ 0.999
    result = run("--type", "choice", "--k", "2", "--k", "5", "--epsilon", "1", "--samples", "200000",
                 "--confidence", "0.999", "--format", "json")
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
    result = run("--type", "choice", "--k", "2", "--epsilon", "1", "--samples", "200000", "--confidence", "0.999",
                 "--script", str(broken))
    assert result.exit_code == 1, result.output
    assert "VIOLATION" in result.output
    line = next(l for l in result.output.splitlines() if re.match(r"\s+choice\s+k=2\s", l))
    browser_bound = float(line.split()[4])
    assert browser_bound > 1.0 and math.isclose(browser_bound, 1.19, abs_tol=0.05)


def _solve(f, target):
    """The π in (0, 1) with f(π) = target, for f monotone in π (scipy's brentq root finder)."""
    from scipy.optimize import brentq
    return brentq(lambda pi: f(pi) - target, 1e-12, 1 - 1e-12, xtol=1e-15, rtol=1e-13)


def test_epsilon_bound_matches_an_independent_computation_from_binomial_tails():
    # k = 2: four cells, 2k² = 8 one-sided bounds, each at level α/8.  The bound for (a, b, s) is
    # ln(L/U) with P(X ≥ x_as | L) = α/8 and P(X ≤ x_bs | U) = α/8, solved here by bisection on
    # scipy.stats.binom instead of the beta quantiles the module uses.
    n, confidence = 100_000, 0.95
    counts = np.array([[73_210, 26_790], [26_950, 73_050]])
    level = (1 - confidence) / 8
    low = {(a, s): _solve(lambda pi, x=counts[a, s]: binom.sf(x - 1, n, pi), level)
           for a in range(2) for s in range(2)}
    high = {(b, s): _solve(lambda pi, x=counts[b, s]: binom.cdf(x, n, pi), level)
            for b in range(2) for s in range(2)}
    expected = max(math.log(low[a, s] / high[1 - a, s]) for a in range(2) for s in range(2))
    found = epsilon_lower_bound(counts, confidence)
    assert found.lower_bound == pytest.approx(expected, rel=1e-6)
    # a tight triple s = a, ln(P(a | a) / P(a | b)) = ln(p/q); here 73,050/26,790 beats 73,210/26,950
    assert found.worst == (1, 0, 1)
    assert found.point == pytest.approx(math.log(73_050 / 26_790))


def test_a_randomizer_that_ignores_its_input_has_bound_zero():
    # identical rows: every ratio is at most 1 at the bounds, and the bound is clipped at 0
    found = epsilon_lower_bound([[500, 500], [500, 500]])
    assert found.lower_bound == 0.0 and found.point == 0.0


def randomize_with_threshold(k, threshold, n, seed):
    """Counts from the Python twin's per-draw code (client.randomizer.randomize_one) at any threshold."""
    from deniable.client.mechanism import Mechanism
    from deniable.client.randomizer import randomize_one

    mech = Mechanism(k=k, threshold=threshold, declared_epsilon=1.0)
    rng = np.random.default_rng(seed)
    table = np.zeros((k, k), dtype=np.int64)
    for a in range(k):
        draws = iter(rng.integers(0, 2**32, size=3 * n, dtype=np.uint32).tolist())
        for _ in range(n):
            table[a, randomize_one(a, mech, draws)] += 1
    return table


def test_python_randomizer_with_a_threshold_five_percent_too_high_is_caught():
    # k = 2, declared ε = 1: threshold · 1.05 keeps with p ≈ 0.768, i.e. ε ≈ 1.197.  Seeded: deterministic.
    k, n = 2, 100_000
    threshold = mechanism(k, 1.0).threshold
    honest = epsilon_lower_bound(randomize_with_threshold(k, threshold, n, seed=11))
    broken = epsilon_lower_bound(randomize_with_threshold(k, int(threshold * 1.05), n, seed=11))
    assert honest.lower_bound <= 1.0
    assert broken.lower_bound > 1.1


def test_missing_chromium_is_one_clear_line(tmp_path):
    result = run("--samples", "1000", "--chromium", str(tmp_path / "no-chromium"))
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "chromium not found" in lines[0], result.output


@pytest.mark.parametrize("epsilon", ["0", "25", "nan"])
def test_bad_epsilon_names_the_option(epsilon):
    result = run("--epsilon", epsilon, "--samples", "1000")
    assert result.exit_code == 2
    assert "--epsilon" in result.output and "Traceback" not in result.output


def test_db_that_is_not_a_deniable_database_is_one_clear_line(tmp_path):
    junk = tmp_path / "junk.db"
    junk.write_text("not sqlite")
    result = run("--db", str(junk))
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [f"Error: {junk}: cannot read the surveys: file is not a database"]


def test_db_without_protected_questions_is_one_clear_line(tmp_path):
    definition = tmp_path / "direct.json"
    definition.write_text(json.dumps({"slug": "direct", "title": "Direct", "questions": [
        {"id": "year", "text": "Year?", "options": ["First", "Second"]}]}))
    db = tmp_path / "direct.db"
    assert CliRunner().invoke(cli, ["import", str(definition), "--db", str(db)]).exit_code == 0
    result = run("--db", str(db))
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [f"Error: {db}: no protected questions to audit"]


@pytest.mark.browser
def test_db_audits_the_mechanisms_of_the_stored_questions(tmp_path):
    db = tmp_path / "survey.db"
    example = Path(__file__).resolve().parents[2] / "examples" / "survey.json"
    assert CliRunner().invoke(cli, ["import", str(example), "--db", str(db), "--open"]).exit_code == 0
    result = run("--db", str(db), "--samples", "50000", "--confidence", "0.999", "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output[result.output.index("{"):])
    assert report["confidence_each"] == pytest.approx(1 - 0.001 / 4)  # 2 settings × 2 randomizers
    assert [(r["k"], r["declared_epsilon"], r["threshold"], r["questions"]) for r in report["results"]] == [
        (2, 1.0, mechanism(2, 1.0).threshold, ["student-life/drugs"]),
        (3, 2.0, mechanism(3, 2.0).threshold, ["student-life/cheated"]),
    ]
    assert all(r["ok"] for r in report["results"])


def test_without_playwright_the_hint_installs_it_into_this_python(monkeypatch):
    """The command works for this project's install (a checkout's .venv or any other): it names this
    interpreter, whose pip is there."""
    import subprocess
    import sys

    monkeypatch.setitem(sys.modules, "playwright.sync_api", None)  # as if Playwright were not installed
    result = run("--samples", "1000")
    assert result.exit_code == 1
    line = result.output.strip()
    assert line.startswith("Error: deniable audit needs Playwright")
    assert f"{sys.executable} -m pip install 'playwright>=1.45,<2'" in line and "deniable[audit]" not in line
    assert subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True).returncode == 0
