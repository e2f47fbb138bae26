"""The design document (``GET /api/v1/surveys/SLUG``, what the embed mounts from) carries what the embed
needs to mount a respondent-side crosswise question as the survey page shows it: the private fact, the
instruction and the two choices, "same" and "different", in the words of the survey page's own card
(templates/cards/crosswise.html) and its short privacy sentence, in the survey's language and in each of its
translations; and the ε the embed reports (the document's ``realized_epsilon``) is the codebook's.  Real
app, real SQLite file; the page's words are read from the page the app serves (docs/embedding.md)."""

from __future__ import annotations

import html
import json
import re

from click.testing import CliRunner

from deniable.server.cli import cli
from deniable.server.survey.codebook import codebook_dict
from deniable.server.survey.definition import parse_definition
from support.dashboard import make_survey

FACT = "Is your mother's birthday in January, February or March?"
FACT_FR = "Votre mère est-elle née en janvier, février ou mars ?"
DESIGN = {"name": "crosswise", "side": "respondent", "prevalence": 0.25, "fact": FACT, "prevalence_range": [0.23, 0.27]}
DEFINITION = {
    "slug": "taxes", "title": "Taxes", "language": "en",
    "questions": [{"id": "tax", "text": "Have you ever evaded a tax?", "options": ["Yes", "No"], "design": DESIGN},
                  {"id": "drugs", "text": "Drugs?", "options": ["Yes", "No"], "epsilon": 1.0}],
    "translations": {"fr": {"questions": {"tax": {"text": "Avez-vous déjà fraudé le fisc ?", "options": ["Oui", "Non"],
                                                  "fact": FACT_FR}}},
                     "es": {"questions": {"tax": {"text": "¿Ha evadido alguna vez un impuesto?"}}}},
}


def card_words(page: str, qid: str) -> dict:
    """What the survey page's crosswise card shows: the fact's label and the fact, the instruction, the two
    choices' labels, and the short sentence beside the question."""
    fact = re.search(rf'id="{qid}-fact"><strong>([^<]*)</strong>\s*(.*?)</p>', page, re.S)
    instruction = re.search(rf'id="{qid}-instruction">(.*?)</p>', page, re.S)
    labels = re.findall(rf'<label for="{qid}-option-[01]">(.*?)</label>', page)
    note = re.search(rf'id="{qid}-note">\s*<img[^>]*>\s*<strong>([^<]*)</strong>([^<]*)</p>',
                     page, re.S)
    assert fact and instruction and note, "no crosswise card on the page"
    return {key: html.unescape(value.strip()) for key, value in (
        ("fact_label", fact.group(1)), ("fact", fact.group(2)), ("instruction", instruction.group(1)),
        ("note", f"{note.group(1).strip()} {note.group(2).strip()}"))} | {"choices": [html.unescape(label.strip()) for label in labels]}


def words_of(entry: dict) -> dict:
    return {key: entry[key] for key in ("fact_label", "fact", "instruction", "choices", "note")}


def test_the_document_carries_the_crosswise_card_in_the_survey_page_words_of_every_language(app, client):
    make_survey(app, DEFINITION, status="open")
    document = client.get("/api/v1/surveys/taxes").get_json()
    tax, drugs = document["questions"]
    assert tax["design"]["side"] == "respondent" and tax["design"]["fact"] == FACT
    assert "crosswise" not in drugs  # only the respondent-side crosswise question carries these words
    words = tax["crosswise"]
    assert words_of(words) == card_words(client.get("/s/taxes?lang=en").get_data(as_text=True), "tax")
    assert words["choices"] == ["same", "different"] and words["fact"] == FACT
    assert words["instruction"] == "Are your answers to both questions the same (both yes or both no) or different?"
    assert sorted(words["translations"]) == ["es", "fr"]
    for language in ("fr", "es"):
        page = client.get(f"/s/taxes?lang={language}").get_data(as_text=True)
        assert words_of(words["translations"][language]) == card_words(page, "tax"), language
    assert words["translations"]["fr"]["fact"] == FACT_FR
    assert words["translations"]["fr"]["choices"] == ["identiques", "différentes"]
    assert words["translations"]["es"]["fact"] == FACT  # a translation without the fact shows the original's


def test_a_survey_written_in_french_gets_the_french_words_without_translations(app, client):
    definition = {**{key: value for key, value in DEFINITION.items() if key != "translations"}, "language": "fr",
                  "questions": [{**DEFINITION["questions"][0], "text": "Avez-vous déjà fraudé le fisc ?",
                                 "options": ["Oui", "Non"], "design": {**DESIGN, "fact": FACT_FR}}]}
    make_survey(app, definition, status="open")
    words = client.get("/api/v1/surveys/taxes").get_json()["questions"][0]["crosswise"]
    assert "translations" not in words
    assert words_of(words) == card_words(client.get("/s/taxes").get_data(as_text=True), "tax")
    assert words["choices"] == ["identiques", "différentes"] and words["fact"] == FACT_FR


def test_the_epsilon_the_embed_reports_is_the_codebooks_high_end_of_the_range(app, client, tmp_path):
    make_survey(app, DEFINITION, status="open")
    tax = client.get("/api/v1/surveys/taxes").get_json()["questions"][0]
    stated = codebook_dict(parse_definition(DEFINITION))["questions"][0]["randomization"]
    assert tax["realized_epsilon"] == stated["realized_epsilon"] == stated["epsilon_range"][1]
    assert tax["epsilon_range"] == stated["epsilon_range"]
    # deniable embed design prints the same document from the definition
    path = tmp_path / "survey.json"
    path.write_text(json.dumps(DEFINITION))
    printed = CliRunner().invoke(cli, ["embed", "design", str(path)])
    assert printed.exit_code == 0, printed.output
    assert json.loads(printed.output)["questions"][0]["crosswise"] == tax["crosswise"]


def test_the_recipes_codebook_says_what_a_crosswise_report_means_and_its_range(tmp_path):
    """The codebook printed with a recipe: 0 same, 1 different (not the options' Yes/No), and the range of ε
    whose high end the report's ``epsilon`` is."""
    path = tmp_path / "survey.json"
    path.write_text(json.dumps(DEFINITION))
    printed = CliRunner().invoke(cli, ["embed", "recipe", "qualtrics", str(path), "--src", "https://surveys.example.org",
                                       "--question", "tax"])
    assert printed.exit_code == 0, printed.output
    line = next(line for line in printed.output.splitlines() if line.startswith("deniable_tax: "))
    assert "report 0 = same, 1 = different" in line and "0 = Yes" not in line
    assert "ε = 1.208, the high end of ε between 0.9946 and 1.208" in line and "not ε-LDP against one who knows it" in line
