"""The embed's own sentences in the mounted language, in chromium (docs/embedding.md, "In another language").

Mounted with ``language: "fr"``, a question's protection note, a list experiment's question (which also
names its counts for a screen reader), a number's label and refusal and the "please answer" message are
the survey page's own French words: each is compared with the same sentence on the survey page served
in French (``/s/SLUG?lang=fr``).  With no language (an English survey) the embed's built-in English
sentences show, as before, but the note, which is the survey page's English one; and a design document made before it carried the words (no ``embed_words``,
no ``notes``) still mounts, in French too, with the English built-ins."""

from __future__ import annotations


import pytest
from deniable.client.embed import current
from support.browser import open_for_the_embed

pytestmark = pytest.mark.browser

DEFINITION = {
    "slug": "words", "title": "Words",
    "questions": [
        {"id": "drugs", "text": "Have you used drugs?", "options": ["Yes", "No", "Rather not say"], "epsilon": 1.0},
        {"id": "asked", "text": "Are you over 18?", "options": ["Yes", "No"]},
        {"id": "acts", "type": "list", "text": "How many of these have you done?",
         "items": ["Recycled", "Voted", "Cooked"], "sensitive": "Shoplifted", "epsilon": 2.0},
        {"id": "days", "type": "numeric", "text": "On how many days did you drink last month?",
         "min": 0, "max": 30, "step": 1, "epsilon": 1.0},
        {"id": "hours", "type": "numeric", "text": "Hours of sleep last night?",
         "min": 0, "max": 12, "step": 0.5, "epsilon": 1.0},
    ],
    "translations": {"fr": {"title": "Mots", "questions": {
        "drugs": {"text": "Avez-vous consommé des drogues ?", "options": ["Oui", "Non", "Je préfère ne pas répondre"]},
        "asked": {"text": "Avez-vous plus de 18 ans ?", "options": ["Oui", "Non"]},
        "acts": {"text": "Combien de ces choses avez-vous faites ?", "items": ["Recyclé", "Voté", "Cuisiné"]},
        "days": {"text": "Combien de jours avez-vous bu le mois dernier ?"},
        "hours": {"text": "Heures de sommeil la nuit dernière ?"},
    }}},
}

# Mount question `qid` (in `language` unless null) with an in-memory storage; `typed` goes in a number's box.
# Returns what shows, and the error said by commit() (null when it committed).
MOUNT = """async ({version, design, qid, language, typed}) => {
  const m = await import(`/embed/${version}/deniable-embed.mjs`);
  const memory = new Map();
  const storage = {getItem: (k) => (memory.has(k) ? memory.get(k) : null), setItem: (k, v) => memory.set(k, String(v))};
  const host = document.createElement('div');
  document.body.append(host);
  const options = {design, question: qid, storage};
  if (language !== null) options.language = language;
  const handle = m.mount(host, options);
  const box = host.querySelector('input[type=text]');
  if (box && typed !== null) box.value = typed;
  let error = null;
  try { handle.commit(); } catch (e) { error = host.querySelector('.deniable-error').textContent; }
  const seen = {
    note: host.querySelector('.deniable-note').textContent,
    prompt: host.querySelector('.deniable-list > p')?.textContent ?? null,
    counts: host.querySelector('.deniable-list [role=radiogroup]')?.getAttribute('aria-labelledby') ?? null,
    label: host.querySelector('.deniable-numeric label')?.textContent ?? null,
    error,
  };
  if (seen.counts !== null) {  // the counts' accessible name: the text of what names them (one element)
    const naming = document.querySelectorAll(`[id="${seen.counts}"]`);
    seen.counts = naming.length === 1 && host.contains(naming[0]) ? naming[0].textContent : null;
  }
  host.remove();
  return seen;
}"""

# The survey page's words for the same sentences, read from the page as served.
PAGE = """() => {
  const text = (selector) => document.querySelector(selector).textContent.replace(/\\s+/g, ' ').trim();
  const form = document.querySelector('[data-msg-required]');
  return {
    notes: Object.fromEntries(['drugs', 'asked', 'acts', 'days', 'hours'].map((qid) => [qid, text(`#${qid}-note`)])),
    prompt: text('#acts-hint'),
    days: text('label[for=days-value]'), hours: text('label[for=hours-value]'),
    required: form.dataset.msgRequired, whole: form.dataset.msgNumberWhole, multiple: form.dataset.msgNumberMultiple,
  };
}"""


@pytest.fixture
def words(app, live_server, page):
    design = open_for_the_embed(app, live_server, page, DEFINITION)
    page.goto(f"{live_server}/s/words?lang=fr")
    french = page.evaluate(PAGE)
    page.goto(f"{live_server}/embed/{current().version}/deniable-embed.js")  # back to the app's origin
    return design, french


def mounted(page, design, qid, language, typed=None):
    seen = page.evaluate(MOUNT, {"version": current().version, "design": design, "qid": qid,
                                 "language": language, "typed": typed})
    return {key: " ".join(value.split()) if isinstance(value, str) else value for key, value in seen.items()}


def test_mounted_in_french_the_embeds_sentences_are_the_survey_pages_french_ones(page, words):
    design, french = words
    drugs = mounted(page, design, "drugs", "fr")
    assert drugs["note"] == french["notes"]["drugs"] and drugs["note"].startswith("Protégée. ")
    assert drugs["error"] == french["required"] == "Veuillez répondre à cette question : elle est obligatoire."
    assert mounted(page, design, "asked", "fr")["note"] == french["notes"]["asked"]  # asked directly

    acts = mounted(page, design, "acts", "fr")
    assert acts["prompt"] == french["prompt"] == "Combien de ces affirmations vous concernent ? Ne dites pas lesquelles."
    assert acts["counts"] == acts["prompt"]  # what a screen reader names the counts, as on the survey page
    assert acts["note"] == french["notes"]["acts"]

    days = mounted(page, design, "days", "fr", typed="2.5")
    assert days["label"] == french["days"] == "Votre réponse, de 0 à 30 :"
    assert days["note"] == french["notes"]["days"]
    assert days["error"] == french["whole"].format(min=0, max=30)
    hours = mounted(page, design, "hours", "fr", typed="0.3")
    assert hours["label"] == french["hours"] == "Votre réponse, de 0 à 12 par pas de 0.5 :"
    assert hours["error"] == french["multiple"].format(min=0, max=12, step=0.5)
    assert mounted(page, design, "days", "fr", typed="3")["error"] is None  # an answer: no refusal


@pytest.mark.parametrize("old,language", [(False, None), (False, "en"), (True, None), (True, "en"), (True, "fr")])
def test_in_english_and_from_an_older_document_the_built_in_english_sentences_show(page, words, old, language):
    design, _ = words
    if old:  # a document made before it carried the embed's words
        design = {key: value for key, value in design.items() if key != "embed_words"}
        design["questions"] = [{key: value for key, value in q.items() if key != "notes"} for q in design["questions"]]
    drugs = mounted(page, design, "drugs", language)
    if old:  # the built-in English: plain words, no ε (issue 39)
        assert drugs["note"] == ("Protected: your browser randomizes your answer before this survey records it; "
                                 "only the randomized answer leaves this question.")
        assert mounted(page, design, "asked", language)["note"] == "Asked directly: your answer is sent as given."
    else:  # the survey page's own English note (tests/e2e/test_embed_plain_note.py)
        assert drugs["note"].startswith("Protected. Your true answer is sent only ") and "ε" not in drugs["note"]
        assert mounted(page, design, "asked", language)["note"] == "Not protected — sent as you answer."
    assert drugs["error"] == "Please answer this question."
    acts = mounted(page, design, "acts", language)
    assert acts["prompt"] == acts["counts"] == "How many of these apply to you? Do not say which ones."
    days = mounted(page, design, "days", language, typed="2.5")
    assert days["label"] == "Your answer, from 0 to 30:"
    assert days["error"] == "Please give a whole number from 0 to 30."
    hours = mounted(page, design, "hours", language, typed="0.3")
    assert hours["label"] == "Your answer, from 0 to 12 in steps of 0.5:"
    assert hours["error"] == "Please give a multiple of 0.5 from 0 to 12."
