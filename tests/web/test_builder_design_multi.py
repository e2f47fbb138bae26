"""The builder offers a check-all question the same "Randomization" as a single choice: randomized response
at ε/K on each tick, or a binary design on each tick with its parameters; a save stores exactly what
``deniable import`` stores, a bad parameter is a 422 on its field with nothing stored, and
``/dashboard/plan.json?type=multi&design=…`` gives the binary design's numbers (issue 24)."""

from __future__ import annotations

import html
import json
import math
import re

import pytest
from click.testing import CliRunner

from deniable.client.designs import tick_design
from deniable.estimators.designs import plan_design
from deniable.server.cli import cli
from deniable.server.store.db import connect
from deniable.server.store.surveys import get_survey
from support.dashboard import builder_form, csrf_token, open_db
from support.plan_cache import assert_decided_design

USED = {"qid": "used", "text": "Which of these have you used?", "kind": "multi", "options": "Cannabis\nCocaine\nEcstasy",
        "protection": "protected", "randomization": "forced", "design_p": "0.6", "design_forced": "0.25\n0.15",
        "epsilon": ""}
OWNED = {"qid": "owned", "text": "Which of these do you own?", "kind": "multi", "options": "Car\nBike",
         "protection": "protected", "randomization": "kuk", "design_theta_1": "0,7", "design_theta_2": "0.3"}
PLAIN = {"qid": "seen", "text": "Which have you seen?", "kind": "multi", "options": "A\nB", "protection": "protected",
         "randomization": "rr", "epsilon": "2", "design_p": "0.9"}  # a leftover p is ignored
DEFINITION = {"slug": "ticks", "title": "Ticks", "questions": [
    {"id": "used", "text": "Which of these have you used?", "type": "multi", "options": ["Cannabis", "Cocaine", "Ecstasy"],
     "design": {"name": "forced", "p": 0.6, "forced": [0.25, 0.15]}},
    {"id": "owned", "text": "Which of these do you own?", "type": "multi", "options": ["Car", "Bike"],
     "design": {"name": "kuk", "theta_1": 0.7, "theta_2": 0.3}},
    {"id": "seen", "text": "Which have you seen?", "type": "multi", "options": ["A", "B"], "epsilon": 2}]}
COLUMNS = "position, qid, text, options, required, epsilon, k, threshold, type, spec"


def builder_data(token, questions, slug="ticks"):
    return builder_form(token, {"slug": slug, "title": "Ticks", "description": "", "target_n": "1000",
                                "save": "Save draft"}, questions)


def stored(db_path, slug="ticks"):
    db = connect(db_path)
    try:
        survey_id = db.execute("SELECT id FROM surveys WHERE slug = ?", [slug]).fetchone()[0]
        return db.execute(f"SELECT {COLUMNS} FROM questions WHERE survey_id = ? ORDER BY id", [survey_id]).fetchall()
    finally:
        db.close()


def test_the_builder_saves_designs_on_the_ticks_as_deniable_import_does(app, auth_client, db_path, tmp_path):
    token = csrf_token(auth_client, "/dashboard/new")
    response = auth_client.post("/dashboard/new", data=builder_data(token, [USED, OWNED, PLAIN]))
    assert response.status_code == 302, html.unescape(response.get_data(as_text=True))[:3000]
    path = tmp_path / "ticks.json"
    path.write_text(json.dumps({**DEFINITION, "slug": "imported"}))
    result = CliRunner().invoke(cli, ["import", str(path), "--db", db_path])
    assert result.exit_code == 0, result.output
    assert stored(db_path) == stored(db_path, "imported")
    used, owned, seen = get_survey(open_db(app), "ticks").survey.questions
    assert json.loads(used.design) == {"name": "forced", "p": 0.6, "forced": [0.25, 0.15]}
    assert used.epsilon == pytest.approx(3 * math.log(5)) and owned.epsilon == pytest.approx(2 * math.log(0.7 / 0.3))
    assert (seen.design, seen.epsilon) == (None, 2.0)
    # shown again in its fields, the panel with the whole answer's ε; saved as shown, nothing changes
    before = stored(db_path)
    page = html.unescape(auth_client.get("/dashboard/ticks/edit").get_data(as_text=True))
    checked = re.findall(r'<input checked class="q-randomization" id="questions-\d+-randomization-\d" [^>]*value="(\w+)"',
                         page)
    assert checked == ["forced", "kuk", "rr"] and "cannot edit" not in page
    panel = page.split('id="plan-0"')[1].split("</aside>")[0]
    assert "on each of the 3 ticks" in panel and f"ε = {3 * math.log(5):.4f}" in panel
    fields = dict(re.findall(r'<input [^>]*name="(questions-\d+-(?:qid|epsilon|design_\w+))"[^>]*value="([^"]*)"', page))
    fields.update(re.findall(r'name="(questions-\d+-(?:text|options|design_forced))"[^>]*>\n?([^<]*)</textarea>', page))
    fields.update(re.findall(r'<input checked class="q-\w+" id="[^"]+" name="(questions-\d+-\w+)" type="radio" value="(\w+)"',
                             page))
    token = csrf_token(auth_client, "/dashboard/ticks/edit")
    response = auth_client.post("/dashboard/ticks/edit", data={
        "csrf_token": token, "title": "Ticks", "target_n": "1000", "save": "Save draft", **fields,
        **{f"questions-{i}-required": "y" for i in range(3)}})
    assert response.status_code == 302, html.unescape(response.get_data(as_text=True))[:3000]
    assert stored(db_path) == before, fields


@pytest.mark.parametrize("question, field, words", [
    ({**USED, "design_forced": "0.25\n0.25"}, "design_forced", "must add up to 1, got 1.1"),
    ({**USED, "design_forced": "0.2\n0.1\n0.1"}, "design_forced", "needs one share per answer of a tick (2: ticked, not ticked)"),
    ({**USED, "design_p": ""}, "design_p", "enter a probability"),
    ({**OWNED, "design_theta_2": "0.7"}, "design_theta_2", "must differ from theta_1"),
])
def test_a_bad_parameter_of_a_design_on_the_ticks_is_a_field_error(auth_client, db_path, question, field, words):
    token = csrf_token(auth_client, "/dashboard/new")
    response = auth_client.post("/dashboard/new", data=builder_data(token, [question]))
    page = html.unescape(response.get_data(as_text=True))
    assert response.status_code == 422
    errors = re.search(rf'<ul class="errors" id="questions-0-{field}-errors">(.*?)</ul>', page, re.S)
    assert errors and words in errors.group(1), page[page.find("error-summary"):][:1500]
    db = connect(db_path)
    try:
        assert db.execute("SELECT count(*) FROM surveys WHERE slug = 'ticks'").fetchone()[0] == 0
    finally:
        db.close()


@pytest.mark.parametrize("design", [{"name": "forced", "p": 0.6, "forced": [0.25, 0.15]}, {"name": "warner", "p": 0.3},
                                    {"name": "forced", "p": 0.75, "forced": [0.25, 0]}])
def test_plan_json_plans_each_tick_by_its_binary_design(auth_client, design):
    response = auth_client.get("/dashboard/plan.json", query_string={
        "type": "multi", "k": 4, "design": json.dumps(design), "target": 1000, "margin": 0.05})
    assert response.status_code == 200, response.get_json()
    plan = response.get_json()
    d = tick_design(design)
    assert plan["design"] == design["name"] and plan["k"] == 4 and plan["protected"] == d.ldp
    # the decided search (issue 40): the margin met exactly, within 1 % above the exhaustive n
    assert plan["needed"] == plan_design(d, 0.05, decided=True).n
    assert_decided_design(plan["needed"], d, 0.05)
    if d.ldp:
        assert plan["epsilon"] == pytest.approx(4 * d.epsilon) and f"ε = {4 * d.epsilon:.4f}" in plan["html"]
    else:
        assert plan["epsilon"] is None and "Not ε-LDP" in plan["html"]
    bad = auth_client.get("/dashboard/plan.json", query_string={
        "type": "multi", "k": 4, "design": json.dumps({"name": "warner", "p": 0.5})})
    assert bad.status_code == 400 and bad.get_json()["field"] == "design.p"


def test_the_respondent_side_crosswise_design_is_not_offered_on_the_ticks_and_refused_if_posted(auth_client, db_path):
    """The builder offers a check-all question only the designs a tick can use: the respondent-side crosswise
    model's choice is marked for single choice only (types.css hides it), and posted anyway it is a 422 on
    the Randomization field, nothing stored."""
    page = html.unescape(auth_client.get("/dashboard/new").get_data(as_text=True))
    classes = dict((value, cls) for cls, value in re.findall(
        r'<label class="([^"]*)"[^>]*><input (?:checked )?class="q-randomization" id="questions-0-randomization-\d" '
        r'name="questions-0-randomization" type="radio" value="(\w+)"', page))
    assert set(classes) == {"rr", "forced", "warner", "unrelated", "kuk", "crosswise", "respondent_crosswise",
                            "custom"}, page
    assert "only-choice" in classes["respondent_crosswise"] and "only-multi" not in classes["respondent_crosswise"]
    assert all("only-choice" in cls and "only-multi" in cls for value, cls in classes.items()
               if value != "respondent_crosswise")
    css = auth_client.get("/dashboard/types.css").get_data(as_text=True)
    assert '.q-kind[value="multi"]:checked) .only:not(.only-multi)' in css
    posted = {**USED, "randomization": "respondent_crosswise", "design_prevalence": "0.25",
              "design_fact": "Is your mother's birthday in January, February or March?", "design_range": "0.23\n0.27"}
    token = csrf_token(auth_client, "/dashboard/new")
    response = auth_client.post("/dashboard/new", data=builder_data(token, [posted]))
    page = html.unescape(response.get_data(as_text=True))
    assert response.status_code == 422
    errors = re.search(r'<ul class="errors" id="questions-0-randomization-errors">(.*?)</ul>', page, re.S)
    assert errors and "choose one of" in errors.group(1) and "crosswise model, randomized by the device" in errors.group(1)
    assert "combined by the respondent" not in errors.group(1)
    db = connect(db_path)
    try:
        assert db.execute("SELECT count(*) FROM surveys WHERE slug = 'ticks'").fetchone()[0] == 0
    finally:
        db.close()
