"""Submissions per second under ``wrk``: the load generator written in C, so the figure is the server's.

    python scripts/bench_wrk.py                           # 4 workers; wrk -t2 -c32 -d10s
    python scripts/bench_wrk.py --workers 3 --connections 24 --seconds 5

Starts ``deniable serve`` on a fresh SQLite file with the demo survey open (as
``scripts/bench_load.py`` does, the rate limiter on but raised), warms every worker up, then runs
``wrk --latency`` with a Lua script that POSTs randomized reports (made with the real Python
randomizer, a different body per request, cycling through ``--bodies`` of them) to the JSON API.
Prints wrk's requests per second and latency percentiles, the server's CPU time per submission,
and checks the database: rows = 2xx answers (plus at most one in flight per connection when wrk
stopped counting), integrity ok.  Needs ``wrk`` (``apt-get install wrk``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_load import make_reports  # noqa: E402
from loadgen import ServerProcess, drive, run_deniable  # noqa: E402

from deniable.server.store.demo import DEMO_DEFINITION  # noqa: E402
from deniable.server.survey.definition import dumps_definition, parse_definition  # noqa: E402

LUA = """
local bodies = {%s}
local i = 0
request = function()
  i = i %% #bodies + 1
  return wrk.format("POST", "%s", {["Content-Type"] = "application/json"}, bodies[i])
end
done = function(summary, latency, requests)
  io.write(string.format("non2xx %%d\\n", summary.errors.status))
end
"""


def lua_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--bodies", type=int, default=5000)
    args = parser.parse_args()
    if not shutil.which("wrk"):
        print("wrk is not installed (apt-get install wrk)", file=sys.stderr)
        return 2
    survey = parse_definition(DEMO_DEFINITION)
    bodies = [json.dumps({"reports": r}, separators=(",", ":")) for r in make_reports(survey, args.bodies, 7)]
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "load.db"
        definition = Path(tmp) / "survey.json"
        definition.write_text(dumps_definition(survey))
        run_deniable("import", str(definition), "--db", str(db), "--open")
        path = f"/api/v1/surveys/{survey.slug}/responses"
        script = Path(tmp) / "post.lua"
        script.write_text(LUA % (",".join(lua_string(b) for b in bodies), path))
        server = ServerProcess(db, workers=args.workers, log=Path(tmp) / "server.log")
        server.start(f"/api/v1/surveys/{survey.slug}")
        try:
            warm = iter(make_reports(survey, 400, 8))
            warm_tally, _ = drive(server.port, survey.slug, lambda: next(warm, None), clients=8, seconds=10)
            cpu_before = server.cpu_seconds()
            done = subprocess.run(["wrk", f"-t{args.threads}", f"-c{args.connections}", f"-d{args.seconds}s",
                                   "--latency", "-s", str(script), server.base_url + path],
                                  capture_output=True, text=True, timeout=args.seconds + 60)
            cpu_after = server.cpu_seconds()
        finally:
            server.stop()
        conn = sqlite3.connect(db)
        try:
            rows = conn.execute("SELECT count(*) FROM responses").fetchone()[0]
            integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
        finally:
            conn.close()
    out = done.stdout
    total = int(re.search(r"(\d+) requests in", out).group(1))
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    non2xx = int(re.search(r"non2xx (\d+)", out).group(1))
    percent = dict(re.findall(r"^\s+(50|75|90|99)%\s+(\S+)", out, re.M))
    stored = rows - len(warm_tally.acked)
    cpu_us = 1e6 * (cpu_after - cpu_before) / max(1, total - non2xx) if cpu_before is not None else float("nan")
    print(f"deniable under wrk — {os.cpu_count()} CPUs (load average {load_before:.1f} before), "
          f"{args.workers} gevent workers; wrk -t{args.threads} -c{args.connections} -d{args.seconds}s, "
          f"POST {path}, {args.bodies:,} distinct bodies")
    print(f"{'requests':>9} {'per second':>11} {'p50':>8} {'p90':>8} {'p99':>8} {'non-2xx':>8} "
          f"{'stored':>8} {'server CPU µs/submission':>25}")
    print(f"{total:>9,} {rate:>11,.0f} {percent.get('50', '?'):>8} {percent.get('90', '?'):>8} "
          f"{percent.get('99', '?'):>8} {non2xx:>8} {stored:>8,} {cpu_us:>25,.0f}")
    # wrk counts the answers that came within its time; the requests still in flight then are stored
    # too, at most one per connection
    ok = total - non2xx <= stored <= total - non2xx + args.connections and integrity == "ok" and non2xx == 0
    print("database check: " + ("ok — rows = 2xx answers (and those in flight when wrk stopped), integrity ok"
                                if ok else f"FAILED: {stored} stored, {total - non2xx} answered 2xx, integrity {integrity}"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
