"""The results page, cross-tab and subgroups: the numbers shown are the estimators' on the stored
counts, and an export run through ``deniable estimate`` reproduces every one of them."""

from __future__ import annotations

import html
import json
import re

import numpy as np
import pytest
from click.testing import CliRunner

from deniable import estimators
from deniable.server.cli import cli
from deniable.server.survey.questions.base import headline
from deniable.server.store.surveys import get_survey, option_counts
from support.dashboard import make_survey, open_db, sample_columns, store_reports

CELLS = ("estimate", "consistent", "std-error", "ci-low", "ci-high", "noisy-count")


CELL_RE = re.compile(r'class="(estimate|consistent|std-error|ci-low|ci-high|noisy-count|shift)"[^>]*?'
                     r'data-value="([^"]*)">([^<]*)<')


def page_numbers(page: str) -> dict:
    """{qid: {"n", "rows": [{cell: exact value}], "shown": [{cell: text}]}} read from the results page's tables:
    the exact numbers in data-value, what people read as the text."""
    out = {}
    for qid, body in re.findall(r'<section class="question-results card" id="q-([^"]+)".*?>(.*?)</section>', page, re.S):
        rows, shown = [], []
        for tr in re.findall(r"<tr>(.*?)</tr>", body, re.S):
            cells = CELL_RE.findall(tr)
            if cells:
                rows.append({name: value for name, value, _ in cells})
                shown.append({name: text for name, _, text in cells})
        n = re.search(r'n = <span class="n" data-value="(\d+)">', body)
        out[qid] = {"n": int(n.group(1)) if n else 0, "rows": rows, "shown": shown, "body": html.unescape(body)}
    return out


def expected_cells(result, i: int) -> dict:
    return {"estimate": repr(float(result.estimate[i])), "consistent": repr(float(result.consistent[i])),
            "std-error": repr(float(result.std_error[i])), "ci-low": repr(float(result.ci_low[i])),
            "ci-high": repr(float(result.ci_high[i])), "noisy-count": str(int(result.noisy_counts[i]))}


def expected_text(result, i: int) -> dict:
    """What a person reads: percentages with one decimal, the standard error in points, counts with commas."""
    return {"estimate": f"{100 * result.estimate[i]:.1f}%", "consistent": f"{100 * result.consistent[i]:.1f}%",
            "std-error": f"{100 * result.std_error[i]:.1f}", "ci-low": f"{100 * result.ci_low[i]:.1f}%",
            "ci-high": f"{100 * result.ci_high[i]:.1f}%", "noisy-count": f"{int(result.noisy_counts[i]):,}"}


@pytest.fixture
def survey_with_reports(app):
    make_survey(app, status="open", target_n=1000)
    store_reports(app, "habits", sample_columns(400))
    db = open_db(app)
    stored = get_survey(db, "habits")
    counts = option_counts(db, stored.id)
    db.conn.close()
    return stored, counts


SETTINGS = [
    {"method": "exact", "confidence": "0.95"},
    {"method": "wilson", "confidence": "0.90", "simultaneous": "y"},
    {"method": "wald", "confidence": "0.99", "fake": "25"},
    {"method": "clopper-pearson", "confidence": "0.95"},
    {"method": "likelihood", "confidence": "0.95"},
]


@pytest.mark.parametrize("args", SETTINGS)
def test_results_page_numbers_equal_the_estimators_on_the_stored_counts(auth_client, survey_with_reports, args):
    stored, counts = survey_with_reports
    response = auth_client.get("/dashboard/habits/results", query_string=args)
    assert response.status_code == 200
    page = response.get_data(as_text=True)
    assert 'Respondents so far: <strong id="respondents" data-value="400">400</strong> of a target of 1,000 (40.0%)' in page
    shown = page_numbers(page)
    assert set(shown) == {"drugs", "cheat", "age"}
    for q in stored.survey.questions:
        result = estimators.estimate(counts[q.id], q.epsilon, confidence=float(args["confidence"]),
                                     method=args["method"], simultaneous="simultaneous" in args)
        item = shown[q.id]
        assert item["n"] == result.n == 400
        # Invariant 5: n, ε, the method and the interval beside every estimate.
        assert f"method {args['method']}" in item["body"]
        assert f"{float(args['confidence']) * 100:g}%" in item["body"]
        if q.protected:
            assert f"ε = {result.epsilon:.4f}" in item["body"]
        for i, (row, text) in enumerate(zip(item["rows"], item["shown"])):
            assert {k: row[k] for k in CELLS} == expected_cells(result, i)
            assert {k: text[k] for k in CELLS} == expected_text(result, i)
            m = int(args.get("fake", 10))
            shift = m * (1 - result.q) / ((result.p - result.q) * result.n)
            assert float(row["shift"]) == pytest.approx(shift, rel=1e-12) and text["shift"] == f"{100 * shift:.1f}"
        assert len(item["rows"]) == q.k
        # the chart, one whisker per option, drawn at two widths (charts.drawn_at: the page shows one)
        assert item["body"].count('class="whisker"') == 2 * q.k
        assert item["body"].count('<div class="chart-narrow"><svg') == item["body"].count('<div class="chart-wide"><svg') == 1


def test_a_survey_without_responses(app, auth_client):
    make_survey(app, status="open")
    page = auth_client.get("/dashboard/habits/results").get_data(as_text=True)
    assert "n = 0: no answers yet" in page and "estimate-bars" not in page


@pytest.mark.parametrize("args", [{"method": "bayes"}, {"confidence": "0.5"}, {"fake": "-1"}])
def test_bad_selectors_are_refused(auth_client, survey_with_reports, args):
    assert auth_client.get("/dashboard/habits/results", query_string=args).status_code == 400


def test_unknown_survey_is_404(auth_client):
    assert auth_client.get("/dashboard/nope/results").status_code == 404


@pytest.mark.parametrize("args", [SETTINGS[0], SETTINGS[1], SETTINGS[2]])
def test_export_then_deniable_estimate_reproduces_the_page(tmp_path, auth_client, survey_with_reports, args):
    csv_response = auth_client.get("/dashboard/habits/export/responses.csv")
    json_response = auth_client.get("/dashboard/habits/export/codebook.json")
    assert csv_response.status_code == json_response.status_code == 200
    assert "attachment" in csv_response.headers["Content-Disposition"]
    (tmp_path / "habits.json").write_bytes(json_response.data)
    (tmp_path / "habits-responses.csv").write_bytes(csv_response.data)
    command = ["estimate", str(tmp_path / "habits.json"), str(tmp_path / "habits-responses.csv"),
               "--format", "json", "--method", args["method"], "--confidence", args["confidence"]]
    if "simultaneous" in args:
        command.append("--simultaneous")
    result = CliRunner().invoke(cli, command)
    assert result.exit_code == 0, result.output
    offline = json.loads(result.output)
    page = page_numbers(auth_client.get("/dashboard/habits/results", query_string=args).get_data(as_text=True))
    for question in offline["questions"]:
        shown = page[question["id"]]
        assert shown["n"] == question["n"]
        for row, option in zip(shown["rows"], question["options"], strict=True):
            assert row == {**row, **{
                "estimate": repr(option["estimate"]), "consistent": repr(option["consistent"]),
                "std-error": repr(option["std_error"]), "ci-low": repr(option["ci_low"]),
                "ci-high": repr(option["ci_high"]), "noisy-count": str(option["noisy_count"])}}
    # The estimates export is the offline command's JSON, number for number.
    exported = auth_client.get("/dashboard/habits/export/estimates.json", query_string=args).get_json()
    assert exported == offline


def test_the_parquet_export_is_the_csv_export(tmp_path, auth_client, survey_with_reports):
    (tmp_path / "habits.json").write_bytes(auth_client.get("/dashboard/habits/export/codebook.json").data)
    for name in ("responses.csv", "responses.parquet"):
        response = auth_client.get(f"/dashboard/habits/export/{name}")
        assert response.status_code == 200 and f'filename="habits-{name}"' in response.headers["Content-Disposition"]
        (tmp_path / f"habits-{name}").write_bytes(response.data)
    outputs = [CliRunner().invoke(cli, ["estimate", str(tmp_path / "habits.json"), str(tmp_path / f"habits-{name}"),
                                        "--format", "json"]) for name in ("responses.csv", "responses.parquet")]
    assert all(r.exit_code == 0 for r in outputs) and outputs[0].output == outputs[1].output


def test_estimates_csv_export(auth_client, survey_with_reports):
    from deniable.server.survey import estimates as estimates_module

    stored, counts = survey_with_reports
    response = auth_client.get("/dashboard/habits/export/estimates.csv?method=wilson&confidence=0.90")
    assert response.status_code == 200 and response.mimetype == "text/csv"
    results = estimates_module.survey_estimates(stored.survey, counts, method="wilson", confidence=0.9)
    expected = estimates_module.Estimates(stored.survey, n_responses=0, results=results).to_csv()  # n: not in the CSV
    assert response.get_data(as_text=True) == expected


def test_crosstab_of_two_protected_questions(app, auth_client, survey_with_reports):
    from deniable.server.store.responses import load_db_dataset

    stored, _ = survey_with_reports
    response = auth_client.get("/dashboard/habits/crosstab?row=drugs&col=cheat&confidence=0.95")
    assert response.status_code == 200
    page = html.unescape(re.sub(r"</?strong>", "", response.get_data(as_text=True)))
    drugs, cheat = stored.survey.question("drugs"), stored.survey.question("cheat")
    cost = drugs.mechanism.epsilon + cheat.mechanism.epsilon
    assert f"ε1 + ε2 = {drugs.mechanism.epsilon:.4f} + {cheat.mechanism.epsilon:.4f} = {cost:.4f}" in page
    assert "Looking at this table spends nothing" in page and "privacy cost" not in page.lower()
    joint = load_db_dataset(open_db(app), "habits").joint_counts("drugs", "cheat")
    result = estimators.crosstab(joint, 1.0, 2.0, confidence=0.95)
    for i in range(2):
        for j in range(3):
            for kind in ("joint", "conditional"):
                est, low, high = (getattr(result, f"{kind}_{name}")[i][j] for name in ("estimate", "ci_low", "ci_high"))
                # the issue (point 8): a cell shows its headline, inside its interval (the unbiased estimate
                # while it is inside, else the consistent one), never "−5.1 % (0.0–33.4)"
                consistent = result.joint_consistent[i][j] if kind == "joint" else None
                est = headline({"estimate": est, "consistent": consistent, "ci_low": low, "ci_high": high})
                assert low <= est <= high
                assert (f'data-value="{est}" data-ci-low="{low}" data-ci-high="{high}">'
                        f"{100 * est:.1f}% [{100 * low:.1f}%, {100 * high:.1f}%]") in page
                # and in the heat-map, the same numbers as text
                assert f'data-row="{i}" data-col="{j}" data-estimate="{float(est)!r}"' in page
    assert page.count('class="heatmap"') == 2
    assert "the joint ones are" in page and "× as wide" in page


@pytest.mark.parametrize("query, message", [
    # one validation with ``deniable estimate --crosstab`` (server/survey/analysis.py): its words, a 400
    ("row=drugs&col=drugs", "crosstab: give two different questions"),
    ("row=drugs&col=zzz", "crosstab: unknown question id &#39;zzz&#39; (expected one of: drugs, cheat, age)"),
])
def test_crosstab_refusals(auth_client, survey_with_reports, query, message):
    response = auth_client.get(f"/dashboard/habits/crosstab?{query}")
    assert response.status_code == 400 and message in response.get_data(as_text=True)


def test_subgroups_by_a_direct_question(app, auth_client, survey_with_reports):
    from deniable.server.store.responses import load_db_dataset

    response = auth_client.get("/dashboard/habits/subgroups?question=cheat&by=age&method=wilson&confidence=0.95")
    assert response.status_code == 200
    page = html.unescape(response.get_data(as_text=True))
    table = load_db_dataset(open_db(app), "habits").counts_by("cheat", "age")
    results = estimators.subgroups([table[0], table[1]], 2.0, confidence=0.95, method="wilson")
    for label, result in zip(["<30", "30+"], results):
        assert f"“Age group”: {label}" in page  # the question's text, not its id
        assert f"n = {result.n} · ε = {result.epsilon:.4f} · method wilson" in page
        for i in range(3):
            assert f'data-value="{result.ci_low[i]}">{100 * result.ci_low[i]:.1f}%' in page
            assert f'data-value="{result.ci_high[i]}">{100 * result.ci_high[i]:.1f}%' in page
            # side by side in the grouped chart
            assert f"{label} (n = {result.n:,})" in page
            assert f'data-group="{html.escape(label)}" data-option="{i}"' in response.get_data(as_text=True)
    assert np.asarray(table).sum() == 400
    assert "Did not answer “Age group”" not in page  # every sampled row answered age


@pytest.mark.parametrize("url", [
    "/dashboard/habits/results",
    "/dashboard/habits/results?method=likelihood&confidence=0.99&simultaneous=y",
    "/dashboard/habits/crosstab?row=drugs&col=cheat",
    "/dashboard/habits/subgroups?question=cheat&by=age",
])
def test_invariant_5_every_estimate_shows_n_epsilon_method_and_interval(auth_client, survey_with_reports, url):
    """docs/design.md invariant 5, on every page that shows estimates."""
    page = html.unescape(auth_client.get(url).get_data(as_text=True))
    metas = re.findall(r'<p class="meta">(.*?)</p>', page, re.S)
    assert metas
    for meta in metas:
        text = re.sub(r"<[^>]+>", "", meta)
        assert "n = " in text and "method" in text and "% " in text and "intervals" in text, text
        assert "ε = " in text or "asked directly" in text, text
    assert "ci-low" in page or re.search(r"\d\.\d{4} \[\d\.\d{4}, \d\.\d{4}\]", page)
