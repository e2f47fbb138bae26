"""Answer patterns and cell counts: the sufficient statistics of every view, kept current on every insert.

A response's **pattern** is its whole answer vector — per question the reported code plus one
(0 = not answered; a choice's option index, a grid index, a list experiment's arm and count, a
multi question's bit vector of up to 7 options: :mod:`deniable.server.survey.cells`), one byte per
question (two when a question has 255 cells or more).  Discrete Laplace questions and multi
questions of more than 7 options are not in the patterns (their cells would multiply the number
of patterns): every view of them reads their **cell counts** (``cell_counts``, :func:`cell_rows`),
which hold their own sufficient statistics — a value histogram, or ticks per option, pairwise
co-occurrence and the number ticked.  The table ``pattern_buckets`` holds, per survey and day,
how many responses gave each pattern (in fixed-size rows: :func:`add`; ``answer_patterns`` held
them before m13); every insert adds one in the same transaction as the response row and the per-option
``counts`` (:mod:`.responses`).  Everything grouped — cross-tabs of any two questions,
subgroups, regression on direct covariates, estimates by day — is computed from it, so those
views cost O(distinct patterns and days), not O(responses): the demo survey has 32 possible
patterns whatever the number of respondents.  (A survey with many questions and options can have
nearly as many distinct patterns as responses; then these views cost what a scan would, and no
more.)  The tables have no order and no time finer than the day (docs/design.md, invariant 6), in
their rows or in the file's page layout: counts keep their row's size and are overwritten in place.

Measured on the submission path (``python scripts/bench_aggregates.py``): one upsert per
submission, against the alternative of one row per pair of questions (190 upserts for 20
questions).
"""

from __future__ import annotations

import hashlib
import random
import weakref

import numpy as np
import sqlite_utils

from deniable.server.survey.dataset import NOT_ANSWERED, Dataset
from deniable.server.survey.definition import Question, Survey, per_survey
from deniable.server.survey.patterns import Patterns

from . import slots
from .surveys import StoredSurvey


@per_survey
def pattern_questions(survey: Survey) -> tuple[Question, ...]:
    """The questions the answer patterns hold, in the survey's order (:meth:`~deniable.server.survey.questions.base.QuestionType.in_patterns`)."""
    return tuple(q for q in survey.questions if q.qtype.in_patterns(q))


@per_survey
def _dtype(survey: Survey) -> np.dtype:
    """One byte per question, or two (little-endian) when some question has 255 cells or more."""
    widest = max((q.qtype.n_cells(q) for q in pattern_questions(survey)), default=0)
    return np.dtype(np.uint8) if widest < 255 else np.dtype("<u2")


@per_survey
def _pattern_ids(survey: Survey) -> tuple[str, ...]:
    return tuple(q.id for q in pattern_questions(survey))


def encode(survey: Survey, reports: dict) -> bytes:
    """The pattern of one response ``{qid: code}`` (absent = not answered; a choice's code is its option index)."""
    values = [reports.get(qid, NOT_ANSWERED) + 1 for qid in _pattern_ids(survey)]
    if _dtype(survey) == np.uint8:
        return bytes(values)  # one byte a question: what numpy's uint8 array gives, without the array
    return np.array(values, dtype=_dtype(survey)).tobytes()


def encode_columns(survey: Survey, columns: dict[str, np.ndarray]) -> list[bytes]:
    """The patterns of many responses given as columns of codes (−1 = not answered)."""
    questions = pattern_questions(survey)
    if not questions:
        return [b""] * len(next(iter(columns.values()), []))
    stacked = np.stack([np.asarray(columns[q.id]) + 1 for q in questions], axis=1).astype(_dtype(survey))
    width = stacked.shape[1] * stacked.itemsize
    raw = stacked.tobytes()
    return [raw[i:i + width] for i in range(0, len(raw), width)]


def pattern_counts(db: sqlite_utils.Database, stored: StoredSurvey) -> Patterns:
    """Read the survey's answer patterns (O(distinct day × pattern rows))."""
    dtype = _dtype(stored.survey)
    survey = stored.survey.only(q.id for q in pattern_questions(stored.survey))
    rows = slots.stored_patterns(db, stored.id)
    m = len(survey.questions)
    if rows:
        days, blobs, counts = zip(*rows)
        codes = np.frombuffer(b"".join(blobs), dtype=dtype).reshape(len(rows), m).astype(np.int64) - 1
    else:
        days, counts, codes = (), (), np.empty((0, m), dtype=np.int64)
    return Patterns(survey=survey, days=np.asarray(days, dtype=str),
                    columns={q.id: codes[:, i] for i, q in enumerate(survey.questions)},
                    counts=np.asarray(counts, dtype=np.int64))


def _insert_in_key_order(conn, table: str, where: str, params: list, key: str, new: list[tuple]) -> None:
    """Insert ``new`` rows (their values after the ``where`` columns, count last) and write every row of
    the group again, in key order; inside the caller's transaction.  After it, the group's cells are
    in key order whatever order its rows appeared in.  ``count`` is stored beside its ``pad``
    (:func:`.slots.padding`)."""
    rows = conn.execute(f"SELECT {key}, count FROM {table} WHERE {where}", params).fetchall()
    known = {row[:-1] for row in rows}
    rows += [tuple(row) for row in new if tuple(row[:-1]) not in known]
    marks = ", ".join("?" * (len(params) + len(new[0]) + 1))
    conn.execute(f"DELETE FROM {table} WHERE {where}", params)
    conn.executemany(f"INSERT INTO {table} VALUES ({marks})",
                     [(*params, *row, slots.pad_of(row[-1])) for row in sorted(rows)])


# The answer patterns of a survey and day live in fixed-size rows of ``pattern_buckets`` (m13):
# ENTRIES entries of (count: 8 bytes big-endian, 0 = empty; pattern), a pattern in bucket
# hash(pattern) mod the day's number of buckets.  A new pattern takes a random empty entry of its
# bucket, a count is incremented where it is, and the row is overwritten with bytes of the same size,
# in place.  A full bucket doubles the day's buckets: every row of the day written again in key order.
ENTRIES = slots.ENTRIES
FIRST_BUCKETS = 4
_random = random.SystemRandom()
BUCKET = "SELECT entries FROM pattern_buckets WHERE survey_id = ? AND day = ? AND bucket = ?"
# The bucket and, to check the number of buckets this connection remembers, the day's last bucket.
BUCKET_AND_TOP = ("SELECT entries, (SELECT max(bucket) FROM pattern_buckets WHERE survey_id = ?1 AND day = ?2) "
                  "FROM pattern_buckets WHERE survey_id = ?1 AND day = ?2 AND bucket = ?3")
_bucket_counts: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # db → {(survey id, day): buckets}


def forget(db: sqlite_utils.Database, survey_id: int) -> None:
    """Forget the number of buckets this connection remembers for the survey's days (their rows were
    written again by someone else: :func:`.integrity.rebuild`)."""
    cache = _bucket_counts.get(db, {})
    for key in [key for key in cache if key[0] == survey_id]:
        del cache[key]


def bucket_of(pattern: bytes, buckets: int) -> int:
    return int.from_bytes(hashlib.blake2b(pattern, digest_size=8).digest(), "big") % buckets


def _write_buckets(conn, survey_id: int, day: str, counted: dict[bytes, int], width: int, buckets: int) -> int:
    """Write the day's buckets again, in key order, with at least ``buckets`` of them (doubled until
    every bucket holds its patterns); return how many."""
    while True:
        held: list[list[bytes]] = [[] for _ in range(buckets)]
        for pattern in counted:
            held[bucket_of(pattern, buckets)].append(pattern)
        if max(map(len, held)) <= ENTRIES:
            break
        buckets *= 2
    empty = bytes(8 + width)
    conn.execute("DELETE FROM pattern_buckets WHERE survey_id = ? AND day = ?", [survey_id, day])
    conn.executemany("INSERT INTO pattern_buckets VALUES (?, ?, ?, ?)", (
        (survey_id, day, b, b"".join(counted[p].to_bytes(8, "big") + p for p in sorted(patterns))
         + empty * (ENTRIES - len(patterns)))
        for b, patterns in enumerate(held)))
    return buckets


def add(db: sqlite_utils.Database, survey_id: int, day: str, patterns: list[bytes], counts=None) -> None:
    """Count ``patterns`` (each once, or ``counts[i]`` times); call inside the insert's transaction."""
    if not len(patterns):
        return
    counts = [1] * len(patterns) if counts is None else counts
    conn, width = db.conn, len(patterns[0])
    cache = _bucket_counts.setdefault(db, {})
    if len(patterns) == 1 and (survey_id, day) in cache:  # the common case: one statement, checked below
        b = bucket_of(patterns[0], cache[survey_id, day])
        row = conn.execute(BUCKET_AND_TOP, [survey_id, day, b]).fetchone()
        if (row is not None and row[1] + 1 == cache[survey_id, day]
                and _count_in(conn, survey_id, day, b, row[0], patterns[0], int(counts[0]), width)):
            return
        # a full bucket (or a stale number of buckets): the general path below grows the day
    top = conn.execute("SELECT max(bucket) FROM pattern_buckets WHERE survey_id = ? AND day = ?",
                       [survey_id, day]).fetchone()[0]
    if top is None or len(patterns) > ENTRIES:  # a new day, or a bulk insert: merge and write the day again
        counted: dict[bytes, int] = {}
        for _, pattern, count in slots.stored_day(conn, survey_id, day):
            counted[pattern] = count
        for pattern, count in zip(patterns, counts):
            counted[pattern] = counted.get(pattern, 0) + int(count)
        buckets = FIRST_BUCKETS if top is None else top + 1
        while len(counted) * 2 > buckets * ENTRIES:
            buckets *= 2
        cache[survey_id, day] = _write_buckets(conn, survey_id, day, counted, width, buckets)
        return
    buckets = top + 1
    for pattern, count in zip(patterns, counts):
        while True:
            b = bucket_of(pattern, buckets)
            entries = conn.execute(BUCKET, [survey_id, day, b]).fetchone()[0]
            if _count_in(conn, survey_id, day, b, entries, pattern, int(count), width):
                break
            # A full bucket: twice as many buckets, the day written again in key order.
            counted = {p: n for _, p, n in slots.stored_day(conn, survey_id, day)}
            buckets = _write_buckets(conn, survey_id, day, counted, width, 2 * buckets)
    cache[survey_id, day] = buckets


def _count_in(conn, survey_id: int, day: str, b: int, entries: bytes, pattern: bytes, count: int, width: int) -> bool:
    """Add ``count`` to ``pattern``'s entry of bucket ``b`` (a random empty entry if it has none) and
    overwrite the row, same size, in place; False if the bucket is full."""
    held = slots.entries_of(day, entries)
    at = next((i for i, (_, p, n) in enumerate(held) if n and p == pattern), None)
    if at is None:
        free = [i for i, (_, _, n) in enumerate(held) if not n]
        if not free:
            return False
        at, total = _random.choice(free), count
    else:
        total = held[at][2] + count
    start = at * (8 + width)
    conn.execute("UPDATE pattern_buckets SET entries = ? WHERE survey_id = ? AND day = ? AND bucket = ?",
                 [entries[:start] + total.to_bytes(8, "big") + pattern + entries[start + 8 + width:], survey_id, day, b])
    return True


def cell_rows(q: Question, stats) -> list[tuple[str, int, int]]:
    """``(stat, cell, count)`` increments of ``cell_counts`` for a question's statistics (its type's
    :meth:`~deniable.server.survey.questions.base.QuestionType.cell_rows`)."""
    return q.qtype.cell_rows(q, stats)


ALL_CELLS_MAX = 1 << 20  # a question of more codes gets its cells one by one, as they are first counted


def all_cells(q: Question) -> list[tuple[str, int]]:
    """Every ``(stat, cell)`` a question's reports can count in: the cells of the statistics of every
    possible code (none when it has more than :data:`ALL_CELLS_MAX` codes)."""
    n = q.qtype.n_cells(q)
    if n > ALL_CELLS_MAX:
        return []
    codes = np.arange(n, dtype=np.int64)
    codes = codes[~q.qtype.invalid_codes(q, codes)]
    return [(stat, cell) for stat, cell, _ in cell_rows(q, q.qtype.column_stats(q, codes))]


CELL_UPDATE = (f"UPDATE cell_counts SET count = count + :n, pad = {slots.padding('count + :n')} "
               "WHERE survey_id = :survey AND qid = :qid AND stat = :stat AND cell = :cell")


def add_cells(db: sqlite_utils.Database, survey_id: int, q: Question, stats) -> None:
    """Add a question's statistics to ``cell_counts``; call inside the insert's transaction.

    The first time a question counts in a cell that has no row, every cell it can count in is made
    (at zero: readers leave those out) and the question's rows are written again in key order, so
    that afterwards every increment overwrites its cell in place."""
    conn = db.conn
    new = []
    for stat, cell, count in cell_rows(q, stats):
        if not conn.execute(CELL_UPDATE, {"n": count, "survey": survey_id, "qid": q.id, "stat": stat, "cell": cell}).rowcount:
            new.append((stat, cell, count))
    if new:
        counted = {(stat, cell) for stat, cell, _ in new}
        new += [(stat, cell, 0) for stat, cell in all_cells(q) if (stat, cell) not in counted]
        _insert_in_key_order(conn, "cell_counts", "survey_id = ? AND qid = ?", [survey_id, q.id], "stat, cell", new)


def json_path(qid: str) -> str:
    """The JSON path of a question's report in a response's ``reports``."""
    return f'$."{qid}"'


def missing_code(q: Question) -> int:
    """What ``json_extract`` of a missing report becomes: −1, or for a report that can be negative
    (a Laplace report can be −1 itself) a number below every report."""
    return min(q.qtype.report_offset(q), 0) - 1


def daily_codes(db: sqlite_utils.Database, stored: StoredSurvey, q: Question) -> tuple[np.ndarray, np.ndarray]:
    """``(days, codes)`` of every stored response's report of ``q`` (−1 = not answered), for views by
    day of a question the answer patterns do not hold (``q.qtype.in_patterns(q)`` false): one pass
    over the rows, as :func:`.responses.load_db_dataset` makes.  The day is ``submitted_on``."""
    import json

    offset, structured = q.qtype.report_offset(q), q.qtype.structured_report
    value = f"json_extract(reports, '{json_path(q.id)}')"
    rows = db.execute(f"SELECT submitted_on, {value if structured else f'ifnull({value}, {missing_code(q)})'} "
                      "FROM responses WHERE survey_id = ?", [stored.id]).fetchall()
    days = np.asarray([day for day, _ in rows], dtype=str)
    mapping: dict = {None: NOT_ANSWERED, missing_code(q): NOT_ANSWERED}
    codes = np.empty(len(rows), dtype=np.int64)
    for i, (_, report) in enumerate(rows):
        code = mapping.get(report)
        if code is None:
            code = mapping[report] = q.qtype.check_report(q, json.loads(report)) if structured else report - offset
        codes[i] = code
    return days, codes


# ---------------------------------------------------------------- raking cells (m17)
# The answer patterns leave out discrete Laplace questions and check-all questions of more than 7
# options, so a view weighted by raking (which weights on the single choices asked directly) could
# not read their answers beside the raking questions'.  ``raking_cells`` keeps, per raking cell (a
# response's codes of :func:`raking_questions`), the statistics of each such question that its
# weighted estimates need (its type's ``raking_stats``), kept like ``cell_counts``: every code of a
# new raking cell made at once and the question's rows written again in key order, then counts
# overwritten in place.

RAKING_UPDATE = (f"UPDATE raking_cells SET count = count + :n, pad = {slots.padding('count + :n')} "
                 "WHERE survey_id = :survey AND qid = :qid AND cell = :cell AND stat = :stat AND code = :code")


@per_survey
def raking_questions(survey: Survey) -> tuple[Question, ...]:
    """The questions raking may weight on: the single choices asked directly (all in the answer patterns)."""
    return tuple(q for q in pattern_questions(survey) if q.qtype.categorical and not q.protected)


@per_survey
def outside_patterns(survey: Survey) -> tuple[Question, ...]:
    """The questions ``raking_cells`` keeps: those the answer patterns leave out, when anything can weight."""
    outside = tuple(q for q in survey.questions if not q.qtype.in_patterns(q))
    return outside if outside and raking_questions(survey) else ()


def raking_cell(survey: Survey, reports: dict) -> str:
    """A response's raking cell: its codes of :func:`raking_questions`, joined by commas (−1: not answered)."""
    return ",".join(str(reports.get(q.id, NOT_ANSWERED)) for q in raking_questions(survey))


def add_raking_cells(db: sqlite_utils.Database, survey_id: int, q: Question, cells: list[tuple[str, dict]]) -> None:
    """Add ``q``'s statistics of each ``(raking cell, stats)`` to ``raking_cells``; inside the insert's
    transaction.  A raking cell seen for the first time gets a row for every code it can count in (at
    zero), and the question's rows are written again in key order (as :func:`add_cells`)."""
    conn, wanted = db.conn, q.qtype.raking_stats
    new = []
    for cell, stats in cells:
        for stat, code, count in cell_rows(q, stats):
            if stat in wanted and not conn.execute(RAKING_UPDATE, {"n": count, "survey": survey_id, "qid": q.id,
                                                                   "cell": cell, "stat": stat, "code": code}).rowcount:
                new.append((cell, stat, code, count))
    if new:
        counted = {row[:3] for row in new}
        every = [(stat, code) for stat, code in all_cells(q) if stat in wanted]
        new += [(cell, stat, code, 0) for cell in {row[0] for row in new} for stat, code in every
                if (cell, stat, code) not in counted]
        _insert_in_key_order(conn, "raking_cells", "survey_id = ? AND qid = ?", [survey_id, q.id],
                             "cell, stat, code", new)


def raking_cells(db: sqlite_utils.Database, survey_id: int) -> dict[str, dict[str, dict[str, list]]]:
    """``{qid: {raking cell: {stat: [(code, count), ...]}}}`` of the counts above zero."""
    out: dict = {}
    for qid, cell, stat, code, count in db.execute(
            "SELECT qid, cell, stat, code, count FROM raking_cells WHERE survey_id = ? AND count > 0", [survey_id]):
        out.setdefault(qid, {}).setdefault(cell, {}).setdefault(stat, []).append((code, count))
    return out


def raking_datasets(survey: Survey, patterns: Dataset, found: dict) -> dict[str, list[Dataset]]:
    """Per question of :func:`outside_patterns`, datasets of the raking questions and that question,
    one row per (raking cell, code) weighted by its count — respondents who did not answer it are
    the rest of their raking cell's respondents in the answer ``patterns`` — from :func:`raking_cells`.

    A raked estimate depends on a respondent only through its raking cell and its own answer, so it
    comes out of these as it would from one row per respondent.  A check-all question's list has one
    dataset per option, its column holding that option's tick alone (the code ``2**j``, or 0): the
    cells keep each option's ticks, and its raked estimate of option j reads only option j's tick.
    """
    raking = raking_questions(survey)
    ids = [q.id for q in raking]
    if not ids:
        return {}
    stacked = np.stack([np.asarray(patterns.columns[qid], dtype=np.int64) for qid in ids], axis=1)
    weights = np.ones(stacked.shape[0], dtype=np.int64) if patterns.weights is None else patterns.weights
    totals: dict[str, int] = {}
    for row, count in zip(map(tuple, stacked.tolist()), weights.tolist()):
        key = ",".join(map(str, row))
        totals[key] = totals.get(key, 0) + int(count)
    out = {}
    for q in outside_patterns(survey):
        cells = found.get(q.id, {})
        if "cell" in q.qtype.raking_stats:
            rows = [(key, code, count) for key, stats in cells.items() for code, count in stats.get("cell", [])]
            out[q.id] = [_raking_dataset(survey, raking, q, totals, rows)]
        else:  # a check-all question: each option's ticks, of the respondents who answered it
            answered = {key: sum(c for _, c in stats.get("ticked", [])) for key, stats in cells.items()}
            out[q.id] = []
            for j in range(q.k):
                rows = []
                for key, stats in cells.items():
                    ticks = dict(stats.get("tick", [])).get(j, 0)
                    rows += [(key, 1 << j, ticks), (key, 0, answered[key] - ticks)]
                out[q.id].append(_raking_dataset(survey, raking, q, totals, rows))
    return out


def _raking_dataset(survey: Survey, raking: tuple[Question, ...], q: Question, totals: dict[str, int],
                    rows: list[tuple[str, int, int]]) -> Dataset:
    answered: dict[str, int] = {}
    for key, _, count in rows:
        answered[key] = answered.get(key, 0) + count
    rows = [row for row in rows if row[2]] + [(key, NOT_ANSWERED, total - answered.get(key, 0))
                                              for key, total in totals.items() if total > answered.get(key, 0)]
    codes = np.array([[int(c) for c in key.split(",")] for key, _, _ in rows], dtype=np.int64).reshape(len(rows),
                                                                                                      len(raking))
    columns = {r.id: codes[:, i] for i, r in enumerate(raking)}
    columns[q.id] = np.array([code for _, code, _ in rows], dtype=np.int64)
    return Dataset(survey.only([*columns]), columns, np.array([count for _, _, count in rows], dtype=np.int64))
