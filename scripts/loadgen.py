"""Drive a real ``deniable serve`` through the JSON API: the load benchmarks' and crash test's engine.

:class:`ServerProcess` runs ``deniable serve`` in its own process group (so the gunicorn master
and all its workers can be SIGKILLed together) and waits until it answers.  :func:`drive`
submits responses from many concurrent keep-alive connections on one asyncio loop, with raw
sockets (an HTTP client library would cost the server more CPU than it leaves us), and records
each acknowledged (201) submission with its latency.  Loopback only.

The bodies (:func:`answer_menus`, :func:`random_reports`): every question a respondent is asked
gets a report drawn at random from all its possible reports (its type's codes, each as
``report_of`` writes it; a uniform sample of 4,096 of them when it has more), an optional question
is left out one time in five, and a question whose ``show_if`` is false for the answers drawn
before it is not answered, as the server requires.  Every protected report of a uniformly
distributed true answer under k-ary randomized response is uniform too, so for a choice question
these are the reports the randomizer would send.  :func:`check_store` then checks conservation:
every acknowledged submission is one stored row and one count in the answer patterns.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np


# All load comes from one loopback address, which the per-address submission limit would stop
# at once.  The limiter stays on (its cost is part of what is measured) with a limit no run reaches.
LOAD_ENV = {"DENIABLE_RATELIMIT_SUBMIT": "100000000 per minute"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def deniable_command() -> list[str]:
    """The installed ``deniable`` beside this interpreter (a venv), else on PATH."""
    beside = Path(sys.executable).with_name("deniable")
    if beside.exists():
        return [str(beside)]
    found = shutil.which("deniable")
    if found is None:
        raise SystemExit("the deniable command is not installed (pip install -e .)")
    return [found]


def run_deniable(*args: str, env: dict | None = None) -> str:
    result = subprocess.run([*deniable_command(), *args], capture_output=True, text=True,
                            env=env, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"deniable {' '.join(args)} failed: {result.stderr.strip()}")
    return result.stdout


class ServerProcess:
    """``deniable serve --db DB --port PORT --workers W`` in its own process group."""

    def __init__(self, db: Path, *, workers: int = 2, port: int | None = None,
                 env: dict | None = None, log: Path | None = None):
        self.db, self.workers = Path(db), workers
        self.port = port or free_port()
        self.env = {**os.environ, **LOAD_ENV, **(env or {})}
        self.log = log
        self.proc: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    name = "deniable serve"

    def command(self) -> list[str]:
        return [*deniable_command(), "serve", "--db", str(self.db), "--port", str(self.port),
                "--workers", str(self.workers)]

    def start(self, ready_path: str, timeout: float = 30.0) -> None:
        out = open(self.log, "ab") if self.log else subprocess.DEVNULL
        try:
            self.proc = subprocess.Popen(self.command(), stdout=out, stderr=out, env=self.env,
                                         start_new_session=True)
        finally:
            if self.log:
                out.close()  # the child holds its own copy
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with status {self.proc.returncode}")
            try:
                with urllib.request.urlopen(self.base_url + ready_path, timeout=1) as response:
                    if response.status == 200:
                        return
            except OSError:
                time.sleep(0.05)
        self.kill()
        raise RuntimeError(f"{self.name} did not answer {ready_path} within {timeout} s")

    def cpu_seconds(self) -> float | None:
        """CPU time (user + system) used so far by the live processes of the server's group.

        Read from ``/proc`` (Linux); None elsewhere.  Less sensitive than throughput to other
        work on the machine, so it says what a submission costs the server.
        """
        if self.proc is None or not os.path.isdir("/proc"):
            return None
        ticks = 0
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == self.proc.pid:  # process group id
                ticks += int(fields[11]) + int(fields[12])  # utime + stime
        return ticks / os.sysconf("SC_CLK_TCK")

    def kill(self) -> None:
        """SIGKILL the master and every worker at once (no graceful shutdown)."""
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def stop(self) -> None:
        """Graceful stop: SIGTERM to the master, which lets the workers finish."""
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()


@dataclass
class Tally:
    """What the clients saw: acknowledged submissions (with their bodies), latencies, failures."""

    acked: list = field(default_factory=list)       # the report dicts the server acknowledged (201)
    latencies: list = field(default_factory=list)   # seconds, acknowledged requests only
    statuses: dict = field(default_factory=dict)    # any other status → count
    failures: int = 0                               # connection errors (no answer)
    unanswered: list = field(default_factory=list)  # reports sent without an answer: stored or not

    @property
    def errors(self) -> int:
        return self.failures + sum(self.statuses.values())


def _request(host: str, path: str, body: bytes) -> bytes:
    return (f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


async def _read_response(reader: asyncio.StreamReader) -> tuple[int, bool]:
    """Read one response; return (status, whether the server keeps the connection open)."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    length, keep = 0, lines[0].startswith("HTTP/1.1")
    for line in lines[1:]:
        name, _, value = line.partition(":")
        name = name.strip().lower()
        if name == "content-length":
            length = int(value)
        elif name == "connection":
            keep = value.strip().lower() == "keep-alive"
    if length:
        await reader.readexactly(length)
    return status, keep


async def _client(port: int, path: str, next_report, tally: Tally, stop_at: float) -> None:
    host = f"127.0.0.1:{port}"
    reader = writer = None
    while time.monotonic() < stop_at:
        report = next_report()
        if report is None:
            break
        body = json.dumps({"reports": report}, separators=(",", ":")).encode()
        try:
            if writer is None:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
            start = time.perf_counter()
            writer.write(_request(host, path, body))
            status, keep = await _read_response(reader)
        except (OSError, asyncio.IncompleteReadError, ValueError, IndexError):
            tally.failures += 1
            tally.unanswered.append(report)
            if writer is not None:
                writer.close()
            reader = writer = None
            await asyncio.sleep(0.01)
            continue
        if status == 201:  # the API's acknowledgement: stored and committed
            tally.acked.append(report)
            tally.latencies.append(time.perf_counter() - start)
        else:
            tally.statuses[status] = tally.statuses.get(status, 0) + 1
        if not keep:
            writer.close()
            reader = writer = None
    if writer is not None:
        writer.close()


def drive(port: int, slug: str, next_report, *, clients: int, seconds: float) -> tuple[Tally, float]:
    """Submit ``next_report()`` bodies from ``clients`` connections for at most ``seconds``.

    Stops early when ``next_report`` returns None (the request budget).  Returns the tally and
    the elapsed wall time.
    """
    tally = Tally()
    path = f"/api/v1/surveys/{slug}/responses"

    async def main():
        stop_at = time.monotonic() + seconds
        await asyncio.gather(*(_client(port, path, next_report, tally, stop_at) for _ in range(clients)))

    start = time.perf_counter()
    asyncio.run(main())
    return tally, time.perf_counter() - start


# ---------------------------------------------------------------------------------------------
# bodies

SKIP_OPTIONAL = 0.2  # the chance that a respondent leaves out an optional question they are asked
MENU_MAX = 4096      # a question with more possible reports draws from a uniform sample of this many


@dataclass(frozen=True)
class Menu:
    """The reports one question's answers are drawn from (uniformly), and when it is asked."""

    qid: str
    codes: np.ndarray            # the codes of ``reports``, ascending
    reports: list                # the JSON reports, as the server's ``report_of`` writes them
    skip: float                  # the chance it is left out when asked (0: required)
    source: int | None = None    # the index of the question whose answer decides whether it is asked
    shown_by: frozenset = frozenset()  # the indices of the source's reports that show it


def answer_menus(survey, rng: np.random.Generator, limit: int = MENU_MAX) -> list[Menu]:
    """Every question's possible reports, and its display condition, in the survey's order.

    Through each question type's own ``n_cells``, ``invalid_codes``, ``report_of`` and ``answer_in``
    (a revision from before the question types has choices only: a report is the option index).
    """
    menus: list[Menu] = []
    index: dict[str, int] = {}
    for q in survey.questions:
        qtype = getattr(q, "qtype", None)
        n = qtype.n_cells(q) if qtype is not None else q.k
        codes = np.arange(n) if n <= limit else np.sort(rng.choice(n, size=limit, replace=False))
        if qtype is not None:
            codes = codes[~np.asarray(qtype.invalid_codes(q, codes), dtype=bool)]
        reports = [qtype.report_of(q, int(c)) if qtype is not None else int(c) for c in codes]
        source, shown_by = None, frozenset()
        show_if = getattr(q, "show_if", None)
        if show_if is not None:
            from deniable.server.survey import logic

            decider = survey.question(show_if.question)
            options = logic.option_indices(survey, q)
            source = index[decider.id]
            shown_by = frozenset(i for i, code in enumerate(menus[source].codes)
                                 if decider.qtype.answer_in(decider, int(code), options))
        index[q.id] = len(menus)
        menus.append(Menu(q.id, codes, reports, 0.0 if q.required else SKIP_OPTIONAL, source, shown_by))
    return menus


def draw(menus: list[Menu], count: int, rng: np.random.Generator) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """``count`` respondents: per question the index of the report drawn, and whether it is sent."""
    picks, answered = [], []
    for menu in menus:
        pick = rng.integers(0, len(menu.reports), count)
        asked = np.ones(count, dtype=bool)
        if menu.source is not None:  # asked only if the deciding question was answered with one of its options
            asked = answered[menu.source] & np.isin(picks[menu.source], sorted(menu.shown_by))
        picks.append(pick)
        answered.append(asked & (rng.random(count) >= menu.skip))
    return picks, answered


def random_reports(menus: list[Menu], count: int, rng: np.random.Generator) -> list[dict]:
    """``count`` submissions' ``reports``, each answer drawn at random (see the module's notes)."""
    picks, answered = draw(menus, count, rng)
    columns = [(menu.qid, menu.reports, pick.tolist(), sent.tolist())
               for menu, pick, sent in zip(menus, picks, answered)]
    return [{qid: reports[pick[i]] for qid, reports, pick, sent in columns if sent[i]} for i in range(count)]


def fixed_reports(menus: list[Menu], count: int, rng: np.random.Generator) -> list[dict]:
    """``count`` times the same ``reports`` (one answer pattern: the benchmarks' old kind of body)."""
    return random_reports(menus, 1, rng) * count


def make_reports(survey, count: int, seed: int, *, fixed: bool = False) -> list[dict]:
    """``count`` submissions' ``reports`` for ``survey``: diverse, or with ``fixed`` all the same."""
    rng = np.random.default_rng(seed)
    return (fixed_reports if fixed else random_reports)(answer_menus(survey, rng), count, rng)


def distinct_bodies(reports: list[dict]) -> int:
    return len({json.dumps(r, sort_keys=True) for r in reports})


# ---------------------------------------------------------------------------------------------
# conservation


@dataclass
class Conservation:
    """What the store holds against what was acknowledged."""

    acknowledged: int           # 201 answers
    unanswered: int             # requests sent that got no answer (each stored or not)
    rows: int = 0               # responses stored
    in_patterns: int = 0        # the answer patterns' total
    distinct_patterns: int = 0  # distinct answer patterns stored (days merged)
    problems: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def lost(self) -> int:
        """Acknowledged responses the rows or the answer patterns lack (0 when nothing was lost)."""
        return max(0, self.acknowledged - min(self.rows, self.in_patterns))

    def line(self) -> str:
        held = (f"{self.acknowledged:,} acknowledged (201), {self.rows:,} stored, {self.in_patterns:,} in the answer "
                f"patterns ({self.distinct_patterns:,} distinct)")
        if self.unanswered:
            held += f", {self.unanswered:,} sent without an answer"
        if self.ok:
            return "conservation: ok — " + held
        return (f"CONSERVATION FAILED — {held}; {self.lost:,} ACKNOWLEDGED RESPONSES LOST" if self.lost
                else f"CONSERVATION FAILED — {held}")


def _same(a, b) -> bool:
    """Equal statistics: arrays element by element, dicts key by key."""
    if isinstance(a, dict) or isinstance(b, dict):
        return (isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys()
                and all(_same(a[k], b[k]) for k in a))
    if isinstance(a, (np.ndarray, list, tuple)) or isinstance(b, (np.ndarray, list, tuple)):
        a, b = np.asarray(a), np.asarray(b)
        return a.shape == b.shape and bool((a == b).all())
    return a == b


def check_store(db_path: Path, slug: str, acked: list[dict] | None, *, acknowledged: int | None = None,
                unanswered: int = 0) -> Conservation:
    """Check that the store holds exactly what was acknowledged, through the server's own readers.

    The rows (``load_db_dataset``), the answer patterns (``pattern_counts``) and the per-question
    statistics (``survey_stats``: ``counts`` and ``cell_counts``) must hold the same responses, pattern
    by pattern; with ``acked`` (the acknowledged reports) the rows must be exactly those, else (only
    a count, as under wrk) between ``acknowledged`` and ``acknowledged + unanswered``.  Also
    ``PRAGMA integrity_check``.  Call after the server stopped.
    """
    from deniable.server.store import aggregates
    from deniable.server.store.db import connect
    from deniable.server.store.responses import load_db_dataset, validate_reports
    from deniable.server.store.surveys import get_survey, survey_stats

    out = Conservation(len(acked) if acked is not None else int(acknowledged), unanswered)
    db = connect(db_path)
    try:
        stored = get_survey(db, slug)
        survey = stored.survey
        rows = load_db_dataset(db, slug)
        by_row = Counter(aggregates.encode_columns(survey, rows.columns))
        patterns = aggregates.pattern_counts(db, stored)
        by_pattern = Counter()
        for pattern, count in zip(aggregates.encode_columns(survey, patterns.columns), patterns.counts.tolist()):
            by_pattern[pattern] += count
        out.rows, out.in_patterns, out.distinct_patterns = rows.n_rows, sum(by_pattern.values()), len(by_pattern)
        stats = survey_stats(db, stored)
        integrity = db.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        db.conn.close()
    problems = out.problems
    if out.in_patterns != out.rows:
        problems.append(f"{out.rows:,} rows stored but {out.in_patterns:,} responses in the answer patterns")
    elif by_pattern != by_row:
        differ = len(set(by_pattern.items()) ^ set(by_row.items()))
        problems.append(f"the answer patterns differ from the rows in {differ} (pattern, count) pairs")
    wrong = [qid for qid, expected in rows.all_stats().items() if not _same(stats.get(qid), expected)]
    if wrong:
        problems.append(f"statistics (counts, cell_counts) disagree with the rows for {', '.join(wrong)}")
    if acked is not None:
        expected = Counter(aggregates.encode(survey, validate_reports(stored, reports)) for reports in acked)
        if out.rows != len(acked):
            problems.append(f"{out.rows:,} rows stored but {len(acked):,} submissions acknowledged")
        elif expected != by_row:
            problems.append("the stored rows are not the acknowledged reports "
                            f"({sum((expected - by_row).values())} acknowledged answer patterns missing)")
    elif not out.acknowledged <= out.rows <= out.acknowledged + unanswered:
        problems.append(f"{out.rows:,} rows stored, but {out.acknowledged:,} submissions acknowledged "
                        f"and {unanswered:,} unanswered (stored or not)")
    if integrity != "ok":
        problems.append(f"integrity_check: {integrity}")
    return out
