"""Every file of reports deniable reads, through one function: :func:`read` (and :func:`read_counts`).

- deniable's own **responses file**, CSV or Parquet by its suffix (:mod:`.files`,
  :mod:`.responses_csv`): a CSV's design line is checked against the codebook first
  (:func:`.codebook.check_design`), so responses collected under another design are refused by name;
- **counts** aggregated elsewhere, some question columns and ``count`` (:func:`read_counts`);
- **data collected for R's RRreg** (``response`` 0/1, ``group`` 1/2), for ``deniable estimate --rrreg MODEL``
  (:func:`read_rrreg`; :data:`RRREG_TWO_GROUP` and :data:`RRREG_ONE_GROUP` name the models and how many
  probabilities each takes, as RRreg's ``RRuni``);
- **another survey tool's results**, ``source`` naming the tool: :data:`SOURCES` is the one table
  of them — each tool's reader, what its file is and how the tool spells its name — that
  ``deniable estimate --from`` offers and the dashboard's embed page names.

Importing this module imports no reader: pyarrow and numpy come in with the first file read, so
the command line, which takes its ``--from`` choices from here, starts as fast as before.  Every
problem is a :class:`~deniable.errors.FieldError` whose message names the file and the line, row
or question (the command line prints it as its one ``Error:`` line).
"""

from __future__ import annotations

import importlib
import itertools
from typing import TYPE_CHECKING, NamedTuple

from deniable.errors import FieldError

if TYPE_CHECKING:
    from .dataset import Dataset, DesignColumns
    from .definition import Survey


class Source(NamedTuple):  # not a dataclass: making one costs a millisecond of every command's start
    """Another survey tool whose results :func:`read` takes (``deniable estimate --from NAME``)."""

    name: str  # --from NAME
    label: str  # the tool's own spelling of its name
    file: str  # what the file is called on the command line
    holds: str  # what the file is, for the option's help
    reader: str  # "module:function" of this package, imported when a file is read

    def read(self, path, survey: Survey, design: DesignColumns | None = None) -> Dataset:
        module, function = self.reader.split(":")
        return getattr(importlib.import_module(f"{__package__}.{module}"), function)(path, survey, design=design)


_EXPORTS = "their CSV exports; docs/embedding.md"
SOURCES = {source.name: source for source in (
    Source("surveyjs", "SurveyJS", "RESULTS.json", "a JSON list of survey.data objects holding the embed's reports",
           "surveyjs:read_surveyjs"),
    Source("otree", "oTree", "EXPORT.csv", "oTree's CSV export, wide or one app's", "otree_export:read_otree"),
    Source("qualtrics", "Qualtrics", "EXPORT.csv", _EXPORTS, "platform_exports:read_qualtrics"),
    Source("limesurvey", "LimeSurvey", "EXPORT.csv", _EXPORTS, "platform_exports:read_limesurvey"),
    Source("redcap", "REDCap", "EXPORT.csv", _EXPORTS, "platform_exports:read_redcap"),
)}


# RRreg's model names (deniable estimate --rrreg) → how many probabilities its p takes (:mod:`.rrreg`)
RRREG_TWO_GROUP = {"CDM": 2, "CDMsym": 4, "SLD": 2, "UQTunknown": 2}
RRREG_ONE_GROUP = {"Warner": 1, "UQTknown": 2, "Kuk": 2, "FR": 2, "Crosswise": 1}


def sources_help() -> str:
    """What ``--from`` says: each source and what its file holds (sources whose files are alike, together)."""
    parts = []
    for holds, same in itertools.groupby(SOURCES.values(), key=lambda source: source.holds):
        names = [source.name for source in same]
        parts.append(f"{', '.join(names[:-1])} or {names[-1]}" if len(names) > 1 else names[0])
        parts[-1] += f" ({holds})"
    return f"The responses file is another survey tool's results: {', '.join(parts)}."


def read(path, survey: Survey, *, source: str | None = None, design: DesignColumns | None = None,
         codebook: str = "the definition", grouped: bool = False, progress=False) -> Dataset:
    """The reports in the file at ``path``, with ``survey`` as the codebook.

    Parameters
    ----------
    source : str, optional
        The tool whose results the file holds, a name of :data:`SOURCES`.  None: deniable's own
        responses file, Parquet or (any other suffix) CSV, whose design line must agree with
        ``survey`` (:class:`~.codebook.DesignMismatch`, naming the file and ``codebook``).
    design : DesignColumns, optional
        The columns (another tool's keys) of each respondent's sampling weight, stratum, cluster
        and fpc, kept in :attr:`.dataset.Dataset.design`.
    codebook : str
        How a mismatch's message names the definition (its file, on the command line).
    grouped : bool
        Without ``design``, deniable's own file is aggregated as it is read: one row per distinct
        answer pattern with its count (:func:`.files.read_patterns`: the same estimates, and only
        the distinct patterns reach Python).  Otherwise one row per response.
    progress : bool or callable
        A progress bar on a terminal while a responses CSV is read (:mod:`.responses_csv`).
    """
    if source is not None:
        if source not in SOURCES:
            raise FieldError(f"unknown source {source!r}: one of {', '.join(SOURCES)}", "source")
        return SOURCES[source].read(path, survey, design)
    from pathlib import Path

    from .codebook import check_design
    from .responses_csv import read_design

    parquet = Path(path).suffix.lower() in (".parquet", ".pq")  # as files.is_parquet
    if not parquet:  # a CSV says which design it was exported under
        check_design(survey, read_design(path), responses=path, codebook=codebook)
    if grouped and design is None and not parquet:  # files.read_patterns of a CSV; pyarrow unless it is small
        from .responses_csv import read_patterns_csv

        return read_patterns_csv(path, survey, progress=progress)
    from . import files  # pyarrow: only here

    if grouped and design is None:
        return files.read_patterns(path, survey, progress=progress)
    return files.read_responses(path, survey, progress=progress, design=design)


def read_counts(path, survey: Survey, *, design: DesignColumns | None = None) -> Dataset:
    """Counts aggregated elsewhere, CSV or Parquet (:func:`.files.read_counts`): a weighted dataset
    over the questions present; with ``design``, one row per respondent, each with its row's design columns."""
    from . import files  # pyarrow: only here

    return files.read_counts(path, survey, design=design)


def read_rrreg(path, model: str):
    """The responses (0/1) and, for a two-group ``model``, the groups (1/2) of a CSV in RRreg's shape
    (:func:`.rrreg.read_rrreg`)."""
    from .rrreg import read_rrreg as read

    return read(path, model)
