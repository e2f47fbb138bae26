"""Where a researcher who weighted on the Weighting page looks next, the dashboard says what is not
weighted: the Weighting page names the unweighted views (and ``deniable plan --deff``), and
Publish says that releases are of unweighted counts and why."""

from __future__ import annotations

import re

from support.dashboard import DEFINITION, make_survey

SLUG = DEFINITION["slug"]


def text(page: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", page))


def test_the_weighting_page_says_which_views_are_unweighted(app, auth_client):
    make_survey(app, status="open")
    page = text(auth_client.get(f"/dashboard/{SLUG}/weighting").get_data(as_text=True))
    assert "the results, cross-tab, subgroups and regression pages can show the same raked estimates" in page
    assert "Monitoring (Over time) and public releases (Publish) are of the unweighted respondents" in page
    assert "deniable plan --k K --margin M --deff X" in page


def test_publish_says_releases_are_of_unweighted_counts(app, auth_client):
    make_survey(app, status="open")
    response = auth_client.get(f"/dashboard/{SLUG}/publish")
    assert response.status_code == 200
    assert "Releases are of unweighted counts: weights from the Weighting page never enter them" in \
        text(response.get_data(as_text=True))
