"""Two-group designs in the embed's documents and in the hosts' exports (docs/embedding.md, "Two-group designs").

The design document carries each two-group question's card words per language (``card_words``: the survey page's
instruction sentences, Yes and No, the unrelated question as the translation words it) and the page's note
(``notes``: CDMsym's "Protected." sentence, the other models' ``plain`` "Not protected by ε." and why); the
recipes mount every model, ε-LDP or not, and the codebook says what a report means.  The reports a host
stores — ``{"report": {"group", "answer"}, "design", "epsilon"}`` in SurveyJS's JSON, oTree's, Qualtrics',
LimeSurvey's and REDCap's CSV — estimate as the same reports in deniable's own responses CSV.  The chromium
side (the embed's own reports, against the JSON API) is tests/e2e/test_embed_two_group.py.
"""

from __future__ import annotations

import csv
import json

import pytest
from click.testing import CliRunner
from deniable.server.cli import cli
from deniable.server.survey.definition import design_fingerprint, parse_definition
from deniable.server.survey.platform_exports import column_name
from deniable.server.survey.recipes import design_document, embeddable

UNRELATED = "Were you born in the first half of the year?"
DEFINITION = {
    "slug": "honest", "title": "Honesty",
    "questions": [
        {"id": "copied", "type": "two_group", "model": "CDM", "p": [0.3, 0.7], "text": "Have you ever copied in an exam?"},
        {"id": "pills", "type": "two_group", "model": "CDMsym", "p": [0.2, 0.1, 0.7, 0.15],
         "text": "Have you taken stimulants to study?"},
        {"id": "plagiarism", "type": "two_group", "model": "SLD", "p": [0.25, 0.75], "group_share": 0.4,
         "text": "Have you handed in someone else's work?"},
        {"id": "fabricated", "type": "two_group", "model": "UQTunknown", "p": [0.3, 0.8], "unrelated": UNRELATED,
         "text": "Have you ever made up data?"},
    ],
    "translations": {"fr": {"questions": {
        "fabricated": {"unrelated": "Êtes-vous né(e) dans la première moitié de l'année ?"}}}},
}
QIDS = [q["id"] for q in DEFINITION["questions"]]
TRUTH = {"copied": 0.3, "pills": 0.2, "plagiarism": 0.25, "fabricated": {"sensitive": 0.1, "unrelated": 0.5}}


def test_the_design_document_gives_each_model_its_card_words_and_the_pages_note():
    survey = parse_definition(DEFINITION)
    document = design_document(survey)
    items = {item["id"]: item for item in document["questions"]}
    for q in survey.questions:
        item = items[q.id]
        assert set(item["card_words"]) == {"en", "fr"}
        en, fr = item["card_words"]["en"], item["card_words"]["fr"]
        assert list(en["instructions"]) == list(q.mechanism.instructions) == item["instructions"]
        assert en["answers"] == ["Yes", "No"] and fr["answers"] == ["Oui", "Non"]
        assert "truthful" not in en["instructions"] or en["instructions"]["truthful"] == \
            "Please answer the question above truthfully."
        # the group threshold and the columns, as the survey page gets them
        assert item["group_threshold"] == q.mechanism.group_threshold
        assert item["weights"] == [list(c) for c in q.mechanism.columns]
        notes = item["notes"]["en"]
        if q.mechanism.protected:
            assert notes["protected"].startswith("Protected. ") and "plain" not in notes
        else:
            assert notes["plain"].startswith("Not protected by ε. ") and "protected" not in notes
            assert item["notes"]["fr"]["plain"] != notes["plain"]  # in the survey page's French
        assert not any("ε =" in text for words in item["notes"].values() for text in words.values())
    uqt = items["fabricated"]["card_words"]
    assert uqt["en"]["unrelated"] == UNRELATED and uqt["fr"]["unrelated"].startswith("Êtes-vous")
    assert uqt["fr"]["instructions"]["unrelated"].startswith("Veuillez ne pas répondre")
    assert "unrelated" not in items["copied"]["card_words"]["en"]
    assert [q["id"] for q in embeddable(document)] == QIDS  # every model, ε-LDP or not


def test_the_recipes_codebook_says_what_a_two_group_report_means(tmp_path):
    definition = tmp_path / "survey.json"
    definition.write_text(json.dumps(DEFINITION))
    out = CliRunner().invoke(cli, ["embed", "recipe", "redcap", str(definition), "--src", "https://s.example.org"])
    assert out.exit_code == 0, out.output
    assert out.output.count("==== question ") == 4 and "not here" not in out.output
    assert ('deniable_copied: question copied (ε not defined (not ε-LDP)); report {"group": 1|2, "answer": 0|1}: the '
            "group the device drew (group 1 with probability 0.5; CDM, p = 0.3, 0.7) and the answer the respondent "
            "clicked as the instruction said, 0 = Yes, 1 = No (the instruction is never sent)\n") in out.output
    assert "deniable_pills: question pills (ε = 2.079)" in out.output


# ---------------------------------------------------------------- the hosts' exports


@pytest.fixture(scope="module")
def simulated(tmp_path_factory):
    """400 simulated respondents in deniable's own responses CSV, and each one's reports as the embed gives them."""
    folder = tmp_path_factory.mktemp("two_group")
    definition, truth, responses = folder / "survey.json", folder / "truth.json", folder / "responses.csv"
    definition.write_text(json.dumps(DEFINITION))
    truth.write_text(json.dumps(TRUTH))
    made = CliRunner().invoke(cli, ["simulate", str(definition), "--n", "400", "--truth", str(truth), "--seed", "5",
                                    "-o", str(responses)])
    assert made.exit_code == 0, made.output
    survey = parse_definition(DEFINITION)
    fingerprint = design_fingerprint(survey)
    epsilon = {item["id"]: item["realized_epsilon"] for item in design_document(survey)["questions"]}
    rows = []
    for cells in csv.DictReader(responses.read_text().splitlines()[1:]):  # after the design line
        row = {}
        for q in survey.questions:
            group, _, answer = cells[q.id].partition(":")  # the responses file's text cell, 1:Yes
            report = {"group": int(group), "answer": ["Yes", "No"].index(answer)}
            row[q.id] = {"report": report, "design": fingerprint, "epsilon": epsilon[q.id]}
        rows.append(row)
    return definition, responses, rows


def write_csv(path, header_rows, rows):
    with path.open("w", newline="", encoding="utf-8") as file:
        csv.writer(file).writerows([*header_rows, *rows])


def export(platform: str, rows: list[dict], path) -> None:
    cell = lambda value: json.dumps(value, separators=(",", ":"))  # noqa: E731
    if platform == "surveyjs":
        path.write_text(json.dumps([{"age": "30", **row} for row in rows]))
    elif platform == "otree":
        write_csv(path, [["participant.code", "participant.label", *(f"protected.1.player.{qid}" for qid in QIDS)]],
                  [[f"p{i}", "", *(cell(row[qid]) for qid in QIDS)] for i, row in enumerate(rows)])
    else:
        columns = [column_name(platform, qid) for qid in QIDS]
        first = {"qualtrics": "ResponseId", "limesurvey": "id", "redcap": "record_id"}[platform]
        header = [[first, "age", *columns]]
        if platform == "qualtrics":
            header += [["Response ID", "Your age", *QIDS], [json.dumps({"ImportId": name}) for name in header[0]]]
        write_csv(path, header, [[f"{i + 1}", "30", *(cell(row[qid]) for qid in QIDS)] for i, row in enumerate(rows)])


@pytest.mark.parametrize("platform", ["surveyjs", "otree", "qualtrics", "limesurvey", "redcap"])
def test_estimates_from_each_hosts_export_equal_those_of_the_same_reports_in_deniables_csv(platform, simulated,
                                                                                           tmp_path):
    definition, responses, rows = simulated
    path = tmp_path / f"{platform}.{'json' if platform == 'surveyjs' else 'csv'}"
    export(platform, rows, path)
    runner = CliRunner()
    for fmt in ("table", "csv", "json"):
        ours = runner.invoke(cli, ["estimate", str(definition), str(responses), "--format", fmt])
        theirs = runner.invoke(cli, ["estimate", str(definition), str(path), "--from", platform, "--format", fmt])
        assert ours.exit_code == theirs.exit_code == 0, (ours.output, theirs.output)
        assert theirs.output == ours.output
    assert json.loads(ours.output)["n_responses"] == 400


def test_a_true_answer_or_a_bare_report_in_the_hosts_field_is_refused(simulated, tmp_path):
    definition, _, rows = simulated
    for bad, said in (({"group": 1, "answer": 0}, "not a report of deniable's embed"),
                      ({**rows[0]["copied"], "report": {"group": 3, "answer": 0}}, "copied"),
                      ({**rows[0]["copied"], "report": {"arm": 1, "count": 0}}, "copied")):
        path = tmp_path / "results.json"
        path.write_text(json.dumps([{**rows[0], "copied": bad}]))
        out = CliRunner().invoke(cli, ["estimate", str(definition), str(path), "--from", "surveyjs"])
        assert out.exit_code != 0 and said in out.output and "row 1" in out.output, out.output
