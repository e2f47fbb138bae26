"""Text for people and spreadsheets: aligned columns for a terminal, counted nouns, CSV text.

What every result's ``table()`` and ``to_csv()`` share (:mod:`.estimates`, :mod:`.weighted`,
:mod:`.raking`).  The standard library only, and :mod:`.spreadsheet`: the command line imports
:func:`plural` at start-up.
"""

from __future__ import annotations

import io

from .spreadsheet import SafeWriter


def grid(headers: list[str], rows: list[list[str]], indent: str = "  ") -> list[str]:
    """Align columns: the first left-aligned, the others right-aligned.

    >>> grid(["option", "n"], [["Yes", "1,000"], ["No", "7"]])
    ['  option      n', '  Yes     1,000', '  No          7']
    """
    widths = [max(len(str(c)) for c in col) for col in zip(headers, *rows)]

    def line(cells):
        parts = [str(cells[0]).ljust(widths[0])] + [str(c).rjust(w) for c, w in zip(cells[1:], widths[1:])]
        return indent + "  ".join(parts).rstrip()

    return [line(headers)] + [line(r) for r in rows]


def plural(n: int, noun: str, nouns: str | None = None) -> str:
    """``1 response``, ``2 responses``, ``1,000 responses``.

    >>> plural(1, "response"), plural(20030, "response"), plural(2, "survey", "surveys")
    ('1 response', '20,030 responses', '2 surveys')
    """
    return f"{n:,} {noun if n == 1 else (nouns or noun + 's')}"


def csv_text(rows) -> str:
    """``rows`` (lists of cells) as CSV text with ``\\n`` line ends, a text cell a spreadsheet would run as
    a formula neutralized (:class:`.spreadsheet.SafeWriter`).

    >>> csv_text([["label", "n"], ["=1+1", 2]])
    "label,n\\n'=1+1,2\\n"
    """
    out = io.StringIO()
    SafeWriter(out, lineterminator="\n").writerows(rows)
    return out.getvalue()
