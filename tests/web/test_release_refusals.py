"""Releases at the edges: a tiny ε draws its noise in a few draws, a broken random source is refused
(400 naming the field, nothing stored or spent), and pages number releases per survey."""

from __future__ import annotations

import json
import re
import time

import numpy as np
import pytest

from support.dashboard import DEFINITION, make_survey, open_db, post, sample_columns, store_reports


@pytest.fixture
def habits(app):
    stored = make_survey(app, status="open")
    store_reports(app, "habits", sample_columns(600))
    return stored


def rows(app, sql):
    db = open_db(app)
    try:
        return db.execute(sql).fetchall()
    finally:
        db.conn.close()


def never_failing(size):
    """A real uint32 source that is always 0: every coin of the noise succeeds, so it never ends."""
    return np.zeros(size, dtype=np.uint32)


def test_a_release_at_epsilon_1e9_is_drawn_and_states_its_realized_epsilon(app, auth_client, habits):
    assert post(auth_client, "/dashboard/habits/publish/budget", {"budget": "1"}).status_code == 303
    answer = post(auth_client, "/dashboard/habits/publish/release", {"counts-age": "1e-9"})
    assert answer.status_code == 303
    item = json.loads(rows(app, "SELECT document FROM releases")[0][0])["items"][0]
    assert item["epsilon"] == 1e-9 and 0 < item["realized_epsilon"] <= 1e-9
    assert item["threshold"] == 2**32 - 2 and sum(item["counts"]) == 600


@pytest.mark.parametrize("data, field", [({"counts-age": "1e-9"}, "counts-age"), ({"counts-age": "1"}, "counts-age"),
                                         ({"top-age": "0.5"}, "top-age"),
                                         ({"groups-drugs-age": "1"}, "groups-drugs-age")])
def test_noise_that_cannot_be_drawn_within_its_bound_is_refused_and_spends_nothing(app, auth_client, habits,
                                                                                   data, field):
    assert post(auth_client, "/dashboard/habits/publish/budget", {"budget": "2"}).status_code == 303
    # the exponential mechanism's proposals reject 2^32 − 1 forever; the geometric's coins never fail on 0
    app.config["RELEASE_DRAW"] = never_failing if not field.startswith("top") else \
        (lambda size: np.full(size, 2**32 - 1, dtype=np.uint32))
    refused = post(auth_client, "/dashboard/habits/publish/release", data)
    assert refused.status_code == 400
    html = refused.get_data(as_text=True)
    assert f"{field}: the noise took more than" in html and "refused, nothing was released or spent" in html
    assert rows(app, "SELECT count(*) FROM releases") == [(0,)]
    assert rows(app, "SELECT count(*) FROM release_ledger") == [(0,)]
    app.config.pop("RELEASE_DRAW")  # the same release with the OS CSPRNG goes through
    assert post(auth_client, "/dashboard/habits/publish/release", data).status_code == 303


def test_pages_number_releases_per_survey_not_across_surveys(app, auth_client, habits):
    make_survey(app, {**DEFINITION, "slug": "other"}, status="open")
    store_reports(app, "other", sample_columns(300, seed=3))
    for slug in ("other", "other", "habits"):  # the stored id of habits' release is 3
        assert post(auth_client, f"/dashboard/{slug}/publish/budget", {"budget": "2"}).status_code in (303, 409)
        assert post(auth_client, f"/dashboard/{slug}/publish/release", {"counts-age": "0.5"}).status_code == 303
    assert rows(app, "SELECT r.id FROM releases r JOIN surveys s ON s.id = r.survey_id "
                     "WHERE s.slug = 'habits'") == [(3,)]
    for page in (app.test_client().get("/r/habits"), auth_client.get("/dashboard/habits/publish")):
        html = page.get_data(as_text=True)
        ledger = html[html.index('class="ledger"'):]
        assert re.findall(r"<tr><td>(\d+)</td><td>\d{4}-", ledger) == ["1"]
    public = app.test_client().get("/r/habits").get_data(as_text=True)
    assert 'data-release="1"' in public
    other = app.test_client().get("/r/other").get_data(as_text=True)
    assert 'data-release="2"' in other
    ledger = other[other.index('class="ledger"'):]
    assert re.findall(r"<tr><td>(\d+)</td><td>\d{4}-", ledger) == ["1", "2"]


def test_a_release_whose_noise_outlives_its_deadline_is_refused_and_spends_nothing(app, auth_client, habits,
                                                                                   monkeypatch):
    """A stalled random source (each draw takes 0.3 s) against a 0.2 s deadline: a 400 naming the
    item, nothing stored, nothing spent, and the worker free again well before its timeout."""
    from deniable.server.survey import release

    monkeypatch.setattr(release, "DEADLINE", 0.2)

    def stalled(size):
        time.sleep(0.3)
        return np.random.default_rng(1).integers(0, 2**32, size, dtype=np.uint32)

    assert post(auth_client, "/dashboard/habits/publish/budget", {"budget": "2"}).status_code == 303
    app.config["RELEASE_DRAW"] = stalled
    refused = post(auth_client, "/dashboard/habits/publish/release", {"counts-age": "1", "counts-drugs": "0.5"})
    assert refused.status_code == 400
    html = refused.get_data(as_text=True)
    assert "the noise took longer than 0.2 s" in html and "refused, nothing was released or spent" in html
    assert rows(app, "SELECT count(*) FROM releases") == [(0,)]
    assert rows(app, "SELECT count(*) FROM release_ledger") == [(0,)]
