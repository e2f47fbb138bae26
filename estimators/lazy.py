"""Names a module exports but imports only when first used (PEP 562): the package's public names and
estimators.weights' names that moved to modules of their own."""

from __future__ import annotations

import importlib


def lazy_exports(namespace: dict, homes: dict[str, str], listed) -> tuple:
    """The module-level ``__getattr__`` and ``__dir__`` of the module whose globals are ``namespace``:
    a name of ``homes`` is imported from its sibling module (``homes[name]``) when first asked for, then
    kept as an ordinary attribute; ``__dir__`` adds the names of ``listed``."""
    package = namespace["__package__"]

    def __getattr__(name: str):
        if name not in homes:
            raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{homes[name]}", package), name)
        namespace[name] = value  # once imported, an ordinary attribute
        return value

    def __dir__():
        return sorted(set(namespace) | set(listed))

    return __getattr__, __dir__
