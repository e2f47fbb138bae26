"""A flood of silent connections from one address against ``deniable serve``, and a probe from another.

    python scripts/flood.py --port 8000                       # issue 41's run: 9,000 connections, 40 s
    python scripts/flood.py --port 8000 --connections 2000 --seconds 10 --rate 1000
    python scripts/flood.py --port 8000 --json                # the figures as one JSON object
    python scripts/flood.py --port 8000 --no-probe            # the flood alone
    python scripts/flood.py --port 8000 --addresses 64        # from 127.0.0.1 … 127.0.0.64 in turn

The flood (one process, non-blocking sockets on one ``epoll``): ``--connections`` connections
from ``--source`` (default 127.0.0.1; with ``--addresses N`` from N consecutive addresses from it
on, in turn), each sending the headers of a POST and the start of its
body, then nothing — half with a chunked body whose chunk never ends, half with fewer bytes than
their ``Content-Length`` — on the survey form and the JSON API in turn.  Every connection the
server closes (or resets, or that fails to connect) is opened again at once, at most ``--rate``
opens a second in all (the first ones too), for ``--seconds``; then every socket is closed.

The probe (a separate process, so that the flood's own CPU does not delay it): every
``--probe-every`` seconds, from ``--probe-source`` (default 127.0.0.2), a new connection asks for
the survey page (``GET /s/SLUG``, 200) and then another posts a submission to the JSON API
(``POST /api/v1/surveys/SLUG/responses``, 201), each given ``--probe-timeout`` seconds.  A probe
is answered if both are; its latency is the two requests' together.

Prints what the flood did (opens, how its connections ended, the most held at once, its CPU
time) and the probes' count, answered share and latency percentiles.  Loopback addresses only
need no setup on Linux (all of 127.0.0.0/8 is local); the open-file limit is raised to its hard
limit.  Used by ``tests/serving/test_flood.py``; see docs/running.md ("A flood from one address").
"""

from __future__ import annotations

import argparse
import errno
import ipaddress
import json
import multiprocessing
import resource
import select
import socket
import statistics
import sys
import time
from collections import deque

API = "/api/v1/surveys/{slug}/responses"
FORM = "/s/{slug}"
DEFAULT_REPORT = '{"drugs": 1, "cheated": 0, "year": 2}'  # examples/survey.json
IP_BIND_ADDRESS_NO_PORT = getattr(socket, "IP_BIND_ADDRESS_NO_PORT", 24)  # Linux: pick the port at connect


def payloads(slug: str, host: str) -> list[bytes]:
    """The four silent requests, in turn: chunked and short of Content-Length, on the form and the API."""
    form, api = FORM.format(slug=slug), API.format(slug=slug)
    head = "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: {kind}\r\n{framing}\r\n\r\n"
    form_type, json_type = "application/x-www-form-urlencoded", "application/json"
    return [
        head.format(path=form, host=host, kind=form_type, framing="Transfer-Encoding: chunked").encode()
        + b"20\r\ndrugs=1&chea",
        head.format(path=api, host=host, kind=json_type, framing="Content-Length: 500").encode()
        + b'{"reports": {"dr',
        head.format(path=api, host=host, kind=json_type, framing="Transfer-Encoding: chunked").encode()
        + b'40\r\n{"reports": {"dr',
        head.format(path=form, host=host, kind=form_type, framing="Content-Length: 500").encode()
        + b"drugs=1&chea",
    ]


def raise_open_files(wanted: int) -> int:
    """Raise the soft open-file limit to ``wanted`` (or the hard limit); the limit it is now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        soft = target
    return soft


class Flood:
    """``connections`` silent connections to ``port``, each opened again when it ends (see the module)."""

    CONNECTING, SENT = 1, 2

    def __init__(self, port: int, *, connections: int, rate: float, slug: str, target: str = "127.0.0.1",
                 source: str | None = None, addresses: int = 1):
        self.address = (target, port)
        self.connections, self.rate = connections, rate
        first = ipaddress.IPv4Address(source) if source is not None else None
        self.sources = [None] if first is None else [str(first + i) for i in range(addresses)]
        self.payloads = payloads(slug, target)
        self.epoll = select.epoll()
        self.socks: dict[int, tuple[socket.socket, int]] = {}  # fd → (socket, state)
        self.opened = self.turn = 0
        # closed: by the server, quietly (its deadline); reset: by the server at once; answered: an
        # answer, then closed; connect failed: refused, or no room for another socket here
        self.ended = {"closed": 0, "reset": 0, "answered": 0, "connect failed": 0}
        self.established = self.most_established = 0

    def _open(self) -> None:
        self.opened += 1
        try:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        except OSError:  # out of file descriptors
            self.ended["connect failed"] += 1
            return
        sock.setblocking(False)
        source = self.sources[self.opened % len(self.sources)]
        try:
            if source is not None:
                sock.setsockopt(socket.IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, 1)
                sock.bind((source, 0))
            code = sock.connect_ex(self.address)
        except OSError as exc:
            code = exc.errno
        if code not in (0, errno.EINPROGRESS):
            sock.close()
            self.ended["connect failed"] += 1
            return
        self.socks[sock.fileno()] = (sock, self.CONNECTING)
        self.epoll.register(sock.fileno(), select.EPOLLOUT)

    def _end(self, fd: int, how: str) -> None:
        sock, state = self.socks.pop(fd)
        if state == self.SENT:
            self.established -= 1
        self.epoll.unregister(fd)
        sock.close()
        self.ended[how] += 1

    def _event(self, fd: int, events: int) -> None:
        sock, state = self.socks[fd]
        if state == self.CONNECTING:
            code = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if code:  # reset by the server before this end saw the connection up, or refused
                self._end(fd, "reset" if code == errno.ECONNRESET else "connect failed")
                return
            try:
                sock.send(self.payloads[self.turn % len(self.payloads)])
            except OSError:
                self._end(fd, "reset")
                return
            self.turn += 1
            self.socks[fd] = (sock, self.SENT)
            self.established += 1
            self.most_established = max(self.most_established, self.established)
            self.epoll.modify(fd, select.EPOLLIN | select.EPOLLRDHUP)
            return
        try:
            data = sock.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            self._end(fd, "reset")
            return
        if not data:
            self._end(fd, "closed")
        elif events & (select.EPOLLRDHUP | select.EPOLLHUP):
            self._end(fd, "answered")  # an answer (a 400, say), then the server's close
        # else: part of an answer; its end comes as another event

    def run(self, seconds: float) -> dict:
        """Flood for ``seconds``; then close every socket.  What happened, as a dict."""
        start = time.monotonic()
        stop_at, budget, last = start + seconds, 0.0, start
        cpu = resource.getrusage(resource.RUSAGE_SELF)
        try:
            while True:
                now = time.monotonic()
                if now >= stop_at:
                    break
                budget = min(budget + (now - last) * self.rate, self.rate / 50)  # at most 20 ms' worth at once
                last = now
                while budget >= 1 and len(self.socks) < self.connections:
                    self._open()
                    budget -= 1
                for fd, events in self.epoll.poll(0.005 if len(self.socks) < self.connections else 0.05):
                    if fd in self.socks:
                        self._event(fd, events)
        finally:
            held = len(self.socks)
            for sock, _ in self.socks.values():
                sock.close()
            self.socks.clear()
            self.epoll.close()
        used = resource.getrusage(resource.RUSAGE_SELF)
        return {"seconds": round(time.monotonic() - start, 1), "connections": self.connections,
                "opened": self.opened, "opens per second": round(self.opened / max(seconds, 1e-9)),
                "ended": dict(self.ended), "most held at once": self.most_established,
                "open at the end": held,
                "cpu seconds": round(used.ru_utime + used.ru_stime - cpu.ru_utime - cpu.ru_stime, 1)}


# ---------------------------------------------------------------------------------------------
# the probe


def request(port: int, raw: bytes, *, source: str | None, timeout: float, target: str = "127.0.0.1") -> int:
    """Send ``raw`` on a new connection (``Connection: close``) and read the answer to its end: its status."""
    deadline = time.monotonic() + timeout
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        if source is not None:
            sock.setsockopt(socket.IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, 1)
            sock.bind((source, 0))
        sock.settimeout(timeout)
        sock.connect((target, port))
        sock.sendall(raw)
        answer = b""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no whole answer in time")
            sock.settimeout(left)
            data = sock.recv(65536)
            if not data:
                break
            answer += data
    return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/") else 0


def probe_requests(slug: str, report: str, host: str = "127.0.0.1") -> tuple[bytes, bytes]:
    body = ('{"reports": %s}' % report).encode()
    page = f"GET {FORM.format(slug=slug)} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode()
    submit = (f"POST {API.format(slug=slug)} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n"
              f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body
    return page, submit


def probe(port: int, *, seconds: float, every: float, timeout: float, slug: str, report: str,
          source: str | None) -> list[dict]:
    """One probe every ``every`` seconds for ``seconds``, each in its own thread (a slow one does
    not hold back the next): per probe its start, latency (None if unanswered) and what went wrong."""
    import threading

    page, submit = probe_requests(slug, report)
    results: list[dict] = []
    lock = threading.Lock()

    def one(at: float) -> None:
        start, problem, steps = time.monotonic(), None, []
        try:
            status = request(port, page, source=source, timeout=timeout)
            steps.append(time.monotonic() - start)
            if status != 200:
                problem = f"page {status}"
            else:
                status = request(port, submit, source=source, timeout=timeout)
                steps.append(time.monotonic() - start - steps[0])
                if status != 201:
                    problem = f"submission {status}"
        except OSError as exc:
            problem = type(exc).__name__
        latency = time.monotonic() - start
        with lock:
            results.append({"at": round(at, 2), "latency": None if problem else latency, "problem": problem,
                            "page, submission": [round(step, 3) for step in steps]})

    threads, begin = [], time.monotonic()
    for i in range(int(seconds / every)):
        wait = begin + i * every - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        thread = threading.Thread(target=one, args=(i * every,), daemon=True)
        thread.start()
        threads.append(thread)
    for thread in threads:
        thread.join(timeout + timeout + 1)
    return sorted(results, key=lambda r: r["at"])


def probe_summary(results: list[dict]) -> dict:
    latencies = sorted(r["latency"] for r in results if r["latency"] is not None)
    problems: dict[str, int] = {}
    for r in results:
        if r["problem"]:
            problems[r["problem"]] = problems.get(r["problem"], 0) + 1

    def quantile(q: float) -> float | None:
        if not latencies:
            return None
        return round(latencies[min(len(latencies) - 1, int(q * len(latencies)))], 3)

    return {"probes": len(results), "answered": len(latencies),
            "answered share": round(len(latencies) / len(results), 4) if results else None,
            "median": round(statistics.median(latencies), 3) if latencies else None,
            "p99": quantile(0.99), "max": round(latencies[-1], 3) if latencies else None,
            "problems": problems,
            "slowest": [{key: r[key] for key in ("at", "page, submission")}
                        for r in sorted(results, key=lambda r: -1 if r["latency"] is None else r["latency"])[-3:]]}


def _probe_process(pipe, port, options) -> None:
    pipe.send(probe(port, **options))
    pipe.close()


def run(port: int, *, connections: int = 9000, seconds: float = 40, rate: float = 2500, slug: str = "student-life",
        source: str | None = "127.0.0.1", addresses: int = 1, with_probe: bool = True, probe_source: str = "127.0.0.2",
        probe_every: float = 0.5, probe_timeout: float = 10.0, report: str = DEFAULT_REPORT) -> dict:
    """The flood and (``with_probe``) the probe together; the figures of both."""
    raise_open_files(connections + 256)
    process = receiver = None
    if with_probe:
        receiver, sender = multiprocessing.get_context("fork").Pipe(duplex=False)
        process = multiprocessing.get_context("fork").Process(
            target=_probe_process, args=(sender, port, {
                "seconds": seconds, "every": probe_every, "timeout": probe_timeout, "slug": slug,
                "report": report, "source": probe_source}), daemon=True)
        process.start()
        sender.close()
    try:
        flooded = Flood(port, connections=connections, rate=rate, slug=slug, source=source,
                        addresses=addresses).run(seconds)
        out = {"flood": flooded}
        if process is not None:
            results = receiver.recv() if receiver.poll(probe_timeout * 2 + 10) else []
            out["probe"] = probe_summary(results)
            out["probe"]["unanswered at"] = [r["at"] for r in results if r["latency"] is None]
        return out
    finally:
        if process is not None:
            process.join(5)
            if process.is_alive():
                process.kill()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, required=True, help="the server's port on 127.0.0.1")
    parser.add_argument("--connections", type=int, default=9000, help="silent connections held (default 9000)")
    parser.add_argument("--seconds", type=float, default=40, help="how long (default 40)")
    parser.add_argument("--rate", type=float, default=2500, help="opens a second at most (default 2500)")
    parser.add_argument("--slug", default="student-life", help="the survey (default student-life)")
    parser.add_argument("--source", default="127.0.0.1", help="the flood's address (default 127.0.0.1)")
    parser.add_argument("--addresses", type=int, default=1,
                        help="flood from this many consecutive addresses from --source on (default 1)")
    parser.add_argument("--probe-source", default="127.0.0.2", help="the probe's address (default 127.0.0.2)")
    parser.add_argument("--probe-every", type=float, default=0.5, help="seconds between probes (default 0.5)")
    parser.add_argument("--probe-timeout", type=float, default=10.0,
                        help="seconds each probe request may take (default 10)")
    parser.add_argument("--report", default=DEFAULT_REPORT, help="the probe's reports, JSON (default: for "
                        "examples/survey.json)")
    parser.add_argument("--no-probe", action="store_true", help="the flood alone")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = parser.parse_args(argv)
    out = run(args.port, connections=args.connections, seconds=args.seconds, rate=args.rate, slug=args.slug,
              source=args.source, addresses=args.addresses, with_probe=not args.no_probe,
              probe_source=args.probe_source, probe_every=args.probe_every, probe_timeout=args.probe_timeout, report=args.report)
    if args.json:
        print(json.dumps(out))
        return 0
    f = out["flood"]
    sources = args.source if args.addresses == 1 else f"{args.addresses} addresses from {args.source} on"
    print(f"flood: {f['connections']:,} connections from {sources} for {f['seconds']} s: {f['opened']:,} opens "
          f"({f['opens per second']:,}/s), most held at once {f['most held at once']:,}, ended: "
          + ", ".join(f"{k} {v:,}" for k, v in f["ended"].items()) + f"; its CPU {f['cpu seconds']} s")
    if "probe" in out:
        p = out["probe"]
        print(f"probe from {args.probe_source} every {args.probe_every:g} s: {p['answered']}/{p['probes']} answered, "
              f"median {p['median']} s, p99 {p['p99']} s, max {p['max']} s"
              + (f"; problems {p['problems']}" if p["problems"] else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
