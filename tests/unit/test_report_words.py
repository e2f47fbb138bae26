"""The methods report's words (server/survey/report.py): what it says the server stores and does not is
docs/security.md's, and its methods paragraph cites what it uses and adds up the survey's ε."""

from __future__ import annotations

from pathlib import Path

import pytest

from deniable.server.survey import report
from deniable.server.survey.definition import parse_definition

SECURITY = (Path(__file__).resolve().parents[2] / "docs" / "security.md").read_text(encoding="utf-8")

# each sentence of the report, and what docs/security.md says that backs it
BACKED = {
    report.STORED[0]: "It exists only in\nthe respondent's browser",
    report.STORED[2]: "responses have random 96-bit keys",
    report.STORED[3]: "unused invitation tokens'\nhashes",
    report.STORED[4]: "accounts' password hashes; the\nhashes of live dashboard sessions'",
    report.NOT_STORED[1]: "no client address, no keyed hash of one",
    report.NOT_STORED[2]: "Not an address, not a time finer than the day",
    report.NOT_STORED[3]: "nothing the server keeps links a\nresponse to a person",
    report.NOT_STORED[4]: "there is no access log",
    report.NOT_STORED[5]: "Rate-limit counters\nare never on disk",
    report.STORAGE_CAVEAT: "Not covered: the operating system's own traces",
}


@pytest.mark.parametrize("sentence, source", BACKED.items(), ids=lambda s: s[:30] if isinstance(s, str) else s)
def test_what_the_report_says_of_storage_is_the_security_page(sentence, source):
    assert " ".join(source.split()) in " ".join(SECURITY.split())


def test_every_fact_is_backed():
    assert set(report.STORED) - set(BACKED) == {report.STORED[1]}  # the direct answers: stored as given, by definition
    assert set(report.NOT_STORED) - set(BACKED) == {report.NOT_STORED[0]}  # the paragraph above "What is protected"


def _paragraph(definition, **dates):
    survey = parse_definition(definition)
    protections = [report.protection(q, "exact") for q in survey.questions]
    text, refs = report.methods_paragraph(survey, n=1234, opened=dates.get("opened"), closed=dates.get("closed"),
                                          made_on="2026-11-29", method="exact", confidence=0.95,
                                          protections=protections, version="0.1.0")
    return survey, text, refs


def test_the_paragraph_cites_randomized_response_composition_and_the_interval():
    survey, text, refs = _paragraph({"slug": "s", "title": "Habits", "questions": [
        {"id": "a", "text": "A?", "options": ["Yes", "No"], "epsilon": 1.0},
        {"id": "b", "text": "B?", "options": ["Yes", "No", "Maybe"], "epsilon": 0.5},
        {"id": "c", "text": "C?", "options": ["Yes", "No"]}]}, opened="2026-01-01", closed="2026-02-01")
    assert "from 2026-01-01 to 2026-02-01; 1,234 people responded" in text
    assert "It asked 3 questions, 2 of them under ε-local differential privacy" in text
    assert f"ε = {survey.total_epsilon:.2f}" in text and "ε between 0.50 and 1.00 per question" in text
    assert {"warner", "kairouz-extremal", "dwork", "feldman"} <= set(refs)
    for key in refs:
        assert report.CITE[key] in text


def test_a_survey_without_protected_questions_says_so():
    _, text, refs = _paragraph({"slug": "s", "title": "Plain", "questions": [
        {"id": "c", "text": "C?", "options": ["Yes", "No"]}]})
    assert "had not been opened as of 2026-11-29" in text
    assert "none of them under local differential privacy" in text
    assert "dwork" not in refs and "warner" not in refs


def test_a_design_shows_its_matrix_with_its_reports():
    survey = parse_definition({"slug": "s", "title": "D", "questions": [
        {"id": "stole", "text": "Stolen?", "options": ["Yes", "No"],
         "design": {"name": "kuk", "theta_1": 0.7, "theta_2": 0.3}}]})
    p = report.protection(survey.questions[0], "wilson")
    assert [label for label, _ in p["matrix"]["rows"]] == ["red", "black"]
    assert p["matrix"]["answers"] == ["Yes", "No"]
    assert p["epsilon"] == pytest.approx(survey.total_epsilon)
    assert {"chaudhuri", "wilson"} <= set(p["references"])
