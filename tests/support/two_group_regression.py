"""A survey with a question of each two-group design (CDM, CDMsym, SLD, UQTunknown) and two questions asked
directly (``year``, a single choice; ``age``, a number), and respondents drawn from a known logistic truth: each
respondent carries the attribute with probability ``expit(x · BETA)``, draws a group and an instruction on the
Python twin of the browser's sampler, and answers as told (CDM's and CDMsym's cheaters say No whatever they are
told, SLD's untruthful carriers say No, UQTunknown's unrelated question has its own prevalence).  A few
respondents leave ``year`` out (the regression's complete cases leave them out).

Shared by tests/cli/test_regress_two_group.py and tests/web/test_regression_two_group.py."""

from __future__ import annotations

import csv

import numpy as np
from scipy.special import expit

from deniable.client.two_group import comply, draw

SLUG = "nc-reg"
DEFINITION = {"slug": SLUG, "title": "Non-compliance and year", "questions": [
    {"id": "cdm", "text": "Have you ever cheated on an exam?", "type": "two_group", "model": "CDM", "p": [0.25, 0.7]},
    {"id": "sym", "text": "Have you ever copied homework?", "type": "two_group", "model": "CDMsym",
     "p": [0.2, 0.3, 0.35, 0.15], "group_share": 0.4},
    {"id": "sld", "text": "Have you ever plagiarized?", "type": "two_group", "model": "SLD", "p": [0.25, 0.8]},
    {"id": "uqt", "text": "Have you ever bought a thesis?", "type": "two_group", "model": "UQTunknown",
     "p": [0.3, 0.8], "unrelated": "Do you prefer tea to coffee?"},
    {"id": "year", "text": "Your year?", "options": ["First", "Second", "Third"], "required": False},
    {"id": "age", "text": "Your age?", "type": "numeric", "min": 18, "max": 40},
]}
MODELS = {"cdm": "CDM", "sym": "CDMsym", "sld": "SLD", "uqt": "UQTunknown"}
FORMULA = "{qid} ~ year + age"
# intercept, year[Second], year[Third], age (per year of age)
BETA = np.array([-2.0, 0.7, 1.3, 0.05])
NUISANCE = {"cdm": 0.1, "sym": 0.1, "sld": 0.8, "uqt": 0.4}  # γ, γ, t, π_UQ


def columns(survey, n: int, seed: int) -> dict[str, np.ndarray]:
    """The reports (codes, −1 not answered) of ``n`` respondents."""
    rng = np.random.default_rng(seed)
    year = rng.integers(0, 3, n)
    age_question = survey.question("age")
    age_codes = rng.integers(0, age_question.k, n)
    age = np.asarray(age_question.qtype.covariate_values(age_question, age_codes), dtype=float)
    share = expit(BETA[0] + BETA[1] * (year == 1) + BETA[2] * (year == 2) + BETA[3] * age)
    out = {"age": age_codes}
    for qid, model in MODELS.items():
        q = survey.question(qid)
        carriers = (rng.random(n) < share).astype(np.int64)
        unrelated = (rng.random(n) < NUISANCE[qid]).astype(np.int64)
        groups, instructions = draw(q.mechanism, n, rng)
        answers = comply(q.mechanism, instructions, carriers, unrelated)
        if model in ("CDM", "CDMsym"):
            answers = np.where(rng.random(n) < NUISANCE[qid], 1, answers)  # cheaters say No
        elif model == "SLD":
            answers = np.where((carriers == 1) & (rng.random(n) >= NUISANCE[qid]), 1, answers)
        out[qid] = (groups - 1) * 2 + answers
    out["year"] = np.where(rng.random(n) < 0.03, -1, year)  # some leave the year out
    return out


def expanded(survey, data: dict, qid: str):
    """The complete cases one row per respondent: RRreg's response (1 Yes, 0 No), group (1, 2), and the design
    matrix (intercept, year[Second], year[Third], age)."""
    keep = (data["year"] >= 0) & (data[qid] >= 0) & (data["age"] >= 0)
    codes, year = data[qid][keep], data["year"][keep]
    age_question = survey.question("age")
    age = np.asarray(age_question.qtype.covariate_values(age_question, data["age"][keep]), dtype=float)
    X = np.column_stack([np.ones(codes.size), year == 1, year == 2, age]).astype(float)
    return 1 - codes % 2, codes // 2 + 1, X


def write_rrreg_csv(path, survey, data: dict, qid: str) -> None:
    """The complete cases in RRreg's shape: ``response``, ``group`` and the covariates' columns of numbers."""
    response, group, X = expanded(survey, data, qid)
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["response", "group", "second", "third", "age"])
        for y, g, row in zip(response.tolist(), group.tolist(), X.tolist()):
            writer.writerow([y, g, int(row[1]), int(row[2]), repr(row[3])])
