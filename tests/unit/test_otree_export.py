"""``deniable estimate --from otree``: oTree's CSV exports read as reports (server/survey/otree_export.py).

The exports here are written by this test from a responses CSV's cells with the csv module, in the
columns oTree 6.0.15 writes (the header below is that of a real wide export of examples/otree/); a
real oTree server's export, from a session driven in chromium, is read in tests/e2e/test_embed_otree.py.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from deniable.server.cli import cli
from deniable.server.survey.definition import design_fingerprint, parse_definition

DEFINITION = {"slug": "mixed", "title": "Mixed", "questions": [
    {"id": "drugs", "text": "Drugs?", "options": ["Yes", "No"], "epsilon": 1.0},
    {"id": "cheated", "text": "Cheated?", "options": ["Never", "Once", "More"], "epsilon": 2.0, "required": False},
    {"id": "forced", "text": "Stolen?", "options": ["Yes", "No"],
     "design": {"name": "forced", "p": 0.6, "forced": [0.25, 0.15]}},
    {"id": "did", "type": "multi", "text": "Which?", "options": ["A", "B", "C"], "epsilon": 3.0}]}
TRUTH = {"drugs": [0.3, 0.7], "cheated": [0.6, 0.3, 0.1], "forced": [0.2, 0.8], "did": [0.5, 0.2, 0.1]}
QIDS = [q["id"] for q in DEFINITION["questions"]]

# oTree 6.0.15's wide export: participant and session columns, then APP.ROUND.player/group/subsession
WIDE_BEFORE = ["participant.id_in_session", "participant.code", "participant.label", "participant._is_bot",
               "participant._index_in_pages", "participant._max_page_index", "participant._current_app_name",
               "participant._current_page_name", "participant.time_started_utc", "participant.visited",
               "participant.mturk_worker_id", "participant.mturk_assignment_id", "participant.payoff",
               "session.code", "session.label", "session.mturk_HITId", "session.mturk_HITGroupId",
               "session.comment", "session.is_demo", "session.config.name", "session.config.participation_fee",
               "session.config.real_world_currency_per_point", "protected.1.player.id_in_group",
               "protected.1.player.role", "protected.1.player.payoff", "protected.1.player.age"]
WIDE_AFTER = ["protected.1.group.id_in_subsession", "protected.1.subsession.round_number"]
# and an app's own export (/api/export_app?app=protected): participant, player, group, subsession, session
APP_BEFORE = ["participant.id_in_session", "participant.code", "participant.label", "participant._is_bot",
              "participant._index_in_pages", "participant._max_page_index", "participant._current_app_name",
              "participant._current_page_name", "participant.time_started_utc", "participant.visited",
              "participant.mturk_worker_id", "participant.mturk_assignment_id", "participant.payoff",
              "player.id_in_group", "player.role", "player.payoff", "player.age"]
APP_AFTER = ["group.id_in_subsession", "subsession.round_number", "session.code", "session.label",
             "session.mturk_HITId", "session.mturk_HITGroupId", "session.comment", "session.is_demo"]


def write_export(responses_csv: Path, out: Path, fingerprint: str, *, wide: bool, unstarted: int = 0,
                 bom: bool = False) -> None:
    """An oTree export holding the same reports as a responses CSV, written from the CSV's cells (labels,
    Y/N ticks) without the project's readers; ``unstarted`` participants who never submitted the page."""
    lines = responses_csv.read_text().splitlines()[1:]  # the first line is the design line
    before, after = (WIDE_BEFORE, WIDE_AFTER) if wide else (APP_BEFORE, APP_AFTER)
    prefix = "protected.1.player." if wide else "player."
    header = before + [prefix + qid for qid in QIDS] + after
    rows = []
    for i, cells in enumerate(csv.DictReader(lines)):
        row = {name: "" for name in header}
        row.update({"participant.id_in_session": i + 1, "participant.code": f"p{i:07d}", "participant.visited": 1,
                    "participant.time_started_utc": "2026-11-24 10:00:00.000000", header[len(before) - 1]: 20 + i % 30})
        for q in DEFINITION["questions"]:
            cell = cells[q["id"]]
            if cell == "":
                continue
            report = [int(c == "Y") for c in cell] if q.get("type") == "multi" else q["options"].index(cell)
            row[prefix + q["id"]] = json.dumps({"report": report, "design": fingerprint, "epsilon": 1.0},
                                               separators=(",", ":"))
        rows.append(row)
    for j in range(unstarted):  # oTree makes every participant of the session in advance
        rows.insert(2 * j, {**{name: "" for name in header}, "participant.code": f"u{j:07d}", "participant.visited": 0})
    with out.open("w", newline="", encoding="utf-8-sig" if bom else "utf-8") as file:
        writer = csv.DictWriter(file, header, lineterminator="\r\n")  # csv.writer's default, as oTree's
        writer.writeheader()
        writer.writerows(rows)


@pytest.fixture
def simulated(tmp_path):
    """A definition and 600 simulated responses in deniable's own CSV, the optional question left out by every fifth."""
    definition, truth, responses = tmp_path / "survey.json", tmp_path / "truth.json", tmp_path / "responses.csv"
    definition.write_text(json.dumps(DEFINITION))
    truth.write_text(json.dumps(TRUTH))
    made = CliRunner().invoke(cli, ["simulate", str(definition), "--n", "600", "--truth", str(truth), "--seed", "11",
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
    return definition, responses


@pytest.mark.parametrize("wide, bom", [(True, False), (False, False), (True, True)])
def test_estimates_from_an_otree_export_equal_those_from_the_responses_csv(tmp_path, simulated, wide, bom):
    definition, responses = simulated
    export = tmp_path / "export.csv"
    write_export(responses, export, design_fingerprint(parse_definition(DEFINITION)), wide=wide, unstarted=7, bom=bom)
    runner = CliRunner()
    for fmt in ("csv", "table", "json"):
        ours = runner.invoke(cli, ["estimate", str(definition), str(responses), "--format", fmt])
        theirs = runner.invoke(cli, ["estimate", str(definition), str(export), "--from", "otree", "--format", fmt])
        assert ours.exit_code == theirs.exit_code == 0, (ours.output, theirs.output)
        assert theirs.output == ours.output
    assert json.loads(ours.output)["n_responses"] == 600  # the 7 who never submitted are not respondents


def one_row(tmp_path, cells: dict, header_extra=()) -> tuple[Path, Path]:
    """A definition and a wide export of one participant whose protected cells are ``cells`` (FP: the fingerprint)."""
    definition, export = tmp_path / "survey.json", tmp_path / "export.csv"
    definition.write_text(json.dumps(DEFINITION))
    fingerprint = design_fingerprint(parse_definition(DEFINITION))
    header = ["participant.code"] + [f"protected.1.player.{qid}" for qid in QIDS] + list(header_extra)
    good = {"drugs": 0, "cheated": 1, "forced": 1, "did": [1, 0, 0]}
    row = ["p1"] + [cells.get(qid, json.dumps({"report": good[qid], "design": "FP", "epsilon": 1}))
                    for qid in QIDS] + ["" for _ in header_extra]
    with export.open("w", newline="") as file:
        csv.writer(file).writerows([header, [cell.replace('"FP"', json.dumps(fingerprint)) for cell in row]])
    return definition, export


@pytest.mark.parametrize("cells, message", [
    ({"drugs": "0"}, "line 2, question 'drugs': not a report of deniable's embed"),
    ({"drugs": "Yes"}, "line 2, question 'drugs': not a report of deniable's embed"),
    ({"drugs": json.dumps({"report": 0, "design": "sha256:0000000000000000", "epsilon": 1})},
     "line 2, question 'drugs': reported under design 'sha256:0000000000000000', but the definition's design is"),
    ({"drugs": json.dumps({"report": 2, "design": "FP", "epsilon": 1})}, "line 2, question 'drugs':"),
    ({"did": json.dumps({"report": [1, 0], "design": "FP", "epsilon": 1})}, "line 2, question 'did':"),
])
def test_a_cell_that_is_not_a_report_is_one_line_naming_the_line_and_question(tmp_path, cells, message):
    definition, export = one_row(tmp_path, cells)
    result = CliRunner().invoke(cli, ["estimate", str(definition), str(export), "--from", "otree"])
    assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
    assert result.output.startswith(f"Error: {export}: ") and message in result.output


def test_the_same_row_without_a_bad_cell_is_read(tmp_path):
    """The rows of the test above are good but for the one cell (so each failure is that cell's)."""
    definition, export = one_row(tmp_path, {})
    result = CliRunner().invoke(cli, ["estimate", str(definition), str(export), "--from", "otree", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["n_responses"] == 1


@pytest.mark.parametrize("write, message", [
    (lambda f: f.write("participant.code,protected.1.player.drugs\r\np1,\r\n"), "no column for question 'cheated'"),
    (lambda f: f.write(""), "empty: no header line"),
    (lambda f: f.write("participant.code," + ",".join(f"player.{q}" for q in QIDS) + ",protected.2.player.drugs\r\n"),
     "question 'drugs' is in 2 columns (player.drugs, protected.2.player.drugs)"),
    (lambda f: f.write(b"\xff\xfe".decode("latin-1")), "not a CSV export of oTree"),
])
def test_an_export_without_one_column_per_question_is_refused(tmp_path, write, message):
    definition, export = tmp_path / "survey.json", tmp_path / "export.csv"
    definition.write_text(json.dumps(DEFINITION))
    with export.open("w", encoding="latin-1", newline="") as file:
        write(file)
    result = CliRunner().invoke(cli, ["estimate", str(definition), str(export), "--from", "otree"])
    assert result.exit_code == 1 and message in result.output, result.output


def test_a_participant_on_two_rows_is_refused(tmp_path):
    """An app's export of a question asked in two rounds: the stored report sent twice, not two answers."""
    definition, export = one_row(tmp_path, {})
    lines = export.read_text().splitlines()
    export.write_text("\r\n".join([*lines, lines[1]]) + "\r\n")
    result = CliRunner().invoke(cli, ["estimate", str(definition), str(export), "--from", "otree"])
    assert result.exit_code == 1 and "line 3: participant 'p1' is on line 2 too" in result.output, result.output


def test_from_otree_takes_a_definition_and_an_export(tmp_path):
    result = CliRunner().invoke(cli, ["estimate", "a.json", "--from", "otree"])
    assert result.exit_code == 2 and "with --from otree, give SURVEY.json and EXPORT.csv" in result.output
    result = CliRunner().invoke(cli, ["estimate", "--db", str(tmp_path / "x.db"), "s", "--from", "otree"])
    assert result.exit_code == 2 and "--from otree reads a results file" in result.output
