"""Time the consistent estimate of a randomized-response design at the edges (docs/benchmarks.md).

Each case is one question's report counts under one design: the cases of issue 36 where the
unbiased estimate sits on or beyond the edge of the simplex (forced response with 10 "Yes" of 50,
Warner's design at π = 0), near-singular designs (Warner's at p = ½ + 1e-9, the crosswise model at
½ + 1e-6, a custom 3 × 3 matrix 1e-6 from singular), and designs with three answers whose maximum
lies on a face of the simplex.  For each it prints the median of ``--repeat`` runs of
:func:`deniable.estimators.designs.fit_consistent` (the consistent estimate alone) and of
:func:`~deniable.estimators.designs.estimate_design` (the whole result: estimates, intervals, notes),
the Newton steps, whether the fit converged, and the consistent estimate.

``--rev REV`` times ``estimators/designs.py`` as it is at git revision REV instead (its
``maximum_likelihood`` and ``estimate_design``; one run each, since the old EM took seconds): the
figures before the change.

    python scripts/bench_designs.py                 # this checkout
    python scripts/bench_designs.py --rev 28fbd89   # the EM before the change (about a minute)
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT.parent))

from deniable.client import designs as d  # noqa: E402

NEAR_SINGULAR = [[0.334, 0.333, 0.333], [0.333, 0.334, 0.333], [0.333, 0.333, 0.334]]
CASES = [  # (name, design, report counts)
    ("forced(0.7, [.2, .1]), 10 Yes of 50", d.forced(0.7, [0.2, 0.1]), [10, 40]),
    ("warner(0.55), n = 1,000, π̂ = 0", d.warner(0.55), [450, 550]),
    ("warner(0.55), n = 1,000, π̂ < 0", d.warner(0.55), [431, 569]),
    ("warner(0.5 + 1e-9), n = 1,000", d.warner(0.5 + 1e-9), [532, 468]),
    ("crosswise(0.5 + 1e-6), n = 1,000", d.crosswise(0.5 + 1e-6), [520, 480]),
    ("forced(0.7, [.1]*3), π̂₃ = 0", d.forced(0.7, [0.1, 0.1, 0.1]), [40, 50, 10]),
    ("forced(0.7, [.1]*3), π̂₃ < 0", d.forced(0.7, [0.1, 0.1, 0.1]), [45, 50, 5]),
    ("forced(0.62, [.23, .15, 0]), no 3rd report", d.forced(0.62, [0.23, 0.15, 0]), [30, 20, 0]),
    ("custom graded 3 × 3, π̂ outside", d.custom([[0.7, 0.2, 0.1], [0.2, 0.6, 0.2], [0.1, 0.2, 0.7]]), [5, 60, 35]),
    ("custom 3 × 3 near-singular", d.custom(NEAR_SINGULAR), [350, 330, 320]),
]


def module_at(rev: str):
    """``estimators/designs.py`` at git revision ``rev``, imported inside the installed package."""
    source = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:estimators/designs.py"], check=True,
                            capture_output=True, text=True).stdout
    spec = importlib.util.spec_from_loader("deniable.estimators._designs_at_rev", loader=None)
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "deniable.estimators"
    sys.modules[spec.name] = module  # dataclasses look their module up there
    exec(compile(source, f"{rev}:estimators/designs.py", "exec"), module.__dict__)
    return module


def timed(function, repeat: int) -> tuple[float, object]:
    """Median wall time in ms of ``repeat`` calls, and the last value."""
    times, value = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        value = function()
        times.append(1000 * (time.perf_counter() - started))
    return statistics.median(times), value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=21)
    parser.add_argument("--rev", help="time estimators/designs.py at this git revision instead")
    args = parser.parse_args()
    print(f"{'case':<44} {'fit ms':>9} {'estimate ms':>12} {'steps':>6} {'converged':>9}  consistent")
    if args.rev:
        old = module_at(args.rev)
        for name, design, counts in CASES:
            c = np.asarray(counts, dtype=np.int64)
            fit_ms, value = timed(lambda: old.maximum_likelihood(c, design.matrix), 1)
            est_ms, _ = timed(lambda: old.estimate_design(c, design), 1)
            shown = ", ".join(f"{v:.3g}" for v in value)
            print(f"{name:<44} {fit_ms:>9.1f} {est_ms:>12.1f} {'':>6} {'':>9}  [{shown}]")
        return
    from deniable.estimators.designs import estimate_design, fit_consistent

    for name, design, counts in CASES:
        c = np.asarray(counts, dtype=np.int64)
        fit_ms, fit = timed(lambda: fit_consistent(c, design.matrix), args.repeat)
        est_ms, _ = timed(lambda: estimate_design(c, design), args.repeat)
        shown = ", ".join(f"{v:.3g}" for v in fit.estimate)
        print(f"{name:<44} {fit_ms:>9.3f} {est_ms:>12.3f} {fit.iterations:>6} {str(fit.converged):>9}  [{shown}]")


if __name__ == "__main__":
    main()
