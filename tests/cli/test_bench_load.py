"""The load benchmarks' bodies and conservation check (``scripts/loadgen.py``, ``scripts/bench_load.py``).

The bodies are diverse (many distinct answer patterns over a run) and valid (the server's own
``validate_reports`` takes every one: display logic followed, optional questions sometimes left
out); ``--fixed-body`` sends one.  The conservation check finds the responses a lossy store drops
(``tests/data/lossy-22e6eeb.db``, written by 22e6eeb).  End to end, a short run of bench_load against
a real ``deniable serve`` stores every acknowledged body.  No timing assertions.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

from loadgen import SKIP_OPTIONAL, check_store, make_reports  # noqa: E402

from deniable.server.store import aggregates  # noqa: E402
from deniable.server.store.db import connect  # noqa: E402
from deniable.server.store.demo import DEMO_DEFINITION  # noqa: E402
from deniable.server.store.responses import validate_reports  # noqa: E402
from deniable.server.store.surveys import insert_survey  # noqa: E402
from deniable.server.survey.definition import load_definition, parse_definition  # noqa: E402

DATA = ROOT / "tests" / "data"
LOGIC = {"slug": "logic", "title": "Logic", "questions": [
    {"id": "smoke", "text": "Do you smoke?", "options": ["Yes", "No", "Sometimes"], "required": False},
    {"id": "many", "text": "How many a day?", "options": ["1-5", "6+"], "epsilon": 2.0,
     "show_if": {"question": "smoke", "in": ["Yes", "Sometimes"]}},
    {"id": "kinds", "text": "Which?", "type": "multi", "options": ["Pipe", "Cigar"],
     "show_if": {"question": "smoke", "in": ["Yes"]}},
    {"id": "pipe", "text": "Pipe brand?", "options": ["A", "B"], "show_if": {"question": "kinds", "in": ["Pipe"]}},
    {"id": "end", "text": "Anything else?", "options": ["Yes", "No"]},
]}
# (the survey, every answer pattern a respondent can give, bodies drawn to see them all): the demo
# 2 × 4 × (4 + not answered); LOGIC, counted by hand: smoke = Yes 24, Sometimes 4, No 2, not answered
# 2; habits.json 2 × 16 × 10 × (3 + 1) (its Laplace question is outside the patterns)
SURVEYS = {"demo": (lambda: parse_definition(DEMO_DEFINITION), 40, 3000),
           "logic": (lambda: parse_definition(LOGIC), 32, 3000),
           "habits": (lambda: load_definition(ROOT / "examples" / "habits.json"), 1280, 30000)}


@pytest.mark.parametrize("name", SURVEYS)
def test_bodies_are_valid_and_reach_every_answer_pattern(name, migrated_db):
    make_survey, possible, count = SURVEYS[name]
    survey = make_survey()
    db = connect(migrated_db)
    try:
        stored = insert_survey(db, survey, status="open")
    finally:
        db.conn.close()
    reports = make_reports(survey, count, seed=3)
    # JSON as sent: the server's validation takes every body (it raises ReportError on one it refuses)
    patterns = Counter(aggregates.encode(survey, validate_reports(stored, json.loads(json.dumps(r))))
                       for r in reports)
    assert len(patterns) == possible
    for q in survey.questions:
        if not q.required and q.show_if is None:  # left out about one time in five
            assert abs(sum(q.id not in r for r in reports) / len(reports) - SKIP_OPTIONAL) < 0.03, q.id
    assert make_reports(survey, count, seed=3) == reports  # seeded


@pytest.mark.parametrize("name", SURVEYS)
def test_a_fixed_body_is_one_body(name):
    reports = make_reports(SURVEYS[name][0](), 500, seed=3, fixed=True)
    assert len({json.dumps(r, sort_keys=True) for r in reports}) == 1


def test_the_check_finds_the_responses_a_lossy_store_dropped(tmp_path):
    golden = json.loads((DATA / "lossy-22e6eeb.json").read_text(encoding="utf-8"))
    path = tmp_path / "lossy.db"
    shutil.copy(DATA / "lossy-22e6eeb.db", path)
    for slug, survey in golden["surveys"].items():
        kept = check_store(path, slug, None, acknowledged=survey["responses"])
        assert kept.rows == survey["responses"] and kept.in_patterns < kept.rows
        assert not kept.ok and kept.lost == kept.rows - kept.in_patterns
        assert kept.line().startswith("CONSERVATION FAILED") and "LOST" in kept.line()


def bench_load(*args: str) -> dict:
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "bench_load.py"), "--workers", "2",
                           "--clients", "8", "--seconds", "1", "--max-requests", "600", "--json", *args],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


@pytest.mark.slow
def test_a_short_run_stores_every_acknowledged_diverse_body():
    data = bench_load("--survey", str(ROOT / "examples" / "habits.json"))
    assert data["bodies"] == "diverse" and data["errors"] == 0 and data["conservation_ok"]
    assert data["acknowledged"] == data["stored"] == data["in_patterns"] == data["submissions"] + 200
    assert data["lost"] == 0
    assert data["distinct_bodies"] > 0.9 * data["submissions"]  # (its Laplace question alone has 1,151 reports)
    assert data["distinct_patterns"] > 200


@pytest.mark.slow
def test_a_short_run_with_the_fixed_body_stores_one_pattern():
    data = bench_load("--fixed-body")
    assert data["bodies"] == "fixed" and data["errors"] == 0 and data["conservation_ok"]
    assert data["distinct_bodies"] == 1 and data["distinct_patterns"] == 1
    assert data["acknowledged"] == data["stored"] == data["in_patterns"]
