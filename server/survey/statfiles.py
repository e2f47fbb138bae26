"""The responses as SPSS (``.sav``) and Stata (``.dta``) files, with value labels (pyreadstat).

One variable per question, named by its id (in Stata files at most 31 characters: longer ids
are cut and made unique), labelled with the question text; values ``1..k`` with the option labels as value
labels, and not answered = system missing (SPSS) / ``.`` (Stata).  ``text_version`` (the
wording each response was answered under) is the last variable when given.  The design line of
the CSV (:func:`.codebook.design_line`) goes into the file too — SPSS's notes, Stata's data
label (fingerprint only: it holds 80 characters) — so these files carry their design as well.
"""

from __future__ import annotations

import re
import textwrap

import numpy as np

from .codebook import SEPARATOR, design_line
from .dataset import NOT_ANSWERED, Dataset
from .definition import design_fingerprint

# Stata names hold 32 characters, but pyreadstat names each value-label set after its variable and
# ReadStat refuses a 32-character label name ("too long for the file format"): 31.
STATA_NAME = 31
FORMATS = ("sav", "dta")


def variable_names(ids: list[str], limit: int | None) -> list[str]:
    """The question ids as variable names, cut to ``limit`` characters and kept unique.

    >>> variable_names(["a" * 40, "a" * 35], 8)
    ['aaaaaaaa', 'aaaaaa_2']
    """
    names: list[str] = []
    for qid in ids:
        name = qid if limit is None else qid[:limit]
        n = 2
        while name in names:
            suffix = f"_{n}"
            name = (qid if limit is None else qid[:limit - len(suffix)]) + suffix
            n += 1
        names.append(name)
    return names


def _note_lines(line: str) -> list[str]:
    """SPSS notes hold lines of at most 80 characters: one part of the design line per line."""
    return [piece for part in line.split(SEPARATOR) for piece in textwrap.wrap(part, 80)]


def write_stat_file(path, dataset: Dataset, fmt: str, text_versions: np.ndarray | None = None) -> None:
    """Write ``dataset`` to ``path`` as ``fmt`` (``"sav"`` or ``"dta"``) with value labels."""
    import pandas as pd
    import pyreadstat

    if fmt not in FORMATS:
        raise ValueError(f"format: must be one of {', '.join(FORMATS)}, got {fmt!r}")
    survey = dataset.survey
    names = variable_names([q.id for q in survey.questions], STATA_NAME if fmt == "dta" else None)
    columns, value_labels, labels = {}, {}, []
    for name, q in zip(names, survey.questions):
        codes = dataset.columns[q.id].astype(np.float64) + 1
        codes[dataset.columns[q.id] == NOT_ANSWERED] = np.nan
        columns[name] = codes
        value_labels[name] = {i + 1: label for i, label in enumerate(q.options)}
        labels.append(re.sub(r"\s+", " ", q.text)[:80 if fmt == "dta" else 256])
    if text_versions is not None:
        columns["text_version"] = np.asarray(text_versions, dtype=np.int32)
        labels.append("wording answered under (codebook: text_versions)")
    frame = pd.DataFrame(columns)
    if fmt == "sav":
        pyreadstat.write_sav(frame, str(path), column_labels=labels, variable_value_labels=value_labels,
                             file_label=survey.title[:64], note=_note_lines(design_line(survey)))
    else:
        pyreadstat.write_dta(frame, str(path), column_labels=labels, variable_value_labels=value_labels,
                             file_label=f"{survey.slug} design {design_fingerprint(survey)}"[:80])
