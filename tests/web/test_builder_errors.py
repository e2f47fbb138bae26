"""The builder's errors on the field they are about, and every limit stated next to its field."""

from __future__ import annotations

import html
import re

import pytest

from deniable.server.store.surveys import get_survey
from support.dashboard import builder_form, csrf_token, open_db

QUESTION = {"qid": "drugs", "text": "Used drugs?", "options": "Yes\nNo", "protection": "protected", "epsilon": "1"}


def summary(page: str) -> list[tuple[str, str]]:
    """The error summary's (field id, text) pairs."""
    assert 'id="error-summary"' in page, "no error summary"
    box = page.split('id="error-summary"', 1)[1].split("</ul>", 1)[0]
    return [(target, html.unescape(text)) for target, text in re.findall(r'<a href="#([^"]+)">([^<]*)</a>', box)]


def field_errors(page: str, field_id: str) -> list[str]:
    """The errors shown under the field ``field_id``."""
    match = re.search(rf'<ul class="errors" id="{field_id}-errors">(.*?)</ul>', page, re.S)
    return [html.unescape(e) for e in re.findall(r"<li>(.*?)</li>", match.group(1))] if match else []


def save(app, auth_client, fields: dict, questions: list[dict]) -> str:
    token = csrf_token(auth_client, "/dashboard/new")
    data = builder_form(token, {"slug": "", "title": "Habits", "description": "", "target_n": "500", **fields},
                        questions)
    response = auth_client.post("/dashboard/new", data={**data, "save": "Save draft"})
    assert response.status_code == 422  # refused, shown again; never a 500
    db = open_db(app)
    assert db.execute("SELECT count(*) FROM surveys").fetchone()[0] == 0  # nothing stored
    return response.get_data(as_text=True)


def test_an_empty_title_is_reported_on_the_title_not_on_the_address(app, auth_client):
    page = save(app, auth_client, {"title": "  "}, [QUESTION])
    assert [target for target, _ in summary(page)] == ["title"]
    text = summary(page)[0][1]
    assert text.startswith("Title: must not be empty: enter a title") and "at most 200 characters" in text
    assert field_errors(page, "title") and not field_errors(page, "slug")


def test_a_title_over_200_characters_is_reported_on_the_title(app, auth_client):
    page = save(app, auth_client, {"title": "x" * 201, "slug": "long"}, [QUESTION])
    assert summary(page) == [("title", "Title: must be at most 200 characters")]


def test_an_empty_question_text_is_reported_on_the_text_not_on_the_id(app, auth_client):
    page = save(app, auth_client, {}, [QUESTION, {**QUESTION, "text": "", "qid": ""}])
    assert [target for target, _ in summary(page)] == ["questions-1-text"]
    assert summary(page)[0][1].startswith("Question 2, text: must not be empty: enter the question's text")
    assert not field_errors(page, "questions-1-qid")


def test_a_blank_title_and_a_blank_text_are_both_reported_at_once(app, auth_client):
    page = save(app, auth_client, {"title": ""}, [{**QUESTION, "text": "", "qid": ""}])
    assert [target for target, _ in summary(page)] == ["title", "questions-0-text"]


def test_a_bad_id_is_still_reported_on_the_id(app, auth_client):
    page = save(app, auth_client, {}, [{**QUESTION, "qid": "9 lives"}])
    assert [target for target, _ in summary(page)] == ["questions-0-qid"]


@pytest.mark.parametrize("options, words", [
    ("Yes\nNo\nYes", ["option 3", "duplicate label 'Yes'", "differ"]),
    ("Yes\n" + "x" * 201, ["option 2", "at most 200 characters"]),
])
def test_bad_option_labels_are_reported_on_the_options(app, auth_client, options, words):
    page = save(app, auth_client, {}, [{**QUESTION, "options": options}])
    ((target, text),) = summary(page)
    assert target == "questions-0-options" and all(w in text for w in words), text


def test_every_length_limit_is_stated_next_to_its_field(auth_client):
    page = html.unescape(auth_client.get("/dashboard/new").get_data(as_text=True))
    hints = dict(re.findall(r'<span class="hint" id="([^"]+)-hint">([^<]*)</span>', page))
    for field, words in [("title", "at most 200 characters"), ("description", "at most 2,000 characters"),
                         ("information", "at most 20,000 characters"), ("contact", "at most 500 characters"),
                         ("questions-0-text", "at most 2,000 characters"),
                         ("questions-0-options", "each at most 200 characters and different from the others"),
                         ("questions-0-items", "each at most 200 characters and different from the others"),
                         ("questions-0-sensitive", "at most 200 characters")]:
        assert words in hints[field], (field, hints.get(field))
    # the same limits, for builder.js's live checks
    options = re.search(r'<textarea[^>]*id="questions-0-options"[^>]*>', page).group(0)
    assert 'data-max-line="200"' in options and 'data-distinct-lines="option"' in options
    assert re.search(r'data-max-length="200"[^>]*id="title"|id="title"[^>]*data-max-length="200"', page)


# ---------------------------------------------------------------- warnings in words

def builder_page(auth_client, questions, target_n="500"):
    token = csrf_token(auth_client, "/dashboard/new")
    data = builder_form(token, {"slug": "habits", "title": "Habits", "description": "", "target_n": target_n},
                        questions)
    return auth_client.post("/dashboard/new", data={**data, "action": "none"}).get_data(as_text=True)


def total_warning_of(page: str) -> str | None:
    match = re.search(r'<p class="plan-warning total-warning" id="total-epsilon-warning"([^>]*)>(.*?)</p>', page, re.S)
    assert match, "no total warning element"
    if " hidden" in match.group(1):
        return None
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", match.group(2))).split())


def test_a_total_epsilon_where_respondents_read_almost_certain_is_warned_of(auth_client):
    from deniable.server.survey.explain import explain_total

    # ln 999 ≈ 6.9068 is where explain_total starts saying "almost certain" (two answers at 50/50)
    assert "almost certain" not in explain_total(6.9, 2)["posterior"]
    assert "almost certain" in explain_total(6.91, 2)["posterior"]
    below = builder_page(auth_client, [QUESTION, {**QUESTION, "qid": "cheat", "text": "Cheated?", "epsilon": "5.9"}])
    assert total_warning_of(below) is None  # 1 + 5.9 = 6.9
    above = builder_page(auth_client, [QUESTION, {**QUESTION, "qid": "cheat", "text": "Cheated?", "epsilon": "7"}])
    warning = total_warning_of(above)
    assert warning.startswith("Warning: At a total ε of 8.000 per respondent, every respondent reads that someone")
    assert "almost certain" in warning and "(more than 99.9% sure)" in warning and "at most 6.90" in warning
    # the numbers builder.js needs to say the same live: the threshold and the words around the total
    assert 'data-almost-certain="6.906754778648' in above
    assert 'data-template="At a total ε of {epsilon} per respondent' in html.unescape(above)


def test_the_open_confirmation_warns_of_an_almost_certain_total(app, auth_client):
    from support.dashboard import make_survey

    make_survey(app, {"slug": "loose", "title": "Loose", "questions": [
        {"id": "a", "text": "A?", "options": ["Yes", "No"], "epsilon": 4.0},
        {"id": "b", "text": "B?", "options": ["Yes", "No"], "epsilon": 4.0}]}, status="draft")
    page = html.unescape(auth_client.get("/dashboard/loose/confirm?to=open").get_data(as_text=True))
    assert "At a total ε of 8.000 per respondent" in page and "almost certain" in page
    make_survey(app, {"slug": "tight", "title": "Tight", "questions": [
        {"id": "a", "text": "A?", "options": ["Yes", "No"], "epsilon": 1.0}]}, status="draft")
    page = auth_client.get("/dashboard/tight/confirm?to=open").get_data(as_text=True)
    assert "total-epsilon-warning" not in page


def test_uninformative_precision_is_said_in_words(auth_client):
    # a list experiment at 40 respondents: ± 51 points or so
    plan = auth_client.get("/dashboard/plan.json?type=list&items=3&epsilon=1&target=40&margin=0.05").get_json()
    assert plan["moe"] > 0.25 and "Uninformative:" in plan["html"]
    assert "known only to within ± " in plan["html"]
    plan = auth_client.get("/dashboard/plan.json?type=list&items=3&epsilon=1&target=100000&margin=0.05").get_json()
    assert plan["moe"] < 0.25 and "Uninformative" not in plan["html"]
    # a choice question's panel, on the page
    small = builder_page(auth_client, [QUESTION], target_n="10")
    assert "Uninformative:" in small and "Uninformative:" not in builder_page(auth_client, [QUESTION], target_n="5000")
    assert 'data-uninformative="0.25"' in small  # builder.js's threshold is the template's


# ---------------------------------------------------------------- names a screen reader tells apart

def ids(page: str) -> list[str]:
    return re.findall(r'\sid="([^"]+)"', page)


def test_every_planning_panel_is_named_by_its_question_and_ids_are_unique(app, auth_client):
    page = builder_page(auth_client, [QUESTION, {**QUESTION, "qid": "cheat", "text": "Cheated?"}])
    assert len(ids(page)) == len(set(ids(page)))
    labels = re.findall(r'<aside class="plan-panel" id="plan-(\d)" aria-labelledby="([^"]+)"', page)
    assert labels == [("0", "plan-0-title question-0-title"), ("1", "plan-1-title question-1-title")]
    assert re.search(r'id="question-1-title"[^>]*>Question 2<', page)


def test_the_wording_fix_has_one_element_per_id(app, auth_client):
    from support.dashboard import make_survey

    make_survey(app, status="open")
    page = auth_client.get("/dashboard/habits/edit").get_data(as_text=True)
    assert "Fix the wording" in page and 'name="wording-title"' in page
    assert len(ids(page)) == len(set(ids(page))), sorted({i for i in ids(page) if ids(page).count(i) > 1})


def test_the_summary_lists_every_error_a_long_title_beside_a_question_error(app, auth_client):
    """A walkthrough found the summary leaving out "title: at most 200 characters" when a question also
    had an error: the definition stops at its first error, so each field is checked on its own."""
    page = save(app, auth_client, {"title": "T" * 201}, [{**QUESTION, "text": ""}])
    targets = [target for target, _ in summary(page)]
    assert "title" in targets, summary(page)
    assert any(target.startswith("questions-0") for target in targets), summary(page)
    assert field_errors(page, "title"), "the title's error is not under the title"
