"""Battery: one orchestration (server/survey/analysis.py) behind every front end.

The subgroups page and ``deniable estimate --by`` give the same groups ("not answered" and empty
ones included) and the same numbers for every type of question; a cross-tab works for two
categorical questions and is refused otherwise, with the type's reason, by the page (a 4xx) and by
the command line (one line); every number a page shows lies inside its own interval.
"""

from __future__ import annotations

import csv
import html
import io
import json
import re

import pytest
from click.testing import CliRunner

from deniable.server.cli import cli
from deniable.server.survey.questions import base

from support.battery import GROUP, SLUG, battery_survey, question_ids


def _export(auth_client, tmp_path, slug=SLUG) -> dict:
    files = {}
    for name in ("codebook.json", "responses.csv"):
        response = auth_client.get(f"/dashboard/{slug}/export/{name}")
        assert response.status_code == 200, name
        files[name] = tmp_path / name
        files[name].write_bytes(response.data)
    return files


def _estimate(files, *args):
    return CliRunner().invoke(cli, ["estimate", str(files["codebook.json"]), str(files["responses.csv"]), *args])


def _number(text: str):
    return None if text in ("", "None", "nan") else float(text)


def _cell(tag: str, name: str):
    found = re.search(rf'{name}="([^"]*)"', tag)
    return None if found is None else _number(found.group(1))


def page_rows(body: str) -> list[dict]:
    """Every table row of a page section: the headline shown, the unbiased estimate, the interval."""
    rows = []
    for tr in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S):
        estimate = re.search(r'<td class="estimate[^"]*"[^>]*>', tr)
        if estimate is None:
            continue
        tag = estimate.group(0)
        shown = _cell(tag, "data-value")
        unbiased = _cell(tag, "data-unbiased") if "data-unbiased" in tag else shown
        low = re.search(r'class="ci-low" data-value="([^"]*)"', tr)
        high = re.search(r'class="ci-high" data-value="([^"]*)"', tr)
        rows.append({"shown": shown, "unbiased": unbiased, "ci_low": _number(low.group(1)) if low else None,
                     "ci_high": _number(high.group(1)) if high else None})
    return rows


def subgroup_sections(page: str) -> dict:
    """{group label: (n, rows)} of the subgroups page, and the labels it lists as empty."""
    groups = {}
    for label, n, body in re.findall(r'<section class="subgroup card"[^>]*data-group="([^"]*)" data-n="(\d+)">'
                                     r"(.*?)</section>", page, re.S):
        groups[html.unescape(label)] = (int(n), page_rows(body))
    empty = re.search(r'<p class="meta-note" id="empty-groups">No respondents yet in: (.*?) \(n = 0', page)
    return groups, (html.unescape(empty.group(1)).split(", ") if empty else [])


def _inside(value, low, high):
    return value is None or ((low is None or value >= low - 1e-12) and (high is None or value <= high + 1e-12))


@pytest.mark.parametrize("qid", question_ids())
def test_subgroups_page_equals_deniable_estimate_by(auth_client, battery, tmp_path, qid):
    response = auth_client.get(f"/dashboard/{SLUG}/subgroups", query_string={"question": qid, "by": GROUP})
    assert response.status_code == 200, response.get_data(as_text=True)[-2000:]
    shown, empty = subgroup_sections(response.get_data(as_text=True))
    files = _export(auth_client, tmp_path)
    result = _estimate(files, "--by", GROUP, "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    (question,) = [q for q in data["questions"] if q["id"] == qid]
    labels = [g["group"] for g in question["groups"]]
    options = battery.survey.question(GROUP).options
    assert labels == [*options, "not answered"]  # every option, then those who skipped the grouping question
    assert [g["group"] for g in question["groups"] if g["n"] == 0] == empty
    assert {g["group"]: g["n"] for g in question["groups"] if g["n"]} == {k: n for k, (n, _) in shown.items()}
    assert sum(n for n, _ in shown.values()) > 0
    # the same numbers, row by row: the page's rows are the estimates CSV's rows of each group
    out = _estimate(files, "--by", GROUP, "--format", "csv")
    assert out.exit_code == 0, out.output
    rows = [r for r in csv.DictReader(io.StringIO(out.output)) if r["question"] == qid]
    for label, (n, page) in shown.items():
        expected = [r for r in rows if r["group"] == label]
        assert len(page) == len(expected), label
        for mine, theirs in zip(page, expected):
            assert mine["ci_low"] == _number(theirs["ci_low"]) and mine["ci_high"] == _number(theirs["ci_high"])
            assert mine["unbiased"] == _number(theirs["estimate"]), (label, theirs["option"])
            assert _inside(mine["shown"], mine["ci_low"], mine["ci_high"]), (label, mine)
    for label in empty:  # an empty group: one row, n = 0, no estimates
        (row,) = [r for r in rows if r["group"] == label]
        assert row["n"] == "0" and row["estimate"] == ""


def test_subgroups_not_answered_is_a_group_of_its_own(auth_client, db_path, owner_id, tmp_path):
    """choice_2 is optional: grouped by it, those who skipped it are "not answered", on both front ends."""
    import numpy as np

    from deniable.server.store.db import connect
    from deniable.server.store.responses import insert_many
    from deniable.server.survey.simulate import simulate_dataset
    from support.battery import battery_truth

    stored = battery_survey(db_path, owner_id=owner_id, n=0)
    data = simulate_dataset(stored.survey, battery_truth(stored.survey), 300, np.random.default_rng(3))
    data.columns["choice_2"][:40] = -1  # 40 respondents skip the optional question
    db = connect(db_path)
    insert_many(db, stored, data.columns)
    db.conn.close()
    page = auth_client.get(f"/dashboard/{SLUG}/subgroups?question=choice_0&by=choice_2").get_data(as_text=True)
    shown, _ = subgroup_sections(page)
    files = _export(auth_client, tmp_path)
    data = json.loads(_estimate(files, "--by", "choice_2", "--format", "json").output)
    (question,) = [q for q in data["questions"] if q["id"] == "choice_0"]
    skipped = question["groups"][-1]
    assert skipped["group"] == "not answered" and skipped["not_answered"] and skipped["n"] == 40
    assert shown["not answered"][0] == skipped["n"]
    assert sum(g["n"] for g in question["groups"]) == 300


@pytest.mark.parametrize("qid", question_ids())
def test_crosstab_of_every_type(auth_client, battery, tmp_path, qid):
    """Two categorical questions cross; any other type is a 4xx (page) or one line (CLI) with its reason."""
    files = _export(auth_client, tmp_path)
    survey = battery.survey
    q = survey.question(qid)
    partners = [GROUP] + [other for other in question_ids() if other != qid and other.endswith("_0")]
    for other in partners:
        p = survey.question(other)
        response = auth_client.get(f"/dashboard/{SLUG}/crosstab", query_string={"row": qid, "col": other})
        page = html.unescape(response.get_data(as_text=True))
        result = _estimate(files, "--crosstab", qid, other, "--format", "json")
        # the first of the two that cannot be crossed says why: its type, or its design (row first)
        refusal = next(((x, f"question {x.id!r} is {x.qtype.label}: not available for this type: {x.qtype.crosstab}")
                        if x.qtype.crosstab is not None else (x, f"question {x.id!r}: {_design_refusal(x)}")
                        for x in (q, p) if x.qtype.crosstab is not None or _design_refusal(x)), None)
        if refusal is None:
            assert response.status_code == 200, (qid, other)
            assert result.exit_code == 0, result.output
            cells = json.loads(result.output)["cells"]
            joint = re.findall(r'<table class="crosstab joint">(.*?)</table>', page, re.S)[0]
            tds = re.findall(r'<td data-label[^>]*>', joint)
            assert len(tds) == len(cells) == q.k * p.k
            for td, cell in zip(tds, cells):
                shown = _cell(td, "data-value")
                assert shown == cell["headline"] and _cell(td, "data-ci-low") == cell["ci_low"]
                assert _inside(shown, cell["ci_low"], cell["ci_high"]) and 0 <= shown <= 1
                assert _cell(td, "data-unbiased") in (None, cell["estimate"])
        else:
            _, reason = refusal
            assert response.status_code == 400, (qid, other, response.status_code)
            assert f"crosstab: {reason}" in page, (qid, other)
            assert result.exit_code == 2, result.output
            assert result.output.splitlines()[-1] == f"Error: --crosstab: {reason}", result.output
            assert "Traceback" not in result.output


def _design_refusal(q) -> str | None:
    """Why a question's randomized-response design cannot be cross-tabbed (None: it can), as the
    estimators declare it (docs/statistics.md: the exact intervals need each report i to have one
    probability under answer i and a smaller one under every other, once a binary design whose
    reports both point the other way has them swapped; most custom matrices do not)."""
    if not q.design:
        return None
    from deniable.estimators.joint import option_channels, own_reports
    from deniable.server.survey.questions.choice import design_of

    try:
        option_channels(own_reports(design_of(q))[0])
    except ValueError as exc:
        return str(exc)
    return None


@pytest.mark.parametrize("seed", range(4))
def test_results_page_and_api_show_headlines_inside_their_intervals(auth_client, db_path, owner_id, seed):
    """25 respondents push unbiased estimates out of [0, 1]: what the page and the API show stays inside."""
    stored = battery_survey(db_path, n=25, seed=seed, owner_id=owner_id)
    page = auth_client.get(f"/dashboard/{SLUG}/results").get_data(as_text=True)
    checked = 0
    for qid, body in re.findall(r'<section class="question-results card" id="q-([^"]+)".*?>(.*?)</section>',
                                page, re.S):
        for row in page_rows(body):
            assert _inside(row["shown"], row["ci_low"], row["ci_high"]), (qid, row)
            checked += 1
    assert checked
    data = auth_client.get(f"/api/v1/surveys/{SLUG}/estimates").get_json()
    for record in data["questions"]:
        q = stored.survey.question(record["id"])
        for shown, low, high in q.qtype.headlines(q, record):
            assert _inside(shown, low, high), (q.id, shown, low, high)
    # the cross-tab's cells too
    response = auth_client.get(f"/dashboard/{SLUG}/crosstab?row=choice_0&col=choice_1")
    assert response.status_code == 200
    for td in re.findall(r'<td data-label[^>]*>', response.get_data(as_text=True)):
        shown = _cell(td, "data-value")
        assert _inside(shown, _cell(td, "data-ci-low"), _cell(td, "data-ci-high")), td
        assert shown is None or 0 <= shown <= 1, td  # None: a conditional share of a row nobody is in


def test_bad_choices_are_4xx_naming_the_field(auth_client, battery):
    for url, field in [("crosstab?row=choice_0&col=nope", "crosstab: unknown question id 'nope'"),
                       ("crosstab?row=choice_0&col=choice_0", "crosstab: give two different questions"),
                       ("subgroups?question=choice_1&by=choice_0", "by: question 'choice_0' is randomized"),
                       ("subgroups?question=choice_1&by=numeric_2", "by: question 'numeric_2' is number"),
                       ("subgroups?question=nope&by=group", "question: unknown question id 'nope'"),
                       ("subgroups?question=group&by=group", "question: 'group' is the grouping question itself")]:
        response = auth_client.get(f"/dashboard/{SLUG}/{url}")
        assert response.status_code == 400, url
        assert field in html.unescape(response.get_data(as_text=True)), url


def test_headline_helper_prefers_the_consistent_estimate():
    assert base.headline({"estimate": 1.169, "consistent": 0.9, "ci_low": 0.0, "ci_high": 1.0}) == 0.9
    assert base.headline({"estimate": -0.051, "consistent": 0.0, "ci_low": 0.0, "ci_high": 0.334}) == 0.0
    assert base.headline({"estimate": 0.2, "consistent": 0.25, "ci_low": 0.1, "ci_high": 0.3}) == 0.2
