"""A survey's data in files: responses (CSV or Parquet) and counts aggregated anywhere.

- **Responses**, one row per response, one column per question id, each cell the reported
  option's label: the CSV of :mod:`.responses_csv`, or the same columns in **Parquet** (string
  or dictionary columns of the CSV's cells, but a number's reported value as float64; null or
  "" = not answered), which pandas, R's arrow, DuckDB and Spark read without a CSV round trip.
  A Parquet file whose numbers are text cells, as the CSV has them, is read as well.
- **Counts**: the responses aggregated by any engine's ``GROUP BY`` — any subset of the question
  columns plus a ``count`` column, one row per distinct answer pattern (CSV or Parquet), e.g. in
  DuckDB ``SELECT drugs, cheated, year, count(*) AS count FROM 'responses.parquet' GROUP BY ALL``.
  One column and ``count`` are a question's option counts; two are a cross-tab's joint counts;
  all of them support everything ``deniable estimate`` does.  A survey of 10^9 reports
  aggregated elsewhere is then analysed in milliseconds.

The format is chosen by the file's suffix (``.parquet``, else CSV).  Every problem raises
:class:`~.responses_csv.CSVError` with one line naming the file, the row or line and the column.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq

from deniable.errors import FieldError
from deniable.estimators.validate import check_total

from . import logic
from .dataset import Dataset, DesignColumns
from .definition import Survey
from .responses_csv import (DESIGN_HINT, TEXT_VERSION, CSVError, column_codes, design_values, patterns_dataset,
                            read_patterns_csv, read_responses_csv, settle_not_asked, unknown_cell)

COUNT = "count"
NOT_ASKED_KEY = "deniable.not_asked"  # a Parquet column's field metadata: which of its nulls were not asked


def is_parquet(path) -> bool:
    return Path(path).suffix.lower() in (".parquet", ".pq")


def read_responses(path, survey: Survey, progress=False, design: DesignColumns | None = None) -> Dataset:
    """A responses file, CSV or Parquet by its suffix: one row per response (with ``design``, its
    design columns in :attr:`.dataset.Dataset.design`)."""
    if is_parquet(path):
        return read_responses_parquet(path, survey, design)
    return read_responses_csv(path, survey, progress=progress, design=design)


def read_patterns(path, survey: Survey, progress=False) -> Dataset:
    """A responses file aggregated as it is read: one row per distinct answer pattern with its count
    (what ``deniable estimate`` needs; the same estimates as :func:`read_responses`).  Arrow groups
    the rows, so only the distinct patterns reach Python; a file with a bad cell is read again row
    by row, so that the error names the row."""
    if not is_parquet(path):
        return read_patterns_csv(path, survey, progress=progress)
    path = Path(path)
    table = _open_parquet(path).read()
    ids = [q.id for q in survey.questions]
    try:
        _check_columns(path, table.column_names, survey, {TEXT_VERSION})
        if not set(ids) <= set(table.column_names):
            raise CSVError(f"{path}: a question's column is missing")
        table = table.select(ids).unify_dictionaries()
        return patterns_dataset(path, survey, [table.group_by(ids).aggregate([([], "count_all")])], "count_all")
    except (CSVError, pa.ArrowException):
        read_responses_parquet(path, survey)  # raises the error with its row
        raise


def _open_parquet(path: Path) -> pq.ParquetFile:
    try:
        return pq.ParquetFile(path)
    except OSError as exc:
        raise CSVError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    except pa.ArrowException as exc:
        raise CSVError(f"{path}: not a Parquet file: {str(exc).splitlines()[0]}") from None


def _indices(path: Path, question, column: pa.ChunkedArray, row_offset: int = 0) -> np.ndarray:
    """Codes of a column (−1 = not answered: null, or ""); a cell that is not a report is an error.

    A column of text holds text cells (labels, and the other types' cells of the CSV); a column of
    numbers is read by the question's type (:meth:`~.questions.base.QuestionType.number_codes`:
    a number's reported value), and refused, naming its type, by a type whose cells are text."""
    codes = column_codes(question, column)
    if codes is None:
        if question.qtype.number_codes(question, []) is not None:
            what = "the reported values as numbers or as text"
        else:
            what = "the options' labels as text" if question.qtype.categorical else "the reports as text"
        raise CSVError(f"{path}: column {question.id!r}: must hold {what}, not {column.type}")
    unknown = codes == -2
    if unknown.any():
        row = int(np.flatnonzero(unknown)[0])
        cell = column[row].as_py()
        raise CSVError(f"{path}: row {row_offset + row + 1}: column {question.id!r}: "
                       f"{unknown_cell(question, cell if isinstance(cell, str) else repr(cell))}")
    return codes.astype(question.qtype.code_dtype, copy=False)


def _check_columns(path: Path, names: list[str], survey: Survey, extra: set[str] = frozenset()) -> None:
    ids = [q.id for q in survey.questions]
    for name in names:
        if name not in ids and name not in extra:
            raise CSVError(f"{path}: unknown column {name!r} (expected the question ids: {', '.join(ids)})"
                           f"{DESIGN_HINT if COUNT not in extra else ''}")
    if len(set(names)) != len(names):
        raise CSVError(f"{path}: a column appears twice")


def _design_names(path: Path, names: list[str], survey: Survey, design: DesignColumns | None) -> dict[str, str]:
    """The design's columns by role (none without ``design``); a CSVError for one that is a question or missing."""
    named = design.named() if design is not None else {}
    for name in named.values():
        if name in [q.id for q in survey.questions]:
            raise CSVError(f"{path}: column {name!r} is a question, not a design column")
        if name not in names:
            raise CSVError(f"{path}: no column {name!r} for the sampling design (the columns are: "
                           f"{', '.join(names)})")
    return named


def read_responses_parquet(path, survey: Survey, design: DesignColumns | None = None) -> Dataset:
    """Read a responses Parquet file (one column per question id, labels as text; a
    ``text-version`` column, as exports have once a survey's wording changed, is ignored).
    ``design`` names the design columns (numbers or text), as for the CSV
    (:func:`.responses_csv.read_responses_csv`)."""
    path = Path(path)
    table = _open_parquet(path).read()
    named = _design_names(path, table.column_names, survey, design)
    _check_columns(path, table.column_names, survey, {TEXT_VERSION, *named.values()})
    columns = {}
    for q in survey.questions:
        if q.id not in table.column_names:
            raise CSVError(f"{path}: missing column {q.id!r} (expected the question ids: "
                           f"{', '.join(x.id for x in survey.questions)})")
        columns[q.id] = _indices(path, q, table.column(q.id))
    columns, problem = settle_not_asked(survey, columns)
    if problem is not None:
        qid, row, what = problem
        raise CSVError(f"{path}: row {row + 1}: column {qid!r}: {what}")
    if design is None:
        return Dataset(survey, columns)
    values = {role: design_values(path, role, name, table.column(name), lambda row: f"{path}: row {row + 1}")
              for role, name in named.items()}
    return Dataset(survey, columns, design=values)


def write_responses_parquet(path, dataset: Dataset, text_versions: np.ndarray | None = None) -> None:
    """Write ``dataset`` (one row per response) as Parquet, each question's column as its type makes it
    (:meth:`~.questions.base.QuestionType.parquet_array`: labels dictionary-encoded, a number's
    reported value as float64, the other types' text cells; null = not answered);
    ``text_versions`` (one per row) adds the ``text-version`` column, as in the CSV.

    A question not asked (display logic) is null too: Parquet has one null, and pandas and R read
    nothing else as missing.  Its rows are those where the question's ``show_if`` does not hold
    for the row's answers (:func:`.logic.not_asked`), as its column's field metadata
    (``deniable.not_asked``) and the codebook (``asked_of``) say."""
    arrays, fields = [], []
    for q in dataset.survey.questions:
        arrays.append(q.qtype.parquet_array(q, dataset.columns[q.id]))
        metadata = None
        if q.show_if is not None:
            metadata = {NOT_ASKED_KEY: f"null where not asked, as where not answered: {logic.asked_of(q)}; "
                                       f"the row's {q.show_if.question} tells which"}
        fields.append(pa.field(q.id, arrays[-1].type, metadata=metadata))
    if text_versions is not None:
        arrays.append(pa.array(np.asarray(text_versions, dtype=np.int32)))
        fields.append(pa.field(TEXT_VERSION, pa.int32()))
    try:
        pq.write_table(pa.Table.from_arrays(arrays, schema=pa.schema(fields)), path, compression="zstd")
    except (OSError, pa.ArrowException) as exc:
        raise CSVError(f"{path}: cannot write: {exc}") from None


def read_counts(path, survey: Survey, design: DesignColumns | None = None) -> Dataset:
    """Read aggregated counts (some question columns and ``count``) into a weighted :class:`Dataset`
    over the questions present.

    With ``design`` (``--weights COLUMN``, and ``--strata``, ``--cluster``, ``--fpc``), each row's
    design columns hold the sampling weight (stratum, cluster, fpc) of every one of its ``count``
    respondents — post-stratification cells, say — and the dataset has one row per respondent (each
    row repeated ``count`` times), so that the design-based variance counts respondents, not rows."""
    path = Path(path)
    if is_parquet(path):
        table = _open_parquet(path).read()
        where = lambda row: f"row {row + 1}"  # noqa: E731
    else:
        table = _read_csv_counts(path, survey)
        where = lambda row: f"line {row + 2}"  # noqa: E731  (the header is line 1)
    names = table.column_names
    named = _design_names(path, names, survey, design)
    _check_columns(path, names, survey, extra={COUNT, *named.values()})
    if COUNT not in names:
        raise CSVError(f"{path}: no {COUNT!r} column (the number of responses with each answer pattern)")
    present = [q for q in survey.questions if q.id in names]
    if not present:
        raise CSVError(f"{path}: no question column besides {COUNT!r}")
    counts = table.column(COUNT)
    if not pa.types.is_integer(counts.type):
        raise CSVError(f"{path}: column {COUNT!r}: must hold whole numbers, not {counts.type}")
    weights = counts.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    if (weights < 0).any():
        bad = int(np.argmax(weights < 0))
        raise CSVError(f"{path}: {where(bad)}: column {COUNT!r}: must be a count of 0 or more")
    try:  # summed in float64 later on: exact up to 2^53 (and int64 would overflow at 2^63)
        check_total(weights, "the counts")
    except FieldError as exc:
        raise CSVError(f"{path}: column {COUNT!r}: {exc}") from None
    columns = {q.id: _indices(path, q, table.column(q.id)) for q in present}
    # NA (not asked) is no response; rows are checked against the display logic where the counts hold
    # the condition's question (counts never required an answer)
    columns, problem = settle_not_asked(survey.only([q.id for q in present]), columns, required=False)
    if problem is not None:
        raise CSVError(f"{path}: {where(problem[1])}: column {problem[0]!r}: {problem[2]}")
    if design is None:
        return Dataset(survey.only([q.id for q in present]), columns, weights)
    values = {role: design_values(path, role, name, table.column(name), lambda row: f"{path}: {where(row)}")
              for role, name in named.items()}
    each = np.repeat(np.arange(weights.size), weights)  # one row per respondent
    return Dataset(survey.only([q.id for q in present]), {qid: c[each] for qid, c in columns.items()},
                   design={role: v[each] for role, v in values.items()})


def _read_csv_counts(path: Path, survey: Survey) -> pa.Table:
    try:
        with path.open(encoding="utf-8-sig") as fh:
            header = fh.readline().rstrip("\r\n").split(",")
    except (OSError, UnicodeDecodeError) as exc:
        raise CSVError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    text = pa.dictionary(pa.int32(), pa.string())
    types = {name: (pa.int64() if name == COUNT else text) for name in header}
    try:
        # "" stays a label ("not answered"), as in the responses CSV; an empty count is an error
        return pcsv.read_csv(path, convert_options=pcsv.ConvertOptions(
            column_types=types, strings_can_be_null=False, null_values=[]))
    except pa.ArrowInvalid as exc:
        message = str(exc).splitlines()[0]
        if COUNT in message or "int64" in message:
            raise CSVError(f"{path}: column {COUNT!r}: must hold whole numbers ({message})") from None
        raise CSVError(f"{path}: cannot parse as CSV: {message}") from None


def aggregate(dataset: Dataset) -> Dataset:
    """The same data with one row per distinct answer pattern and its count (what ``--counts`` reads)."""
    ids = [q.id for q in dataset.survey.questions]
    stacked = np.stack([dataset.columns[qid].astype(np.int64) for qid in ids], axis=1)
    patterns, inverse = np.unique(stacked, axis=0, return_inverse=True)
    weights = dataset.weights if dataset.weights is not None else np.ones(len(stacked), dtype=np.int64)
    counts = np.bincount(inverse.reshape(-1), weights=weights, minlength=len(patterns))
    return Dataset(dataset.survey, {qid: patterns[:, i] for i, qid in enumerate(ids)},
                   np.rint(counts).astype(np.int64))

