"""The responses as SPSS (``.sav``) and Stata (``.dta``) files, with value labels (pyreadstat).

Each question gives the columns its type says (:meth:`~.questions.base.QuestionType.stat_columns`):
a single choice one variable ``1..k`` with the option labels as value labels (under a design whose
reports are not the options, the reports': the crosswise model's "same"/"different", Kuk's
"red"/"black"; the codes are the same); a number its
reported value, unlabelled; a check-all question one 0/1 variable per option (``ID_1``, …,
labelled No/Yes, the variable label "text: option"); a list experiment ``ID_arm`` (0 control,
1 treatment) and ``ID_count``.  Variables are named by the question id and the column's suffix,
cut to the format's limit (SPSS 64 characters, Stata 31), kept unique, and prefixed with ``v``
where the format refuses the name (an SPSS name beginning with ``_``, a reserved word); each is
labelled with the question text (cut to the format's limit, keeping the column's own part).  Not
answered = system missing (SPSS) / ``.`` (Stata).  Not asked (display logic: the question's ``show_if``
does not hold for the row's answers) = a user-missing value (SPSS: −1, or for a number that can be −1
or less the first of −9, −99, … below it, :func:`not_asked_value`) / ``.a`` (Stata), labelled "Not
asked" where the variable has value labels: pandas and R's haven read both as missing, and
``user_na=TRUE`` / ``na_tag()`` tell them apart.  ``text_version`` (the wording each response was
answered under) is the last variable when given.  SPSS's measure level (:func:`measure`) is nominal
for categories (choices, ticks, arms, groups, the wording) and scale for numbers (a numeric
question's value, a list experiment's count); Stata has none.  The design line of the CSV
(:func:`.codebook.design_line`) goes into the file too — SPSS's notes, Stata's data label
(fingerprint only: it holds 80 characters) — so these files carry their design as well.
"""

from __future__ import annotations

import re
import textwrap

import numpy as np

from . import logic
from .codebook import SEPARATOR, design_line
from .dataset import Dataset
from .definition import design_fingerprint

# Stata names hold 32 characters, but pyreadstat names each value-label set after its variable and
# ReadStat refuses a 32-character label name ("too long for the file format"): 31.
STATA_NAME = 31
SPSS_NAME = 64
TEXT_VERSION = "text_version"
FORMATS = ("sav", "dta")
NOT_ASKED_LABEL = "Not asked"
STATA_NOT_ASKED = "a"  # Stata's extended missing value .a


# Names each format refuses (ReadStat: "a provided name is a reserved word"); SPSS's are case-blind.
SPSS_RESERVED = frozenset({"all", "and", "by", "eq", "ge", "gt", "le", "lt", "ne", "not", "or", "to", "with"})
STATA_RESERVED = frozenset({"_all", "_b", "byte", "_coef", "_cons", "double", "float", "if", "in", "int", "long", "_n",
                            "_N", "_pi", "_pred", "_rc", "_skip", "strL", "using", "with"})


def legal_name(name: str, fmt: str | None) -> bool:
    """Whether ``fmt`` accepts ``name`` (a question id with a suffix: letters, digits, underscores):
    SPSS names begin with a letter and are no reserved word; Stata's are no reserved word."""
    if fmt == "sav":
        return not name.startswith("_") and name.lower() not in SPSS_RESERVED
    if fmt == "dta":
        return name not in STATA_RESERVED and not re.fullmatch(r"str[0-9]+", name)
    return True


def variable_names(ids: list[str], limit: int | None, suffixes: list[str] | None = None,
                   taken: tuple[str, ...] = (), fmt: str | None = None) -> list[str]:
    """Variable names: each question id with its column's suffix, cut to ``limit`` characters (the
    id is cut, the suffix kept) and kept unique, also against the names ``taken``; an id that
    ``fmt`` refuses (:func:`legal_name`) begins with ``v`` (``_x`` → ``v_x``, ``int`` → ``vint``).

    >>> variable_names(["a" * 40, "a" * 35], 8)
    ['aaaaaaaa', 'aaaaaa_2']
    >>> variable_names(["b" * 40, "b" * 40], 8, ["_arm", "_count"])
    ['bbbb_arm', 'bb_count']
    >>> variable_names(["_x", "int", "all"], 31, fmt="dta"), variable_names(["_x", "int", "all"], 64, fmt="sav")
    (['_x', 'vint', 'all'], ['v_x', 'int', 'vall'])
    """
    suffixes = [""] * len(ids) if suffixes is None else suffixes
    names: list[str] = []
    used = set(taken)
    for qid, suffix in zip(ids, suffixes):
        room = None if limit is None else limit - len(suffix)
        if not legal_name(qid[:room] + suffix, fmt):
            qid = "v" + qid
        name = qid[:room] + suffix
        n = 2
        while name in used:
            mark = f"_{n}"
            name = qid[:None if room is None else room - len(mark)] + mark + suffix
            n += 1
        names.append(name)
        used.add(name)
    return names


def _label(label: str, text: str, limit: int) -> str:
    """A variable label in at most ``limit`` characters; when it begins with the question's text
    (as "text: option" does), the text is shortened so that the column's own part stays."""
    label = re.sub(r"\s+", " ", label)
    if len(label) <= limit:
        return label
    text = re.sub(r"\s+", " ", text)
    rest = label[len(text):] if label.startswith(text) else ""
    if rest and len(rest) < limit - 10:
        return label[:limit - len(rest) - 1] + "…" + rest
    return label[:limit]


def _note_lines(line: str) -> list[str]:
    """SPSS notes hold lines of at most 80 characters: one part of the design line per line."""
    return [piece for part in line.split(SEPARATOR) for piece in textwrap.wrap(part, 80)]


def not_asked_value(q) -> int:
    """The SPSS user-missing value that says "not asked" in the variables of ``q``: −1, or, when one of
    them can hold −1 or less (a number with a negative minimum), the first of −9, −99, −999, … below
    everything it can hold.  Every type's variables rise or fall with the report's code (a number with
    its steps, ticks and arms 0 or 1), so the first and the last code hold the least value."""
    codes = np.array([0, q.qtype.n_cells(q) - 1])
    lowest = min((float(np.nanmin(values)) for _, values, _, _ in q.qtype.stat_columns(q, codes)
                  if values.dtype.kind == "f"), default=0.0)
    value, digits = -1, 1
    while value >= lowest:
        value, digits = -(10 ** digits - 1), digits + 1
    return value


def measure(values: np.ndarray, value_labels: dict | None) -> str:
    """SPSS's measure level of a column as its type gives it (:meth:`~.questions.exports.Files.stat_columns`):
    ``nominal`` for categories — a column with value labels (a choice's options, a tick's No/Yes, a list
    experiment's arm, a two-group question's group and answer) or of text — and ``scale`` for numbers
    without labels (a numeric question's value, a list experiment's count of items: its estimate is a
    difference of means).  No column is ``ordinal``: a definition states no order among a choice's options."""
    return "nominal" if value_labels or values.dtype.kind != "f" else "scale"


def stat_frame(dataset: Dataset, fmt: str, text_versions: np.ndarray | None = None):
    """The data frame, variable labels, value labels, not-asked missing values (SPSS's
    ``missing_ranges``, Stata's ``missing_user_values``) and measure levels (SPSS's only: :func:`measure`)
    of ``dataset`` as ``fmt`` holds them."""
    import pandas as pd

    survey = dataset.survey
    hidden = logic.not_asked(survey, dataset.columns)
    limit, label_limit = (STATA_NAME, 80) if fmt == "dta" else (SPSS_NAME, 256)
    parts = [(q, part) for q in survey.questions
             for part in q.qtype.stat_columns(q, np.asarray(dataset.columns[q.id]))]
    names = variable_names([q.id for q, _ in parts], limit, [part[0] for _, part in parts],
                           taken=(TEXT_VERSION,) if text_versions is not None else (), fmt=fmt)
    columns, value_labels, labels, missing, measures = {}, {}, [], {}, {}
    for name, (q, (_, values, value_label, label)) in zip(names, parts):
        measures[name] = measure(values, value_label)
        if value_label:
            value_labels[name] = dict(value_label)
        if q.id in hidden and values.dtype.kind == "f":  # a text variable (no type has one) keeps ""
            mark = STATA_NOT_ASKED if fmt == "dta" else not_asked_value(q)
            values = values.astype(object if fmt == "dta" else float)
            values[hidden[q.id]] = mark
            missing[name] = [mark]
            if value_label:
                value_labels[name][mark] = NOT_ASKED_LABEL
        columns[name] = values
        labels.append(_label(label, q.text, label_limit))
    if text_versions is not None:
        columns[TEXT_VERSION] = np.asarray(text_versions, dtype=np.int32)
        labels.append("wording answered under (codebook: text_versions)")
        measures[TEXT_VERSION] = "nominal"  # which wording: a category
    return pd.DataFrame(columns), labels, value_labels, missing, measures


def write_stat_file(path, dataset: Dataset, fmt: str, text_versions: np.ndarray | None = None) -> None:
    """Write ``dataset`` to ``path`` as ``fmt`` (``"sav"`` or ``"dta"``) with value labels."""
    import pyreadstat

    if fmt not in FORMATS:
        raise ValueError(f"format: must be one of {', '.join(FORMATS)}, got {fmt!r}")
    survey = dataset.survey
    frame, labels, value_labels, missing, measures = stat_frame(dataset, fmt, text_versions)
    if fmt == "sav":
        pyreadstat.write_sav(frame, str(path), column_labels=labels, variable_value_labels=value_labels,
                             file_label=survey.title[:64], note=_note_lines(design_line(survey)),
                             missing_ranges=missing or None, variable_measure=measures)
    else:
        pyreadstat.write_dta(frame, str(path), column_labels=labels, variable_value_labels=value_labels,
                             file_label=f"{survey.slug} design {design_fingerprint(survey)}"[:80],
                             missing_user_values=missing or None)
