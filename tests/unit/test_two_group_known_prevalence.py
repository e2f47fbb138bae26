"""A two-group design's known-answer item (issue 38; Höglinger & Diekmann 2017): ``"known_prevalence"`` is
validated with a field error, kept through every round trip (definition, store spec, codebook), never in the
respondent's design, and the false positives (π̂ − known, π's exact interval shifted) are put in words by
:meth:`TwoGroup.validation_words`, with a warning exactly when π's exact interval excludes the known value.
The numbers are computed here from :func:`estimate_two_group` independently of the type."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from deniable.estimators.two_group import estimate_two_group
from deniable.server.survey.codebook import codebook_dict
from deniable.server.survey.definition import DefinitionError, dumps_definition, loads_definition, parse_definition

QUESTION = {"id": "visited", "text": "Have you ever visited Lake Veltrin?", "type": "two_group", "model": "CDM",
            "p": [0.3, 0.7]}
UPWARD = ("respondents are answering yes when they should not — the design's other estimates may be biased upward")
DOWNWARD = ("respondents are answering no when they should not — the design's other estimates may be biased downward")


def survey(**fields):
    return parse_definition({"slug": "kp", "title": "Known", "questions": [
        {"id": "x", "text": "X?", "options": ["a", "b"]}, {**QUESTION, **fields}]})


def question(**fields):
    return survey(**fields).questions[1]


def counts(yes, n):
    """The type's cells (group 1 yes, no, group 2 yes, no) of per-group yes counts."""
    return {"counts": np.array([yes[0], n[0] - yes[0], yes[1], n[1] - yes[1]])}


def outward(x, how):
    value = {"down": math.floor(100 * x + 1e-9), "up": math.ceil(100 * x - 1e-9), "nearest": math.floor(100 * x + 0.5)}
    return f"{int(value[how])} %"


@pytest.mark.parametrize("value, words", [(-0.1, "must be a prevalence from 0 to 1"), (1.5, "must be a prevalence"),
                                          ("0", "must be a number"), (True, "must be a number"),
                                          (0.1234567, "6 decimal places")])
def test_a_bad_known_prevalence_is_refused_naming_the_field(value, words):
    with pytest.raises(DefinitionError) as caught:
        question(known_prevalence=value)
    assert caught.value.field == "questions[1].known_prevalence" and words in caught.value.problem, str(caught.value)


def test_the_key_round_trips_and_old_definitions_are_unchanged():
    s = survey(known_prevalence=0)
    q = s.questions[1]
    assert q.to_dict()["known_prevalence"] == 0 and loads_definition(dumps_definition(s)) == s
    assert q.qtype.from_spec(json.loads(json.dumps(q.qtype.spec(q)))) == {"method": q.method, "sensitive": None}
    codebook = codebook_dict(s)
    entry = {e["id"]: e for e in codebook["questions"]}["visited"]
    assert entry["known_prevalence"] == 0
    # a definition without the key keeps the canonical design it had, and is not the same question
    old = survey().questions[1]
    assert old.method == '{"model":"CDM","p":[0.3,0.7],"group_share":0.5}' and "known_prevalence" not in old.to_dict()
    assert old != q and loads_definition(dumps_definition(survey())) == survey()
    assert survey(known_prevalence=0.25).questions[1].to_dict()["known_prevalence"] == 0.25
    # the respondent's design never says which question is the known-answer item
    assert "known_prevalence" not in json.dumps(q.qtype.api_design(q))
    assert "known_prevalence" not in json.dumps(q.qtype.page_data(q), default=str)
    assert q.qtype.design(q) == old.qtype.design(old)


def test_no_warning_when_the_interval_includes_the_known_zero():
    q = question(known_prevalence=0)
    yes, n = [92, 207], [300, 300]  # P(yes) ≈ 0.3, 0.7: π ≈ 0
    r = estimate_two_group("CDM", list(q.mechanism.p), yes, n)
    assert r.lower["pi"] <= 0
    result = q.qtype.estimate(q, counts(yes, n), method="exact", confidence=0.95, simultaneous=False)
    record = q.qtype.record(q, result)
    fp = record["false_positive"]
    assert record["known_prevalence"] == 0
    assert (fp["estimate"], fp["ci_low"], fp["ci_high"]) == (r.estimate["pi"], r.lower["pi"], r.upper["pi"])
    expected = (f"Known prevalence 0 %: an estimated {outward(r.estimate['pi'], 'nearest')} "
                f"[{outward(r.lower['pi'], 'down')}, {outward(r.upper['pi'], 'up')}] said yes falsely")
    assert fp["statement"] == fp["words"] == expected and fp["warning"] is None and fp["excludes_known"] is False
    assert q.qtype.validation_words(q, result)["words"] == expected
    rows = q.qtype.shown_rows(q, result)
    assert rows[-1]["option"] == "false_positive" and rows[-1]["label"] == expected
    assert any(line.strip() == f"{expected}." for line in q.qtype.table(q, result, lambda h, rows: []))


def test_a_warning_when_the_interval_excludes_the_known_zero():
    q = question(known_prevalence=0)
    yes, n = [153, 237], [300, 300]  # π ≈ 0.3 on a question nobody can truthfully say yes to
    r = estimate_two_group("CDM", list(q.mechanism.p), yes, n)
    assert r.lower["pi"] > 0
    result = q.qtype.estimate(q, counts(yes, n), method="exact", confidence=0.95, simultaneous=False)
    fp = q.qtype.record(q, result)["false_positive"]
    statement = (f"Known prevalence 0 %: an estimated {outward(r.estimate['pi'], 'nearest')} "
                 f"[{outward(r.lower['pi'], 'down')}, {outward(r.upper['pi'], 'up')}] said yes falsely")
    warning = f"the interval excludes the known 0 %: {UPWARD}"
    assert fp["statement"] == statement and fp["warning"] == warning and fp["excludes_known"] is True
    assert fp["words"] == f"{statement}. Warning: {warning}"
    lines = q.qtype.table(q, result, lambda h, rows: [])
    assert lines[-1] == f"  {statement}. Warning: {warning}."
    assert q.qtype.shown_rows(q, result)[-1]["label"] == fp["words"]


def test_the_mirror_warning_below_a_known_prevalence_and_the_shifted_interval():
    q = question(known_prevalence=0.5)
    yes, n = [153, 237], [300, 300]
    r = estimate_two_group("CDM", list(q.mechanism.p), yes, n)
    assert r.upper["pi"] < 0.5
    result = q.qtype.estimate(q, counts(yes, n), method="exact", confidence=0.95, simultaneous=False)
    fp = q.qtype.record(q, result)["false_positive"]
    assert fp["estimate"] == pytest.approx(r.estimate["pi"] - 0.5, abs=1e-15)
    assert (fp["ci_low"], fp["ci_high"]) == pytest.approx((r.lower["pi"] - 0.5, r.upper["pi"] - 0.5), abs=1e-15)
    assert fp["statement"].startswith(
        f"Known prevalence 50 %: estimated {outward(r.estimate['pi'], 'nearest')} [{outward(r.lower['pi'], 'down')}, "
        f"{outward(r.upper['pi'], 'up')}]; an estimated {outward(r.estimate['pi'] - 0.5, 'nearest')} ")
    assert fp["warning"] == f"the interval excludes the known 50 %: {DOWNWARD}" and fp["excludes_known"] is True


def test_an_excluding_end_is_not_rounded_onto_the_known_value():
    q = question(known_prevalence=0)

    class Result:  # an interval whose lower end is above 0 but below half a percent
        model, outside_model = "CDM", False
        estimate, lower, upper = {"pi": 0.03}, {"pi": 0.004}, {"pi": 0.081}

    words = q.qtype.validation_words(q, Result())
    assert words["statement"] == "Known prevalence 0 %: an estimated 3.0 % [0.4 %, 8.1 %] said yes falsely"
    assert words["excludes_known"] is True


def test_nothing_estimated_yet_and_no_interval():
    q = question(known_prevalence=0)
    result = q.qtype.estimate(q, counts([1, 0], [1, 4]), method="exact", confidence=0.95, simultaneous=False)
    fp = q.qtype.record(q, result)["false_positive"]
    assert fp["estimate"] is None and fp["warning"] is None and fp["excludes_known"] is None
    assert fp["statement"].startswith("Known prevalence 0 %: not estimated yet")
    result = q.qtype.estimate(q, counts([45, 213], [300, 300]), method="exact", confidence=0.95, simultaneous=False)
    assert result.outside_model
    fp = q.qtype.record(q, result)["false_positive"]
    assert fp["warning"] is None and fp["excludes_known"] is None and "no interval" in fp["statement"]
