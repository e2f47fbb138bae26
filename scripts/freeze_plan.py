"""Freeze the exact planner's answers on a grid, as the golden file its tests compare with.

    python scripts/freeze_plan.py                       # writes tests/data/plan_golden.json
    python scripts/freeze_plan.py --check               # recomputes and compares, writes nothing

The grid: :func:`deniable.estimators.plan` for k = 2, 3, 5, ε = none (asked directly), 0.5, 1, 2,
4 and margins 0.1, 0.05, 0.03 at 95 % confidence, a few cases at 90 % and 99 %, the ε per option
that ``deniable plan --multi`` plans for, and :func:`~deniable.estimators.worst_case` at n on both
sides of the planner's switch from the full π grid (``FULL_GRID_N``) up to the builder's largest
exact n.  Every number is written in full (JSON's shortest round-tripping repr), so a comparison can
be exact.  Run with the planner the answers are to be frozen from (the file says which numpy and
scipy computed them); the cache directory is a fresh temporary one, so nothing cached is read.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "data" / "plan_golden.json"

PLANS = [  # (epsilon, k, margin, confidence)
    *[(epsilon, k, margin, 0.95) for k in (2, 3, 5) for epsilon in (None, 0.5, 1.0, 2.0, 4.0)
      for margin in (0.1, 0.05, 0.03)],
    (1.0, 2, 0.05, 0.9), (1.0, 2, 0.05, 0.99), (1.0, 4, 0.05, 0.9), (3.0, 4, 0.05, 0.9), (None, 4, 0.05, 0.9),
    (0.25, 2, 0.05, 0.95), (0.5, 2, 0.05, 0.95),  # deniable plan --multi 4 --epsilon 1 / 2: ε/4 per option
]
WORST = [  # (epsilon, k, n)
    (epsilon, k, n) for epsilon, k in ((None, 2), (1.0, 2), (0.5, 3), (2.0, 5))
    for n in (1, 2, 5, 50, 299, 300, 301, 1000, 4999, 20_000, 50_000)
]


def freeze() -> dict:
    """Compute every answer of the grid with the planner imported now."""
    import numpy
    import scipy

    from deniable.estimators import plan, worst_case

    plans = []
    for epsilon, k, margin, confidence in PLANS:
        r = plan(epsilon, k, margin, confidence=confidence)
        plans.append({"epsilon": epsilon, "k": k, "margin": margin, "confidence": confidence,
                      "n": r.n, "half_width": r.half_width, "worst_pi": r.worst_pi,
                      "half_width_one_fewer": r.half_width_one_fewer})
    worst = []
    for epsilon, k, n in WORST:
        w = worst_case(epsilon, k, n)
        worst.append({"epsilon": epsilon, "k": k, "n": n, "half_width": w.half_width, "worst_pi": w.worst_pi})
    return {"command": "python scripts/freeze_plan.py",
            "computed_with": {"python": platform.python_version(), "numpy": numpy.__version__,
                              "scipy": scipy.__version__},
            "plans": plans, "worst_case": worst}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the golden file instead of writing it")
    parser.add_argument("-o", "--output", type=Path, default=GOLDEN, help=f"where to write (default {GOLDEN})")
    args = parser.parse_args()
    os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="deniable-freeze-")  # nothing cached is read
    sys.path.insert(0, str(ROOT))
    start = time.perf_counter()
    data = freeze()
    elapsed = time.perf_counter() - start
    if args.check:
        golden = json.loads(GOLDEN.read_text())
        differ = [(a, b) for part in ("plans", "worst_case") for a, b in zip(golden[part], data[part]) if a != b]
        for a, b in differ:
            print(f"differs: frozen {a}\n         now    {b}")
        print(f"{len(data['plans'])} plans, {len(data['worst_case'])} worst cases in {elapsed:.1f} s: "
              f"{len(differ)} differ")
        return 1 if differ else 0
    args.output.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {args.output} ({len(data['plans'])} plans, {len(data['worst_case'])} worst cases) in {elapsed:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
