"""One error hierarchy for everything deniable refuses on purpose.

:class:`DeniableError` is the root: a problem a person can act on, whose message says what is
wrong in words.  :class:`FieldError` is one that is about a named piece of input — a form field, a
path in a survey definition (``questions[1].epsilon``), a command-line option, a CSV column, an
estimator's argument (``confidence``, ``margin``, ``counts``) — and carries it as ``field`` (None
when it is about the input as a whole).  Every error class of the project derives from one of them
(and from :class:`ValueError`, as before, for callers that catch that — but for the Python client's
:class:`~deniable.client.submit.SubmitError`, a network failure, which stays a RuntimeError), so the
two front ends map them in one place each: the web app to a 4xx response (JSON ``{"error", "field"}``
under ``/api/``, :mod:`deniable.server.web.errors`), the command line to one ``Error: …`` line and
exit status 1 (:mod:`deniable.server.cli`).  The estimators refuse bad arguments with
:class:`FieldError`, never a bare ValueError (``tests/unit/test_error_family.py`` holds both rules).

>>> try:
...     raise FieldError("must be a number in (0, 20], got -1", "epsilon")
... except DeniableError as exc:
...     print(exc.field, "-", exc)
epsilon - must be a number in (0, 20], got -1
"""

from __future__ import annotations

import json
import numbers


class DeniableError(Exception):
    """A problem a person can act on; the message says what is wrong, in words."""


class FieldError(DeniableError, ValueError):
    """A problem with one named piece of input: ``field`` names it (None: the input as a whole)."""

    def __init__(self, message: str = "", field: str | None = None):
        super().__init__(message)
        self._field = field

    @property
    def field(self) -> str | None:
        return self._field


def sent(value, width: int = 40) -> str:
    """What was sent, for a message refusing it, in JSON's words: ``null``, ``true``, ``1.5``, ``"1"``,
    ``[1]``, ``{"x": 1}`` (cut to ``width`` characters) — not Python's type names (``NoneType``, ``str``),
    which mean nothing to a client that wrote JSON.  A value JSON cannot spell is shown by its ``repr``.

    >>> sent(None), sent(True), sent(1.0), sent("1"), sent([1, 0]), sent(float("nan"))
    ('null', 'true', '1.0', '"1"', '[1, 0]', 'NaN')
    """
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        text = str(int(value))  # numpy's integers too
    else:
        try:
            text = json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError):
            text = repr(value)
    return text if len(text) <= width else text[:width - 1] + "…"


__all__ = ["DeniableError", "FieldError", "sent"]
