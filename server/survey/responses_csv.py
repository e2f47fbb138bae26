"""The responses CSV (docs/design.md, "Formats"), read and written at C speed with pyarrow.

One row per response, one column per question id (the header is exactly a permutation of the
survey's question ids), each cell the reported option label exactly as in the definition (for
the other question types the text cell of :mod:`.cells`: a number, ``YNY``, ``treatment:3``), an
empty cell = not answered.  A blank line is a response with no answers.  The files this project
writes begin with a design line, a comment that the reader checks against the codebook
(:mod:`.codebook`), and an export from the database ends each row with ``text-version``: the
wording the response was answered under (read and ignored for estimation).

A question the respondent was not asked (display logic, :mod:`.logic`) is the cell ``NA``
(:data:`NOT_ASKED`), which pandas and R read as missing, as they do the empty cell of a question
asked and left blank.  Reading, a not-asked question is no response to it: its cell must be ``NA``
or empty (older files), and it is not required; a question that was asked (its ``show_if`` holds
for the row's answers) is read as any other, so ``NA`` there is an error
(:func:`settle_not_asked`).  Where ``NA`` is one of a question's own labels, the row's answers
decide which it is.

Reading streams the file in blocks: each column is parsed as a dictionary array, so mapping the
labels to option indices (``pyarrow.compute.index_in``) touches only the few distinct values
of a block, and the strings never pile up in memory.  Every problem raises :class:`CSVError`
with one line ``FILE:LINE: problem``, where the header is line 1.  The exact line of a bad row
is found by re-scanning the file with the ``csv`` module, only when there is an error.
"""

from __future__ import annotations

import contextlib
import csv
import io
import itertools
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

from deniable.errors import FieldError

from . import logic
from .codebook import design_line, parse_design_line
from .dataset import NOT_ANSWERED, Dataset, DesignColumns
from .definition import Survey
from .parsing import number_or_none
from .spreadsheet import spreadsheet_safe

BLOCK_SIZE = 1 << 24  # bytes per parsed block: 13 blocks for a 10^7-row, 3-question file
WRITE_CHUNK = 1_000_000  # rows per written batch
NEEDS_QUOTES = (",", '"', "\n", "\r")
TEXT_VERSION = "text-version"  # not a valid question id, so it cannot clash with one
SEPARATORS = {";": "semicolons (;)", "\t": "tabs"}
DESIGN_HINT = "; design columns such as sampling weights must be named, e.g. deniable estimate --weights COLUMN"
# The cell of a question not asked (display logic): a missing value to pandas (read_csv), R (read.csv,
# readr) and data.table alike, and distinct from the empty cell of a question left blank.
NOT_ASKED = "NA"
NOT_ASKED_CODE = -3  # a cell NA while a file is read, until settle_not_asked makes it −1 (no response)


class _Lazy:
    """A module imported when one of its names is first used: pyarrow costs a few hundred
    milliseconds of a command's start, and a small file is read without it (:func:`_small_patterns`)."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr: str):
        import importlib

        module = importlib.import_module(self._name)
        globals()[{"pyarrow": "pa", "pyarrow.compute": "pc", "pyarrow.csv": "pcsv"}[self._name]] = module
        return getattr(module, attr)


pa, pc, pcsv = _Lazy("pyarrow"), _Lazy("pyarrow.compute"), _Lazy("pyarrow.csv")


class CSVError(FieldError):
    """A responses CSV cannot be read; the message is one line ``FILE:LINE: problem``."""


def _labels_list(labels) -> str:
    return ", ".join(labels)


def _first_lines(path: Path) -> tuple[str, str | None]:
    """The first line of the file and, when it is the design line, the next one (the header)."""
    try:
        with open(path, "rb") as fh:
            first = fh.readline()
            second = fh.readline() if first.startswith(b"#") else None
    except OSError as exc:
        raise CSVError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        return (first.decode("utf-8-sig").rstrip("\r\n"),
                None if second is None else second.decode("utf-8").rstrip("\r\n"))
    except UnicodeDecodeError:
        raise CSVError(f"{path}:{1 if second is None else 2}: not UTF-8 text") from None


def read_design(path) -> dict | None:
    """The design line of a responses CSV (:func:`.codebook.parse_design_line`), or None."""
    first, _ = _first_lines(Path(path))
    return parse_design_line(first)


def _separator_hint(name: str) -> str:
    for char, what in SEPARATORS.items():
        if char in name:
            return (f"; the header seems to be separated by {what}, but this file must be separated by "
                    "commas (in a spreadsheet, save as \"CSV UTF-8 (comma delimited)\")")
    return ""


def _read_header(path: Path, survey: Survey, extra: tuple[str, ...] = ()) -> tuple[list[str], int]:
    """The header's column names and its line number (2 after a design line, else 1); ``extra``: the
    design columns asked for (:class:`.dataset.DesignColumns`), which must be there too."""
    first, second = _first_lines(path)
    text, line = (first, 1) if second is None else (second, 2)
    ids = [q.id for q in survey.questions]
    if not text.strip():
        raise CSVError(f"{path}:{line}: no header: expected the question ids {_labels_list(ids)}")
    # Only the first physical line: a file may end its lines with a bare CR, as pyarrow accepts.
    try:
        header = next(csv.reader([text.split("\r", 1)[0]]))
    except csv.Error as exc:
        raise CSVError(f"{path}:{line}: cannot parse the header: {exc}") from None
    for name in extra:  # first: a misspelled design column is the mistake, not the column it meant
        if name in ids:
            raise CSVError(f"{path}:{line}: column {name!r} is a question, not a design column")
        if name not in header:
            raise CSVError(f"{path}:{line}: no column {name!r} for the sampling design (the columns are: "
                           f"{_labels_list(header)})")
    seen = set()
    for name in header:
        if name not in ids and name != TEXT_VERSION and name not in extra:
            raise CSVError(f"{path}:{line}: unknown column {name!r} (expected the question ids: "
                           f"{_labels_list(ids)}){_separator_hint(name) or DESIGN_HINT}")
        if name in seen:
            raise CSVError(f"{path}:{line}: duplicate column {name!r}")
        seen.add(name)
    missing = [qid for qid in ids if qid not in seen]
    if missing:
        raise CSVError(f"{path}:{line}: missing column {missing[0]!r} (expected the question ids: {_labels_list(ids)})")
    return header, line


def _records(path: Path, header_line: int = 1):
    """Yield ``(line_number, fields)`` for each data record, as pyarrow counts them."""
    with open(path, newline="", encoding="utf-8-sig", errors="replace") as fh:
        if header_line == 2:
            fh.readline()  # the design line
        reader = csv.reader(fh)
        next(reader, None)
        start = reader.line_num + header_line
        try:
            for fields in reader:
                yield start, fields
                start = reader.line_num + header_line
        except csv.Error as exc:  # e.g. a field beyond the csv module's size limit
            raise CSVError(f"{path}:{start}: cannot parse as CSV: {exc}") from None


def _line_of_row(path: Path, row: int, header_line: int = 1) -> int:
    """Return the physical line (first = 1) where data row ``row`` (0-based) starts."""
    for line, _ in itertools.islice(_records(path, header_line), row, row + 1):
        return line
    return row + header_line + 1


def _first_bad_width(path: Path, width: int, header_line: int = 1) -> tuple[int, int] | None:
    for line, fields in _records(path, header_line):
        if fields and len(fields) != width:
            return line, len(fields)
    return None


def _first_bad_utf8_line(path: Path) -> int | None:
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, start=1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                return number
    return None


def _arrow_error(path: Path, exc: Exception, width: int, header_line: int = 1) -> CSVError:
    """Turn a pyarrow parse error into one line naming the file and, where it can, the line."""
    message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if "columns, got" in message:  # pyarrow: "CSV parse error: Expected 3 columns, got 2: …"
        found = _first_bad_width(path, width, header_line)
        if found:
            line, actual = found
            return CSVError(f"{path}:{line}: expected {width} fields (one per question), found {actual}")
    if "UTF8" in message or "UTF-8" in message:
        line = _first_bad_utf8_line(path)
        return CSVError(f"{path}:{line or '?'}: not UTF-8 text")
    return CSVError(f"{path}: cannot parse as CSV: {message}")


@contextlib.contextmanager
def _csv_batches(path: Path, survey: Survey, progress: bool | Callable[[int], None], extra: tuple[str, ...] = ()):
    """``(header_line, batches)``: the header's line number and an iterator over the file's record
    batches (every cell a dictionary-encoded string, the ``text-version`` column left out; the
    design columns ``extra``, when asked for, as plain strings), with the progress bar or callback
    of ``progress`` and every read or parse error as a CSVError."""
    header, header_line = _read_header(path, survey, extra)
    width = len(header)
    # Every cell is a string (dictionary-encoded); none is ever null: "" means not answered,
    # and labels like "NA" or "null" stay labels.
    text = pa.dictionary(pa.int32(), pa.string())
    convert = pcsv.ConvertOptions(column_types={name: pa.string() if name in extra else text for name in header},
                                  strings_can_be_null=False, null_values=[],
                                  include_columns=[name for name in header if name != TEXT_VERSION])
    read = pcsv.ReadOptions(skip_rows=header_line, column_names=header, block_size=BLOCK_SIZE)
    # No invalid_row_handler: pyarrow decodes a bad row's text for it and, when the row is not
    # UTF-8, prints an "Exception ignored" traceback; the error message says enough.
    parse = pcsv.ParseOptions(ignore_empty_lines=False)
    total = path.stat().st_size

    def batches():
        # Arrow's own file, not a Python one: Arrow's read-ahead threads would otherwise take the GIL
        # to read it, and one still doing so when the interpreter exits aborts the process
        # ("terminate called without an active exception", apache/arrow#34314, #45017).
        with pa.OSFile(str(path), "rb") as fh:
            reader = pcsv.open_csv(fh, read_options=read, parse_options=parse, convert_options=convert)
            try:
                done = 0
                for batch in reader:
                    yield batch
                    if update is not None:
                        position = min(fh.tell(), total)
                        update(position - done)
                        done = position
            finally:
                reader.close()

    with _progress(path, progress) as update:
        try:
            yield header_line, batches()
        except pa.ArrowInvalid as exc:
            raise _arrow_error(path, exc, width, header_line) from None
        except OSError as exc:
            raise CSVError(f"{path}: cannot read: {exc.strerror or exc}") from None


@contextlib.contextmanager
def _progress(path: Path, progress: bool | Callable[[int], None]):
    """The callable to give the bytes read to: ``progress`` itself, a bar on stderr when it is True
    (and the file is longer than one block), or None."""
    if progress is True and path.stat().st_size > BLOCK_SIZE:
        import click

        with click.progressbar(length=path.stat().st_size, label=f"reading {path.name}", file=sys.stderr) as bar:
            yield bar.update
    else:
        yield progress if callable(progress) else None


def read_responses_csv(path, survey: Survey, progress: bool | Callable[[int], None] = False,
                       design: DesignColumns | None = None) -> Dataset:
    """Read a responses CSV into a :class:`Dataset` of option indices (``-1`` = not answered), one row
    per response.

    ``progress`` may be a callable that receives the number of bytes consumed after each block
    (the CLI passes a progress bar's ``update``); ``True`` draws a bar on stderr.  ``design`` names
    the file's design columns (sampling weights, strata, clusters, fpc): they must be there, are
    checked (:func:`design_values`) and come back in :attr:`Dataset.design`; any other column
    that is not a question stays an error.
    """
    path = Path(path)
    questions = {q.id: q for q in survey.questions}
    value_sets = {qid: value_set(q) for qid, q in questions.items()}
    parts: dict[str, list[np.ndarray]] = {qid: [] for qid in questions}
    named = design.named() if design is not None else {}
    extra = tuple(dict.fromkeys(named.values()))
    texts: dict[str, list[pa.Array]] = {name: [] for name in extra}
    rows_before = 0
    with _csv_batches(path, survey, progress, extra) as (header_line, batches):
        for batch in batches:
            for qid, column in zip(batch.schema.names, batch.columns):
                if qid in texts:
                    texts[qid].append(column)
                    continue
                parts[qid].append(_to_indices(path, questions[qid], column, value_sets[qid], rows_before,
                                              header_line))
            rows_before += batch.num_rows
    columns = {}
    for q in survey.questions:
        chunks = parts[q.id]
        columns[q.id] = np.concatenate(chunks) if chunks else np.empty(0, dtype=np.int16)
    columns, problem = settle_not_asked(survey, columns)
    if problem is not None:
        qid, row, what = problem
        raise CSVError(f"{path}:{_line_of_row(path, row, header_line)}: column {qid!r}: {what}")
    if design is None:
        return Dataset(survey, columns)

    def where(row: int) -> str:
        return f"{path}:{_line_of_row(path, row, header_line)}"

    values = {role: design_values(path, role, name, pa.chunked_array(texts[name], pa.string()), where)
              for role, name in named.items()}
    return Dataset(survey, columns, design=values)


def design_values(path, role: str, name: str, column, where: Callable[[int], str]) -> np.ndarray:
    """The values of design column ``name`` (its ``role`` in :class:`.dataset.DesignColumns`): for the
    weights and the fpc, finite numbers greater than 0 (float64); for strata and clusters, labels
    (text, none empty).  ``column`` is an Arrow column of text or numbers; ``where(row)`` says where
    row ``row`` (0-based) is, for the CSVError that names the first bad one and the column."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    if pa.types.is_dictionary(column.type):
        column = column.cast(column.type.value_type)
    numbers = role in DesignColumns.NUMBERS
    what = ("the sampling weights" if role == "weights" else "the population's clusters per stratum (fpc)"
            if role == "fpc" else "the strata" if role == "strata" else "the clusters")
    if numbers:
        parsed = column
        if is_text(column.type):
            try:
                parsed = pc.cast(pc.utf8_trim_whitespace(column), pa.float64())
            except pa.ArrowInvalid:
                parsed = None
        elif not (pa.types.is_integer(column.type) or pa.types.is_floating(column.type)
                  or pa.types.is_decimal(column.type)):
            raise CSVError(f"{path}: column {name!r} ({what}): must hold numbers, not {column.type}")
        if parsed is not None:
            values = parsed.cast(pa.float64()).fill_null(np.nan).to_numpy(zero_copy_only=False)
        else:  # a cell Arrow does not read as a number: each cell through float(), NaN if it is none
            values = np.array([_number(text) for text in column.to_pylist()], dtype=float)
        bad = np.flatnonzero(~(np.isfinite(values) & (values > 0)))
        if bad.size:
            row = int(bad[0])
            cell = column[row].as_py()
            shown = "an empty cell" if cell is None or cell == "" else repr(cell)
            raise CSVError(f"{where(row)}: column {name!r} ({what}): must be a finite number greater than 0, "
                           f"got {shown}")
        return values
    if not is_text(column.type):
        column = column.cast(pa.string())
    empty = np.flatnonzero(pc.or_kleene(column.is_null(), pc.equal(column, "")).fill_null(True)
                           .to_numpy(zero_copy_only=False))
    if empty.size:
        raise CSVError(f"{where(int(empty[0]))}: column {name!r} ({what}): empty (every response needs a label)")
    return column.to_numpy(zero_copy_only=False).astype(str)


def design_cells(path, design: DesignColumns | None, header: list[str], rows: list[list[str]],
                 where: Callable[[int], str]) -> dict[str, np.ndarray] | None:
    """The design columns (``--weights COLUMN`` …) of another tool's export read as text ``rows`` under
    ``header`` (the rows kept as responses, in order): :func:`design_values` of each, by role (None
    without a design).  A CSVError names a column the export does not have, or the first bad cell."""
    if design is None:
        return None
    values = {}
    for role, name in design.named().items():
        if name not in header:
            raise CSVError(f"{path}: no column {name!r} for the sampling design (the export's columns: "
                           f"{', '.join(header[:12])}{', …' if len(header) > 12 else ''})")
        at = header.index(name)
        values[role] = design_values(path, role, name, pa.array([cells[at] for cells in rows], pa.string()), where)
    return values


def _number(text) -> float:
    value = number_or_none(text)
    return math.nan if value is None else value


def read_patterns_csv(path, survey: Survey, progress: bool | Callable[[int], None] = False) -> Dataset:
    """The responses CSV as :func:`read_responses_csv` reads it, aggregated while it is read: one
    row per distinct answer pattern with its count (a weighted :class:`Dataset`, the same estimates).

    Arrow parses and groups (``group_by(...).aggregate(count_all)``) before any cell becomes a code,
    so only the distinct patterns reach Python; and it does so on every core, over ranges of
    :data:`RANGE_SIZE` bytes of the memory-mapped file that start at line starts (when no label
    holds a quote or a line break, so that no field can span two ranges; else one block after
    another).  ``deniable estimate`` then costs about a bare pyarrow read of the file.  A file
    with anything wrong — a bad cell, an empty required answer, a line that does not parse — is
    read again by :func:`read_responses_csv`, which names the line.
    """
    path = Path(path)
    header, header_line = _read_header(path, survey)
    if not callable(progress):
        small = _small_patterns(path, survey, header, header_line)
        if small is not None:
            return small
    try:
        ranges = _line_ranges(path, survey, header_line)
        partials = (_grouped_ranges(path, header, ranges, progress) if ranges is not None
                    else _grouped_blocks(path, survey, progress))
        return patterns_dataset(path, survey, partials, "count_all")
    except (CSVError, pa.ArrowException):
        return read_responses_csv(path, survey)  # raises the error with its line


RANGE_SIZE = 32 << 20  # bytes of the CSV parsed as one range by one thread
SMALL_FILE = 1 << 18  # bytes: a file up to this size is read by the csv module, without pyarrow


def _small_patterns(path: Path, survey: Survey, header: list[str], header_line: int) -> Dataset | None:
    """:func:`read_patterns_csv` of a small, well-formed file without pyarrow (whose import would cost
    more than reading the file): the csv module reads the rows, a Counter groups them, and each
    distinct cell becomes a code by :func:`text_codes`, as :func:`dictionary_codes` makes it.  None —
    and the file is read by Arrow, which names the line of any problem — for anything but the plain
    case: a file over
    :data:`SMALL_FILE` bytes, not UTF-8, with a byte-order mark, a bare CR, a blank line, a row of
    another width, a cell that is not a report, or a row :func:`settle_not_asked` refuses."""
    from collections import Counter

    try:
        if path.stat().st_size > SMALL_FILE:
            return None
        data = path.read_bytes()
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if text.startswith("\ufeff") or "\r" in text.replace("\r\n", ""):
        return None
    lines = io.StringIO(text, newline="")
    for _ in range(header_line):
        lines.readline()
    width = len(header)
    try:
        rows = Counter(tuple(fields) for fields in csv.reader(lines, strict=True))
    except csv.Error:
        return None
    if any(len(fields) != width for fields in rows):
        return None
    keep = [i for i, name in enumerate(header) if name != TEXT_VERSION]
    if len(keep) != width:
        grouped = Counter()
        for fields, count in rows.items():
            grouped[tuple(fields[i] for i in keep)] += count
        rows = grouped
    names = [header[i] for i in keep]
    patterns = list(rows)
    weights = np.fromiter(rows.values(), dtype=np.int64, count=len(patterns))
    columns = {}
    for j, name in enumerate(names):
        q = survey.question(name)
        cells = [fields[j] for fields in patterns]
        distinct = list(dict.fromkeys(cells))
        if any('"' in t or "\n" in t for t in distinct):  # Arrow reads no line break in a cell: let it say so
            return None
        mapping = text_codes(q, distinct)
        if (mapping == -2).any():
            return None
        position = {t: i for i, t in enumerate(distinct)}
        columns[name] = mapping[np.fromiter((position[c] for c in cells), dtype=np.int64, count=len(cells))
                                ].astype(q.qtype.code_dtype, copy=False)
    columns = {q.id: columns[q.id] for q in survey.questions}
    columns, problem = settle_not_asked(survey, columns)
    if problem is not None:
        return None
    return Dataset(survey, columns, weights)


def _line_ranges(path: Path, survey: Survey, header_line: int) -> list[tuple[int, int]] | None:
    """Byte ranges of about RANGE_SIZE covering the data lines, each starting at a line start; None
    when a field could hold a line break (a label with a quote or a line break) or lines end in a
    bare CR."""
    if any(c in label for q in survey.questions for label in q.options for c in '"\r\n'):
        return None
    size = path.stat().st_size
    with open(path, "rb") as fh:
        head = fh.read(1 << 16)
        start = 0
        for _ in range(header_line):
            start = head.find(b"\n", start) + 1
            if start == 0:
                return None
        if b"\r" in head.replace(b"\r\n", b""):
            return None
        ranges = []
        while start < size:
            fh.seek(min(start + RANGE_SIZE, size))
            fh.readline()  # to the end of the line the nominal end falls in
            end = min(fh.tell(), size)
            ranges.append((start, end))
            start = end
    return ranges


def _grouped_ranges(path: Path, header: list[str], ranges, progress) -> list[pa.Table]:
    """Each range parsed and grouped by Arrow, ``os.cpu_count()`` ranges at a time (Arrow releases
    the GIL), with the progress bar (or callback) of :func:`_csv_batches` moved on by each range."""
    from concurrent.futures import ThreadPoolExecutor

    text = pa.dictionary(pa.int32(), pa.string())
    convert = pcsv.ConvertOptions(column_types={name: text for name in header}, strings_can_be_null=False,
                                  null_values=[], include_columns=[n for n in header if n != TEXT_VERSION])
    read = pcsv.ReadOptions(column_names=header, use_threads=False)
    parse = pcsv.ParseOptions(ignore_empty_lines=False)
    data = pa.memory_map(str(path)).read_buffer()

    def grouped(span):
        block = pcsv.read_csv(pa.BufferReader(data.slice(span[0], span[1] - span[0])), read_options=read,
                              parse_options=parse, convert_options=convert).unify_dictionaries()
        return block.group_by(block.column_names).aggregate([([], "count_all")]), span[1] - span[0]

    with _progress(path, progress) as update, ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        partials = []
        for table, size in pool.map(grouped, ranges):
            partials.append(table)
            if update is not None:
                update(size)
    return partials


def _grouped_blocks(path: Path, survey: Survey, progress) -> list[pa.Table]:
    """Each block of the streamed file grouped by Arrow, one after another."""
    partials = []
    with _csv_batches(path, survey, progress) as (_, batches):
        for batch in batches:
            block = pa.Table.from_batches([batch])
            partials.append(block.group_by(block.column_names).aggregate([([], "count_all")]))
    return partials


def patterns_dataset(path: Path, survey: Survey, tables: list[pa.Table], count: str) -> Dataset:
    """A weighted :class:`Dataset` from tables of answer patterns (question columns of cell texts,
    and ``count``); CSVError (without a row) for an unknown cell or an empty required answer."""
    ids = [q.id for q in survey.questions]
    if tables:
        def plain(t: pa.Table) -> pa.Table:  # text cells as plain strings (one schema for every part)
            schema = pa.schema([(qid, pa.string() if pa.types.is_dictionary(t.schema.field(qid).type)
                                 else t.schema.field(qid).type) for qid in ids])
            return t.select(ids).cast(schema).append_column(count, t[count])

        table = pa.concat_tables([plain(t) for t in tables]).group_by(ids).aggregate([(count, "sum")])
        weights = table[f"{count}_sum"].to_numpy().astype(np.int64)
    else:
        table, weights = pa.table({qid: pa.array([], pa.string()) for qid in ids}), np.empty(0, dtype=np.int64)
    columns = {}
    for q in survey.questions:
        codes = column_codes(q, table[q.id])
        if codes is None or (codes == -2).any():
            raise CSVError(f"{path}: column {q.id!r}: a cell is not a report of this question")
        columns[q.id] = codes.astype(q.qtype.code_dtype, copy=False)
    columns, problem = settle_not_asked(survey, columns)
    if problem is not None:
        raise CSVError(f"{path}: column {problem[0]!r}: {problem[2]}")
    return Dataset(survey, columns, weights)


def settle_not_asked(survey: Survey, columns: dict[str, np.ndarray], required: bool = True,
                     ) -> tuple[dict[str, np.ndarray], tuple[str, int, str] | None]:
    """The columns of codes read from a file with "not asked" made "no response" (−1), and the first
    problem ``(qid, row, what)`` or None.

    A row not asked a question (:func:`.logic.asked_rows`: its ``show_if`` does not hold for the
    row's answers) must have no answer to it: the cell ``NA`` (:data:`NOT_ASKED_CODE`), empty, or, for
    a question one of whose labels is ``NA``, that label.  A row asked it must not say ``NA`` (unless
    that is a label), and answers it when it is required (and ``required``: a counts file need not).
    Questions without a condition are asked of everyone.  Questions are checked in the survey's order,
    each at its first bad row."""
    asked_of_rows = logic.asked_rows(survey, columns)
    out = dict(columns)
    for q in survey.questions:
        codes = np.asarray(columns[q.id])
        marked = codes == NOT_ASKED_CODE
        asked = asked_of_rows.get(q.id)
        if q.show_if is None:  # asked of everyone
            problems = [(marked, f"{NOT_ASKED} (not asked), but every respondent is asked this question")]
            if q.required and required:
                problems.append((codes == NOT_ANSWERED, "empty, but the question is required"))
        elif asked is None:  # whether it was asked is unknown (a counts file without the condition's question)
            problems = []
        else:
            if NOT_ASKED in q.options and q.qtype.categorical:  # the label NA, where the row was not asked, is NA
                marked |= ~asked & (codes == q.options.index(NOT_ASKED))
            where = logic.asked_of(q)
            problems = [
                (asked & marked, f"{NOT_ASKED} (not asked), but this respondent was asked it ({where})"),
                (~asked & ~marked & (codes != NOT_ANSWERED),
                 f"answered, but this respondent was not asked it ({where}): leave the cell {NOT_ASKED} or empty"),
            ]
            if q.required and required:
                problems.append((asked & (codes == NOT_ANSWERED),
                                 f"empty, but the question is required and this respondent was asked it ({where})"))
        firsts = [(int(np.argmax(bad)), what) for bad, what in problems if bad.any()]
        if firsts:
            row, what = min(firsts)
            return out, (q.id, row, what)
        if marked.any():
            out[q.id] = np.where(marked, NOT_ANSWERED, codes).astype(codes.dtype)
    return out, None


def is_text(column_type: pa.DataType) -> bool:
    """Whether a column holds text (plain or dictionary-encoded strings)."""
    if pa.types.is_dictionary(column_type):
        column_type = column_type.value_type
    return pa.types.is_string(column_type) or pa.types.is_large_string(column_type)


def column_codes(question, column) -> np.ndarray | None:
    """The code of each row of an Arrow column (−1 not answered: null or "", −2 not a report): text
    cells through :func:`dictionary_codes`, numbers through the type's
    :meth:`~.questions.base.QuestionType.number_codes`; None when the type reads no numbers (or the
    column is neither text nor numbers)."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    if len(column) and column.null_count == len(column):
        # no answer in any row, whatever the type: pandas writes such a column (a question nobody was
        # asked, read from a CSV export as NaN) as float64 or null
        return np.full(len(column), NOT_ANSWERED, dtype=np.int64)
    if is_text(column.type):
        encoded = column if pa.types.is_dictionary(column.type) else pc.dictionary_encode(column)
        mapping = dictionary_codes(question, encoded.dictionary,
                                   value_set(question) if question.qtype.categorical else None)
    elif pa.types.is_integer(column.type) or pa.types.is_floating(column.type) or pa.types.is_decimal(column.type):
        encoded = pc.dictionary_encode(column)
        mapping = question.qtype.number_codes(question, encoded.dictionary.to_pylist())
        if mapping is None:
            return None
    else:
        return None
    indices = encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    return np.append(np.asarray(mapping, dtype=np.int64), NOT_ANSWERED)[indices]  # −1 (null) takes the last


def _value_texts(question) -> tuple[list[str], np.ndarray]:
    """The cell texts a choice's column may hold — the labels, "" (not answered), the labels as the export
    neutralized them for spreadsheets, and ``NA`` (not asked; a label ``NA`` comes first, so it wins)
    — and the option index each one stands for."""
    neutralized = [(i, spreadsheet_safe(o)) for i, o in enumerate(question.options) if spreadsheet_safe(o) != o]
    texts = list(question.options) + [""] + [text for _, text in neutralized] + [NOT_ASKED]
    meaning = np.array([*range(question.k), NOT_ANSWERED, *(i for i, _ in neutralized), NOT_ASKED_CODE],
                       dtype=np.int16)
    return texts, meaning


def value_set(question) -> tuple[pa.Array, np.ndarray]:
    """:func:`_value_texts` with the texts as an Arrow array (for ``pyarrow.compute.index_in``)."""
    texts, meaning = _value_texts(question)
    return pa.array(texts, pa.string()), meaning


def text_codes(question, texts: list[str]) -> np.ndarray:
    """The code of each distinct cell text of a column (−1 not answered, −2 unknown, −3 ``NA``: not
    asked, for :func:`settle_not_asked`), without Arrow: a choice's labels (and their neutralized
    forms) looked up, the first text of :func:`_value_texts` winning as ``index_in`` finds it; the other
    types parse each text once (:meth:`~.questions.base.QuestionType.codes_of`)."""
    if question.qtype.categorical:
        lookup = {}
        for text, meaning in zip(*_value_texts(question)):
            lookup.setdefault(text, int(meaning))
        return np.array([lookup.get(t, -2) for t in texts], dtype=np.int64)
    codes = np.asarray(question.qtype.codes_of(question, texts))
    return np.where((codes == -2) & np.array([t == NOT_ASKED for t in texts], dtype=bool),
                    NOT_ASKED_CODE, codes).astype(np.int64)


def dictionary_codes(question, dictionary: pa.Array, labels: tuple[pa.Array, np.ndarray]) -> np.ndarray:
    """The code of each distinct cell text of a column (:func:`text_codes`): a choice maps its labels with
    ``pyarrow.compute.index_in`` (a block's dictionary may be large); the other types by :func:`text_codes`.
    """
    if not question.qtype.categorical:
        return text_codes(question, dictionary.to_pylist())
    texts, meaning = labels
    positions = pc.index_in(dictionary, value_set=texts)
    unknown = positions.is_null().to_numpy(zero_copy_only=False)
    return np.where(unknown, -2, meaning[positions.fill_null(0).to_numpy(zero_copy_only=False)]).astype(np.int64)


def _to_indices(path: Path, question, column: pa.DictionaryArray, labels: tuple[pa.Array, np.ndarray],
                rows_before: int, header_line: int = 1) -> np.ndarray:
    """Map one block's dictionary-encoded cells to codes (the empty cell to −1)."""
    # the codes of the block's dictionary (its distinct values), then one take on the indices.
    mapping = dictionary_codes(question, column.dictionary, labels)
    unknown = mapping == -2
    if unknown.any():
        # The first row of the block holding any unknown label (not only the first distinct one).
        bad_entries = np.flatnonzero(unknown)
        row = int(np.flatnonzero(np.isin(column.indices.to_numpy(zero_copy_only=False), bad_entries))[0])
        label = column.dictionary[int(column.indices[row].as_py())].as_py()
        line = _line_of_row(path, rows_before + row, header_line)
        raise CSVError(f"{path}:{line}: column {question.id!r}: {unknown_cell(question, label)}")
    return mapping[column.indices.to_numpy(zero_copy_only=False)]


def unknown_cell(question, text: str) -> str:
    """The message for a cell that is not a report of ``question``."""
    if question.qtype.categorical:
        return f"unknown option label {text!r} (expected one of: {_labels_list(question.options)})"
    return f"not a report of this {question.type} question: {text[:40]!r} (expected {question.qtype.expected(question)})"


def write_responses_csv(path, dataset: Dataset, progress: Callable[[int], None] | None = None,
                        text_versions: np.ndarray | None = None) -> None:
    """Write ``dataset`` as a responses CSV to ``path`` (a path, or a binary stream such as stdout):
    the design line, the header, one row per response.

    ``progress``, if given, receives the number of rows written after each chunk;
    ``text_versions`` (one per row) adds the ``text-version`` column.
    """
    survey = dataset.survey
    # Labels a spreadsheet would run as a formula are written neutralized (.spreadsheet); the
    # other types' cells are numbers, Y/N letters and arm:count, never formula-like.
    labels = {q.id: pa.array([spreadsheet_safe(o) for o in q.options] + ["", NOT_ASKED], pa.string())
              for q in survey.questions if q.qtype.categorical}
    hidden = logic.not_asked(survey, dataset.columns)  # display logic: NA rather than the empty cell
    texts = [q.id for q in survey.questions] + [spreadsheet_safe(o) for q in survey.questions for o in q.options]
    quoting = "needed" if any(c in t for t in texts for c in NEEDS_QUOTES) else "none"
    fields = [(q.id, pa.dictionary(pa.int16() if q.qtype.categorical else pa.int32(), pa.string()))
              for q in survey.questions]
    names = [q.id for q in survey.questions]
    if text_versions is not None:
        fields.append((TEXT_VERSION, pa.int32()))
        names.append(TEXT_VERSION)
    schema = pa.schema(fields)
    n = dataset.n_rows

    def chunk(start: int) -> pa.RecordBatch:
        arrays = []
        for q in survey.questions:
            codes = dataset.columns[q.id][start:start + WRITE_CHUNK]
            not_asked = hidden[q.id][start:start + WRITE_CHUNK] if q.id in hidden else None
            if q.qtype.categorical:
                indices = codes.astype(np.int16)
                indices[indices == NOT_ANSWERED] = q.k  # the "" label
                if not_asked is not None:
                    indices[not_asked] = q.k + 1  # NA
                arrays.append(pa.DictionaryArray.from_arrays(pa.array(indices), labels[q.id]))
            else:
                arrays.append(cell_array(q, codes, not_asked))
        if text_versions is not None:
            arrays.append(pa.array(np.asarray(text_versions[start:start + WRITE_CHUNK], dtype=np.int32)))
        return pa.RecordBatch.from_arrays(arrays, schema=schema)

    # The header is written here so that it is unquoted like the cells (pyarrow quotes names).
    header = io.StringIO()
    header.write(design_line(survey) + "\n")
    csv.writer(header, lineterminator="\n").writerow(names)
    options = pcsv.WriteOptions(quoting_style=quoting, include_header=False)
    try:
        with _open_sink(path) as sink:
            sink.write(header.getvalue().encode("utf-8"))
            with pcsv.CSVWriter(sink, schema, write_options=options) as writer:
                for start in range(0, n, WRITE_CHUNK):
                    writer.write_batch(chunk(start))
                    if progress is not None:
                        progress(min(WRITE_CHUNK, n - start))
    except (OSError, pa.ArrowException) as exc:
        raise CSVError(f"{path}: cannot write: {exc}") from None


def cell_array(question, codes: np.ndarray, not_asked: np.ndarray | None = None) -> pa.DictionaryArray:
    """A column of codes of a non-choice question as dictionary-encoded text cells ("" = not answered,
    the CSV's empty cell, and ``NA`` in the rows ``not_asked``; the Parquet column is the type's own,
    :func:`.files.write_responses_parquet`)."""
    codes = np.asarray(codes, dtype=np.int64)
    if not_asked is not None:
        codes = np.where(not_asked, NOT_ASKED_CODE, codes)
    unique, inverse = np.unique(codes, return_inverse=True)
    texts = ["" if c == NOT_ANSWERED else NOT_ASKED if c == NOT_ASKED_CODE else question.qtype.text_of(question, c)
             for c in unique.tolist()]
    return pa.DictionaryArray.from_arrays(pa.array(inverse.reshape(-1).astype(np.int32)), pa.array(texts, pa.string()))


def _open_sink(path):
    if hasattr(path, "write"):
        return contextlib.nullcontext(path)
    return open(path, "wb")
