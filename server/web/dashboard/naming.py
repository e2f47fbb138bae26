"""Names derived from words: a survey's address from its title, a question's id from its text.

The builder fills a blank address or id with these (and ``builder.js`` does the same as the
researcher types, until they edit the field themselves).

>>> slugify("Campus health: 2025 edition!")
'campus-health-2025-edition'
>>> question_id("How often have you cheated on an exam?", set())
'how_often_cheated_exam'
>>> question_id("¿Consumiste drogas?", {"consumiste_drogas"})
'consumiste_drogas_2'
"""

from __future__ import annotations

import re
import unicodedata

MAX_SLUG = 63
ID_WORDS = 4
MAX_ID = 40
# Words that say little in an id.
STOP = {"a", "an", "the", "you", "your", "have", "has", "did", "do", "does", "on", "in", "of", "to", "for", "is",
        "are", "was", "were", "what", "which", "how", "ever", "any", "at", "or", "and", "past", "last", "this"}
KEEP_FIRST = {"how", "what", "which"}  # a question word at the start still says what is asked


def _ascii_words(text: str) -> list[str]:
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()
    return re.findall(r"[a-z0-9]+", plain)


def slugify(title: str) -> str:
    """Lowercase letters, digits and ``-`` (the survey's address ``/s/SLUG``), at most 63 characters."""
    slug = "-".join(_ascii_words(title))[:MAX_SLUG].strip("-")
    return slug or "survey"


def question_id(text: str, taken: set[str]) -> str:
    """A short id from the question's words (``how_often_cheated_exam``), unique among ``taken``."""
    words = _ascii_words(text)
    chosen = [w for i, w in enumerate(words) if w not in STOP or (i == 0 and w in KEEP_FIRST)][:ID_WORDS]
    base = "_".join(chosen or words[:ID_WORDS])[:MAX_ID].strip("_") or "question"
    if base[0].isdigit():
        base = f"q_{base}"
    candidate, n = base, 2
    while candidate in taken:
        candidate = f"{base}_{n}"
        n += 1
    return candidate
