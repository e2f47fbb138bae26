"""The results, cross-tab and subgroups pages weighted by raking (``?rake=MARGINS&trim=LOW,HIGH``, the
links of the Weighting page): a "Weighted by raking to …" / "Unweighted" switch, Kish's effective
sample size, and the numbers of ``deniable estimate --db FILE SLUG --rake MARGINS.json`` (the results
page), of :func:`~deniable.server.survey.sampling.raked_subgroups` and
:func:`~deniable.server.survey.sampling.raked_crosstab_of` (those two against R in
tests/unit/test_weights_raked_domains.py); margins that cannot weight are a 400 naming the field,
with the unweighted numbers, never a 500."""

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


@pytest.fixture
def panel(app):
    make_survey(app, PANEL, status="open")
    store_reports(app, SLUG, columns())
    return app


def rake_args(margins=MARGINS, trim=None) -> str:
    text = f"rake={quote(json.dumps(margins))}"
    return text + (f"&trim={trim}" if trim else "")


def cli_json(app, tmp_path, *args) -> dict:
    path = tmp_path / "margins.json"
    path.write_text(json.dumps(MARGINS))
    result = CliRunner().invoke(cli, ["estimate", "--db", app.config["DATABASE"], SLUG, "--rake", str(path),
                                      *args, "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_the_results_page_weighted_equals_the_command_line(auth_client, panel, app, tmp_path):
    response = auth_client.get(f"/dashboard/{SLUG}/results?{rake_args(trim='0.3,3')}&confidence=0.90")
    page = response.get_data(as_text=True)
    assert response.status_code == 200, page
    document = cli_json(app, tmp_path, "--trim", "0.3,3", "--confidence", "0.90")
    options = [o for q in document["questions"] for o in q["options"]]
    assert re.findall(r'<table class="estimates weighted" data-question="(\w+)"', page) == \
        [q["id"] for q in document["questions"]]
    assert values(page, "estimate") == [o["estimate"] for o in options]
    assert values(page, "std-error") == [o["std_error"] for o in options]
    assert values(page, "interval", "data-low") == [o["ci_low"] for o in options]
    assert values(page, "interval", "data-high") == [o["ci_high"] for o in options]
    assert values(page, "kish") == [document["raking"]["weights"]["effective_n"]]
    assert "90% intervals" in page
    # the switch: weighted is the current page, unweighted a link to the same page without the weights
    text = html.unescape(page)
    assert re.search(r'class="weighted" aria-current="page">Weighted by raking to\s+<code>age</code>, <code>sex</code>'
                     r' \(trimmed to 0.3–3 × the mean\)', text)
    unweighted = re.search(r'<a href="([^"]+)" class="unweighted">Unweighted</a>', text).group(1)
    assert "weighted=0" in unweighted and "confidence=0.90" in unweighted and "rake=" in unweighted
    plain = auth_client.get(unweighted).get_data(as_text=True)
    assert 'class="unweighted" aria-current="page"' in plain
    assert 'class="estimates weighted"' not in plain and 'class="question-results card"' in plain
    # the selectors keep the weights
    assert '<input type="hidden" name="rake"' in page and '<input type="hidden" name="trim" value="0.3,3">' in page


def test_the_results_page_without_margins_has_no_switch(auth_client, panel):
    page = auth_client.get(f"/dashboard/{SLUG}/results").get_data(as_text=True)
    assert "weighting-switch" not in page and 'class="estimates weighted"' not in page


def test_the_weighting_page_links_to_the_weighted_pages(auth_client, panel):
    response = auth_client.post(URL, data=form(auth_client, {0: ["0.55", "0.45"], 1: ["0.5", "0.5"]},
                                               trim_low="0.3", trim_high="3"))
    page = html.unescape(response.get_data(as_text=True))
    assert response.status_code == 200
    links = re.findall(r'<a href="([^"]+)">(Results|Cross-tab|Subgroups), weighted</a>', page)
    assert [name for _, name in links] == ["Results", "Cross-tab", "Subgroups"]
    for href, _ in links:
        answer = auth_client.get(href)
        assert answer.status_code == 200, href
        assert 'class="weighted" aria-current="page"' in answer.get_data(as_text=True)
    weighted = auth_client.get(links[0][0]).get_data(as_text=True)
    posted = auth_client.post(URL, data=form(auth_client, {0: ["0.55", "0.45"], 1: ["0.5", "0.5"]},
                                             trim_low="0.3", trim_high="3")).get_data(as_text=True)
    assert values(weighted, "kish") == values(posted, "effective-n")


def test_the_subgroups_page_weighted(auth_client, panel, app):
    from deniable.server.store.aggregates import pattern_counts
    from deniable.server.store.db import connect
    from deniable.server.store.surveys import get_survey
    from deniable.server.survey import sampling

    url = f"/dashboard/{SLUG}/subgroups?question=drugs&by=sex&{rake_args()}"
    page = auth_client.get(url).get_data(as_text=True)
    assert 'class="weighted" aria-current="page"' in page
    db = connect(app.config["DATABASE"], readonly=True)
    stored = get_survey(db, SLUG)
    dataset = pattern_counts(db, stored).dataset()
    margins = sampling.parse_margins(MARGINS, stored.survey)
    sg = sampling.raked_subgroups(dataset, margins, stored.survey.question("drugs"), stored.survey.question("sex"),
                                  survey=stored.survey)
    expected = [result for _, _, _, result in sg.groups if result is not None]
    assert re.findall(r'data-group="([^"]+)"', page) == ["female", "male", "not answered"]
    assert values(page, "estimate") == [float(x) for r in expected for x in r.estimate]
    assert values(page, "interval", "data-high") == [float(x) for r in expected for x in r.ci_high]
    assert values(page, "kish") == [sg.raking.effective_n]


def test_the_crosstab_page_weighted(auth_client, panel, app):
    from deniable.server.store.aggregates import pattern_counts
    from deniable.server.store.db import connect
    from deniable.server.store.surveys import get_survey
    from deniable.server.survey import sampling

    page = auth_client.get(f"/dashboard/{SLUG}/crosstab?row=drugs&col=cheat&{rake_args()}").get_data(as_text=True)
    assert 'class="weighted" aria-current="page"' in page
    db = connect(app.config["DATABASE"], readonly=True)
    stored = get_survey(db, SLUG)
    margins = sampling.parse_margins(MARGINS, stored.survey)
    ct = sampling.raked_crosstab_of(pattern_counts(db, stored).dataset(), margins, stored.survey.question("drugs"),
                                    stored.survey.question("cheat"), survey=stored.survey).result
    joint = re.search(r'<table class="crosstab joint weighted">(.*?)</table>', page, re.DOTALL).group(1)
    conditional = re.search(r'<table class="crosstab conditional weighted">(.*?)</table>', page, re.DOTALL).group(1)
    assert [float(v) for v in re.findall(r'data-value="([^"]+)"', joint)] == ct.joint_estimate.ravel().tolist()
    assert [float(v) for v in re.findall(r'data-ci-high="([^"]+)"', conditional)] == \
        ct.conditional_ci_high.ravel().tolist()
    assert "Fieller" in page  # the conditional shares' interval (both questions randomized)


@pytest.mark.parametrize("query,expected", [
    ("rake=%7Bnot-json", "rake: the margins are not valid JSON"),
    ("rake=" + quote(json.dumps({"drugs": {"Yes": 0.5, "No": 0.5}})), "margins.drugs: question 'drugs' is protected"),
    ("rake=" + quote(json.dumps({"age": {"<30": 0.5, "30+": 0.6}})), "margins.age: the shares add up to 1.1, not 1"),
    ("rake=" + quote(json.dumps({"age": {"<30": 0.5, "30+": 0.5}})) + "&trim=3,1", "trim: the bounds must be"),
    ("rake=" + quote(json.dumps({"age": {"<30": 0.5, "30+": 0.5}})) + "&trim=x", "trim: give two numbers"),
    ("rake=" + quote(json.dumps({"age": {"<30": 0.5, "30+": 0.5}})) + "&trim=0.99,1.01",
     "trim: no weights within the bounds"),
])
@pytest.mark.parametrize("page", ["results", "crosstab", "subgroups"])
def test_bad_margins_in_the_address_are_400_naming_the_field(auth_client, panel, page, query, expected):
    response = auth_client.get(f"/dashboard/{SLUG}/{page}?{query}")
    text = html.unescape(response.get_data(as_text=True))
    assert response.status_code == 400, text
    assert expected in text
    assert "the numbers below are unweighted" in text and "estimates weighted" not in text


def test_an_empty_cell_in_the_address_is_400_naming_the_option(auth_client, app):
    make_survey(app, PANEL, status="open")
    data = columns()
    data["sex"] = data["sex"] * 0  # nobody male
    store_reports(app, SLUG, data)
    response = auth_client.get(f"/dashboard/{SLUG}/results?{rake_args()}")
    assert response.status_code == 400
    assert "margins.sex.male: a population share of 0.5 but no respondent chose 'male'" in \
        html.unescape(response.get_data(as_text=True))


def test_odd_arguments_beside_the_margins_are_no_500(auth_client, panel):
    for extra in ("slug=other", "_external=1", "_anchor=x", "weighted=0&weighted=1"):
        response = auth_client.get(f"/dashboard/{SLUG}/results?{rake_args()}&{extra}")
        assert response.status_code == 200, extra
        page = html.unescape(response.get_data(as_text=True))
        assert 'href="http' not in page.split("weighting-switch")[1][:600], extra  # links stay relative


def test_the_results_page_weighted_shows_every_raked_type(auth_client, app, tmp_path):
    """A list experiment, a check-all question and a designed single choice are raked too: the results
    page shows the numbers of ``deniable estimate --db … --rake`` for each (a list experiment: its
    sensitive item's prevalence)."""
    import numpy as np

    definition = {**PANEL, "questions": [*PANEL["questions"],
                  {"id": "shop", "text": "How many?", "type": "list", "items": ["I", "II"], "sensitive": "Stole",
                   "epsilon": 1.0},
                  {"id": "sites", "text": "Which sites?", "type": "multi", "options": ["A", "B"], "epsilon": 2.0},
                  {"id": "warner", "text": "Lied?", "options": ["Yes", "No"], "design": {"name": "warner", "p": 0.75}}]}
    make_survey(app, definition, status="open")
    rng = np.random.default_rng(4)
    data = columns()
    n = len(data["age"])
    store_reports(app, SLUG, {**data, "shop": rng.integers(0, 6, n), "sites": rng.integers(0, 4, n),
                              "warner": rng.integers(0, 2, n)})
    response = auth_client.get(f"/dashboard/{SLUG}/results?{rake_args()}")
    page = response.get_data(as_text=True)
    assert response.status_code == 200, page
    document = cli_json(app, tmp_path)
    assert document["skipped"] == []
    expected = [number for q in document["questions"] for number in
                ([q["prevalence"]["estimate"]] if "prevalence" in q else [o["estimate"] for o in q["options"]])]
    assert values(page, "estimate") == expected
    tables = re.findall(r'<table class="estimates weighted" data-question="(\w+)"', page)
    assert tables[-3:] == ["shop", "sites", "warner"]
    assert "<th scope=\"row\">Stole</th>" in page
