"""No production module over 900 lines: a module that long holds more than one concern, and is split
by what each part is (issue 37, "The house, round 3"), not at an arbitrary line."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("client", "server", "estimators", "deniable")
LIMIT = 900


def module_sizes() -> dict[str, int]:
    """Lines of every Python module under the production folders, by path from the repository root."""
    return {path.relative_to(ROOT).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
            for folder in FOLDERS for path in sorted((ROOT / folder).rglob("*.py"))
            if "__pycache__" not in path.parts}


def test_no_module_over_the_limit():
    sizes = module_sizes()
    assert len(sizes) > 100  # the folders were found
    over = {path: lines for path, lines in sizes.items() if lines > LIMIT}
    assert not over, f"split by concern, under {LIMIT} lines each: {over}"
