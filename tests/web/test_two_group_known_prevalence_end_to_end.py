"""A two-group design's known-answer item end to end (issue 38; Höglinger & Diekmann 2017): a survey with two
questions of known prevalence 0 served by the real app over real HTTP, 200 submissions through the JSON API —
for ``ghost`` answers whose π interval excludes 0 (respondents saying yes falsely), for ``phantom`` answers
whose interval includes it — then the results page, the installed ``deniable estimate --db … --format json``
(and its table), the API's estimates and the estimate from the exported codebook and responses all report the
false positives of :func:`estimate_two_group`, with the warning exactly for ``ghost``; the respondent's page
and design never name the known prevalence."""

from __future__ import annotations

import csv
import html
import io
import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from deniable.estimators.two_group import estimate_two_group
from deniable.server.store.db import connect
from deniable.server.store.surveys import insert_survey
from deniable.server.survey.definition import parse_definition

SLUG = "known"
DENIABLE = str(Path(sys.executable).with_name("deniable"))
DEFINITION = {"slug": SLUG, "title": "Known answers", "questions": [
    {"id": "ghost", "text": "Have you ever visited Lake Veltrin?", "type": "two_group", "model": "CDM",
     "p": [0.3, 0.7], "known_prevalence": 0},
    {"id": "phantom", "text": "Have you ever read the Veltrin Gazette?", "type": "two_group", "model": "SLD",
     "p": [0.3, 0.8], "known_prevalence": 0},
]}
PER_GROUP = 100
YES = {"ghost": [51, 79], "phantom": [70, 20]}  # ghost: π ≈ 0.3; phantom: P(yes | g) = 1 − p_g, π ≈ 0
WARNING = ("the interval excludes the known 0 %: respondents are answering yes when they should not — the design's "
           "other estimates may be biased upward")


def reports() -> list[dict]:
    out = []
    for g in (1, 2):
        for i in range(PER_GROUP):
            out.append({qid: {"group": g, "answer": 0 if i < YES[qid][g - 1] else 1} for qid in YES})
    return out


def post(base, body):
    request = urllib.request.Request(f"{base}/api/v1/surveys/{SLUG}/responses", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.status


@pytest.mark.slow
def test_known_answer_items_warn_exactly_when_the_interval_excludes_the_known_value(app, live_server, db_path,
                                                                                     auth_client, tmp_path):
    survey = parse_definition(DEFINITION)
    db = connect(db_path)
    try:
        insert_survey(db, survey, status="open", owner_id=1)
    finally:
        db.conn.close()
    # the respondent's design and page never say which question has a known answer
    design = urllib.request.urlopen(f"{live_server}/api/v1/surveys/{SLUG}", timeout=30).read().decode()
    page = urllib.request.urlopen(f"{live_server}/s/{SLUG}", timeout=30).read().decode()
    assert "Lake Veltrin" in html.unescape(page)
    assert all("known_prevalence" not in text and "prevalence" not in text.lower() for text in (design, page))
    assert all(post(live_server, {"reports": r}) in (200, 201) for r in reports())

    expected = {}
    for q in survey.questions:
        r = estimate_two_group(q.mechanism.model, list(q.mechanism.p), YES[q.id], [PER_GROUP, PER_GROUP])
        assert not r.outside_model
        expected[q.id] = r
    assert expected["ghost"].lower["pi"] > 0 and expected["phantom"].lower["pi"] == 0  # one excludes 0, one not
    words = {qid: survey.question(qid).qtype.validation_words(survey.question(qid), r)["words"]
             for qid, r in expected.items()}
    assert words["ghost"].endswith(f"Warning: {WARNING}") and "Warning" not in words["phantom"]

    def check(record, qid):
        r, fp = expected[qid], record["false_positive"]
        assert record["known_prevalence"] == 0
        assert fp["estimate"] == pytest.approx(r.estimate["pi"], abs=1e-12)
        assert (fp["ci_low"], fp["ci_high"]) == pytest.approx((r.lower["pi"], r.upper["pi"]), abs=1e-12)
        assert fp["excludes_known"] is (qid == "ghost") and (fp["warning"] == WARNING) is (qid == "ghost")
        assert fp["words"] == words[qid] and fp["statement"].startswith("Known prevalence 0 %: an estimated ")

    # the installed command, JSON and table
    run = subprocess.run([DENIABLE, "estimate", "--db", db_path, SLUG, "--format", "json"], capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    shown = {q["id"]: q for q in json.loads(run.stdout)["questions"]}
    for qid in expected:
        check(shown[qid], qid)
    run = subprocess.run([DENIABLE, "estimate", "--db", db_path, SLUG], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    ghost_block, phantom_block = run.stdout.split("Veltrin Gazette")
    assert f"{words['ghost']}." in ghost_block and f"{words['phantom']}." in phantom_block
    assert run.stdout.count(WARNING) == 1
    run = subprocess.run([DENIABLE, "estimate", "--db", db_path, SLUG, "--format", "csv"], capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    rows = [row for row in csv.DictReader(io.StringIO(run.stdout)) if row["option"] == "false_positive"]
    assert {row["question"]: row["label"] for row in rows} == words
    assert all(float(row["estimate"]) == pytest.approx(expected[row["question"]].estimate["pi"]) for row in rows)

    # the API
    api = {q["id"]: q for q in auth_client.get(f"/api/v1/surveys/{SLUG}/estimates").get_json()["questions"]}
    assert api == {qid: shown[qid] for qid in api}
    for qid in expected:
        check(api[qid], qid)

    # the results page
    page = html.unescape(auth_client.get(f"/dashboard/{SLUG}/results").get_data(as_text=True))
    for qid in expected:
        section = page.split(f'id="q-{qid}"')[1].split("</section>")[0]
        assert words[qid] in section
        assert (WARNING in section) is (qid == "ghost")
        assert 'data-option="false_positive"' in section

    # the exported codebook keeps the key, and its estimate says the same
    out = tmp_path / "export"
    run = subprocess.run([DENIABLE, "export", SLUG, "--db", db_path, "-o", str(out)], capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    codebook = json.loads((out / f"{SLUG}-codebook.json").read_text())
    assert all(q["known_prevalence"] == 0 for q in codebook["questions"])
    run = subprocess.run([DENIABLE, "estimate", str(out / f"{SLUG}-codebook.json"), str(out / f"{SLUG}-responses.csv"),
                          "--format", "json"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    again = {q["id"]: q for q in json.loads(run.stdout)["questions"]}
    assert all(again[qid]["false_positive"] == shown[qid]["false_positive"] for qid in expected)
