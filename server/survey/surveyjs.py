"""SurveyJS results, read as reports: what ``deniable estimate SURVEY.json RESULTS.json --from surveyjs`` reads.

A SurveyJS survey that embeds deniable's randomizer (docs/embedding.md) holds, for each protected
question, a value ``{"report": …, "design": "sha256:…", "epsilon": …}`` under the question's name,
which is the deniable question's id.  The results file is a JSON list of ``survey.data`` objects,
one per respondent.  Each report goes through its type's own check
(:meth:`~deniable.server.survey.questions.base.QuestionType.check_report`, as a report sent to the JSON
API), so the dataset is the one the same reports would make in deniable's own store.  A value under a
question's id that is not such an object — a true answer kept in a field of the host's own — is an
error naming the row and the question, and so is a report made under another design (its
fingerprint is not the codebook's).  A question the definition asks directly (no ε, no design) is the
host's own question under the same id (the recipes: "asked directly: use the platform's own
question"): its plain value — the option's label as SurveyJS stores it, or its index, a number, a list
of labels — is read as deniable's own responses file reads that question (:func:`host_value`), so it
can split the estimates (``--by``).  The host's other questions are left alone.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import numpy as np
from deniable.client.mechanism import MechanismError

from deniable.errors import FieldError

from .dataset import NOT_ANSWERED, Dataset
from .definition import Survey, design_fingerprint
from .strict_json import JSONError, loads

MAX_BYTES = 1 << 30


class SurveyJSError(FieldError):
    """A SurveyJS results file cannot be read as reports; the message names the file, row and question."""


def read_surveyjs(path, survey: Survey, design=None) -> Dataset:
    """The reports of a SurveyJS results file (a JSON list of ``survey.data`` objects) as a :class:`Dataset`;
    ``design`` (a :class:`.dataset.DesignColumns`): keys of each object holding the respondent's sampling
    weight (stratum, cluster), a number or its text."""
    path = Path(path)
    try:
        if path.stat().st_size > MAX_BYTES:
            raise SurveyJSError(f"{path}: larger than 1 GiB", "results")
        data = loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, JSONError) as exc:
        raise SurveyJSError(f"{path}: not a JSON file of SurveyJS results: {exc}", "results") from None
    if isinstance(data, dict) and isinstance(data.get("results"), list):
        data = data["results"]  # the shape SurveyJS's own results service returns
    if not isinstance(data, list):
        raise SurveyJSError(f"{path}: expected a JSON list of survey.data objects, one per respondent", "results")
    fingerprint = design_fingerprint(survey)
    columns = {q.id: np.full(len(data), NOT_ANSWERED, dtype=q.qtype.code_dtype) for q in survey.questions}
    for row, entry in enumerate(data, 1):
        if not isinstance(entry, dict):
            raise SurveyJSError(f"{path}: row {row}: not an object of answers (survey.data)", "results")
        for q in survey.questions:
            value = entry.get(q.id)
            if value is None:
                continue
            if value == "" and asked_directly(q):
                continue  # a direct question the host left empty
            columns[q.id][row - 1] = host_value(q, value, fingerprint, f"{path}: row {row}, question {q.id!r}",
                                                SurveyJSError, q.id)
    if design is None:
        return Dataset(survey, columns)
    from .responses_csv import design_cells  # pyarrow: only for a design

    names = list(design.named().values())
    for name in names:
        if not any(name in entry for entry in data):
            raise SurveyJSError(f"{path}: no result has the key {name!r} for the sampling design", name)
    cells = [["" if entry.get(name) is None else str(entry.get(name)) for name in names] for entry in data]
    return Dataset(survey, columns,
                   design=design_cells(path, design, names, cells, lambda row: f"{path}: row {row + 1}"))


def asked_directly(q) -> bool:
    """Whether ``q`` is asked directly (no ε, no randomized-response design, no mechanism): the recipes
    leave it to the host's own question ("asked directly: use the platform's own question"), asked under
    the same id, whose plain value the readers take (:func:`host_value`)."""
    return not q.protected and q.design is None and q.method is None


def host_value(q, value, fingerprint: str, where: str, error: type[FieldError], field: str,
               cell: str | None = None) -> int:
    """The code of one value a host holds under question ``q``'s id: the embed's report
    (:func:`embedded_report`), or, for a question asked directly (:func:`asked_directly`), the host's own
    plain answer (:func:`direct_code`).  ``cell``: the text a CSV export holds (``value`` parsed from it)."""
    if asked_directly(q) and not (isinstance(value, dict) and "report" in value):
        return direct_code(q, value if cell is None else cell, where, error, field)
    return embedded_report(q, value, fingerprint, where, error, field, cell)


def direct_code(q, value, where: str, error: type[FieldError], field: str) -> int:
    """The code of the host's own answer to ``q``, asked directly: as deniable's responses file writes it
    (the type's ``code_of``: a single choice's option label, a number as decimal text, check all that apply
    as Y/N per option), or as SurveyJS stores it — an option's index (a choice whose ``value`` is its index),
    a JSON number, or a check-all question's list of option labels."""
    text = None
    if isinstance(value, str):
        text = value.strip()
    elif isinstance(value, bool):
        text = None
    elif isinstance(value, int) and q.options:  # an option's index, where an option's label is an answer
        if 0 <= value < len(q.options) and q.qtype.code_of(q, q.options[value]) is not None:
            return q.qtype.code_of(q, q.options[value])
    elif isinstance(value, (int, float)) and q.minimum is not None:
        text = format(Decimal(str(value)), "f")
    elif isinstance(value, list) and q.options and all(isinstance(item, str) for item in value):
        if set(value) <= set(q.options):
            text = "".join("Y" if option in value else "N" for option in q.options)
    code = None if text is None else q.qtype.code_of(q, text)
    if code is None:
        raise error(f"{where}: {str(value)[:40]!r} is not an answer to this question, asked directly (expected "
                    f"{q.qtype.expected(q)})", field)
    return code


def embedded_report(q, value, fingerprint: str, where: str, error: type[FieldError], field: str,
                    cell: str | None = None) -> int:
    """The code of one value the embed gave a host, ``{"report", "design", "epsilon"}`` (as parsed from
    ``cell``, the text a CSV export holds; None when it is not JSON), after its type's own check; else
    ``error(message, field)``, the message starting with ``where``.  Every reader of another tool's
    results checks its values here."""
    if not isinstance(value, dict) or "report" not in value or "design" not in value:
        shown = "" if cell is None else f" {cell[:40]!r} is"
        raise error(f"{where}:{shown} not a report of deniable's embed (expected {{report, design, epsilon}}): was "
                    f"this question answered outside the embed?", field)
    if value["design"] != fingerprint:
        raise error(f"{where}: reported under design {str(value['design'])[:40]!r}, but the definition's design "
                    f"is {fingerprint}", field)
    try:
        return q.qtype.check_report(q, value["report"])
    except MechanismError as exc:
        raise error(f"{where}: {exc}", field) from None
