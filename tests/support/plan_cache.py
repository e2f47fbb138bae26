"""The planner's golden file, and a planner that remembers nothing, for the planning tests."""

from __future__ import annotations

import json
from pathlib import Path

from deniable.estimators import planning

GOLDEN = json.loads((Path(__file__).resolve().parents[1] / "data" / "plan_golden.json").read_text())


def forget(cache_dir: Path | None = None) -> None:
    """Empty the planner's caches in memory, and the disk cache under ``cache_dir`` if given."""
    planning._worst_case.cache_clear()
    planning._plan.cache_clear()
    if cache_dir is not None:
        for entry in sorted((Path(cache_dir) / "deniable").glob("*/*/*.json")):
            entry.unlink()

