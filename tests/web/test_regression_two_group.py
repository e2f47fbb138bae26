"""The dashboard's regression page with a two-group question as the outcome (each model; the survey and truth of
tests/support/two_group_regression.py, stored through the real store): a 200 whose coefficients, standard errors
and nuisance parameter are the installed ``deniable regress --db … --format json``'s numbers, the nuisance
parameter said in words, the modelled-option select turning the signs; raking such an outcome is the 400 above
the unweighted fit; a two-group question as a covariate is a 400 naming it, never a 500."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import pytest

from deniable.server.survey.definition import parse_definition
from support.dashboard import make_survey, store_reports
from support.two_group_regression import DEFINITION, FORMULA, MODELS, SLUG, columns

DENIABLE = str(Path(sys.executable).parent / "deniable")
WORDS = {"cdm": "did not follow the instructions (γ)", "sym": "did not follow the instructions (γ)",
         "sld": "carriers answering truthfully (t)", "uqt": "yes to the unrelated question (π_UQ)"}


@pytest.fixture
def survey(app):
    make_survey(app, DEFINITION, status="open")
    store_reports(app, SLUG, columns(parse_definition(DEFINITION), 1500, seed=77))
    return app


def page_of(client, formula, **args):
    response = client.get(f"/dashboard/{SLUG}/regression", query_string={"formula": formula, **args})
    return response.status_code, html.unescape(response.get_data(as_text=True))


def numbers(page: str, what: str) -> list[float]:
    return [float(v) for v in re.findall(rf'<tr class="coefficient"[^>]*? data-{what}="([^"]+)"', page)]


def regress_json(app, formula, *args) -> dict:
    done = subprocess.run([DENIABLE, "regress", "--db", app.config["DATABASE"], SLUG, formula, *args, "--format",
                           "json"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("qid", list(MODELS))
def test_the_page_shows_the_command_lines_fit(auth_client, survey, qid):
    formula = FORMULA.format(qid=qid)
    status, page = page_of(auth_client, formula, confidence="0.90")
    assert status == 200, page[-3000:]
    fitted = regress_json(survey, formula, "--confidence", "0.90")
    rows = fitted["coefficient_rows"]
    assert numbers(page, "estimate") == [r["estimate"] for r in rows]
    assert numbers(page, "std-error") == [r["std_error"] for r in rows]
    section = page.split('<section class="regression own-fit"')[1].split("</section>")[0]
    assert section.split("</h2>")[0].endswith('<span class="models">log-odds of Yes against No</span>')
    assert f"under its {MODELS[qid]} design" in section and "90% intervals: Wald" in section
    n = re.search(r'n = <span class="n">([0-9,]+)</span> \((\d+) left out', section)
    assert n and int(n.group(1).replace(",", "")) == fitted["n"] and int(n.group(2)) == fitted["left_out"]
    for row in rows:  # the intervals, as the table's own four decimals
        assert f"[{row['ci_low']:,.4f}, {row['ci_high']:,.4f}]".replace("-", "−") in section
    nuisance = fitted["nuisance"]
    paragraph = re.search(r'<p class="nuisance" data-name="([^"]+)" data-estimate="([^"]+)"\s+data-std-error="([^"]*)">'
                          r"([^<]*)</p>", section)
    assert paragraph, section
    assert paragraph.group(1) == nuisance["name"] and float(paragraph.group(2)) == nuisance["estimate"]
    assert WORDS[qid] in paragraph.group(4) and f"{100 * nuisance['estimate']:.1f}%" in paragraph.group(4)
    if not nuisance["on_bound"]:
        assert f"90% interval [{100 * nuisance['lower']:.1f}%, {100 * nuisance['upper']:.1f}%]" in paragraph.group(4)
    assert '<select id="reference" name="reference"' in page and 'class="errors"' not in page
    # no effect charts for this outcome (yet): the chart's address says so, never a 500
    chart = auth_client.get(f"/dashboard/{SLUG}/regression/chart/effect0.svg", query_string={"formula": formula})
    assert chart.status_code == 409


def test_the_modelled_option_turns_the_signs(auth_client, survey):
    formula = FORMULA.format(qid="sld")
    _, plain = page_of(auth_client, formula)
    status, turned = page_of(auth_client, formula, reference="Yes", reference_of="sld")
    assert status == 200
    assert '<span class="models">log-odds of No against Yes</span>' in turned
    assert numbers(turned, "estimate") == [-b for b in numbers(plain, "estimate")]
    assert numbers(turned, "estimate") == [r["estimate"] for r in
                                           regress_json(survey, formula, "--reference", "Yes")["coefficient_rows"]]


def test_raking_a_two_group_outcome_is_a_400_above_the_unweighted_fit(auth_client, survey):
    formula = FORMULA.format(qid="cdm")
    margins = quote(json.dumps({"year": {"First": 0.3, "Second": 0.3, "Third": 0.4}}))
    response = auth_client.get(f"/dashboard/{SLUG}/regression?formula={quote(formula)}&rake={margins}")
    page = html.unescape(response.get_data(as_text=True))
    assert response.status_code == 400, page[-3000:]
    error = re.search(r'<p class="errors" role="alert">([^<]*)</p>', page).group(1)
    assert error.startswith("rake: the outcome 'cdm' is a two-group non-compliance design question")
    assert error.endswith("the numbers below are unweighted.")
    assert numbers(page, "estimate") == [r["estimate"] for r in regress_json(survey, formula)["coefficient_rows"]]


@pytest.mark.parametrize(("formula", "message"), [
    ("year ~ sld", "covariate 'sld' is a two-group non-compliance design question, not available as a covariate"),
    ("cdm ~ sym", "covariate 'sym' is protected"),
    ("cdm ~ year", None),  # fits
])
def test_a_two_group_covariate_is_a_400_naming_it(auth_client, survey, formula, message):
    status, page = page_of(auth_client, formula)
    if message is None:
        assert status == 200 and 'class="coefficients"' in page
        return
    assert status == 400
    assert message in re.search(r'<p class="errors" role="alert">([^<]*)</p>', page).group(1)
    assert 'class="coefficients"' not in page
