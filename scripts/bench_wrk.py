"""Submissions per second under ``wrk``: the load generator written in C, so the figure is the server's.

    python scripts/bench_wrk.py                           # 4 workers; wrk -t2 -c32 -d10s
    python scripts/bench_wrk.py --workers 3 --connections 24 --seconds 5
    python scripts/bench_wrk.py --seconds 5 --fixed-body  # every request the same body
    python scripts/bench_wrk.py --seconds 5 --survey examples/habits.json

Starts ``deniable serve`` on a fresh SQLite file with the demo survey (or ``--survey FILE``) open
(as ``scripts/bench_load.py`` does, the rate limiter on but raised), warms every worker up, then
runs ``wrk --latency`` with a Lua script whose ``request`` function builds a new body for every
request: each question asked gets a report drawn at random from all its possible reports (the
Python side lists them, ``scripts/loadgen.py``), an optional question is left out one time in
five, and the survey's display logic is followed, so no request is refused.  ``--fixed-body``
sends one body, drawn once, with every request instead (one answer pattern).

Prints wrk's requests per second and latency percentiles and the server's CPU time per
submission, then checks conservation: the Lua ``response`` function counts the 201 answers, and
the stored rows must be at least those and at most those plus the requests still in flight when
wrk stopped (sent by ``request`` but never answered); the answer patterns and the per-question
counts must hold exactly the stored rows, pattern by pattern; integrity ok.  Exit status 1 if a
check fails or any answer was not 201.  Needs ``wrk`` (``apt-get install wrk``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_load import load_survey  # noqa: E402
from loadgen import ServerProcess, answer_menus, check_store, drive, make_reports, run_deniable  # noqa: E402

from deniable.server.survey.definition import dumps_definition  # noqa: E402

LUA = """-- written by scripts/bench_wrk.py: a random answer per question per request
local path = %(path)s
local headers = {["Content-Type"] = "application/json"}
-- per question: its reports as JSON members ("qid":report), the chance it is left out when asked,
-- and, with display logic, the question whose answer decides and which of its reports show it
local questions = {
%(questions)s
}
local fixed = %(fixed)s  -- nil, or the one body every request sends (--fixed-body)
local threads = {}

function setup(thread)
  table.insert(threads, thread)
  thread:set("id", #threads)
end

function init(args)
  math.randomseed(%(seed)d + id)
  sent, created, other = 0, 0, 0
  if fixed then fixed = wrk.format("POST", path, headers, fixed) end
end

function request()
  sent = sent + 1
  if fixed then return fixed end
  local parts, picked = {}, {}
  for i, q in ipairs(questions) do
    local asked = q.source == nil or (picked[q.source] ~= nil and q.shown[picked[q.source]] == true)
    if asked and (q.skip == 0 or math.random() >= q.skip) then
      local r = math.random(#q.reports)
      picked[i] = r
      parts[#parts + 1] = q.reports[r]
    end
  end
  return wrk.format("POST", path, headers, '{"reports":{' .. table.concat(parts, ",") .. '}}')
end

function response(status, headers, body)
  if status == 201 then created = created + 1 else other = other + 1 end
end

function done(summary, latency, requests)
  local s, c, o = 0, 0, 0
  for _, t in ipairs(threads) do
    s, c, o = s + t:get("sent"), c + t:get("created"), o + t:get("other")
  end
  io.write(string.format("sent %%d\\ncreated %%d\\nother %%d\\nnon2xx %%d\\n", s, c, o, summary.errors.status))
  io.write(string.format("socket errors %%d\\n", summary.errors.connect + summary.errors.read
                         + summary.errors.write + summary.errors.timeout))
end
"""


def lua_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def lua_script(menus, path: str, seed: int, fixed_body: str | None) -> str:
    """The Lua script that draws each request's body from ``menus`` (or sends ``fixed_body``)."""
    rows = []
    for menu in menus:
        members = ",".join(lua_string(json.dumps(menu.qid) + ":" + json.dumps(report, separators=(",", ":")))
                           for report in menu.reports)
        shown = ", ".join(f"[{i + 1}] = true" for i in sorted(menu.shown_by))  # (Lua counts from 1)
        decided = "" if menu.source is None else f"source = {menu.source + 1}, shown = {{{shown}}}, "
        rows.append(f"  {{skip = {menu.skip!r}, {decided}reports = {{{members}}}}},")
    return LUA % {"path": lua_string(path), "questions": "\n".join(rows), "seed": seed,
                  "fixed": "nil" if fixed_body is None else lua_string(fixed_body)}


def figure(pattern: str, text: str, cast=int):
    match = re.search(pattern, text, re.M)
    if match is None:
        raise SystemExit(f"wrk's output has no {pattern!r}:\n{text[-2000:]}")
    return cast(match.group(1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--survey", metavar="FILE", help="a survey definition to load instead of the demo survey")
    parser.add_argument("--fixed-body", action="store_true",
                        help="send one body, drawn once, with every request (one answer pattern) instead of "
                             "a random answer per question per request")
    args = parser.parse_args()
    if not shutil.which("wrk"):
        print("wrk is not installed (apt-get install wrk)", file=sys.stderr)
        return 2
    survey = load_survey(args.survey)
    menus = answer_menus(survey, np.random.default_rng(args.seed))
    fixed = make_reports(survey, 1, args.seed, fixed=True)[0] if args.fixed_body else None
    fixed_body = None if fixed is None else json.dumps({"reports": fixed}, separators=(",", ":"))
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "load.db"
        definition = Path(tmp) / "survey.json"
        definition.write_text(dumps_definition(survey))
        run_deniable("import", str(definition), "--db", str(db), "--open")
        path = f"/api/v1/surveys/{survey.slug}/responses"
        script = Path(tmp) / "post.lua"
        script.write_text(lua_script(menus, path, args.seed, fixed_body))
        server = ServerProcess(db, workers=args.workers, log=Path(tmp) / "server.log")
        server.start(f"/api/v1/surveys/{survey.slug}")
        try:
            warm = iter([fixed] * 400 if fixed is not None else make_reports(survey, 400, args.seed + 1))
            warm_tally, _ = drive(server.port, survey.slug, lambda: next(warm, None), clients=8, seconds=10)
            cpu_before = server.cpu_seconds()
            done = subprocess.run(["wrk", f"-t{args.threads}", f"-c{args.connections}", f"-d{args.seconds}s",
                                   "--latency", "-s", str(script), server.base_url + path],
                                  capture_output=True, text=True, timeout=args.seconds + 60)
            cpu_after = server.cpu_seconds()
        finally:
            server.stop()
        out = done.stdout
        if done.returncode != 0 or "created" not in out:
            print(f"wrk failed (status {done.returncode}):\n{done.stderr[-2000:]}{out[-2000:]}", file=sys.stderr)
            return 1
        sent, created, other = figure(r"^sent (\d+)", out), figure(r"^created (\d+)", out), figure(r"^other (\d+)", out)
        in_flight = sent - created - other
        kept = check_store(db, survey.slug, None, acknowledged=len(warm_tally.acked) + created,
                           unanswered=len(warm_tally.unanswered) + in_flight)
    rate = figure(r"Requests/sec:\s+([\d.]+)", out, float)
    non2xx, socket_errors = figure(r"^non2xx (\d+)", out), figure(r"^socket errors (\d+)", out)
    percent = dict(re.findall(r"^\s+(50|75|90|99)%\s+(\S+)", out, re.M))
    cpu_us = 1e6 * (cpu_after - cpu_before) / max(1, created) if cpu_before is not None else float("nan")
    bodies = ("one fixed body (--fixed-body)" if fixed is not None
              else "a random answer per question per request (Lua), optional questions left out one time in five")
    print(f"deniable under wrk — {os.cpu_count()} CPUs (load average {load_before:.1f} before), "
          f"{args.workers} gevent workers; wrk -t{args.threads} -c{args.connections} -d{args.seconds}s, "
          f"POST {path}\nsurvey {survey.slug!r} ({len(survey.questions)} questions); bodies: {bodies}")
    print(f"{'requests':>9} {'per second':>11} {'p50':>8} {'p90':>8} {'p99':>8} {'not 201':>8} "
          f"{'server CPU µs/submission':>25}")
    print(f"{created + other:>9,} {rate:>11,.0f} {percent.get('50', '?'):>8} {percent.get('90', '?'):>8} "
          f"{percent.get('99', '?'):>8} {other:>8} {cpu_us:>25,.0f}")
    print(f"{'acknowledged (201, with warm-up)':>33} {'in flight at the end':>21} {'stored':>8} {'in patterns':>12} "
          f"{'distinct patterns':>18} {'lost':>6}")
    print(f"{kept.acknowledged:>33,} {in_flight:>21,} {kept.rows:>8,} {kept.in_patterns:>12,} "
          f"{kept.distinct_patterns:>18,} {kept.lost:>6,}")
    print(kept.line())
    for problem in kept.problems[:10]:
        print("  " + problem)
    if other or non2xx or socket_errors or warm_tally.errors:
        print(f"FAILED: {other} answers not 201 ({non2xx} of them ≥ 400), {socket_errors} socket errors, "
              f"{warm_tally.errors} errors while warming up")
    return 0 if kept.ok and not (other or non2xx or socket_errors or warm_tally.errors) else 1


if __name__ == "__main__":
    sys.exit(main())
