"""A stored survey's exports: the responses (CSV, Parquet, SPSS, Stata) and the codebook that goes with them.

The same files, under the same names (:mod:`deniable.server.survey.filenames`), from the
dashboard and from ``deniable export``.  The reports, the wording each was answered under and
the wording history are read in one snapshot, so they agree with each other.

**From the answer patterns.**  A responses file is the answer patterns written out: each distinct
pattern (:func:`.aggregates.pattern_counts`) becomes ``count`` identical rows, and the rows are put
in an order drawn at random — a fresh uniform permutation per export, from a numpy Generator
seeded with 128 bits of :mod:`secrets` — so the file needs no row scan (O(distinct patterns) read,
then O(n) numpy work: 10⁶ responses in well under a second) and its order says nothing, by
construction: not when anyone answered, nor in which slot their response sits.  The file is the
same multiset of rows as the responses table, so every count, and every estimate, is the same.

Once the wording was fixed, each row's ``text-version`` is its pattern's day's: a response records
the wording its day began with, so every pattern (a day's) has one, read from the responses' days
and versions (:func:`_pattern_versions`: one pass without JSON, and the row scan instead if a day's
responses record two wordings).  The patterns do not hold everything a row does: a survey with a
question outside them (a discrete Laplace question, a check-all question of more than 7 options:
``in_patterns`` false) is exported by the **row scan** (:func:`.responses.scan_distinct`, about
1.8 s per 10⁶ responses), in the responses' key order (random identifiers: an order that says nothing
either).  :func:`from_patterns` says which.  Its CSV too is written a line per distinct row (a
distinct ``reports`` text with a wording), the lines repeated in that order.
"""

from __future__ import annotations

import datetime
import io
import os
import secrets
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import sqlite_utils

from deniable.server.survey import filenames
from deniable.server.survey.codebook import dumps_codebook
from deniable.server.survey.dataset import Dataset
from deniable.server.survey.files import write_responses_parquet
from deniable.server.survey.responses_csv import write_responses_csv
from deniable.server.survey.statfiles import write_stat_file

from .aggregates import pattern_counts
from .responses import scan_distinct
from .surveys import StoredSurvey, get_survey
from .wording import wording_history

FORMATS = ("csv", "parquet", "sav", "dta")


@dataclass(frozen=True)
class Export:
    stored: StoredSurvey
    dataset: Dataset
    text_versions: np.ndarray  # per response, the wording it was answered under
    history: list[dict]  # store.wording.wording_history
    source: str = "rows"  # "patterns": written from the answer patterns; "rows": the row scan
    patterns: Dataset | None = None  # each distinct row once (its codes: a pattern, or a row scan's distinct row), ...
    order: np.ndarray | None = None  # ... the one of each row of ``dataset``, in the file's order, ...
    pattern_versions: np.ndarray | None = None  # ... and the wording each records

    def codebook(self) -> str:
        """The codebook: the definition, each question's mechanism, the design fingerprint and,
        once the wording changed, every wording with the number of responses answered under it."""
        counts = dict(enumerate(np.bincount(self.text_versions, minlength=len(self.history) + 1)))
        return dumps_codebook(self.stored.survey, _wordings(self.history, counts))

    def responses(self, fmt: str = "csv") -> bytes:
        """The responses file in ``fmt`` (csv, parquet, sav or dta)."""
        if fmt == "csv" and self.order is not None:
            fast = _csv_from_patterns(self.patterns, self.order, self.pattern_versions)
            if fast is not None:
                return fast
        if fmt in ("csv", "parquet"):
            buffer = io.BytesIO()
            write = write_responses_csv if fmt == "csv" else write_responses_parquet
            write(buffer, self.dataset, text_versions=self.text_versions)
            return buffer.getvalue()
        if fmt not in FORMATS:
            raise ValueError(f"format: must be one of {', '.join(FORMATS)}, got {fmt!r}")
        # pyreadstat writes to a path only: a private temporary file, read back and removed.
        fd, name = tempfile.mkstemp(suffix=f".{fmt}")
        os.close(fd)
        try:
            write_stat_file(name, self.dataset, fmt, self.text_versions)
            return Path(name).read_bytes()
        finally:
            os.unlink(name)


def _csv_from_patterns(patterns: Dataset, order: np.ndarray, versions: np.ndarray) -> bytes | None:
    """The responses CSV of the rows ``patterns[order]`` (pattern ``i``'s ``text-version`` ``versions[i]``),
    written a line per pattern: :func:`~deniable.server.survey.responses_csv.write_responses_csv` writes
    each pattern once — the same design line, header, quoting and cells, a pattern's row being written
    as any row with those answers is — and the file is those lines repeated in ``order`` (10⁶ rows:
    one join of bytes, instead of formatting every row).  None when a line could not be told from the
    next (a cell with a line break), for the row-by-row writer."""
    buffer = io.BytesIO()
    write_responses_csv(buffer, patterns, text_versions=versions)
    text = buffer.getvalue()
    start = text.index(b"\n", text.index(b"\n") + 1) + 1  # after the design line and the header
    lines = text[start:].split(b"\n")
    if len(lines) != patterns.n_rows + 1 or lines[-1] != b"":
        return None
    rows = np.array([line + b"\n" for line in lines[:-1]] + [b""], dtype=object)
    return text[:start] + b"".join(rows[order].tolist())


def from_patterns(stored: StoredSurvey) -> bool:
    """Whether the survey's responses file can be written from its answer patterns: every question is
    in them (and, once the wording was fixed, :func:`_pattern_versions` finds each day's wording)."""
    return all(q.qtype.in_patterns(q) for q in stored.survey.questions)


DAY_VERSIONS = "SELECT submitted_on, text_version, count(*) FROM responses WHERE survey_id = ? GROUP BY 1, 2"


def _pattern_versions(db: sqlite_utils.Database, survey_id: int, patterns, history: list[dict]) -> np.ndarray | None:
    """The wording each pattern's responses record: a response records the wording its day began with
    (:data:`.slots.DAY_VERSION`), so a pattern, which is a day's, has one.  Read from the responses'
    days and versions (one pass, no JSON: about 1 s per 10⁶ responses), not assumed: None — the row
    scan — if a day's responses record more than one wording (responses off the rule, which
    ``deniable check`` reports) or a day's count differs from its patterns'.  All 1 while the
    wording was never fixed, with nothing read."""
    if not history:
        return np.ones(len(patterns.counts), dtype=np.int64)
    by_day: dict[str, tuple[int, int]] = {}
    for day, version, n in db.execute(DAY_VERSIONS, [survey_id]):
        if day in by_day:
            return None
        by_day[day] = (version, n)
    days, inverse = np.unique(np.asarray(patterns.days, dtype=str), return_inverse=True)
    days, inverse = days.tolist(), inverse.reshape(-1)
    per_day = np.bincount(inverse, weights=patterns.counts, minlength=len(days))
    if set(days) != set(by_day) or any(by_day[d][1] != n for d, n in zip(days, per_day)):
        return None
    return np.array([by_day[d][0] for d in days], dtype=np.int64)[inverse]


def load_export(db: sqlite_utils.Database, slug: str, *, rows: bool = False) -> Export:
    """Read survey ``slug``'s reports, their wording versions and the wording history in one
    read transaction (a consistent snapshot): from the answer patterns, in an order drawn at random,
    when :func:`from_patterns` allows it (and ``rows`` is false), else by the row scan.  Raises
    LookupError for an unknown slug."""
    stored = get_survey(db, slug)
    if stored is None:
        raise LookupError(f"no survey {slug!r} in the database")
    db.execute("BEGIN")
    try:
        history = wording_history(db, stored.id)
        counted = pattern_versions = None
        if not rows and from_patterns(stored):
            counted = pattern_counts(db, stored)
            pattern_versions = _pattern_versions(db, stored.id, counted, history)
        if pattern_versions is not None:
            order = _shuffled_order(counted.counts)
            dataset = _rows(stored, counted, order)
            patterns = Dataset(stored.survey, {q.id: np.asarray(counted.columns[q.id], dtype=np.int64)
                                               for q in stored.survey.questions})
            return Export(stored=stored, dataset=dataset, text_versions=pattern_versions[order], history=history,
                          source="patterns", patterns=patterns, order=order, pattern_versions=pattern_versions)
        distinct, which, versions = scan_distinct(db, slug, versions=bool(history))
        patterns, order, pattern_versions = _distinct_rows(distinct, which, versions)
        return Export(stored=stored, dataset=_rows(stored, patterns, order), text_versions=pattern_versions[order],
                      history=history, patterns=patterns, order=order, pattern_versions=pattern_versions)
    finally:
        db.execute("COMMIT")


def _distinct_rows(distinct: Dataset, which: np.ndarray, versions: np.ndarray | None):
    """The row scan's distinct rows as the file has them — a distinct ``reports`` text with each wording
    its responses record (all 1 while the wording was never fixed: ``versions`` None) — with the
    wording of each and the distinct row of every response, in the scan's order: what
    :func:`_csv_from_patterns` writes a line per distinct row."""
    if versions is None or which.size == 0:
        return distinct, which, np.ones(distinct.n_rows, dtype=np.int64)
    span = int(versions.max()) + 1
    pairs, order = np.unique(which * span + versions, return_inverse=True)
    text, pattern_versions = np.divmod(pairs, span)
    patterns = Dataset(distinct.survey, {qid: codes[text] for qid, codes in distinct.columns.items()})
    return patterns, order.reshape(-1), pattern_versions


def shuffled_rows(stored: StoredSurvey, patterns, rng: np.random.Generator | None = None) -> Dataset:
    """One row per response, from answer patterns: pattern ``i``'s codes ``counts[i]`` times, the rows
    in a uniformly random order (``rng``, by default seeded from :mod:`secrets`).

    The row order is ``rng.permutation`` of ``repeat(arange(patterns), counts)``: every arrangement of
    the multiset equally likely, whatever order the patterns were stored or read in.  The days of the
    patterns are dropped (the file has no day column)."""
    return _rows(stored, patterns, _shuffled_order(patterns.counts, rng))


def _shuffled_order(counts, rng: np.random.Generator | None = None) -> np.ndarray:
    """``rng.permutation(repeat(arange(patterns), counts))``: the pattern of each row (:func:`shuffled_rows`)."""
    rng = np.random.default_rng(secrets.randbits(128)) if rng is None else rng
    counts = np.asarray(counts, dtype=np.int64)
    return rng.permutation(np.repeat(np.arange(counts.size, dtype=np.int32), counts))


def _rows(stored: StoredSurvey, patterns, which: np.ndarray) -> Dataset:
    columns = {q.id: np.asarray(patterns.columns[q.id], dtype=np.int64)[which] for q in stored.survey.questions}
    return Dataset(stored.survey, columns)


def codebook_text(db: sqlite_utils.Database, slug: str) -> str:
    """The codebook alone, without reading the responses unless the wording was ever fixed (then
    one ``GROUP BY text_version``).  Raises LookupError for an unknown slug."""
    stored = get_survey(db, slug)
    if stored is None:
        raise LookupError(f"no survey {slug!r} in the database")
    history = wording_history(db, stored.id)
    counts = dict(db.execute("SELECT text_version, count(*) FROM responses WHERE survey_id = ? GROUP BY text_version",
                             [stored.id]).fetchall()) if history else {}
    return dumps_codebook(stored.survey, _wordings(history, counts))


def _wordings(history: list[dict], responses_per_version: dict) -> list[dict] | None:
    """The codebook's ``text_versions``: each wording, the day it was shown from (``since``), the first day
    whose responses record it (``recorded_from``: the next day, or None when it was fixed again the same
    day; the first wording is recorded from its own day) and how many responses record it."""
    if not history:
        return None
    last_of_day = {h["since"]: h["version"] for h in history}
    return [{"version": h["version"], "since": h["since"],
             "recorded_from": h["since"] if h["version"] == 1 else
             _next_day(h["since"]) if last_of_day[h["since"]] == h["version"] else None,
             "responses": int(responses_per_version.get(h["version"], 0)), "wording": h["wording"]} for h in history]


def _next_day(day: str) -> str:
    return (datetime.date.fromisoformat(day) + datetime.timedelta(days=1)).isoformat()


def write_export(db: sqlite_utils.Database, slug: str, out_dir, formats=("csv",)) -> list[Path]:
    """Write ``SLUG-responses.{csv,parquet,sav,dta}`` (as asked) and ``SLUG-codebook.json`` into ``out_dir``.

    >>> write_export(db, "demo", "out", ("csv", "sav"))   # doctest: +SKIP
    [PosixPath('out/demo-responses.csv'), PosixPath('out/demo-responses.sav'), PosixPath('out/demo-codebook.json')]
    """
    export = load_export(db, slug)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for fmt in formats:
        path = out / filenames.responses(slug, fmt)
        path.write_bytes(export.responses(fmt))
        paths.append(path)
    path = out / filenames.codebook(slug)
    path.write_text(export.codebook(), encoding="utf-8")
    paths.append(path)
    return paths
