"""Every docstring example in the package runs (doctest), module by module."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import deniable


def modules() -> list[str]:
    names = ["deniable"]
    for sub in ("client", "estimators", "server"):
        package = importlib.import_module(f"deniable.{sub}")
        names.append(package.__name__)
        names += [info.name for info in pkgutil.walk_packages(package.__path__, prefix=f"{package.__name__}.")]
    return sorted(names)


def test_the_walk_finds_every_layer():
    found = modules()
    for name in ("deniable.client.mechanism", "deniable.estimators.marginal", "deniable.server.survey.definition",
                 "deniable.server.store.responses", "deniable.server.web.app", "deniable.server.cli.analysis"):
        assert name in found


@pytest.mark.parametrize("name", modules())
def test_doctests(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} doctest examples failed"


def test_the_package_root_documents_the_namespace():
    assert "deniable.estimators" in deniable.__doc__ and deniable.__version__
