"""Answer patterns: the sufficient statistics of every grouped view, kept current on every insert.

A response's **pattern** is its whole answer vector — per question the reported option index
plus one (0 = not answered), one byte per question (two when a question has 255 options or
more).  The table ``answer_patterns`` holds, per survey and day, how many responses gave each
pattern; every insert adds one in the same transaction as the response row and the per-option
``counts`` (:mod:`.responses`).  Everything grouped — cross-tabs of any two questions,
subgroups, regression on direct covariates, estimates by day — is computed from it, so those
views cost O(distinct patterns and days), not O(responses): the demo survey has 32 possible
patterns whatever the number of respondents.  (A survey with many questions and options can have
nearly as many distinct patterns as responses; then these views cost what a scan would, and no
more.)  The table has no order and no time finer than the day (docs/design.md, invariant 6).

Measured on the submission path (``python scripts/bench_aggregates.py``): one upsert per
submission, against the alternative of one row per pair of questions (190 upserts for 20
questions).
"""

from __future__ import annotations

import numpy as np
import sqlite_utils

from deniable.server.survey.dataset import NOT_ANSWERED
from deniable.server.survey.definition import Survey
from deniable.server.survey.patterns import Patterns

from .surveys import StoredSurvey


def _dtype(survey: Survey) -> np.dtype:
    """One byte per question, or two (little-endian) when some question has 255 options or more."""
    return np.dtype(np.uint8) if max((q.k for q in survey.questions), default=0) < 255 else np.dtype("<u2")


def encode(survey: Survey, reports: dict) -> bytes:
    """The pattern of one response ``{qid: option index}`` (absent = not answered)."""
    values = [reports.get(q.id, NOT_ANSWERED) + 1 for q in survey.questions]
    return np.array(values, dtype=_dtype(survey)).tobytes()


def encode_columns(survey: Survey, columns: dict[str, np.ndarray]) -> list[bytes]:
    """The patterns of many responses given as columns of option indices (−1 = not answered)."""
    stacked = np.stack([np.asarray(columns[q.id]) + 1 for q in survey.questions], axis=1).astype(_dtype(survey))
    width = stacked.shape[1] * stacked.itemsize
    raw = stacked.tobytes()
    return [raw[i:i + width] for i in range(0, len(raw), width)]


def pattern_counts(db: sqlite_utils.Database, stored: StoredSurvey) -> Patterns:
    """Read the survey's answer patterns (O(distinct day × pattern rows))."""
    survey = stored.survey
    rows = db.execute("SELECT day, pattern, count FROM answer_patterns WHERE survey_id = ?", [stored.id]).fetchall()
    dtype = _dtype(survey)
    m = len(survey.questions)
    if rows:
        days, blobs, counts = zip(*rows)
        codes = np.frombuffer(b"".join(blobs), dtype=dtype).reshape(len(rows), m).astype(np.int64) - 1
    else:
        days, counts, codes = (), (), np.empty((0, m), dtype=np.int64)
    return Patterns(survey=survey, days=np.asarray(days, dtype=str),
                    columns={q.id: codes[:, i] for i, q in enumerate(survey.questions)},
                    counts=np.asarray(counts, dtype=np.int64))


UPSERT = ("INSERT INTO answer_patterns (survey_id, day, pattern, count) VALUES (?, ?, ?, ?) "
          "ON CONFLICT (survey_id, day, pattern) DO UPDATE SET count = count + excluded.count")


def add(db: sqlite_utils.Database, survey_id: int, day: str, patterns: list[bytes], counts=None) -> None:
    """Count ``patterns`` (each once, or ``counts[i]`` times); call inside the insert's transaction."""
    counts = [1] * len(patterns) if counts is None else counts
    db.conn.executemany(UPSERT, [(survey_id, day, p, int(c)) for p, c in zip(patterns, counts)])
