"""A real ``deniable serve`` (gunicorn, gevent workers) on a real database, its whole log in a file."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

from support.serving import free_port, wait_until_serving

ROOT = Path(__file__).resolve().parents[2]
DENIABLE = [sys.executable, "-c", "from deniable.server.cli import cli; cli()"]
SLUG = "student-life"
SUMMARY = re.compile(r"^\[\d+\] \[WARNING\] since the last summary: (\d+) × (.*?)(?:; the first:)?$")


class Server:
    """``deniable serve --db DATA/deniable.db`` with ``extra`` options; stdout and stderr in ``log``."""

    def __init__(self, folder: Path, *extra: str):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = folder / "server.log"
        env = {k: v for k, v in os.environ.items() if not k.startswith("DENIABLE_")}
        env["PYTHONPATH"] = str(ROOT)
        with open(self.log, "w") as out:
            self.process = subprocess.Popen([*DENIABLE, "serve", "--db", str(folder / "deniable.db"), "--port",
                                             str(self.port), "--workers", "2", *extra],
                                            cwd=folder, env=env, stdout=out, stderr=subprocess.STDOUT)
        wait_until_serving(f"{self.base}/api/v1/surveys/{SLUG}", self.process, why=self.log.read_text)
        deadline = time.monotonic() + 60
        while len(self.workers()) < 2:  # the second worker may still be booting
            assert time.monotonic() < deadline, "gunicorn did not start 2 workers"
            time.sleep(0.2)

    def workers(self) -> list[int]:
        found = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    stat = Path(f"/proc/{entry}/stat").read_text()
                except OSError:
                    continue
                if int(stat.rsplit(")", 1)[1].split()[1]) == self.process.pid:
                    found.append(int(entry))
        return found

    def open_sockets(self) -> int:
        """How many sockets the workers hold open now (counted by the kernel, in /proc)."""
        count = 0
        for pid in self.workers():
            try:
                for fd in os.listdir(f"/proc/{pid}/fd"):
                    try:
                        count += os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:")
                    except OSError:
                        pass
            except OSError:
                pass
        return count

    def stop(self) -> str:
        """Stop the server as a supervisor would (SIGTERM); its whole log."""
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=60)
        return self.log.read_text()


def summaries(log: str) -> dict[str, int]:
    """The workers' summary lines added up: what was counted, and how many times."""
    counted: dict[str, int] = {}
    for line in log.splitlines():
        match = SUMMARY.match(line)
        if match:
            counted[match.group(2)] = counted.get(match.group(2), 0) + int(match.group(1))
    return counted
