"""The two-group non-compliance designs end to end (issue 38): a survey with a CDM, a CDMsym, an SLD and a
UQTunknown question served by the real app over real HTTP, 240 single submissions through the JSON API (the
answers of compliant respondents, drawn by the Python twin of the browser's sampler), then the installed
``deniable estimate --db … --format json``, the results page, the API's estimates and the installed
``deniable export --stata --spss`` all agree with :func:`estimate_two_group` on the per-group counts sent."""

from __future__ import annotations

import html
import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from deniable.client.two_group import comply, draw
from deniable.estimators.two_group import estimate_two_group
from deniable.server.store.db import connect
from deniable.server.store.surveys import insert_survey
from deniable.server.survey.definition import parse_definition

SLUG = "nc"
DENIABLE = str(Path(sys.executable).with_name("deniable"))
DEFINITION = {"slug": SLUG, "title": "Non-compliance", "questions": [
    {"id": "cdm", "text": "Have you ever cheated on an exam?", "type": "two_group", "model": "CDM", "p": [0.3, 0.7]},
    {"id": "sym", "text": "Have you ever copied homework?", "type": "two_group", "model": "CDMsym",
     "p": [0.2, 0.3, 0.3, 0.2], "group_share": 0.4},
    {"id": "sld", "text": "Have you ever plagiarized?", "type": "two_group", "model": "SLD", "p": [0.3, 0.8]},
    {"id": "uqt", "text": "Have you ever bought a thesis?", "type": "two_group", "model": "UQTunknown",
     "p": [0.3, 0.8], "unrelated": "Do you prefer tea to coffee?"},
    {"id": "year", "text": "Your year?", "options": ["First", "Later"]},
]}
N = 240


def reports(survey, rng) -> list[dict]:
    """N respondents' reports: compliant answers from the twin sampler, with diverse true answers."""
    out = [{} for _ in range(N)]
    for q in survey.questions:
        if q.type != "two_group":
            for i, value in enumerate(rng.integers(0, 2, N).tolist()):
                out[i][q.id] = value
            continue
        groups, instructions = draw(q.mechanism, N, rng)
        truth = (rng.random(N) < 0.35).astype(int)
        answers = comply(q.mechanism, instructions, truth, (rng.random(N) < 0.5).astype(int))
        for i, (g, a) in enumerate(zip(groups.tolist(), answers.tolist())):
            out[i][q.id] = {"group": g, "answer": a}
    return out


def counts_of(sent, qid) -> tuple[list[int], list[int]]:
    yes, n = [0, 0], [0, 0]
    for r in sent:
        g, a = r[qid]["group"] - 1, r[qid]["answer"]
        n[g] += 1
        yes[g] += a == 0
    return yes, n


def post(base, body):
    request = urllib.request.Request(f"{base}/api/v1/surveys/{SLUG}/responses", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.status


@pytest.mark.slow
def test_four_models_submitted_over_http_estimate_as_estimate_two_group(app, live_server, db_path, auth_client,
                                                                          tmp_path):
    survey = parse_definition(DEFINITION)
    db = connect(db_path)
    try:
        insert_survey(db, survey, status="open", owner_id=1)
    finally:
        db.conn.close()
    design = json.load(urllib.request.urlopen(f"{live_server}/api/v1/surveys/{SLUG}", timeout=30))
    by_id = {q["id"]: q for q in design["questions"]}
    assert by_id["sym"]["ldp"] is True and by_id["cdm"]["ldp"] is False and by_id["uqt"]["unrelated"]
    sent = reports(survey, np.random.default_rng(38))
    assert all(post(live_server, {"reports": r}) in (200, 201) for r in sent)
    # a report with the instruction in it is refused
    bad = urllib.request.Request(f"{live_server}/api/v1/surveys/{SLUG}/responses", method="POST",
                                 headers={"Content-Type": "application/json"},
                                 data=json.dumps({"reports": {**sent[0], "cdm": {"group": 1, "answer": 0,
                                                                                 "instruction": "yes"}}}).encode())
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(bad, timeout=30)
    assert refused.value.code == 400

    expected = {}
    for q in survey.questions[:4]:
        yes, n = counts_of(sent, q.id)
        assert min(yes) > 0 and min(n[g] - yes[g] for g in range(2)) > 0  # diverse answers in both groups
        expected[q.id] = (yes, n, estimate_two_group(q.mechanism.model, list(q.mechanism.p), yes, n))

    # the installed command
    run = subprocess.run([DENIABLE, "estimate", "--db", db_path, SLUG, "--format", "json"], capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    shown = {q["id"]: q for q in json.loads(run.stdout)["questions"]}
    api = auth_client.get(f"/api/v1/surveys/{SLUG}/estimates").get_json()
    assert {q["id"]: q for q in api["questions"]}["cdm"] == shown["cdm"]
    for qid, (yes, n, result) in expected.items():
        record = shown[qid]
        assert record["yes"] == yes and record["n_group"] == n and record["n"] == N
        assert record["design_p"] == list(result.p)
        for name in result.parameters:
            row = record["parameters"][name]
            for key, value in (("estimate", result.estimate), ("ci_low", result.lower), ("ci_high", result.upper)):
                if np.isnan(value[name]):
                    assert row[key] is None
                else:
                    assert row[key] == pytest.approx(value[name], abs=1e-12), (qid, name, key)
        assert record["statement"] == result.statement()
    assert shown["sym"]["epsilon"] == survey.question("sym").epsilon and shown["cdm"]["epsilon"] is None

    # the results page: π and the nuisance parameter with their exact intervals and the sentence
    page = html.unescape(auth_client.get(f"/dashboard/{SLUG}/results").get_data(as_text=True))
    for qid, (yes, n, result) in expected.items():
        section = page.split(f'id="q-{qid}"')[1].split("</section>")[0]
        assert result.statement() in section and result.statement("pi") in section, qid
        assert f'data-value="{result.lower["pi"]}"' in section and f'data-value="{result.upper["pi"]}"' in section
    assert "not ε-LDP; deniability rests on the unrelated question" in page.split('id="q-uqt"')[1]

    # the export's two columns per question (labelled) hold the same counts
    out = tmp_path / "export"
    run = subprocess.run([DENIABLE, "export", SLUG, "--db", db_path, "-o", str(out), "--stata", "--spss"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    stata = pd.read_stata(out / f"{SLUG}-responses.dta", convert_categoricals=False)
    import pyreadstat

    spss, meta = pyreadstat.read_sav(str(out / f"{SLUG}-responses.sav"))
    for qid, (yes, n, _) in expected.items():
        for frame in (stata, spss):
            group, answer = frame[f"{qid}_group"], frame[f"{qid}_answer"]
            assert [int((group == g).sum()) for g in (1, 2)] == n
            assert [int(((group == g) & (answer == 1)).sum()) for g in (1, 2)] == yes
        assert meta.variable_value_labels[f"{qid}_answer"] == {0.0: "No", 1.0: "Yes"}
    codebook = json.loads((out / f"{SLUG}-codebook.json").read_text())
    entries = {q["id"]: q for q in codebook["questions"]}
    sym, uqt = entries["sym"], entries["uqt"]
    assert sym["p"] == [0.2, 0.3, 0.3, 0.2] and sym["model"] == "CDMsym" and sym["group_share"] == 0.4
    mech = survey.question("sym").mechanism
    assert sym["randomization"]["p"] == list(mech.p) != sym["p"]  # realized, beside the declared
    assert sym["randomization"]["group_share"] == mech.group_share and sym["randomization"]["ldp"] is True
    assert sym["randomization"]["realized_epsilon"] == survey.question("sym").epsilon
    assert uqt["randomization"]["privacy"].startswith("not ε-LDP; deniability rests on the unrelated question")
    assert entries["cdm"]["randomization"]["realized_epsilon"] is None
    # the responses CSV with its codebook estimates the same (the export a colleague analyses)
    run = subprocess.run([DENIABLE, "export", SLUG, "--db", db_path, "-o", str(out)], capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    run = subprocess.run([DENIABLE, "estimate", str(out / f"{SLUG}-codebook.json"), str(out / f"{SLUG}-responses.csv"),
                          "--format", "json"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    again = {q["id"]: q for q in json.loads(run.stdout)["questions"]}
    assert all(again[qid]["parameters"] == shown[qid]["parameters"] for qid in expected)
