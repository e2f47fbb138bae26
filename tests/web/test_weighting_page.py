"""The Weighting page (/dashboard/SLUG/weighting): population margins entered in a form, the achieved
margins, the weights' range and Kish's effective sample size, and the protected questions' raked
estimates beside the unweighted ones — the numbers of ``deniable estimate --db FILE SLUG --rake
MARGINS.json``, from the answer patterns; its errors on their fields (400, nothing stored), 404 for
another researcher's survey, and the login the dashboard asks for."""

from __future__ import annotations

import html
import json
import re

import numpy as np
import pytest
from click.testing import CliRunner

from deniable.server.cli import cli
from support.dashboard import DEFINITION, csrf_token, make_survey, store_reports

SLUG = DEFINITION["slug"]  # drugs (ε 1), cheat (ε 2), age (asked directly: <30, 30+)
URL = f"/dashboard/{SLUG}/weighting"
PANEL = {**DEFINITION, "questions": [*DEFINITION["questions"],
                                     {"id": "sex", "text": "Sex", "options": ["female", "male"]}]}


def columns(n: int = 500, seed: int = 3) -> dict:
    """An unbalanced sample (70% under 30, 65% female) whose answers depend on age."""
    rng = np.random.default_rng(seed)
    age = (rng.random(n) < 0.3).astype(int)
    sex = (rng.random(n) < 0.35).astype(int)
    return {"age": age, "sex": sex, "drugs": (rng.random(n) < 0.5 + 0.3 * age).astype(int),
            "cheat": np.minimum(rng.poisson(0.4 + 0.5 * sex), 2)}


@pytest.fixture
def panel(app):
    make_survey(app, PANEL, status="open")
    store_reports(app, SLUG, columns())
    return app


def form(client, shares: dict, **extra) -> dict:
    """The posted form: ``shares`` = {question index among those asked directly: [share per option]}."""
    data = {"csrf_token": csrf_token(client, URL), "confidence": "0.95", **extra}
    for qi, values in shares.items():
        for j, value in enumerate(values):
            data[f"share_{qi}_{j}"] = value
    return data


def values(page: str, cls: str, attr: str = "data-value") -> list[float]:
    return [float(v) for v in re.findall(rf'class="{cls}"[^>]*?{attr}="([^"]+)"', page)]


def test_the_page_offers_one_share_per_option_of_the_questions_asked_directly(auth_client, panel):
    page = auth_client.get(URL).get_data(as_text=True)
    assert 'aria-current="page"' in page and ">Weighting</a>" in page
    assert re.findall(r'data-question="(\w+)"', page) == ["age", "sex"]  # never a protected one
    assert 'name="share_0_0"' in page and 'name="share_1_1"' in page and 'name="share_2_0"' not in page
    results = auth_client.get(f"/dashboard/{SLUG}/results").get_data(as_text=True)
    assert f'href="{URL}"' in results  # the survey's tabs link to it


def test_the_weighted_estimates_equal_the_command_line(auth_client, panel, app, tmp_path):
    response = auth_client.post(URL, data=form(auth_client, {0: ["0.55", "0.45"], 1: ["0.5", "0.5"]},
                                               trim_low="0.3", trim_high="3"))
    page = response.get_data(as_text=True)
    assert response.status_code == 200, page

    margins = tmp_path / "margins.json"
    margins.write_text(json.dumps({"age": {"<30": 0.55, "30+": 0.45}, "sex": {"female": 0.5, "male": 0.5}}))
    result = CliRunner().invoke(cli, ["estimate", "--db", app.config["DATABASE"], SLUG, "--rake", str(margins),
                                      "--trim", "0.3,3", "--format", "json"])
    assert result.exit_code == 0, result.output
    cli_doc = json.loads(result.stdout)
    raking = cli_doc["raking"]
    assert values(page, "smallest") == [raking["weights"]["smallest"]]
    assert values(page, "largest") == [raking["weights"]["largest"]]
    assert values(page, "effective-n") == [raking["weights"]["effective_n"]]
    assert values(page, "untrimmed-effective-n") == [raking["trim"]["untrimmed"]["effective_n"]]
    assert values(page, "achieved-share") == [v for shares in raking["achieved"].values() for v in shares.values()]
    assert raking["achieved"]["age"] == pytest.approx({"<30": 0.55, "30+": 0.45}, abs=1e-9)

    protected = [q for q in cli_doc["questions"] if q["id"] in ("drugs", "cheat")]
    options = [o for q in protected for o in q["options"]]
    assert re.findall(r'<table class="estimates" data-question="(\w+)"', page) == ["drugs", "cheat"]
    assert values(page, "estimate") == [o["estimate"] for o in options]
    assert values(page, "std-error") == [o["std_error"] for o in options]
    assert values(page, "interval", "data-low") == [o["ci_low"] for o in options]
    assert values(page, "interval", "data-high") == [o["ci_high"] for o in options]
    assert values(page, "unweighted") == [o["unweighted"]["estimate"] for o in options]
    assert values(page, "unweighted-std-error") == [o["unweighted"]["std_error"] for o in options]
    # weighting moved the estimate of an answer that depends on age
    drugs = protected[0]["options"][0]
    assert abs(drugs["estimate"] - drugs["unweighted"]["estimate"]) > 0.01


@pytest.mark.parametrize("shares,extra,expected", [
    ({0: ["0.5", "0.6"]}, {}, "margins.age: the shares add up to 1.1, not 1"),
    ({0: ["abc", "0.5"]}, {}, "Not a valid float value"),
    ({0: ["-0.5", "1.5"]}, {}, "margins.age.&lt;30: a share must be a finite number ≥ 0"),
    ({0: ["nan", "0.5"]}, {}, "margins.age.&lt;30: a share must be a finite number ≥ 0"),
    ({0: ["1", "0"]}, {}, "margins.age.30+:"),  # chosen by some, a share of 0
    ({}, {}, "at least one question"),
    ({0: ["0.5", "0.5"]}, {"trim_low": "0.99", "trim_high": "1.01"}, "trim: no weights within the bounds"),
    ({0: ["0.5", "0.5"]}, {"trim_low": "2", "trim_high": "1"}, "trim: give both bounds"),
])
def test_bad_margins_are_400_with_the_error_on_the_field(auth_client, panel, shares, extra, expected):
    response = auth_client.post(URL, data=form(auth_client, shares, **extra))
    page = response.get_data(as_text=True)
    assert response.status_code == 400, page
    assert expected in page, page
    assert 'class="raking"' not in page  # no numbers


def test_an_option_nobody_chose_is_an_empty_cell(auth_client, app):
    make_survey(app, PANEL, status="open")
    data = columns()
    data["sex"] = np.zeros_like(data["sex"])  # nobody male
    store_reports(app, SLUG, data)
    response = auth_client.post(URL, data=form(auth_client, {1: ["0.5", "0.5"]}))
    page = html.unescape(response.get_data(as_text=True))
    assert response.status_code == 400
    assert "margins.sex.male: a population share of 0.5 but no respondent chose 'male'" in page


def test_another_researchers_survey_is_404_and_the_page_needs_a_login(app, client, panel):
    from support.dashboard import ensure_researcher, login

    ensure_researcher(app, "bob@example.org")
    assert client.get(URL).status_code == 302  # logged out: to the login page
    assert "/auth/login" in client.get(URL).headers["Location"]
    login(client, "bob@example.org")
    assert client.get(URL).status_code == 404
    response = client.post(URL, data={"csrf_token": csrf_token(client, "/dashboard/"), "share_0_0": "0.5",
                                      "share_0_1": "0.5"})
    assert response.status_code == 404
