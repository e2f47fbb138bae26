"""Battery: every registered question type through the regression page, ``deniable regress`` and
``deniable audit --db``.

A question whose type allows a regression's outcome (``qtype.regression is None``) fits on the page
and in the command line, and the first line of every output names the modelled option; any other
says its type's reason in words (a 400 on the page, one ``Error:`` line in the command line), never
a 500 or a traceback.  The audit samples every protected battery question (and every plain list
experiment) through its own type's sampler.
"""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner
from markupsafe import escape

from deniable.server.cli import cli
from deniable.server.survey.definition import parse_definition

from support.battery import GROUP, SLUG, battery_definition, question_ids

YES_NO = "choice_0"  # the battery's yes/no question: options Yes, No


def question(qid):
    return parse_definition(battery_definition()).question(qid)


def regress(db_path, formula, *args):
    return CliRunner().invoke(cli, ["regress", "--db", str(db_path), SLUG, formula, "--no-profile", *args])


@pytest.mark.parametrize("qid", question_ids())
def test_the_regression_page_fits_or_says_why_the_type_cannot(auth_client, battery, qid):
    """Each question as the outcome of the intercept-only model (so that what is tested is the type,
    not whether 600 respondents separate in a group)."""
    q = question(qid)
    response = auth_client.get(f"/dashboard/{SLUG}/regression", query_string={"formula": f"{qid} ~ 1"})
    page = response.get_data(as_text=True)
    if q.qtype.regression is None:
        assert response.status_code == 200, page[-2000:]
        assert 'class="coefficients"' in page and 'class="errors"' not in page
        heading = re.search(r"<h2><code>[^<]*</code>: <span class=\"models\">([^<]*)</span></h2>", page)
        assert heading and heading.group(1).startswith("log-odds of "), qid
        assert '<select id="reference" name="reference"' in page
    else:
        assert response.status_code == 400, qid
        assert str(escape(q.qtype.regression)) in page and q.qtype.label in page
        assert 'class="coefficients"' not in page and '<select id="reference"' not in page


@pytest.mark.parametrize("qid", question_ids())
def test_deniable_regress_fits_or_says_why_the_type_cannot(db_path, battery, qid):
    q = question(qid)
    result = regress(db_path, f"{qid} ~ 1")
    assert "Traceback" not in result.output
    if q.qtype.regression is None:
        assert result.exit_code == 0, result.output
        first = result.output.splitlines()[0]
        assert first.startswith(f"{qid} ~ 1: log-odds of "), first
        data = json.loads(regress(db_path, f"{qid} ~ 1", "--format", "json").output)
        assert next(iter(data)) == "models" and data["models"] == first.split(": ", 1)[1]
    else:
        assert result.exit_code == 1
        assert result.output.count("\n") == 1 and result.output.startswith(f"Error: outcome {qid!r} is a ")
        assert q.qtype.regression in result.output


@pytest.mark.parametrize("qid", question_ids())
def test_every_question_as_a_covariate_fits_or_says_why_not(db_path, battery, qid):
    q = question(qid)
    result = regress(db_path, f"{YES_NO} ~ {qid}")
    assert "Traceback" not in result.output
    if qid == YES_NO:
        assert result.exit_code == 1 and "is the outcome; it cannot also be a covariate" in result.output
    elif q.protected:
        assert result.exit_code == 1 and result.output.startswith(f"Error: covariate {qid!r} is protected")
    elif q.qtype.covariate is not None:
        assert result.exit_code == 1 and result.output.count("\n") == 1
        assert result.output.startswith(f"Error: covariate {qid!r} is a {q.qtype.label} question")
        assert q.qtype.covariate in result.output
    else:
        assert result.exit_code == 0, result.output
        assert result.output.splitlines()[0] == f"{YES_NO} ~ {qid}: log-odds of Yes against No"


def test_the_first_line_names_the_modelled_option_of_the_yes_no_question(auth_client, battery, db_path):
    assert question(YES_NO).options == ("Yes", "No")
    formula = f"{YES_NO} ~ {GROUP}"
    table = regress(db_path, formula)
    assert table.exit_code == 0, table.output
    assert table.output.splitlines()[0] == f"{formula}: log-odds of Yes against No"
    data = json.loads(regress(db_path, formula, "--format", "json").output)
    assert list(data)[:2] == ["models", "survey"] and data["models"] == "log-odds of Yes against No"
    assert data["modelled"] == ["Yes"] and data["reference"] == "No"
    page = auth_client.get(f"/dashboard/{SLUG}/regression", query_string={"formula": formula}).get_data(as_text=True)
    section = page.split('<section class="regression"')[1]
    assert section.split("</h2>")[0].endswith('<span class="models">log-odds of Yes against No</span>')
    # --reference stays as it is; the page's select picks the modelled option (the default as before)
    flipped = regress(db_path, formula, "--reference", "Yes")
    assert flipped.output.splitlines()[0] == f"{formula}: log-odds of No against Yes"
    options = re.findall(r'<option value="([^"]*)"( selected)?>([^<]*)</option>', page.split('id="reference"')[1]
                         .split("</select>")[0])
    assert options == [("No", " selected", "log-odds of Yes against No"), ("Yes", "", "log-odds of No against Yes")]
    chosen = auth_client.get(f"/dashboard/{SLUG}/regression", query_string={
        "formula": formula, "reference": "Yes", "reference_of": YES_NO}).get_data(as_text=True)
    assert '<span class="models">log-odds of No against Yes</span>' in chosen
    assert '<option value="Yes" selected>log-odds of No against Yes</option>' in chosen
    # the select was drawn for another outcome: the new outcome starts from its own default
    other = auth_client.get(f"/dashboard/{SLUG}/regression", query_string={
        "formula": f"choice_1 ~ {GROUP}", "reference": "Yes", "reference_of": YES_NO})
    assert other.status_code == 200
    assert '<span class="models">log-odds of each of None, Cannabis against Other</span>' in other.get_data(as_text=True)


def test_the_default_regression_page_of_the_battery_fits(auth_client, battery):
    response = auth_client.get(f"/dashboard/{SLUG}/regression")
    page = response.get_data(as_text=True)
    assert response.status_code == 200 and 'class="coefficients"' in page, page[-2000:]


def audited(survey) -> set[str]:
    """The ``slug/qid`` the audit must cover: every question whose type has a sampler for it."""
    return {f"{SLUG}/{q.id}" for q in survey.questions if q.id not in not_audited(survey)
            and q.qtype.audit_sampler(q) is not None}


def not_audited(survey) -> dict[str, str]:
    """``{qid: reason}`` of the questions whose type declares that the audit cannot sample them
    (NotAvailable: the respondent-side crosswise model, which the device does not randomize)."""
    from deniable.server.survey.questions.base import NotAvailable

    out = {}
    for q in survey.questions:
        try:
            q.qtype.audit_sampler(q)
        except NotAvailable as exc:
            out[q.id] = str(exc)
    return out


def test_the_audit_covers_every_protected_battery_question_in_python(db_path, battery):
    """Without chromium: the settings ``deniable audit --db`` samples, and each one's Python twin."""
    import numpy as np

    from deniable.estimators.audit import epsilon_lower_bound
    from deniable.server.survey import audit_settings
    from deniable.server.store.db import connect
    from deniable.server.store.surveys import list_surveys

    survey = battery.survey
    refused = not_audited(survey)
    assert {f"{SLUG}/{q.id}" for q in survey.questions if q.protected and q.id not in refused} <= audited(survey)
    assert all(survey.question(qid).protected and reason for qid, reason in refused.items())
    listed = []
    db = connect(db_path)
    try:
        settings = audit_settings.stored_settings(list_surveys(db), audit_settings.kinds(), listed)
    finally:
        db.conn.close()
    assert sorted(qid for s in settings for qid in s.questions) == sorted(audited(survey))
    assert listed == [(f"{SLUG}/{qid}", reason) for qid, reason in refused.items()]  # said, not skipped in silence
    rng = np.random.default_rng(5)
    for setting in settings:
        counts = python_counts = audit_settings.python_counts(setting, 20_000, lambda n: None, rng)
        assert python_counts.shape[0] == len(setting.inputs) and (counts.sum(axis=1) == 20_000).all(), setting.label
        found = epsilon_lower_bound(setting.cells(counts), 0.999)
        if setting.protected:
            assert found.lower_bound <= setting.declared_epsilon, (setting.kind, setting.label, found)


@pytest.mark.browser
def test_deniable_audit_db_covers_every_protected_battery_question(db_path, battery):
    result = CliRunner().invoke(cli, ["audit", "--db", str(db_path), "--samples", "20000", "--confidence", "0.999",
                                      "--format", "json"])
    assert "Traceback" not in result.output
    report = json.loads(result.output[result.output.index("{"):])
    covered = {qid for row in report["results"] for qid in row["questions"]}
    assert covered == audited(battery.survey)
    assert report["not_audited"] == [{"question": f"{SLUG}/{qid}", "reason": reason}
                                     for qid, reason in not_audited(battery.survey).items()]
    assert all(row["ok"] is not False for row in report["results"]), report["results"]


def test_a_protected_question_of_a_type_without_a_sampler_is_listed_as_not_audited():
    """A type that randomizes but gives no sampler is not skipped in silence: the audit says why."""
    from types import SimpleNamespace

    from deniable.server.survey import audit_settings
    from deniable.server.survey.questions.base import QuestionType

    class Unaudited(QuestionType):
        name, label = "unaudited", "unaudited scale"

    q = SimpleNamespace(id="scale", protected=True, qtype=Unaudited())
    not_audited = []
    stored = SimpleNamespace(survey=SimpleNamespace(slug="s", questions=[q]))
    assert audit_settings.stored_settings([stored], audit_settings.kinds(), not_audited) == []
    assert not_audited == [("s/scale", "unaudited scale questions have no sampler for deniable audit: "
                                       "their randomizer is not checked")]
