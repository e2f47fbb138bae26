"""``deniable estimate`` against the floor: a bare pyarrow read and count of the same file.

    python scripts/bench_offline.py                 # 10,000,000 rows, 5 alternating pairs
    python scripts/bench_offline.py --rows 1000000 --pairs 3
    python scripts/bench_offline.py --rows 1000000 --pairs 3 --json   # the figures as JSON

Simulates the example survey's responses (``deniable simulate``, seeded) into a CSV and a Parquet
file in a temporary folder, then times whole processes, alternating A and B in each pair so that
drift in the machine's speed hits both: (A) ``deniable estimate`` on the file, and (B) the floor,
a Python process that only reads the same file with pyarrow and counts each column's values
(``value_counts``).  Also times ``deniable estimate --counts`` on the same data aggregated
(as DuckDB's ``GROUP BY ALL`` would), and ``deniable --help``, ``deniable plan --help`` and
``deniable plan --k 2 --margin 0.03`` (start-up, then start-up and the exact planner's work),
each against a bare ``python -c "import click"``.  Prints a table of medians and the median of the A/B ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
DENIABLE = [PYTHON, "-c", "from deniable.server.cli import cli; cli(prog_name='deniable')"]
FLOOR = """
import sys
import pyarrow.csv as pcsv, pyarrow.parquet as pq
path = sys.argv[1]
if path.endswith(".parquet"):
    table = pq.read_table(path)
else:  # skip the design line that deniable's CSVs begin with
    with open(path, "rb") as fh:
        skip = 1 if fh.read(1) == b"#" else 0
    table = pcsv.read_csv(path, read_options=pcsv.ReadOptions(skip_rows=skip))
for column in table.columns:
    column.value_counts()
"""


def whole_process(args: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def pairs(a: list[str], b: list[str], n: int) -> tuple[float, float, float]:
    """Medians of A and B over ``n`` alternating runs (after one warm-up of each), and of A/B."""
    whole_process(a), whole_process(b)
    times_a, times_b, ratios = [], [], []
    for _ in range(n):
        ta, tb = whole_process(a), whole_process(b)
        times_a.append(ta), times_b.append(tb), ratios.append(ta / tb)
    return statistics.median(times_a), statistics.median(times_b), statistics.median(ratios)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--json", action="store_true",
                        help="print the figures as one JSON object (at the end) instead of the table")
    args = parser.parse_args()
    survey, truth = ROOT / "examples" / "survey.json", ROOT / "examples" / "truth.json"
    with tempfile.TemporaryDirectory() as tmp:
        csv, parquet, counts = Path(tmp) / "r.csv", Path(tmp) / "r.parquet", Path(tmp) / "counts.parquet"
        for out in (csv, parquet):
            subprocess.run([*DENIABLE, "simulate", str(survey), "--n", str(args.rows), "--truth", str(truth),
                            "--seed", "1", "-o", str(out)], check=True, stderr=subprocess.DEVNULL)
        subprocess.run([PYTHON, "-c", (
            "import sys; sys.path.insert(0, %r)\n"
            "from deniable.server.survey import files\n"
            "from deniable.server.survey.definition import load_definition\n"
            "import pyarrow as pa, pyarrow.parquet as pq\n"
            "s = load_definition(%r); d = files.aggregate(files.read_responses(%r, s))\n"
            "cols = {q.id: [q.options[i] if i >= 0 else None for i in d.columns[q.id]] for q in s.questions}\n"
            "pq.write_table(pa.table({**cols, 'count': d.weights}), %r)") % (str(ROOT), str(survey), str(parquet),
                                                                               str(counts))], check=True)
        rows = [
            (f"estimate, CSV ({csv.stat().st_size / 1e6:,.0f} MB)", [*DENIABLE, "estimate", str(survey), str(csv)],
             [PYTHON, "-c", FLOOR, str(csv)], "pyarrow read + value_counts"),
            (f"estimate, Parquet ({parquet.stat().st_size / 1e6:,.1f} MB)",
             [*DENIABLE, "estimate", str(survey), str(parquet)], [PYTHON, "-c", FLOOR, str(parquet)],
             "pyarrow read + value_counts"),
            ("estimate --counts (aggregated)", [*DENIABLE, "estimate", str(survey), "--counts", str(counts)],
             [PYTHON, "-c", FLOOR, str(counts)], "pyarrow read + value_counts"),
            ("deniable --help", [*DENIABLE, "--help"], [PYTHON, "-c", "import click"], 'python -c "import click"'),
            ("deniable plan --help", [*DENIABLE, "plan", "--help"], [PYTHON, "-c", "import click"],
             'python -c "import click"'),
            ("deniable plan --k 2 --margin 0.03", [*DENIABLE, "plan", "--k", "2", "--margin", "0.03"],
             [PYTHON, "-c", "import click"], 'python -c "import click"'),
        ]
        if args.json:
            results = []
            for label, a, b, floor in rows:
                ta, tb, ratio = pairs(a, b, args.pairs)
                results.append({"command": label, "a_s": ta, "b_s": tb, "ratio": ratio, "floor": floor})
            print(json.dumps({"rows": args.rows, "pairs": args.pairs, "cpus": os.cpu_count(),
                              "python": platform.python_version(), "results": results}, indent=1))
            return 0
        print(f"deniable offline benchmark — {args.rows:,} responses, {os.cpu_count()} CPUs, Python "
              f"{platform.python_version()}; whole processes, {args.pairs} alternating pairs after a warm-up, medians")
        print(f"{'command (A)':<34} {'A s':>7} {'B s':>7} {'A/B':>6}  floor (B)")
        for label, a, b, floor in rows:
            ta, tb, ratio = pairs(a, b, args.pairs)
            print(f"{label:<34} {ta:>7.2f} {tb:>7.2f} {ratio:>6.2f}  {floor}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
