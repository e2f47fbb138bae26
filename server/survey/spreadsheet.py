"""Cells that a spreadsheet would run as a formula are written neutralized.

A CSV opened in Excel, LibreOffice or Google Sheets runs a cell that starts with ``=``, ``+``,
``-``, ``@``, a tab or a carriage return as a formula (CSV or formula injection): an option
label such as ``=HYPERLINK("http://evil.example", "click")`` would become a live link in the
researcher's spreadsheet.  Every CSV this project writes passes its text cells through
:func:`spreadsheet_safe`, which prefixes such a cell with ``'`` — the spreadsheets' own
"this is text" mark (OWASP, *CSV Injection*).  Numbers are written as numbers.  When
``deniable estimate`` reads its own responses export, the codebook is the source of truth:
a neutralized label maps back to its option (:mod:`.responses_csv`), and a definition may not
hold two labels that would read alike (:func:`~.definition.parse_question`).
"""

from __future__ import annotations

import csv

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(text: str) -> str:
    """``text``, prefixed with ``'`` if a spreadsheet would run it as a formula.

    >>> spreadsheet_safe('=HYPERLINK("http://evil.example")'), spreadsheet_safe("Never")
    ('\\'=HYPERLINK("http://evil.example")', 'Never')
    """
    return "'" + text if text.startswith(FORMULA_STARTS) else text


class SafeWriter:
    """A ``csv.writer`` whose text cells go through :func:`spreadsheet_safe`."""

    def __init__(self, stream, **kwargs):
        self._writer = csv.writer(stream, **kwargs)

    def writerow(self, row) -> None:
        self._writer.writerow([spreadsheet_safe(c) if isinstance(c, str) else c for c in row])

    def writerows(self, rows) -> None:
        for row in rows:
            self.writerow(row)
