"""Battery: every registered question type's estimates are the same on every surface, and every
headline lies in its own interval."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from deniable.server.cli import cli
from deniable.server.survey.estimates import survey_estimates, question_json

from support.battery import SLUG, question_ids


def test_the_results_api_the_export_and_deniable_estimate_agree(auth_client, battery, tmp_path):
    shown = auth_client.get(f"/api/v1/surveys/{SLUG}/estimates").get_json()
    assert [q["id"] for q in shown["questions"]][1:] == question_ids()
    files = {}
    for name in ("codebook.json", "responses.csv", "responses.parquet", "estimates.json"):
        response = auth_client.get(f"/dashboard/{SLUG}/export/{name}")
        assert response.status_code == 200, name
        files[name] = tmp_path / name
        files[name].write_bytes(response.data)
    assert json.loads(files["estimates.json"].read_text())["questions"] == shown["questions"]
    for data in ("responses.csv", "responses.parquet"):
        result = CliRunner().invoke(cli, ["estimate", str(files["codebook.json"]), str(files[data]), "--format", "json"])
        assert result.exit_code == 0, result.output
        assert json.loads(result.output)["questions"] == shown["questions"], data


def test_the_results_page_shows_every_question(auth_client, battery):
    html = auth_client.get(f"/dashboard/{SLUG}/results").get_data(as_text=True)
    for qid in question_ids():
        assert f'id="q-{qid}"' in html, qid
        section = html.split(f'id="q-{qid}"')[1].split("</section>")[0]
        assert "no answers yet" not in section, qid


@pytest.mark.parametrize("seed", range(6))
def test_every_headline_lies_in_its_own_interval(db_path, owner_id, seed):
    """Small samples push unbiased estimates out of [0, 1]: the headline never leaves its interval."""
    from support.battery import battery_survey

    from deniable.server.store.db import connect
    from deniable.server.store.surveys import survey_stats

    stored = battery_survey(db_path, n=25, seed=seed, owner_id=owner_id)
    db = connect(db_path)
    stats = survey_stats(db, stored)
    for q, result in survey_estimates(stored.survey, stats):
        record = question_json(q, result)
        for headline, low, high in q.qtype.headlines(q, record):
            if headline is None:
                continue
            assert (low is None or headline >= low - 1e-12) and (high is None or headline <= high + 1e-12), \
                (q.id, headline, low, high)
