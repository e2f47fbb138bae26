"""The registry of question types: a definition's ``"type"`` → the :class:`~.base.QuestionType` that owns it.

Kept apart from the type modules so that :mod:`..definition` can name the default type without
importing them (they import the definition's field helpers).  A new type is one module that
subclasses :class:`~.base.QuestionType` and calls :func:`register` on an instance; importing
:mod:`deniable.server.survey.questions` registers the built-in ones.
"""

from __future__ import annotations

import importlib
import threading

DEFAULT = "choice"  # a question without "type" (every definition written before there were types)
BUILT_IN = ("choice", "numeric", "multi", "listexp", "two_group")  # the modules of this package that register a type

_TYPES: dict = {}
_loaded = False
_lock = threading.RLock()  # the first lookups may come from several threads of a server at once


def _load() -> None:
    """Import the built-in type modules once, on first use (they import the definition module, which
    imports this one: loading them lazily keeps that cycle out of import time)."""
    global _loaded
    if _loaded:
        return
    with _lock:
        if not _loaded:
            for module in BUILT_IN:
                importlib.import_module(f"{__package__}.{module}")
            _loaded = True


def register(question_type):
    """Register ``question_type`` under its ``name`` (returned, so it can be used as a decorator's value)."""
    if question_type.name in _TYPES and type(_TYPES[question_type.name]) is not type(question_type):
        raise ValueError(f"question type {question_type.name!r} is already registered")
    _TYPES[question_type.name] = question_type
    return question_type


def unregister(name: str) -> None:
    """Remove a registered type (tests register a fifth type for the battery and remove it after)."""
    _TYPES.pop(name, None)


def get(name: str):
    """The registered type called ``name``; KeyError if there is none."""
    try:
        return _TYPES[name]
    except KeyError:
        _load()
        return _TYPES[name]


def names() -> tuple[str, ...]:
    """Every registered type's name, in registration order."""
    _load()
    return tuple(_TYPES)


def all_types() -> tuple:
    """Every registered type, in registration order."""
    _load()
    return tuple(_TYPES.values())
