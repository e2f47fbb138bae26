"""The results page names the interval methods in plain words, with each technical name one click away."""

from __future__ import annotations

import re

from deniable import estimators
from deniable.server.web.dashboard.results import METHOD_LABELS, METHOD_NOTES
from support.dashboard import make_survey


def test_every_method_has_a_plain_label_and_a_note():
    assert set(METHOD_LABELS) == set(METHOD_NOTES) == set(estimators.METHODS)


def test_the_results_page_shows_plain_labels_and_the_technical_names_behind_a_disclosure(app, auth_client):
    stored = make_survey(app, status="open")
    page = auth_client.get(f"/dashboard/{stored.slug}/results?method=wilson").get_data(as_text=True)
    options = dict(re.findall(r'<option[^>]*value="([^"]+)"[^>]*>([^<]+)</option>', page))
    assert {name: options[name] for name in estimators.METHODS} == METHOD_LABELS
    assert re.search(r'<option[^>]*selected[^>]*value="wilson"|<option[^>]*value="wilson"[^>]*selected', page)
    disclosure = page[page.index("What are these interval methods?"):]
    assert "Feldman–Cousins" in disclosure and "<code>clopper-pearson</code>" in disclosure
