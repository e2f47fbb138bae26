"""Benchmark: regression on 10^6 randomized responses (docs/analysis.md, "Regression").

Simulates 10^6 respondents of a survey with a protected yes/no question (ε = 1) and three
questions asked directly (year: 4 levels, gender: 2, age group: 5), the true answer following a
logit in all three, randomized with the shipped randomizer; then times

* ``deniable regress`` on the responses CSV, as a whole process (read, aggregate, fit, print);
* the same in-process: dataset → answer patterns → design → fit, with and without profile intervals;
* ``regress`` on 10^6 *distinct* rows (a numeric covariate drawn from a normal, so nothing
  collapses into patterns): the worst case for the likelihood, with and without profile intervals.

    python scripts/bench_regression.py            # about a minute; writes a 30 MB CSV to a temporary folder
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy.special import expit

from deniable.client.randomizer import randomize
from deniable.estimators import regress
from deniable.server.survey.dataset import Dataset
from deniable.server.survey.definition import parse_definition
from deniable.server.survey.patterns import from_dataset
from deniable.server.survey.regression import fit_formula
from deniable.server.survey.responses_csv import write_responses_csv

N = 1_000_000
DEFINITION = {
    "slug": "bench", "title": "Benchmark", "questions": [
        {"id": "drugs", "text": "Drugs?", "options": ["Yes", "No"], "epsilon": 1.0},
        {"id": "year", "text": "Year", "options": ["1", "2", "3", "4"]},
        {"id": "gender", "text": "Gender", "options": ["f", "m"]},
        {"id": "age", "text": "Age group", "options": ["18-20", "21-23", "24-26", "27-29", "30+"]},
    ]}


def timed(fn, repeat=3):
    best, value = float("inf"), None
    for _ in range(repeat):
        started = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - started)
    return best, value


def main() -> None:
    rng = np.random.default_rng(1)
    survey = parse_definition(DEFINITION)
    year, gender, age = rng.integers(0, 4, N), rng.integers(0, 2, N), rng.integers(0, 5, N)
    eta = -1.2 + 0.2 * year + 0.4 * gender - 0.1 * age
    truth = np.where(rng.random(N) < expit(eta), 0, 1)
    reports = randomize(truth, 2, 1.0, rng=rng)
    dataset = Dataset(survey, {"drugs": reports, "year": year, "gender": gender, "age": age})
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        definition, csv = Path(folder) / "bench.json", Path(folder) / "bench.csv"
        definition.write_text(json.dumps(DEFINITION))
        write_responses_csv(csv, dataset)
        command = [sys.executable, "-c", "from deniable.server.cli import cli; cli()", "regress", str(definition),
                   str(csv), "drugs ~ year + gender + age"]
        seconds, _ = timed(lambda: subprocess.run(command, check=True, capture_output=True), repeat=2)
        rows.append(("`deniable regress` on the CSV, whole process (profile intervals)", seconds))
    seconds, patterns = timed(lambda: from_dataset(dataset))
    rows.append((f"aggregate 10^6 rows into answer patterns ({len(patterns.counts)} patterns)", seconds))
    seconds, _ = timed(lambda: fit_formula(patterns, "drugs ~ year + gender + age", profile=False))
    rows.append(("fit from the patterns, 8 coefficients, Wald only", seconds))
    seconds, _ = timed(lambda: fit_formula(patterns, "drugs ~ year + gender + age"))
    rows.append(("fit from the patterns, with profile intervals", seconds))
    x = rng.normal(size=N)
    truth = np.where(rng.random(N) < expit(-1 + 0.5 * x), 0, 1)
    distinct = randomize(truth, 2, 1.0, rng=rng)
    seconds, result = timed(lambda: regress(distinct, x, 1.0, k=2, profile=False), repeat=2)
    rows.append((f"regress on 10^6 distinct rows (numeric covariate, {result.patterns:,} patterns), Wald only",
                 seconds))
    seconds, _ = timed(lambda: regress(distinct, x, 1.0, k=2), repeat=1)
    rows.append(("the same with profile intervals", seconds))
    print(f"Python {platform.python_version()}, numpy {np.__version__}, {os.cpu_count()} CPUs, "
          f"{platform.machine()}; best of 2–3 runs (1 for the last)")
    print()
    width = max(len(what) for what, _ in rows)
    print(f"| {'what'.ljust(width)} | time |")
    print(f"| {'-' * width} | ---: |")
    for what, seconds in rows:
        shown = f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.2f} s"
        print(f"| {what.ljust(width)} | {shown} |")


if __name__ == "__main__":
    main()
