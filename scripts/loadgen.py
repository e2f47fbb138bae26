"""Drive a real ``deniable serve`` through the JSON API: the load benchmark's and crash test's engine.

:class:`ServerProcess` runs ``deniable serve`` in its own process group (so the gunicorn master
and all its workers can be SIGKILLed together) and waits until it answers.  :func:`drive`
submits responses from many concurrent keep-alive connections on one asyncio loop, with raw
sockets (an HTTP client library would cost the server more CPU than it leaves us), and records
each acknowledged (2xx) submission with its latency.  Loopback only.
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
from dataclasses import dataclass, field
from pathlib import Path


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

    def start(self, ready_path: str, timeout: float = 30.0) -> None:
        out = open(self.log, "ab") if self.log else subprocess.DEVNULL
        try:
            self.proc = subprocess.Popen(
                [*deniable_command(), "serve", "--db", str(self.db), "--port", str(self.port),
                 "--workers", str(self.workers)],
                stdout=out, stderr=out, env=self.env, start_new_session=True,
            )
        finally:
            if self.log:
                out.close()  # the child holds its own copy
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"deniable serve exited with status {self.proc.returncode}")
            try:
                with urllib.request.urlopen(self.base_url + ready_path, timeout=1) as response:
                    if response.status == 200:
                        return
            except OSError:
                time.sleep(0.05)
        self.kill()
        raise RuntimeError(f"deniable serve did not answer {ready_path} within {timeout} s")

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

    acked: list = field(default_factory=list)       # the report dicts the server acknowledged
    latencies: list = field(default_factory=list)   # seconds, acknowledged requests only
    statuses: dict = field(default_factory=dict)    # non-2xx status → count
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
        if 200 <= status < 300:
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
