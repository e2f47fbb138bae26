"""``deniable audit`` of the two-group designs' sampler (issue 38): the browser's (group, instruction) sampler
(client/static/types/two_group.js) and its Python twin (client/two_group.py) with a respondent who follows
the instruction.  A CDMsym passes at its realized ε in chromium and in Python; a sampler 5 % weaker (its
instruction weights those of 1.05 × ε) is caught, in Python and in chromium; CDM, SLD and UQTunknown are
said to be not ε-LDP."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

from deniable.client.two_group import two_group_mechanism
from deniable.estimators.audit import epsilon_lower_bound
from deniable.server.cli import cli
from deniable.server.survey.audit_settings import Setting, browser_counts, python_counts


def cdmsym(epsilon: float):
    """Group 1 told "say Yes" and "say No" each with 1/(1 + e^ε) (its ε is ε), group 2 at ε/2."""
    one, two = (round(1 / (1 + math.exp(e)), 6) for e in (epsilon, epsilon / 2))
    return two_group_mechanism("CDMsym", [one, one, two, two], 0.5)


def test_python_twin_passes_and_five_percent_too_weak_is_caught():
    """Seeded.  400,000 runs per input at ε = 2: an honest twin's bound is below 2, a 1.05 × ε one's above."""
    rng = np.random.default_rng(38)
    honest, weak = Setting("two_group", cdmsym(2.0)), Setting("two_group", cdmsym(2.1))
    assert honest.realized_epsilon == pytest.approx(2.0, abs=1e-5) and honest.inputs == [0, 1]
    good = epsilon_lower_bound(honest.cells(python_counts(honest, 400_000, lambda n: None, rng)), 0.999)
    bad = epsilon_lower_bound(weak.cells(python_counts(weak, 400_000, lambda n: None, rng)), 0.999)
    assert good.lower_bound <= 2.0 < bad.lower_bound, (good, bad)


@pytest.mark.parametrize("model, p", [("CDM", [0.3, 0.7]), ("SLD", [0.3, 0.8]), ("UQTunknown", [0.3, 0.8])])
def test_the_models_that_are_not_ldp_show_it(model, p):
    setting = Setting("two_group", two_group_mechanism(model, p, 0.5))
    assert not setting.protected and setting.declared_epsilon is None
    found = epsilon_lower_bound(setting.cells(python_counts(setting, 20_000, lambda n: None,
                                                             np.random.default_rng(1))), 0.999)
    assert found.lower_bound > 5  # a No rules the attribute out (UQTunknown: unless the unrelated answer hides it)


def survey_db(tmp_path):
    questions = [
        {"id": "sym", "text": "Copied?", "type": "two_group", "model": "CDMsym", "p": [0.2, 0.3, 0.3, 0.2]},
        {"id": "cdm", "text": "Cheated?", "type": "two_group", "model": "CDM", "p": [0.3, 0.7]},
        {"id": "uqt", "text": "Bought?", "type": "two_group", "model": "UQTunknown", "p": [0.3, 0.8],
         "unrelated": "Tea?"},
    ]
    definition = tmp_path / "nc.json"
    definition.write_text(json.dumps({"slug": "nc", "title": "Non-compliance", "questions": questions}))
    db = tmp_path / "nc.db"
    result = CliRunner().invoke(cli, ["import", str(definition), "--db", str(db), "--open"])
    assert result.exit_code == 0, result.output
    return db


@pytest.mark.browser
def test_db_audits_the_two_group_questions_in_chromium_and_python(tmp_path):
    db = survey_db(tmp_path)
    result = CliRunner().invoke(cli, ["audit", "--db", str(db), "--type", "two_group", "--samples", "100000",
                                      "--confidence", "0.999", "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = {tuple(r["questions"]): r for r in json.loads(result.output[result.output.index("{"):])["results"]}
    sym = rows[("nc/sym",)]
    assert sym["ok"] and sym["browser_lower_bound"] <= sym["realized_epsilon"] and sym["python_lower_bound"] <= sym["realized_epsilon"]
    assert sym["browser_point"] == pytest.approx(sym["realized_epsilon"], abs=0.1)
    for qid in ("nc/cdm", "nc/uqt"):
        row = rows[(qid,)]
        assert row["ok"] is None and not row["protected"] and row["verdict"].startswith("NOT ε-LDP")
        assert row["browser_lower_bound"] > 5


@pytest.mark.browser
def test_a_five_percent_weaker_browser_sampler_is_caught(tmp_path):
    """The shipped JS sampler with the weights of 1.05 × ε is caught; the honest one passes."""
    from deniable.server.cli.audit import CHROMIUM, browser_page, outside_asyncio

    honest, weak = Setting("two_group", cdmsym(2.0)), Setting("two_group", cdmsym(2.1))

    def sample():  # Playwright's sync API in a thread of its own when this worker's browser fixture runs a loop
        with browser_page(None, CHROMIUM) as page:
            return [epsilon_lower_bound(s.cells(browser_counts(page, s, 400_000, lambda n: None)), 0.999)
                    for s in (honest, weak)]

    good, bad = outside_asyncio(sample)
    assert good.lower_bound <= 2.0 < bad.lower_bound, (good, bad)
