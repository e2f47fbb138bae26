"""The layout: one `deniable` namespace over the folders, imports in one direction.

``pyproject.toml`` maps ``deniable.client`` → ``client/``, ``deniable.server`` → ``server/`` and so
on; these tests fail when a new package folder is not listed there (it would be missing from the
wheel), when code imports a folder by its bare name (it would work in a checkout only), or when
an import goes against the direction the docs give (docs/architecture.md).
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
FOLDERS = {"deniable": "deniable", "client": "deniable.client", "estimators": "deniable.estimators",
           "server": "deniable.server", "templates": "deniable.server.templates"}


def package_name(folder: Path) -> str:
    rel = folder.relative_to(ROOT).parts
    if rel[0] == "server" and len(rel) > 1 and rel[1] == "templates":
        raise AssertionError("templates live at the top level")
    return ".".join([FOLDERS[rel[0]], *rel[1:]])


def source_files() -> list[Path]:
    return sorted(p for top in FOLDERS for p in (ROOT / top).rglob("*.py") if "__pycache__" not in p.parts)


def imports_of(path: Path) -> set[str]:
    """Absolute module names imported by ``path`` (relative imports resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = package_name(path.parent)
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


def test_every_package_folder_is_in_pyproject():
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    on_disk = {package_name(init.parent) for top in FOLDERS for init in (ROOT / top).rglob("__init__.py")}
    assert on_disk == listed, f"add to [tool.setuptools] packages: {sorted(on_disk - listed)}; " \
                              f"no such folder: {sorted(listed - on_disk)}"


def test_package_dirs_map_the_top_level_folders():
    assert PYPROJECT["tool"]["setuptools"]["package-dir"] == {name: folder for folder, name in FOLDERS.items()}
    assert PYPROJECT["project"]["scripts"]["deniable"] == "deniable.server.cli:cli"


@pytest.mark.parametrize("path", [*source_files(), *sorted((ROOT / "tests").rglob("*.py")),
                                  *sorted((ROOT / "scripts").glob("*.py"))], ids=lambda p: str(p.relative_to(ROOT)))
def test_nothing_imports_a_folder_by_its_bare_name(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bare = [node.lineno for node in ast.walk(tree)
            if (isinstance(node, ast.ImportFrom) and not node.level and node.module
                and node.module.split(".")[0] in ("client", "server", "estimators", "templates"))
            or (isinstance(node, ast.Import)
                and any(a.name.split(".")[0] in ("client", "server", "estimators", "templates") for a in node.names))]
    assert not bare, f"{path.name}: import `deniable.…` instead (lines {bare})"


# package prefix → prefixes it must not import (the direction of docs/architecture.md)
FORBIDDEN = {
    "deniable.client": ("deniable.estimators", "deniable.server", "flask", "scipy"),
    "deniable.estimators": ("deniable.server", "flask", "sqlite_utils", "werkzeug"),
    "deniable.server.survey": ("deniable.server.store", "deniable.server.web", "deniable.server.cli", "flask",
                               "sqlite_utils"),
    "deniable.server.store": ("deniable.server.web", "deniable.server.cli", "flask"),
    "deniable.server.web": ("deniable.server.cli",),
}


@pytest.mark.parametrize("path", source_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_go_one_way(path):
    package = package_name(path.parent)
    for prefix, forbidden in FORBIDDEN.items():
        if package == prefix or package.startswith(prefix + "."):
            wrong = sorted(name for name in imports_of(path)
                           if any(name == f or name.startswith(f + ".") for f in forbidden))
            assert not wrong, f"{path.relative_to(ROOT)} ({package}) must not import {wrong}"
