"""oTree's data export, read as reports: what ``deniable estimate SURVEY.json EXPORT.csv --from otree`` reads.

An oTree app that embeds deniable's randomizer (docs/embedding.md, "oTree"; examples/otree/) has, for
each protected question, a player field named by the deniable question's id whose value is the JSON
text ``{"report": …, "design": "sha256:…", "epsilon": …}``.  oTree exports it in either of its CSVs:

- the wide export (``/api/export_wide``, "All apps (wide format)" on the Data page): one row per
  participant, the field in the column ``APP.ROUND.player.QID``;
- an app's export (``/api/export_app?app=APP``): one row per player, the column ``player.QID``.

Each question must be in exactly one column (one app, one round: a question asked again in a later
round would send the stored report again, not a new answer).  A row in which none of the questions
holds a value is left out: oTree makes every participant of a session when the session is created,
and those who never submitted the page have empty fields.  Each value goes through its type's own
check (:meth:`~deniable.server.survey.questions.base.QuestionType.check_report`, as a report sent to
the JSON API), so the dataset is the one the same reports make in deniable's own store.  A value that
is not such a report (a true answer kept in a field of the host's own) is an error naming the line
and the question, and so is a report made under another design, and a participant on two rows.  A
question the definition asks directly is the app's own field of the same name (its plain value: the
option's label, a number; :func:`.surveyjs.direct_code`), unanswered when the app has no such field.
The app's other fields are left alone.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import numpy as np

from deniable.errors import FieldError

from .dataset import NOT_ANSWERED, Dataset
from .definition import Survey, design_fingerprint
from .strict_json import JSONError, loads
from .surveyjs import asked_directly, direct_code, embedded_report

MAX_BYTES = 1 << 30
_WIDE = re.compile(r"^[^.]+\.\d+\.player\.(.+)$")  # APP.ROUND.player.FIELD


class OTreeExportError(FieldError):
    """An oTree export cannot be read as reports; the message names the file, line and question."""


def _columns(path: Path, header: list[str], survey: Survey) -> dict[str, int]:
    """Question id → the index of its one column in ``header``."""
    found: dict[str, list[str]] = {q.id: [] for q in survey.questions}
    index = {}
    for i, name in enumerate(header):
        match = _WIDE.match(name)
        field = match.group(1) if match else name.removeprefix("player.") if name.startswith("player.") else None
        if field in found:
            found[field].append(name)
            index[name] = i
    direct = {q.id for q in survey.questions if asked_directly(q)}
    for qid, names in list(found.items()):
        if not names and qid in direct:
            del found[qid]  # a question asked directly that the app does not ask: unanswered
            continue
        if not names:
            raise OTreeExportError(f"{path}: no column for question {qid!r} (player.{qid}, or APP.ROUND.player.{qid} "
                                   f"in the wide export): is this the export of the app with the protected "
                                   f"fields?", qid)
        if len(names) > 1:
            raise OTreeExportError(f"{path}: question {qid!r} is in {len(names)} columns ({', '.join(names)}): "
                                   f"one column per question (one app, one round)", qid)
    return {qid: index[names[0]] for qid, names in found.items()}


def read_otree(path, survey: Survey, design=None) -> Dataset:
    """The reports of an oTree CSV export (wide, or one app's) as a :class:`Dataset`; ``design`` (a
    :class:`.dataset.DesignColumns`): columns of the export holding the sampling weights (strata,
    clusters), by their names in the header."""
    path = Path(path)
    try:
        if path.stat().st_size > MAX_BYTES:
            raise OTreeExportError(f"{path}: larger than 1 GiB", "results")
        text = path.read_text(encoding="utf-8-sig")  # the export's "for Excel" form starts with a BOM
    except (OSError, UnicodeDecodeError) as exc:
        raise OTreeExportError(f"{path}: not a CSV export of oTree: {exc}", "results") from None
    try:
        table = list(csv.reader(text.splitlines()))
    except csv.Error as exc:
        raise OTreeExportError(f"{path}: not a CSV export of oTree: {exc}", "results") from None
    if not table or not table[0]:
        raise OTreeExportError(f"{path}: empty: no header line (an export of a session nobody started?)", "results")
    header, rows = table[0], table[1:]
    columns = _columns(path, header, survey)
    direct = {q.id for q in survey.questions if asked_directly(q)}
    reports = [at for qid, at in columns.items() if qid not in direct] or list(columns.values())
    code_at = header.index("participant.code") if "participant.code" in header else None
    fingerprint = design_fingerprint(survey)
    kept: dict[str, list] = {q.id: [] for q in survey.questions}
    seen: dict[str, int] = {}
    lines: list[tuple[int, list[str]]] = []  # the rows kept, for the design's columns
    for line, cells in enumerate(rows, 2):
        if len(cells) != len(header):
            raise OTreeExportError(f"{path}: line {line}: {len(cells)} cells, but the header has {len(header)}",
                                   "results")
        if all(cells[at] == "" for at in reports):
            continue  # a participant who never submitted the page
        if code_at is not None:
            code = cells[code_at]
            if code in seen:
                raise OTreeExportError(f"{path}: line {line}: participant {code!r} is on line {seen[code]} too: "
                                       f"one row per participant", "results")
            seen[code] = line
        lines.append((line, cells))
        for q in survey.questions:
            cell = cells[columns[q.id]] if q.id in columns else ""
            kept[q.id].append(_report(path, line, q, cell, fingerprint))
    values = None
    if design is not None:
        from .responses_csv import design_cells  # pyarrow: only for a design

        values = design_cells(path, design, header, [cells for _, cells in lines],
                              lambda row: f"{path}: line {lines[row][0]}")
    return Dataset(survey, {q.id: np.array(kept[q.id], dtype=q.qtype.code_dtype) for q in survey.questions},
                   design=values)


def _report(path: Path, line: int, q, cell: str, fingerprint: str):
    """The code of one cell's report (NOT_ANSWERED for an empty cell: an optional question left unanswered)."""
    if cell == "":
        return NOT_ANSWERED
    try:
        value = loads(cell)
    except JSONError:
        value = None
    where = f"{path}: line {line}, question {q.id!r}"
    if asked_directly(q) and not (isinstance(value, dict) and "report" in value):
        return direct_code(q, cell, where, OTreeExportError, q.id)  # the app's own field, asked directly
    return embedded_report(q, value, fingerprint, where, OTreeExportError, q.id)
