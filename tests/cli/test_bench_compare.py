"""``scripts/bench_compare.py`` runs end to end: its table has the expected rows, numbers that parse,
and it leaves no worktree behind.  No timing assertions: the figures depend on the machine."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import deniable

ROOT = Path(__file__).resolve().parents[2]


def compare_worktrees() -> list[str]:
    """The worktrees bench_compare.py made (in its deniable-bench-compare-* folders) still registered."""
    out = subprocess.run(["git", "worktree", "list", "--porcelain"], cwd=ROOT, capture_output=True, text=True)
    return [line for line in out.stdout.splitlines()
            if line.startswith("worktree ") and "deniable-bench-compare-" in line]


@pytest.mark.slow
def test_head_against_the_worktree_help_only():
    git = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    if git.returncode != 0:
        pytest.skip("not a git checkout")
    if not Path(deniable.__file__).resolve().is_relative_to(ROOT):
        pytest.skip("deniable is not imported from this checkout")
    before = compare_worktrees()

    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "bench_compare.py"), "HEAD", "WORKTREE", "--runs", "1",
         "--only", "help"],
        cwd=ROOT, capture_output=True, text=True, timeout=480)

    assert result.returncode == 0, result.stderr
    assert compare_worktrees() == before
    lines = result.stdout.splitlines()
    assert lines[1].startswith("A = HEAD: ") and lines[2].startswith("B = WORKTREE: this checkout")
    rows = {}
    for line in lines:
        if line.startswith("| ") and not line.startswith("| figure") and not line.startswith("| -"):
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            assert len(cells) == 5, line
            rows[cells[0]] = cells[1:]
    assert set(rows) == {
        "deniable --help, s", "deniable --help / import click",
        "deniable plan --help, s", "deniable plan --help / import click",
        "deniable plan --k 2 --margin 0.03, s", 'floor: python -c "import click", s',
    }, result.stdout
    for figure, (a, b, ratio, flag) in rows.items():
        assert float(a) > 0 and float(b) > 0, (figure, result.stdout)
        float(ratio)
        assert flag == "" or re.fullmatch(r"worse by [\d.]+ %|floor moved [+-]\d+ %", flag), flag


@pytest.mark.slow
def test_submissions_fixed_body_on_a_against_diverse_bodies_on_b():
    """Both sides run this checkout's load script: A sends one fixed body, B a random answer per question
    per request, and each run's conservation check passes."""
    git = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    if git.returncode != 0:
        pytest.skip("not a git checkout")
    if not Path(deniable.__file__).resolve().is_relative_to(ROOT):
        pytest.skip("deniable is not imported from this checkout")
    before = compare_worktrees()

    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "bench_compare.py"), "HEAD", "WORKTREE", "--runs", "1",
         "--only", "submissions", "--load-seconds", "1", "--fixed-body", "A"],
        cwd=ROOT, capture_output=True, text=True, timeout=480)

    assert result.returncode == 0, result.stdout + result.stderr
    assert compare_worktrees() == before
    assert "RESPONSES LOST" not in result.stdout and "failed" not in result.stdout, result.stdout
    lines = result.stdout.splitlines()
    assert "submissions: this checkout's scripts/bench_load.py --seconds 1; A: --fixed-body" in lines
    patterns = next(line for line in lines if line.startswith("submissions: distinct answer patterns"))
    found = re.fullmatch(r"submissions: distinct answer patterns stored per run, A: (\d+); B: (\d+)", patterns)
    assert found and int(found[1]) == 1 and int(found[2]) >= 30, patterns  # of the demo survey's 40
    rows = [line for line in lines if line.startswith("| submissions")]
    assert len(rows) == 3, result.stdout
