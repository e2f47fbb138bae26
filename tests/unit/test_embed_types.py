"""Numeric questions and list experiments in ``deniable embed`` (recipes, codebook), the SurveyJS and oTree
recipes, the design document's one source, and ``deniable audit --embed``'s refusals (docs/embedding.md).

The chromium side is tests/e2e/test_embed_types.py, test_embed_surveyjs_recipe.py and test_embed_audit.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from deniable.client.embed import build
from deniable.server.cli import cli
from deniable.server.survey.definition import load_definition
from deniable.server.survey.platform_exports import PlatformExportError
from deniable.server.survey.recipes import design_document, embeddable, recipe

ROOT = Path(__file__).resolve().parents[2]
HABITS = ROOT / "examples" / "habits.json"


def printed(*args):
    return CliRunner().invoke(cli, ["embed", "recipe", *args, str(HABITS), "--src", "https://s.example.org"])


def test_numeric_and_list_questions_are_embeddable_and_their_reports_are_in_the_codebook():
    design = design_document(load_definition(HABITS))
    assert [q["id"] for q in embeddable(design)] == ["drinks", "hours", "used", "shoplifting"]
    out = printed("redcap")
    assert out.exit_code == 0, out.output
    # drinks: 0..40 on a grid of G = 1 (points 0 and 40); hours: 0..20 in steps of 0.5, Laplace (tail 555)
    assert "deniable_drinks: question drinks (ε = 1); report j, a grid point from 0 to 1: 0 + j × 40\n" in out.output
    assert ("deniable_hours: question hours (ε = 2); report r, from -555 to 595 (discrete Laplace noise added): "
            "0 + r × 0.5\n") in out.output
    assert ('deniable_shoplifting: question shoplifting (ε = 1); report {"arm": 0|1, "count": c}: arm 1 was shown '
            "the sensitive item as well as the 3 others") in out.output
    assert "not here (asked directly: use the platform's own question; or not embeddable yet): year\n" in out.output
    assert out.output.count("==== question ") == 4


def test_the_grid_spacing_is_exact_for_decimal_steps(tmp_path):
    definition = tmp_path / "s.json"
    definition.write_text(json.dumps({"slug": "s", "title": "S", "questions": [
        {"id": "w", "type": "numeric", "text": "Weight?", "min": 0.5, "max": 2.9, "step": 0.1, "epsilon": 1.0,
         "grid": 4}]}))
    out = CliRunner().invoke(cli, ["embed", "recipe", "qualtrics", str(definition), "--src", "https://s.example.org"])
    assert out.exit_code == 0, out.output
    # 24 steps of 0.1 on a grid of 4: a point every 6 steps, 0.6 (not 0.6000000000000001)
    assert "report j, a grid point from 0 to 4: 0.5 + j × 0.6\n" in out.output


def test_the_surveyjs_recipe_registers_once_and_lists_one_element_per_question():
    out = printed("surveyjs")
    assert out.exit_code == 0, out.output
    assert out.output.count("DeniableEmbed.registerSurveyJS(Survey, { design: design });") == 1
    assert out.output.count('crossorigin="anonymous"></script>') == 1
    elements = re.findall(r'^\{ "type": "deniable".*\}$', out.output, re.MULTILINE)
    assert [json.loads(e)["name"] for e in elements] == ["drinks", "hours", "used", "shoplifting"]
    assert "drinks: question drinks (ε = 1)" in out.output
    assert out.output.endswith("estimate: deniable estimate SURVEY.json RESULTS.json --from surveyjs\n")


def test_the_otree_recipe_has_a_field_and_a_hidden_input_per_question():
    out = printed("otree")
    assert out.exit_code == 0, out.output
    for qid in ("drinks", "hours", "used", "shoplifting"):
        assert f"    {qid} = models.StringField(blank=False)\n" in out.output
        assert f'<input type="hidden" name="{qid}" id="id_{qid}">\n' in out.output
    design = json.loads(re.search(r"^  const design = (.*);$", out.output, re.MULTILINE).group(1))
    assert design == design_document(load_definition(HABITS))
    assert "{{" not in design and "{{" not in re.search(r"<script>.*</script>", out.output, re.DOTALL).group(0)
    assert out.output.endswith("estimate: deniable estimate SURVEY.json all_apps_wide.csv --from otree\n")


def test_an_unknown_platform_names_the_field():
    survey = load_definition(HABITS)
    with pytest.raises(PlatformExportError, match="unknown platform 'typeform'") as caught:
        recipe("typeform", survey, design_document(survey), src="https://s/e.js", integrity="sha384-x", version="v")
    assert caught.value.field == "platform"


def test_the_design_document_is_the_one_the_api_publishes(app, client):
    from support.dashboard import make_survey

    definition = json.loads(HABITS.read_text())
    make_survey(app, definition, status="open")
    published = client.get("/api/v1/surveys/habits").get_json()
    assert published.pop("status") == "open"
    assert published == design_document(load_definition(HABITS))


def test_audit_embed_needs_one_built_module(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    out = CliRunner().invoke(cli, ["audit", "--embed", str(empty)])
    assert out.exit_code == 2 and "--embed" in out.output and "deniable embed build -o" in out.output
    two = tmp_path / "two"
    two.mkdir()
    (two / "deniable-embed-aaaa.mjs").write_bytes(build().module)
    (two / "deniable-embed-bbbb.mjs").write_bytes(build().module)
    out = CliRunner().invoke(cli, ["audit", "--embed", str(two)])
    assert out.exit_code == 2 and "2 (deniable-embed-aaaa.mjs, deniable-embed-bbbb.mjs)" in out.output
    script = tmp_path / "deniable-embed-aaaa.js"
    script.write_bytes(build().script)
    out = CliRunner().invoke(cli, ["audit", "--embed", str(script)])
    assert out.exit_code == 2 and "not the embed's ES module" in out.output
    out = CliRunner().invoke(cli, ["audit", "--embed", str(two / "deniable-embed-aaaa.mjs"), "--script", str(script)])
    assert out.exit_code == 2 and "give --script or --embed, not both" in out.output
