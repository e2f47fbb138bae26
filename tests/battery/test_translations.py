"""Battery: a French translation of every question of every registered question type.

The battery's definition with :func:`~support.battery.battery_translation` (each type's translatable texts,
"FR " before the original words) imports with ``deniable import``; the French survey page shows every
question's French text and every label the English page shows, in French, and its form posts back and
stores the reports; per question, a fix of its French words through the dashboard changes those words only
(the design fingerprint, the stored reports and the estimates stay, the text version goes up, the codebook
lists both versions, the JSON API publishes the fix), and another number of labels is refused by name with
nothing stored.  The respondent-side crosswise design's private fact is one of those words; the design itself
is refused by name on import.
"""

from __future__ import annotations

import html
import json
import re
from collections import Counter

import numpy as np
import pytest
from click.testing import CliRunner

from deniable.server.cli import cli
from deniable.server.store.db import connect
from deniable.server.store.responses import insert_many
from deniable.server.store.surveys import get_survey
from deniable.server.survey import questions
from deniable.server.survey.definition import design_fingerprint, parse_definition
from deniable.server.survey.simulate import simulate_dataset

from support import rating
from support.battery import (FRENCH, GROUP, SLUG, battery_definition, battery_questions, battery_translation,
                             battery_truth, question_ids)
from support.dashboard import EMAIL, csrf_token

FIXED = " (corrigé)"  # what a fix adds after each French text of the question it fixes


def _import(tmp_path, db_path, definition) -> tuple[int, str]:
    """``deniable import FILE --open --owner EMAIL`` of ``definition``: (exit code, output)."""
    path = tmp_path / "battery-fr.json"
    path.write_text(json.dumps(definition, ensure_ascii=False), encoding="utf-8")
    result = CliRunner().invoke(cli, ["import", str(path), "--db", db_path, "--open", "--owner", EMAIL])
    return result.exit_code, result.output


@pytest.fixture
def french(tmp_path, db_path, owner_id):
    """The battery with its French translation, imported open with ``deniable import``, with 600 simulated
    respondents (the real randomizers), owned by the logged-in researcher."""
    code, output = _import(tmp_path, db_path, {**battery_definition(), "translations": battery_translation()})
    assert code == 0, output
    db = connect(db_path)
    try:
        stored = get_survey(db, SLUG)
        data = simulate_dataset(stored.survey, battery_truth(stored.survey), 600, np.random.default_rng(11))
        insert_many(db, stored, data.columns)
        return get_survey(db, SLUG)
    finally:
        db.conn.close()


def _stored(db_path):
    """The stored survey, its responses' (reports, text version) in key order, and the number of wordings kept."""
    db = connect(db_path)
    try:
        rows = db.execute("SELECT reports, text_version FROM responses ORDER BY id").fetchall()
        versions = db.execute("SELECT count(*) FROM wording_versions").fetchone()[0]
        return get_survey(db, SLUG), rows, versions
    finally:
        db.conn.close()


def _cards(page: str) -> dict[str, str]:
    """Each question's fieldset on the survey page, HTML entities decoded, by question id in page order."""
    return {m.group(1): html.unescape(m.group(0))
            for m in re.finditer(r'<fieldset[^>]*\bid="q-([^"]+)".*?</fieldset>', page, re.S)}


def _shown(card: str, text: str) -> bool:
    """Whether ``text`` is the whole content of an element of ``card`` (a legend's span, a label, an item)."""
    return re.search(r">\s*" + re.escape(text) + r"\s*<", card) is not None


def _in_words(text: str, page: str) -> bool:
    """Whether ``text`` is on ``page`` as words of their own, not after :data:`FRENCH`."""
    return re.search(rf"(?<!{FRENCH})(?<!\w){re.escape(text)}(?!\w)", page) is not None


def _texts(words) -> list[str]:
    return [words] if isinstance(words, str) else list(words)


def _translatable(q) -> dict:
    """``q``'s wording under the keys a definition writes (``items`` for a list experiment's options)."""
    words = q.qtype.wording(q)
    return {written: words[key] for key, (_, written) in q.qtype.wording_labels(q).items()}


def _position(qid: str) -> int:
    return [q["id"] for q, _ in battery_questions()].index(qid)


# ---------------------------------------------------------------- 1. every type translates, on import


def test_the_battery_with_a_french_translation_of_every_question_imports(french):
    survey = french.survey
    translation = battery_translation()
    assert survey.translations == translation
    fr = survey.translations["fr"]["questions"]
    # every question of every registered type (the test-only rating scale too) is translated, each in
    # every text its type lets a launched survey reword, and nothing is left in the original words
    assert list(fr) == [q.id for q in survey.questions] == [GROUP, *question_ids()]
    assert {q.type for q in survey.questions} == {*questions.names(), rating.NAME}
    for q in survey.questions:
        assert set(fr[q.id]) == set(_translatable(q)), q.id
        for key, words in fr[q.id].items():
            assert all(text.startswith(FRENCH) for text in _texts(words)), (q.id, key)


def test_the_private_fact_is_translated_and_the_design_itself_is_refused_by_name(tmp_path, db_path, owner_id):
    """The respondent-side crosswise design's private fact is words the respondent reads (its card,
    cards/crosswise.html), not what the reports mean (the fingerprint holds the design's name and weights), so a
    translation holds it as ``"fact"``; the design itself cannot be translated, and an empty French fact is
    refused by name — nothing stored either way."""
    survey = parse_definition(battery_definition())
    facts = {q.id: q.qtype.page_data(q)["crosswise"]["fact"] for q in survey.questions
             if (q.qtype.page_data(q) or {}).get("crosswise")}
    assert list(facts) == ["choice_6"]  # the battery's one respondent-side crosswise question
    assert battery_translation()["fr"]["questions"]["choice_6"]["fact"] == FRENCH + facts["choice_6"]
    translated = parse_definition({**battery_definition(), "translations": battery_translation()})
    assert design_fingerprint(translated) == design_fingerprint(survey)
    definition = {**battery_definition(), "translations": battery_translation()}
    design = next(q["design"] for q in definition["questions"] if q["id"] == "choice_6")
    fact = FRENCH + facts["choice_6"]
    for key, value, message in [
            ("design", {**design, "fact": fact}, "cannot be translated: it is part of the question's design (what its "
                                                 "reports mean); only its text, options, fact can"),
            ("fact", "  ", "must be the private fact's question in words, such as \"Is your mother's birthday in "
                           "January, February or March?\""),
            ("fact", ["Une"], "must be the private fact's question in words")]:
        definition["translations"]["fr"]["questions"]["choice_6"] = {key: value}
        code, output = _import(tmp_path, db_path, definition)
        assert code == 1
        assert f"translations.fr.questions.choice_6.{key}: {message}" in output, output
        db = connect(db_path)
        assert get_survey(db, SLUG) is None
        db.conn.close()


# ---------------------------------------------------------------- 2. the French survey page


def test_the_french_page_shows_every_question_in_french_and_its_form_stores_the_reports(client, french, db_path):
    english = _cards(client.get(f"/s/{SLUG}?lang=en").get_data(as_text=True))
    response = client.get(f"/s/{SLUG}?lang=fr")
    assert response.status_code == 200
    page = response.get_data(as_text=True)
    cards = _cards(page)
    assert '<html lang="fr">' in page and f"<h1>{FRENCH}Every question type</h1>" in page
    assert list(cards) == list(english) == [q.id for q in french.survey.questions]
    fr = french.survey.translations["fr"]["questions"]
    labelled = set()
    for q in french.survey.questions:
        card, original = cards[q.id], english[q.id]
        for key, words in _translatable(q).items():
            for text, translation in zip(_texts(words), _texts(fr[q.id][key])):
                if key == "text":  # every card's legend: the question's text
                    assert _shown(original, text) and _shown(card, translation), (q.id, text)
                elif _shown(original, text):  # a label the English card shows: the French card shows its translation
                    assert _shown(card, translation), (q.id, key, text)
                    labelled.add(q.id)
                assert not _shown(card, text), (q.id, key, text)  # nothing left in the original words
    # every question with labels shows them (the respondent-side crosswise one shows its private fact, not its
    # options: the respondent chooses "same" or "different")
    assert labelled == {q.id for q in french.survey.questions if set(_translatable(q)) != {"text"}}
    # nor anywhere else on the page (the privacy notes, the attributes the browser reads, the title): no
    # text or label of the survey is in the original words
    originals = [french.survey.title, *(text for q in french.survey.questions for words in _translatable(q).values()
                                        for text in _texts(words))]
    assert [text for text in originals if _in_words(text, html.unescape(page))] == []
    english_page = html.unescape(client.get(f"/s/{SLUG}?lang=en").get_data(as_text=True))
    assert all(_in_words(q.text, english_page) for q in french.survey.questions)  # where the check finds them
    # the respondent-side crosswise card's private fact is the French one (it is among the translated texts, so
    # the checks above find no English fact on the page either)
    crosswise = french.survey.question("choice_6")
    assert crosswise.qtype.wording(crosswise)["fact"] in _translatable(crosswise).values()
    assert _shown(cards["choice_6"], fr["choice_6"]["fact"])
    assert _shown(english["choice_6"], crosswise.qtype.wording(crosswise)["fact"])
    # the form posts back from the French page and stores the reports as sent
    _, before, _ = _stored(db_path)
    action = re.search(r'<form method="post" action="([^"]*)"', page).group(1)
    assert action == f"/s/{SLUG}?lang=fr"
    one = simulate_dataset(french.survey, battery_truth(french.survey), 1, np.random.default_rng(5))
    reports = {q.id: q.qtype.report_of(q, int(one.columns[q.id][0])) for q in french.survey.questions}
    token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
    response = client.post(action, data={"csrf_token": token, **{qid: _form_text(r) for qid, r in reports.items()}})
    assert response.status_code == 303, re.findall(r'class="form-error".*?</div>', response.get_data(as_text=True),
                                                   re.S)
    assert response.headers["Location"].endswith(f"/s/{SLUG}/thanks?lang=fr")
    _, rows, _ = _stored(db_path)
    added = Counter((r, v) for r, v in rows) - Counter((r, v) for r, v in before)
    assert [(json.loads(r), v, n) for (r, v), n in added.items()] == [(reports, 1, 1)]  # under the first wording
    thanks = html.unescape(client.get(f"/s/{SLUG}/thanks?lang=fr").get_data(as_text=True))
    assert '<html lang="fr">' in thanks and all(fr[q.id]["text"] in thanks for q in french.survey.questions)


def _form_text(report) -> str:
    """A JSON report as the survey page's hidden field sends it (each type's ``parse_form`` reads it back)."""
    if isinstance(report, dict):
        return ":".join(str(v) for v in report.values())  # a list's ARM:COUNT, a two-group design's GROUP:ANSWER
    if isinstance(report, list):
        return "".join(map(str, report))
    return str(report)


# ---------------------------------------------------------------- 3. a fix of the French words, per type


def french_form(page: str) -> dict[str, str]:
    """The French translation's form on the launched survey's page: input name → value."""
    form = re.search(r'<form[^>]*id="translation-fr-form".*?</form>', page, re.S)
    assert form, "no French form on the launched page"
    fields = dict(re.findall(r'<input type="text" id="[^"]*" name="([^"]*)" value="([^"]*)"', form.group(0)))
    fields.update(re.findall(r'<textarea id="[^"]*" name="([^"]*)"[^>]*>\n?(.*?)</textarea>', form.group(0), re.S))
    return {name: html.unescape(value) for name, value in fields.items()}


def change_log(response) -> list[str]:
    """The rows of the launched page's change log, as words."""
    page = html.unescape(response.get_data(as_text=True))
    log = re.search(r'<table class="change-log".*?</table>', page, re.S)
    assert log, "no change log"
    return [" ".join(re.sub(r"<[^>]+>", " ", row).split())
            for row in re.findall(r"<tr>(.*?)</tr>", log.group(0), re.S)[1:]]


def _state(client, db_path) -> dict:
    stored, rows, versions = _stored(db_path)
    return {"stored": stored, "rows": rows, "versions": versions,
            "estimates": client.get(f"/api/v1/surveys/{SLUG}/estimates").get_json(),
            "csv": client.get(f"/dashboard/{SLUG}/export/responses.csv").get_data(as_text=True).splitlines()}


@pytest.mark.parametrize("qid", question_ids())
def test_a_french_fix_changes_the_french_words_only(auth_client, french, db_path, qid):
    i = _position(qid)
    before = _state(auth_client, db_path)
    assert before["estimates"]["questions"][i]["id"] == qid
    form = french_form(auth_client.get(f"/dashboard/{SLUG}/edit").get_data(as_text=True))
    mine = {name: value for name, value in form.items() if name.startswith(f"translation-fr-questions-{i}-")}
    q = french.survey.questions[i]
    held = french.survey.translations["fr"]["questions"][qid]
    assert sorted(mine) == sorted(f"translation-fr-questions-{i}-{key}" + ("" if isinstance(words, str) else f"-{j}")
                                  for key, words in held.items() for j in range(len(_texts(words))))
    response = auth_client.post(f"/dashboard/{SLUG}/wording/fr", data={
        "csrf_token": csrf_token(auth_client, "/dashboard/"), **form,
        **{name: value + FIXED for name, value in mine.items()}})
    assert response.status_code == 302, html.unescape(response.get_data(as_text=True))[:3000]
    after = _state(auth_client, db_path)
    fixed = after["stored"]
    words = fixed.survey.translations["fr"]["questions"][qid]
    assert words == {key: value + FIXED if isinstance(value, str) else [v + FIXED for v in value]
                     for key, value in held.items()}
    # the French words of this question only: the original, every other translation, the design, the reports
    # and every estimate are as they were
    assert fixed.survey.translations["fr"] == {**french.survey.translations["fr"], "questions": {
        **french.survey.translations["fr"]["questions"], qid: words}}
    assert fixed.survey.questions == french.survey.questions
    assert design_fingerprint(fixed.survey) == design_fingerprint(french.survey)
    assert after["rows"] == before["rows"] and len(after["rows"]) == 600
    assert after["estimates"] == before["estimates"]
    assert fixed.text_version == french.text_version + 1 and after["versions"] == 2
    # the change log names each text fixed in the type's words ("item 2", "sensitive item"), with before and after
    names = {written: name for name, written in q.qtype.wording_labels(q).values()}
    expected = [f"French: Question {i + 1} ({qid}), {'text' if key == 'text' else names[key]}"
                + ("" if isinstance(value, str) else f" {j + 1}") + f" {text} {text}{FIXED} {EMAIL}"
                for key, value in held.items() for j, text in enumerate(_texts(value))]
    assert [row.split(" ", 2)[2] for row in change_log(auth_client.get(f"/dashboard/{SLUG}/edit"))] == expected
    # the French page shows the fix at once, the English page the original words
    card = _cards(auth_client.get(f"/s/{SLUG}?lang=fr").get_data(as_text=True))[qid]
    assert _shown(card, words["text"]) and not _shown(card, held["text"])
    if "fact" in words:  # the respondent-side crosswise card's private fact (choice_6), fixed like the text
        assert _shown(card, words["fact"]) and not _shown(card, held["fact"])
    assert _shown(_cards(auth_client.get(f"/s/{SLUG}?lang=en").get_data(as_text=True))[qid], q.text)
    # 4. the JSON API publishes the fix
    design = auth_client.get(f"/api/v1/surveys/{SLUG}").get_json()
    assert design["translations"]["fr"]["questions"][qid] == words
    assert design["questions"][i]["text"] == q.text
    # the codebook of the export lists both text versions, the responses answered under each
    codebook = auth_client.get(f"/dashboard/{SLUG}/export/codebook.json").get_json()
    versions = codebook["text_versions"]
    assert [(v["version"], v["responses"]) for v in versions] == [(1, 600), (2, 0)]
    assert versions[0]["wording"]["translations"]["fr"]["questions"][qid] == held
    assert versions[1]["wording"]["translations"]["fr"]["questions"][qid] == words
    assert versions[0]["wording"]["questions"] == versions[1]["wording"]["questions"]
    assert codebook["design_fingerprint"] == design_fingerprint(french.survey)
    # the CSV that goes with it: the same design line, every response answered under the first wording
    lines = auth_client.get(f"/dashboard/{SLUG}/export/responses.csv").get_data(as_text=True).splitlines()
    assert lines[0] == before["csv"][0] and lines[1].endswith(",text-version")
    assert len(lines) == 602 and all(line.endswith(",1") for line in lines[2:])


@pytest.mark.parametrize("qid", question_ids())
def test_a_french_fix_with_another_number_of_labels_is_refused_by_name(auth_client, french, db_path, qid):
    i = _position(qid)
    q = french.survey.questions[i]
    before = _stored(db_path)
    form = french_form(auth_client.get(f"/dashboard/{SLUG}/edit").get_data(as_text=True))
    held = french.survey.translations["fr"]["questions"][qid]
    lists = [key for key, words in held.items() if not isinstance(words, str)]
    token = csrf_token(auth_client, "/dashboard/")
    if not lists:  # nothing but a text (a number): labels posted for it are not read, nothing changed
        response = auth_client.post(f"/dashboard/{SLUG}/wording/fr", data={
            "csrf_token": token, **form, f"translation-fr-questions-{i}-options-0": "une étiquette"})
        assert response.status_code == 409
        assert "French: nothing changed: the French text is the same as before" in html.unescape(
            response.get_data(as_text=True))
        assert _stored(db_path) == before
        return
    names = {written: name for name, written in q.qtype.wording_labels(q).values()}
    for key in lists:
        n, label = len(held[key]), names[key]
        last = f"translation-fr-questions-{i}-{key}-{n - 1}"
        for posted, got in (({**form, f"translation-fr-questions-{i}-{key}-{n}": "FR un de plus"}, n + 1),
                            ({k: v for k, v in form.items() if k != last}, n - 1)):
            response = auth_client.post(f"/dashboard/{SLUG}/wording/fr", data={"csrf_token": token, **posted})
            assert response.status_code == 422
            text = html.unescape(response.get_data(as_text=True))
            summary = re.search(r'<div class="error-summary".*?</div>', text, re.S).group(0)
            assert (f'<a href="#translation-fr-questions-{i}-{key}-0">French, Question {i + 1}, {label}s: has {n} '
                    f"{label}s in the original: a translation gives the same number, in the same order (got {got})"
                    in summary), summary
            assert re.search(rf'id="translation-fr-questions-{i}-{key}-0"[^>]*aria-invalid="true"', text)
            assert _stored(db_path) == before  # nothing stored: the same survey and responses, no text version
