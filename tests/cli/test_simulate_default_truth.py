"""``deniable simulate`` without ``--truth`` (issue 39): every question's true answers are uniform — each option
of a single choice and each answer of a number equally likely, each option of a check-all question ticked
with probability 0.5, a list experiment's control count uniform and its sensitive item held by half, a
two-group question's prevalence 0.5 (and its unrelated question's 0.5) — and the command says so on stderr
in one line.  Through the installed command, on the three example surveys; ``--truth`` works as before."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from deniable.server.survey.definition import parse_definition
from deniable.server.survey.simulate import default_truth, load_truth, simulate_dataset

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
DENIABLE = Path(sys.executable).parent / "deniable"
LINE = "no --truth: every question's true answers are uniform ("
TRUTHS = {"survey.json": "truth.json", "habits.json": "habits-truth.json", "honesty.json": "honesty-truth.json",
          "everything.json": "everything-truth.json"}


def run(*args, code: int = 0) -> subprocess.CompletedProcess:
    done = subprocess.run([str(DENIABLE), *map(str, args)], capture_output=True, text=True, timeout=300)
    assert done.returncode == code, done.stderr
    return done


def survey(name: str):
    return parse_definition(json.loads((EXAMPLES / name).read_text(encoding="utf-8")))


@pytest.mark.parametrize("name", sorted(TRUTHS))
def test_without_truth_the_answers_are_uniform_and_stderr_says_so_in_one_line(name, tmp_path):
    out = tmp_path / "responses.csv"
    done = run("simulate", EXAMPLES / name, "--n", 4000, "--seed", 3, "-o", out)
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(LINE) and lines[0].endswith(")"), done.stderr
    # the CSV is a responses file deniable estimate reads, with every question answered by every row
    estimates = json.loads(run("estimate", EXAMPLES / name, out, "--format", "json").stdout)
    assert all(q["n"] == 4000 for q in estimates["questions"] if "asked_of" not in q)
    assert all(0 < q["n"] < 4000 for q in estimates["questions"] if "asked_of" in q)  # display logic: some asked
    for q in estimates["questions"]:  # every single choice: each option's interval holds 1/k
        if "options" in q and all("ci_low" in o for o in q["options"]) and survey(name).questions[
                [x.id for x in survey(name).questions].index(q["id"])].qtype.categorical:
            k = len(q["options"])
            assert all(o["ci_low"] - 0.02 <= 1 / k <= o["ci_high"] + 0.02 for o in q["options"]), q


def test_the_default_truth_of_each_type():
    truths = {name: default_truth(survey(name)) for name in TRUTHS}
    assert np.allclose(truths["survey.json"]["drugs"], [0.5, 0.5])
    assert np.allclose(truths["survey.json"]["cheated"], [1 / 3] * 3)
    habits, drinks = truths["habits.json"], survey("habits.json").questions[0]
    assert habits["drinks"]["indices"].tolist() == list(range(drinks.steps + 1))  # every answer of the number
    assert np.allclose(habits["drinks"]["probabilities"], 1 / (drinks.steps + 1))
    assert np.allclose(habits["used"]["ticks"], [0.5] * 4)
    assert np.allclose(habits["shoplifting"]["control"], [0.25] * 4) and habits["shoplifting"]["sensitive"] == 0.5
    honesty = truths["honesty.json"]
    assert honesty["copied"]["sensitive"] == 0.5 and honesty["copied"]["cheaters"] == 0.0
    assert honesty["plagiarism"]["sensitive"] == 0.5 and honesty["plagiarism"]["truthful"] == 1.0
    assert honesty["fabricated"]["sensitive"] == 0.5 and honesty["fabricated"]["unrelated"] == 0.5
    assert np.allclose(honesty["year"], [1 / 3] * 3)


@pytest.mark.parametrize("name", sorted(TRUTHS))
def test_truth_works_as_before(name, tmp_path):
    out = tmp_path / "responses.csv"
    done = run("simulate", EXAMPLES / name, "--n", 500, "--seed", 9, "--truth", EXAMPLES / TRUTHS[name], "-o", out)
    assert "no --truth" not in done.stderr
    s = survey(name)
    expected = simulate_dataset(s, load_truth(str(EXAMPLES / TRUTHS[name]), s), 500, np.random.default_rng(9))
    from deniable.server.survey.responses_csv import read_responses_csv

    back = read_responses_csv(out, s)
    assert all(back.columns[q.id].tolist() == expected.columns[q.id].tolist() for q in s.questions)


def test_help_states_the_default():
    text = " ".join(run("simulate", "--help").stdout.split())
    assert "--truth" in text and "uniform" in text and "[required]" not in text
