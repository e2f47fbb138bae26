"""The embed in a survey's other languages, in chromium (docs/embedding.md, "In another language").

A translated survey's questions — a single choice, a designed one, a respondent-side crosswise one and a
list experiment — mounted from the design document (``GET /api/v1/surveys/SLUG``) with ``language: "fr"``
show the translation's words, and the original's for every text the translation leaves out (a designed
question's options, a list's sensitive item), as the survey page does; a crosswise card shows its French
words and note.  The report does not depend on the language: with the browser's random numbers fed the
same sequence, the same option gives the same report in French, in English and with no language.  An
unknown language is an Error naming it and the document's languages, in ``mount`` and in
``registerSurveyJS``."""

from __future__ import annotations


import pytest
from deniable.client.embed import current
from support.browser import open_for_the_embed

pytestmark = pytest.mark.browser

FACT = "Is your mother's birthday in January, February or March?"
FAIT = "L'anniversaire de votre mère est-il en janvier, février ou mars ?"
DEFINITION = {
    "slug": "habits", "title": "Habits",
    "questions": [
        {"id": "drugs", "text": "Have you used drugs?", "options": ["Yes", "No", "Rather not say"], "epsilon": 1.0},
        {"id": "vote", "text": "Did you vote?", "options": ["Yes", "No", "Not eligible"],
         "design": {"name": "forced", "p": 0.7, "forced": [0.1, 0.05, 0.15]}},
        {"id": "tax", "text": "Have you ever evaded a tax?", "options": ["Yes", "No"],
         "design": {"name": "crosswise", "side": "respondent", "prevalence": 0.25, "fact": FACT,
                    "prevalence_range": [0.23, 0.27]}},
        {"id": "acts", "type": "list", "text": "How many of these have you done?",
         "items": ["Recycled", "Voted", "Cooked"], "sensitive": "Shoplifted", "epsilon": 2.0},
    ],
    "translations": {"fr": {"title": "Habitudes", "questions": {
        "drugs": {"text": "Avez-vous consommé des drogues ?", "options": ["Oui", "Non", "Je préfère ne pas répondre"]},
        "vote": {"text": "Avez-vous voté ?"},  # the options left out: shown in English
        "tax": {"text": "Avez-vous déjà fraudé le fisc ?", "fact": FAIT},
        "acts": {"items": ["Recyclé", "Voté", "Cuisiné"]},  # the text and the sensitive item left out
    }}},
}

# Mount question `qid` in `language` with crypto.getRandomValues fed a fixed sequence (the same for every
# language), the list's arm set to 1 beforehand; pick answer `pick` (an option, a choice or a count); commit.
MOUNT = """async ({version, design, qid, language, pick}) => {
  const m = await import(`/embed/${version}/deniable-embed.mjs`);
  let state = 123456789;
  Object.defineProperty(crypto, 'getRandomValues', {configurable: true, value: (array) => {
    for (let i = 0; i < array.length; i += 1) {
      state ^= state << 13; state >>>= 0; state ^= state >>> 17; state ^= state << 5; state >>>= 0;
      array[i] = state;
    }
    return array;
  }});
  try {
    const memory = new Map([[`deniable:arm:${design.slug}:${qid}`, '1']]);
    const storage = {getItem: (k) => (memory.has(k) ? memory.get(k) : null), setItem: (k, v) => memory.set(k, String(v))};
    const host = document.createElement('div');
    document.body.append(host);
    const options = {design, question: qid, storage};
    if (language !== null) options.language = language;
    const handle = m.mount(host, options);
    const seen = {
      legend: host.querySelector('legend').textContent,
      labels: Array.from(host.querySelectorAll('label')).map((label) => label.textContent),
      items: Array.from(host.querySelectorAll('li')).map((li) => li.textContent),
      note: host.querySelector('.deniable-note').textContent,
      fact: host.querySelector('.deniable-crosswise-fact')?.textContent ?? null,
      instruction: host.querySelector('.deniable-crosswise-instruction')?.textContent ?? null,
    };
    host.querySelectorAll('input')[pick].click();
    const result = handle.commit();
    host.remove();
    return {seen, result};
  } finally {
    delete crypto.getRandomValues;
  }
}"""


@pytest.fixture
def habits(app, live_server, page):
    return open_for_the_embed(app, live_server, page, DEFINITION)


def mounted(page, design, qid, language, pick):
    return page.evaluate(MOUNT, {"version": current().version, "design": design, "qid": qid,
                                 "language": language, "pick": pick})


def test_french_words_show_and_untranslated_texts_show_in_the_original(page, habits):
    drugs = mounted(page, habits, "drugs", "fr", 0)["seen"]
    assert drugs["legend"] == "Avez-vous consommé des drogues ?"
    assert drugs["labels"] == ["Oui", "Non", "Je préfère ne pas répondre"]

    vote = mounted(page, habits, "vote", "fr", 0)["seen"]
    assert vote["legend"] == "Avez-vous voté ?"
    assert vote["labels"] == ["Yes", "No", "Not eligible"]  # left out of the translation: the original's

    tax = mounted(page, habits, "tax", "fr", 0)["seen"]
    assert tax["legend"] == "Avez-vous déjà fraudé le fisc ?"
    assert tax["fact"] == f"Deuxième question, rien que pour vous : {FAIT}"
    assert tax["instruction"] == ("Vos réponses aux deux questions sont-elles identiques (deux oui ou deux non) "
                                  "ou différentes ?")
    assert tax["labels"] == ["identiques", "différentes"]
    assert tax["note"] == habits["questions"][2]["crosswise"]["translations"]["fr"]["note"]
    assert tax["note"].startswith("Protégée.")

    acts = mounted(page, habits, "acts", "fr", 0)["seen"]
    assert acts["legend"] == "How many of these have you done?"  # left out: the original's
    assert acts["items"] == ["Recyclé", "Voté", "Cuisiné", "Shoplifted"]  # arm 1: the sensitive item, in English

    # in English (named, or by default) the original words show
    for language in ("en", None):
        assert mounted(page, habits, "drugs", language, 0)["seen"]["labels"] == ["Yes", "No", "Rather not say"]
        english = mounted(page, habits, "tax", language, 0)["seen"]
        assert english["labels"] == ["same", "different"]
        assert english["fact"] == f"Second question, just for you: {FACT}"
        assert english["note"].startswith("Protected.")


@pytest.mark.parametrize("qid,picks", [("drugs", range(3)), ("vote", range(3)), ("tax", range(2)),
                                       ("acts", range(5))])
def test_the_report_is_the_same_whatever_the_language(page, habits, qid, picks):
    for pick in picks:
        french, english, default = (mounted(page, habits, qid, language, pick)["result"]
                                    for language in ("fr", "en", None))
        assert french == english == default
        assert french["design"] == habits["design_fingerprint"]


def test_an_unknown_language_is_an_error_naming_it_and_the_documents_languages(page, habits):
    messages = page.evaluate("""async ({version, design}) => {
      const m = await import(`/embed/${version}/deniable-embed.mjs`);
      const out = [];
      for (const language of ['de', 'es']) {
        try { m.mount(document.createElement('div'), {design, question: 'drugs', language}); out.push(null); }
        catch (error) { out.push(error.message); }
      }
      const Survey = {Serializer: {addClass: () => {}}, CustomWidgetCollection: {Instance: {add: () => {}}}};
      try { m.registerSurveyJS(Survey, {design, language: 'de'}); out.push(null); }
      catch (error) { out.push(error.message); }
      return out;
    }""", {"version": current().version, "design": habits})
    for message, language in zip(messages, ("de", "es", "de")):
        assert message is not None and f'"{language}"' in message and "en, fr" in message, message
