"""Time the responses exports (CSV, Parquet, SPSS, Stata) from the answer patterns against the row scan; print a table.

    python scripts/bench_export.py                       # 10^5 and 10^6 responses
    python scripts/bench_export.py --n 100000 --repeat 5

Creates a database in a temporary folder with the dashboard benchmark's open three-question survey
(``scripts/bench_dashboard.py``), stores ``--n`` randomized responses through
``deniable.server.store.responses.insert_many`` and times, per format, the whole export as the
dashboard and ``deniable export`` make it (``Export.responses`` after ``load_export``: the
snapshot read, the rows, the file's bytes):

- **row scan**: ``load_export(db, slug, rows=True)``, every response row read (the export before
  issue 29, and still the path of a survey the patterns do not cover);
- **patterns**: ``load_export(db, slug)``, the answer patterns repeated and shuffled;
- **pyreadstat** (SPSS and Stata only): ``pyreadstat.write_sav`` / ``write_dta`` alone, writing the
  very data frame, labels and value labels the export writes (built beforehand, not timed) — the
  floor no export of that format can go under.

Each figure is the median of ``--repeat`` runs; for SPSS and Stata the export and pyreadstat run in
alternating pairs and ``ratio`` is the median of the pairs' ratios (patterns / pyreadstat).

    python scripts/bench_export.py --cli --n 1000000 --repeat 5

    python scripts/bench_export.py --cli --n 1000000 --survey examples/everything.json   # the row scan

``--cli`` times the whole command instead, as a user runs it (issue 40): ``deniable export bench
--db FILE -o DIR`` (CSV), ``--format parquet``, ``--format parquet --spss`` and ``--format parquet
--stata`` (the .sav and .dta figures are then the command's time less the Parquet one), each a fresh
process, taking turns with ``deniable export --help`` run by run; each figure is the minimum of
``--repeat`` runs, and ``work`` the command's time less ``--help``'s (the command's start-up).
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from deniable.client.randomizer import randomize  # noqa: E402
from deniable.server.store.db import init_db  # noqa: E402
from deniable.server.store.exports import FORMATS, load_export  # noqa: E402
from deniable.server.store.responses import insert_many  # noqa: E402
from deniable.server.store.surveys import insert_survey  # noqa: E402
from deniable.server.survey.codebook import design_line  # noqa: E402
from deniable.server.survey.definition import design_fingerprint, parse_definition  # noqa: E402
from deniable.server.survey.statfiles import _note_lines, stat_frame  # noqa: E402

DEFINITION = {
    "slug": "bench", "title": "Benchmark", "description": "",
    "questions": [
        {"id": "drugs", "text": "Used drugs this year?", "options": ["Yes", "No"], "epsilon": 1.0},
        {"id": "cheat", "text": "How often cheated?", "options": ["Never", "Once", "Sometimes", "Often"],
         "epsilon": 2.0},
        {"id": "age", "text": "Age group", "options": ["<30", "30-49", "50+"]},
    ],
}


def median_s(run, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def pyreadstat_write(export, fmt: str, path: str):
    """pyreadstat's own write of the data frame the export writes (frame built here, not timed)."""
    import pyreadstat

    survey = export.stored.survey
    frame, labels, value_labels, missing, measures = stat_frame(export.dataset, fmt, export.text_versions)
    if fmt == "sav":
        note = _note_lines(design_line(survey))
        return lambda: pyreadstat.write_sav(frame, path, column_labels=labels, variable_value_labels=value_labels,
                                            file_label=survey.title[:64], note=note,
                                            missing_ranges=missing or None, variable_measure=measures)
    label = f"{survey.slug} design {design_fingerprint(survey)}"[:80]
    return lambda: pyreadstat.write_dta(frame, path, column_labels=labels, variable_value_labels=value_labels,
                                        file_label=label, missing_user_values=missing or None)


def bench(n: int, repeat: int, tmp: str, no_scan: bool = False) -> list[tuple]:
    path = str(Path(tmp) / f"bench-{n}.db")
    db = init_db(path)
    stored = insert_survey(db, parse_definition(DEFINITION), status="open", target_n=n)
    rng = np.random.default_rng(2024)
    truth = {"drugs": rng.choice(2, n, p=[0.2, 0.8]), "cheat": rng.choice(4, n, p=[0.6, 0.2, 0.15, 0.05])}
    columns = {qid: randomize(values, stored.survey.question(qid).k, stored.survey.question(qid).epsilon, rng)
               for qid, values in truth.items()}
    columns["age"] = rng.choice(3, n)
    insert_many(db, stored, columns)
    rows = []
    for fmt in FORMATS:
        scan = math.nan if no_scan else median_s(lambda fmt=fmt: load_export(db, "bench", rows=True).responses(fmt),
                                                 repeat)
        export = load_export(db, "bench")
        assert export.source == "patterns" and export.dataset.n_rows == n
        size = len(export.responses(fmt))
        if fmt not in ("sav", "dta"):
            patterns = median_s(lambda fmt=fmt: load_export(db, "bench").responses(fmt), repeat)
            rows.append((n, fmt, scan, patterns, None, None, size))
            continue
        # Alternating pairs (the export, then pyreadstat alone on a frame made just before, untimed),
        # so that a busy machine slows both alike; the ratio is the median of the pairs' ratios.
        pairs = []
        out = str(Path(tmp) / f"floor.{fmt}")
        for _ in range(repeat):
            patterns = median_s(lambda fmt=fmt: load_export(db, "bench").responses(fmt), 1)
            floor = median_s(pyreadstat_write(load_export(db, "bench"), fmt, out), 1)
            pairs.append((patterns, floor))
        os.unlink(out)
        rows.append((n, fmt, scan, statistics.median(p for p, _ in pairs), statistics.median(f for _, f in pairs),
                     statistics.median(p / f for p, f in pairs), size))
    db.conn.close()
    return rows


def store(n: int, tmp: str) -> str:
    """A database in ``tmp`` with the benchmark survey and ``n`` randomized responses; its path."""
    path = str(Path(tmp) / f"bench-{n}.db")
    db = init_db(path)
    stored = insert_survey(db, parse_definition(DEFINITION), status="open", target_n=n)
    rng = np.random.default_rng(2024)
    truth = {"drugs": rng.choice(2, n, p=[0.2, 0.8]), "cheat": rng.choice(4, n, p=[0.6, 0.2, 0.15, 0.05])}
    columns = {qid: randomize(values, stored.survey.question(qid).k, stored.survey.question(qid).epsilon, rng)
               for qid, values in truth.items()}
    columns["age"] = rng.choice(3, n)
    insert_many(db, stored, columns)
    db.conn.close()
    return path


CLI_RUNS = [  # (label, arguments after `deniable export bench --db FILE -o DIR`)
    ("csv", []), ("parquet", ["--format", "parquet"]), ("parquet + sav", ["--format", "parquet", "--spss"]),
    ("parquet + dta", ["--format", "parquet", "--stata"]),
]


def store_survey(definition: str, n: int, tmp: str) -> tuple[str, str, str]:
    """A database in ``tmp`` with the survey ``definition`` (a file) open and ``n`` simulated responses
    (``deniable import --open``, ``deniable simulate --db``, uniform answers); its path, slug and the
    export's source (``patterns`` or ``rows``)."""
    import subprocess

    path = str(Path(tmp) / f"survey-{n}.db")
    deniable = [sys.executable, "-c", "from deniable.server.cli import cli; cli(prog_name='deniable')"]
    subprocess.run([*deniable, "import", definition, "--db", path, "--open"], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([*deniable, "simulate", definition, "--n", str(n), "--seed", "1", "--db", path], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    db = init_db(path)
    slug = db.execute("SELECT slug FROM surveys").fetchone()[0]
    source = load_export(db, slug).source
    db.conn.close()
    return path, slug, source


def cli_bench(n: int, repeat: int, tmp: str, survey: str | None = None) -> None:
    """Whole ``deniable export`` processes against ``deniable export --help``, taking turns; minima."""
    import subprocess

    if survey is None:
        (db, slug, source) = (store(n, tmp), "bench", "answer patterns")
    else:
        db, slug, source = store_survey(survey, n, tmp)
        source = f"{Path(survey).name}, {'the row scan' if source == 'rows' else 'answer patterns'}"
    out = str(Path(tmp) / "out")
    command = [sys.executable, "-c", "from deniable.server.cli import cli; cli(prog_name='deniable')", "export"]
    env = {**os.environ, "XDG_CACHE_HOME": tempfile.mkdtemp(dir=tmp)}

    def timed(args):
        start = time.perf_counter()
        subprocess.run(command + args, check=True, stdout=subprocess.DEVNULL, env=env, cwd=tmp)
        return time.perf_counter() - start

    help_times, times = [], {label: [] for label, _ in CLI_RUNS}
    for _ in range(repeat):
        help_times.append(timed(["--help"]))
        for label, args in CLI_RUNS:
            times[label].append(timed([slug, "--db", db, "-o", out, *args]))
    start_up = min(help_times)
    load = os.getloadavg()[0]
    print(f"deniable export of {n:,} responses ({source}), whole processes, minimum of {repeat}; "
          f"load average {load:.1f} on {os.cpu_count()} CPUs")
    print(f"{'command':<34} {'s':>7} {'work s':>7}")
    print(f"{'deniable export --help':<34} {start_up:>7.3f}")
    for label, args in CLI_RUNS:
        best = min(times[label])
        print(f"{'deniable export ' + ' '.join(args) if args else 'deniable export (csv)':<34} {best:>7.3f} "
              f"{best - start_up:>7.3f}")
    parquet = min(times["parquet"])
    for label, fmt in (("parquet + sav", "sav"), ("parquet + dta", "dta")):
        print(f"{'  the .' + fmt + ' alone (less parquet)':<34} {'':>7} {min(times[label]) - parquet:>7.3f}")
    print(f"sizes: " + ", ".join(f"{p.name} {p.stat().st_size:,}" for p in sorted(Path(out).iterdir())))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, action="append", help="responses to store (default: 10^5 and 10^6)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure, the median kept (default 3)")
    parser.add_argument("--no-scan", action="store_true", help="leave out the row scan (its column: nan)")
    parser.add_argument("--cli", action="store_true", help="time whole `deniable export` processes (see above)")
    parser.add_argument("--survey", metavar="FILE",
                        help="with --cli: this survey instead, --n simulated responses (e.g. examples/everything.json: the row scan)")
    args = parser.parse_args()
    sizes = args.n or [100_000, 1_000_000]
    if args.cli:
        with tempfile.TemporaryDirectory() as tmp:
            for size_n in sizes:
                cli_bench(size_n, args.repeat, tmp, args.survey)
        return
    print(f"deniable responses exports: row scan vs answer patterns, median of {args.repeat} runs")
    print(f"{'responses':>10} {'format':<8} {'row scan s':>11} {'patterns s':>11} {'speed-up':>9} "
          f"{'pyreadstat s':>13} {'ratio':>6} {'bytes':>12}")
    with tempfile.TemporaryDirectory() as tmp:
        for size_n in sizes:
            for n, fmt, scan, patterns, floor, ratio, size in bench(size_n, args.repeat, tmp, args.no_scan):
                floor_cells = f"{floor:>13.3f} {ratio:>5.2f}×" if floor else f"{'':>13} {'':>6}"
                print(f"{n:>10,} {fmt:<8} {scan:>11.3f} {patterns:>11.3f} {scan / patterns:>8.1f}× "
                      f"{floor_cells} {size:>12,}", flush=True)


if __name__ == "__main__":
    main()
