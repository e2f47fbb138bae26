"""The embed's protection note is the survey page's own plain sentence, in every language (issue 39, docs/embedding.md).

The survey page never shows a respondent ε: beside a protected question it says "Protected." and what
the randomization does in plain words ("Your true answer is sent only 73% of the time, …").  The built
embed, mounted in each language the respondents' catalogs have (English, and server/translations/),
shows the same sentence as the survey page served in that language, for each question, and no "ε";
so does a document made before it carried the page's notes (its built-in English)."""

from __future__ import annotations

from pathlib import Path

import pytest
from deniable.client.embed import current
from support.browser import open_for_the_embed

pytestmark = pytest.mark.browser

CATALOGS = Path(__file__).resolve().parents[2] / "server" / "translations"
LANGUAGES = ["en", *sorted(p.name for p in CATALOGS.iterdir() if (p / "LC_MESSAGES" / "messages.po").exists())]
QIDS = ("drugs", "three", "cheated", "asked", "acts", "days", "did")
DEFINITION = {
    "slug": "plain", "title": "Plain",
    "questions": [
        {"id": "drugs", "text": "Have you used drugs?", "options": ["Yes", "No"], "epsilon": 1.0},
        {"id": "three", "text": "How often?", "options": ["Never", "Once", "More"], "epsilon": 2.0},
        {"id": "cheated", "text": "Have you ever cheated in an exam?", "options": ["Yes", "No"],
         "design": {"name": "forced", "p": 0.6, "forced": [0.25, 0.15]}},
        {"id": "asked", "text": "Are you over 18?", "options": ["Yes", "No"]},
        {"id": "acts", "type": "list", "text": "How many of these have you done?",
         "items": ["Recycled", "Voted", "Cooked"], "sensitive": "Shoplifted", "epsilon": 2.0},
        {"id": "days", "type": "numeric", "text": "On how many days did you drink last month?",
         "min": 0, "max": 30, "step": 1, "epsilon": 1.0},
        {"id": "did", "type": "multi", "text": "Which of these have you done?",
         "options": ["Skipped work", "Lied to a doctor"], "epsilon": 2.0},
    ],
    "translations": {language: {"title": f"Plain {language}"} for language in LANGUAGES if language != "en"},
}

MOUNT = """async ({version, design, qids, language}) => {
  const m = await import(`/embed/${version}/deniable-embed.mjs`);
  const memory = new Map();
  const storage = {getItem: (k) => (memory.has(k) ? memory.get(k) : null), setItem: (k, v) => memory.set(k, String(v))};
  const out = {};
  for (const qid of qids) {
    const host = document.createElement('div');
    document.body.append(host);
    m.mount(host, {design, question: qid, storage, language});
    out[qid] = host.querySelector('.deniable-note').textContent.replace(/\\s+/g, ' ').trim();
    host.remove();
  }
  return out;
}"""

PAGE = """(qids) => Object.fromEntries(qids.map((qid) => [qid,
  document.getElementById(`${qid}-note`).textContent.replace(/\\s+/g, ' ').trim()]))"""


@pytest.fixture
def plain(app, live_server, page):
    design = open_for_the_embed(app, live_server, page, DEFINITION)
    pages = {}
    for language in LANGUAGES:
        page.goto(f"{live_server}/s/plain?lang={language}")
        pages[language] = page.evaluate(PAGE, list(QIDS))
    page.goto(f"{live_server}/embed/{current().version}/deniable-embed.js")  # back to the app's origin
    return design, pages


def test_the_note_is_the_survey_pages_plain_sentence_in_every_language(page, plain):
    design, pages = plain
    assert len(LANGUAGES) >= 3  # English and the catalogs (fr, es)
    for language in LANGUAGES:
        notes = page.evaluate(MOUNT, {"version": current().version, "design": design, "qids": list(QIDS),
                                      "language": language})
        for qid in QIDS:
            assert "ε" not in notes[qid], (language, qid, notes[qid])
            assert notes[qid] == pages[language][qid], (language, qid)
    english = page.evaluate(MOUNT, {"version": current().version, "design": design, "qids": ["drugs"],
                                    "language": "en"})
    assert english["drugs"] == ("Protected. Your true answer is sent only 73.2% of the time, so a 50/50 guess "
                                "about it becomes at most 73.2% sure.")


def test_a_document_without_the_pages_notes_shows_no_epsilon_either(page, plain):
    design, _ = plain
    old = {**design, "questions": [{k: v for k, v in q.items() if k != "notes"} for q in design["questions"]]}
    notes = page.evaluate(MOUNT, {"version": current().version, "design": old, "qids": list(QIDS), "language": "en"})
    assert all("ε" not in note for note in notes.values()), notes
