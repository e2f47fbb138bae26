"""The builder offers the respondent-side crosswise model: its fields (the private fact, its known
prevalence and the plausible range), a save that stores exactly what ``deniable import`` stores, a bad
field that is a 422 on its field with nothing stored, and the planning panel's range of ε."""

from __future__ import annotations

import html
import json
import math
import re

import pytest
from click.testing import CliRunner

from deniable.server.cli import cli
from deniable.server.store.db import connect
from support.dashboard import builder_form, csrf_token

FACT = "Is your mother's birthday in January, February or March?"
SLOT = {"qid": "evaded", "text": "Have you ever evaded a tax?", "options": "Yes\nNo", "protection": "protected",
        "randomization": "respondent_crosswise", "design_prevalence": "0,25", "design_fact": FACT,
        "design_range": "0.23\n0.27", "epsilon": ""}
DESIGN = {"name": "crosswise", "side": "respondent", "prevalence": 0.25, "fact": FACT, "prevalence_range": [0.23, 0.27]}
DEFINITION = {"slug": "imported", "title": "Crosswise", "questions": [
    {"id": "evaded", "text": "Have you ever evaded a tax?", "options": ["Yes", "No"], "design": DESIGN}]}
COLUMNS = "position, qid, text, options, required, epsilon, k, threshold, type, spec"
LOW, HIGH = math.log(0.73 / 0.27), math.log(0.77 / 0.23)


def builder_data(token, questions, slug="crosswise"):
    return builder_form(token, {"slug": slug, "title": "Crosswise", "description": "", "target_n": "1000",
                                "save": "Save draft"}, questions)


def stored(db_path, slug="crosswise"):
    db = connect(db_path)
    try:
        row = db.execute("SELECT id FROM surveys WHERE slug = ?", [slug]).fetchone()
        if row is None:
            return None
        return db.execute(f"SELECT {COLUMNS} FROM questions WHERE survey_id = ? ORDER BY id", [row[0]]).fetchall()
    finally:
        db.close()


def test_a_builder_save_stores_what_deniable_import_stores_and_shows_it_again(auth_client, db_path, tmp_path):
    token = csrf_token(auth_client, "/dashboard/new")
    response = auth_client.post("/dashboard/new", data=builder_data(token, [SLOT]))
    assert response.status_code == 302, html.unescape(response.get_data(as_text=True))[:2000]
    path = tmp_path / "crosswise.json"
    path.write_text(json.dumps(DEFINITION))
    result = CliRunner().invoke(cli, ["import", str(path), "--db", db_path])
    assert result.exit_code == 0, result.output
    built = stored(db_path)
    assert built == stored(db_path, "imported") and json.loads(built[0][-1])["design"] == DESIGN
    # the edit page shows the design in its fields, and the panel its range of ε
    page = html.unescape(auth_client.get("/dashboard/crosswise/edit").get_data(as_text=True))
    assert re.search(r'<input checked class="q-randomization" [^>]*value="respondent_crosswise"', page)
    assert f'name="questions-0-design_fact" type="text" value="{FACT}"' in page
    assert "0.23\n0.27</textarea>" in page
    assert """data-design-spec='{"name": "crosswise", "side": "respondent"}'""" in page
    panel = page.split('id="plan-0"')[1].split("</aside>")[0]
    assert f"ε between {LOW:.4f} and {HIGH:.4f}" in panel and "not ε-LDP" in panel
    # saved again as shown: nothing changes
    token = csrf_token(auth_client, "/dashboard/crosswise/edit")
    response = auth_client.post("/dashboard/crosswise/edit", data=builder_data(token, [
        {**SLOT, "design_prevalence": "0.25"}]))
    assert response.status_code == 302 and stored(db_path) == built


@pytest.mark.parametrize("change, field, words", [
    ({"design_fact": " "}, "design_fact", "enter the private fact's question"),
    ({"design_range": ""}, "design_range", "enter the lowest and the highest plausible prevalence"),
    ({"design_range": "0.23"}, "design_range", "must be [low, high]"),
    ({"design_range": "0.27\n0.23"}, "design_range", "must be at least the low end"),
    ({"design_range": "0.4\n0.6", "design_prevalence": "0.45"}, "design_range", "must lie on one side of 1/2"),
    ({"design_range": "0.23\nlots"}, "design_range", "enter a number"),
    ({"design_prevalence": "0.3"}, "design_prevalence", "must lie in prevalence_range [0.23, 0.27]"),
    ({"options": "a\nb\nc"}, "randomization", "the crosswise design is for a question with two options"),
])
def test_a_bad_field_is_an_error_on_it_and_nothing_is_stored(auth_client, db_path, change, field, words):
    token = csrf_token(auth_client, "/dashboard/new")
    response = auth_client.post("/dashboard/new", data=builder_data(token, [{**SLOT, **change}]))
    page = html.unescape(response.get_data(as_text=True))
    assert response.status_code == 422
    errors = re.search(rf'<ul class="errors" id="questions-0-{field}-errors">(.*?)</ul>', page, re.S)
    assert errors and words in errors.group(1), page[page.find("error-summary"):][:1500]
    assert stored(db_path) is None


def test_plan_json_states_the_range_of_epsilon(auth_client):
    response = auth_client.get("/dashboard/plan.json", query_string={
        "k": 2, "design": json.dumps(DESIGN), "target": 1000, "margin": 0.05})
    assert response.status_code == 200, response.get_json()
    plan = response.get_json()
    assert plan["epsilon"] == pytest.approx(HIGH) and plan["epsilon_range"] == pytest.approx([LOW, HIGH])
    assert f"ε between {LOW:.4f} and {HIGH:.4f}" in plan["html"] and "not ε-LDP" in plan["html"]
    bad = auth_client.get("/dashboard/plan.json", query_string={"k": 2, "design": json.dumps({**DESIGN, "prevalence": 0.5})})
    assert bad.status_code == 400 and bad.get_json()["field"] == "design.prevalence"


def test_the_results_page_and_the_estimates_state_the_range(auth_client, client, db_path, tmp_path):
    path = tmp_path / "crosswise.json"
    path.write_text(json.dumps(DEFINITION))
    result = CliRunner().invoke(cli, ["import", str(path), "--db", db_path, "--open", "--owner", "ada@example.org"])
    assert result.exit_code == 0, result.output
    for report in [0] * 70 + [1] * 30:  # 70% "same": a share of yes (0.7 − 0.75)/(0.25 − 0.75) = 0.1
        assert client.post("/api/v1/surveys/imported/responses", json={"reports": {"evaded": report}}).status_code == 201
    page = html.unescape(auth_client.get("/dashboard/imported/results").get_data(as_text=True))
    words = f"ε between {LOW:.4f} and {HIGH:.4f} against an observer who does not know the private fact"
    assert words in page and "not ε-LDP against one who knows it" in page and "respondent-side" in page
    estimates = auth_client.get("/api/v1/surveys/imported/estimates").get_json()
    record = estimates["questions"][0]
    assert record["epsilon_range"] == pytest.approx([LOW, HIGH]) and record["privacy"].startswith(words)
    assert record["options"][0]["estimate"] == pytest.approx(0.1)
    # the export and its codebook: deniable estimate offline gives the same estimate, with the range
    out = CliRunner().invoke(cli, ["export", "imported", "--db", db_path, "--out", str(tmp_path)])
    assert out.exit_code == 0, out.output
    codebook = json.loads((tmp_path / "imported-codebook.json").read_text())
    assert codebook["questions"][0]["randomization"]["epsilon_range"] == pytest.approx([LOW, HIGH])
    table = CliRunner().invoke(cli, ["estimate", str(tmp_path / "imported-codebook.json"),
                                     str(tmp_path / "imported-responses.csv")])
    assert table.exit_code == 0, table.output
    assert words in table.output and "10.0%" in table.output
