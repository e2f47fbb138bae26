"""No production module over 900 lines: a module that long holds more than one concern, and is split
by what each part is (issue 37, "The house, round 3"), not at an arbitrary line."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("client", "server", "estimators", "deniable")
LIMIT = 900

# Modules still over the limit, each with its reason; remove an entry once its split has landed.
# Issue 37: server/survey/sampling.py (1,461 lines at the commit that added this test) is being split
# into weighted.py, raking.py and tables.py by another change in progress.
EXCEPTIONS = {
    "server/survey/sampling.py": "issue 37: being split (weighted.py, raking.py, tables.py)",
}


def module_sizes() -> dict[str, int]:
    """Lines of every Python module under the production folders, by path from the repository root."""
    return {path.relative_to(ROOT).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
            for folder in FOLDERS for path in sorted((ROOT / folder).rglob("*.py"))
            if "__pycache__" not in path.parts}


def test_no_module_over_the_limit():
    sizes = module_sizes()
    assert len(sizes) > 100  # the folders were found
    over = {path: lines for path, lines in sizes.items() if lines > LIMIT and path not in EXCEPTIONS}
    assert not over, f"split by concern, under {LIMIT} lines each: {over}"


def test_the_exceptions_are_modules():
    assert all((ROOT / path).is_file() for path in EXCEPTIONS), EXCEPTIONS
