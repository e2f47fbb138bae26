"""The embed's build, its route, ``deniable embed`` and the SurveyJS results reader (docs/embedding.md).

The chromium side (the shared vectors against the built files, a real SurveyJS survey) is
tests/e2e/test_embed.py and tests/e2e/test_embed_surveyjs.py.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import json
import re
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from deniable.client import embed as embed_build
from deniable.client.embed import EmbedBuildError, build, current, integrity
from deniable.server.cli import cli
from deniable.server.survey.definition import design_fingerprint, parse_definition

ROOT = Path(__file__).resolve().parents[2]
SURVEYJS = ROOT / "tests" / "support" / "surveyjs"
DEFINITION = {"slug": "mixed", "title": "Mixed", "questions": [
    {"id": "drugs", "text": "Drugs?", "options": ["Yes", "No"], "epsilon": 1.0},
    {"id": "cheated", "text": "Cheated?", "options": ["Never", "Once", "More"], "epsilon": 2.0, "required": False},
    {"id": "forced", "text": "Stolen?", "options": ["Yes", "No"], "design": {"name": "forced", "p": 0.6, "forced": [0.25, 0.15]}},
    {"id": "did", "type": "multi", "text": "Which?", "options": ["A", "B", "C"], "epsilon": 3.0}]}
TRUTH = {"drugs": [0.3, 0.7], "cheated": [0.6, 0.3, 0.1], "forced": [0.2, 0.8], "did": [0.5, 0.2, 0.1]}


# ---------------------------------------------------------------- the build


def test_the_build_is_reproducible_and_versioned_by_its_content():
    one, two = build(), build()
    assert one == two and re.fullmatch(r"[0-9a-f]{16}", one.version)
    assert set(one.files()) == {f"deniable-embed-{one.version}.mjs", f"deniable-embed-{one.version}.js"}
    for data in (one.module, one.script):
        assert data.decode().startswith(f"/*! deniable-embed {one.version}:")
        assert "What does not hold: privacy at rest" in data.decode()


def test_the_build_runs_the_survey_pages_own_samplers():
    """Every function of rr.js and designs.js is in both files verbatim (bar the export keyword)."""
    built = current()
    for source in ("rr.js", "designs.js"):
        text = (embed_build.STATIC / source).read_text()
        body = re.search(r"export function randomize\(.*?\n}\n" if source == "rr.js" else
                         r"export function sampleDesign\(.*?\n}\n", text, re.DOTALL).group(0)
        for data in (built.module, built.script):
            assert body.removeprefix("export ") in data.decode()
    assert "console." not in built.module.decode()  # nothing is logged


def test_integrity_is_sri_sha384():
    data = b"alert(1)"
    expected = subprocess.run("openssl dgst -sha384 -binary | openssl base64 -A", shell=True, input=data,
                              capture_output=True, check=True).stdout.decode()
    assert integrity(data) == "sha384-" + expected


def test_an_import_the_builder_cannot_join_is_refused(tmp_path, monkeypatch):
    for name in embed_build.SOURCES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("export const x = 1;\n")
    (tmp_path / "embed" / "embed.js").write_text('import * as rr from "../rr.js";\n')
    monkeypatch.setattr(embed_build, "STATIC", tmp_path)
    embed_build._joined.cache_clear()
    try:
        with pytest.raises(EmbedBuildError, match=r"embed/embed.js:1: cannot join this import"):
            build()
    finally:
        embed_build._joined.cache_clear()


def test_the_vendored_surveyjs_is_the_recorded_one():
    readme = (SURVEYJS / "README.md").read_text()
    for name in ("survey.core.min.js", "survey-js-ui.min.js"):
        data = (SURVEYJS / name).read_bytes()
        assert f"| {name} | {hashlib.sha256(data).hexdigest()} |" in readme
        assert b"v2.5.38" in data[:200] and b"License: MIT" in data[:300]
    assert "MIT License" in (SURVEYJS / "LICENSE").read_text()


# ---------------------------------------------------------------- the route


def test_the_versioned_path_is_served_for_other_origins(client):
    built = current()
    for suffix, data in (("mjs", built.module), ("js", built.script)):
        response = client.get(f"/embed/{built.version}/deniable-embed.{suffix}", headers={"Origin": "https://elsewhere.example"})
        assert response.status_code == 200 and response.data == data
        assert response.mimetype == "text/javascript"
        assert response.headers["Access-Control-Allow-Origin"] == "*"
        assert response.headers["Cache-Control"] == "public, max-age=31536000, immutable"
        assert response.headers["X-Content-Type-Options"] == "nosniff"
    other = client.get("/embed/0000000000000000/deniable-embed.mjs")
    assert other.status_code == 404 and "Access-Control-Allow-Origin" not in other.headers


@pytest.mark.parametrize("path", ["/static/rr.js", "/s/demo", "/api/v1/surveys/demo", "/auth/login"])
def test_no_other_path_allows_other_origins(client, open_demo, path):
    response = client.get(path, headers={"Origin": "https://elsewhere.example"})
    response.close()
    assert response.status_code in (200, 302) and "Access-Control-Allow-Origin" not in response.headers


def test_the_api_states_the_design_fingerprint(client, open_demo):
    doc = client.get("/api/v1/surveys/demo").get_json()
    assert re.fullmatch(r"sha256:[0-9a-f]{16}", doc["design_fingerprint"])


# ---------------------------------------------------------------- deniable embed


def test_embed_build_writes_the_files_and_prints_their_hashes(tmp_path):
    result = CliRunner().invoke(cli, ["embed", "build", "-o", str(tmp_path / "js")])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert len(lines) == 2
    for line in lines:
        path, pin = line.split("  ")
        data = Path(path).read_bytes()
        assert pin == "sha384-" + base64.b64encode(hashlib.sha384(data).digest()).decode()
    assert sorted(p.name for p in (tmp_path / "js").iterdir()) == sorted(current().files())


def test_embed_build_to_a_file_is_one_line(tmp_path):
    (tmp_path / "taken").write_text("")
    result = CliRunner().invoke(cli, ["embed", "build", "-o", str(tmp_path / "taken")])
    assert result.exit_code == 1 and result.output.startswith("Error: --output: cannot write to")


def test_embed_design_prints_what_the_api_publishes(tmp_path, app, client):
    from deniable.server.store.db import connect
    from deniable.server.store.surveys import insert_survey

    path = tmp_path / "survey.json"
    path.write_text(json.dumps(DEFINITION))
    result = CliRunner().invoke(cli, ["embed", "design", str(path)])
    assert result.exit_code == 0, result.output
    db = connect(app.config["DATABASE"])
    try:
        insert_survey(db, parse_definition(DEFINITION), status="open")
    finally:
        db.conn.close()
    published = client.get("/api/v1/surveys/mixed").get_json()
    published.pop("status")
    assert json.loads(result.output) == published


# ---------------------------------------------------------------- the SurveyJS reader


def surveyjs_rows(responses_csv: Path, fingerprint: str) -> list[dict]:
    """SurveyJS's survey.data objects holding the same reports as a responses CSV, written here from the
    CSV's cells (labels, Y/N ticks) without the project's reader; with a question of the host's own."""
    survey = DEFINITION["questions"]
    lines = responses_csv.read_text().splitlines()[1:]  # the first line is the design line
    rows = []
    for i, cells in enumerate(csv.DictReader(lines)):
        row = {"age": str(20 + i % 30)}
        for q in survey:
            cell = cells[q["id"]]
            if cell == "":
                continue
            report = [int(c == "Y") for c in cell] if q.get("type") == "multi" else q["options"].index(cell)
            row[q["id"]] = {"report": report, "design": fingerprint, "epsilon": 1.0}
        rows.append(row)
    return rows


def test_estimates_from_surveyjs_results_equal_those_from_the_responses_csv(tmp_path):
    definition, truth, responses = tmp_path / "survey.json", tmp_path / "truth.json", tmp_path / "responses.csv"
    definition.write_text(json.dumps(DEFINITION))
    truth.write_text(json.dumps(TRUTH))
    runner = CliRunner()
    made = runner.invoke(cli, ["simulate", str(definition), "--n", "600", "--truth", str(truth), "--seed", "7",
                               "-o", str(responses)])
    assert made.exit_code == 0, made.output
    design_line, *lines = responses.read_text().splitlines()
    table = list(csv.reader(lines))
    skip = table[0].index("cheated")
    for cells in table[1::5]:  # the optional question left unanswered by every fifth respondent
        cells[skip] = ""
    with responses.open("w", newline="") as out:
        out.write(design_line + "\n")
        csv.writer(out, lineterminator="\n").writerows(table)
    rows = surveyjs_rows(responses, design_fingerprint(parse_definition(DEFINITION)))
    assert any("cheated" not in row for row in rows)  # an optional question left unanswered
    results = tmp_path / "results.json"
    results.write_text(json.dumps(rows))
    for fmt in ("csv", "table", "json"):
        ours = runner.invoke(cli, ["estimate", str(definition), str(responses), "--format", fmt])
        theirs = runner.invoke(cli, ["estimate", str(definition), str(results), "--from", "surveyjs", "--format", fmt])
        assert ours.exit_code == theirs.exit_code == 0, (ours.output, theirs.output)
        assert theirs.output == ours.output
    assert json.loads(ours.output)["n_responses"] == 600


@pytest.mark.parametrize("row, message", [
    ({"drugs": 0}, "row 1, question 'drugs': not a report of deniable's embed"),
    ({"drugs": {"report": 0, "design": "sha256:0000000000000000", "epsilon": 1}},
     "row 1, question 'drugs': reported under design 'sha256:0000000000000000', but the definition's design is"),
    ({"drugs": {"report": 2, "design": "FP", "epsilon": 1}}, "row 1, question 'drugs':"),
    ({"did": {"report": [1, 0], "design": "FP", "epsilon": 1}}, "row 1, question 'did':"),
    ("Yes", "row 1: not an object of answers"),
])
def test_bad_surveyjs_results_are_one_line_naming_the_row_and_question(tmp_path, row, message):
    definition, results = tmp_path / "survey.json", tmp_path / "results.json"
    definition.write_text(json.dumps(DEFINITION))
    fingerprint = design_fingerprint(parse_definition(DEFINITION))
    results.write_text(json.dumps([row]).replace('"FP"', json.dumps(fingerprint)))
    result = CliRunner().invoke(cli, ["estimate", str(definition), str(results), "--from", "surveyjs"])
    assert result.exit_code == 1 and result.output.count("\n") == 1
    assert result.output.startswith(f"Error: {results}: ") and message in result.output


@pytest.mark.parametrize("text, message", [("{\"a\": 1}", "expected a JSON list"), ("[", "not a JSON file"),
                                           ('[{"drugs": 1, "drugs": 2}]', "appears more than once")])
def test_a_results_file_that_is_not_a_list_of_objects_is_refused(tmp_path, text, message):
    definition, results = tmp_path / "survey.json", tmp_path / "results.json"
    definition.write_text(json.dumps(DEFINITION))
    results.write_text(text)
    result = CliRunner().invoke(cli, ["estimate", str(definition), str(results), "--from", "surveyjs"])
    assert result.exit_code == 1 and message in result.output


def test_from_surveyjs_does_not_go_with_db_or_weights(tmp_path):
    result = CliRunner().invoke(cli, ["estimate", "--db", str(tmp_path / "x.db"), "s", "--from", "surveyjs"])
    assert result.exit_code == 2 and "--from surveyjs reads a results file" in result.output
    result = CliRunner().invoke(cli, ["estimate", "a.json", "b.json", "--from", "surveyjs", "--weights", "w"])
    # --weights goes with --from now (the host's weight column: tests/cli/test_rake_cli.py): the files are read
    assert result.exit_code == 1 and "Error: " in result.output and "a.json" in result.output
