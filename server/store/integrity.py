"""Integrity of deniable's own structures, as ``PRAGMA integrity_check`` is for SQLite's: every derived
aggregate agrees with the stored reports and with every other; and their repair.

The **stored reports** (``response_slots``, read through the ``responses`` view) are the record:
everything else about a survey's responses is derived from them and kept current on every insert
(:mod:`.responses`) — the per-option ``counts``, the other types' ``cell_counts``, the answer
patterns in ``pattern_buckets`` (:mod:`.aggregates`), the ``raking_cells``, and the slots' own
sizes (``response_slot_sizes``).  :func:`check` recomputes each of them from the reports and names
every disagreement; :func:`repair` writes them again from the reports, in one transaction per
survey.  Nothing here writes a report.

- :func:`check` reads every report (one pass, as an export does): ``deniable check``.
- :func:`quick_check` compares the aggregates with each other, without reading a report or scanning
  the slots (O(patterns)): what ``deniable serve`` runs at every start, repairing the surveys it
  finds short.
- :func:`repair_due` rebuilds the surveys that migration m19 marked (``aggregates_due``): a database
  written before the fix of the answer patterns' full buckets held them short (docs/running.md).

A public release already published from a short aggregate cannot be undone: its ε is spent.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass

import numpy as np
import sqlite_utils

from deniable.server.survey.dataset import NOT_ANSWERED

from . import aggregates, slots
from .db import init_db, write_transaction
from .responses import add_statistics, load_db_dataset
from .surveys import StoredSurvey, get_survey

SHOWN = 5  # disagreements listed per survey and structure; the rest are counted on one more line


@dataclass(frozen=True)
class Gap:
    """One disagreement: the survey, the structure, and what differs (``"answer patterns"``,
    ``"50, responses 400"``)."""

    slug: str
    structure: str
    detail: str

    def __str__(self) -> str:
        return f"{self.slug}: {self.structure}: {self.detail}"


@dataclass(frozen=True)
class Derived:
    """A survey's aggregates as a mapping each: what :func:`expected` computes from the reports and
    :func:`stored` reads from the tables."""

    responses: int
    days: Counter           # day → responses
    versions: Counter       # text version → responses
    counts: Counter         # (qid, option) → count
    cells: Counter          # (qid, stat, cell) → count (above zero)
    patterns: Counter       # (day, pattern) → count
    raking: Counter | None  # (qid, cell, stat, code) → count (above zero); None while still due (m17)


def _read_reports(db: sqlite_utils.Database, stored: StoredSurvey):
    """``(days, text versions, dataset)`` of every stored report of the survey, in one snapshot."""
    own = not db.conn.in_transaction
    if own:
        db.conn.execute("BEGIN")
    try:
        rows = db.execute("SELECT submitted_on, text_version FROM responses WHERE survey_id = ? ORDER BY id",
                          [stored.id]).fetchall()
        data = load_db_dataset(db, stored.slug)
    finally:
        if own:
            db.conn.execute("COMMIT")
    days = np.asarray([day for day, _ in rows], dtype=str)
    return days, [version for _, version in rows], data


def _column_cells(q, column: np.ndarray) -> Counter:
    answered = column[column != NOT_ANSWERED]
    if not len(answered):
        return Counter()
    return Counter({(q.id, stat, int(cell)): int(n) for stat, cell, n in
                    aggregates.cell_rows(q, q.qtype.column_stats(q, answered)) if n})


def expected(db: sqlite_utils.Database, stored: StoredSurvey) -> Derived:
    """Every aggregate of the survey as its stored reports make it."""
    survey = stored.survey
    days, versions, data = _read_reports(db, stored)
    counts, cells = Counter(), Counter()
    for q in survey.questions:
        column = data.columns[q.id]
        if q.qtype.categorical:
            counts.update({(q.id, i): int(n) for i, n in enumerate(np.bincount(column[column >= 0], minlength=q.k))})
        else:
            cells += _column_cells(q, column)
    patterns = Counter(zip(days.tolist(), aggregates.encode_columns(survey, data.columns))) if len(days) else Counter()
    return Derived(responses=len(days), days=Counter(days.tolist()), versions=Counter(versions),
                   counts=counts, cells=cells, patterns=patterns, raking=_expected_raking(db, stored, data))


def _due(db: sqlite_utils.Database, survey: StoredSurvey, column: str) -> bool:
    """Whether the survey's ``raking_cells_due`` (m17) or ``aggregates_due`` (m19) mark is set."""
    return bool(db.execute(f"SELECT {column} FROM surveys WHERE id = ?", [survey.id]).fetchone()[0])


def _expected_raking(db, stored: StoredSurvey, data) -> Counter | None:
    if _due(db, stored, "raking_cells_due"):
        return None
    survey, out = stored.survey, Counter()
    outside = aggregates.outside_patterns(survey)
    if not outside:
        return out
    raking = np.stack([data.columns[q.id] for q in aggregates.raking_questions(survey)], axis=1)
    cells, inverse = np.unique(raking, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    for i, row in enumerate(cells.tolist()):
        key = ",".join(map(str, row))
        for q in outside:
            for (_, stat, cell), n in _column_cells(q, data.columns[q.id][inverse == i]).items():
                if stat in q.qtype.raking_stats:
                    out[q.id, key, stat, cell] = n
    return out


def stored(db: sqlite_utils.Database, survey: StoredSurvey) -> Derived:
    """Every aggregate of the survey as its tables hold it."""
    sid = survey.id
    counts = Counter({(qid, option): n for qid, option, n in
                      db.execute("SELECT qid, option, count FROM counts WHERE survey_id = ?", [sid])})
    cells = Counter({(qid, stat, cell): n for qid, stat, cell, n in db.execute(
        "SELECT qid, stat, cell, count FROM cell_counts WHERE survey_id = ? AND count != 0", [sid])})
    patterns = Counter()
    for day, pattern, n in slots.stored_patterns(db, sid):
        patterns[day, pattern] += n
    raking = None if _due(db, survey, "raking_cells_due") else Counter({row[:4]: row[4] for row in db.execute(
        "SELECT qid, cell, stat, code, count FROM raking_cells WHERE survey_id = ? AND count != 0", [sid])})
    days = Counter()
    for (day, _), n in patterns.items():
        days[day] += n
    return Derived(responses=sum(patterns.values()), days=days, versions=Counter(), counts=counts, cells=cells,
                   patterns=patterns, raking=raking)


def _compare(slug: str, structure: str, have: Counter, want: Counter, name) -> list[Gap]:
    """One gap per key where ``have`` (the table) and ``want`` (the reports) differ, :data:`SHOWN` at most."""
    keys = sorted((k for k in set(have) | set(want) if have.get(k, 0) != want.get(k, 0)), key=repr)
    gaps = [Gap(slug, structure, f"{name(k)} {have.get(k, 0)}, responses {want.get(k, 0)}") for k in keys[:SHOWN]]
    if len(keys) > SHOWN:
        gaps.append(Gap(slug, structure, f"{len(keys) - SHOWN} more disagreements"))
    return gaps


def _pattern_name(survey):
    questions = aggregates.pattern_questions(survey)
    dtype = aggregates._dtype(survey)

    def name(key) -> str:
        day, pattern = key
        codes = np.frombuffer(pattern, dtype=dtype).astype(np.int64) - 1
        return f"{day} {{{', '.join(f'{q.id}: {c}' for q, c in zip(questions, codes) if c >= 0)}}}"
    return name


def check_survey(db: sqlite_utils.Database, survey: StoredSurvey) -> list[Gap]:
    """Every disagreement between the survey's aggregates and its stored reports (reads every report)."""
    slug, want, have = survey.slug, expected(db, survey), stored(db, survey)
    gaps = _structural(db, survey, want)
    if have.responses != want.responses:
        gaps.append(Gap(slug, "answer patterns", f"{have.responses}, responses {want.responses}"))
    gaps += _compare(slug, "answer patterns by day", have.days, want.days, str)
    gaps += _compare(slug, "answer patterns", have.patterns, want.patterns, _pattern_name(survey.survey))
    gaps += _compare(slug, "counts", have.counts, want.counts, lambda k: f"{k[0]} option {k[1]}")
    gaps += _compare(slug, "cell counts", have.cells, want.cells, lambda k: f"{k[0]} {k[1]} {k[2]}")
    if want.raking is not None:
        gaps += _compare(slug, "raking cells", have.raking, want.raking,
                         lambda k: f"{k[0]} cell [{k[1]}] {k[2]} {k[3]}")
    return gaps


def _structural(db: sqlite_utils.Database, survey: StoredSurvey, want: Derived) -> list[Gap]:
    """The slots' sizes, the text versions and the buckets' layout."""
    slug, sid, gaps = survey.slug, survey.id, []
    sizes = slots.sizes(db.conn, sid)
    if sizes is not None:
        total, filled = db.execute("SELECT count(*), ifnull(sum(filled = 1), 0) FROM response_slots "
                                   "WHERE survey_id = ?", [sid]).fetchone()
        if sizes[1] != filled:
            gaps.append(Gap(slug, "slot sizes", f"filled {sizes[1]}, filled slots {filled}"))
        if sizes[0] != total:
            gaps.append(Gap(slug, "slot sizes", f"slots {sizes[0]}, slots stored {total}"))
    elif want.responses:
        gaps.append(Gap(slug, "slot sizes", f"none, responses {want.responses}"))
    off_rule = db.execute(f"SELECT count(*) {slots.OTHER_DAY_VERSION}", [sid]).fetchone()[0]
    if off_rule:
        gaps.append(Gap(slug, "text versions", f"{off_rule} responses record another wording than their day began with"))
    latest = db.execute("SELECT text_version FROM surveys WHERE id = ?", [sid]).fetchone()[0]
    wrong = sum(n for version, n in want.versions.items() if not 1 <= (version or 0) <= latest)
    if wrong:
        gaps.append(Gap(slug, "text versions", f"{wrong} responses of a version after the survey's {latest}"))
    return gaps + _bucket_layout(db, survey)


def _bucket_layout(db: sqlite_utils.Database, survey: StoredSurvey) -> list[Gap]:
    """Each day's pattern buckets: numbered 0..B−1, each of the survey's fixed size."""
    slug, gaps = survey.slug, []
    width = 8 + len(aggregates.encode(survey.survey, {}))
    by_day: dict[str, list[int]] = {}
    for day, bucket, entries in db.execute("SELECT day, bucket, entries FROM pattern_buckets WHERE survey_id = ?",
                                           [survey.id]):
        by_day.setdefault(day, []).append(bucket)
        if len(entries) != slots.ENTRIES * width:
            gaps.append(Gap(slug, "pattern buckets", f"{day} bucket {bucket}: {len(entries)} bytes, "
                                                     f"{slots.ENTRIES * width} expected"))
    for day, buckets in sorted(by_day.items()):
        if sorted(buckets) != list(range(len(buckets))):
            gaps.append(Gap(slug, "pattern buckets", f"{day}: {len(buckets)} buckets numbered "
                                                     f"{min(buckets)}..{max(buckets)}, not 0..{len(buckets) - 1}"))
    return gaps


def check_ledger(db: sqlite_utils.Database, survey: StoredSurvey) -> list[Gap]:
    """The release ledger: what it spent within the budget, every row for a release of the survey."""
    gaps = []
    row = db.execute("SELECT epsilon FROM release_budgets WHERE survey_id = ?", [survey.id]).fetchone()
    spent = db.execute("SELECT ifnull(sum(epsilon), 0) FROM release_ledger WHERE survey_id = ?",
                       [survey.id]).fetchone()[0]
    if spent and (row is None or spent > row[0] * (1 + 1e-9)):
        gaps.append(Gap(survey.slug, "release ledger", f"spent ε {spent:g}, budget {row[0] if row else 'none'}"))
    strays = db.execute("SELECT count(*) FROM release_ledger l LEFT JOIN releases r ON r.id = l.release_id "
                        "WHERE l.survey_id = ? AND (r.id IS NULL OR r.survey_id != l.survey_id)",
                        [survey.id]).fetchone()[0]
    if strays:
        gaps.append(Gap(survey.slug, "release ledger", f"{strays} rows for no release of the survey"))
    return gaps


def surveys_of(db: sqlite_utils.Database, slugs=None) -> list[StoredSurvey]:
    names = [s for (s,) in db.execute("SELECT slug FROM surveys ORDER BY slug")] if slugs is None else list(slugs)
    found = []
    for slug in names:
        survey = get_survey(db, slug)
        if survey is None:
            raise LookupError(f"no survey {slug!r} in the database")
        found.append(survey)
    return found


def check(db: sqlite_utils.Database, slugs=None, progress=None) -> list[Gap]:
    """Every disagreement in the database (or in the surveys ``slugs``); [] when all agree.
    ``progress(n)`` is called with each survey's number of responses once it is checked."""
    gaps = []
    for survey in surveys_of(db, slugs):
        gaps += check_survey(db, survey) + check_ledger(db, survey)
        if progress is not None:
            progress(respondents(db, survey))
    return gaps


def respondents(db: sqlite_utils.Database, survey: StoredSurvey) -> int:
    """The survey's number of stored responses, from its slots' sizes (0 before its first)."""
    sizes = slots.sizes(db.conn, survey.id)
    return sizes[1] if sizes else 0


def quick_check(db: sqlite_utils.Database) -> dict[str, list[Gap]]:
    """Per survey, the disagreements found without reading a report or scanning the slots (O(answer
    patterns), whatever the number of responses): the answer patterns' total against the number of
    filled slots the slots' sizes count (both kept in each insert's transaction), the buckets' layout,
    and the per-option counts of the single choices the patterns hold against the patterns'.  What
    only a scan would find — a slot filled behind the sizes' back, a pattern on the wrong day — is
    :func:`check`'s."""
    out: dict[str, list[Gap]] = {}
    for survey in surveys_of(db):
        have, n = stored(db, survey), respondents(db, survey)
        gaps = _bucket_layout(db, survey)
        if have.responses != n:
            gaps.append(Gap(survey.slug, "answer patterns", f"{have.responses}, responses {n}"))
        gaps += _compare(survey.slug, "counts", Counter({k: c for k, c in have.counts.items() if k[0] in
                                                         _patterned_choices(survey)}),
                         _counts_of_patterns(survey, have.patterns), lambda k: f"{k[0]} option {k[1]}")
        if gaps:
            out[survey.slug] = gaps
    return out


def _patterned_choices(survey: StoredSurvey) -> set[str]:
    return {q.id for q in aggregates.pattern_questions(survey.survey) if q.qtype.categorical}


def _counts_of_patterns(survey: StoredSurvey, patterns: Counter) -> Counter:
    """The per-option counts of the single choices in the answer patterns."""
    questions = aggregates.pattern_questions(survey.survey)
    dtype = aggregates._dtype(survey.survey)
    out = Counter({(q.id, i): 0 for q in questions if q.qtype.categorical for i in range(q.k)})
    for (_, pattern), n in patterns.items():
        for q, code in zip(questions, np.frombuffer(pattern, dtype=dtype).tolist()):
            if q.qtype.categorical and code:
                out[q.id, code - 1] += n
    return out


# ---------------------------------------------------------------- repair

def rebuild(db: sqlite_utils.Database, survey: StoredSurvey) -> int:
    """Write every aggregate of the survey again from its stored reports, inside the caller's write
    transaction; return the number of responses.  Counts are zeroed in place and added again; the
    cell counts, answer patterns and raking cells are deleted and written again in key order, day by
    day, as inserts write them (:func:`.responses.add_statistics`); the slots' sizes are counted again, and a
    response's text version set to the one its day began with where it is not (:data:`.slots.DAY_VERSION`)."""
    sid, conn = survey.id, db.conn
    days, _, data = _read_reports(db, survey)
    conn.executemany("INSERT OR IGNORE INTO counts (survey_id, qid, option, count, pad) VALUES (?, ?, ?, 0, ?)",
                     [(sid, q.id, i, slots.pad_of(0)) for q in survey.survey.questions
                      if q.qtype.categorical for i in range(q.k)])
    conn.execute("UPDATE counts SET count = 0, pad = ? WHERE survey_id = ?", [slots.pad_of(0), sid])
    for table in ("cell_counts", "pattern_buckets", "answer_patterns", "raking_cells"):
        conn.execute(f"DELETE FROM {table} WHERE survey_id = ?", [sid])
    aggregates.forget(db, sid)
    for day in sorted(set(days.tolist())):
        mine = days == day
        add_statistics(db, survey, day, {qid: column[mine] for qid, column in data.columns.items()})
    conn.execute("UPDATE surveys SET raking_cells_due = 0 WHERE id = ?", [sid])
    conn.execute(f"UPDATE response_slots SET text_version = {slots.OFFSET} + "  # in place: eight bytes
                 f"{slots.DAY_VERSION.replace('?2', 'submitted_on')} WHERE id IN (SELECT id {slots.OTHER_DAY_VERSION}) "
                 "AND survey_id = ?1", [sid])
    total, filled = conn.execute("SELECT count(*), ifnull(sum(filled = 1), 0) FROM response_slots "
                                 "WHERE survey_id = ?", [sid]).fetchone()
    conn.execute("UPDATE response_slot_sizes SET slots = ?, filled = ? WHERE survey_id = ?",
                 [slots.OFFSET + total, slots.OFFSET + filled, sid])
    return len(days)


def repair(db: sqlite_utils.Database, slugs=None) -> list[str]:
    """Rebuild the aggregates of every survey (or of ``slugs``) that :func:`check` finds wrong, one write
    transaction each; return the slugs rebuilt."""
    return rebuild_surveys(db, [survey.slug for survey in surveys_of(db, slugs) if check_survey(db, survey)])


def rebuild_surveys(db: sqlite_utils.Database, slugs) -> list[str]:
    """:func:`rebuild` each survey of ``slugs``, one write transaction each; return the slugs."""
    for slug in slugs:
        with write_transaction(db):
            rebuild(db, get_survey(db, slug))
    return list(slugs)


def repair_due(db: sqlite_utils.Database) -> list[str]:
    """Rebuild the surveys migration m19 marked (``aggregates_due``), one write transaction each, and
    clear their mark; return their slugs."""
    done = []
    for (slug,) in db.execute("SELECT slug FROM surveys WHERE aggregates_due = 1 ORDER BY slug").fetchall():
        survey = get_survey(db, slug)
        with write_transaction(db):
            if _due(db, survey, "aggregates_due"):
                rebuild(db, survey)
                db.execute("UPDATE surveys SET aggregates_due = 0 WHERE id = ?", [survey.id])
                done.append(slug)
    return done


def open_repaired(path) -> sqlite_utils.Database:
    """:func:`.db.init_db` (create or upgrade the schema), then :func:`repair_due`: how the app and the
    command line open a database they may write to."""
    db = init_db(path)
    repair_due(db)
    return db


def repair_quick(db: sqlite_utils.Database) -> tuple[list[Gap], list[str]]:
    """What ``deniable serve`` does at start: :func:`repair_due`, then :func:`quick_check`, rebuilding each
    survey it finds short; ``(the gaps found, the slugs rebuilt)``."""
    rebuilt = repair_due(db)
    found = quick_check(db)
    rebuilt += rebuild_surveys(db, found)
    return [gap for gaps in found.values() for gap in gaps], rebuilt


def summary(gaps: list[Gap], rebuilt: list[str]) -> str:
    """The one log line of a start's check."""
    if not gaps and not rebuilt:
        return "check: every survey's aggregates agree with its responses"
    return (f"check: rebuilt the aggregates of {len(rebuilt)} survey(s) from their responses "
            f"({', '.join(sorted(set(rebuilt)))}); {len(gaps)} disagreement(s) found"
            + (f", first: {gaps[0]}" if gaps else ""))


def as_json(gaps: list[Gap]) -> str:
    return json.dumps([{"survey": g.slug, "structure": g.structure, "gap": g.detail} for g in gaps],
                      ensure_ascii=False)
