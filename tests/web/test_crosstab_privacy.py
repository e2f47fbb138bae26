"""The cross-tab page states the pair's ε as ``deniable estimate --crosstab`` does (one computation,
:func:`deniable.server.survey.estimates.pair_privacy`): a question asked directly adds no ε, so age
(direct) × cannabis (ε = 1) is ε = 1, never "ε = inf … can give an answer away"."""

from __future__ import annotations

import html
import re

import numpy as np
import pytest
from click.testing import CliRunner

from deniable.server.cli import cli
from support.dashboard import make_survey, store_reports

DEFINITION = {"slug": "pairs", "title": "Pairs", "questions": [
    {"id": "age", "text": "Age group", "options": ["<30", "30+"]},
    {"id": "cannabis", "text": "Cannabis this year?", "options": ["Yes", "No"], "epsilon": 1},
    {"id": "cheat", "text": "Cheated?", "options": ["Never", "Once", "Often"], "epsilon": 2},
    {"id": "region", "text": "Region", "options": ["North", "South"]},
    # forced response whose second answer is never forced: a "No" report gives a "No" away
    {"id": "forced", "text": "Forced?", "options": ["Yes", "No"], "design": {"name": "forced", "p": 0.6,
                                                                               "forced": [0.4, 0]}},
]}


@pytest.fixture
def pairs(app, auth_client):
    make_survey(app, DEFINITION, status="open")
    rng = np.random.default_rng(3)
    store_reports(app, "pairs", {"age": rng.integers(0, 2, 300), "cannabis": rng.integers(0, 2, 300),
                                 "cheat": rng.integers(0, 3, 300), "region": rng.integers(0, 2, 300),
                                 "forced": rng.integers(0, 2, 300)})
    return auth_client


def _cli_privacy(db_path, row, col) -> str:
    """What ``deniable estimate --crosstab`` says of the pair: the second line's middle part."""
    result = CliRunner().invoke(cli, ["estimate", "--db", db_path, "pairs", "--crosstab", row, col])
    assert result.exit_code == 0, result.output
    return result.stdout.splitlines()[1].split(" · ")[1]


@pytest.mark.parametrize("row, col, expected", [
    ("age", "cannabis", "ε = 1.0000 (age asked directly)"),
    ("cannabis", "age", "ε = 1.0000 (age asked directly)"),
    ("cannabis", "cheat", "ε = 3.0000 (ε₁ + ε₂)"),
    ("age", "region", "no randomization"),
    ("cannabis", "forced", "not ε-LDP (forced's design can give an answer away)"),
    ("age", "forced", "not ε-LDP (forced's design can give an answer away)"),
])
def test_the_page_states_the_pairs_epsilon_as_the_command_line_does(app, pairs, row, col, expected):
    said = _cli_privacy(app.config["DATABASE"], row, col)
    assert said == expected
    response = pairs.get(f"/dashboard/pairs/crosstab?row={row}&col={col}")
    assert response.status_code == 200
    page = html.unescape(re.sub(r"</?strong>", "", response.get_data(as_text=True)))
    assert f"· {said} · method" in page  # the numbers' line, word for word
    privacy = re.search(r'<p class="privacy-cost">(.*?)</p>', page, re.S).group(1)
    if "asked directly" in said:
        assert said in privacy and "inf" not in privacy and "give an answer away" not in privacy
    elif said == "no randomization":
        assert "Neither question is randomized" in privacy and "give an answer away" not in privacy
    elif "not ε-LDP" in said:
        assert "forced is not ε-LDP" in privacy
    else:
        assert "ε1 + ε2 = 1.0000 + 2.0000 = 3.0000" in privacy
