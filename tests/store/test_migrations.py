"""The migrations (server/store/migrations*.py): frozen (they import nothing of the project), numbered
in the order they run, renamed from their old names in existing databases without running again, and
idempotent; a fresh database and an upgraded one end with the same schema and the same record."""

from __future__ import annotations

import ast
import re
import shutil
import sqlite3
import sys
from pathlib import Path

import numpy as np
import pytest

from deniable.server.store import aggregates
from deniable.server.store import migrations as history
from deniable.server.store.db import connect, init_db
from deniable.server.survey.definition import Question, Survey

ROOT = Path(__file__).parents[2]
DATA = ROOT / "tests" / "data"
MIGRATION_MODULES = sorted((ROOT / "server" / "store").glob("migrations*.py"))
COMPAT = sorted(p.stem for p in DATA.glob("compat*.db"))  # databases made by earlier revisions
NAMES = [m.name for m in history.migrations._migrations]
FORBIDDEN = {"importlib", "deniable"}  # importlib would reach the project by name


def live_imports(source: str) -> list[str]:
    """Every import of ``source`` (anywhere, in functions too) that is neither the standard library
    nor sqlite-utils: relative imports, ``deniable…``, any other package, importlib, ``__import__``."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level:
            out.append(f"line {node.lineno}: from {'.' * node.level}{node.module or ''}")
            continue
        modules = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                   [node.module] if isinstance(node, ast.ImportFrom) else [])
        for module in modules:
            root = module.split(".")[0]
            if root in FORBIDDEN or (root not in sys.stdlib_module_names and root not in {"sqlite_utils", "__future__"}):
                out.append(f"line {node.lineno}: {module}")
        if isinstance(node, ast.Name) and node.id == "__import__":
            out.append(f"line {node.lineno}: __import__")
    return out


def test_the_check_finds_live_imports():
    assert live_imports("import json\nimport secrets\nimport sqlite_utils\nfrom sqlite_utils import Migrations\n") == []
    # What m007 did before it was frozen: a relative import and an import of the project, inside the function.
    assert live_imports("def m(db):\n    from deniable.server.survey.definition import Question\n"
                        "    from .aggregates import encode\n") == [
        "line 2: deniable.server.survey.definition", "line 3: from .aggregates"]
    assert live_imports("import numpy\n") and live_imports("import importlib\n")
    assert live_imports("x = __import__('deniable')\n")


def test_there_are_migration_modules_and_old_databases():
    assert {"compat", "compat-7ad577a"} <= set(COMPAT)
    assert [p.name for p in MIGRATION_MODULES] == ["migrations.py"]
    assert Path(history.__file__).resolve() in MIGRATION_MODULES


@pytest.mark.parametrize("path", MIGRATION_MODULES, ids=lambda p: p.name)
def test_a_migration_module_imports_nothing_of_the_project(path):
    assert live_imports(path.read_text(encoding="utf-8")) == []


def test_the_migrations_are_numbered_in_the_order_they_run():
    numbers = [int(re.fullmatch(r"m([0-9]{2,})_[a-z0-9_]+", name).group(1)) for name in NAMES]
    assert numbers == list(range(1, len(NAMES) + 1))
    assert [m.fn.__name__ for m in history.migrations._migrations] == NAMES  # recorded under the function's name
    # The old names map, in the order they ran, onto the first twelve, with the same words after the number.
    assert list(history.LEGACY_NAMES.values()) == NAMES[:12]
    assert all(old.split("_", 1)[1] == new.split("_", 1)[1] for old, new in history.LEGACY_NAMES.items())
    assert not set(history.LEGACY_NAMES) & set(NAMES)


def normalized_schema(db) -> list[tuple]:
    """Every object of ``sqlite_master`` with its SQL, whitespace collapsed, in name order."""
    return sorted((kind, name, table, re.sub(r"\s+", " ", sql or "").strip()) for kind, name, table, sql in
                  db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"))


def recorded(db) -> list[str]:
    return [name for (name,) in db.execute(
        "SELECT name FROM _sqlite_migrations WHERE migration_set = 'deniable' ORDER BY id")]


@pytest.fixture
def fresh(tmp_path):
    db = init_db(tmp_path / "fresh.db")
    yield db
    db.conn.close()


@pytest.mark.parametrize("name", COMPAT)
def test_an_upgraded_database_ends_like_a_fresh_one(tmp_path, fresh, name):
    path = tmp_path / "old.db"
    shutil.copy(DATA / f"{name}.db", path)
    with sqlite3.connect(f"file:{DATA / f'{name}.db'}?mode=ro&immutable=1", uri=True) as before:
        legacy = [name for (name,) in before.execute("SELECT name FROM _sqlite_migrations ORDER BY id")]
    assert legacy and set(legacy) <= set(history.LEGACY_NAMES)  # made under the old names
    db = init_db(path)
    try:
        assert recorded(db) == recorded(fresh) == NAMES
        assert normalized_schema(db) == normalized_schema(fresh)
    finally:
        db.conn.close()


@pytest.mark.parametrize("stop", ["m05_owners_shares_sessions", "m08_release_ledger", "m09_information_reopen_and_wording_fixes",
                                  "m11_wording_in_specs"])
def test_a_database_left_under_old_names_part_way_catches_up(tmp_path, fresh, stop):
    """As a database made by a revision between two migrations, before the renaming: its recorded names
    are renamed, and only the migrations it lacks run, in order."""
    db = connect(tmp_path / "partial.db")
    history.migrations.apply(db, stop_before=stop)
    back = {new: old for old, new in history.LEGACY_NAMES.items()}
    db.conn.executemany("UPDATE _sqlite_migrations SET name = ? WHERE name = ?", [(back[n], n) for n in recorded(db)])
    assert recorded(db) and set(recorded(db)) <= set(history.LEGACY_NAMES)
    db.conn.close()
    db = init_db(tmp_path / "partial.db")
    try:
        assert recorded(db) == NAMES
        assert normalized_schema(db) == normalized_schema(fresh)
    finally:
        db.conn.close()


def test_the_renaming_is_one_transaction(tmp_path):
    """If renaming one recorded name fails, none is renamed and no migration runs."""
    path = tmp_path / "old.db"
    shutil.copy(DATA / "compat.db", path)
    db = connect(path)
    legacy = recorded(db)
    db.execute("""CREATE TRIGGER refuse BEFORE UPDATE ON _sqlite_migrations WHEN NEW.name = 'm10_question_types'
                  BEGIN SELECT RAISE(ABORT, 'refused'); END""")
    sql = normalized_schema(db)
    with pytest.raises(sqlite3.IntegrityError, match="refused"):
        history.migrations.apply(db)
    assert recorded(db) == legacy and normalized_schema(db) == sql
    db.execute("DROP TRIGGER refuse")
    db.conn.close()


def test_applying_the_migrations_twice_changes_nothing(fresh, tmp_path):
    before, changes = list(fresh.conn.iterdump()), fresh.conn.total_changes
    history.migrations.apply(fresh)
    assert fresh.conn.total_changes == changes and list(fresh.conn.iterdump()) == before
    path = tmp_path / "fresh.db"
    init_db(path).conn.close()
    again = connect(path)
    try:
        assert list(again.conn.iterdump()) == before
    finally:
        again.conn.close()


def test_stop_before_must_name_a_migration(tmp_path):
    db = connect(tmp_path / "x.db")
    try:
        with pytest.raises(ValueError, match="m004_responses_without_order"):
            history.migrations.apply(db, stop_before="m004_responses_without_order")  # an old name
        assert db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0
    finally:
        db.conn.close()


def test_the_frozen_pattern_is_todays_encoding_of_choices():
    """m07's copy of ``aggregates.encode`` makes the bytes today's code reads.  If this fails because
    the encoding changed, the stored patterns need a new migration that re-encodes them; m07 stays."""
    rng = np.random.default_rng(7)
    for widths in ([2, 3], [300, 2], [64, 5, 2, 2]):
        survey = Survey(slug="s", title="S", description="", questions=tuple(
            Question(id=f"q{i}", text="Q", options=tuple(f"o{j}" for j in range(k)), epsilon=1.0, required=False)
            for i, k in enumerate(widths)))
        shape = [(q.id, k) for q, k in zip(survey.questions, widths)]
        for _ in range(50):
            reports = {q.id: int(rng.integers(k)) for q, k in zip(survey.questions, widths) if rng.random() < 0.8}
            assert history._pattern(shape, reports) == aggregates.encode(survey, reports), (widths, reports)
