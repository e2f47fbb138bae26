"""Publishing with central DP: only the owner publishes, the ledger refuses overspending, reloading
draws nothing, and the public page shows nothing of a survey that is not published."""

from __future__ import annotations

import json
import re

import pytest
from markupsafe import escape

from support.dashboard import (csrf_token, ensure_researcher, login, make_survey, open_db, post, sample_columns,
                               store_reports)


@pytest.fixture
def habits(app):
    stored = make_survey(app, status="open")
    store_reports(app, "habits", sample_columns(600))
    return stored


def table(app, name):
    db = open_db(app)
    try:
        return db.execute(f"SELECT * FROM {name} ORDER BY 1").fetchall()
    finally:
        db.conn.close()


def publish(client, budget="2", **items):
    assert post(client, "/dashboard/habits/publish/budget", {"budget": budget}).status_code == 303
    return post(client, "/dashboard/habits/publish/release", items or {"counts-age": "1", "top-age": "0.5"})


def test_the_owner_publishes_and_the_public_page_shows_the_stored_release(app, auth_client, habits):
    assert publish(auth_client).status_code == 303
    stored = json.loads(table(app, "releases")[0][3])
    anonymous = app.test_client()
    page = anonymous.get("/r/habits")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    counts = next(item for item in stored["items"] if item["kind"] == "counts")
    assert re.findall(r'<td class="count" data-value="(\d+)">', html) == [str(c) for c in counts["counts"]]
    top = next(item for item in stored["items"] if item["kind"] == "top")
    assert f"Most common answer: <strong>{escape(top['labels'][top['top']])}</strong>" in html
    assert 'class="budget">ε = 2</strong>' in html and 'class="spent">ε = 1.5</strong>' in html
    assert "geometric" in html and "exponential" in html  # the ledger
    assert "Used drugs this year?" in html and "method exact" in html  # protected questions as on the dashboard


def test_reloading_the_public_page_draws_nothing_and_spends_nothing(app, auth_client, habits):
    publish(auth_client)
    before = (table(app, "releases"), table(app, "release_ledger"), table(app, "release_budgets"))
    anonymous = app.test_client()
    pages = {anonymous.get("/r/habits").get_data(as_text=True) for _ in range(5)}
    assert len(pages) == 1  # the same numbers every time
    assert (table(app, "releases"), table(app, "release_ledger"), table(app, "release_budgets")) == before
    auth_client.get("/dashboard/habits/publish")  # nor does the owner's page
    assert table(app, "releases") == before[0]


def test_a_release_beyond_the_budget_is_refused_and_stores_nothing(app, auth_client, habits):
    publish(auth_client, budget="1.5")
    before = (table(app, "releases"), table(app, "release_ledger"))
    refused = post(auth_client, "/dashboard/habits/publish/release", {"counts-age": "0.1"})
    assert refused.status_code == 409
    assert "costs ε = 0.1, but only 0 of the budget of 1.5 is left: refused, nothing was released" in \
        refused.get_data(as_text=True)
    assert (table(app, "releases"), table(app, "release_ledger")) == before


def test_the_budget_is_fixed_after_the_first_release(auth_client, habits):
    publish(auth_client)
    refused = post(auth_client, "/dashboard/habits/publish/budget", {"budget": "10"})
    assert refused.status_code == 409 and "fixed once something has been released" in refused.get_data(as_text=True)


@pytest.mark.parametrize("url,data,message", [
    ("/dashboard/habits/publish/budget", {"budget": "lots"}, "budget: must be a number"),
    ("/dashboard/habits/publish/budget", {"budget": "-1"}, "budget: must be a number of ε in (0, 100]"),
    # a walkthrough found 1e309 (inf to float()) refused as "got nan"
    ("/dashboard/habits/publish/budget", {"budget": "1e309"}, "budget: must be a number of ε in (0, 100], got &#39;1e309&#39;"),
    ("/dashboard/habits/publish/budget", {"budget": "nan"}, "budget: must be a number of ε in (0, 100], got &#39;nan&#39;"),
    ("/dashboard/habits/publish/release", {"counts-age": "abc"}, "counts-age: ε must be a number"),
    ("/dashboard/habits/publish/release", {}, "choose at least one thing to release"),
    # found by the HTTP fuzzer: a positive ε too small for the noise's 32-bit coin was a 500
    ("/dashboard/habits/publish/release", {"counts-age": "1e-300"}, "counts-age: ε = 1e-300 is too small"),
    ("/dashboard/habits/publish/visibility", {"public": "maybe"}, "public: choose 1"),
])
def test_bad_input_is_a_400_naming_the_field(app, auth_client, habits, url, data, message):
    post(auth_client, "/dashboard/habits/publish/budget", {"budget": "2"})
    before = table(app, "release_budgets")
    response = post(auth_client, url, data)
    assert response.status_code == 400
    assert message in response.get_data(as_text=True)
    assert table(app, "release_budgets") == before


def test_a_draft_cannot_be_published(app, auth_client):
    make_survey(app)
    response = post(auth_client, "/dashboard/habits/publish/budget", {"budget": "1"})
    assert response.status_code == 409 and "draft" in response.get_data(as_text=True)


def test_the_public_page_shows_nothing_of_an_unpublished_or_withdrawn_survey(app, auth_client, habits):
    anonymous = app.test_client()
    for slug in ("habits", "nope"):
        response = anonymous.get(f"/r/{slug}")
        assert response.status_code == 404
        assert "Habits" not in response.get_data(as_text=True) and "drugs" not in response.get_data(as_text=True)
    post(auth_client, "/dashboard/habits/publish/budget", {"budget": "2"})
    assert anonymous.get("/r/habits").status_code == 404  # a budget alone publishes nothing
    publish(auth_client)
    assert anonymous.get("/r/habits").status_code == 200
    assert post(auth_client, "/dashboard/habits/publish/visibility", {"public": "0"}).status_code == 303
    withdrawn = anonymous.get("/r/habits")
    assert withdrawn.status_code == 404 and "Habits" not in withdrawn.get_data(as_text=True)
    assert post(auth_client, "/dashboard/habits/publish/visibility", {"public": "1"}).status_code == 303
    assert anonymous.get("/r/habits").status_code == 200
    assert len(table(app, "releases")) == 1  # showing it again drew nothing


def test_only_the_owner_publishes(app, habits):
    owner = app.test_client()
    login(owner)
    for email, role in (("viewer@example.org", "viewer"), ("editor@example.org", "editor")):
        ensure_researcher(app, email)
        token = csrf_token(owner, "/dashboard/habits/edit")
        owner.post("/dashboard/habits/shares", data={"csrf_token": token, "email": email, "role": role, "share": "1"})
    for email in ("viewer@example.org", "editor@example.org"):
        other = app.test_client()
        login(other, email=email)
        assert other.get("/dashboard/habits/publish").status_code == 403
        for url, data in (("/dashboard/habits/publish/budget", {"budget": "5"}),
                          ("/dashboard/habits/publish/release", {"counts-age": "1"}),
                          ("/dashboard/habits/publish/visibility", {"public": "1"})):
            refused = post(other, url, data)
            assert refused.status_code == 403 and b"you cannot share it" in refused.data
    assert table(app, "release_budgets") == [] and table(app, "releases") == []
    stranger = app.test_client()
    ensure_researcher(app, "stranger@example.org")
    login(stranger, email="stranger@example.org")
    assert stranger.get("/dashboard/habits/publish").status_code == 404
    anonymous = app.test_client()
    assert anonymous.get("/dashboard/habits/publish").status_code == 302  # to the login page


def test_the_owners_page_shows_budget_ledger_and_the_public_address(auth_client, habits):
    publish(auth_client, **{"groups-drugs-age": "0.5"})
    html = auth_client.get("/dashboard/habits/publish").get_data(as_text=True)
    assert 'class="budget">2</strong>' in html and 'class="spent">0.5</strong>' in html
    assert 'href="/r/habits"' in html and "reports of drugs within each group of age" in html
    assert "Withdraw it" in html


def test_an_admin_publishes_as_owner(app, habits):
    ensure_researcher(app, "root@example.org", admin=True)
    admin = app.test_client()
    login(admin, email="root@example.org")
    assert publish(admin).status_code == 303  # the survey is owned by another researcher
    assert app.test_client().get("/r/habits").status_code == 200


def test_the_protected_estimates_alone_need_no_budget_and_the_budget_can_still_be_set(app, auth_client, habits):
    """Publishing the protected estimates spends nothing, so it needs no budget: it stores a budget
    of 0, which refuses every ledger entry (the database's trigger too) until the owner sets one."""
    page = auth_client.get("/dashboard/habits/publish").get_data(as_text=True)
    assert "Set a release budget above" in page and 'name="protected-only" value="1" checked' in page
    assert post(auth_client, "/dashboard/habits/publish/release", {"protected-only": "1"}).status_code == 303
    assert [row[1:] for row in table(app, "release_budgets")] == [(0.0, 1)] and table(app, "release_ledger") == []
    assert app.test_client().get("/r/habits").status_code == 200
    refused = post(auth_client, "/dashboard/habits/publish/release", {"counts-age": "1"})
    assert refused.status_code == 409 and table(app, "release_ledger") == []
    db = open_db(app)
    try:
        with pytest.raises(Exception, match="exceed the survey's release budget"):
            db.execute("INSERT INTO release_ledger (survey_id, release_id, mechanism, epsilon, realized_epsilon, "
                       "sensitivity, what) SELECT survey_id, id, 'geometric', 0.5, 0.5, 2, 'x' FROM releases")
    finally:
        db.conn.close()
    assert publish(auth_client, budget="2").status_code == 303  # set after the free release, then spent
    assert [row[1] for row in table(app, "release_budgets")] == [2.0] and len(table(app, "release_ledger")) == 2
    refused = post(auth_client, "/dashboard/habits/publish/budget", {"budget": "10"})
    assert refused.status_code == 409


def test_the_public_page_keeps_every_release_s_tables_whose_epsilon_stays_spent(app, auth_client, habits):
    """A walkthrough found the public page dropping release 1's table after release 2, while the ledger
    still counted its ε: every release is listed, newest first, each with its ε and day."""
    assert publish(auth_client, budget="3", **{"counts-age": "1"}).status_code == 303
    assert post(auth_client, "/dashboard/habits/publish/release", {"top-age": "0.5"}).status_code == 303
    rows = table(app, "releases")
    first, second = (json.loads(row[3]) for row in rows)
    html = app.test_client().get("/r/habits").get_data(as_text=True)
    assert re.findall(r'<td class="count" data-value="(\d+)">', html) == [str(c) for c in first["items"][0]["counts"]]
    assert "Most common answer" in html
    numbers = re.findall(r'<section class="release[^"]*" data-number="(\d+)"', html)
    assert numbers == ["2", "1"], numbers
    assert re.search(r'id="release-1">Release 1, [^<]*· ε = 1<', html)
    assert re.search(r'id="release-2">Release 2, [^<]*· ε = 0.5<', html)
    assert 'class="spent">ε = 1.5</strong>' in html
