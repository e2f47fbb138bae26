"""examples/everything.json, the survey with every question type and every design (issue 39), through the installed
command as a user tries it: import, simulate from examples/everything-truth.json, estimate — every question of
the thirteen is estimated, and every estimate is near its truth: within its 95 % interval widened by half its
width (one fixed seed, so the check is the same every run)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from deniable.server.survey.definition import parse_definition

ROOT = Path(__file__).resolve().parents[2]
DENIABLE = str(Path(sys.executable).parent / "deniable")
SURVEY, TRUTH = ROOT / "examples" / "everything.json", ROOT / "examples" / "everything-truth.json"


def run(*args):
    done = subprocess.run([DENIABLE, *map(str, args)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def near(truth: float, low: float, high: float) -> bool:
    slack = (high - low) / 2
    return low - slack <= truth <= high + slack


def mean_of(spec: dict) -> float:
    return sum(v * p for v, p in zip(spec["values"], spec["probabilities"]))


def test_the_example_has_every_type_design_logic_page_and_translation():
    data = json.loads(SURVEY.read_text(encoding="utf-8"))
    survey = parse_definition(data)
    types = {q.qtype.name for q in survey.questions}
    assert {"choice", "multi", "numeric", "list", "two_group"} <= types
    designs = {(q["design"]["name"], q["design"].get("side")) for q in data["questions"] if "design" in q}
    assert designs == {("forced", None), ("unrelated", None), ("warner", None), ("kuk", None), ("crosswise", None),
                       ("crosswise", "respondent"), ("custom", None)}
    assert {q.get("mechanism") for q in data["questions"] if q.get("type") == "numeric"} == {"grid", "laplace"}
    assert any("epsilon" in q and "options" in q and "type" not in q for q in data["questions"])  # k-ary RR
    assert any("epsilon" not in q and "design" not in q and "type" not in q for q in data["questions"])  # direct
    assert any("show_if" in q for q in data["questions"]) and any(q.get("page_break") for q in data["questions"])
    assert set(data["translations"]) == {"es"}
    assert set(data["translations"]["es"]["questions"]) == {q["id"] for q in data["questions"]}


def test_the_example_simulates_and_estimates_near_its_truth(tmp_path):
    run("import", SURVEY, "--db", tmp_path / "e.db", "--open")
    run("simulate", SURVEY, "--n", 6000, "--truth", TRUTH, "--seed", 5, "-o", tmp_path / "e.csv")
    out = json.loads(run("estimate", SURVEY, tmp_path / "e.csv", "--format", "json"))
    truth = json.loads(TRUTH.read_text(encoding="utf-8"))
    by_id = {q["id"]: q for q in out["questions"]}
    assert list(by_id) == [q["id"] for q in json.loads(SURVEY.read_text())["questions"]]
    checked = set()
    for qid, q in by_id.items():
        assert q["n"] > 0, qid
        if q.get("type") == "numeric":
            m = q["mean"]
            assert near(mean_of(truth[qid]), m["ci_low"], m["ci_high"]), (qid, m)
        elif q.get("type") == "list":
            assert near(truth[qid]["sensitive"], q["ci_low"], q["ci_high"]), (qid, q["estimate"])
        elif q.get("type") == "two_group":
            pi = q["parameters"]["pi"]
            expected = truth[qid]["prevalence"] * (1 - truth[qid]["cheaters"])  # the honest carriers
            assert near(expected, pi["ci_low"], pi["ci_high"]), (qid, pi)
        else:  # single choice (asked directly, k-ary RR, every design) and check-all: one estimate per option
            assert len(q["options"]) == len(truth[qid])
            for share, option in zip(truth[qid], q["options"]):
                assert near(share, option["ci_low"], option["ci_high"]), (qid, option)
        checked.add(qid)
    assert checked == set(truth)
    asked = by_id["hours"]  # display logic: asked only of the second and later years (60 % of 6,000)
    assert 0.55 * 6000 < asked["n"] < 0.65 * 6000
    table = run("estimate", SURVEY, tmp_path / "e.csv")
    assert "did not follow the instructions" in table
