"""Submissions per second under ``wrk`` against the two floors of the same stack, in one run.

    python scripts/bench_wrk.py                           # 4 workers; wrk -t2 -c32 -d10s; 2 rounds, 3 servers
    python scripts/bench_wrk.py --no-floors --rounds 1    # deniable alone
    python scripts/bench_wrk.py --workers 3 --connections 24 --seconds 5
    python scripts/bench_wrk.py --seconds 5 --fixed-body  # every request the same body
    python scripts/bench_wrk.py --seconds 5 --survey examples/habits.json

wrk is the load generator written in C, so the figure is the server's.  Three servers take turns
in each of ``--rounds`` rounds (default 2), each on a fresh SQLite file with the same worker count,
and each server's best round (the highest rate) is reported, with deniable's ratio to each floor:

* the **bare handler** (``scripts/floor_server.py bare``): the same gunicorn/gevent stack reading
  the body, parsing the JSON and answering 201, storing nothing;
* the **plain insert** (``scripts/floor_server.py insert``): the same, plus one SQLite row per
  request (WAL, ``synchronous = NORMAL``, ``BEGIN IMMEDIATE``, one transaction each);
* ``deniable serve`` with the demo survey (or ``--survey FILE``) open (as
  ``scripts/bench_load.py`` does, the rate limiter on but raised).

Every server is warmed up, then ``wrk --latency`` runs with a Lua script whose ``request`` function builds a new body for every
request: each question asked gets a report drawn at random from all its possible reports (the
Python side lists them, ``scripts/loadgen.py``), an optional question is left out one time in
five, and the survey's display logic is followed, so no request is refused.  ``--fixed-body``
sends one body, drawn once, with every request instead (one answer pattern).

Prints wrk's requests per second and latency percentiles and the server's CPU time per
submission, then checks conservation: the Lua ``response`` function counts the 201 answers, and
the stored rows must be at least those and at most those plus the requests still in flight when
wrk stopped (sent by ``request`` but never answered); the answer patterns and the per-question
counts must hold exactly the stored rows, pattern by pattern; integrity ok.  Exit status 1 if a
check fails or any answer of any server was not 201.  ``--json``: the figures as JSON
(``scripts/bench_compare.py --only wrk``).  Needs ``wrk`` (``apt-get install wrk``).
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


def milliseconds(text: str | None) -> float:
    """wrk's ``12.34ms``, ``1.02s`` or ``870.00us`` in milliseconds."""
    if text is None:
        return float("nan")
    match = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text)
    if match is None:
        return float("nan")
    return float(match[1]) * {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 6e4}[match[2]]


class FloorProcess(ServerProcess):
    """``scripts/floor_server.py KIND`` (the bare handler or the plain insert) in its own process group."""

    def __init__(self, kind: str, db: Path, *, workers: int, log: Path | None = None, worker: str = "stock"):
        super().__init__(db, workers=workers, log=log)
        self.kind, self.worker = kind, worker

    @property
    def name(self) -> str:
        return f"floor_server.py {self.kind}"

    def command(self) -> list[str]:
        return [sys.executable, str(Path(__file__).resolve().parent / "floor_server.py"), self.kind,
                "--port", str(self.port), "--workers", str(self.workers), "--db", str(self.db),
                "--worker", self.worker]

SERVERS = {
    "bare": "the bare handler (same stack: read the body, parse the JSON, answer 201)",
    "insert": "the plain insert (same stack + one SQLite row per request: WAL, synchronous NORMAL, "
              "BEGIN IMMEDIATE, one transaction each)",
    "deniable": "deniable serve (limiter on, out of reach)",
}


def scrub_passes(server) -> int | None:
    """How many scrubs the server's file has had (deniable's ``scrub`` table), None for a floor."""
    if isinstance(server, FloorProcess):
        return None
    import sqlite3

    conn = sqlite3.connect(f"file:{server.db}?mode=ro", uri=True, timeout=5)
    try:
        return conn.execute("SELECT passes FROM scrub").fetchone()[0]
    finally:
        conn.close()


def run_wrk(server, path: str, script: Path, args) -> tuple[dict, str]:
    """Warm ``server`` up, run wrk against it; wrk's figures and its output."""
    warm = iter([args.fixed] * 400 if args.fixed is not None else make_reports(args.survey, 400, args.seed + 1))
    warm_tally, _ = drive(server.port, args.survey.slug, lambda: next(warm, None), clients=8, seconds=10)
    scrubs_before = scrub_passes(server)
    cpu_before = server.cpu_seconds()
    done = subprocess.run(["wrk", f"-t{args.threads}", f"-c{args.connections}", f"-d{args.seconds}s",
                           "--latency", "-s", str(script), server.base_url + path],
                          capture_output=True, text=True, timeout=args.seconds + 60)
    cpu_after = server.cpu_seconds()
    scrubs_after = scrub_passes(server)
    out = done.stdout
    if done.returncode != 0 or "created" not in out:
        raise RuntimeError(f"wrk failed (status {done.returncode}):\n{done.stderr[-2000:]}{out[-2000:]}")
    sent, created, other = figure(r"^sent (\d+)", out), figure(r"^created (\d+)", out), figure(r"^other (\d+)", out)
    percent = dict(re.findall(r"^\s+(50|75|90|99)%\s+(\S+)", out, re.M))
    return {
        "per_second": figure(r"Requests/sec:\s+([\d.]+)", out, float),
        "p50": percent.get("50", "?"), "p90": percent.get("90", "?"), "p99": percent.get("99", "?"),
        "p99_ms": milliseconds(percent.get("99")),
        "sent": sent, "created": created, "other": other,
        "non2xx": figure(r"^non2xx (\d+)", out), "socket_errors": figure(r"^socket errors (\d+)", out),
        "warm_acked": len(warm_tally.acked), "warm_unanswered": len(warm_tally.unanswered),
        "warm_errors": warm_tally.errors,
        "scrubs_per_second": (float("nan") if scrubs_before is None or scrubs_after is None
                              else (scrubs_after - scrubs_before) / args.seconds),
        "cpu_us": (1e6 * (cpu_after - cpu_before) / max(1, created) if cpu_before is not None
                   else float("nan")),
    }, out


def one_round(kind: str, tmp: Path, round_no: int, script: Path, path: str, args) -> dict:
    """One wrk run against a fresh server of ``kind`` on a fresh file; its figures (and, for deniable,
    the conservation check)."""
    folder = tmp / f"{kind}-{round_no}"
    folder.mkdir()
    db = folder / "load.db"
    if kind == "deniable":
        definition = folder / "survey.json"
        definition.write_text(dumps_definition(args.survey))
        run_deniable("import", str(definition), "--db", str(db), "--open")
        server = ServerProcess(db, workers=args.workers, log=folder / "server.log")
        server.start(f"/api/v1/surveys/{args.survey.slug}")
    else:
        server = FloorProcess(kind, db, workers=args.workers, log=folder / "server.log", worker=args.floor_worker)
        server.start("/")
    try:
        result, _ = run_wrk(server, path, script, args)
    finally:
        server.stop()
    result["kind"] = kind
    result["failed"] = bool(result["other"] or result["non2xx"] or result["socket_errors"] or result["warm_errors"])
    if kind == "deniable":
        in_flight = result["sent"] - result["created"] - result["other"]
        kept = check_store(db, args.survey.slug, None, acknowledged=result["warm_acked"] + result["created"],
                           unanswered=result["warm_unanswered"] + in_flight)
        result.update(in_flight=in_flight, kept=kept)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=2,
                        help="rounds, the servers taking turns in each; each server's best round is reported "
                             "(default 2)")
    parser.add_argument("--no-floors", dest="floors", action="store_false",
                        help="measure deniable alone, without the bare handler and the plain insert")
    parser.add_argument("--floor-worker", choices=("stock", "deniable"), default="stock",
                        help="the floors' gunicorn worker: gevent's as it comes (default), or deniable serve's own "
                             "(the body read before the app, the read deadline)")
    parser.add_argument("--survey", metavar="FILE", help="a survey definition to load instead of the demo survey")
    parser.add_argument("--fixed-body", action="store_true",
                        help="send one body, drawn once, with every request (one answer pattern) instead of "
                             "a random answer per question per request")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON (scripts/bench_compare.py)")
    args = parser.parse_args()
    if not shutil.which("wrk"):
        print("wrk is not installed (apt-get install wrk)", file=sys.stderr)
        return 2
    survey = args.survey = load_survey(args.survey)
    menus = answer_menus(survey, np.random.default_rng(args.seed))
    args.fixed = make_reports(survey, 1, args.seed, fixed=True)[0] if args.fixed_body else None
    fixed_body = None if args.fixed is None else json.dumps({"reports": args.fixed}, separators=(",", ":"))
    kinds = ["bare", "insert", "deniable"] if args.floors else ["deniable"]
    load_before = os.getloadavg()[0]
    path = f"/api/v1/surveys/{survey.slug}/responses"
    rounds: dict[str, list[dict]] = {kind: [] for kind in kinds}
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "post.lua"
        script.write_text(lua_script(menus, path, args.seed, fixed_body))
        for round_no in range(args.rounds):
            for kind in kinds:  # taking turns: drift of the machine's speed hits every server
                try:
                    rounds[kind].append(one_round(kind, Path(tmp), round_no, script, path, args))
                except RuntimeError as exc:
                    print(f"{kind}, round {round_no + 1}: {exc}", file=sys.stderr)
                    return 1
    load_after = os.getloadavg()[0]
    best = {kind: max(results, key=lambda r: r["per_second"]) for kind, results in rounds.items()}
    failed = [f"{kind} round {i + 1}: {r['other']} answers not 2xx ({r['non2xx']} non-2xx), {r['socket_errors']} "
              f"socket errors, {r['warm_errors']} errors while warming up"
              for kind, results in rounds.items() for i, r in enumerate(results) if r["failed"]]
    kept_all = [r["kept"] for r in rounds["deniable"]]
    lost = [k for k in kept_all if not k.ok]
    mine = best["deniable"]
    ratios = {kind: mine["per_second"] / best[kind]["per_second"] for kind in kinds if kind != "deniable"}
    if args.json:
        kept = mine["kept"]
        print(json.dumps({
            "per_second": mine["per_second"], "p99_ms": mine["p99_ms"],
            "server_cpu_us_per_submission": mine["cpu_us"],
            **{f"{kind}_per_second": best[kind]["per_second"] for kind in kinds if kind != "deniable"},
            **{f"{kind}_p99_ms": best[kind]["p99_ms"] for kind in kinds if kind != "deniable"},
            **{f"ratio_to_{kind}": ratio for kind, ratio in ratios.items()},
            "scrubs_per_second": mine["scrubs_per_second"],
            "distinct_patterns": kept.distinct_patterns, "acknowledged": kept.acknowledged, "lost": kept.lost,
            "conservation_ok": not lost, "problems": [p for k in lost for p in k.problems][:10],
            "errors": len(failed), "failures": failed,
        }))
        return 0 if not (failed or lost) else 1
    bodies = ("one fixed body (--fixed-body)" if args.fixed is not None
              else "a random answer per question per request (Lua), optional questions left out one time in five")
    print(f"under wrk — {os.cpu_count()} CPUs (load average {load_before:.1f} before, {load_after:.1f} after), "
          f"{args.workers} gevent workers each (the floors': {args.floor_worker}); wrk -t{args.threads} -c{args.connections} -d{args.seconds}s, "
          f"POST {path}\nsurvey {survey.slug!r} ({len(survey.questions)} questions); bodies: {bodies}; "
          f"best of {args.rounds} round{'s' * (args.rounds > 1)}, the servers taking turns")
    print(f"{'server':<9} {'round':>6} {'requests':>9} {'per second':>11} {'p50':>8} {'p90':>8} {'p99':>8} "
          f"{'not 201':>8} {'server CPU µs/request':>22}")
    for kind in kinds:
        for i, r in enumerate(rounds[kind]):
            mark = "*" if r is best[kind] else " "
            print(f"{kind:<9} {i + 1:>5}{mark} {r['created'] + r['other']:>9,} {r['per_second']:>11,.0f} "
                  f"{r['p50']:>8} {r['p90']:>8} {r['p99']:>8} {r['other']:>8} {r['cpu_us']:>22,.0f}")
    for kind, ratio in ratios.items():
        print(f"deniable / {SERVERS[kind]}: {ratio:.2f}×")
    print("deniable's scrubs per second under wrk (the scrub table's passes): "
          + ", ".join(f"{r['scrubs_per_second']:.1f}" for r in rounds["deniable"]))
    for i, r in enumerate(rounds["deniable"]):
        kept = r["kept"]
        print(f"\ndeniable, round {i + 1}{' (the best)' if r is mine else ''}")
        print(f"{'requests':>9} {'per second':>11} {'p50':>8} {'p90':>8} {'p99':>8} {'not 201':>8} "
              f"{'server CPU µs/submission':>25}")
        print(f"{r['created'] + r['other']:>9,} {r['per_second']:>11,.0f} {r['p50']:>8} {r['p90']:>8} "
              f"{r['p99']:>8} {r['other']:>8} {r['cpu_us']:>25,.0f}")
        print(f"{'acknowledged (201, with warm-up)':>33} {'in flight at the end':>21} {'stored':>8} "
              f"{'in patterns':>12} {'distinct patterns':>18} {'lost':>6}")
        print(f"{kept.acknowledged:>33,} {r['in_flight']:>21,} {kept.rows:>8,} {kept.in_patterns:>12,} "
              f"{kept.distinct_patterns:>18,} {kept.lost:>6,}")
        print(kept.line())
        for problem in kept.problems[:10]:
            print("  " + problem)
    for line in failed:
        print("FAILED: " + line)
    return 0 if not (failed or lost) else 1


if __name__ == "__main__":
    sys.exit(main())
