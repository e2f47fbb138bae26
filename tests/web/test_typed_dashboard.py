"""The dashboard with every question type (examples/habits.json, and a single choice randomized by a
forced-response design): every page and export answers, the exports round-trip through ``deniable
estimate``, and the builder edits typed drafts."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import numpy as np
from click.testing import CliRunner

from deniable.server.cli import cli
from deniable.server.store.db import connect
from deniable.server.store.responses import insert_many
from deniable.server.store.surveys import get_survey, insert_survey
from deniable.server.survey.definition import parse_definition
from deniable.server.survey.release import candidates
from deniable.server.survey.simulate import load_truth, simulate_dataset

from support.dashboard import csrf_token, post

PAGES = ["edit", "preview", "confirm?to=open", "results", "crosstab", "subgroups", "monitoring", "publish",
         "definition.json"]
EXPORTS = ["responses.csv", "responses.parquet", "responses.sav", "responses.dta", "codebook.json"]


# A yes/no question randomized by forced response with unequal forced shares (which k-ary randomized
# response cannot express), beside the examples' types.
FORCED = {"id": "cheated", "text": "Have you ever cheated in an exam?", "options": ["Yes", "No"],
          "design": {"name": "forced", "p": 0.6, "forced": [0.25, 0.15]}}
# and one whose matrix has a zero cell ("No" is never sent for a "Yes"): accepted, labelled not ε-LDP
TRIANGULAR = {"id": "stolen", "text": "Have you ever stolen?", "options": ["Yes", "No"],
              "design": {"name": "custom", "matrix": [[0.6, 0], [0.4, 1]]}}


def _habits(db_path, status: str, n: int = 0, designed: bool = True):
    db = connect(db_path)
    try:
        data = json.loads(Path("examples/habits.json").read_text())
        if designed:
            data["questions"] += [FORCED, TRIANGULAR]
        survey = parse_definition(data)
        stored = insert_survey(db, survey, status=status, owner_id=1)
        if n:
            truth_path = Path(db_path).parent / "habits-truth.json"
            truth = json.loads(Path("examples/habits-truth.json").read_text())
            truth_path.write_text(json.dumps({**truth, "cheated": [0.2, 0.8], "stolen": [0.1, 0.9]} if designed else truth))
            truth = load_truth(truth_path, survey)
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
    section = html.split('id="q-cheated"')[1].split("</section>")[0]
    assert "forced design" in section and "no answers yet" not in section
    section = html.split('id="q-stolen"')[1].split("</section>")[0]
    assert "not ε-LDP: randomized by the custom design" in section and "reported (randomized)" in section
    assert "no answers yet" not in section and "ε = " not in section
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
    _habits(db_path, "draft", designed=False)
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


def test_the_builder_edits_a_custom_matrix_and_a_bad_one_saves_nothing(auth_client, db_path):
    """The builder shows a custom matrix as rows of numbers (issue 39: it used to say it "cannot edit" it), and a
    save of a matrix the definition parser refuses is a 422 on the matrix's field with nothing changed."""
    _habits(db_path, "draft")
    page = html.unescape(auth_client.get("/dashboard/habits/edit").get_data(as_text=True))
    assert "cannot edit" not in page and 'id="error-summary"' not in page
    assert re.search(r'id="questions-6-design_matrix"[^>]*>\s*0\.6 0\n0\.4 1</textarea>', page)
    token = csrf_token(auth_client, "/dashboard/habits/edit")
    before = connect(db_path).execute("SELECT qid, type, spec, options, epsilon FROM questions ORDER BY id").fetchall()
    response = auth_client.post("/dashboard/habits/edit", data={
        "csrf_token": token, "title": "Changed", "target_n": "1000", "questions-0-qid": "stolen",
        "questions-0-text": "Stolen?", "questions-0-options": "Yes\nNo", "questions-0-randomization": "custom",
        "questions-0-design_matrix": "0.6 0\n0.4 0.9", "save": "Save draft"})
    text = html.unescape(response.get_data(as_text=True))
    assert response.status_code == 422 and "Question 1, matrix: column 2 (option 2) must add up to 1" in text
    assert 'href="#questions-0-design_matrix"' in text
    after = connect(db_path).execute("SELECT qid, type, spec, options, epsilon FROM questions ORDER BY id").fetchall()
    assert after == before


def test_every_surface_takes_a_designed_question_or_says_why(auth_client, db_path):
    """Cross-tab and regression of a designed question: the design's matrix in the estimator (the joint
    matrix a Kronecker product; the regression's likelihood), never a 500; within
    subgroups, over time, on the public page and in releases within groups it is estimated by its design."""
    _habits(db_path, "open", n=500)
    for page, status, words in (
            ("crosstab?row=cheated&col=year", 200, 'class="crosstab joint"'),
            ("crosstab?row=year&col=stolen", 200, "the pair is not protected by a finite ε"),
            ("regression?formula=cheated+~+year", 200, "forced design (its misclassification matrix in the likelihood)"),
            ("monitoring?question=stolen", 200, "not anytime-valid")):
        response = auth_client.get(f"/dashboard/habits/{page}")
        body = response.get_data(as_text=True)
        assert (response.status_code, words in body) == (status, True), (page, response.status_code, body[-3000:])
    response = auth_client.get("/dashboard/habits/subgroups?question=cheated&by=year")
    assert response.status_code == 200 and 'data-group="First"' in response.get_data(as_text=True)
    # monitoring: each day's fixed-n design estimate, said not to be anytime-valid
    page = auth_client.get("/dashboard/habits/monitoring?question=cheated").get_data(as_text=True)
    assert "not anytime-valid" in page and 'class="sequence-band"' in page
    # releases: the forced-response question's estimates within groups are offered and drawn; the not-ε-LDP
    # one is neither a protected question's table nor a direct question's counts, and says why
    offered = candidates(get_survey(connect(db_path), "habits").survey)
    assert ("groups", "cheated", "year") in [(kind, qid, by) for kind, qid, by, _ in offered]
    assert "stolen" not in {qid for _, qid, _, _ in offered}
    page = html.unescape(auth_client.get("/dashboard/habits/publish").get_data(as_text=True))
    assert "<code>stolen</code>: counts and most common answer: releases are not available yet" in page
    assert post(auth_client, "/dashboard/habits/publish/budget", {"budget": "20"}).status_code == 303
    items = {"-".join(p for p in (kind, qid, by) if p): "0.5" for kind, qid, by, _ in offered}
    response = post(auth_client, "/dashboard/habits/publish/release", items)
    assert response.status_code == 303, response.get_data(as_text=True)[-2000:]
    public = auth_client.get("/r/habits").get_data(as_text=True)
    assert "Have you ever cheated in an exam?: estimates (n = 500, exact, 95%)" in public  # the text, not the id
    assert 'data-kind="groups" data-question="cheated"' in public
    section = public.split('data-kind="groups" data-question="cheated"')[1].split("</section>")[0]
    groups = re.findall(r'class="group-estimate" data-value="([^"]*)" data-low="([^"]*)" data-high="([^"]*)"', section)
    assert groups and all(float(low) <= float(high) for _, low, high in groups)
