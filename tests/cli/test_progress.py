"""Progress of long work: a bar with the rate and the time left on a terminal's stderr, and not one
character more when stderr is not a terminal (a pipe, a file, CliRunner)."""

from __future__ import annotations

import io
import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

from click.testing import CliRunner

from deniable.server.cli import cli
from deniable.server.cli.progress import Bar, progress

ROOT = Path(__file__).resolve().parents[2]
SURVEY = ROOT / "examples" / "survey.json"
TRUTH = ROOT / "examples" / "truth.json"
N = 2000  # simulated respondents: a bar on a terminal however few
DENIABLE = [sys.executable, "-c", "from deniable.server.cli import cli; cli()"]


class Terminal(io.StringIO):
    """A text stream that says it is a terminal (what a bar is drawn on)."""

    def isatty(self) -> bool:
        return True


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def on_a_pty(*args, deadline: float = 60) -> tuple[int, str, str]:
    """Run ``deniable ARGS`` with stderr on a pseudo-terminal: (exit code, stdout, what the terminal got)."""
    leader, follower = pty.openpty()
    process = subprocess.Popen([*DENIABLE, *map(str, args)], stdout=subprocess.PIPE, stderr=follower,
                               stdin=subprocess.DEVNULL, env={**os.environ, "COLUMNS": "100"})
    os.close(follower)
    seen = b""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        ready, _, _ = select.select([leader], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the other side closed: all was read
                break
            if not chunk:
                break
            seen += chunk
        elif process.poll() is not None:
            break
    else:
        process.kill()
        raise AssertionError(f"deniable {args[0]} did not finish within {deadline} s")
    os.close(leader)
    out = process.stdout.read().decode()
    process.stdout.close()
    return process.wait(timeout=deadline), out, seen.decode(errors="replace")


def imported(tmp_path) -> Path:
    db_path = tmp_path / "s.db"
    assert run("import", SURVEY, "--db", db_path, "--open").exit_code == 0
    return db_path


def test_not_on_a_terminal_backup_restore_and_simulate_print_only_their_line(tmp_path):
    db_path = imported(tmp_path)
    result = run("simulate", SURVEY, "--n", N, "--truth", TRUTH, "--seed", 1, "--db", db_path)
    assert result.exit_code == 0, result.output
    assert result.stdout == "" and result.stderr == f"stored {N:,} simulated responses in {db_path} " \
                                                   "(survey 'student-life')\n"
    backup = run("backup", tmp_path / "b.db", "--db", db_path)
    assert backup.exit_code == 0 and backup.stderr == "" and len(backup.stdout.splitlines()) == 1
    restore = run("restore", tmp_path / "b.db", "--db", tmp_path / "r.db")
    assert restore.exit_code == 0 and restore.stderr == "" and len(restore.stdout.splitlines()) == 1


def test_on_a_terminal_simulate_backup_and_restore_draw_a_bar(tmp_path):
    db_path = imported(tmp_path)
    code, out, terminal = on_a_pty("simulate", SURVEY, "--n", N, "--truth", TRUTH, "--seed", 1,
                                   "--db", db_path)
    assert code == 0 and out == ""
    bar = re.search(r"storing reports \[[#.]+\] 100%  [\d.,]+[MG]? rows/s  done", terminal)
    assert bar, terminal
    assert f"stored {N:,} simulated responses" in terminal  # the command's own line, after it
    code, out, terminal = on_a_pty("backup", tmp_path / "b.db", "--db", db_path)
    assert code == 0 and out.startswith("Backed up") and re.search(r"backing up \[#+\] 100%  \S+ B/s  done", terminal)
    code, out, terminal = on_a_pty("restore", tmp_path / "b.db", "--db", tmp_path / "r.db")
    assert code == 0 and out.startswith("Restored") and re.search(r"restoring \[#+\] 100%  \S+ B/s  done", terminal)


def test_the_bar_says_the_rate_and_the_time_left():
    bar = Bar(1000, "sampling", "draws", Terminal())
    bar.started -= 10  # as if it had started 10 s ago
    bar.done = 250
    line = bar.line(time.monotonic())
    # 250 in 10 s: 25 a second; the 750 left take 30 s
    assert re.fullmatch(r"sampling \[#+\.+\]  25%  25 draws/s  0:30 left", line), line
    filled, width = line.count("#"), line.count("#") + line.count(".")
    assert filled == int(width / 4)  # a quarter of the bar


def test_a_bar_is_drawn_on_a_terminal_only():
    terminal, pipe = Terminal(), io.StringIO()
    for stream in (terminal, pipe):
        with progress(10, "storing", "rows", stream=stream) as bar:
            bar.update(4)
            bar.update(6)
    assert pipe.getvalue() == ""
    assert terminal.getvalue().startswith("\rstoring [") and terminal.getvalue().endswith("done\x1b[K\n")
