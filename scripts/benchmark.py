"""Time the hot paths and print a table (quoted in docs/benchmarks.md).

Run from the repository root:

    python scripts/benchmark.py            # about a minute; writes a 200 MB CSV to a temp dir
    python scripts/benchmark.py --rows 1000000
    python scripts/benchmark.py --estimators   # only the estimator rows (no CSV)

Benchmarks are a script, never timed tests: numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from bench_offline import FLOOR, pairs  # noqa: E402

from deniable import estimators  # noqa: E402
from deniable.client.mechanism import mechanism  # noqa: E402
from deniable.estimators import exact, planning  # noqa: E402
from deniable.estimators import joint as joint_module  # noqa: E402
from deniable.server.store.demo import demo_survey  # noqa: E402
from deniable.server.survey.planning import question_plan  # noqa: E402
from deniable.client import randomize  # noqa: E402
from deniable.server.survey.responses_csv import write_responses_csv  # noqa: E402
from deniable.server.survey.dataset import Dataset  # noqa: E402
from deniable.server.survey.definition import load_definition  # noqa: E402


def best_of(fn, repeat: int = 5) -> float:
    """The fastest of ``repeat`` runs, in seconds (the least disturbed by other load)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def fmt(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.2f} s"


def deniable_command() -> list[str]:
    script = Path(sys.executable).parent / "deniable"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from deniable.server.cli import cli; cli(prog_name='deniable')"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000, help="size of the large inputs")
    parser.add_argument("--estimators", action="store_true", help="only the estimator rows")
    args = parser.parse_args()
    n = args.rows
    rows: list[tuple[str, str]] = []

    # Estimation from counts (sufficient statistics): the cost does not depend on n... except
    # the exact belt, which is built once per (n, p, q, confidence) and then cached.
    counts = np.array([2_013, 4_987, 3_000])
    fresh = iter(range(10_000, 10_000 + 1000))

    def exact_cold():
        c = counts.copy()
        c[0] += next(fresh) - 10_000 + 1  # a new n each time: nothing cached
        estimators.estimate(c, 1.0, method="exact")

    rows.append(("estimate, k=3, n≈10^4, exact (first call for this n)", fmt(best_of(exact_cold, 3))))
    for method in estimators.METHODS:
        estimators.estimate(counts, 1.0, method=method)  # warm any cache
        t = best_of(lambda: estimators.estimate(counts, 1.0, method=method), 20)
        label = "exact (cached)" if method == "exact" else method
        rows.append((f"estimate, k=3, n=10^4, {label}", fmt(t)))

    rows += estimator_rows()
    if args.estimators:
        print_table(rows)
        return

    survey = load_definition(ROOT / "examples" / "survey.json")
    rng = np.random.default_rng(1)
    column = rng.integers(0, 3, n).astype(np.int16)
    dataset = Dataset(survey, {q.id: rng.integers(0, q.k, n).astype(np.int16) for q in survey.questions})
    rows.append((f"aggregate {n:,} reports (Dataset.counts, int16)", fmt(best_of(lambda: dataset.counts("cheated")))))
    rows.append((f"aggregate {n:,} × 3 questions (all_counts)", fmt(best_of(dataset.all_counts))))
    rows.append((f"joint counts {n:,} rows (2 × 3 cross-tab)",
                 fmt(best_of(lambda: dataset.joint_counts("drugs", "cheated")))))
    del column

    values = rng.integers(0, 5, n)
    rows.append((f"client.randomize {n:,} values, k=5, ε=1, OS CSPRNG", fmt(best_of(lambda: randomize(values, 5, 1.0), 3))))
    rows.append((f"client.randomize {n:,} values, k=5, ε=1, seeded",
                 fmt(best_of(lambda: randomize(values, 5, 1.0, rng=np.random.default_rng(2)), 3))))
    del values

    tmp = Path(tempfile.mkdtemp(prefix="deniable-bench-"))
    try:
        csv_path = tmp / "responses.csv"
        start = time.perf_counter()
        write_responses_csv(csv_path, dataset)
        rows.append((f"write the responses CSV ({n:,} rows × 3, {csv_path.stat().st_size / 1e6:.0f} MB)",
                     fmt(time.perf_counter() - start)))
        command = deniable_command() + ["estimate", str(ROOT / "examples" / "survey.json"), str(csv_path)]
        estimate_s, floor_s, ratio = pairs(command, [sys.executable, "-c", FLOOR, str(csv_path)], 3)
        rows.append(("`deniable estimate` on that CSV (whole process)", fmt(estimate_s)))
        rows.append(("floor: pyarrow read + value_counts of it (whole process)", fmt(floor_s)))
        rows.append(("estimate / floor (median of 3 alternating pairs)", f"{ratio:.2f}×"))
    finally:
        shutil.rmtree(tmp)

    print_table(rows)


def print_table(rows) -> None:
    width = max(len(what) for what, _ in rows)
    print(f"Python {platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__}, "
          f"{os.cpu_count()} CPUs, {platform.machine()}; best of several runs")
    print()
    print(f"| {'what'.ljust(width)} | time |")
    print(f"| {'-' * width} | ---: |")
    for what, t in rows:
        print(f"| {what.ljust(width)} | {t} |")


def cold(fn):
    """Run ``fn`` with every estimator cache emptied first: a first call, as after a restart."""
    def run():
        exact.belt.cache_clear()
        planning._worst_case.cache_clear()
        planning._plan.cache_clear()
        with tempfile.TemporaryDirectory() as empty:  # and the planner's disk cache: an empty one
            os.environ["XDG_CACHE_HOME"] = empty
            fn()
    return run


def estimator_rows() -> list[tuple[str, str]]:
    """Exact intervals with many options at large n, cross-tabs, the planner (issue 14)."""
    rows = []
    rng = np.random.default_rng(14)
    for n_resp in (10**5, 10**8, 10**9):
        mech = mechanism(200, 1.0)
        # many rare options (Dirichlet 0.3): most endpoints sit near the boundary, the hard case
        shares = rng.dirichlet(np.full(200, 0.3))
        counts = rng.multinomial(n_resp, mech.q + (mech.p - mech.q) * shares)
        rows.append((f"estimate, k=200, n=10^{round(np.log10(n_resp))}, exact, rare options (first call)",
                     fmt(best_of(cold(lambda: estimators.estimate(counts, 1.0)), 5))))
        even = rng.multinomial(n_resp, np.full(200, 1 / 200))
        rows.append((f"estimate, k=200, n=10^{round(np.log10(n_resp))}, exact, even options (first call)",
                     fmt(best_of(cold(lambda: estimators.estimate(even, 1.0)), 5))))
    joint = np.array([[2_210, 880, 1_410], [2_990, 1_520, 990]])
    rows.append(("crosstab 2 × 3, n=10^4, ε=1+2 (first call)",
                 fmt(best_of(cold(lambda: estimators.crosstab(joint, 1.0, 2.0)), 5))))
    mech3 = mechanism(3, 1.0)
    p3 = joint_module.mechanism_matrix(3, mech3.p, mech3.q)
    truth = np.array([[0.30, 0.05, 0.0], [0.10, 0.20, 0.0], [0.05, 0.05, 0.25]])
    table = rng.multinomial(50_000, (p3 @ truth @ p3.T).ravel()).reshape(3, 3)
    rows.append(("crosstab 3 × 3, n=50,000, ε=1+1, zero cells (first call)",
                 fmt(best_of(cold(lambda: estimators.crosstab(table, 1.0, 1.0)), 5))))
    rows.append(("sample_size(ε=1, k=2, margin 0.05) → 1,819 (first call)",
                 fmt(best_of(cold(lambda: estimators.sample_size(1.0, 2, 0.05)), 3))))
    rows.append(("sample_size(ε=0.3, k=10, margin 0.01) → 3.8 million (first call)",
                 fmt(best_of(cold(lambda: estimators.sample_size(0.3, 10, 0.01)), 1))))
    estimators.sample_size(1.0, 2, 0.05)
    rows.append(("sample_size, cached", fmt(best_of(lambda: estimators.sample_size(1.0, 2, 0.05), 20))))
    rows.append(("margin_of_error(ε=2, k=4, n=1,000) (first call)",
                 fmt(best_of(cold(lambda: estimators.margin_of_error(2.0, 4, 1000)), 3))))
    demo = demo_survey()

    def builder_panels():  # what the builder computes for the demo survey's question slots
        return [question_plan(q.epsilon, q.k, 1000, 0.05) for q in demo.questions]

    rows.append(("builder planning panel, demo survey, n=1,000, ±0.05 (first view)",
                 fmt(best_of(cold(builder_panels), 3))))
    builder_panels()
    rows.append(("builder planning panel, same, later views (cached)", fmt(best_of(builder_panels, 20))))
    rows.extend(numeric_rows(rng))
    pi = np.linspace(0, 1, 501)
    rows.append(("coverage('exact', n=10^7, k=10, ε=5, 501 π), exact sums",
                 fmt(best_of(cold(lambda: estimators.coverage("exact", 10**7, 10, 5.0, pi)), 1))))
    return rows


def numeric_rows(rng, n: int = 10**7) -> list[tuple[str, str]]:
    """A numeric question (answers 0..40, ε = 1) from 10^7 reports made by the real randomizers:
    aggregate the reports and estimate mean, distribution, CDF and median (issue 11)."""
    from deniable.client import numeric
    from deniable.estimators.numeric import estimate_grid, estimate_laplace

    answers = rng.binomial(40, 0.3, n)
    grid = numeric.grid_mechanism(40, 4, 1.0)
    grid_reports = numeric.randomize_grid(answers, grid, rng)
    lap = numeric.laplace(40, 1.0)
    lap_reports = numeric.randomize_laplace(answers, lap, rng)

    def grid_estimate():
        estimate_grid(np.bincount(grid_reports, minlength=grid.k), 40, 4, 1.0)

    def laplace_estimate():
        values, counts = np.unique(lap_reports, return_counts=True)
        estimate_laplace(values, counts, 40, 1.0)

    return [(f"numeric 0..40, grid G=4, ε=1: aggregate + estimate {n:,} reports", fmt(best_of(grid_estimate, 3))),
            (f"numeric 0..40, discrete Laplace, ε=1: aggregate + estimate {n:,} reports",
             fmt(best_of(laplace_estimate, 3)))]


if __name__ == "__main__":
    main()
