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


def test_the_fake_respondents_bound_covers_what_fakes_do(auth_client, battery, db_path):
    """The results page's "m fake respondents could move an estimate by up to ± x points", for every
    categorical question (k-ary randomized response, every design, asked directly): x is positive and at
    least what m fakes who all send one report do to the unbiased estimate, computed by estimating again
    from the counts with the fakes added (the page rounds x to 0.1 point)."""
    import re

    import numpy as np

    from deniable.server.store.db import connect
    from deniable.server.store.surveys import survey_stats

    m = 25
    page = auth_client.get(f"/dashboard/{SLUG}/results", query_string={"fake": m}).get_data(as_text=True)
    db = connect(db_path)
    try:
        stats = survey_stats(db, battery)
    finally:
        db.conn.close()
    checked = []
    for q in battery.survey.questions:
        if not q.qtype.categorical:
            continue
        section = page.split(f'id="q-{q.id}"')[1].split("</section>")[0]
        shown = float(re.search(r"fake respondents could move an estimate by up to ± (-?[\d.]+) points", section)
                      .group(1)) / 100
        counts = np.asarray(stats[q.id], dtype=np.int64)

        def unbiased(c):
            result = q.qtype.estimate(q, c, method="exact", confidence=0.95, simultaneous=False)
            return np.array([row["estimate"] for row in q.qtype.record(q, result)["options"]])

        before = unbiased(counts)
        moved = max(np.max(np.abs(unbiased(counts + m * np.eye(len(counts), dtype=np.int64)[s]) - before))
                    for s in range(len(counts)))
        assert shown > 0 and moved <= shown + 0.0005, (q.id, shown, moved)
        if not q.protected and not q.design:  # asked directly: one fake moves a share by at most 1/n
            assert shown == pytest.approx(m / counts.sum(), abs=0.0005), q.id
        checked.append(q.id)
    assert {"choice_0", "choice_3", "choice_4", "choice_6", "choice_7", "group"} <= set(checked)
