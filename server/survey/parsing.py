"""Text read as a number or as JSON, at one boundary: what Python's parsers refuse becomes a FieldError.

``int()``, ``float()``, ``Decimal`` and :mod:`json` refuse their input with a bare ValueError (or a
TypeError, decimal's InvalidOperation, a RecursionError).  :func:`parsed` is the one place where the
server catches those and raises a :class:`~deniable.errors.FieldError` instead, so that everywhere
else only the project's own errors are caught: :func:`number` names the field a number was read
from, :func:`number_or_none` is for text that may or may not be one, and :func:`.strict_json.loads`
reads JSON through :func:`parsed`.

>>> number("0,5".replace(",", "."), "epsilon")
0.5
>>> number("lots", "epsilon")
Traceback (most recent call last):
...
deniable.errors.FieldError: epsilon: must be a number, got 'lots'
>>> number_or_none("12", int), number_or_none("twelve", int)
(12, None)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from deniable.errors import DeniableError, FieldError


def parsed(parse: Callable[[Any], Any], text, error: Callable[[Exception], DeniableError]):
    """``parse(text)``, or ``error(exc)`` raised for the error the parser refused ``text`` with.

    A DeniableError raised inside ``parse`` (a JSON hook's, such as a repeated key's) passes as it is.
    """
    try:
        return parse(text)
    except DeniableError:
        raise
    except (TypeError, ValueError, ArithmeticError, RecursionError) as exc:
        raise error(exc) from exc


def number(text, field: str | None, kind: Callable[[Any], Any] = float, message: str | None = None):
    """``kind(text)`` (float, int or Decimal), or FieldError naming ``field``, whose message is ``message``
    or else ``FIELD: must be a number, got 'TEXT'`` (the text's first 20 characters)."""
    return parsed(kind, text, lambda exc: FieldError(
        message if message is not None else f"{field}: must be a number, got {str(text)[:20]!r}", field))


def number_or_none(text, kind: Callable[[Any], Any] = float):
    """``kind(text)``, or None when ``text`` is not such a number (nor a number at all: None, say)."""
    try:
        return number(text, None, kind)
    except FieldError:
        return None


__all__ = ["number", "number_or_none", "parsed"]
