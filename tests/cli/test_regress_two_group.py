"""``deniable regress`` with a two-group question (CDM, CDMsym, SLD, UQTunknown) as the outcome, on a survey's own
responses stored through the real store (tests/support/two_group_regression.py: a known logistic truth): the
installed command's fit equals :func:`deniable.estimators.group_logit` on one row per respondent, equals
``deniable regress --rrreg MODEL --p … DATA.csv`` on the same respondents written in RRreg's shape, and is the
same from the database and from the exported responses file; the truth is within the intervals' reach;
``--reference Yes`` turns the signs; what cannot be fitted is one ``Error:`` line."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from deniable.estimators.group_logit import group_logit
from deniable.server.store.db import init_db
from deniable.server.store.responses import insert_many
from deniable.server.store.surveys import get_survey, insert_survey
from deniable.server.survey.definition import parse_definition

from support.two_group_regression import (BETA, DEFINITION, FORMULA, MODELS, NUISANCE, SLUG, columns, expanded,
                                          write_rrreg_csv)

DENIABLE = str(Path(sys.executable).parent / "deniable")
N = 3000
NAMES = ["Intercept", "year[Second]", "year[Third]", "age"]
NUISANCE_NAME = {"cdm": "gamma", "sym": "gamma", "sld": "t", "uqt": "piUQ"}


def nan_for_none(values) -> list[float]:
    """JSON's None (a standard error the fit has not: a parameter held on a bound) as NaN, to compare."""
    return [float("nan") if v is None else v for v in values]


def command(*args):
    return subprocess.run([DENIABLE, *map(str, args)], capture_output=True, text=True, timeout=300)


def as_json(*args) -> dict:
    done = command(*args, "--format", "json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """The survey in a database (the real store's bulk insert), its definition file, and the reports sent."""
    root = tmp_path_factory.mktemp("two-group-regression")
    survey = parse_definition(DEFINITION)
    data = columns(survey, N, seed=2026)
    db_path = root / "deniable.db"
    db = init_db(str(db_path))
    try:
        insert_survey(db, survey, status="open")
        insert_many(db, get_survey(db, SLUG), data)
    finally:
        db.conn.close()
    definition = root / "survey.json"
    definition.write_text(json.dumps(DEFINITION))
    return root, db_path, definition, survey, data


@pytest.mark.parametrize("qid", list(MODELS))
def test_the_survey_fit_is_group_logit_on_the_rows_and_rrreg_on_the_file(stored, qid):
    root, db_path, _, survey, data = stored
    formula = FORMULA.format(qid=qid)
    out = as_json("regress", "--db", db_path, SLUG, formula)
    q = survey.question(qid)
    assert next(iter(out)) == "models" and out["models"] == "log-odds of Yes against No"
    assert out["survey"] == SLUG and out["formula"] == formula and out["outcome"] == qid
    assert out["model"] == MODELS[qid] and out["p"] == list(q.mechanism.p)
    assert out["names"] == [*NAMES, NUISANCE_NAME[qid]] and out["modelled"] == ["Yes"] and out["reference"] == "No"
    left_out = int(np.sum(data["year"] < 0))
    assert out["left_out"] == left_out and out["n"] == N - left_out and 0 < out["patterns"] < out["n"]

    # group_logit on one row per respondent (the pattern counts as frequency weights give the same fit)
    response, group, X = expanded(survey, data, qid)
    rows = group_logit(MODELS[qid], list(q.mechanism.p), response, group, X, NAMES)
    assert out["coefficients"] == pytest.approx(list(rows.coefficients), abs=1e-8)
    assert nan_for_none(out["se"]) == pytest.approx(list(rows.se), rel=1e-7, nan_ok=True)
    assert out["loglik"] == pytest.approx(rows.loglik, abs=1e-8)
    assert out["n"] == rows.n

    # RRreg's shape: the same respondents, deniable regress --rrreg with the question's realized p
    data_csv = root / f"{qid}-rrreg.csv"
    write_rrreg_csv(data_csv, survey, data, qid)
    rrreg = as_json("regress", "--rrreg", MODELS[qid], "--p", ",".join(map(repr, q.mechanism.p)), data_csv,
                    "response ~ second + third + age")
    assert rrreg["n"] == out["n"] and rrreg["names"][-1] == NUISANCE_NAME[qid]
    for key in ("coefficients", "se", "lower", "upper"):
        assert nan_for_none(out[key]) == pytest.approx(nan_for_none(rrreg[key]), abs=1e-8, nan_ok=True), key
    assert out["loglik"] == pytest.approx(rrreg["loglik"], abs=1e-8)

    # the rows and the nuisance parameter in words
    rows_out = out["coefficient_rows"]
    assert [r["name"] for r in rows_out] == NAMES
    assert [r["estimate"] for r in rows_out] == out["coefficients"][:4]
    nuisance = out["nuisance"]
    assert nuisance["name"] == NUISANCE_NAME[qid] and nuisance["estimate"] == out["coefficients"][-1]
    assert nuisance["words"] and nuisance["on_bound"] == out["nuisance_on_bound"]
    if nuisance["on_bound"]:  # held at 0 or 1 (CDMsym's γ here: its p leave it poorly identified), no interval
        assert nuisance["estimate"] in (0, 1) and nuisance["se"] is nuisance["lower"] is nuisance["upper"] is None
    else:
        assert 0 <= nuisance["lower"] <= nuisance["estimate"] <= nuisance["upper"] <= 1
        assert abs(nuisance["estimate"] - NUISANCE[qid]) < 4 * nuisance["se"]

    # the known truth: each coefficient within 4 standard errors of it
    assert np.all(np.abs(np.array(out["coefficients"][:4]) - BETA) < 4 * np.array(out["se"][:4])), out


@pytest.mark.parametrize("qid", ["cdm", "sld"])
def test_the_table_names_the_model_and_the_nuisance_parameter_in_words(stored, qid):
    _, db_path, _, _, data = stored
    formula = FORMULA.format(qid=qid)
    done = command("regress", "--db", db_path, SLUG, formula)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"{formula}: log-odds of Yes against No"
    assert lines[1] == f"{int(np.sum(data['year'] < 0)):,} responses left out (no answer to the outcome or to a covariate)"
    assert f"Two-group logit of {qid} ({MODELS[qid]}, p = " in done.stdout
    words = {"cdm": "did not follow the instructions (γ), 95% interval [",
             "sld": "carriers answering truthfully (t), 95% interval ["}[qid]
    assert words in done.stdout
    for name in NAMES:
        assert any(line.startswith(name) for line in lines), name


def test_reference_yes_turns_the_signs(stored):
    _, db_path, _, _, _ = stored
    formula = FORMULA.format(qid="sym")
    plain = as_json("regress", "--db", db_path, SLUG, formula)
    flipped = as_json("regress", "--db", db_path, SLUG, formula, "--reference", "Yes")
    assert flipped["models"] == "log-odds of No against Yes" and flipped["reference"] == "Yes"
    assert flipped["coefficients"][:4] == [-b for b in plain["coefficients"][:4]]
    assert flipped["lower"][:4] == [-b for b in plain["upper"][:4]]
    assert flipped["upper"][:4] == [-b for b in plain["lower"][:4]]
    assert flipped["se"] == plain["se"] and flipped["nuisance"] == plain["nuisance"]  # γ is the same parameter
    done = command("regress", "--db", db_path, SLUG, formula, "--reference", "Maybe")
    assert done.returncode == 1 and done.stderr.count("\n") == 1
    assert "reference: 'sym' has no option 'Maybe' (expected one of: Yes, No)" in done.stderr


def test_the_exported_responses_file_fits_as_the_database(stored):
    root, db_path, definition, _, _ = stored
    out_dir = root / "export"
    done = command("export", SLUG, "--db", db_path, "-o", out_dir)
    assert done.returncode == 0, done.stderr
    responses = out_dir / f"{SLUG}-responses.csv"
    formula = FORMULA.format(qid="uqt")
    from_file = as_json("regress", definition, responses, formula)
    from_db = as_json("regress", "--db", db_path, SLUG, formula)
    for key in ("coefficients", "se", "n", "left_out", "patterns", "loglik", "names"):
        assert from_file[key] == pytest.approx(from_db[key], abs=1e-10), key
    # a choice outcome of the same survey still reads the file's other columns right (a two-group question's
    # four codes do not spill into the question before it)
    choice = as_json("regress", definition, responses, "year ~ age", "--no-profile")
    choice_db = as_json("regress", "--db", db_path, SLUG, "year ~ age", "--no-profile")
    assert [c["estimate"] for c in choice["coefficients"]] == pytest.approx(
        [c["estimate"] for c in choice_db["coefficients"]], abs=1e-10)


def test_what_cannot_be_fitted_is_one_error_line(stored):
    root, db_path, definition, _, _ = stored
    margins = root / "margins.json"
    margins.write_text(json.dumps({"year": {"First": 0.3, "Second": 0.3, "Third": 0.4}}))
    out_dir = root / "export-w"
    assert command("export", SLUG, "--db", db_path, "-o", out_dir).returncode == 0
    with open(out_dir / f"{SLUG}-responses.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    header = next(i for i, row in enumerate(rows) if "cdm" in row)  # past the fingerprint line
    weighted = root / "weighted.csv"
    with open(weighted, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerows(rows[:header])
        writer.writerow([*rows[header], "w"])
        writer.writerows([*row, "1.5"] for row in rows[header + 1:])
    cases = [
        (("--db", db_path, SLUG, "cdm ~ year", "--rake", margins), "rake: the outcome 'cdm' is a two-group"),
        ((definition, weighted, "cdm ~ year", "--weights", "w"), "--weights: the outcome 'cdm' is a two-group"),
        (("--db", db_path, SLUG, "year ~ sld"), "covariate 'sld' is a two-group non-compliance design question"),
        (("--db", db_path, SLUG, "cdm ~ sym"), "covariate 'sym' is protected"),  # CDMsym: ε-LDP
    ]
    for args, message in cases:
        done = command("regress", *args)
        assert done.returncode == 1, (args, done.stdout)
        assert done.stderr.startswith("Error: ") and done.stderr.count("\n") == 1, done.stderr
        assert message in done.stderr and "Traceback" not in done.stderr, done.stderr
