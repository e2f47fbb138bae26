"""The lifecycle beyond draft → open → closed: reopen, duplicate, delete a draft, fix the wording of
a launched survey (with its text versions) — and the database refusing design changes itself."""

from __future__ import annotations

import json
import sqlite3

import pytest

from deniable.server.store.demo import demo_survey
from support.store import next_day, store_response
from deniable.server.store.surveys import (LifecycleError, delete_draft, duplicate_survey, get_launched_survey,
                                           get_survey, insert_survey, set_status)
from deniable.server.store.wording import WordingError, fix_wording, wording_changes, wording_history


def test_a_closed_survey_reopens_with_its_design_and_first_opening_day(db, stored):
    closed = set_status(db, "demo", "closed")
    assert closed.closed_on is not None
    reopened = set_status(db, "demo", "open")
    assert (reopened.status, reopened.opened_on, reopened.closed_on) == ("open", stored.opened_on, None)
    assert reopened.survey == stored.survey
    with pytest.raises(sqlite3.IntegrityError, match="frozen"):
        db.execute("DELETE FROM questions WHERE survey_id = ?", [stored.id])


def test_duplicate_makes_a_draft_copy_under_a_free_slug(db, stored):
    store_response(db, stored, {"drug_use": 1, "cheating": 2})
    copy = duplicate_survey(db, "demo", owner_id=None)
    again = duplicate_survey(db, "demo", owner_id=None)
    assert (copy.slug, again.slug) == ("demo-copy", "demo-copy-2")
    assert copy.status == "draft" and copy.survey.questions == stored.survey.questions
    assert copy.survey.title == stored.survey.title + " (copy)"
    assert db.execute("SELECT count(*) FROM responses WHERE survey_id = ?", [copy.id]).fetchone()[0] == 0
    with pytest.raises(LookupError):
        duplicate_survey(db, "nope", owner_id=None)


def test_a_long_slug_is_cut_to_make_room_for_the_suffix(db):
    survey = demo_survey()
    from dataclasses import replace

    long = insert_survey(db, replace(survey, slug="a" * 63))
    assert len(duplicate_survey(db, long.slug, owner_id=None).slug) <= 63
    assert len(duplicate_survey(db, long.slug, owner_id=None).slug) <= 63


def test_only_a_draft_can_be_deleted(db, stored):
    draft = duplicate_survey(db, "demo", owner_id=None)
    db.execute("INSERT INTO invitations VALUES ('hash', ?)", [draft.id])
    delete_draft(db, draft.slug)
    assert get_survey(db, draft.slug) is None
    for table in ("questions", "counts", "invitations"):
        assert db.execute(f"SELECT count(*) FROM {table} WHERE survey_id = ?", [draft.id]).fetchone()[0] == 0
    with pytest.raises(LifecycleError, match="only a draft"):
        delete_draft(db, "demo")
    assert get_survey(db, "demo") is not None


WORDING = {"title": "Sensitive habits", "questions": {
    "drug_use": {"text": "In the past 12 months, have you used an illegal drug?", "options": ["No", "Yes, at least once"]},
    "cheating": {"text": "How often have you cheated on a test or an exam?"},
}}


def test_fix_the_wording_of_an_open_survey_and_keep_each_version(db, stored):
    store_response(db, stored, {"drug_use": 1, "cheating": 2})
    fixed = fix_wording(db, "demo", WORDING, changed_by="ada@example.org")
    assert fixed.survey.title == "Sensitive habits" and fixed.text_version == 2
    drug, cheat, _ = fixed.survey.questions
    assert drug.options == ("No", "Yes, at least once") and cheat.text.endswith("a test or an exam?")
    # the design is untouched: same k, ε, threshold, required, order
    assert [(q.id, q.k, q.epsilon, q.mechanism.threshold if q.protected else None, q.required)
            for q in fixed.survey.questions] == \
        [(q.id, q.k, q.epsilon, q.mechanism.threshold if q.protected else None, q.required)
         for q in stored.survey.questions]
    store_response(db, stored, {"drug_use": 0, "cheating": 1})  # the same day: the wording the day began with
    with next_day():
        store_response(db, stored, {"drug_use": 0, "cheating": 3})
    versions = sorted(v for (v,) in db.execute("SELECT text_version FROM responses"))
    assert versions == [1, 1, 2]  # each response says which wording its day began with
    history = wording_history(db, stored.id)
    assert [h["version"] for h in history] == [1, 2] and history[1]["changed_by"] == "ada@example.org"
    assert history[0]["wording"]["title"] == stored.survey.title
    changes = {c["field"]: (c["before"], c["after"]) for c in wording_changes(history)}
    assert changes["Title"] == (stored.survey.title, "Sensitive habits")
    assert changes["Question 1 (drug_use), option 2"] == ("Yes", "Yes, at least once")
    assert "Question 2 (cheating), text" in changes and len(changes) == 3


def test_the_submission_path_sees_the_fixed_wording(db, stored):
    assert get_launched_survey(db, "demo").survey.title == stored.survey.title  # cached per connection
    fix_wording(db, "demo", {"title": "New title"})
    assert get_launched_survey(db, "demo").survey.title == "New title"


@pytest.mark.parametrize("wording, field, fragment", [
    ({"questions": {"drug_use": {"options": ["No", "Yes", "Maybe"]}}}, "questions[0].options", "keeps their number"),
    ({"questions": {"drug_use": {"options": ["Yes", "No"]}}}, "questions[0].options[0]", "keeps the order"),
    ({"questions": {"drug_use": {"options": ["Nope", "Nope"]}}}, "questions[0].options[1]", "duplicate"),
    ({"questions": {"drug_use": {"text": "   "}}}, "questions[0].text", "must not be empty"),
    ({"title": ""}, "title", "must not be empty"),
])
def test_a_fix_that_changes_more_than_words_is_refused(db, stored, wording, field, fragment):
    with pytest.raises(WordingError, match=fragment) as info:
        fix_wording(db, "demo", wording)
    assert info.value.field == field
    assert get_survey(db, "demo") == stored


def test_nothing_to_fix_and_drafts_are_refused(db, stored):
    with pytest.raises(LifecycleError, match="nothing changed"):
        fix_wording(db, "demo", {"title": stored.survey.title})
    draft = duplicate_survey(db, "demo", owner_id=None)
    with pytest.raises(LifecycleError, match="draft"):
        fix_wording(db, draft.slug, {"title": "x"})


@pytest.mark.parametrize("change", [
    "options = json_array(json_extract(options, '$[0]'), json_extract(options, '$[1]'), 'Maybe')",  # number
    "options = json_array(json_extract(options, '$[1]'), json_extract(options, '$[0]'))",  # order
    "epsilon = 2.0",
    "threshold = threshold + 1",
    "k = 3",
    "required = 0",
    "qid = 'other'",
    "position = 7",
    "options = 'not json'",
])
def test_the_database_refuses_design_changes_but_allows_words(db, stored, change):
    """Invariant 4 in the file itself: whatever the code, a launched survey's options' number and
    order, ε and threshold never change; only the text may."""
    with pytest.raises(sqlite3.IntegrityError, match="only the wording"):
        db.execute(f"UPDATE questions SET {change} WHERE survey_id = ? AND qid = 'drug_use'", [stored.id])
    db.execute("UPDATE questions SET text = 'Reworded?', options = ? WHERE survey_id = ? AND qid = 'drug_use'",
               [json.dumps(["Nope", "Yep"]), stored.id])
    assert get_survey(db, "demo").survey.questions[0].options == ("Nope", "Yep")
    for statement in ("DELETE FROM questions WHERE survey_id = ?",
                      "INSERT INTO questions (survey_id, position, qid, text, options, required, k) "
                      "VALUES (?, 9, 'x', 'X', '[\"a\",\"b\"]', 1, 2)"):
        with pytest.raises(sqlite3.IntegrityError, match="frozen"):
            db.execute(statement, [stored.id])


def test_a_launched_list_experiments_sensitive_item_is_fixed_with_its_page_break_and_display_logic_kept(db):
    """The fixed spec is written as the store writes it (shuffle, show_if, page_break beside the type's
    fields): the frozen-design trigger lets only the sensitive item's words change."""
    from deniable.server.survey.definition import parse_definition

    survey = parse_definition({"slug": "ls", "title": "T", "questions": [
        {"id": "a", "text": "A?", "options": ["x", "y"]},
        {"id": "shop", "text": "How many apply?", "type": "list", "items": ["I cycle", "I cook"],
         "sensitive": "I shoplifted", "epsilon": 1.0, "page_break": True, "show_if": {"question": "a", "in": ["x"]}}]})
    insert_survey(db, survey, status="open")
    fixed = fix_wording(db, "ls", {"questions": {"shop": {"sensitive": "I stole"}}})
    shop = fixed.survey.question("shop")
    assert shop.qtype.wording(shop)["sensitive"] == "I stole"
    assert shop.page_break and shop.show_if == survey.question("shop").show_if
