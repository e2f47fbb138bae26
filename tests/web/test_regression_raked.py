"""The regression page weighted by raking (``?rake=MARGINS&trim=LOW,HIGH``, a link of the Weighting
page): the fit under the raked weights with the calibration variance — the numbers of ``deniable
regress --db FILE SLUG FORMULA --rake MARGINS.json`` (tests/unit/test_raked_regression.py checks those
against R's ``svyglm`` on a ``rake()``d design) — beside the "Weighted by raking / Unweighted" switch
and Kish's effective sample size; margins that cannot weight are a 400 naming the field above the
unweighted fit, never a 500."""

from __future__ import annotations

import html
import json
import re
from urllib.parse import quote

import pytest
from click.testing import CliRunner

from deniable.server.cli import cli
from support.dashboard import make_survey, store_reports

from .test_weighting_page import PANEL, SLUG, URL, columns, form, values

MARGINS = {"age": {"<30": 0.55, "30+": 0.45}, "sex": {"female": 0.5, "male": 0.5}}
FORMULA = "cheat ~ age"
PAGE = f"/dashboard/{SLUG}/regression?formula={quote(FORMULA)}"


@pytest.fixture
def panel(app):
    make_survey(app, PANEL, status="open")
    store_reports(app, SLUG, columns(n=800, seed=4))
    return app


def coefficients(page: str, what: str) -> list[float]:
    """The coefficients' full-precision numbers on the page (``estimate`` or ``std-error``)."""
    return [float(v) for v in re.findall(rf'<tr class="coefficient"[^>]*? data-{what}="([^"]+)"', page)]


def rake_args(margins=MARGINS, trim=None) -> str:
    return f"rake={quote(json.dumps(margins))}" + (f"&trim={trim}" if trim else "")


def regress_json(app, tmp_path, *args, raked: bool = True) -> dict:
    path = tmp_path / "margins.json"
    path.write_text(json.dumps(MARGINS))
    result = CliRunner().invoke(cli, ["regress", "--db", app.config["DATABASE"], SLUG, FORMULA, *args,
                                      *(("--rake", str(path)) if raked else ()), "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_the_regression_page_weighted_equals_the_command_line(auth_client, panel, app, tmp_path):
    response = auth_client.get(f"{PAGE}&{rake_args(trim='0.3,3')}&confidence=0.90")
    page = response.get_data(as_text=True)
    assert response.status_code == 200, page
    document = regress_json(app, tmp_path, "--trim", "0.3,3", "--confidence", "0.90")
    fitted = document["coefficients"]
    assert len(fitted) == 4  # two non-reference options × (intercept, age[30+])
    assert coefficients(page, "estimate") == [c["estimate"] for c in fitted]
    assert coefficients(page, "std-error") == [c["std_error"] for c in fitted]
    assert values(page, "kish") == [document["raking"]["weights"]["effective_n"]]
    assert document["weighted"] and document["raking"]["trim"]["low"] == 0.3
    assert "calibration" in document["note"]
    text = html.unescape(page)
    assert '<section class="regression weighted"' in page and "profile interval" not in page
    assert re.search(r'class="weighted" aria-current="page">Weighted by raking to\s+<code>age</code>, <code>sex</code>'
                     r' \(trimmed to 0.3–3 × the mean\)', text)
    assert '<input type="hidden" name="rake"' in page and '<input type="hidden" name="trim" value="0.3,3">' in page
    # the switch back: the unweighted fit, the page's own (maximum likelihood, profile intervals)
    unweighted = re.search(r'<a href="([^"]+)" class="unweighted">Unweighted</a>', text).group(1)
    assert "weighted=0" in unweighted and "formula=" in unweighted
    plain = auth_client.get(unweighted).get_data(as_text=True)
    assert 'class="unweighted" aria-current="page"' in plain and "profile interval" in plain
    unweighted_fit = regress_json(app, tmp_path, "--confidence", "0.90", raked=False)
    assert coefficients(plain, "estimate") == [c["estimate"] for c in unweighted_fit["coefficients"]]
    assert coefficients(plain, "estimate") != coefficients(page, "estimate")
    # the effect charts of the weighted page are the weighted fit's
    chart = re.search(r'href="([^"]*/regression/chart/effect0\.svg[^"]*)"', text)
    assert chart and "rake=" in chart.group(1)
    assert auth_client.get(chart.group(1)).status_code == 200


@pytest.mark.parametrize("query,expected", [
    ("rake=%7Bnot-json", "rake: the margins are not valid JSON"),
    (rake_args({"drugs": {"Yes": 0.5, "No": 0.5}}), "margins.drugs: question 'drugs' is protected"),
    (rake_args({"age": {"<30": 0.5, "30+": 0.6}}), "margins.age"),
    (rake_args(trim="3,1"), "trim: the bounds must be 0 ≤ LOW < HIGH"),
    (rake_args(trim="0.99,1.01"), "trim:"),
])
def test_bad_margins_are_a_400_naming_the_field_above_the_unweighted_fit(auth_client, panel, app, tmp_path, query,
                                                                         expected):
    response = auth_client.get(f"{PAGE}&{query}")
    page = response.get_data(as_text=True)
    assert response.status_code == 400, page
    assert html.unescape(re.search(r'<p class="errors" role="alert">([^<]*)', page).group(1)).startswith(expected)
    assert "the numbers below are unweighted" in page
    unweighted_fit = regress_json(app, tmp_path, raked=False)
    assert coefficients(page, "estimate") == [c["estimate"] for c in unweighted_fit["coefficients"]]
    assert '<section class="regression"' in page


def test_the_weighting_page_links_to_the_regression_page_weighted(auth_client, panel):
    response = auth_client.post(URL, data=form(auth_client, {0: ["0.55", "0.45"], 1: ["0.5", "0.5"]}))
    page = html.unescape(response.get_data(as_text=True))
    assert response.status_code == 200
    link = re.search(r'<a href="([^"]+)">Regression, weighted</a>', page).group(1)
    assert "/regression?rake=" in link
    answer = auth_client.get(f"{link}&formula={quote(FORMULA)}")  # the default model separates on these data
    weighted = answer.get_data(as_text=True)
    assert answer.status_code == 200, weighted
    assert 'class="weighted" aria-current="page"' in weighted and '<section class="regression weighted"' in weighted
    assert values(weighted, "kish") == values(page, "effective-n")


def test_the_command_line_refuses_what_raking_cannot_use(app, panel, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"age": {"<30": 1.0}}))
    run = CliRunner().invoke
    result = run(cli, ["regress", "--db", app.config["DATABASE"], SLUG, FORMULA, "--rake", str(bad)])
    assert result.exit_code == 1 and "Error: margins.age" in result.stderr and "no respondent" not in result.stdout
    result = run(cli, ["regress", "--db", app.config["DATABASE"], SLUG, FORMULA, "--rake", str(tmp_path / "none.json")])
    assert result.exit_code == 1 and "Error: --rake: cannot read" in result.stderr
    result = run(cli, ["regress", "--db", app.config["DATABASE"], SLUG, FORMULA, "--trim", "0.3,3"])
    assert result.exit_code == 2 and "--trim goes with --rake" in result.stderr
    result = run(cli, ["regress", "--db", app.config["DATABASE"], SLUG, FORMULA, "--rake", str(bad),
                       "--weights", "w"])
    assert result.exit_code == 1 and "Error: --weights: a database has no weight column" in result.stderr
    good = tmp_path / "good.json"
    good.write_text(json.dumps(MARGINS))
    table = run(cli, ["regress", "--db", app.config["DATABASE"], SLUG, FORMULA, "--rake", str(good)])
    assert table.exit_code == 0, table.output
    assert table.stdout.startswith("raked to the margins of 'age', 'sex'")
    assert "Kish effective sample size" in table.stdout and "calibration (raking) variance" in table.stdout
    assert "LR test" not in table.stdout and "profile interval" not in table.stdout
