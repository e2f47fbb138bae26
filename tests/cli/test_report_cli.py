"""``deniable report SLUG``: the methods report, through the installed entry point, on a database filled by
``deniable import`` and ``deniable simulate``.  The file is written (to ``SLUG-report.html`` by default, its
path printed), holds every question, and its numbers are ``deniable estimate --format json``'s, exactly in
the ``data-value`` attributes and at the printed precision in the text; a bad slug, a missing database and
an unwritable file are one ``Error:`` line each."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from deniable.server.web.dashboard.formatting import pct, points, thousands

ROOT = Path(__file__).resolve().parents[2]
DENIABLE = Path(sys.executable).parent / "deniable"
SURVEY = ROOT / "examples" / "survey.json"
TRUTH = ROOT / "examples" / "truth.json"
N = 400


def run(*args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([str(DENIABLE), *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=300)


def filled_db(tmp_path, survey=SURVEY, truth=TRUTH, slug="student-life") -> Path:
    db = tmp_path / "deniable.db"
    assert run("import", survey, "--db", db, "--open").returncode == 0
    simulated = run("simulate", survey, "--n", N, "--truth", truth, "--seed", 11, "--db", db)
    assert simulated.returncode == 0, simulated.stderr
    return db


def question_block(page: str, qid: str) -> str:
    match = re.search(rf'<section class="question" id="q-{re.escape(qid)}".*?</section>', page, re.S)
    assert match, f"question {qid!r} is not in the report"
    return match.group(0)


ROW = re.compile(r'<tr>\s*<th scope="row">(?P<label>[^<]*)</th>\s*'
                 r'<td class="estimate[^"]*" data-value="(?P<headline>[^"]*)"[^>]*>(?P<headline_text>[^<*]*)\*?</td>\s*'
                 r'<td class="interval">\[<span class="ci-low" data-value="(?P<low>[^"]*)">(?P<low_text>[^<]*)</span>, '
                 r'<span class="ci-high" data-value="(?P<high>[^"]*)">(?P<high_text>[^<]*)</span>\]</td>\s*'
                 r'<td class="consistent" data-value="(?P<consistent>[^"]*)">(?P<consistent_text>[^<]*)</td>\s*'
                 r'<td class="std-error" data-value="(?P<se>[^"]*)">(?P<se_text>[^<]*)</td>\s*'
                 r'<td class="noisy-count" data-value="(?P<count>[^"]*)">(?P<count_text>[^<]*)</td>', re.S)


def test_the_report_holds_every_question_with_the_estimates_of_deniable_estimate(tmp_path):
    db = filled_db(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    result = run("report", "student-life", "--db", db, cwd=out)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "student-life-report.html"  # the default name, in the current directory
    page = (out / "student-life-report.html").read_text(encoding="utf-8")

    estimate = run("estimate", "--db", db, "student-life", "--format", "json")
    assert estimate.returncode == 0, estimate.stderr
    expected = json.loads(estimate.stdout)
    assert f'id="n-responses" data-value="{expected["n_responses"]}"' in page
    definition = json.loads(SURVEY.read_text(encoding="utf-8"))
    total = 0.0
    for record in expected["questions"]:
        block = question_block(page, record["id"])
        assert html.escape(record["text"], quote=True) in block
        assert f'<span class="n" data-value="{record["n"]}">{thousands(record["n"])}</span>' in block
        if record["epsilon"] is not None:
            total += record["epsilon"]
            assert f'data-value="{record["epsilon"]}">{record["epsilon"]:.4f}</span>' in block
            assert "Randomization matrix" in block
        else:
            assert "Not protected by ε" in block
        rows = [m.groupdict() for m in ROW.finditer(block)]
        assert [html.unescape(r["label"]) for r in rows] == [o["label"] for o in record["options"]]
        for row, option in zip(rows, record["options"]):
            # the exact numbers in data-value, the printed ones as the page prints them
            assert float(row["low"]) == option["ci_low"] and row["low_text"] == pct(option["ci_low"])
            assert float(row["high"]) == option["ci_high"] and row["high_text"] == pct(option["ci_high"])
            assert float(row["consistent"]) == option["consistent"] and row["consistent_text"] == pct(option["consistent"])
            assert float(row["se"]) == option["std_error"] and row["se_text"] == points(option["std_error"])
            assert int(row["count"]) == option["noisy_count"] and row["count_text"] == thousands(option["noisy_count"])
            # the headline: the unbiased estimate, or the consistent one where that leaves its interval
            assert float(row["headline"]) in (option["estimate"], option["consistent"])
            assert row["headline_text"] == pct(float(row["headline"]))
    assert [q["id"] for q in definition["questions"]] == re.findall(r'<section class="question" id="q-([^"]+)"', page)
    shown_total = float(re.search(r'id="total-epsilon" data-value="([^"]+)"', page).group(1))
    assert shown_total == pytest.approx(total, abs=1e-12)  # the survey's total: the questions' realized ε added up
    for cited in ("Warner", "Feldman", "Kairouz"):  # the methods paragraph's references
        assert cited in page
    assert "What the server does not store" in page
    # self-contained: nothing is loaded from anywhere
    assert not re.search(r'<(?:script|img|iframe|object|embed)\b', page)
    addresses = re.findall(r'(?:src|href|url)[=(]"?([^"\s)]*)', page)
    assert [a for a in addresses if not a.startswith("#")] == ["data:,"]  # the icon: none to fetch; the charts' own patterns


def test_a_designed_survey_shows_each_design_and_its_matrix(tmp_path):
    definition = {"slug": "designs", "title": "Designs", "questions": [
        {"id": "lied", "text": "Have you ever lied?", "options": ["Often", "Never"],
         "design": {"name": "forced", "p": 0.75, "forced": [0.125, 0.125]}},
        {"id": "stole", "text": "Have you ever stolen?", "options": ["Yes", "No"],
         "design": {"name": "kuk", "theta_1": 0.7, "theta_2": 0.3}},
        {"id": "drugs", "text": "Drugs?", "options": ["Yes", "No"], "epsilon": 1.0},
    ]}
    survey = tmp_path / "designs.json"
    survey.write_text(json.dumps(definition), encoding="utf-8")
    truth = tmp_path / "truth.json"
    truth.write_text(json.dumps({"lied": [0.3, 0.7], "stole": [0.1, 0.9], "drugs": [0.2, 0.8]}), encoding="utf-8")
    db = filled_db(tmp_path, survey, truth, "designs")
    target = tmp_path / "designs.html"
    result = run("report", "designs", "--db", db, "-o", target)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(target)
    page = target.read_text(encoding="utf-8")
    for qid in ("lied", "stole", "drugs"):
        assert "Randomization matrix" in question_block(page, qid)
    assert "forced design" in question_block(page, "lied")
    assert "Chaudhuri" in page  # the designs' estimator's reference


@pytest.mark.parametrize("args, message", [
    (["report", "nope", "--db", "{db}"], "no survey 'nope'"),
    (["report", "student-life", "--db", "{tmp}/missing.db"], "missing.db: no such database file"),
    (["report", "student-life", "--db", "{db}", "-o", "{tmp}/no/such/folder/r.html"], "cannot write the report"),
])
def test_errors_are_one_line_naming_the_thing(tmp_path, args, message):
    db = filled_db(tmp_path) if "{db}" in args else None
    result = run(*(a.format(db=db, tmp=tmp_path) for a in args))
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and message in lines[0], result.stderr
    assert result.stdout == ""


def numbers_in(node) -> set[float]:
    """Every number in a JSON value."""
    if isinstance(node, bool) or node is None or isinstance(node, str):
        return set()
    if isinstance(node, (int, float)):
        return {float(node)}
    values = node.values() if isinstance(node, dict) else node
    return set().union(*(numbers_in(v) for v in values)) if values else set()


def test_every_number_of_the_example_survey_s_report_is_one_deniable_estimate_prints(tmp_path):
    """The example of every type and design (examples/everything.json): each estimate, interval and count the
    report holds (its exact data-value, per question) is a number of that question in `deniable estimate
    --format json` — the report computes nothing of its own."""
    survey, truth = ROOT / "examples" / "everything.json", ROOT / "examples" / "everything-truth.json"
    db = filled_db(tmp_path, survey, truth, "everything")
    out = tmp_path / "r.html"
    assert run("report", "everything", "--db", db, "-o", out).returncode == 0
    page = out.read_text(encoding="utf-8")
    estimate = run("estimate", "--db", db, "everything", "--format", "json")
    assert estimate.returncode == 0, estimate.stderr
    records = json.loads(estimate.stdout)["questions"]
    assert [r["id"] for r in records] == re.findall(r'<section class="question" id="q-([^"]+)"', page)
    checked = 0
    for record in records:
        tables = "".join(re.findall(r"<table class=\"estimates.*?</table>", question_block(page, record["id"]), re.S))
        shown = [float(v) for v in re.findall(r'data-(?:value|low|high)="(-?[0-9.eE+-]+)"', tables)]
        expected = numbers_in(record)
        missing = [v for v in shown if not any(abs(v - e) <= 1e-12 * max(1.0, abs(e)) for e in expected)]
        assert not missing, (record["id"], missing[:5])
        checked += len(shown)
    assert checked > 13 * 3  # every question shows numbers
