"""Qualtrics, LimeSurvey and REDCap: the export readers (``deniable estimate --from …``) and ``deniable embed recipe``.

The exports are hand-written to each platform's documented layout (tests/data/platforms/README.md
cites the pages): checked against the documented format, not against a live export.  The snippets
run in chromium against stand-ins of the platforms in tests/e2e/test_embed_recipes.py.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from deniable.client.embed import current, integrity
from deniable.server.cli import cli
from deniable.server.survey import readers
from deniable.server.survey.definition import design_fingerprint, load_definition, parse_definition
from deniable.server.survey.platform_exports import PlatformExportError, column_name, columns
from deniable.server.survey.recipes import design_json

PLATFORMS_DIR = Path(__file__).resolve().parents[1] / "data" / "platforms"
SURVEY = PLATFORMS_DIR / "survey.json"
FINGERPRINT = "sha256:bf0cf393b4c72148"
EXPORTS = {"qualtrics": "qualtrics.csv", "limesurvey": "limesurvey.csv", "redcap": "redcap.csv"}
HEADER_ROWS = {"qualtrics": 3, "limesurvey": 1, "redcap": 1}
# the reports in the fixtures, respondent by respondent (the fourth row of each has none: not counted)
REPORTS = [{"drugs": 0, "cheated": 1, "stolen": 0, "did": [1, 0, 1]},
           {"drugs": 1, "cheated": None, "stolen": 1, "did": [0, 0, 0]},
           {"drugs": 1, "cheated": 2, "stolen": 1, "did": [0, 1, 0]},
           {"drugs": 0, "cheated": 0, "stolen": 1, "did": [1, 1, 1]}]
TRUTH = {"drugs": [0.3, 0.7], "cheated": [0.6, 0.3, 0.1], "stolen": [0.2, 0.8], "did": [0.5, 0.2, 0.1]}


def test_the_fixtures_are_made_under_the_survey_s_design():
    assert design_fingerprint(load_definition(SURVEY)) == FINGERPRINT


@pytest.mark.parametrize("platform", EXPORTS)
def test_each_reader_gives_the_reports_written_in_the_export(platform):
    survey = load_definition(SURVEY)
    dataset = readers.read(PLATFORMS_DIR / EXPORTS[platform], survey, source=platform)
    for q in survey.questions:
        column = dataset.columns[q.id]
        assert len(column) == len(REPORTS)  # the row without any report is not a response
        read = [None if code == -1 else q.qtype.report_of(q, int(code)) for code in column]
        assert read == [row[q.id] for row in REPORTS], q.id


# ---------------------------------------------------------------- the same estimates as deniable's own path


def export_from_responses(platform: str, responses_csv: Path, out: Path, delimiter: str = ",") -> None:
    """The platform export holding the reports of a deniable responses CSV, written here with the
    fixture's header rows as the template (the CSV's cells: labels, Y/N ticks; not the project's
    reader), the host's other columns filled, and a row without any report after every tenth."""
    definition = json.loads(SURVEY.read_text())
    questions = {q["id"]: q for q in definition["questions"]}
    epsilon = {q["id"]: q["realized_epsilon"] for q in
               json.loads(CliRunner().invoke(cli, ["embed", "design", str(SURVEY)]).output)["questions"]}
    template = list(csv.reader((PLATFORMS_DIR / EXPORTS[platform]).read_text(encoding="utf-8-sig").splitlines()))
    header_rows = template[:HEADER_ROWS[platform]]
    header = header_rows[0]
    wanted = {column_name(platform, qid): qid for qid in questions}
    rows = []
    for i, cells in enumerate(csv.DictReader(responses_csv.read_text().splitlines()[1:])):  # after the design line
        row = []
        for name in header:
            qid = wanted.get(name)
            if qid is None:
                row.append(f"{i + 1}" if name in ("ResponseId", "id", "record_id") else "x")
                continue
            cell, q = cells[qid], questions[qid]
            if cell == "":
                row.append("")
                continue
            report = [int(c == "Y") for c in cell] if q.get("type") == "multi" else q["options"].index(cell)
            row.append(json.dumps({"report": report, "design": FINGERPRINT, "epsilon": epsilon[qid]},
                                  separators=(",", ":")))
        rows.append(row)
        if i % 10 == 9:
            rows.append(["" if name in wanted else "y" for name in header])
    with out.open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file, delimiter=delimiter, quoting=csv.QUOTE_ALL if platform == "limesurvey"
                            else csv.QUOTE_MINIMAL)
        writer.writerows([*header_rows, *rows])


@pytest.fixture(scope="module")
def responses(tmp_path_factory):
    """600 simulated responses in deniable's own CSV; every fifth leaves the optional question unanswered."""
    folder = tmp_path_factory.mktemp("platforms")
    truth, responses = folder / "truth.json", folder / "responses.csv"
    truth.write_text(json.dumps(TRUTH))
    made = CliRunner().invoke(cli, ["simulate", str(SURVEY), "--n", "600", "--truth", str(truth), "--seed", "11",
                                    "-o", str(responses)])
    assert made.exit_code == 0, made.output
    design_line, *lines = responses.read_text().splitlines()
    table = list(csv.reader(lines))
    skip = table[0].index("cheated")
    for cells in table[1::5]:
        cells[skip] = ""
    with responses.open("w", newline="") as out:
        out.write(design_line + "\n")
        csv.writer(out, lineterminator="\n").writerows(table)
    return responses


@pytest.mark.parametrize("platform, delimiter", [("qualtrics", ","), ("limesurvey", ","), ("limesurvey", ";"),
                                                 ("redcap", ",")])
def test_estimates_from_each_export_equal_those_of_the_same_reports_in_deniable_s_csv(
        platform, delimiter, responses, tmp_path):
    export = tmp_path / f"{platform}.csv"
    export_from_responses(platform, responses, export, delimiter)
    runner = CliRunner()
    for fmt in ("csv", "table", "json"):
        ours = runner.invoke(cli, ["estimate", str(SURVEY), str(responses), "--format", fmt])
        theirs = runner.invoke(cli, ["estimate", str(SURVEY), str(export), "--from", platform, "--format", fmt])
        assert ours.exit_code == theirs.exit_code == 0, (ours.output, theirs.output)
        assert theirs.output == ours.output
    assert json.loads(ours.output)["n_responses"] == 600


# ---------------------------------------------------------------- bad exports: one line naming row and column


def mutated(platform: str, old: str, new: str, tmp_path: Path, count: int = 1) -> Path:
    text = (PLATFORMS_DIR / EXPORTS[platform]).read_bytes().decode("utf-8")  # its line ends as they are
    assert old in text
    path = tmp_path / EXPORTS[platform]
    path.write_bytes(text.replace(old, new, count).encode("utf-8"))
    return path


CELL = '"{""report"":0,""design"":""sha256:bf0cf393b4c72148"",""epsilon"":0.9999999991993346}"'


@pytest.mark.parametrize("platform, old, new, message", [
    ("qualtrics", ",deniable_did\r\n", ",did\r\n", "no column 'deniable_did' (question 'did'): add the embedded data"),
    ("qualtrics", CELL, "Yes", "row 4 (ResponseId R_1OWnqY3vXlgkB7z), column 'deniable_drugs': 'Yes' is not a report"),
    ("qualtrics", '"{""ImportId"":""startDate""', '"{""Import"":""startDate""', "not a Qualtrics CSV export"),
    ("limesurvey", '""report"":1,""design"":""sha256:bf0cf393b4c72148"",""epsilon"":1.99',
     '""report"":3,""design"":""sha256:bf0cf393b4c72148"",""epsilon"":1.99', "row 2 (id 1), column 'dncheated': "),
    ("limesurvey", '"id","submitdate"', '"Response ID","Date submitted"', "not a LimeSurvey response export"),
    ("limesurvey", '"dndid"', '"dn did"', "no column 'dndid' (question 'did'): export with the headings 'Question code'"),
    ("redcap", "bf0cf393b4c72148", "0000000000000000",
     "row 2 (record_id 1, event baseline_arm_1), column 'deniable_drugs': reported under design 'sha256:0000000000000000'"),
    ("redcap", "record_id,redcap_event_name", "Record ID,Event Name", "not a REDCap raw export"),
    ("redcap", "3,followup_arm_1,,,,,,,,", "3,followup_arm_1,,,,,,,", "row 5 (record_id 3, event followup_arm_1) has 9 cells"),
    ("redcap", '[1,1,1]', '[1,1]', "row 6 (record_id 4, event baseline_arm_1), column 'deniable_did': "),
])
def test_a_bad_export_is_one_error_line_naming_the_row_and_column(platform, old, new, message, tmp_path):
    export = mutated(platform, old, new, tmp_path)
    result = CliRunner().invoke(cli, ["estimate", str(SURVEY), str(export), "--from", platform])
    assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
    assert result.output.startswith(f"Error: {export}: ") and message in result.output, result.output


def test_a_missing_or_unreadable_export_is_one_line(tmp_path):
    for path, message in ((tmp_path / "none.csv", "cannot be read"), (tmp_path / "bin.csv", "cannot be read")):
        if path.name == "bin.csv":
            path.write_bytes(b"\xff\xfe\x00id")
        result = CliRunner().invoke(cli, ["estimate", str(SURVEY), str(path), "--from", "redcap"])
        assert result.exit_code == 1 and message in result.output and result.output.count("\n") == 1


def test_from_a_platform_does_not_go_with_counts_or_weights(tmp_path):
    result = CliRunner().invoke(cli, ["estimate", str(SURVEY), "--counts", "c.csv", "--from", "qualtrics"])
    assert result.exit_code == 2 and "--from qualtrics reads a results file" in result.output
    result = CliRunner().invoke(cli, ["estimate", "a.json", "b.csv", "--from", "redcap", "--weights", "w"])
    # --weights goes with --from now (the host's weight column: tests/cli/test_rake_cli.py): the files are read
    assert result.exit_code == 1 and "Error: " in result.output and "a.json" in result.output


# ---------------------------------------------------------------- columns, and the recipes


def test_each_platform_names_the_report_s_field_as_it_allows():
    assert [column_name(p, "Drug_use") for p in ("qualtrics", "limesurvey", "redcap")] == \
        ["deniable_Drug_use", "dnDruguse", "deniable_drug_use"]
    with pytest.raises(PlatformExportError, match="unknown platform 'surveymonkey'"):
        column_name("surveymonkey", "x")


@pytest.mark.parametrize("platform, ids, message", [
    ("limesurvey", ["a_b", "ab"], "questions 'a_b' and 'ab' would share the limesurvey field 'dnab'"),
    ("redcap", ["Drugs", "drugs"], "questions 'Drugs' and 'drugs' would share the redcap field 'deniable_drugs'"),
    ("limesurvey", ["a_question_id_far_too_long"], "longer than 20 characters"),
])
def test_ids_a_platform_cannot_tell_apart_are_refused(platform, ids, message):
    survey = parse_definition({"slug": "s", "title": "S", "questions": [
        {"id": qid, "text": "?", "options": ["Yes", "No"], "epsilon": 1.0} for qid in ids]})
    with pytest.raises(PlatformExportError, match=re.escape(message)):
        columns(platform, survey)


TRICKY = {"slug": "tricky", "title": "T {x}", "questions": [
    {"id": "drugs", "text": "Drugs {x} [name] </script> & more?", "options": ["Yes [a]", "No {b}"], "epsilon": 1.0},
    {"id": "did", "type": "multi", "text": "Which?", "options": ["A", "B"], "epsilon": 2.0},
    {"id": "age", "type": "numeric", "text": "Age?", "min": 0, "max": 100, "step": 1, "epsilon": 1.0},
    {"id": "year", "text": "Year?", "options": ["1", "2"]}]}  # no ε: asked directly


def recipe(tmp_path, platform, *extra):
    definition = tmp_path / "tricky.json"
    definition.write_text(json.dumps(TRICKY))
    return CliRunner().invoke(cli, ["embed", "recipe", platform, str(definition), "--src", "https://s.example.org",
                                    *extra])


@pytest.mark.parametrize("platform", EXPORTS)
def test_the_recipe_prints_each_protected_question_s_snippet_pinned_by_its_hash(platform, tmp_path):
    result = recipe(tmp_path, platform)
    assert result.exit_code == 0, result.output
    built = current()
    src = f"https://s.example.org/embed/{built.version}/deniable-embed.js"
    assert f"==== integrity: {integrity(built.script)}" in result.output
    design = json.loads(CliRunner().invoke(cli, ["embed", "design", str(tmp_path / "tricky.json")]).output)
    shown = re.findall(r"^ *var design = (.*);$", result.output, re.M)
    assert [json.loads(text) for text in shown] == [design] * 3  # the same document, for drugs, did and age
    for qid in ("drugs", "did", "age"):
        column = column_name(platform, qid)
        assert f"==== question {qid}: its report lands in the column {column}" in result.output
        assert f'question: "{qid}"' in result.output and column in result.output
    assert "question year" not in result.output
    assert "not here (asked directly: use the platform's own question; or not embeddable yet): year" \
        in result.output
    assert f"{column_name(platform, 'did')}: question did (ε = 2); report one 0/1 per option: [A, B]" in result.output
    assert f"{column_name(platform, 'drugs')}: question drugs (ε = 1); report 0 = Yes [a], 1 = No {{b}}" \
        in result.output
    assert f"deniable estimate SURVEY.json EXPORT.csv --from {platform}" in result.output
    if platform != "qualtrics":  # the HTML snippets load the embed themselves
        assert result.output.count(f'<script src="{src}" integrity="{integrity(built.script)}" '
                                   'crossorigin="anonymous"></script>') == 3
    else:  # Qualtrics: once, in the survey's header, as the snippet's comment says
        assert f'<script src="{src}" integrity="{integrity(built.script)}" crossorigin="anonymous"></script>' \
            in result.output
    assert "</script> &" not in result.output  # the question's text cannot end the snippet's script


def test_the_limesurvey_snippet_gives_the_expression_manager_only_its_own_expression(tmp_path):
    """LimeSurvey runs ``{…}`` with no white space after the brace as an expression (ExpressionScript)."""
    snippets = recipe(tmp_path, "limesurvey").output.split("==== codebook")[0]  # what is pasted
    expressions = re.findall(r"\{(?=\S)[^}]*\}", snippets)
    assert expressions == ["{dndrugs.sgqa}", "{dndid.sgqa}", "{dnage.sgqa}"]


def test_the_redcap_snippet_pipes_nothing(tmp_path):
    """REDCap pipes ``[field]`` in a label; the snippet has no ``[`` followed by a letter."""
    output = recipe(tmp_path, "redcap").output
    snippets = output.split("==== codebook")[0]
    assert not re.findall(r"\[[A-Za-z]", snippets.replace("==== ", ""))


def test_design_json_is_the_same_json_with_nothing_for_a_host_to_interpret():
    design = {"a": "x{y}[z]<w>&", "b": [[1, {"c": "}"}]], "d": None}
    text = design_json(design)
    assert json.loads(text) == design
    assert not re.search(r"\{\S|\S\}|\[[^ ]|[<>&]", text)


@pytest.mark.parametrize("extra, message", [
    (["--question", "nope"], "--question: survey 'tricky' has no question 'nope'"),
])
def test_a_recipe_for_a_question_it_cannot_embed_is_one_line(tmp_path, extra, message):
    result = recipe(tmp_path, "qualtrics", *extra)
    assert result.exit_code == 1 and result.output == f"Error: {message}\n"


def test_a_recipe_for_one_question(tmp_path):
    result = recipe(tmp_path, "redcap", "--question", "did")
    assert result.exit_code == 0 and "==== question did" in result.output and "==== question drugs" not in result.output
    assert "not here" not in result.output


def test_a_recipe_needs_a_url_to_load_the_embed_from(tmp_path):
    definition = tmp_path / "s.json"
    definition.write_text(json.dumps(TRICKY))
    result = CliRunner().invoke(cli, ["embed", "recipe", "redcap", str(definition), "--src", "ftp://x/e.js"])
    assert result.exit_code == 1 and "--src: 'ftp://x/e.js' is not a URL" in result.output
    result = CliRunner().invoke(cli, ["embed", "recipe", "redcap", str(definition)])
    assert result.exit_code == 2 and "--src" in result.output
