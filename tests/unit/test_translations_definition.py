"""A definition's ``translations`` (server/survey/translations.py): checked field by field, kept by every
round trip (definition file, codebook), and words only: the design fingerprint, the mechanisms and the
estimates are the original's whatever the language."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from deniable.server.survey.analysis import marginal_estimates
from deniable.server.survey.codebook import codebook_dict, dumps_codebook
from deniable.server.survey.estimates import question_json
from deniable.server.survey.definition import (DefinitionError, design_fingerprint, dumps_definition,
                                               loads_definition, parse_definition)
from deniable.server.survey.translations import carry_over, languages, translated

DEFINITION = {
    "slug": "habits", "title": "Habits", "description": "A test survey.",
    "information": "We study habits.",
    "questions": [
        {"id": "drugs", "text": "Used drugs this year?", "options": ["Yes", "No"], "epsilon": 1.0},
        {"id": "cheat", "text": "Cheated on an exam?", "options": ["Never", "Once", "Often"], "epsilon": 2.0},
        {"id": "drinks", "text": "Drinks last week?", "type": "numeric", "min": 0, "max": 30, "epsilon": 1.0},
        {"id": "shop", "text": "How many apply?", "type": "list", "items": ["I cycle", "I cook"],
         "sensitive": "I shoplifted", "epsilon": 1.0},
        {"id": "used", "text": "Which have you used?", "type": "multi", "options": ["Cannabis", "Cocaine"],
         "epsilon": 2.0},
    ],
    "translations": {
        "es": {"title": "Hábitos", "description": "Una encuesta de prueba.", "information": "Estudiamos hábitos.",
               "questions": {
                   "drugs": {"text": "¿Consumió drogas este año?", "options": ["Sí", "No"]},
                   "cheat": {"text": "¿Copió en un examen?", "options": ["Nunca", "Una vez", "A menudo"]},
                   "drinks": {"text": "¿Bebidas la semana pasada?"},
                   "shop": {"text": "¿Cuántas se aplican?", "items": ["Voy en bici", "Cocino"],
                            "sensitive": "Robé en una tienda"},
                   "used": {"options": ["Cannabis", "Cocaína"]}}},
        "fr": {"title": "Habitudes", "questions": {"drugs": {"options": ["Oui", "Non"]}}},
    },
}


def definition(**translations):
    data = copy.deepcopy(DEFINITION)
    data["translations"] = translations
    return data


def test_a_translated_view_replaces_the_words_and_nothing_else():
    survey = parse_definition(DEFINITION)
    assert languages(survey) == ("en", "es", "fr")
    es = translated(survey, "es")
    assert (es.title, es.description, es.information, es.language) == (
        "Hábitos", "Una encuesta de prueba.", "Estudiamos hábitos.", "es")
    drugs, cheat, drinks, shop, used = es.questions
    assert (drugs.text, drugs.options) == ("¿Consumió drogas este año?", ("Sí", "No"))
    assert cheat.options == ("Nunca", "Una vez", "A menudo")
    assert drinks.text == "¿Bebidas la semana pasada?"
    assert (shop.options, shop.sensitive) == (("Voy en bici", "Cocino"), "Robé en una tienda")
    assert (used.text, used.options) == ("Which have you used?", ("Cannabis", "Cocaína"))  # text left out: original
    fr = translated(survey, "fr")
    assert fr.title == "Habitudes" and fr.description == "A test survey." and fr.questions[0].options == ("Oui", "Non")
    assert translated(survey, "en") is survey and translated(survey, None) is survey
    # the design is the original's: every mechanism, k, threshold and the fingerprint
    without = parse_definition({key: value for key, value in DEFINITION.items() if key != "translations"})
    for view in (es, fr):
        assert design_fingerprint(view) == design_fingerprint(survey) == design_fingerprint(without)
        for q, original in zip(view.questions, survey.questions):
            assert (q.id, q.k, q.epsilon, q.mechanism.threshold, q.qtype.stored_design(q)) == (
                original.id, original.k, original.epsilon, original.mechanism.threshold,
                original.qtype.stored_design(original))


def test_estimates_are_the_same_in_every_language():
    """Option i is option i in every language: the same counts give the same numbers, only the labels differ."""
    survey = parse_definition(DEFINITION).only(["drugs", "cheat"])
    stats = {"drugs": np.array([40, 60]), "cheat": np.array([30, 50, 20])}
    records = {language: [question_json(q, r) for q, r in marginal_estimates(translated(survey, language), stats)]
               for language in ("en", "es", "fr")}
    numbers = {language: [[{key: value for key, value in option.items() if key != "label"}
                           for option in record["options"]] for record in found]
               for language, found in records.items()}
    assert numbers["en"] == numbers["es"] == numbers["fr"]
    assert [o["label"] for o in records["es"][1]["options"]] == ["Nunca", "Una vez", "A menudo"]
    assert records["en"][0]["options"][0]["estimate"] == pytest.approx((0.40 - 0.2689414215274155) /
                                                                       (0.7310585784725845 - 0.2689414215274155))


def test_the_definition_file_and_the_codebook_keep_the_translations():
    survey = parse_definition(DEFINITION)
    again = loads_definition(dumps_definition(survey))
    assert again.translations == survey.translations and again == survey
    codebook = codebook_dict(survey)
    assert codebook["translations"]["es"]["questions"]["shop"]["items"] == ["Voy en bici", "Cocino"]
    assert codebook["design_fingerprint"] == design_fingerprint(survey)
    back = loads_definition(dumps_codebook(survey), "habits-codebook.json")  # checked on the way back in
    assert back.translations == survey.translations
    assert translated(back, "es").questions[1].options == ("Nunca", "Una vez", "A menudo")


def test_texts_are_stripped_and_languages_kept_in_one_order():
    survey = parse_definition(definition(fr={"title": "  Habitudes "}, es={"questions": {"drugs": {"text": " ¿Sí? "}}}))
    assert list(survey.translations) == ["es", "fr"]
    assert survey.translations["fr"]["title"] == "Habitudes"
    assert survey.translations["es"]["questions"]["drugs"]["text"] == "¿Sí?"


def test_a_survey_in_spanish_may_be_translated_into_english():
    data = definition(en={"title": "Habits (English)"})
    data["language"] = "es"
    survey = parse_definition(data)
    assert languages(survey) == ("es", "en")
    assert languages(parse_definition({**data, "translations": None})) == ("es",)
    assert languages(parse_definition({key: v for key, v in data.items() if key not in ("translations", "language")})) == ()


BAD = [
    ([], "translations", "must be an object"),
    ({"de": {"title": "Gewohnheiten"}}, "translations.de", "is not a language of the respondents' pages"),
    ({"en": {"title": "Habits"}}, "translations.en", "written in 'en' already"),
    ({"es": "Hábitos"}, "translations.es", "must be an object"),
    ({"es": {"slug": "habitos"}}, "translations.es.slug", "cannot be translated"),
    ({"es": {"consent": True}}, "translations.es.consent", "cannot be translated"),
    ({"es": {"contact": "x"}}, "translations.es.contact", "the survey has no contact to translate"),
    ({"es": {"titel": "x"}}, "translations.es.titel", "unknown key"),
    ({"es": {"title": ""}}, "translations.es.title", "must not be empty"),
    ({"es": {"title": "x" * 201}}, "translations.es.title", "at most 200 characters"),
    ({"es": {"questions": []}}, "translations.es.questions", "must be an object"),
    ({"es": {"questions": {"nope": {"text": "x"}}}}, "translations.es.questions.nope", "no question with this id"),
    ({"es": {"questions": {"drugs": "x"}}}, "translations.es.questions.drugs", "must be an object"),
    ({"es": {"questions": {"drugs": {"options": ["Sí"]}}}}, "translations.es.questions.drugs.options",
     "has 2 options in the original"),
    ({"es": {"questions": {"drugs": {"options": ["Sí", "No", "Quizás"]}}}}, "translations.es.questions.drugs.options",
     "same number, in the same order (got 3)"),
    ({"es": {"questions": {"drugs": {"options": "Sí"}}}}, "translations.es.questions.drugs.options",
     "must be a list of 2 options"),
    ({"es": {"questions": {"drugs": {"options": ["Sí", "Sí"]}}}}, "translations.es.questions.drugs.options[1]",
     "duplicate label"),
    ({"es": {"questions": {"drugs": {"options": ["Sí", ""]}}}}, "translations.es.questions.drugs.options[1]",
     "must not be empty"),
    ({"es": {"questions": {"drugs": {"text": 3}}}}, "translations.es.questions.drugs.text", "must be a string"),
    ({"es": {"questions": {"drugs": {"epsilon": 5}}}}, "translations.es.questions.drugs.epsilon",
     "part of the question's design"),
    ({"es": {"questions": {"drugs": {"type": "multi"}}}}, "translations.es.questions.drugs.type",
     "part of the question's design"),
    ({"es": {"questions": {"drinks": {"max": 100}}}}, "translations.es.questions.drinks.max",
     "part of the question's design"),
    ({"es": {"questions": {"drinks": {"options": ["a"]}}}}, "translations.es.questions.drinks.options",
     "unknown key"),
    ({"es": {"questions": {"shop": {"items": ["Cocino"]}}}}, "translations.es.questions.shop.items",
     "has 2 items in the original"),
    ({"es": {"questions": {"shop": {"sensitive": "Cocino", "items": ["Bici", "Cocino"]}}}},
     "translations.es.questions.shop.sensitive", "must differ from every control item"),
]


@pytest.mark.parametrize("translations, field, problem", BAD, ids=[b[1] + ":" + b[2][:20] for b in BAD])
def test_a_bad_translation_names_its_field(translations, field, problem):
    data = copy.deepcopy(DEFINITION)
    data["translations"] = translations
    with pytest.raises(DefinitionError) as caught:
        loads_definition(json.dumps(data), "habits.json")
    assert caught.value.field == field and problem in str(caught.value), str(caught.value)
    assert str(caught.value).startswith(f"habits.json: {field}: ")


def test_a_translation_of_a_text_the_survey_lacks_is_refused():
    data = definition(es={"information": "Estudiamos hábitos."})
    del data["information"]
    with pytest.raises(DefinitionError, match=r"translations\.es\.information: the survey has no information"):
        parse_definition(data)


def test_the_builder_keeps_what_still_fits():
    survey = parse_definition(DEFINITION)
    edited = copy.deepcopy(DEFINITION)
    del edited["translations"]
    edited["questions"] = [q for q in edited["questions"] if q["id"] != "shop"]  # a question removed
    edited["questions"][1]["options"] = ["Never", "Once"]  # another number of options
    kept, dropped = carry_over(parse_definition(edited), survey.translations)
    assert dropped == ["translations.es.questions.cheat", "translations.es.questions.shop"]
    assert set(kept.translations["es"]["questions"]) == {"drugs", "drinks", "used"}
    assert kept.translations["fr"] == survey.translations["fr"]
    edited["language"] = "fr"  # the survey is now written in French: the French translation goes
    kept, dropped = carry_over(parse_definition(edited), survey.translations)
    assert "translations.fr" in dropped and list(kept.translations) == ["es"]
    same, none = carry_over(survey, survey.translations)
    assert same.translations == survey.translations and none == []


def test_a_display_condition_names_the_translated_options():
    """``show_if`` names its source's options by label: in a translated view, by the translated labels."""
    data = copy.deepcopy(DEFINITION)
    data["questions"].insert(0, {"id": "smoke", "text": "Do you smoke?", "options": ["Yes", "No", "Sometimes"]})
    data["questions"][1]["show_if"] = {"question": "smoke", "in": ["Yes", "Sometimes"]}
    data["translations"]["es"]["questions"]["smoke"] = {"options": ["Sí", "No", "A veces"]}
    survey = parse_definition(data)
    es = translated(survey, "es")
    assert es.question("drugs").show_if.options == ("Sí", "A veces")
    assert translated(survey, "fr").question("drugs").show_if.options == ("Yes", "Sometimes")  # not translated
    assert survey.question("drugs").show_if.options == ("Yes", "Sometimes")
