"""Time ``deniable plan`` (whole processes, cold and warm) and the builder's live planning panel.

    python scripts/bench_plan.py                 # 5 fresh processes per figure, medians
    python scripts/bench_plan.py --runs 3 --json # the figures as JSON
    python scripts/bench_plan.py --baseline DIR  # beside another checkout's package (see below)

**Commands.** Each documented ``deniable plan`` example runs as a whole process (``python -c``
calling the click group, as ``bench_offline.py`` does), ``--runs`` times *cold* — every run with its
own empty cache directory (``XDG_CACHE_HOME``), so every exact number is computed — and
``--runs`` times *warm*, with a cache directory a run before filled.  The floors are ``python -c
"import click"``, the imports a computed plan cannot do without (``python -c "import click,
numpy, scipy.special"``) and ``deniable plan --help``.  Each figure is the median wall time and, beside
it, the median CPU time (user + system) of the process, which a busy machine moves less.

``--baseline DIR`` runs every command a second time with ``PYTHONPATH=DIR``, where DIR holds
another revision's ``deniable`` package (e.g. ``git archive`` of it, laid out as the package
map in ``pyproject.toml`` says), taking turns with this checkout run by run.

**The computation alone.** A fresh process with an empty cache directory imports the planner
(and scipy.special), then times (CPU) ``plan_rows(2, 0.03, [0.5, 1, 2, 4])``, what ``deniable plan --k 2 --margin 0.03``
computes: the command's time less its imports.

**The builder's panel.** A fresh process makes the app on a temporary database, logs in with the
Flask test client, imports the planner as a server that has shown the builder page would have,
and requests ``/dashboard/plan.json`` as a researcher typing would: each question once with an
empty cache directory (*first*: computed, wall and CPU time), then again (*again*: in memory), then
in a second fresh process with the cache filled (*new process*: from disk).  Times are per request,
in ms.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
AWAY = tempfile.gettempdir()  # the processes run here: from the checkout, `python -c` would import ./deniable first
DENIABLE = [PYTHON, "-c", "from deniable.server.cli import cli; cli(prog_name='deniable')"]
COMMANDS = [  # the examples of docs/cli.md, docs/getting-started.md, the README and `deniable plan --help`
    "plan --k 2 --margin 0.03",
    "plan --k 2 --margin 0.05 --epsilon 1",
    "plan --k 4 --margin 0.05 --epsilon 1 --epsilon 3 --confidence 0.9",
    "plan --numeric 0 40 --margin 2 --epsilon 1",
    "plan --multi 4 --margin 0.05 --epsilon 1 --epsilon 2",
    "plan --list 3 --margin 0.1 --epsilon 1 --epsilon 2",
]
PANEL = [  # what the builder asks while a researcher types: ε, then the target n, then the margin
    "k=2&epsilon=1&target=1000&margin=0.05",
    "k=2&epsilon=0.5&target=1000&margin=0.05",
    "k=2&epsilon=2&target=1000&margin=0.05",
    "k=2&epsilon=2&target=2500&margin=0.05",
    "k=2&epsilon=2&target=2500&margin=0.03",
    "k=4&epsilon=1&target=1000&margin=0.05",
    "k=3&target=1000&margin=0.05",
    "type=multi&k=4&epsilon=2&target=800&margin=0.05",
    "type=numeric&min=0&max=40&epsilon=1&target=800&margin=0.05",
    "type=list&items=3&epsilon=1&target=800&margin=0.05",
]
PANEL_CODE = r"""
import json, re, sys, tempfile, time
from pathlib import Path
from deniable.server.web.app import create_app
from deniable.server.store.accounts import set_researcher
from deniable.server.store.db import connect
import deniable.server.survey.planning, deniable.server.survey.type_planning  # as after the builder page
queries, repeat = json.loads(sys.argv[1]), int(sys.argv[2])
with tempfile.TemporaryDirectory() as tmp:
    path = str(Path(tmp) / "bench.db")
    app = create_app({"DATABASE": path, "SECRET_KEY": "bench", "TESTING": True})
    db = connect(path)
    set_researcher(db, "bench@example.org", "benchmark password")
    db.conn.close()
    client = app.test_client()
    page = client.get("/auth/login").get_data(as_text=True)
    token = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page).group(1)
    client.post("/auth/login", data={"csrf_token": token, "email": "bench@example.org",
                                     "password": "benchmark password"})
    out = []
    for query in queries:
        times = []
        for _ in range(repeat):
            start, cpu = time.perf_counter(), time.process_time()
            response = client.get("/dashboard/plan.json?" + query)
            times.append(((time.perf_counter() - start) * 1000, (time.process_time() - cpu) * 1000))
            assert response.status_code == 200, (query, response.get_data(as_text=True))
        out.append(times)
print(json.dumps(out))
"""


def whole_process(args: list[str], cache: str, pythonpath: str | None = None) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one process."""
    env = {**os.environ, "XDG_CACHE_HOME": cache}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=AWAY)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _medians(times: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(t[0] for t in times), statistics.median(t[1] for t in times)


def command_rows(runs: int, baseline: str | None) -> list[dict]:
    rows = []
    sides = {"": None, **({"baseline ": baseline} if baseline else {})}
    with tempfile.TemporaryDirectory() as scratch:
        floors = [('python -c "import click"', [PYTHON, "-c", "import click"]),
                  ('python -c "import click, numpy, scipy.special"', [PYTHON, "-c", "import click, numpy, scipy.special"]),
                  ("deniable plan --help", [*DENIABLE, "plan", "--help"])]
        for label, args in floors:
            rows.append({"command": label, "cold": _medians([whole_process(args, scratch) for _ in range(runs)]),
                         "warm": None})
        for command in COMMANDS:
            args = [*DENIABLE, *command.split()]
            cold = {side: [] for side in sides}
            warm = {side: [] for side in sides}
            filled = {side: tempfile.mkdtemp(dir=scratch) for side in sides}
            for side, path in sides.items():
                whole_process(args, filled[side], path)
            for _ in range(runs):  # the two sides take turns, so that the machine's drift hits both
                for side, path in sides.items():
                    cold[side].append(whole_process(args, tempfile.mkdtemp(dir=scratch), path))
                    warm[side].append(whole_process(args, filled[side], path))
            for side in sides:
                rows.append({"command": f"{side}deniable {command}", "cold": _medians(cold[side]),
                             "warm": _medians(warm[side])})
    return rows


COMPUTE_CODE = r"""
import time
import deniable.estimators.exact  # scipy.special: an import, not the computation
from deniable.server.survey.planning import plan_rows
start = time.process_time()
plan_rows(2, 0.03, [0.5, 1.0, 2.0, 4.0])
print(time.process_time() - start)
"""


def compute_rows(runs: int, baseline: str | None) -> list[dict]:
    """CPU seconds of the computation of ``deniable plan --k 2 --margin 0.03`` alone (imports
    excluded), each run a fresh process with an empty cache directory; the sides take turns."""
    sides = {"": None, **({"baseline ": baseline} if baseline else {})}
    times = {side: [] for side in sides}
    with tempfile.TemporaryDirectory() as scratch:
        for _ in range(runs):
            for side, path in sides.items():
                env = {**os.environ, "XDG_CACHE_HOME": tempfile.mkdtemp(dir=scratch),
                       **({"PYTHONPATH": path} if path else {})}
                done = subprocess.run([PYTHON, "-c", COMPUTE_CODE], check=True, capture_output=True, text=True,
                                      env=env, cwd=AWAY)
                times[side].append(float(done.stdout.strip().splitlines()[-1]))
    return [{"command": f"{side}plan_rows(2, 0.03, [0.5, 1, 2, 4]) in-process", "cpu": statistics.median(t)}
            for side, t in times.items()]


def panel(cache: str, repeat: int, pythonpath: str | None = None) -> list[list[list[float]]]:
    """Per query, ``repeat`` requests, each ``[wall ms, CPU ms]`` (the process is single-threaded)."""
    env = {**os.environ, "XDG_CACHE_HOME": cache, **({"PYTHONPATH": pythonpath} if pythonpath else {})}
    done = subprocess.run([PYTHON, "-c", PANEL_CODE, json.dumps(PANEL), str(repeat)], check=True,
                          capture_output=True, text=True, env=env, cwd=AWAY)
    return json.loads(done.stdout.strip().splitlines()[-1])


def panel_rows(baseline: str | None) -> list[dict]:
    with tempfile.TemporaryDirectory() as cache:
        first = panel(cache, 3)  # first request computes; the next two answer from memory
        later = panel(cache, 1)  # a new process: from the disk cache
    with tempfile.TemporaryDirectory() as cache:
        base = panel(cache, 1, baseline) if baseline else [[[math.nan, math.nan]]] * len(PANEL)
    return [{"query": query, "first": times[0][0], "first_cpu": times[0][1],
             "again": statistics.median(t[0] for t in times[1:]), "new_process": again[0][0],
             "baseline_first": b[0][0], "baseline_first_cpu": b[0][1]}
            for query, times, again, b in zip(PANEL, first, later, base)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh processes per figure (default 5)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.add_argument("--baseline", metavar="DIR", help="also run each command with PYTHONPATH=DIR (another revision)")
    args = parser.parse_args()
    commands = command_rows(args.runs, args.baseline)
    compute = compute_rows(args.runs, args.baseline)
    panels = panel_rows(args.baseline)
    if args.json:
        print(json.dumps({"commands": commands, "compute": compute, "panel": panels}))
        return 0
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"deniable plan benchmark — {os.cpu_count()} CPUs, Python {platform.python_version()}, load average "
          f"{load:.1f}; whole processes, median of {args.runs}; cold: an empty cache directory each run")
    width = max(len(r["command"]) for r in commands)
    print(f"{'command'.ljust(width)}  cold s (CPU)   warm s (CPU)")
    for r in commands:
        warm = "" if r["warm"] is None else f"{r['warm'][0]:6.2f} ({r['warm'][1]:.2f})"
        print(f"{r['command'].ljust(width)}  {r['cold'][0]:6.2f} ({r['cold'][1]:.2f})  {warm}")
    print()
    print("the computation alone (CPU s, imports excluded, median of fresh processes with an empty cache)")
    for r in compute:
        print(f"{r['command'].ljust(width)}  {r['cpu']:6.2f}")
    print()
    print("builder panel, GET /dashboard/plan.json?… (ms per request; first: computed, with its CPU ms; again: "
          "same process; new process: from the disk cache)")
    width = max(len(r["query"]) for r in panels)
    print(f"{'query'.ljust(width)}   first (CPU)    again  new process" + ("   baseline first (CPU)" if args.baseline else ""))
    for r in panels:
        print(f"{r['query'].ljust(width)}  {r['first']:6.1f} ({r['first_cpu']:6.1f})  {r['again']:6.1f}  "
              f"{r['new_process']:11.1f}" + (f"   {r['baseline_first']:8.1f} ({r['baseline_first_cpu']:6.1f})"
                                             if args.baseline else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
