"""``scripts/bench_wrk.py``: its Lua script draws a body per request from every question's valid
reports, follows the display logic, and a short run under ``wrk`` stores every acknowledged body
(no request refused, many distinct answer patterns).  No timing assertions."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

from bench_wrk import lua_script  # noqa: E402
from loadgen import answer_menus  # noqa: E402

from deniable.server.survey.definition import parse_definition  # noqa: E402

LOGIC = {"slug": "logic", "title": "Logic", "questions": [
    {"id": "smoke", "text": "Do you smoke?", "options": ["Yes", "No", "Sometimes"], "required": False},
    {"id": "many", "text": "How many a day?", "options": ["1-5", "6+"], "epsilon": 2.0,
     "show_if": {"question": "smoke", "in": ["Yes", "Sometimes"]}},
    {"id": "kinds", "text": "Which?", "type": "multi", "options": ["Pipe", "Cigar"],
     "show_if": {"question": "smoke", "in": ["Yes"]}},
    {"id": "pipe", "text": "Pipe brand?", "options": ["A", "B"], "show_if": {"question": "kinds", "in": ["Pipe"]}},
    {"id": "end", "text": "Anything else?", "options": ["Yes", "No"]},
]}


def lua_rows(script: str) -> list[str]:
    block = script.split("local questions = {\n", 1)[1].split("\n}\n", 1)[0]
    return block.splitlines()


def test_the_lua_table_holds_every_report_and_the_display_logic():
    survey = parse_definition(LOGIC)
    rows = lua_rows(lua_script(answer_menus(survey, np.random.default_rng(1)), "/p", 7, None))
    assert len(rows) == len(survey.questions)
    for q, row in zip(survey.questions, rows):
        members = [json.loads("{" + m.replace('\\"', '"').replace("\\\\", "\\") + "}")
                   for m in re.findall(r'"((?:[^"\\]|\\.)*)"', row.split("reports = ", 1)[1])]
        reports = [m[q.id] for m in members]
        assert [q.qtype.check_report(q, r) for r in reports] == list(range(q.qtype.n_cells(q)))
        assert ("skip = 0.2" in row) == (not q.required)
    # many and kinds are asked after smoke = Yes (report 1 in Lua) or Sometimes; pipe after a tick of Pipe
    assert "source = 1, shown = {[1] = true, [3] = true}" in rows[1]
    assert "source = 1, shown = {[1] = true}" in rows[2]
    assert "source = 3, shown = {[2] = true, [4] = true}" in rows[3]  # masks 1 and 3 of 0..3
    assert "source" not in rows[0] and "source" not in rows[4]


def bench_wrk(tmp_path, *args: str) -> str:
    definition = tmp_path / "logic.json"
    definition.write_text(json.dumps(LOGIC))
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "bench_wrk.py"), "--workers", "2",
                           "--connections", "8", "--seconds", "1", "--survey", str(definition), *args],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def conservation(out: str) -> dict:
    line = next(line for line in out.splitlines() if line.startswith("conservation: "))
    assert line.startswith("conservation: ok — "), out
    found = re.search(r"([\d,]+) acknowledged \(201\), ([\d,]+) stored, ([\d,]+) in the answer patterns "
                      r"\(([\d,]+) distinct\)", line)
    acknowledged, stored, in_patterns, distinct = (int(n.replace(",", "")) for n in found.groups())
    assert in_patterns == stored >= acknowledged > 0
    return {"distinct": distinct}


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed (apt-get install wrk)")
def test_a_short_run_under_wrk_sends_diverse_valid_bodies(tmp_path):
    out = bench_wrk(tmp_path)
    assert "random answer per question per request" in out
    assert conservation(out)["distinct"] >= 20  # of the 32 a respondent can give
    lines = out.splitlines()
    values = next(lines[i + 1] for i, line in enumerate(lines) if line.split()[:1] == ["requests"])
    assert values.split()[5] == "0"  # not 201: no request refused


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed (apt-get install wrk)")
def test_a_short_run_under_wrk_with_the_fixed_body_stores_one_pattern(tmp_path):
    out = bench_wrk(tmp_path, "--fixed-body")
    assert conservation(out)["distinct"] == 1
