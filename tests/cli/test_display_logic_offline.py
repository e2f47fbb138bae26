"""Display logic through the offline path: a question a respondent was not asked (its ``show_if`` false
for their answers) is written as "not asked" in every export — ``NA`` in the CSV, null in Parquet, a
user-missing value in SPSS, ``.a`` in Stata — apart from a question asked and left blank, and pandas
and R's haven read both as missing; ``deniable estimate`` reads each export back to the numbers of
``deniable estimate --db``; ``deniable simulate --db`` fills such a survey as respondents' browsers
would; and a file that breaks the logic is refused in one line naming the line (or row) and column.

The survey: a required question hidden from some respondents, a check-all question on a second page,
an optional question hidden behind a tick of it, an optional number (a grid, so the export is written
from the answer patterns; or a discrete Laplace number, so by the row scan) with a negative minimum,
and an optional last question on a page of its own.  Which rows were asked what is decided here from
each row's own cells, by the rules written out in :func:`asked_here`, not by server/survey/logic.py.
"""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pyreadstat
import pytest
from click.testing import CliRunner

from deniable.server.cli import cli
from deniable.server.store.db import connect
from deniable.server.store.responses import load_db_dataset
from deniable.server.store.surveys import get_survey
from support.store import store_response

SLUG = "logic"
CONDITIONAL = ("many", "kinds", "pipe", "spent")  # the questions with a show_if


def definition(spent_mechanism: str) -> dict:
    spent = {"id": "spent", "text": "Spent last week?", "type": "numeric", "min": -5, "max": 5, "epsilon": 1.0,
             "required": False, "show_if": {"question": "smoke", "in": ["Yes", "Sometimes"]}}
    if spent_mechanism == "laplace":
        spent["mechanism"] = "laplace"
    return {"slug": SLUG, "title": "Logic", "questions": [
        {"id": "smoke", "text": "Do you smoke?", "options": ["Yes", "No", "Sometimes"]},
        {"id": "many", "text": "How many a day?", "options": ["1-5", "6+"], "epsilon": 2.0,
         "show_if": {"question": "smoke", "in": ["Yes", "Sometimes"]}},
        {"id": "kinds", "text": "Which?", "type": "multi", "options": ["Pipe", "Cigar"], "page_break": True,
         "show_if": {"question": "smoke", "in": ["Yes"]}},
        {"id": "pipe", "text": "Pipe brand?", "options": ["A", "B"], "required": False,
         "show_if": {"question": "kinds", "in": ["Pipe"]}},
        spent,
        {"id": "end", "text": "Anything else?", "options": ["Yes", "No"], "required": False, "page_break": True},
    ]}


TRUTH = {"smoke": [0.4, 0.4, 0.2], "many": [0.6, 0.4], "kinds": [0.6, 0.3], "pipe": [0.5, 0.5],
         "spent": {"values": [-5, 0, 5], "probabilities": [0.3, 0.4, 0.3]}, "end": [0.5, 0.5]}
# Through the store's single-submission path: every way of being asked or not, and blanks where asked.
REPORTS = [
    {"smoke": 1},  # No: nothing else asked; end (asked of everyone) left blank
    {"smoke": 2, "many": 1, "end": 0},  # Sometimes: many and spent asked (spent blank), kinds not
    {"smoke": 0, "many": 0, "kinds": [1, 0], "pipe": 1, "spent": 1, "end": 1},
    {"smoke": 0, "many": 0, "kinds": [1, 0], "end": 1},  # pipe asked and left blank, spent blank
    {"smoke": 0, "many": 1, "kinds": [0, 1], "spent": 0},  # no pipe ticked: pipe not asked; end blank
]
BLANKS = {"many": 0, "kinds": 0, "pipe": 1, "spent": 2, "end": 2}  # asked and left blank, in REPORTS only
N_SIMULATED = 300


def asked_here(smoke: str, pipe_ticked: bool) -> dict[str, bool]:
    """Whether a row whose smoke answer is ``smoke`` and whose check-all answer ticks Pipe was asked
    each conditional question: the definition's show_if, written out."""
    smokes = smoke in ("Yes", "Sometimes")
    return {"many": smokes, "kinds": smoke == "Yes", "pipe": smoke == "Yes" and pipe_ticked, "spent": smokes}


def run(*args, code: int = 0) -> str:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == code, (result.output, result.exception)
    return result.output


@pytest.fixture(scope="module", params=["grid", "laplace"])
def exported(request, tmp_path_factory):
    """A survey with display logic in a database: REPORTS stored one at a time, then N_SIMULATED by
    ``deniable simulate --db``; exported in every format (``grid``: from the answer patterns;
    ``laplace``: by the row scan)."""
    tmp = tmp_path_factory.mktemp(f"logic-{request.param}")
    survey, truth, db_path = tmp / "survey.json", tmp / "truth.json", tmp / "deniable.db"
    survey.write_text(json.dumps(definition(request.param)), encoding="utf-8")
    truth.write_text(json.dumps(TRUTH), encoding="utf-8")
    run("import", survey, "--db", db_path, "--open")
    db = connect(str(db_path))
    try:
        stored = get_survey(db, SLUG)
        for reports in REPORTS:
            store_response(db, stored, reports)
    finally:
        db.conn.close()
    run("simulate", survey, "--n", N_SIMULATED, "--truth", truth, "--seed", 7, "--db", db_path)
    out = tmp / "exports"
    run("export", SLUG, "--db", db_path, "-o", out, "--spss", "--stata")
    run("export", SLUG, "--db", db_path, "-o", out, "--format", "parquet")
    return {"db": db_path, "survey": survey, "truth": truth, "out": out, "mechanism": request.param,
            "codebook": out / f"{SLUG}-codebook.json"}


def database_rows(db_path) -> dict[str, np.ndarray]:
    db = connect(str(db_path))
    try:
        return load_db_dataset(db, SLUG).columns
    finally:
        db.conn.close()


def expected_not_asked(exported) -> dict[str, int]:
    """How many responses in the database were not asked each conditional question (by the rules here)."""
    rows = database_rows(exported["db"])
    smoke = np.array(["Yes", "No", "Sometimes"])[rows["smoke"]]
    pipe = (rows["kinds"] >= 0) & (rows["kinds"] & 1 == 1)
    out = dict.fromkeys(CONDITIONAL, 0)
    for s, p in zip(smoke.tolist(), pipe.tolist()):
        for qid, asked in asked_here(s, p).items():
            out[qid] += not asked
    return out


def test_simulate_db_stores_only_the_questions_each_respondent_was_asked(exported):
    rows = database_rows(exported["db"])
    assert rows["smoke"].size == len(REPORTS) + N_SIMULATED
    blank = dict.fromkeys(CONDITIONAL, 0)
    for i in range(rows["smoke"].size):
        smoke = ["Yes", "No", "Sometimes"][rows["smoke"][i]]
        asked = asked_here(smoke, rows["kinds"][i] >= 0 and rows["kinds"][i] & 1 == 1)
        for qid in CONDITIONAL:
            assert (rows[qid][i] >= 0) <= asked[qid], (i, qid)  # never an answer where not asked
            blank[qid] += asked[qid] and rows[qid][i] < 0
    assert blank == {qid: BLANKS[qid] for qid in CONDITIONAL}  # simulated respondents answer all they are asked
    not_asked = expected_not_asked(exported)
    assert 0 < not_asked["many"] < rows["smoke"].size and 0 < not_asked["pipe"] < rows["smoke"].size


def test_the_codebook_says_how_each_export_writes_not_asked(exported):
    codebook = json.loads(exported["codebook"].read_text(encoding="utf-8"))
    entries = {q["id"]: q for q in codebook["questions"]}
    spss = {"grid": -9, "laplace": -999}[exported["mechanism"]]  # below −5, and below every Laplace report
    for qid in CONDITIONAL:
        assert entries[qid]["asked_of"].startswith("asked of respondents who answered")
        expected = {"csv": "NA", "parquet": None, "sav": spss if qid == "spent" else -1, "dta": ".a"}
        assert {key: entries[qid]["not_asked"][key] for key in expected} == expected
    assert "not_asked" not in entries["smoke"] and "not_asked" not in entries["end"]
    # and the codebook is still a survey definition deniable estimate reads (below)


def test_the_csv_writes_NA_where_not_asked_and_an_empty_cell_where_left_blank(exported):
    path = exported["out"] / f"{SLUG}-responses.csv"
    with path.open(encoding="utf-8", newline="") as fh:
        fh.readline()  # the design line
        rows = list(csv.DictReader(fh))
    not_asked, blank = dict.fromkeys(CONDITIONAL, 0), dict.fromkeys([*CONDITIONAL, "end"], 0)
    for row in rows:
        asked = asked_here(row["smoke"], row["kinds"][:1] == "Y")
        for qid in CONDITIONAL:
            if not asked[qid]:
                assert row[qid] == "NA", row
                not_asked[qid] += 1
            else:
                assert row[qid] != "NA", row
                blank[qid] += row[qid] == ""
        assert row["end"] != "NA"
        blank["end"] += row["end"] == ""
    assert not_asked == expected_not_asked(exported)
    assert blank == BLANKS
    frame = pd.read_csv(path, comment="#")  # pandas: NA and the empty cell are both missing
    for qid in CONDITIONAL:
        assert frame[qid].isna().sum() == not_asked[qid] + BLANKS[qid]
    assert frame["end"].isna().sum() == BLANKS["end"]


def test_parquet_holds_null_where_not_asked_or_blank_and_says_which_in_its_metadata(exported):
    path = exported["out"] / f"{SLUG}-responses.parquet"
    frame = pd.read_parquet(path)
    not_asked = expected_not_asked(exported)
    for qid in CONDITIONAL:
        assert frame[qid].isna().sum() == not_asked[qid] + BLANKS[qid]
        assert b"asked of respondents who answered" in pq.read_schema(path).field(qid).metadata[b"deniable.not_asked"]
    rows = frame.to_dict("records")
    for row in rows:
        asked = asked_here(row["smoke"], isinstance(row["kinds"], str) and row["kinds"][:1] == "Y")
        for qid in CONDITIONAL:
            if not asked[qid]:
                assert pd.isna(row[qid]), row
    assert pq.read_schema(path).field("smoke").metadata is None


def _stat_rows(frame: pd.DataFrame) -> list[tuple[str, bool]]:
    """Each row's smoke answer (label) and whether it ticked Pipe, from a data frame of codes."""
    return [(["Yes", "No", "Sometimes"][int(s) - 1], p == 1) for s, p in zip(frame["smoke"], frame["kinds_1"])]


def test_spss_writes_a_user_missing_value_where_not_asked_and_system_missing_where_blank(exported):
    path = exported["out"] / f"{SLUG}-responses.sav"
    codes, meta = pyreadstat.read_sav(path, user_missing=True)
    spss = {"grid": -9, "laplace": -999}[exported["mechanism"]]
    marks = {"many": [-1], "kinds_1": [-1], "kinds_2": [-1], "pipe": [-1], "spent": [spss]}
    assert {name: [r["lo"] for r in ranges] for name, ranges in meta.missing_ranges.items()} == marks
    assert meta.variable_value_labels["many"][-1] == "Not asked" and -1 in meta.variable_value_labels["kinds_1"]
    assert "spent" not in meta.variable_value_labels  # a number gets no value labels: pandas would make it categorical
    variables = {"many": "many", "kinds": "kinds_1", "pipe": "pipe", "spent": "spent"}
    for (smoke, pipe), (_, row) in zip(_stat_rows(codes), codes.iterrows()):
        for qid, asked in asked_here(smoke, pipe).items():
            if not asked:
                assert row[variables[qid]] == marks[variables[qid]][0], (qid, row)
            else:
                assert row[variables[qid]] not in marks[variables[qid]]
    not_asked = expected_not_asked(exported)
    assert {qid: int(codes[v].isna().sum()) for qid, v in variables.items()} == {q: BLANKS[q] for q in variables}
    assert {qid: int((codes[v] == marks[v][0]).sum()) for qid, v in variables.items()} == not_asked
    frame = pd.read_spss(path)  # pandas: both missing
    assert {qid: int(frame[v].isna().sum()) for qid, v in variables.items()} == {
        qid: not_asked[qid] + BLANKS[qid] for qid in variables}


def test_stata_writes_dot_a_where_not_asked_and_dot_where_blank(exported):
    path = exported["out"] / f"{SLUG}-responses.dta"
    codes = pd.read_stata(path, convert_missing=True, convert_categoricals=False)
    variables = {"many": "many", "kinds": "kinds_1", "pipe": "pipe", "spent": "spent"}

    def missing(value, which: str) -> bool:
        return isinstance(value, pd.io.stata.StataMissingValue) and value.string == which

    plain = codes.apply(lambda column: column.map(lambda v: np.nan if isinstance(v, pd.io.stata.StataMissingValue)
                                                  else v))
    for (smoke, pipe), (_, row) in zip(_stat_rows(plain), codes.iterrows()):
        for qid, asked in asked_here(smoke, pipe).items():
            assert missing(row[variables[qid]], ".a") == (not asked), (qid, row)
    not_asked = expected_not_asked(exported)
    assert {qid: int(codes[v].map(lambda x: missing(x, ".")).sum()) for qid, v in variables.items()} == {
        q: BLANKS[q] for q in variables}
    frame = pd.read_stata(path)  # pandas: both missing
    assert {qid: int(frame[v].isna().sum()) for qid, v in variables.items()} == {
        qid: not_asked[qid] + BLANKS[qid] for qid in variables}
    _, meta = pyreadstat.read_dta(path, metadataonly=True)
    assert meta.variable_value_labels["many"]["a"] == "Not asked"


def estimates(*args) -> dict:
    return json.loads(run("estimate", *args, "--format", "json"))


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_estimate_reads_each_export_back_to_the_database_numbers(exported, fmt):
    from_db = estimates("--db", exported["db"], SLUG)
    from_file = estimates(exported["codebook"], exported["out"] / f"{SLUG}-responses.{fmt}")
    assert from_file == from_db  # every question's n, counts, estimates and intervals
    n = {q["id"]: q["n"] for q in from_db["questions"]}
    not_asked = expected_not_asked(exported)  # n counts those who answered: neither not asked nor blank
    assert n == {"smoke": len(REPORTS) + N_SIMULATED,
                 **{qid: len(REPORTS) + N_SIMULATED - not_asked[qid] - BLANKS[qid] for qid in CONDITIONAL},
                 "end": len(REPORTS) + N_SIMULATED - BLANKS["end"]}


def test_pandas_round_trips_of_the_exports_are_read_back_the_same(exported, tmp_path):
    """A CSV re-written by pandas has empty cells where not asked (an older export's way), a Parquet file
    written by pandas has a column of nulls for a question nobody in it was asked: both read the same."""
    out = exported["out"]
    pd.read_parquet(out / f"{SLUG}-responses.parquet").to_csv(tmp_path / "again.csv", index=False)
    nobody = pd.read_csv(out / f"{SLUG}-responses.csv", comment="#")
    nobody = nobody[nobody["smoke"] == "No"].drop(columns="text-version")
    nobody.to_parquet(tmp_path / "nobody.parquet", index=False)
    many = pq.read_table(tmp_path / "nobody.parquet").column("many")
    assert many.null_count == len(nobody) and not pa.types.is_dictionary(many.type)  # pandas' column of NaN
    assert estimates(exported["codebook"], tmp_path / "again.csv") == estimates("--db", exported["db"], SLUG)
    n = {q["id"]: q["n"] for q in estimates(exported["codebook"], tmp_path / "nobody.parquet")["questions"]}
    assert n["smoke"] == len(nobody) and n["many"] == n["kinds"] == n["pipe"] == n["spent"] == 0


def test_simulated_files_are_read_back_to_the_stored_numbers(exported, tmp_path):
    """``simulate -o`` writes NA where not asked; the same seed stored and written gives the same estimates."""
    db = tmp_path / "again.db"
    run("import", exported["survey"], "--db", db, "--open")
    for name in ("sim.csv", "sim.parquet"):
        run("simulate", exported["survey"], "--n", 200, "--truth", exported["truth"], "--seed", 3, "--db", db,
            "-o", tmp_path / name)
    def counts(doc, times=1) -> list:
        return [(q["id"], times * q["n"], [times * o["noisy_count"] for o in q.get("options", [])])
                for q in doc["questions"]]

    twice = estimates("--db", db, SLUG)  # the seed's respondents, stored twice
    for name in ("sim.csv", "sim.parquet"):
        assert counts(estimates(exported["survey"], tmp_path / name), 2) == counts(twice)
    with (tmp_path / "sim.csv").open(encoding="utf-8", newline="") as fh:
        fh.readline()
        rows = list(csv.DictReader(fh))
    assert [row["many"] == "NA" for row in rows] == [row["smoke"] == "No" for row in rows]


R_READ = r"""
library(haven)
args <- commandArgs(trailingOnly = TRUE)
out <- args[1]
vars <- c(many = "many", kinds = "kinds_1", pipe = "pipe", spent = "spent")
sav <- read_sav(file.path(out, "logic-responses.sav"))
sav_user <- read_sav(file.path(out, "logic-responses.sav"), user_na = TRUE)
dta <- read_dta(file.path(out, "logic-responses.dta"))
rows <- read.csv(file.path(out, "logic-responses.csv"), skip = 1, check.names = FALSE)
result <- list()
for (qid in names(vars)) {
  v <- vars[[qid]]
  code <- as.numeric(args[[which(names(vars) == qid) + 1]])
  result[[qid]] <- list(
    sav_missing = sum(is.na(sav[[v]])),
    sav_user_not_asked = sum(unclass(sav_user[[v]]) == code, na.rm = TRUE),
    sav_user_blank = sum(is.na(unclass(sav_user[[v]]))),
    dta_missing = sum(is.na(dta[[v]])),
    dta_not_asked = sum(is_tagged_na(dta[[v]], "a")),
    csv_na = sum(is.na(rows[[qid]])),
    csv_blank = sum(rows[[qid]] %in% ""))
}
cat(jsonlite::toJSON(result, auto_unbox = TRUE))
"""


def test_r_haven_reads_not_asked_and_blank_as_missing_and_tells_them_apart(exported, tmp_path):
    if not shutil.which("Rscript"):
        pytest.fail("R is needed (scripts/test.sh installs r-base, r-cran-haven and r-cran-jsonlite)")
    script = tmp_path / "read.R"
    script.write_text(R_READ, encoding="utf-8")
    codebook = {q["id"]: q for q in json.loads(exported["codebook"].read_text(encoding="utf-8"))["questions"]}
    codes = [str(codebook[qid]["not_asked"]["sav"]) for qid in CONDITIONAL]
    done = subprocess.run(["Rscript", str(script), str(exported["out"]), *codes], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    read = json.loads(done.stdout)
    not_asked = expected_not_asked(exported)
    # a numeric column (spent) has no empty text cell: read.csv reads its empty cells as NA too
    assert read == {qid: {"sav_missing": not_asked[qid] + BLANKS[qid], "sav_user_not_asked": not_asked[qid],
                          "sav_user_blank": BLANKS[qid], "dta_missing": not_asked[qid] + BLANKS[qid],
                          "dta_not_asked": not_asked[qid],
                          "csv_na": not_asked[qid] + (BLANKS[qid] if qid == "spent" else 0),
                          "csv_blank": 0 if qid == "spent" else BLANKS[qid]} for qid in CONDITIONAL}


def _file(tmp_path, fmt: str, rows: list[str]) -> Path:
    """A responses file of the grid survey: a good row, then ``rows`` (CSV lines), as CSV or as Parquet
    (text columns, as another program would write them)."""
    lines = ["smoke,many,kinds,pipe,spent,end", "No,NA,NA,NA,NA,", *rows]
    path = tmp_path / f"bad.{fmt}"
    if fmt == "csv":
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    else:
        cells = [line.split(",") for line in lines[1:]]
        pq.write_table(pa.table({qid: pa.array([row[j] for row in cells], pa.string())
                                 for j, qid in enumerate(lines[0].split(","))}), path)
    return path


WHERE = {"csv": ":3: ", "parquet": ": row 2: "}  # the bad row: line 3 of the CSV, row 2 of the Parquet file
BAD_ROWS = [  # (row, what the one-line error says after the file and line or row)
    ("Yes,,YN,,,", "column 'many': empty, but the question is required and this respondent was asked it (asked of "
                   "respondents who answered smoke = “Yes” or “Sometimes”)"),
    ("Yes,NA,YN,,,", "column 'many': NA (not asked), but this respondent was asked it (asked of respondents who "
                     "answered smoke = “Yes” or “Sometimes”)"),
    ("No,6+,NA,NA,NA,", "column 'many': answered, but this respondent was not asked it (asked of respondents who "
                        "answered smoke = “Yes” or “Sometimes”): leave the cell NA or empty"),
    ("Yes,1-5,NN,A,,", "column 'pipe': answered, but this respondent was not asked it (asked of respondents who "
                       "answered kinds = “Pipe”): leave the cell NA or empty"),
    ("Sometimes,1-5,NA,NA,NA,", "column 'spent': NA (not asked), but this respondent was asked it"),
    ("NA,NA,NA,NA,NA,", "column 'smoke': NA (not asked), but every respondent is asked this question"),
    ("No,NA,NA,NA,NA,NA", "column 'end': NA (not asked), but every respondent is asked this question"),
]


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
@pytest.mark.parametrize(("row", "message"), BAD_ROWS)
def test_a_file_that_breaks_the_display_logic_is_a_one_line_error(tmp_path, fmt, row, message):
    survey = tmp_path / "survey.json"
    survey.write_text(json.dumps(definition("grid")), encoding="utf-8")
    path = _file(tmp_path, fmt, [row])
    output = run("estimate", survey, path, code=1)
    assert output.startswith(f"Error: {path}{WHERE[fmt]}{message}"), output
    assert output.count("\n") == 1 and "Traceback" not in output


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_not_asked_may_be_empty_and_a_blank_optional_answer_is_no_error(tmp_path, fmt):
    survey = tmp_path / "survey.json"
    survey.write_text(json.dumps(definition("grid")), encoding="utf-8")
    doc = json.loads(run("estimate", survey, _file(tmp_path, fmt, ["No,,,,,", "Yes,6+,NN,NA,,", "Yes,6+,YN,,,"]),
                         "--format", "json"))
    assert {q["id"]: q["n"] for q in doc["questions"]} == {"smoke": 4, "many": 2, "kinds": 2, "pipe": 0, "spent": 0,
                                                          "end": 0}
