"""Subgroups and cross-tabs under raked weights (what the dashboard's weighted subgroups and cross-tab
pages show: :func:`deniable.server.survey.sampling.raked_subgroups` and
:func:`~deniable.server.survey.sampling.raked_crosstab_of`) against R's survey package, run for real:
``rake()`` of ``svydesign(ids = ~1, weights = ~w)``, then ``svymean`` of each debiased indicator with
the rows outside the group (or who skipped a question) NA — a calibrated design keeps them in a
subset — and ``svyciprop(method = "beta")`` of the report indicator, mapped through the mechanism."""

from __future__ import annotations

import numpy as np
import pytest
from deniable.client.mechanism import resolve
from deniable.server.survey import sampling
from deniable.server.survey.dataset import Dataset
from deniable.server.survey.definition import parse_definition
from support.kish import kish_n, with_floor
from support.r_survey import rake_svymean

SURVEY = {"slug": "raked", "title": "Raked", "questions": [
    {"id": "age", "text": "Age?", "options": ["young", "middle", "old"]},
    {"id": "sex", "text": "Sex?", "options": ["f", "m"]},
    {"id": "year", "text": "Year?", "options": ["first", "second"], "required": False},
    {"id": "drugs", "text": "Drugs?", "options": ["yes", "no"], "epsilon": 1.0},
    {"id": "cheat", "text": "Cheated?", "options": ["never", "once", "often"], "epsilon": 1.5, "required": False}]}
MARGINS = {"age": {"young": 0.3, "middle": 0.45, "old": 0.25}, "sex": {"f": 0.52, "m": 0.48}}


def _sample(seed: int = 8, n: int = 300):
    rng = np.random.default_rng(seed)
    survey = parse_definition(SURVEY)
    codes = {"age": rng.choice(3, n, p=[0.5, 0.3, 0.2]), "sex": rng.choice(2, n, p=[0.7, 0.3]),
             "year": rng.integers(0, 2, n), "drugs": rng.integers(0, 2, n), "cheat": rng.integers(0, 3, n)}
    codes["year"][rng.choice(n, 12, replace=False)] = -1
    codes["cheat"][rng.choice(n, 15, replace=False)] = -1
    return survey, codes


def _indicators(q, codes, rows):
    """Per option: the report indicator and the debiased one, NA outside ``rows`` or unanswered."""
    m = resolve(q.k, q.epsilon)
    out = {}
    for j in range(q.k):
        r = np.where(rows & (codes >= 0), (codes == j).astype(float), np.nan)
        out[f"r{j}"], out[f"z{j}"] = r, (r - m.q) / (m.p - m.q)
    return out, m


def _r_margins(survey, codes):
    n = len(codes["age"])
    return {qid: [MARGINS[qid][o] * n for o in survey.question(qid).options] for qid in MARGINS}


@pytest.mark.slow  # R itself
def test_raked_subgroups_equal_r(tmp_path):
    survey, codes = _sample()
    n = len(codes["age"])
    margins = sampling.parse_margins(MARGINS, survey)
    ours = sampling.raked_subgroups(Dataset(survey, dict(codes)), margins, survey.question("cheat"),
                                    survey.question("year"))
    columns = {"w": np.ones(n), "age": codes["age"], "sex": codes["sex"]}
    names = []
    for g in (0, 1, -1):
        found, m = _indicators(survey.question("cheat"), codes["cheat"], codes["year"] == g)
        for key, value in found.items():
            columns[f"{key}_{g + 1}"] = value
        names += [f"z{j}_{g + 1}" for j in range(3)] + [f"r{j}_{g + 1}" for j in range(3)]
    r, raked = rake_svymean(tmp_path, columns, _r_margins(survey, codes), names)
    by_name = dict(zip(names, r))
    assert [label for label, *_ in ours.groups] == ["first", "second", "not answered"]
    for (label, _, size, result), g in zip(ours.groups, (0, 1, -1)):
        assert size == int(((codes["year"] == g) & (codes["cheat"] >= 0)).sum())
        for j in range(3):
            mean, se, _, _ = by_name[f"z{j}_{g + 1}"]
            share, _, low, high = by_name[f"r{j}_{g + 1}"]
            assert result.estimate[j] == pytest.approx(mean, abs=1e-8), (label, j)
            assert result.std_error[j] == pytest.approx(se, abs=1e-8), (label, j)
            n_kish = kish_n(raked * ((codes["year"] == g) & (codes["cheat"] >= 0)))  # the domain's (Kish rule)
            assert [result.ci_low[j], result.ci_high[j]] == pytest.approx(
                with_floor((low - m.q) / (m.p - m.q), (high - m.q) / (m.p - m.q), share, n_kish, m.p, m.q),
                abs=1e-7), (label, j)


@pytest.mark.slow  # R itself
def test_raked_crosstab_equals_r(tmp_path):
    """Joint cells of two randomized questions: R's svymean of the cell's debiased indicator on the
    raked design; the shares of a randomized question given a question asked directly: the raked
    subgroups' (R's domain svymean and svyciprop)."""
    survey, codes = _sample(9)
    n = len(codes["age"])
    margins = sampling.parse_margins(MARGINS, survey)
    dataset = Dataset(survey, dict(codes))
    ct = sampling.raked_crosstab_of(dataset, margins, survey.question("drugs"), survey.question("cheat")).result
    md, mc = resolve(2, 1.0), resolve(3, 1.5)
    both = (codes["drugs"] >= 0) & (codes["cheat"] >= 0)
    columns = {"w": np.ones(n), "age": codes["age"], "sex": codes["sex"]}
    names = []
    for a in range(2):
        for b in range(3):
            z = ((codes["drugs"] == a) - md.q) / (md.p - md.q) * ((codes["cheat"] == b) - mc.q) / (mc.p - mc.q)
            columns[f"z{a}{b}"] = np.where(both, z, np.nan)
            names.append(f"z{a}{b}")
    r, _ = rake_svymean(tmp_path, columns, _r_margins(survey, codes), names)
    assert ct.n == int(both.sum())
    assert ct.joint_estimate.ravel() == pytest.approx(r[:, 0], abs=1e-10)
    assert ct.joint_std_error.ravel() == pytest.approx(r[:, 1], abs=1e-8)
    assert "Fieller" in ct.method

    direct = sampling.raked_crosstab_of(dataset, margins, survey.question("year"), survey.question("cheat")).result
    groups = sampling.raked_subgroups(dataset, margins, survey.question("cheat"), survey.question("year")).groups
    for a in range(2):
        result = groups[a][3]
        assert direct.conditional_estimate[a] == pytest.approx(result.estimate, abs=1e-12)
        assert direct.conditional_std_error[a] == pytest.approx(result.std_error, abs=1e-12)
        assert direct.conditional_ci_low[a] == pytest.approx(result.ci_low, abs=1e-12)
        assert direct.conditional_ci_high[a] == pytest.approx(result.ci_high, abs=1e-12)


def test_raked_subgroups_refuse_what_they_cannot_estimate():
    survey, codes = _sample()
    margins = sampling.parse_margins(MARGINS, survey)
    part = parse_definition({**SURVEY, "questions": [q for q in SURVEY["questions"] if q["id"] != "cheat"]})
    dataset = Dataset(part, {k: v for k, v in codes.items() if k != "cheat"})  # the answer patterns lack it
    with pytest.raises(sampling.SamplingDesignError) as exc:
        sampling.raked_subgroups(dataset, margins, survey.question("cheat"), survey.question("year"), survey=survey)
    assert exc.value.field == "question" and "not in the answer patterns" in str(exc.value)
