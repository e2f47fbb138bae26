"""Battery: every question type's SPSS, Stata and Parquet (and CSV) exports, read back by pyreadstat
and pyarrow — numbers are numbers, one 0/1 variable per check-all option, arm and count for a list
experiment, value labels that match the options, every value equal to the stored report (each
type's text cell of it), not answered missing — from the dashboard and from ``deniable export``.

The exports are made once for the module (one battery database, one login) and checked per
question.
"""

from __future__ import annotations

import csv
import io
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pyreadstat
import pytest
from click.testing import CliRunner

from deniable.server.cli import cli
from deniable.server.store.db import connect
from deniable.server.store.responses import insert_many, load_db_dataset
from deniable.server.store.surveys import get_survey, insert_survey
from deniable.server.survey.definition import parse_definition
from deniable.server.survey.simulate import simulate_dataset
from deniable.server.survey.statfiles import SPSS_NAME, STATA_NAME
from deniable.server.web.app import create_app

from support import rating
from support.battery import SLUG, battery_definition, battery_truth, question_ids
from support.dashboard import ensure_researcher, login

READERS = {"sav": pyreadstat.read_sav, "dta": pyreadstat.read_dta}
NAMES = ("responses.sav", "responses.dta", "responses.parquet", "responses.csv")


def _optional_battery(db_path, owner):
    """The battery's survey with every question optional (so that a respondent may answer nothing)
    and its simulated respondents."""
    definition = battery_definition()
    definition["questions"] = [{**q, "required": False} for q in definition["questions"]]
    survey = parse_definition(definition)
    db = connect(db_path)
    try:
        stored = insert_survey(db, survey, status="open", owner_id=owner)
        data = simulate_dataset(survey, battery_truth(survey), 300, np.random.default_rng(5))
        insert_many(db, stored, data.columns)
        return get_survey(db, SLUG)
    finally:
        db.conn.close()


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """The battery (and one respondent who answered nothing) exported from the dashboard and by
    ``deniable export --format parquet --spss --stata``; ``(survey, dataset, {source: {fmt: path}})``."""
    root = tmp_path_factory.mktemp("exports")
    db_path = str(root / "deniable.db")
    with rating.registered():
        app = create_app({"TESTING": True, "DATABASE": db_path, "SECRET_KEY": "test-secret",
                          "RATELIMIT_ENABLED": False})
        owner = ensure_researcher(app)
        stored = _optional_battery(db_path, owner)
        db = connect(db_path)
        try:
            insert_many(db, stored, {q.id: np.array([-1]) for q in stored.survey.questions})  # answered nothing
            dataset = load_db_dataset(db, SLUG)
            survey = get_survey(db, SLUG).survey
        finally:
            db.conn.close()
        client = app.test_client()
        assert login(client).status_code == 302
        paths = {"dashboard": {}, "cli": {}}
        for name in NAMES:
            response = client.get(f"/dashboard/{SLUG}/export/{name}")
            assert response.status_code == 200, name
            paths["dashboard"][name.split(".")[1]] = root / name
            (root / name).write_bytes(response.data)
        out = root / "cli"
        result = CliRunner().invoke(cli, ["export", SLUG, "--db", db_path, "-o", str(out), "--format", "parquet",
                                          "--spss", "--stata"])
        assert result.exit_code == 0, result.output
        paths["cli"] = {fmt: out / f"{SLUG}-responses.{fmt}" for fmt in ("parquet", "sav", "dta")}
        yield survey, dataset, paths


def _question(survey, qid):
    return next(q for q in survey.questions if q.id == qid)


def _texts(q, codes) -> list[str]:
    return ["" if c < 0 else q.qtype.text_of(q, int(c)) for c in codes]


def _stat_file(exported, source, fmt):
    frame, meta = READERS[fmt](str(exported[2][source][fmt]))
    return frame, meta


@pytest.mark.parametrize("source", ["dashboard", "cli"])
@pytest.mark.parametrize("fmt", ["sav", "dta"])
@pytest.mark.parametrize("qid", question_ids())
def test_spss_and_stata_columns_are_numbers_with_matching_labels(exported, qid, fmt, source):
    survey, dataset, _ = exported
    q = _question(survey, qid)
    codes = np.asarray(dataset.columns[qid])
    frame, meta = _stat_file(exported, source, fmt)
    assert list(frame.columns)[-1] == "text_version"
    assert len(set(frame.columns)) == len(frame.columns)
    limit = STATA_NAME if fmt == "dta" else SPSS_NAME
    assert all(len(c) <= limit for c in frame.columns)
    declared = q.qtype.stat_columns(q, codes)
    names = [q.id + suffix for suffix, *_ in declared]  # the battery's ids are short: nothing is cut
    texts = _texts(q, codes)
    answered = codes >= 0
    assert not answered.all()  # the respondent who answered nothing
    for name in names:
        assert name in frame.columns, (name, list(frame.columns))
        assert frame[name].dtype.kind == "f", (name, frame[name].dtype)  # numbers are numbers
        assert frame[name][~answered].isna().all() and not frame[name][answered].isna().any(), name
    if len(names) == 1 and q.qtype.categorical:  # a choice: 1..k labelled with the options, in order
        [name] = names
        # under a design whose reports are not the options (crosswise: same/different, Kuk: red/black), the
        # reports (issue 39); the CSV's cell is still the option label of the report's code
        design = getattr(q.mechanism, "design", None)
        shown = list(design.reports) if design is not None else list(q.options)
        assert meta.variable_value_labels[name] == {i + 1: o for i, o in enumerate(shown)}
        labelled = [meta.variable_value_labels[name][int(v)] for v in frame[name][answered]]
        assert labelled == [shown[q.options.index(t)] for t, a in zip(texts, answered) if a]
        assert meta.column_labels[list(frame.columns).index(name)] == q.text
    elif q.type == "numeric":  # the reported value, no labels
        [name] = names
        assert name not in meta.variable_value_labels
        assert frame[name][answered].tolist() == [float(t) for t, a in zip(texts, answered) if a]
    elif q.type == "multi":  # one 0/1 variable per option, labelled No/Yes and "text: option"
        assert names == [f"{qid}_{j + 1}" for j in range(len(q.options))]
        for j, name in enumerate(names):
            assert meta.variable_value_labels[name] == {0: "No", 1: "Yes"}
            label = meta.column_labels[list(frame.columns).index(name)]
            assert label.endswith(f": {q.options[j]}"), label
            assert set(frame[name][answered].unique()) <= {0.0, 1.0}
        ticks = ["".join("Y" if frame[n].iloc[i] == 1 else "N" for n in names) for i in np.flatnonzero(answered)]
        assert ticks == [t for t, a in zip(texts, answered) if a]
    elif q.type == "list":  # arm (labelled control/treatment) and count (a number)
        assert names == [f"{qid}_arm", f"{qid}_count"]
        assert meta.variable_value_labels[names[0]] == {0: "control", 1: "treatment"}
        assert names[1] not in meta.variable_value_labels
        cells = [f"{meta.variable_value_labels[names[0]][int(frame[names[0]].iloc[i])]}:{int(frame[names[1]].iloc[i])}"
                 for i in np.flatnonzero(answered)]
        assert cells == [t for t, a in zip(texts, answered) if a]
    for name, (_, values, value_labels, _) in zip(names, declared):  # every type: what its type declares
        assert np.allclose(frame[name].to_numpy(dtype=float), values.astype(float), equal_nan=True), name
        if value_labels:
            assert meta.variable_value_labels[name] == value_labels
            assert set(frame[name].dropna().astype(int)) <= set(value_labels), name


@pytest.mark.parametrize("source", ["dashboard", "cli"])
@pytest.mark.parametrize("qid", question_ids())
def test_parquet_columns_hold_numbers_or_the_text_cells(exported, qid, source):
    survey, dataset, paths = exported
    q = _question(survey, qid)
    codes = np.asarray(dataset.columns[qid])
    table = pq.read_table(paths[source]["parquet"])
    column = table.column(qid)
    texts = _texts(q, codes)
    assert column.is_null().to_numpy(zero_copy_only=False).tolist() == (codes < 0).tolist()  # not answered: null
    if q.type == "numeric":
        assert pa.types.is_float64(column.type), column.type  # numbers, not a dictionary of strings
        assert column.to_pylist() == [float(Decimal(t)) if t else None for t in texts]
    else:
        value_type = column.type.value_type if pa.types.is_dictionary(column.type) else column.type
        assert pa.types.is_string(value_type), column.type
        assert [c or "" for c in column.to_pylist()] == texts
    if q.qtype.categorical:
        assert column.type.value_type == pa.string() and column.chunk(0).dictionary.to_pylist() == list(q.options)


def test_the_csv_keeps_its_text_cells(exported):
    survey, dataset, paths = exported
    lines = paths["dashboard"]["csv"].read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("# deniable responses")
    rows = list(csv.reader(io.StringIO("\n".join(lines[1:]))))
    header, rows = rows[0], rows[1:]
    for q in survey.questions:
        cells = [row[header.index(q.id)] for row in rows]
        assert cells == _texts(q, dataset.columns[q.id]), q.id


def test_the_cli_and_the_dashboard_export_the_same_files(exported):
    _, _, paths = exported
    for fmt in ("sav", "dta"):
        (a, ma), (b, mb) = (_stat_file(exported, "dashboard", fmt), _stat_file(exported, "cli", fmt))
        assert a.equals(b) and ma.variable_value_labels == mb.variable_value_labels
        assert ma.column_labels == mb.column_labels
    assert pq.read_table(paths["dashboard"]["parquet"]).equals(pq.read_table(paths["cli"]["parquet"]))


def test_the_parquet_export_reads_back_as_the_reports_and_so_does_a_parquet_of_text_cells(exported, tmp_path):
    from deniable.server.survey.files import read_patterns, read_responses
    from deniable.server.survey.responses_csv import cell_array

    survey, dataset, paths = exported
    back = read_responses(paths["dashboard"]["parquet"], survey)
    for q in survey.questions:
        assert np.array_equal(back.columns[q.id], dataset.columns[q.id]), q.id
    # an older export, every cell text (numbers too, as in the CSV): read the same
    old = tmp_path / "old.parquet"
    pq.write_table(pa.table({q.id: cell_array(q, dataset.columns[q.id]) for q in survey.questions}), old)
    for reader in (read_responses, read_patterns):
        fresh, text = reader(paths["dashboard"]["parquet"], survey), reader(old, survey)
        for q in survey.questions:
            assert np.array_equal(_every_row(fresh, q.id), _every_row(text, q.id)), q.id


def _every_row(data, qid):
    """A column's codes, one per response (a weighted dataset's rows repeated), sorted."""
    return np.sort(np.repeat(data.columns[qid], 1 if data.weights is None else data.weights))


@pytest.mark.parametrize("qid", question_ids())
def test_a_parquet_cell_that_is_not_a_report_names_the_row_and_column(exported, qid, tmp_path):
    from deniable.server.survey.files import read_responses
    from deniable.server.survey.responses_csv import CSVError

    survey, dataset, paths = exported
    table = pq.read_table(paths["dashboard"]["parquet"])
    column = table.column(qid)
    bad = pa.array([123456.789] * len(column)) if pa.types.is_floating(column.type) else pa.array(
        ["not a report"] * len(column))
    pq.write_table(table.set_column(table.column_names.index(qid), qid, bad), tmp_path / "bad.parquet")
    with pytest.raises(CSVError, match=rf"row 1: column '{qid}': "):
        read_responses(tmp_path / "bad.parquet", survey)
    # numbers where the type has text cells only: refused, saying what the column must hold
    if not pa.types.is_floating(column.type):
        pq.write_table(table.set_column(table.column_names.index(qid), qid, pa.array([1.0] * len(column))),
                       tmp_path / "numbers.parquet")
        with pytest.raises(CSVError, match=rf"column '{qid}': must hold .* as text, not double"):
            read_responses(tmp_path / "numbers.parquet", survey)


def test_counts_aggregated_from_the_parquet_export_give_the_same_statistics(exported, tmp_path):
    """What docs/cli.md's ``GROUP BY`` makes of the Parquet export (numbers stay numbers) reads back
    as the same sufficient statistics, for every question."""
    from deniable.server.survey.files import read_counts

    survey, dataset, paths = exported
    table = pq.read_table(paths["dashboard"]["parquet"]).drop_columns(["text-version"])
    ids = [q.id for q in survey.questions]
    counts = table.group_by(ids).aggregate([([], "count_all")]).rename_columns([*ids, "count"])
    pq.write_table(counts, tmp_path / "counts.parquet")
    weighted = read_counts(tmp_path / "counts.parquet", survey)
    for q in survey.questions:
        a = q.qtype.column_stats(q, dataset.columns[q.id])
        b = q.qtype.column_stats(q, weighted.columns[q.id], weighted.weights)
        if isinstance(a, dict):
            assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a), q.id
        else:
            assert np.array_equal(a, b), q.id
