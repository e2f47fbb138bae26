"""The cross-tab and subgroup pages label a question shown to some respondents only (its show_if) as the
results page does ("A subgroup: asked of respondents who answered …", dashboard/_asked_of.html), and
leave a question asked of everyone unlabelled."""

from __future__ import annotations

import html
import json
import re

import pytest
from support.dashboard import own

from deniable.server.store.db import connect
from deniable.server.store.surveys import insert_survey
from deniable.server.survey.definition import parse_definition

DEFINITION = {"slug": "asked", "title": "Asked", "questions": [
    {"id": "smoke", "text": "Do you smoke?", "options": ["Yes", "No", "Sometimes"]},
    {"id": "many", "text": "How many a day?", "options": ["1-5", "6+"], "epsilon": 2.0,
     "show_if": {"question": "smoke", "in": ["Yes", "Sometimes"]}},
    {"id": "end", "text": "Anything else?", "options": ["Yes", "No"], "epsilon": 1.0},
]}
WORDS = "A subgroup: asked of respondents who answered smoke = “Yes” or “Sometimes”; these estimates are of them only."


@pytest.fixture
def asked(app, auth_client):
    db = connect(app.config["DATABASE"])
    try:
        insert_survey(db, parse_definition(DEFINITION), status="open")
    finally:
        db.conn.close()
    own(app, "asked")
    for reports in [{"smoke": 1, "end": 0}, {"smoke": 2, "many": 1, "end": 0}, {"smoke": 0, "many": 0, "end": 1}]:
        response = auth_client.post("/api/v1/surveys/asked/responses", data=json.dumps({"reports": reports}),
                                    content_type="application/json")
        assert response.status_code == 201, response.get_json()
    return auth_client


def labels(page: str) -> dict[str, str]:
    """Each "asked of" label on the page, by its question id, in plain text."""
    return {qid: re.sub(r"<[^>]+>", "", text) for qid, text in
            re.findall(r'<p class="meta asked-of" id="q-(\w+)-asked-of">(.*?)</p>', page, re.S)}


@pytest.mark.parametrize("address, labelled", [
    ("/dashboard/asked/crosstab?row=many&col=end", {"many"}),
    ("/dashboard/asked/crosstab?row=end&col=many", {"many"}),
    ("/dashboard/asked/crosstab?row=smoke&col=end", set()),
    ("/dashboard/asked/subgroups?question=many&by=smoke", {"many"}),
    ("/dashboard/asked/subgroups?question=end&by=smoke", set()),
])
def test_the_crosstab_and_subgroup_pages_say_who_was_asked(asked, address, labelled):
    response = asked.get(address)
    page = html.unescape(response.get_data(as_text=True))
    assert response.status_code == 200, page[:2000]
    assert labels(page) == {qid: WORDS for qid in labelled}
    results = html.unescape(asked.get("/dashboard/asked/results").get_data(as_text=True))
    assert labels(results)["many"] == WORDS  # the same words as the results page: one partial
