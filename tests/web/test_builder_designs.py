"""The builder edits randomized-response designs (forced response, binary and k-ary, Warner's, the
unrelated question, Kuk's and the crosswise model):
a protected single choice's "Randomization" is k-ary randomized response at ε or a design with its
parameters; a save stores exactly what ``deniable import`` of the same definition stores; a bad
parameter is a 422 on its field with nothing stored; the designs the builder cannot show stay
refused (409); and ``/dashboard/plan.json?design=…`` gives the numbers of ``deniable plan --design``."""

from __future__ import annotations

import html
import io
import json
import math
import re

import pytest
from click.testing import CliRunner

from deniable.client.designs import from_definition
from deniable.estimators.designs import plan_design
from deniable.server.cli import cli
from deniable.server.store.db import connect
from deniable.server.store.surveys import get_survey
from support.dashboard import builder_form, csrf_token, open_db

FORCED_BINARY = {"qid": "cheated", "text": "Have you ever cheated in an exam?", "options": "Yes\nNo",
                 "protection": "protected", "randomization": "forced", "design_p": "0.6",
                 "design_forced": "0.25\n0.15", "epsilon": ""}
FORCED_KARY = {"qid": "drug", "text": "Which drug have you used most?", "options": "None\nCannabis\nOther",
               "protection": "protected", "randomization": "forced", "design_p": "0,7",
               "design_forced": "0.1\n0.125\n0.075"}
WARNER = {"qid": "stolen", "text": "Have you ever stolen?", "options": "Yes\nNo", "protection": "protected",
          "randomization": "warner", "design_p": "0.75"}
UNRELATED = {"qid": "fled", "text": "Have you ever fled a scene?", "options": "Yes\nNo", "protection": "protected",
             "randomization": "unrelated", "design_p": "0.7", "design_prevalence": "0.5"}
KUK = {"qid": "lied", "text": "Have you ever lied to a doctor?", "options": "Yes\nNo", "protection": "protected",
       "randomization": "kuk", "design_theta_1": "0.7", "design_theta_2": "0.3"}
CROSSWISE = {"qid": "evaded", "text": "Have you ever evaded a tax?", "options": "Yes\nNo", "protection": "protected",
             "randomization": "crosswise", "design_prevalence": "0.25"}
CUSTOM = {"qid": "matrix", "text": "Red or black?", "options": "Yes\nNo", "protection": "protected",
          "randomization": "custom", "design_matrix": "0.7 0.2\n0.3 0.8"}
KARY = {"qid": "year", "text": "Year?", "options": "First\nSecond", "protection": "protected",
        "randomization": "rr", "epsilon": "1", "design_p": "0.9"}  # a leftover p is ignored

# The same survey as a definition file
DEFINITION = {"slug": "designs", "title": "Designs", "questions": [
    {"id": "cheated", "text": "Have you ever cheated in an exam?", "options": ["Yes", "No"],
     "design": {"name": "forced", "p": 0.6, "forced": [0.25, 0.15]}},
    {"id": "drug", "text": "Which drug have you used most?", "options": ["None", "Cannabis", "Other"],
     "design": {"name": "forced", "p": 0.7, "forced": [0.1, 0.125, 0.075]}},
    {"id": "stolen", "text": "Have you ever stolen?", "options": ["Yes", "No"], "design": {"name": "warner", "p": 0.75}},
    {"id": "year", "text": "Year?", "options": ["First", "Second"], "epsilon": 1},
    {"id": "fled", "text": "Have you ever fled a scene?", "options": ["Yes", "No"],
     "design": {"name": "unrelated", "p": 0.7, "prevalence": 0.5}},
    {"id": "lied", "text": "Have you ever lied to a doctor?", "options": ["Yes", "No"],
     "design": {"name": "kuk", "theta_1": 0.7, "theta_2": 0.3}},
    {"id": "evaded", "text": "Have you ever evaded a tax?", "options": ["Yes", "No"],
     "design": {"name": "crosswise", "prevalence": 0.25}}]}
ALL = [FORCED_BINARY, FORCED_KARY, WARNER, KARY, UNRELATED, KUK, CROSSWISE]
COLUMNS = "position, qid, text, options, required, epsilon, k, threshold, type, spec"


def builder_data(token, questions, slug="designs"):
    return builder_form(token, {"slug": slug, "title": "Designs", "description": "", "target_n": "1000",
                                "save": "Save draft"}, questions)


def stored(db_path, slug="designs"):
    db = connect(db_path)
    try:
        survey_id = db.execute("SELECT id FROM surveys WHERE slug = ?", [slug]).fetchone()[0]
        return db.execute(f"SELECT {COLUMNS} FROM questions WHERE survey_id = ? ORDER BY id", [survey_id]).fetchall()
    finally:
        db.close()


def test_the_builder_saves_designs_exactly_as_deniable_import_stores_them(app, auth_client, db_path, tmp_path):
    token = csrf_token(auth_client, "/dashboard/new")
    response = auth_client.post("/dashboard/new", data=builder_data(token, ALL))
    assert response.status_code == 302, response.get_data(as_text=True)
    built = stored(db_path)
    path = tmp_path / "designs.json"
    path.write_text(json.dumps({**DEFINITION, "slug": "imported"}))
    result = CliRunner().invoke(cli, ["import", str(path), "--db", db_path])
    assert result.exit_code == 0, result.output
    assert built == stored(db_path, "imported")
    survey = get_survey(open_db(app), "designs").survey
    cheated, drug, stolen, year, fled, lied, evaded = survey.questions
    assert json.loads(cheated.design) == {"name": "forced", "p": 0.6, "forced": [0.25, 0.15]}
    assert json.loads(drug.design) == {"name": "forced", "p": 0.7, "forced": [0.1, 0.125, 0.075]}
    assert json.loads(stolen.design) == {"name": "warner", "p": 0.75}
    assert (year.design, year.epsilon) == (None, 1.0)
    # the largest (p + p_i)/p_i: the report "No" is 5 times likelier for a true "No" than for a "Yes"
    assert cheated.epsilon == pytest.approx(max(math.log(0.85 / 0.25), math.log(0.75 / 0.15)))
    assert stolen.epsilon == pytest.approx(math.log(3))
    assert fled.epsilon == pytest.approx(math.log(0.85 / 0.15))  # P(Yes) = 0.7·t + 0.3·0.5: "No" is 0.15 vs 0.85
    assert lied.epsilon == pytest.approx(math.log(0.7 / 0.3))
    assert evaded.epsilon == pytest.approx(math.log(3))


def test_a_saved_design_is_shown_in_its_fields_and_saved_again_unchanged(app, auth_client, db_path):
    token = csrf_token(auth_client, "/dashboard/new")
    assert auth_client.post("/dashboard/new", data=builder_data(token, ALL)).status_code == 302
    before = stored(db_path)
    page = html.unescape(auth_client.get("/dashboard/designs/edit").get_data(as_text=True))
    checked = re.findall(r'<input checked class="q-randomization" id="questions-\d+-randomization-\d" [^>]*value="(\w+)"',
                         page)
    assert checked == ["forced", "forced", "warner", "rr", "unrelated", "kuk", "crosswise"]
    assert "cannot edit" not in page
    assert "0.1\n0.125\n0.075</textarea>" in page and 'name="questions-2-design_p" type="text" value="0.75"' in page
    # the page's panels: the design's realized ε and its planning numbers
    panel = page.split('id="plan-2"')[1].split("</aside>")[0]
    assert "Warner's mirrored design" in panel and f"ε = {math.log(3):.4f}" in panel
    # save the page as it is shown (every field as the form holds it): nothing changes
    fields = dict(re.findall(r'<input [^>]*name="(questions-\d+-(?:qid|epsilon|design_\w+))"[^>]*value="([^"]*)"', page))
    fields.update(re.findall(r'name="(questions-\d+-(?:text|options|design_forced))"[^>]*>\n?([^<]*)</textarea>', page))
    fields.update(re.findall(r'<input checked class="q-\w+" id="[^"]+" name="(questions-\d+-\w+)" type="radio" value="(\w+)"',
                             page))
    token = csrf_token(auth_client, "/dashboard/designs/edit")
    response = auth_client.post("/dashboard/designs/edit", data={
        "csrf_token": token, "title": "Designs", "target_n": "1000", "save": "Save draft", **fields,
        **{f"questions-{i}-required": "y" for i in range(len(ALL))}})
    assert response.status_code == 302, html.unescape(response.get_data(as_text=True))[:3000]
    assert stored(db_path) == before, fields


@pytest.mark.parametrize("question, field, words", [
    ({**FORCED_BINARY, "design_p": "1.5", "design_forced": "0.25\n0.15"}, "design_p", "must be a probability in (0, 1]"),
    ({**FORCED_BINARY, "design_p": "0", "design_forced": "0.5\n0.5"}, "design_p", "must be a probability in (0, 1]"),
    ({**FORCED_BINARY, "design_forced": "0.25\n0.25"}, "design_forced", "must add up to 1, got 1.1"),
    ({**FORCED_BINARY, "design_forced": "0.25\nlots"}, "design_forced", "share 2 (option 2): enter a number"),
    ({**FORCED_BINARY, "design_forced": "0.4"}, "design_forced", "needs one share per option (2), got 1"),
    ({**FORCED_BINARY, "design_forced": ""}, "design_forced", "enter the forced shares"),
    ({**FORCED_BINARY, "design_p": "", "design_forced": "0.5\n0.5"}, "design_p", "enter a probability"),
    ({**WARNER, "design_p": "0.5"}, "design_p", "must not be 1/2"),  # a singular design
    ({**WARNER, "design_p": "-0.2"}, "design_p", "must be a probability in [0, 1]"),
    ({**WARNER, "options": "a\nb\nc"}, "randomization", "the warner design is for a question with two options"),
    ({**UNRELATED, "design_prevalence": "1.2"}, "design_prevalence", "must be a probability in [0, 1]"),
    ({**UNRELATED, "design_p": "0"}, "design_p", "must be a probability in (0, 1]"),
    ({**KUK, "design_theta_2": "0.7"}, "design_theta_2", "must differ from theta_1"),
    ({**KUK, "design_theta_1": ""}, "design_theta_1", "enter a probability"),
    ({**CROSSWISE, "design_prevalence": "0,5"}, "design_prevalence", "must not be 1/2"),
    ({**CUSTOM, "design_matrix": ""}, "design_matrix", "enter the matrix: one line per report"),
    ({**CUSTOM, "design_matrix": "0.7 0.2\n0.3 lots"}, "design_matrix",
     "row 2 (report 2), number 2 (option 2): enter a number such as 0.7, not 'lots'"),
    ({**CUSTOM, "design_matrix": "0.7 0.2\n0.3 0.9"}, "design_matrix", "column 2 (option 2) must add up to 1, got 1.1"),
    ({**CUSTOM, "design_matrix": "0.7 0.2\n0.2 0.8\n0.1 0"}, "design_matrix", "needs one row per report"),
    ({**CUSTOM, "design_matrix": "0.7 0.2 0\n0.3 0.8 1"}, "design_matrix", "every row needs one probability per option (2)"),
    ({**CUSTOM, "design_matrix": "0.5 0.5\n0.5 0.5"}, "design_matrix", ""),  # singular: whatever the parser says
    ({**CUSTOM, "design_matrix": "1.2 0.2\n-0.2 0.8"}, "design_matrix", "row 1 (report 1), number 1 (option 1): must be"),
])
def test_a_bad_design_parameter_is_a_field_error_and_nothing_is_stored(auth_client, db_path, question, field, words):
    token = csrf_token(auth_client, "/dashboard/new")
    response = auth_client.post("/dashboard/new", data=builder_data(token, [question]))
    page = html.unescape(response.get_data(as_text=True))
    assert response.status_code == 422
    errors = re.search(rf'<ul class="errors" id="questions-0-{field}-errors">(.*?)</ul>', page, re.S)
    assert errors and words in errors.group(1), page[page.find("error-summary"):][:1500]
    assert f'href="#questions-0-{field}' in page  # in the summary, linked to the field
    db = connect(db_path)
    try:
        assert db.execute("SELECT count(*) FROM surveys WHERE slug = 'designs'").fetchone()[0] == 0
    finally:
        db.close()


MATRIX_DEFINITION = {**DEFINITION, "questions": [
    {"id": "matrix", "text": "Red or black?", "options": ["Yes", "No"],
     "design": {"name": "custom", "matrix": [[0.7, 0.2], [0.3, 0.8]]}},
    {"id": "colour", "text": "Which colour?", "options": ["Red", "Green", "Blue"],
     "design": {"name": "custom", "matrix": [[0.7, 0.15, 0], [0.2, 0.7, 0.2], [0.1, 0.15, 0.8]]}},
    DEFINITION["questions"][2]]}


def test_a_custom_matrix_is_edited_in_place_and_saved_as_deniable_import_stores_it(auth_client, db_path, tmp_path):
    """Issue 39: the builder shows a custom matrix as rows of numbers (no "cannot edit"), and saving the page
    as shown stores exactly what the import stored; the same matrix typed in the builder stores the same."""
    path = tmp_path / "matrix.json"
    path.write_text(json.dumps(MATRIX_DEFINITION))
    result = CliRunner().invoke(cli, ["import", str(path), "--db", db_path, "--owner", "ada@example.org"])
    assert result.exit_code == 0, result.output
    before = stored(db_path)
    page = html.unescape(auth_client.get("/dashboard/designs/edit").get_data(as_text=True))
    assert "cannot edit" not in page and "was not saved" not in page
    assert re.search(r'id="questions-0-design_matrix"[^>]*>\s*0\.7 0\.2\n0\.3 0\.8</textarea>', page), page
    assert re.search(r'id="questions-1-design_matrix"[^>]*>\s*0\.7 0\.15 0\n0\.2 0\.7 0\.2\n0\.1 0\.15 0\.8</textarea>',
                     page)
    token = csrf_token(auth_client, "/dashboard/designs/edit")
    colour = {"qid": "colour", "text": "Which colour?", "options": "Red\nGreen\nBlue", "protection": "protected",
              "randomization": "custom", "design_matrix": "0.7, 0.15, 0\n0,2 0,7 0,2\n0.1;0.15;0.8"}
    response = auth_client.post("/dashboard/designs/edit", data=builder_data(token, [CUSTOM, colour, WARNER]))
    assert response.status_code == 302, html.unescape(response.get_data(as_text=True))[:3000]
    assert stored(db_path) == before


def test_the_import_of_a_custom_matrix_survey_reads_as_a_success(auth_client, db_path):
    """The dashboard's import of a custom-matrix survey lands on its builder with no error summary."""
    token = csrf_token(auth_client, "/dashboard/")
    response = auth_client.post("/dashboard/import", data={
        "csrf_token": token, "target_n": "1000",
        "definition": (io.BytesIO(json.dumps(MATRIX_DEFINITION).encode()), "matrix.json")},
        content_type="multipart/form-data", follow_redirects=True)
    page = html.unescape(response.get_data(as_text=True))
    assert response.status_code == 200 and "Imported 'designs' as a draft." in page
    assert "was not saved" not in page and "cannot edit" not in page and 'id="error-summary"' not in page


def cli_plan(design: dict, margin: float) -> dict:
    result = CliRunner().invoke(cli, ["plan", "--design", json.dumps(design), "--margin", str(margin),
                                      "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)["plans"][0]


@pytest.mark.parametrize("design", [{"name": "forced", "p": 0.6, "forced": [0.25, 0.15]},
                                    {"name": "forced", "p": 0.7, "forced": [0.1, 0.125, 0.075]},
                                    {"name": "warner", "p": 0.75},
                                    {"name": "unrelated", "p": 0.7, "prevalence": 0.5},
                                    {"name": "kuk", "theta_1": 0.7, "theta_2": 0.3},
                                    {"name": "crosswise", "prevalence": 0.25},
                                    {"name": "forced", "p": 0.75, "forced": [0.25, 0]}])
def test_plan_json_gives_the_numbers_of_deniable_plan_design(auth_client, design):
    k = len(design.get("forced", [0, 0]))
    response = auth_client.get("/dashboard/plan.json", query_string={
        "k": k, "design": json.dumps(design), "target": 1000, "margin": 0.05})
    assert response.status_code == 200, response.get_json()
    plan = response.get_json()
    expected = cli_plan(design, 0.05)
    assert (plan["epsilon"], plan["protected"], plan["needed"], plan["needed_exact"], plan["baseline_needed"]) == (
        expected["epsilon"], expected["ldp"], expected["n"], expected["exact"], expected["n_without_privacy"])
    assert plan["design"] == design["name"] and plan["k"] == k
    # the margin at the target: the exhaustive plan at the target's margin needs no more than the target,
    # and deniable plan (the decided search, issue 40) at most 1 % more than that plan
    at_target = round(plan["moe"] + 5e-4, 4)
    labels = [f"answer {t + 1}" for t in range(k)]
    exhaustive = plan_design(from_definition(design, labels), at_target).n
    assert exhaustive <= 1000 and exhaustive <= cli_plan(design, at_target)["n"] <= math.floor(exhaustive * 1.01)
    if plan["protected"]:
        assert f"ε = {plan['epsilon']:.4f}" in plan["html"]
    else:
        assert "Not ε-LDP" in plan["html"]


@pytest.mark.parametrize("query, field, words", [
    ({"k": 2, "design": '{"name": "forced", "p": 1.5, "forced": [0.25, 0.15]}'}, "design.p", "must be a probability"),
    ({"k": 2, "design": '{"name": "forced", "p": 0.6, "forced": [0.25, 0.25]}'}, "design.forced", "must add up to 1"),
    ({"k": 2, "design": '{"name": "forced", "p": 0.6, "forced": [0.25, "x"]}'}, "design.forced[1]", "must be a probability"),
    ({"k": 2, "design": '{"name": "warner", "p": 0.5}'}, "design.p", "must not be 1/2"),
    ({"k": 3, "design": '{"name": "warner", "p": 0.7}'}, "design.name", "two options"),
    ({"k": 2, "design": "{nope"}, "design", "must be a JSON object"),
    ({"k": 2, "design": '{"name": "warner", "p": 0.7}', "epsilon": "1"}, "epsilon", "leave epsilon out"),
])
def test_plan_json_names_the_design_parameter_in_error(auth_client, query, field, words):
    response = auth_client.get("/dashboard/plan.json", query_string=query)
    assert response.status_code == 400
    body = response.get_json()
    assert body["field"] == field and words in body["error"], body


@pytest.mark.parametrize("design", ['{"name": ["forced"]}', "[" * 4000, '{"name": "forced", "p": 0.6, "forced": {"a": 1}}',
                                    '"warner"', '{"name": "warner", "p": [0.75]}'])
def test_plan_json_refuses_a_malformed_design_with_a_400(auth_client, design):
    response = auth_client.get("/dashboard/plan.json", query_string={"k": 2, "design": design})
    assert response.status_code == 400 and response.get_json()["field"].startswith("design"), response.get_json()
