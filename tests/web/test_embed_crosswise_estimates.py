"""Estimates of a respondent-side crosswise question from the embed's reports equal the survey's own: the
same choices ("same" 0, "different" 1) submitted to a live deniable by ``deniable.client.submit``'s
``make_reports``/``post_reports`` (what the survey page and the Python client send: the choice as is) and
handed to a host as the embed hands them, ``{report, design, epsilon}``, then read back by
``deniable estimate --from surveyjs`` and ``--from qualtrics``: the same table, CSV and JSON as
``deniable estimate --db``.  Real app over HTTP, real SQLite file, the real CLI (docs/embedding.md)."""

from __future__ import annotations

import csv
import json

import pytest
from click.testing import CliRunner

from deniable.client.submit import fetch_design, fetch_mechanisms, make_reports, post_reports
from deniable.server.cli import cli
from support.dashboard import make_survey

FACT = "Is your mother's birthday in January, February or March?"
DEFINITION = {
    "slug": "taxes", "title": "Taxes",
    "questions": [{"id": "tax", "text": "Have you ever evaded a tax?", "options": ["Yes", "No"],
                   "design": {"name": "crosswise", "side": "respondent", "prevalence": 0.25, "fact": FACT,
                              "prevalence_range": [0.23, 0.27]}},
                  {"id": "drugs", "text": "Drugs?", "options": ["Yes", "No"], "epsilon": 1.0}],
}
# 48 respondents: "different" for 30 of them, in no particular order
CHOICES = [1 if i % 8 in (0, 2, 3, 5, 6) else 0 for i in range(48)]


def embedded(design: dict, qid: str, report) -> dict:
    """What the embed hands a host for a report of question ``qid`` (embed.js, ``commit``)."""
    q = next(item for item in design["questions"] if item["id"] == qid)
    return {"report": report, "design": design["design_fingerprint"], "epsilon": q["realized_epsilon"]}


def qualtrics_export(path, rows: list[dict]) -> None:
    """A Qualtrics CSV export (three header rows, ``ResponseId``) holding ``rows``' embed values in the
    embedded-data fields ``deniable_QID``, written here from its documented layout."""
    columns = ["deniable_tax", "deniable_drugs"]
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["ResponseId", *columns])
        writer.writerow(["Response ID", *columns])
        writer.writerow(['{"ImportId":"_recordId"}', *(f'{{"ImportId":"{c}"}}' for c in columns)])
        for i, row in enumerate(rows):
            writer.writerow([f"R_{i:04d}", json.dumps(row["tax"]), json.dumps(row["drugs"])])


@pytest.mark.parametrize("source", ["surveyjs", "qualtrics"])
def test_estimates_from_embedded_crosswise_reports_equal_the_surveys_own(app, live_server, db_path, tmp_path, source):
    make_survey(app, DEFINITION, status="open")
    design = fetch_design(live_server, "taxes")
    mechanisms = fetch_mechanisms(live_server, "taxes")
    rows = []
    for i, choice in enumerate(CHOICES):
        reports = make_reports({"tax": choice, "drugs": int(i % 3 == 0)}, mechanisms)
        assert reports["tax"] == choice  # sent as chosen: nothing drawn
        post_reports(live_server, "taxes", reports)
        rows.append({qid: embedded(design, qid, report) for qid, report in reports.items()})
    definition = tmp_path / "survey.json"
    definition.write_text(json.dumps(DEFINITION))
    if source == "surveyjs":
        results = tmp_path / "results.json"
        results.write_text(json.dumps([{"age": str(20 + i), **row} for i, row in enumerate(rows)]))
    else:
        results = tmp_path / "qualtrics.csv"
        qualtrics_export(results, rows)
    runner = CliRunner()
    for fmt in ("json", "csv", "table"):
        ours = runner.invoke(cli, ["estimate", "--db", db_path, "taxes", "--format", fmt])
        theirs = runner.invoke(cli, ["estimate", str(definition), str(results), "--from", source, "--format", fmt])
        assert ours.exit_code == theirs.exit_code == 0, (ours.output, theirs.output)
        assert theirs.output == ours.output, fmt
        if fmt == "json":
            tax = next(q for q in json.loads(ours.output)["questions"] if q["id"] == "tax")
            assert [option["noisy_count"] for option in tax["options"]] == [CHOICES.count(0), CHOICES.count(1)]
            assert tax["side"] == "respondent" and tax["epsilon"] == rows[0]["tax"]["epsilon"]
