"""One naming scheme for every file the project writes, from the dashboard or the command line.

``SLUG-responses.csv`` (and ``.parquet``, ``.sav``, ``.dta``) travels with ``SLUG-codebook.json``; estimates
say how they were computed: ``SLUG-estimates-exact-95.csv``, ``…-wilson-99-simultaneous.json``.

>>> estimates("habits", "exact", 0.95, False, "csv")
'habits-estimates-exact-95.csv'
>>> estimates("habits", "wilson", 0.995, True, "json")
'habits-estimates-wilson-99.5-simultaneous.json'
"""

from __future__ import annotations


def responses(slug: str, ext: str = "csv") -> str:
    return f"{slug}-responses.{ext}"


def codebook(slug: str) -> str:
    return f"{slug}-codebook.json"


def definition(slug: str) -> str:
    return f"{slug}-definition.json"


def invitations(slug: str) -> str:
    return f"{slug}-invitations.csv"


def estimates(slug: str, method: str, confidence: float, simultaneous: bool, ext: str) -> str:
    level = f"{100 * confidence:.4g}"
    return f"{slug}-estimates-{method}-{level}{'-simultaneous' if simultaneous else ''}.{ext}"
