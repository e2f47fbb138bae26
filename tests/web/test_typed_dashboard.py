"""The dashboard with every question type (examples/habits.json): every page and export answers,
the exports round-trip through ``deniable estimate``, and the builder edits typed drafts."""

from __future__ import annotations

import json

import numpy as np
from click.testing import CliRunner

from deniable.server.cli import cli
from deniable.server.store.db import connect
from deniable.server.store.responses import insert_many
from deniable.server.store.surveys import get_survey, insert_survey
from deniable.server.survey.definition import load_definition
from deniable.server.survey.simulate import load_truth, simulate_dataset

from support.dashboard import csrf_token

PAGES = ["edit", "preview", "confirm?to=open", "results", "crosstab", "subgroups", "monitoring", "publish",
         "definition.json"]
EXPORTS = ["responses.csv", "responses.parquet", "responses.sav", "responses.dta", "codebook.json"]


def _habits(db_path, status: str, n: int = 0):
    db = connect(db_path)
    try:
        survey = load_definition("examples/habits.json")
        stored = insert_survey(db, survey, status=status, owner_id=1)
        if n:
            truth = load_truth("examples/habits-truth.json", survey)
            insert_many(db, stored, simulate_dataset(survey, truth, n, np.random.default_rng(7)).columns)
        return get_survey(db, "habits")
    finally:
        db.conn.close()


def test_every_page_and_export_of_a_survey_with_every_type(auth_client, db_path, tmp_path):
    _habits(db_path, "open", n=2000)
    for page in PAGES:
        assert auth_client.get(f"/dashboard/habits/{page}").status_code < 400, page
    html = auth_client.get("/dashboard/habits/results").get_data(as_text=True)
    for qid, row in (("drinks", "mean"), ("hours", "mean"), ("used", "ticked"), ("shoplifting", "prevalence")):
        section = html.split(f'id="q-{qid}"')[1].split("</section>")[0]
        assert f'data-option="{row}"' in section and "no answers yet" not in section, qid
    files = {}
    for name in EXPORTS:
        response = auth_client.get(f"/dashboard/habits/export/{name}")
        assert response.status_code == 200, name
        files[name] = tmp_path / name
        files[name].write_bytes(response.data)
    shown = auth_client.get("/api/v1/surveys/habits/estimates").get_json()
    for data in ("responses.csv", "responses.parquet"):
        result = CliRunner().invoke(cli, ["estimate", str(files["codebook.json"]), str(files[data]),
                                          "--format", "json"])
        assert result.exit_code == 0, result.output
        assert json.loads(result.output)["questions"] == shown["questions"]


def test_the_builder_edits_a_typed_draft(auth_client, db_path):
    """The builder shows every type's fields (tests/web/test_builder_types.py saves them); a save
    with a bad field changes nothing."""
    _habits(db_path, "draft")
    page = auth_client.get("/dashboard/habits/edit").get_data(as_text=True)
    assert 'id="questions-0-minimum"' in page and 'id="questions-3-sensitive"' in page
    token = csrf_token(auth_client, "/dashboard/habits/edit")
    before = connect(db_path).execute("SELECT qid, type, spec, options FROM questions ORDER BY id").fetchall()
    response = auth_client.post("/dashboard/habits/edit", data={
        "csrf_token": token, "title": "Changed", "target_n": "1000", "questions-0-kind": "numeric",
        "questions-0-qid": "drinks", "questions-0-text": "Drinks?", "questions-0-minimum": "0",
        "questions-0-maximum": "forty", "questions-0-epsilon": "1", "save": "Save draft"})
    assert response.status_code == 422 and "Question 1, max: enter a number" in response.get_data(as_text=True)
    assert connect(db_path).execute("SELECT qid, type, spec, options FROM questions ORDER BY id").fetchall() == before
