"""examples/honesty.json, the two-group designs' example survey, through the installed command as a user tries
it: import, simulate from examples/honesty-truth.json (10 % who say No whatever they are told to the CDM question,
carriers of whom 70 % answer truthfully to the SLD one), estimate — every design's π and second parameter is
found within its exact interval, and the designs detect the non-compliance: γ's and t's intervals exclude 0 and 1."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DENIABLE = str(Path(sys.executable).parent / "deniable")
SURVEY, TRUTH = ROOT / "examples" / "honesty.json", ROOT / "examples" / "honesty-truth.json"


def run(*args):
    done = subprocess.run([DENIABLE, *map(str, args)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_example_simulates_and_estimates(tmp_path):
    run("import", SURVEY, "--db", tmp_path / "h.db", "--open")
    run("simulate", SURVEY, "--n", 10000, "--truth", TRUTH, "--seed", 11, "-o", tmp_path / "h.csv")
    out = json.loads(run("estimate", SURVEY, tmp_path / "h.csv", "--format", "json"))
    truth = json.loads(TRUTH.read_text())
    by_id = {q["id"]: q for q in out["questions"]}
    assert [q["id"] for q in out["questions"]] == [q["id"] for q in json.loads(SURVEY.read_text())["questions"]]
    copied, plagiarism = truth["copied"], truth["plagiarism"]
    expected = {"copied": copied["prevalence"] * (1 - copied["cheaters"]),  # π: the honest carriers
                "stimulants": truth["stimulants"], "plagiarism": plagiarism["prevalence"],
                "fabricated": truth["fabricated"]["sensitive"]}
    for qid, pi in expected.items():
        q = by_id[qid]
        assert q["parameters"]["pi"]["ci_low"] <= pi <= q["parameters"]["pi"]["ci_high"], qid
        assert sum(q["n_group"]) == 10000
    gamma, t = by_id["copied"]["parameters"]["gamma"], by_id["plagiarism"]["parameters"]["t"]
    assert 0 < gamma["ci_low"] <= copied["cheaters"] <= gamma["ci_high"]
    assert t["ci_low"] <= plagiarism["truthful"] <= t["ci_high"] < 1
    assert by_id["stimulants"]["parameters"]["gamma"]["ci_low"] == 0.0
    uq = by_id["fabricated"]["parameters"]["piUQ"]
    assert uq["ci_low"] <= truth["fabricated"]["unrelated"] <= uq["ci_high"]
    table = run("estimate", SURVEY, tmp_path / "h.csv")
    assert "did not follow the instructions" in table and "answered truthfully" in table
