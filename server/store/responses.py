"""Reports: validation, storage (one short transaction each), bulk insert and loading (exports: :mod:`.exports`).

Only randomized reports are stored, with the design they were made under (docs/design.md,
invariant 2): a row holds ``reports`` ``{qid: report}`` (an option index, or the JSON report of
another question type: :mod:`deniable.server.survey.cells`), ``design`` ``{qid: [k, threshold]}``
for a choice (``threshold`` null when asked directly) or ``{qid: [type, …integers]}`` for the other
types (:func:`design_of`), and the day.  No IP
address, no user agent, no time of day, and no order (invariant 6): a response's key is random
(:func:`new_response_id`), so the table, an export and every id sort in an order that
has nothing to do with the order of submission, and a response overwrites a random free slot made
ahead of need (:mod:`.slots`), so neither does the file's page layout.  Every insert also bumps ``counts`` in the same
transaction (``cell_counts`` for the types other than choice), so the estimators' sufficient
statistics always agree with the rows.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable, Mapping
from contextlib import contextmanager

import numpy as np
import sqlite_utils

from deniable.client.mechanism import MechanismError, check_options
from deniable.errors import FieldError
from deniable.server.survey import logic
from deniable.server.survey.dataset import Dataset
from deniable.server.survey.definition import Survey, per_survey

from . import aggregates, invitations, slots
from .db import write_transaction
from .surveys import StoredSurvey, get_survey, today

BATCH_SIZE = 50_000
FETCH_SIZE = 100_000


def new_response_id() -> str:
    """A random response identifier (96 bits): it orders nothing and reveals nothing."""
    return slots.new_id()


class ReportError(FieldError):
    """A submission is invalid; ``field`` names the question (or the part of the request)."""


class SurveyClosedError(ReportError):
    """The survey does not accept responses (not open)."""


def _compact(data) -> str:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def check_open(stored: StoredSurvey) -> None:
    if stored.status != "open":
        raise SurveyClosedError(f"survey {stored.slug!r} is {stored.status}: it does not accept responses")


def validate_reports(stored: StoredSurvey, reports) -> dict[str, int]:
    """Return the answered reports' codes ``{qid: int}`` in question order, or raise :class:`ReportError`.

    A choice's report is an ``int`` (never a bool, float or string) in ``0..k−1``; the other
    types' reports are checked by their type's ``check_report`` (a numeric
    report in its range, ticks as a list of 0/1, a list experiment's ``{"arm", "count"}``);
    required questions are present; no unknown question ids.  A missing optional question is not
    answered.  A question whose ``show_if`` is false for the answers before it (:mod:`~deniable.server.survey.logic`)
    is not asked: an answer to it is refused, and it is not required.
    """
    survey = stored.survey
    if not isinstance(reports, Mapping):
        raise ReportError("reports: must be an object mapping question ids to option indices", "reports")
    known = {q.id for q in survey.questions}
    for key in reports:
        if key not in known:
            raise ReportError(f"{key}: survey {survey.slug!r} has no question with this id", str(key))
    clean, asked = {}, {}
    for q in survey.questions:
        asked[q.id] = logic.is_shown(survey, q, asked, clean)
        if not asked[q.id]:  # display logic: hidden, so not asked
            if q.id in reports:
                raise ReportError(f"{q.id}: this question is not asked of this respondent ({logic.asked_of(q)}"
                                  "): send no answer for it", q.id)
            continue
        if q.id not in reports:
            if q.required:
                raise ReportError(f"{q.id}: an answer is required", q.id)
            continue
        try:
            clean[q.id] = q.qtype.check_report(q, reports[q.id])
        except MechanismError as exc:
            raise ReportError(f"{q.id}: {exc}", q.id) from None
    return clean


def design_of(survey: Survey) -> dict[str, list]:
    """The mechanism each report is made under, as integers (``threshold`` None when asked directly).

    Choice ``[k, threshold]``; numeric ``["grid", m, G, threshold]`` or ``["laplace", m, threshold,
    L]``; multi ``["multi", K, threshold]`` (each tick's); list ``["list", J, threshold]``.
    """
    return {q.id: q.qtype.stored_design(q) for q in survey.questions}


def _reports_json(survey: Survey, clean: dict[str, int]) -> dict:
    """The stored JSON reports of validated codes (a choice's is its option index)."""
    return {q.id: q.qtype.report_of(q, clean[q.id]) for q in survey.questions if q.id in clean}


def add_statistics(db: sqlite_utils.Database, stored: StoredSurvey, day: str, columns: dict[str, np.ndarray],
                   patterns=None, pattern_counts=None) -> None:
    """Add reports (columns of codes, −1 = not answered) to the counts, cell counts and answer patterns.

    Call inside the insert's transaction.
    """
    survey = stored.survey
    if patterns is None:
        patterns, pattern_counts = np.unique(np.array(aggregates.encode_columns(survey, columns), dtype=object),
                                             return_counts=True)
    aggregates.add(db, stored.id, day, list(patterns), pattern_counts)
    for q in survey.questions:
        column = np.asarray(columns[q.id])
        if q.qtype.categorical:
            counts = np.bincount(column[column >= 0], minlength=q.k)
            db.conn.executemany(
                f"UPDATE counts SET count = count + :n, pad = {slots.padding('count + :n')} "
                "WHERE survey_id = :survey AND qid = :qid AND option = :option",
                [{"n": int(c), "survey": stored.id, "qid": q.id, "option": i} for i, c in enumerate(counts) if c],
            )
        elif (column >= 0).any():
            aggregates.add_cells(db, stored.id, q, q.qtype.column_stats(q, column))
    add_raking_statistics(db, stored, columns)


def add_raking_statistics(db: sqlite_utils.Database, stored: StoredSurvey, columns: dict[str, np.ndarray]) -> None:
    """Add the reports' statistics per raking cell (:func:`.aggregates.add_raking_cells`); inside the
    insert's transaction."""
    survey = stored.survey
    questions = aggregates.outside_patterns(survey)
    if not questions:
        return
    raking = np.stack([np.asarray(columns[q.id], dtype=np.int64) for q in aggregates.raking_questions(survey)], axis=1)
    cells, inverse = np.unique(raking, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    keys = [",".join(map(str, row)) for row in cells.tolist()]
    for q in questions:
        column = np.asarray(columns[q.id], dtype=np.int64)
        found = [(keys[i], q.qtype.column_stats(q, column[(inverse == i) & (column >= 0)]))
                 for i in np.unique(inverse[column >= 0])]
        aggregates.add_raking_cells(db, stored.id, q, found)


RAKING_CELLS_DUE = "SELECT raking_cells_due FROM surveys WHERE id = ?"


def raking_cells_of(db: sqlite_utils.Database, stored: StoredSurvey,
                    writer: Callable[[], sqlite_utils.Database] | None = None) -> dict:
    """The survey's :func:`.aggregates.raking_cells`.  A survey that had responses before they were
    kept (m17, ``raking_cells_due``) gets them first, from one pass over its responses, once, through
    ``writer()`` (a write connection, when ``db`` is read-only) or ``db``."""
    if db.execute(RAKING_CELLS_DUE, [stored.id]).fetchone()[0]:
        write = db if writer is None else writer()
        with write_transaction(write):
            if write.execute(RAKING_CELLS_DUE, [stored.id]).fetchone()[0]:
                write.execute("DELETE FROM raking_cells WHERE survey_id = ?", [stored.id])
                if aggregates.outside_patterns(stored.survey):
                    add_raking_statistics(write, stored, load_db_dataset(write, stored.slug).columns)
                write.execute("UPDATE surveys SET raking_cells_due = 0 WHERE id = ?", [stored.id])
    return aggregates.raking_cells(db, stored.id)


def raking_sources(db: sqlite_utils.Database, stored: StoredSurvey, patterns: Dataset,
                   writer: Callable[[], sqlite_utils.Database] | None = None,
                   read_only: bool = False) -> dict[str, list[Dataset]]:
    """Per question the answer ``patterns`` leave out, what its raked estimates read
    (:func:`.aggregates.raking_datasets`, from the raking cells: no row scan).  ``read_only`` (the
    command line, which never writes to the file it analyses): a survey whose cells are still due
    is read from its rows instead, one dataset of every response per question, and nothing is written."""
    questions = aggregates.outside_patterns(stored.survey)
    if not questions:
        return {}
    if read_only and db.execute(RAKING_CELLS_DUE, [stored.id]).fetchone()[0]:
        rows = load_db_dataset(db, stored.slug).columns
        ids = [q.id for q in aggregates.raking_questions(stored.survey)]
        return {q.id: [Dataset(stored.survey.only([*ids, q.id]), {qid: rows[qid] for qid in (*ids, q.id)})]
                for q in questions}
    return aggregates.raking_datasets(stored.survey, patterns, raking_cells_of(db, stored, writer))


COUNT_ONE = (f"UPDATE counts SET count = count + 1, pad = {slots.padding('count + 1')} "
             "WHERE survey_id = ? AND qid = ? AND option = ?")


class _Storing:
    """What storing a response of one survey takes, derived once per survey (:func:`_storing`): the
    submission path stores every response of a survey alike."""

    def __init__(self, survey: Survey):
        self.design = design_of(survey)
        self.questions = {q.id: q for q in survey.questions}
        self.categorical = frozenset(q.id for q in survey.questions if q.qtype.categorical)
        self.outside = aggregates.outside_patterns(survey)
        self.designs: dict[tuple[str, ...], str] = {}  # the answered questions → the design's JSON

    def design_json(self, clean: dict[str, int]) -> str:
        """The stored ``design`` of a response that answers the questions of ``clean``."""
        answered = tuple(clean)
        text = self.designs.get(answered)
        if text is None:
            if len(self.designs) >= 4096:  # (optional questions and display logic: at most 2^questions)
                self.designs.clear()
            text = self.designs[answered] = _compact({qid: self.design[qid] for qid in clean})
        return text


_storing = per_survey(_Storing)

STATUS = "SELECT status, invitation_only FROM surveys WHERE id = ?"


def insert_validated(db: sqlite_utils.Database, stored: StoredSurvey, clean: dict[str, int],
                     invitation: str | None, day: str, status: tuple | None = None) -> tuple[str, bool]:
    """Insert one response already validated (:func:`check_open`, :func:`validate_reports`), inside the
    caller's write transaction; return its random id and whether it consumed an invitation.

    The survey's status is read again here (:class:`SurveyClosedError` unless open) and the
    invitation consumed (:class:`~.invitations.InvitationError`) before anything is written, so a
    response refused here leaves nothing behind and the transaction can go on with others
    (:mod:`deniable.server.web.respondent.group_commit`).  ``status``: the survey's row of
    :data:`STATUS` if the caller read it in this same transaction (nothing changes it before the
    commit).  The caller scrubs before acknowledging a response that consumed an invitation
    (:func:`.scrub.scrub_before_answering`).
    """
    conn = db.conn  # the raw connection: this runs on every submission
    row = status or conn.execute(STATUS, [stored.id]).fetchone()
    if row is None or row[0] != "open":
        raise SurveyClosedError(f"survey {stored.slug!r} does not accept responses")
    if row[1]:
        invitations.consume(db, stored.id, invitation)
    plan = _storing(stored.survey)
    response_id = slots.fill(conn, stored.id, day, _compact(_reports_json(stored.survey, clean)),
                             plan.design_json(clean))
    aggregates.add(db, stored.id, day, [aggregates.encode(stored.survey, clean)])
    conn.executemany(COUNT_ONE, [(stored.id, qid, option) for qid, option in clean.items() if qid in plan.categorical])
    for qid, code in clean.items():
        if qid not in plan.categorical:
            q = plan.questions[qid]
            aggregates.add_cells(db, stored.id, q, q.qtype.column_stats(q, np.array([code])))
    if plan.outside:
        cell = aggregates.raking_cell(stored.survey, clean)
        for q in plan.outside:
            if q.id in clean:
                aggregates.add_raking_cells(db, stored.id, q, [(cell, q.qtype.column_stats(q, np.array([clean[q.id]])))])
    return response_id, bool(row[1])


def load_db_dataset(db: sqlite_utils.Database, slug: str):
    """Load a stored survey's reports as a :class:`deniable.server.survey.dataset.Dataset` of codes (−1 = not answered).

    One pass over the rows with ``json_extract`` per question, fetched in chunks into
    preallocated numpy arrays: about 2 s per million rows of three questions.  A multi or list
    report comes out of ``json_extract`` as JSON text, mapped to its code once per distinct text.
    Raises LookupError for an unknown slug.

    >>> load_db_dataset(db, "demo").columns["drug_use"][:3]   # doctest: +SKIP
    array([1, 0, 0])
    """
    return scan_rows(db, slug)[0]


def scan_rows(db: sqlite_utils.Database, slug: str) -> tuple[Dataset, np.ndarray]:
    """:func:`load_db_dataset`, and in the same pass each row's ``text_version`` (the wording it was
    answered under): the row scan, one row a response in the responses' key order."""
    distinct, which, versions = scan_distinct(db, slug)
    return Dataset(distinct.survey, {qid: codes[which] for qid, codes in distinct.columns.items()}), versions


def scan_distinct(db: sqlite_utils.Database, slug: str, *,
                  versions: bool = True) -> tuple[Dataset, np.ndarray, np.ndarray | None]:
    """The row scan, each distinct row once: the codes of each distinct ``reports`` text (a dataset
    of those rows), the distinct text of each response (in the responses' key order) and, if
    ``versions``, each response's ``text_version`` (None if not: a survey whose wording was never
    fixed records 1 on every row, and not reading them spares a fifth of the scan).

    One pass over the rows in key order, fetched in chunks: each row's ``reports`` text is mapped to
    its place among the distinct texts (a survey's responses repeat few of them: its answer
    patterns), and each distinct text is parsed once, each report checked as the type reads it —
    not ``json_extract`` once per question and row (10⁶ rows of three questions: about 1 s, where
    that took 2).  Raises LookupError for an unknown slug."""
    stored = get_survey(db, slug)
    if stored is None:
        raise LookupError(f"no survey {slug!r} in the database")
    with _collector_paused():  # it would walk every row fetched, again and again, as the objects pile up
        return _scan(db, stored, versions)


@contextmanager
def _collector_paused():
    """Python's cyclic garbage collector off for the block (nothing made in it forms cycles)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


SCAN = "SELECT reports, text_version FROM responses WHERE survey_id = ? ORDER BY id"
SCAN_REPORTS = "SELECT reports FROM responses WHERE survey_id = ? ORDER BY id"


def _scan(db: sqlite_utils.Database, stored: StoredSurvey,
          with_versions: bool) -> tuple[Dataset, np.ndarray, np.ndarray | None]:
    slug = stored.slug
    distinct: dict[str, int] = {}
    which, versions = [], []
    cursor = db.conn.execute(SCAN if with_versions else SCAN_REPORTS, [stored.id])
    while rows := cursor.fetchmany(FETCH_SIZE):
        which.append(np.fromiter((distinct.setdefault(row[0], len(distinct)) for row in rows), np.int64, len(rows)))
        if with_versions:
            versions.append(np.fromiter((version for _, version in rows), np.int64, len(rows)))
    cursor.close()
    which = np.concatenate(which) if which else np.empty(0, dtype=np.int64)
    reports = json.loads("[" + ",".join(distinct) + "]") if distinct else []  # one parse, in their places' order
    columns = {}
    for q in stored.survey.questions:
        codes = _codes_of(q, reports)
        bad = (codes < -1) | (codes >= q.qtype.n_cells(q))
        if bad.any():
            raise ValueError(f"{slug}: stored report for {q.id} out of range: {codes[bad][0]}")
        columns[q.id] = codes
    if with_versions:
        versions = np.concatenate(versions) if versions else np.empty(0, dtype=np.int64)
    return Dataset(stored.survey, columns), which, versions if with_versions else None


def _codes_of(q, reports: list[dict]) -> np.ndarray:
    """The question's code in each parsed ``reports`` (−1: not answered): a multi, list or two-group
    report as its type checks it (once per distinct report), any other the number less the type's
    report offset."""
    qid = q.id
    if not q.qtype.structured_report:
        missing = aggregates.missing_code(q)  # below every report
        raw = np.fromiter((missing if (v := r.get(qid)) is None else v for r in reports), np.int64, len(reports))
        offset = q.qtype.report_offset(q)
        return np.where(raw == missing, -1, raw - offset) if offset or missing != -1 else raw
    memo: dict = {None: -1}
    out = np.empty(len(reports), dtype=np.int64)
    for i, report in enumerate(reports):
        value = report.get(qid)
        key = tuple(value) if isinstance(value, list) else repr(value) if isinstance(value, dict) else value
        try:
            code = memo.get(key)
        except TypeError:  # a list holding lists: by its text
            key = repr(value)
            code = memo.get(key)
        if code is None:
            code = memo[key] = q.qtype.check_report(q, value)
        out[i] = code
    return out


def _check_columns(survey: Survey, columns: Mapping[str, np.ndarray]) -> tuple[int, dict[str, np.ndarray]]:
    known = {q.id for q in survey.questions}
    for key in columns:
        if key not in known:
            raise ValueError(f"{key}: survey {survey.slug!r} has no question with this id")
    lengths = {len(np.asarray(c)) for c in columns.values()}
    if len(lengths) > 1:
        raise ValueError(f"columns: all columns must have the same length, got {sorted(lengths)}")
    n = lengths.pop() if lengths else 0
    checked = {}
    for q in survey.questions:
        if q.id not in columns:
            if q.required and q.show_if is None and n:
                raise ValueError(f"{q.id}: required question has no column")
            checked[q.id] = np.full(n, -1, dtype=np.int64)
            continue
        column = np.asarray(columns[q.id])
        if column.ndim != 1 or column.dtype.kind not in "iu":
            raise ValueError(f"{q.id}: must be a 1-d array of integer option indices (codes), got {column.dtype}")
        try:
            column = check_options(column, q.qtype.n_cells(q), missing=True).astype(np.int64)
        except MechanismError as exc:
            raise ValueError(f"{q.id}: {exc}") from None
        invalid = q.qtype.invalid_codes(q, column)
        if invalid.any():
            raise ValueError(f"{q.id}: code {int(column[invalid][0])} is not a possible report (row {int(np.argmax(invalid))})")
        checked[q.id] = column
    asked = logic.asked_rows(survey, checked)  # display logic: a hidden question is not asked, so not required
    for q in survey.questions:
        column, shown = checked[q.id], asked.get(q.id)
        if shown is not None and ((~shown) & (column != -1)).any():
            raise ValueError(f"{q.id}: answered in row {int(np.argmax(~shown & (column != -1)))}, which was not asked "
                             f"this question ({logic.asked_of(q)})")
        missing = column == -1 if shown is None else shown & (column == -1)
        if q.required and missing.any():
            raise ValueError(f"{q.id}: required question not answered in row {int(np.argmax(missing))}")
    return n, checked


def insert_many(db: sqlite_utils.Database, stored: StoredSurvey, columns: Mapping[str, np.ndarray], *,
                batch_size: int = BATCH_SIZE, progress: Callable[[int, int], None] | None = None,
                submitted_on: str | None = None) -> int:
    """Bulk-insert already-randomized reports (−1 = not answered); return the number of rows.

    Each batch of ``batch_size`` rows is one ``BEGIN IMMEDIATE`` transaction that also adds the
    batch's option counts, so the counts agree with the rows after every commit and writers
    from the web app are never blocked for long.  ``progress(done, total)`` is called after each
    batch.  The survey's status is not checked: this is for ``deniable simulate --db``.
    About 7 s per million rows of three questions (SQLite's inserts dominate).

    >>> insert_many(db, get_survey(db, "demo"), {"drug_use": np.array([0, 1])}, progress=print)  # doctest: +SKIP
    """
    survey = stored.survey
    n, checked = _check_columns(survey, columns)
    day = submitted_on or today()
    design = design_of(survey)
    done = 0
    for start in range(0, n, batch_size):
        block = {q.id: checked[q.id][start:start + batch_size] for q in survey.questions}
        size = len(next(iter(block.values()))) if block else 0
        reports = np.full(size, "", dtype=object)
        designs = np.full(size, "", dtype=object)
        for q in survey.questions:
            # The JSON fragment of each distinct code in the block (with a leading comma that SQL
            # strips; "not answered" is the empty string): the rows' JSON is built by numpy's
            # elementwise concatenation instead of a Python loop per row.
            codes, inverse = np.unique(block[q.id], return_inverse=True)
            r_part = np.array([f',"{q.id}":{_compact(q.qtype.report_of(q, c))}' if c >= 0 else "" for c in codes],
                              dtype=object)
            d_part = np.array([f',"{q.id}":{_compact(design[q.id])}' if c >= 0 else "" for c in codes], dtype=object)
            reports = reports + r_part[inverse.reshape(-1)]
            designs = designs + d_part[inverse.reshape(-1)]
        # Free slots drawn at random, written in key order (:func:`.slots.fill_many`).
        with write_transaction(db):
            slots.fill_many(db.conn, stored.id, day, ["{" + rep[1:] + "}" for rep in reports.tolist()],
                            ["{" + des[1:] + "}" for des in designs.tolist()])
            add_statistics(db, stored, day, block)
        done += size
        if progress is not None:
            progress(done, n)
    return done
