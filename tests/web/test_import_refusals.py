"""Importing a definition: a key repeated in one object is refused naming it, and a taken slug gets
one answer whoever's survey has it (no oracle beyond "taken")."""

from __future__ import annotations

import html
import io
import json
import re

import pytest

from support.dashboard import DEFINITION, csrf_token, make_survey, open_db


def import_text(client, text: str, name: str = "def.json"):
    token = csrf_token(client, "/dashboard/")
    return client.post("/dashboard/import", data={"csrf_token": token, "target_n": "100",
                                                  "definition": (io.BytesIO(text.encode()), name)},
                       content_type="multipart/form-data")


def errors(response) -> list[str]:
    page = response.get_data(as_text=True)
    return [html.unescape(e) for e in re.findall(r'<ul class="errors"[^>]*>\s*<li>(.*?)</li>', page)]


def surveys(app) -> int:
    db = open_db(app)
    try:
        return db.execute("SELECT count(*) FROM surveys").fetchone()[0]
    finally:
        db.conn.close()


DOUBLED_SLUG = ('{"slug": "a",\n "slug": "b", "title": "T",'
                ' "questions": [{"id": "q", "text": "Q", "options": ["x", "y"]}]}')
DOUBLED_EPSILON = ('{"slug": "a", "title": "T", "questions": [\n {"id": "q", "text": "Q", "options": ["x", "y"],\n'
                   '  "epsilon": 0.5, "epsilon": 5}]}')


@pytest.mark.parametrize("text, message", [
    (DOUBLED_SLUG, "def.json: slug: line 1: the key 'slug' appears more than once in one object: keep one"),
    (DOUBLED_EPSILON, "def.json: questions[0].epsilon: line 2: the key 'epsilon' appears more than once"),
])
def test_a_repeated_key_is_refused_naming_it_and_nothing_is_stored(app, auth_client, text, message):
    response = import_text(auth_client, text)
    assert response.status_code == 422
    assert any(message in e for e in errors(response)), errors(response)
    assert surveys(app) == 0


def test_a_taken_slug_gets_the_same_answer_whoever_has_it(app, auth_client):
    make_survey(app, {**DEFINITION, "slug": "mine"})  # the logged-in researcher's draft
    make_survey(app, {**DEFINITION, "slug": "theirs", "title": "Secret title"}, owner="other@example.org")
    answers = {}
    for slug in ("mine", "theirs"):
        response = import_text(auth_client, json.dumps({**DEFINITION, "slug": slug}))
        answers[slug] = (response.status_code, [e.replace(slug, "SLUG") for e in errors(response)])
        assert "Secret title" not in response.get_data(as_text=True)
    assert answers["mine"] == answers["theirs"] == (422, ["slug: a survey 'SLUG' already exists"])
    assert auth_client.get("/dashboard/theirs/edit").status_code == 404  # and nothing else about it is readable
    assert surveys(app) == 2
