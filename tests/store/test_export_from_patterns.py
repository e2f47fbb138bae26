"""Exports from the answer patterns (issue 29): each pattern's rows ``count`` times in an order drawn
at random, the same rows as the row scan's in every format, the same estimates from ``deniable
estimate``; the row scan kept for exactly the surveys the patterns do not cover."""

from __future__ import annotations

import io
import json
from dataclasses import replace

import numpy as np
import pyarrow.parquet as pq
import pyreadstat
import pytest
from click.testing import CliRunner
from scipy import stats

from deniable.server.cli import cli
from deniable.server.store.aggregates import pattern_counts
from deniable.server.store.db import connect
from deniable.server.store.exports import load_export, shuffled_rows, write_export
from deniable.server.store.responses import insert_many, load_db_dataset, scan_rows
from deniable.server.store.surveys import get_survey, insert_survey
from deniable.server.store.wording import fix_wording
from deniable.server.survey.definition import parse_definition
from deniable.server.survey.patterns import Patterns
from deniable.server.survey.simulate import simulate_dataset

from support import rating
from support.battery import SLUG, battery_definition, battery_truth
from support.store import next_day, store_response


@pytest.fixture(autouse=True)
def fifth_type():
    """The battery holds the test-only rating scale: registered around every test here."""
    with rating.registered() as qtype:
        yield qtype


def _store(db_path, definition: dict, n: int = 400, seed: int = 3):
    """Store ``definition`` (the battery's questions, or some of them) with ``n`` simulated respondents,
    every question optional, and one respondent who answered nothing."""
    definition = {**definition, "questions": [{**q, "required": False} for q in definition["questions"]]}
    survey = parse_definition(definition)
    db = connect(db_path)
    try:
        stored = insert_survey(db, survey, status="open")
        truth = {qid: t for qid, t in battery_truth(parse_definition(battery_definition())).items()
                 if qid in {q.id for q in survey.questions}}
        data = simulate_dataset(survey, truth, n, np.random.default_rng(seed))
        insert_many(db, stored, data.columns)
        insert_many(db, stored, {q.id: np.array([-1]) for q in survey.questions})
        return get_survey(db, survey.slug)
    finally:
        db.conn.close()


def _in_patterns_only(definition: dict) -> dict:
    """The battery without the questions the answer patterns do not hold (a discrete Laplace question)."""
    survey = parse_definition(definition)
    keep = {q.id for q in survey.questions if q.qtype.in_patterns(q)}
    return {**definition, "questions": [q for q in definition["questions"] if q["id"] in keep]}


def _rows(dataset) -> list[tuple]:
    """The dataset's rows, one per response, sorted: a multiset to compare."""
    ids = [q.id for q in dataset.survey.questions]
    return sorted(zip(*(dataset.columns[qid].tolist() for qid in ids)))


def _key(row: dict) -> tuple:
    """A Parquet row as a sortable tuple (null first)."""
    return tuple((value is not None, value) for value in row.values())


def _sorted_frame(frame):
    return frame.sort_values(list(frame.columns), na_position="first").reset_index(drop=True)


def test_every_type_but_laplace_is_exported_from_the_patterns_with_the_rows_of_the_row_scan(migrated_db):
    stored = _store(migrated_db, _in_patterns_only(battery_definition()))
    types = {q.type for q in stored.survey.questions}
    assert types >= {"choice", "numeric", "multi", "list", rating.NAME}
    db = connect(migrated_db)
    try:
        fast, scan = load_export(db, SLUG), load_export(db, SLUG, rows=True)
        in_key_order = load_db_dataset(db, SLUG)
    finally:
        db.conn.close()
    assert (fast.source, scan.source) == ("patterns", "rows")
    assert fast.dataset.n_rows == scan.dataset.n_rows == 401
    assert _rows(fast.dataset) == _rows(scan.dataset)
    assert fast.text_versions.tolist() == [1] * 401 and fast.codebook() == scan.codebook()
    # Not the stored order: the row scan's (key order) and the export's agree only by chance.
    assert any(not np.array_equal(fast.dataset.columns[q.id], in_key_order.columns[q.id])
               for q in stored.survey.questions)
    # Every format holds the same rows as the row scan's file, in another order.
    lines = [sorted(e.responses("csv").decode().splitlines()[2:]) for e in (fast, scan)]
    assert lines[0] == lines[1]
    assert fast.responses("csv").decode().splitlines()[:2] == scan.responses("csv").decode().splitlines()[:2]
    tables = [pq.read_table(io.BytesIO(e.responses("parquet"))) for e in (fast, scan)]
    assert tables[0].schema == tables[1].schema
    assert sorted(map(_key, tables[0].to_pylist())) == sorted(map(_key, tables[1].to_pylist()))


@pytest.mark.parametrize("fmt, reader", [("sav", pyreadstat.read_sav), ("dta", pyreadstat.read_dta)])
def test_spss_and_stata_from_the_patterns_hold_the_row_scans_rows_and_labels(migrated_db, tmp_path, fmt, reader):
    _store(migrated_db, _in_patterns_only(battery_definition()), n=150)
    db = connect(migrated_db)
    try:
        fast, scan = load_export(db, SLUG), load_export(db, SLUG, rows=True)
    finally:
        db.conn.close()
    read = []
    for name, export in (("fast", fast), ("scan", scan)):
        (tmp_path / f"{name}.{fmt}").write_bytes(export.responses(fmt))
        read.append(reader(str(tmp_path / f"{name}.{fmt}")))
    (a, meta_a), (b, meta_b) = read
    assert list(a.columns) == list(b.columns) and list(a.columns)[-1] == "text_version"
    assert meta_a.variable_value_labels == meta_b.variable_value_labels
    assert meta_a.column_labels == meta_b.column_labels
    assert _sorted_frame(a).equals(_sorted_frame(b))


@pytest.mark.parametrize("every_type", [False, True], ids=["patterns", "with-laplace-row-scan"])
def test_estimate_on_the_export_gives_the_numbers_of_the_database(migrated_db, tmp_path, every_type):
    definition = battery_definition() if every_type else _in_patterns_only(battery_definition())
    _store(migrated_db, definition, n=500)
    db = connect(migrated_db)
    try:
        assert load_export(db, SLUG).source == ("rows" if every_type else "patterns")
        paths = write_export(db, SLUG, tmp_path, ("csv", "parquet"))
    finally:
        db.conn.close()
    csv_path, parquet_path, codebook = paths
    from_db = CliRunner().invoke(cli, ["estimate", "--db", migrated_db, SLUG, "--format", "json"])
    assert from_db.exit_code == 0, from_db.output
    for data in (csv_path, parquet_path):
        from_file = CliRunner().invoke(cli, ["estimate", str(codebook), str(data), "--format", "json"])
        assert from_file.exit_code == 0, from_file.output
        assert json.loads(from_file.output)["questions"] == json.loads(from_db.output)["questions"], data.name


def _many_options_definition() -> dict:
    return {"slug": "many", "title": "Many", "questions": [
        {"id": "used", "type": "multi", "text": "Which have you used?", "epsilon": 2.0,
         "options": ["a", "b", "c", "d", "e", "f", "g", "h"]},
        {"id": "year", "text": "Year?", "options": ["First", "Second"]}]}


def test_a_multi_of_more_than_seven_options_keeps_the_row_scan(db):
    many = insert_survey(db, parse_definition(_many_options_definition()), status="open")
    assert not many.survey.question("used").qtype.in_patterns(many.survey.question("used"))
    for i in range(6):
        store_response(db, many, {"used": [(i >> j) & 1 for j in range(8)], "year": i % 2})
    export = load_export(db, "many")
    assert export.source == "rows"
    assert _rows(export.dataset) == _rows(load_db_dataset(db, "many"))
    # the wording never fixed: the versions are not read, and are what every row records
    assert export.text_versions.tolist() == scan_rows(db, "many")[1].tolist() == [1] * 6
    assert export.responses("csv") == replace(export, order=None).responses("csv")


def _lines(export, fmt="csv") -> tuple[list[bytes], list[bytes]]:
    """The file's head (design line and header) and its rows, sorted."""
    lines = export.responses(fmt).splitlines()
    return lines[:2], sorted(lines[2:])


def test_a_fixed_wording_exports_from_the_patterns_each_row_with_its_days_wording(db):
    """A response records the wording its day began with, so each pattern (a day's) has one: the file
    from the patterns holds the row scan's rows, each with its own text-version, in every format."""
    two = insert_survey(db, parse_definition({**_many_options_definition(), "slug": "two",
                                              "questions": _many_options_definition()["questions"][1:]}),
                        status="open")
    for i in range(3):
        store_response(db, two, {"year": i % 2})
    assert load_export(db, "two").source == "patterns"
    fix_wording(db, "two", {"questions": {"year": {"options": ["Freshman", "Second"]}}})
    store_response(db, get_survey(db, "two"), {"year": 0})  # the fix is recorded from the next day on
    with next_day():
        for i in range(4):
            store_response(db, get_survey(db, "two"), {"year": i % 2})
    fast, scan = load_export(db, "two"), load_export(db, "two", rows=True)
    assert (fast.source, scan.source) == ("patterns", "rows")
    assert sorted(fast.text_versions.tolist()) == [1, 1, 1, 1, 2, 2, 2, 2]
    pairs = lambda e: sorted(zip(e.dataset.columns["year"].tolist(), e.text_versions.tolist()))  # noqa: E731
    assert pairs(fast) == pairs(scan)
    assert _lines(fast) == _lines(scan) and fast.codebook() == scan.codebook()
    frames = [pq.read_table(io.BytesIO(e.responses("parquet"))).to_pandas() for e in (fast, scan)]
    assert all(f.columns.tolist() == frames[0].columns.tolist() for f in frames)
    fast_rows, scan_rows = (sorted(map(tuple, f.astype(str).values.tolist())) for f in frames)
    assert fast_rows == scan_rows
    # A response off the rule (another wording than its day began with, which `deniable check` reports):
    # the patterns cannot say which row it is, so the row scan.
    db.execute(f"UPDATE response_slots SET text_version = {1 << 56} + 2 WHERE id = "
               "(SELECT id FROM responses WHERE survey_id = ? AND text_version = 1 LIMIT 1)", [two.id])
    off = load_export(db, "two")
    assert off.source == "rows" and sorted(off.text_versions.tolist()) == [1, 1, 1, 2, 2, 2, 2, 2]
    # The row scan's CSV, a line per distinct row and wording, is the row-by-row file.
    assert off.responses("csv") == replace(off, order=None).responses("csv")


def test_the_order_is_a_fresh_random_permutation_of_the_patterns_rows(db, stored):
    # 120 responses, answered in blocks: every "Yes" first, then every "No".
    for i in range(120):
        store_response(db, stored, {"drug_use": int(i < 60), "cheating": 0})
    first, second = load_export(db, "demo"), load_export(db, "demo")
    codes = [e.dataset.columns["drug_use"] for e in (first, second)]
    assert all(np.bincount(c).tolist() == [60, 60] for c in codes)
    # Neither the order of answering, nor the patterns' order, nor the same order twice (each of
    # these holds by chance with probability 2 / C(120, 60) < 10⁻³⁴).
    for c in codes:
        assert not (np.all(np.diff(c) <= 0) or np.all(np.diff(c) >= 0))
    assert not np.array_equal(codes[0], codes[1])


def test_every_arrangement_of_the_rows_is_equally_likely(stored):
    """Uniformity of :func:`shuffled_rows`: three patterns of counts 1, 2 and 3 give 6!/(1!·2!·3!) = 60
    distinct arrangements; over 6,000 seeded draws each should come up 100 times (chi-square,
    59 degrees of freedom)."""
    survey = stored.survey.only(["cheating"])
    patterns = Patterns(survey=survey, days=np.array(["2026-01-01"] * 3), counts=np.array([1, 2, 3]),
                        columns={"cheating": np.array([0, 1, 2])})
    one, rng = replace(stored, survey=survey), np.random.default_rng(20261124)
    seen: dict[tuple, int] = {}
    for _ in range(6000):
        row = tuple(shuffled_rows(one, patterns, rng).columns["cheating"].tolist())
        seen[row] = seen.get(row, 0) + 1
    assert len(seen) == 60 and all(sorted(r) == [0, 1, 1, 2, 2, 2] for r in seen)
    assert stats.chisquare(list(seen.values())).pvalue > 1e-3


def test_the_patterns_export_reads_the_answer_patterns_not_the_rows(db, stored):
    """The export is the patterns' multiset: with the rows emptied behind the aggregates' back (a test
    only: never done by the app), the patterns path still writes every response, the row scan none."""
    for i in range(10):
        store_response(db, stored, {"drug_use": i % 2, "cheating": i % 4})
    db.execute("UPDATE response_slots SET filled = 0 WHERE survey_id = ?", [stored.id])
    db.conn.commit()
    assert load_export(db, "demo").dataset.n_rows == int(pattern_counts(db, stored).counts.sum()) == 10
    assert load_export(db, "demo", rows=True).dataset.n_rows == 0
