"""JSON as the project reads it: an object that names a key twice is refused, never resolved.

Python's ``json`` keeps the last of two equal keys, so ``{"epsilon": 0.5, "epsilon": 5}`` would
show a reviewer one ε and give the mechanism another.  Every JSON the project reads goes through
:func:`no_duplicate_keys` — definitions and codebooks (``deniable import``/``create``, the
dashboard's import), truth files, ``DENIABLE_TRUSTED_HOSTS``, and submissions to the JSON API —
and a duplicate raises :class:`DuplicateKeyError` naming the key (and, from :func:`loads`, the
line of the object that repeats it).  Text that is not JSON at all raises :class:`JSONError` from
:func:`loads` (through :func:`.parsing.parsed`): both are FieldErrors, so callers catch no ValueError.
"""

from __future__ import annotations

import json
import json.decoder
import json.scanner
from functools import partial

from deniable.errors import FieldError

from .parsing import parsed


class JSONError(FieldError):
    """Text that is not JSON, or nested too deeply to read; the message is the parser's own.

    ``lineno`` is the line where the parser stopped (None when it does not say: a number of more
    than 4300 digits, nesting too deep, bytes that are not UTF-8) and ``reason`` its words without
    the place (``Expecting value``, ``nested too deeply``: the first line of the message).
    """

    def __init__(self, message: str, field: str | None = None, *, lineno: int | None = None,
                 reason: str | None = None):
        super().__init__(message, field)
        self.lineno, self.reason = lineno, message if reason is None else reason

    @classmethod
    def of(cls, exc: Exception) -> JSONError:
        """The JSONError for what :mod:`json` raised (a JSONDecodeError, another ValueError, a RecursionError)."""
        if isinstance(exc, json.JSONDecodeError):
            return cls(str(exc), lineno=exc.lineno, reason=exc.msg)
        if isinstance(exc, RecursionError):
            return cls(str(exc), reason="nested too deeply")
        return cls(str(exc), reason=(str(exc).splitlines() or [""])[0])


class DuplicateKeyError(JSONError):
    """A JSON object names ``key`` more than once.

    From :func:`loads`: ``path`` is where (the key's path, ``("questions", 1, "id")``) and ``lineno``
    the line where the object that repeats it starts; the message names both.
    """

    def __init__(self, key: str, path: tuple = (), lineno: int | None = None):
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".") or repr(key[:64])
        line = f" (in the object that starts on line {lineno})" if lineno else ""
        super().__init__(f"{where}: the key {key[:64]!r} appears more than once in one object{line}", where,
                         lineno=lineno)
        self.key, self.path = key, tuple(path) or (key,)


def no_duplicate_keys(pairs: list[tuple[str, object]]) -> dict:
    """``object_pairs_hook`` for :mod:`json`: the object as a dict, or DuplicateKeyError."""
    data = {}
    for key, value in pairs:
        if key in data:
            raise DuplicateKeyError(key)
        data[key] = value
    return data


def loads(text: str):
    """``json.loads(text)`` refusing repeated keys: DuplicateKeyError says which key, where.

    Text that does not parse raises :class:`JSONError`.
    """
    try:
        return parsed(partial(json.loads, object_pairs_hook=no_duplicate_keys), text, JSONError.of)
    except DuplicateKeyError as exc:  # rare: decode again to say where
        path = _path_of_duplicate(text) or (exc.key,)
        raise DuplicateKeyError(path[-1], path, _line_of_duplicate(text)) from None


class _Repeats(dict):
    repeated: str | None = None


def _path_of_duplicate(text: str) -> tuple | None:
    """The path of the first repeated key, in the order the parser finishes objects (inner first)."""

    def keep(pairs):
        data = _Repeats()
        for key, value in pairs:
            if key in data and data.repeated is None:
                data.repeated = key
            data[key] = value
        return data

    def walk(node, path):
        children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, child in children:
            found = walk(child, (*path, key))
            if found:
                return found
        return (*path, node.repeated) if isinstance(node, _Repeats) and node.repeated is not None else None

    try:
        document = parsed(partial(json.loads, object_pairs_hook=keep), text, JSONError.of)
    except JSONError:  # what follows the repeated key does not parse: the key is said alone
        return None
    return walk(document, ())


def _line_of_duplicate(text: str) -> int | None:
    """The line of the first object that repeats a key (the pure-Python scanner, whose object
    parser can be wrapped to know where each object starts)."""
    found = []

    def parse_object(s_and_end, *args, **kwargs):
        try:
            return json.decoder.JSONObject(s_and_end, *args, **kwargs)
        except DuplicateKeyError:
            if not found:
                found.append(s_and_end[0].count("\n", 0, s_and_end[1]) + 1)
            raise

    decoder = json.JSONDecoder(object_pairs_hook=no_duplicate_keys)
    decoder.parse_object = parse_object
    decoder.scan_once = json.scanner.py_make_scanner(decoder)
    try:
        parsed(decoder.decode, text, JSONError.of)
    except JSONError:  # DuplicateKeyError is one
        pass
    return found[0] if found else None
