"""``deniable estimate --from TOOL`` reads the host's own direct questions (issue 39, docs/embedding.md).

The recipes leave a question the definition asks directly to the host ("asked directly: use the
platform's own question"), under the deniable id.  Every ``--from`` reader (SurveyJS, oTree,
Qualtrics, LimeSurvey, REDCap) takes its plain value — the option's label, as each tool exports a
choice (SurveyJS also its index, when the choice's value is the index) — and ``--by`` splits the
estimates by it: through the installed command, each tool's file gives the same table, whose counts
are those of the reports written in each group.  A value that is no answer of the question is one
``Error:`` line naming it."""

from __future__ import annotations

import csv
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from deniable.server.survey.definition import design_fingerprint, parse_definition

DENIABLE = Path(sys.executable).parent / "deniable"
AGES = ["18-29", "30-49", "50+"]
DEFINITION = {"slug": "direct", "title": "Direct", "questions": [
    {"id": "drugs", "text": "Have you used an illegal drug in the last 12 months?", "options": ["Yes", "No"],
     "epsilon": 1.0},
    {"id": "age", "text": "Your age?", "options": AGES, "required": False},
]}
FINGERPRINT = design_fingerprint(parse_definition(DEFINITION))


def respondents(n: int = 90) -> list[tuple[int, str]]:
    rng = random.Random(39)
    return [(rng.randint(0, 1), AGES[i % 3]) for i in range(n)]


def report(value: int) -> dict:
    return {"report": value, "design": FINGERPRINT, "epsilon": 1.0}


def write_csv(path: Path, rows: list[list[str]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as out:
        csv.writer(out).writerows(rows)


def exports(folder: Path, people: list[tuple[int, str]]) -> dict[str, Path]:
    """The same respondents in each tool's results file."""
    files = {tool: folder / f"{tool}.{'json' if tool == 'surveyjs' else 'csv'}"
             for tool in ("surveyjs", "otree", "qualtrics", "limesurvey", "redcap")}
    # SurveyJS: the label, as SurveyJS stores a choice given as a string; a third of them as the index
    files["surveyjs"].write_text(json.dumps([{"drugs": report(r), "age": age if i % 3 else AGES.index(age)}
                                             for i, (r, age) in enumerate(people)]))
    cells = [(json.dumps(report(r)), age) for r, age in people]
    write_csv(files["otree"], [["participant.code", "protected.1.player.age", "protected.1.player.drugs"],
                               *([f"p{i}", age, cell] for i, (cell, age) in enumerate(cells))])
    write_csv(files["qualtrics"], [["ResponseId", "age", "deniable_drugs"], ["Response ID", "Your age?", "drugs"],
                                   ['{"ImportId":"_recordId"}', '{"ImportId":"QID2"}',
                                    '{"ImportId":"deniable_drugs"}'],
                                   *([f"R_{i}", age, cell] for i, (cell, age) in enumerate(cells))])
    write_csv(files["limesurvey"], [["id", "age", "dndrugs"], *([str(i), age, cell] for i, (cell, age) in
                                                                enumerate(cells))])
    write_csv(files["redcap"], [["record_id", "age", "deniable_drugs"], *([str(i), age, cell] for i, (cell, age) in
                                                                         enumerate(cells))])
    return files


def estimate(*args) -> subprocess.CompletedProcess:
    return subprocess.run([str(DENIABLE), "estimate", *map(str, args)], capture_output=True, text=True, timeout=120)


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "survey.json").write_text(json.dumps(DEFINITION))
    return tmp_path


def test_every_reader_takes_the_hosts_direct_question_and_splits_by_it(folder):
    people = respondents()
    files = exports(folder, people)
    tables = {}
    for tool, path in files.items():
        done = estimate(folder / "survey.json", path, "--from", tool, "--by", "age", "--format", "json")
        assert done.returncode == 0, (tool, done.stderr)
        tables[tool] = json.loads(done.stdout)
    drugs = next(q for q in tables["surveyjs"]["questions"] if q["id"] == "drugs")
    groups = {group["group"]: group for group in drugs["groups"] if not group["not_answered"]}
    assert set(groups) == set(AGES)
    for age in AGES:
        reported = [r for r, a in people if a == age]
        assert groups[age]["n"] == len(reported)
        assert [o["noisy_count"] for o in groups[age]["options"]] == [reported.count(0), reported.count(1)]
    for tool, table in tables.items():
        assert table == tables["surveyjs"], tool

    # the direct question's own estimate: its answers as given (p = 1)
    plain = estimate(folder / "survey.json", files["qualtrics"], "--from", "qualtrics", "--format", "json")
    assert plain.returncode == 0, plain.stderr
    age = next(q for q in json.loads(plain.stdout)["questions"] if q["id"] == "age")
    assert [o["noisy_count"] for o in age["options"]] == [30, 30, 30]


@pytest.mark.parametrize("tool", ["surveyjs", "redcap"])
def test_a_value_that_is_no_answer_is_one_error_line_naming_it(folder, tool):
    people = respondents(6)
    people[2] = (1, "Sixty")
    files = exports(folder, people)
    done = estimate(folder / "survey.json", files[tool], "--from", tool, "--by", "age")
    assert done.returncode != 0
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error:"), done.stderr
    assert "'Sixty' is not an answer to this question, asked directly" in lines[0] and "18-29" in lines[0]


def test_a_protected_question_still_refuses_a_plain_value(folder):
    rows = [{"drugs": "Yes", "age": "18-29"}]
    (folder / "results.json").write_text(json.dumps(rows))
    done = estimate(folder / "survey.json", folder / "results.json", "--from", "surveyjs")
    assert done.returncode != 0 and "not a report of deniable's embed" in done.stderr
