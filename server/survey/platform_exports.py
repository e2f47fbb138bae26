"""Qualtrics, LimeSurvey and REDCap exports, read as reports: ``deniable estimate … --from qualtrics|limesurvey|redcap``.

The recipes of docs/embedding.md put each protected question's report into one field of the host
platform — a Qualtrics embedded-data field, a LimeSurvey hidden short-text question, a REDCap
``@HIDDEN`` text field — named by :func:`column_name`, holding the JSON text of what the embed hands
the host, ``{"report": …, "design": "sha256:…", "epsilon": …}``.  Each reader finds those columns
in the platform's CSV export and checks every cell as :mod:`.surveyjs` checks a SurveyJS value: the
design's fingerprint must be the codebook's and the report goes through its type's own
:meth:`~deniable.server.survey.questions.base.QuestionType.check_report`, so the dataset is the one
the same reports would make in deniable's own store.

The layouts read, each as its platform documents it (the fixtures in tests/data/platforms/ cite the
pages; none was checked against a live export):

- **Qualtrics**, "Download Data" as CSV: three header rows — the column names, the question texts,
  and ``{"ImportId": …}`` JSON — then one row per response (``ResponseId`` names it);
- **LimeSurvey**, "Export responses" as CSV with the headings "Question code": one header row (``id``
  first), comma- or semicolon-separated;
- **REDCap**, "Export data" / API ``content=record`` as CSV, raw: one header row of field names, the
  record id first, ``redcap_event_name`` and ``redcap_repeat_*`` when the project has them.

A row whose report columns are all empty — a response that stopped before the protected question, a
REDCap row of another event or instrument — answers none of them and is not counted.  An empty
cell is a question left unanswered; any other cell that is not such a report is an error naming
the file, the row (and its id), and the column.  A question the definition asks directly is the
host's own question (:func:`direct_column`: the id, lower case on REDCap, letters and digits on
LimeSurvey), its cell the option's label (export choice text, not codes), a number, or Y/N per option
(:func:`.surveyjs.host_value`); without such a column it is unanswered.  The host's other columns
are left alone.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import numpy as np

from deniable.errors import FieldError

from .dataset import NOT_ANSWERED, Dataset
from .definition import Survey, design_fingerprint
from .strict_json import JSONError, loads
from .surveyjs import asked_directly, host_value

PLATFORMS = ("qualtrics", "limesurvey", "redcap")
MAX_BYTES = 1 << 30
LIMESURVEY_CODE_MAX = 20  # LimeSurvey's question codes: letters and digits, at most 20 characters


class PlatformExportError(FieldError):
    """A platform's export cannot be read as reports; the message names the file, row and column."""


def column_name(platform: str, qid: str) -> str:
    """The field (and export column) that holds question ``qid``'s report on ``platform``.

    Qualtrics: embedded data ``deniable_QID``; REDCap: ``deniable_qid`` (its field names are lower
    case); LimeSurvey: ``dn`` and the id's letters and digits (its question codes allow nothing else).
    """
    if platform == "qualtrics":
        return f"deniable_{qid}"
    if platform == "redcap":
        return f"deniable_{qid.lower()}"
    if platform == "limesurvey":
        return "dn" + re.sub(r"[^A-Za-z0-9]", "", qid)
    raise PlatformExportError(f"unknown platform {platform!r}: one of {', '.join(PLATFORMS)}", "platform")


def direct_column(platform: str, qid: str) -> str:
    """The host's own question asking ``qid`` directly, as its export names the column: the id itself
    (a Qualtrics question's export tag), lower case on REDCap, its letters and digits on LimeSurvey."""
    if platform == "redcap":
        return qid.lower()
    if platform == "limesurvey":
        return re.sub(r"[^A-Za-z0-9]", "", qid)
    return qid


def columns(platform: str, survey: Survey) -> dict[str, str]:
    """Question id → its column on ``platform``; refused when two ids share one, or one is too long."""
    named: dict[str, str] = {}
    for q in survey.questions:
        column = column_name(platform, q.id)
        if platform == "limesurvey" and len(column) > LIMESURVEY_CODE_MAX:
            raise PlatformExportError(f"question {q.id!r}: its LimeSurvey code {column!r} is longer than "
                                      f"{LIMESURVEY_CODE_MAX} characters: shorten the question's id", q.id)
        clash = next((other for other, col in named.items() if col.lower() == column.lower()), None)
        if clash is not None:
            raise PlatformExportError(f"questions {clash!r} and {q.id!r} would share the {platform} field "
                                      f"{column!r}: rename one", q.id)
        named[q.id] = column
    return named


def _table(path: Path, delimiters: str = ",") -> list[list[str]]:
    """The CSV records of ``path`` (UTF-8, a byte-order mark allowed), with the first line's delimiter."""
    try:
        if path.stat().st_size > MAX_BYTES:
            raise PlatformExportError(f"{path}: larger than 1 GiB", "results")
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise PlatformExportError(f"{path}: cannot be read as a UTF-8 CSV file: {exc}", "results") from None
    first = text.split("\n", 1)[0]
    delimiter = max(delimiters, key=first.count)
    try:
        return list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True))
    except csv.Error as exc:
        raise PlatformExportError(f"{path}: not a CSV file: {exc}", "results") from None


def _find(path: Path, header: list[str], wanted: dict[str, str], hint: str,
          direct: dict[str, str] | None = None) -> dict[str, int]:
    """Question id → the index of its column in ``header``; a missing or repeated column is an error.
    ``direct``: for a question asked directly, the host's own column (:func:`direct_column`), looked for
    first; such a question with neither column is left out (unanswered), not an error."""
    found = {}
    for qid, column in list(wanted.items()):
        if direct and qid in direct:
            if direct[qid] in header or column not in header:
                wanted[qid] = column = direct[qid]
            if column not in header:
                del wanted[qid]
                continue
        places = [i for i, name in enumerate(header) if name == column]
        if len(places) > 1:
            raise PlatformExportError(f"{path}: the column {column!r} appears {len(places)} times", column)
        if not places:
            raise PlatformExportError(f"{path}: no column {column!r} (question {qid!r}): {hint}", column)
        found[qid] = places[0]
    return found


def _dataset(platform: str, path: Path, survey: Survey, header: list[str], rows: list[list[str]], first_row: int,
             wanted: dict[str, str], hint: str, row_id, design=None) -> Dataset:
    """The reports in ``rows`` (the file's records after its headers; ``first_row`` is the first's
    number in the file) as a :class:`Dataset`; ``row_id(cells)`` says which response a row is.
    ``design`` (a :class:`.dataset.DesignColumns`): the host's columns of sampling weights (strata,
    clusters) of the responses kept, in :attr:`.dataset.Dataset.design`."""
    wanted = dict(wanted)
    direct = {q.id: direct_column(platform, q.id) for q in survey.questions if asked_directly(q)}
    places = _find(path, header, wanted, hint, direct)
    reports = [i for qid, i in places.items() if qid not in direct] or list(places.values())
    fingerprint = design_fingerprint(survey)
    kept: list[tuple[int, list[str]]] = []
    for number, cells in enumerate(rows, first_row):
        if cells == [] or cells == [""]:
            continue  # a blank line
        if len(cells) != len(header):
            raise PlatformExportError(f"{path}: row {number} ({row_id(cells)}) has {len(cells)} cells, "
                                      f"the header {len(header)}", "results")
        if any(cells[i].strip() for i in reports):  # the host's direct questions alone do not make a response
            kept.append((number, cells))
    by_id = {q.id: q for q in survey.questions}
    data = {qid: np.full(len(kept), NOT_ANSWERED, dtype=q.qtype.code_dtype) for qid, q in by_id.items()}
    for index, (number, cells) in enumerate(kept):
        for qid, place in places.items():
            cell = cells[place].strip()
            if cell:
                where = f"{path}: row {number} ({row_id(cells)}), column {wanted[qid]!r}"
                data[qid][index] = _code(by_id[qid], cell, fingerprint, where, wanted[qid])
    if design is None:
        return Dataset(survey, data)
    from .responses_csv import design_cells  # pyarrow: only for a design

    return Dataset(survey, data, design=design_cells(
        path, design, header, [cells for _, cells in kept],
        lambda row: f"{path}: row {kept[row][0]} ({row_id(kept[row][1])})"))


def _code(q, cell: str, fingerprint: str, where: str, column: str) -> int:
    """The code of one cell holding the embed's ``{report, design, epsilon}`` as JSON text."""
    try:
        value = loads(cell)
    except JSONError:
        value = None
    return host_value(q, value, fingerprint, where, PlatformExportError, column, cell)


def _cell(header: list[str], name: str):
    """A function giving a row's cell under column ``name`` ('?' when the export has no such column)."""
    place = header.index(name) if name in header else None
    return lambda cells: "?" if place is None else cells[place]


def read_qualtrics(path, survey: Survey, design=None) -> Dataset:
    """The reports of a Qualtrics CSV export (three header rows) as a :class:`Dataset`.

    Each report column is the embedded-data field ``deniable_QID``, found by its name in the first
    header row.  The third header row must be Qualtrics' ``{"ImportId": …}`` JSON: a file without
    it (a legacy export, or one whose extra headers were deleted) is refused rather than misread.
    """
    path = Path(path)
    table = _table(path)
    if len(table) < 3 or not all(cell.startswith('{"ImportId"') for cell in table[2] if cell):
        raise PlatformExportError(f"{path}: not a Qualtrics CSV export: its third header row should hold "
                                  '{"ImportId": …} for every column (download the data as CSV, not legacy)',
                                  "results")
    header = table[0]
    response = _cell(header, "ResponseId")
    return _dataset("qualtrics", path, survey, header, table[3:], 4, columns("qualtrics", survey),
                    "add the embedded data field in the survey flow (docs/embedding.md, Qualtrics)",
                    lambda cells: f"ResponseId {response(cells)}", design)


def read_limesurvey(path, survey: Survey, design=None) -> Dataset:
    """The reports of a LimeSurvey response export (CSV, headings "Question code") as a :class:`Dataset`.

    Each report column is the hidden short-text question ``dnQID``; ``id`` is the response's id.
    """
    path = Path(path)
    table = _table(path, ",;")
    if not table or not table[0] or table[0][0] != "id":
        raise PlatformExportError(f"{path}: not a LimeSurvey response export: its first column should be 'id' "
                                  "(export as CSV with the headings 'Question code')", "results")
    header = table[0]
    response = _cell(header, "id")
    return _dataset("limesurvey", path, survey, header, table[1:], 2, columns("limesurvey", survey),
                    "export with the headings 'Question code' (docs/embedding.md, LimeSurvey)",
                    lambda cells: f"id {response(cells)}", design)


def read_redcap(path, survey: Survey, design=None) -> Dataset:
    """The reports of a REDCap raw CSV export (field names as headers) as a :class:`Dataset`.

    Each report column is the ``@HIDDEN`` text field ``deniable_qid``; the first column is the
    record id, and ``redcap_event_name`` (longitudinal projects) and ``redcap_repeat_instance``
    say which of the record's rows it is.
    """
    path = Path(path)
    table = _table(path)
    if not table or not table[0] or not re.fullmatch(r"[a-z][a-z0-9_]*", table[0][0]):
        raise PlatformExportError(f"{path}: not a REDCap raw export: its first header should be the record id "
                                  "field's name (export 'CSV / Microsoft Excel (raw data)')", "results")
    header = table[0]
    record, event, instance = _cell(header, header[0]), _cell(header, "redcap_event_name"), \
        _cell(header, "redcap_repeat_instance")

    def row_id(cells):
        said = f"{header[0]} {record(cells)}"
        if "redcap_event_name" in header:
            said += f", event {event(cells)}"
        if "redcap_repeat_instance" in header and instance(cells):
            said += f", instance {instance(cells)}"
        return said

    return _dataset("redcap", path, survey, header, table[1:], 2, columns("redcap", survey),
                    "export raw data with field names as headers (docs/embedding.md, REDCap)", row_id, design)

