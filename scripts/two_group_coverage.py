"""Simulated coverage of the two-group designs' intervals (docs/statistics.md, "Two-group designs").

For each design (CDM, CDMsym, SLD, UQTunknown, with the reference data's p), each n (two equal
groups), π ∈ {0, 0.2} and the nuisance parameter at its boundary (γ = 0, t = 1, π_UQ = 0) and inside
(γ = 0.15, t = 0.7, π_UQ = 0.4): ``--reps`` data sets, each group's "yes" count drawn from its binomial
(seeded), each fitted by :func:`~deniable.estimators.two_group.estimate_two_group` (once per distinct
pair of counts; the fits are weighted by how often the pair was drawn).  Reported per cell: the share of
data sets whose interval holds the true π and the true nuisance parameter, for the exact (the default
of the results), the profile-likelihood and RRreg's Wald intervals.  The Monte Carlo s.e. is that of a
coverage of 0.95 with ``--reps`` replications; a cell is flagged when an interval covers less than
0.95 − 2 MC s.e.  SLD's t is not defined at π = 0 (n/a).  Output: a Markdown table.

    python scripts/two_group_coverage.py --reps 2000                 # the table of docs/statistics.md
    python scripts/two_group_coverage.py --reps 200 --n 100 --models SLD
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from multiprocessing import Pool
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT.parent))

from deniable.estimators.two_group import MODELS, estimate_two_group  # noqa: E402

P = {"CDM": (0.3, 0.7), "CDMsym": (0.2, 0.1, 0.7, 0.15), "SLD": (0.25, 0.75), "UQTunknown": (0.7, 0.3)}
PIS = (0.0, 0.2)
NUISANCE = {"CDM": (0.0, 0.15), "CDMsym": (0.0, 0.15), "SLD": (1.0, 0.7), "UQTunknown": (0.0, 0.4)}
KINDS = ("exact", "profile", "wald")
NOMINAL = 0.95


def cell(task) -> dict:
    """Coverage of π and of the nuisance parameter by each kind of interval in one cell."""
    model, n, pi, nuisance, reps, seed, confidence = task
    spec = MODELS[model]
    half = n // 2
    probs = spec.yes_probability(pi, nuisance, P[model])
    rng = np.random.default_rng(seed)
    draws = np.column_stack([rng.binomial(half, probs[0], reps), rng.binomial(half, probs[1], reps)])
    pairs, times = np.unique(draws, axis=0, return_counts=True)
    truth = {"pi": pi, spec.nuisance: nuisance}
    defined = {"pi": True, spec.nuisance: not (model == "SLD" and pi == 0)}
    held = {(kind, name): 0 for kind in KINDS for name in truth}
    width = 0.0
    for (y1, y2), count in zip(pairs.tolist(), times.tolist()):
        result = estimate_two_group(model, P[model], [y1, y2], [half, half], confidence=confidence)
        for kind in KINDS:
            for name, value in truth.items():
                low, high = result.interval(name, kind)
                if defined[name] and low - 1e-9 <= value <= high + 1e-9:
                    held[kind, name] += count
        width += count * (result.upper["pi"] - result.lower["pi"])
    coverage = {key: (value / reps if defined[key[1]] else math.nan) for key, value in held.items()}
    return {"model": model, "n": n, "pi": pi, "nuisance": nuisance, "name": spec.nuisance, "coverage": coverage,
            "width": width / reps, "distinct": len(pairs)}


def tasks(args) -> list:
    out = []
    for m, model in enumerate(args.models):
        for n in args.n:
            for i, pi in enumerate(PIS):
                for j, nuisance in enumerate(NUISANCE[model]):
                    seed = args.seed + 1000 * m + 100 * args.n.index(n) + 10 * i + j
                    out.append((model, n, pi, nuisance, args.reps, seed, args.confidence))
    return out


def shown(value: float, floor: float) -> str:
    if math.isnan(value):
        return "n/a"
    return f"**{value:.3f}**" if value < floor else f"{value:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", choices=list(P), default=list(P))
    parser.add_argument("--n", type=int, nargs="+", default=[100, 1000, 10_000], help="total n, two equal groups")
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=20261129)
    parser.add_argument("--confidence", type=float, default=NOMINAL)
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (the cells are independent)")
    args = parser.parse_args()
    started = time.perf_counter()
    mc_se = math.sqrt(args.confidence * (1 - args.confidence) / args.reps)
    floor = args.confidence - 2 * mc_se
    work = tasks(args)
    rows = []
    with Pool(args.jobs) if args.jobs > 1 else _Serial() as pool:
        for done, row in enumerate(pool.imap(cell, work), 1):
            rows.append(row)
            print(f"  {done}/{len(work)} {row['model']} n={row['n']} pi={row['pi']:g} {row['name']}="
                  f"{row['nuisance']:g} ({row['distinct']} distinct, {time.perf_counter() - started:.0f} s)",
                  file=sys.stderr, flush=True)
    print(f"{args.reps:,} replications per cell (seed {args.seed}), {args.confidence:.0%} intervals; Monte Carlo "
          f"s.e. {mc_se:.4f}, floor {args.confidence:g} − 2 MC s.e. = {floor:.4f} (**bold**: below it)\n")
    print("| design | n | π | nuisance | exact π | exact nuis. | profile π | profile nuis. | Wald π | Wald nuis. "
          "| exact π width |")
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    short = []
    for row in rows:
        c = row["coverage"]
        values = [c[kind, name] for kind in KINDS for name in ("pi", row["name"])]
        print(f"| {row['model']} | {row['n']:,} | {row['pi']:g} | {row['name']} = {row['nuisance']:g} | "
              + " | ".join(shown(v, floor) for v in values) + f" | {row['width']:.3f} |")
        for kind in KINDS:
            for name in ("pi", row["name"]):
                if c[kind, name] < floor:
                    short.append(f"{kind} {name}: {row['model']} n={row['n']} pi={row['pi']:g} "
                                 f"{row['name']}={row['nuisance']:g} ({c[kind, name]:.3f})")
    for kind in KINDS:
        below = [s for s in short if s.startswith(kind)]
        print(f"\ncells below the floor, {kind}: {len(below)}" + "".join(f"\n  {s}" for s in below))
    print(f"\n({time.perf_counter() - started:.0f} s)")


class _Serial:
    """``Pool``'s ``imap`` in this process (``--jobs 1``)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    @staticmethod
    def imap(function, items):
        return map(function, items)


if __name__ == "__main__":
    main()
