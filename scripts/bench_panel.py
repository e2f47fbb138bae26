"""The builder's planning panel, ``/dashboard/plan.json``, in a warm process: p50 and p95 per request (issue 40).

    python scripts/bench_panel.py              # 40 new panels, then the same 40 again
    python scripts/bench_panel.py --n 80 --decided

One process makes the app on a temporary database, logs in with the Flask test client, imports
the planner as a server that has shown the builder page would have, and answers one panel first
(not timed: the process is then warm).  Then it asks for ``--n`` *new* panels — each a choice
question with an ε, a target and a margin not asked before (ε from 0.5 to 4 in steps, k = 2 to 5,
targets of 500 to 5,000, margins 0.03 to 0.1), so that each is computed, with an empty cache
directory — and then the same panels *again* (from memory).  Wall times per request, in ms, and
the CPU time of the thread that answered (``time.thread_time``), which a busy machine moves less
than the wall time; the load average is printed (the machine is shared).

The panel plans by the decided search (``plans(..., decided=True)``, issue 40); ``--decided``, which
made it do so before it did by default, is accepted and changes nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

CODE = r"""
import json, re, statistics, sys, tempfile, time
from pathlib import Path
from deniable.server.web.app import create_app
from deniable.server.store.accounts import set_researcher
from deniable.server.store.db import connect
import deniable.server.survey.planning, deniable.server.survey.type_planning
queries = json.loads(sys.argv[1])
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
    assert client.get("/dashboard/plan.json?k=2&epsilon=1.5&target=1000&margin=0.05").status_code == 200  # warm
    out = {}
    for phase in ("new", "again"):
        times, cpu = [], []
        for query in queries:
            start, start_cpu = time.perf_counter(), time.thread_time()
            response = client.get("/dashboard/plan.json?" + query)
            times.append((time.perf_counter() - start) * 1000)
            cpu.append((time.thread_time() - start_cpu) * 1000)
            assert response.status_code == 200, (query, response.get_data(as_text=True))
        out[phase], out[phase + " cpu"] = times, cpu
print(json.dumps(out))
"""


def queries(n: int) -> list[str]:
    out = []
    for i in range(n):
        epsilon = 0.5 + 3.5 * ((i * 7) % n) / max(1, n - 1)
        k = 2 + i % 4
        target = 500 + (i * 450) % 4500
        margin = (0.03, 0.04, 0.05, 0.07, 0.1)[i % 5]
        out.append(f"k={k}&epsilon={epsilon:.3f}&target={target}&margin={margin}")
    return out


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=40, help="new panels asked for (default 40)")
    parser.add_argument("--decided", action="store_true",
                        help="no effect: the panel plans by the decided search (kept for old command lines)")
    args = parser.parse_args()
    env = {**os.environ, "XDG_CACHE_HOME": tempfile.mkdtemp(prefix="deniable-panel-")}
    done = subprocess.run([sys.executable, "-c", CODE, json.dumps(queries(args.n))],
                          check=True, capture_output=True, text=True, env=env, cwd=tempfile.gettempdir())
    times = json.loads(done.stdout.strip().splitlines()[-1])
    load = os.getloadavg()
    print(f"/dashboard/plan.json in a warm process, {args.n} panels, the decided planner; "
          f"load average {load[0]:.1f} on {os.cpu_count()} CPUs")
    print("| requests           | p50 ms | p95 ms | max ms | CPU p50 ms | CPU p95 ms |")
    print("| ------------------ | -----: | -----: | -----: | ---------: | ---------: |")
    for phase in ("new", "again"):
        values, cpu = times[phase], times[phase + " cpu"]
        print(f"| {phase + ' (computed)' if phase == 'new' else phase + ' (in memory)':<18} | "
              f"{percentile(values, 50):6.1f} | {percentile(values, 95):6.1f} | {max(values):6.1f} | "
              f"{percentile(cpu, 50):10.1f} | {percentile(cpu, 95):10.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
