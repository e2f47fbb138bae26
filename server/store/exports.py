"""A stored survey's exports: the responses (CSV, Parquet, SPSS, Stata) and the codebook that goes with them.

The same files, under the same names (:mod:`deniable.server.survey.filenames`), from the
dashboard and from ``deniable export``.  The reports, the wording each was answered under and
the wording history are read in one snapshot, so they agree with each other.
"""

from __future__ import annotations

import io
import os
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

from .responses import load_db_dataset
from .surveys import StoredSurvey, get_survey
from .wording import wording_history

FORMATS = ("csv", "parquet", "sav", "dta")


@dataclass(frozen=True)
class Export:
    stored: StoredSurvey
    dataset: Dataset
    text_versions: np.ndarray  # per response, the wording it was answered under
    history: list[dict]  # store.wording.wording_history

    def codebook(self) -> str:
        """The codebook: the definition, each question's mechanism, the design fingerprint and,
        once the wording changed, every wording with the number of responses answered under it."""
        counts = dict(enumerate(np.bincount(self.text_versions, minlength=len(self.history) + 1)))
        return dumps_codebook(self.stored.survey, _wordings(self.history, counts))

    def responses(self, fmt: str = "csv") -> bytes:
        """The responses file in ``fmt`` (csv, parquet, sav or dta)."""
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


def load_export(db: sqlite_utils.Database, slug: str) -> Export:
    """Read survey ``slug``'s reports, their wording versions and the wording history in one
    read transaction (a consistent snapshot).  Raises LookupError for an unknown slug."""
    stored = get_survey(db, slug)
    if stored is None:
        raise LookupError(f"no survey {slug!r} in the database")
    db.execute("BEGIN")
    try:
        dataset = load_db_dataset(db, slug)
        versions = np.fromiter(
            (row[0] for row in db.execute("SELECT text_version FROM responses WHERE survey_id = ? ORDER BY id",
                                          [stored.id])), dtype=np.int64)[:dataset.n_rows]
        history = wording_history(db, stored.id)
    finally:
        db.execute("COMMIT")
    return Export(stored=stored, dataset=dataset, text_versions=versions, history=history)


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
    """The codebook's ``text_versions``: each wording with how many responses were answered under it."""
    if not history:
        return None
    return [{"version": h["version"], "since": h["since"], "responses": int(responses_per_version.get(h["version"], 0)),
             "wording": h["wording"]} for h in history]


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
