"""Results serialize themselves: each question type's record is its result's ``to_dict()`` with the
question's context (id, text, type, units, labels) and the page's headlines, nothing computed again."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import numpy as np
import pytest

from deniable import estimators as est
from deniable.estimators.numeric import MeanResult
from deniable.server.survey.definition import parse_definition
from deniable.server.survey.estimates import question_json, survey_estimates
from deniable.server.survey.questions.base import placed_after
from deniable.server.survey.simulate import load_truth, simulate_dataset

ROOT = Path(__file__).resolve().parents[2]
TYPES = ("numeric", "multi", "list")

# The keys of each type's record, in order (docs/design.md "Formats"; the JSON files keep this order).
NUMERIC_GRID_KEYS = ["id", "text", "type", "n", "mechanism", "grid", "min", "max", "step", "epsilon",
                     "declared_epsilon", "confidence", "note", "mean", "p", "q", "method", "distribution", "median"]
NUMERIC_LAPLACE_KEYS = [*NUMERIC_GRID_KEYS[:14], "histogram", "histogram_iterations", "histogram_converged"]
MULTI_KEYS = ["id", "text", "type", "n", "epsilon", "declared_epsilon", "bit_epsilon", "p", "q", "method",
              "confidence", "simultaneous", "note", "options", "ticked", "pairs"]
LIST_KEYS = ["id", "text", "type", "items", "sensitive", "protected", "epsilon", "declared_epsilon", "method",
             "confidence", "n", "n_control", "n_treatment", "estimate", "std_error", "ci_low", "ci_high", "df",
             "note", "control", "treatment", "noisy_control", "noisy_treatment", "headline"]
MEAN_KEYS = ["n", "estimate", "std_error", "ci_low", "ci_high", "method", "confidence", "clt_half_width",
             "width_ratio"]


def _estimates(direct: bool, n: int, seed: int = 5):
    """``[(question, result)]`` of the example survey's numeric, check-all and list questions."""
    data = json.loads((ROOT / "examples" / "habits.json").read_text())
    if direct:
        data = copy.deepcopy(data)
        for q in data["questions"]:
            q.pop("epsilon", None)
            q.pop("mechanism", None)
    survey = parse_definition(data)
    truth = load_truth(ROOT / "examples" / "habits-truth.json", survey)
    stats = simulate_dataset(survey, truth, n, np.random.default_rng(seed)).all_stats()
    return [(q, r) for q, r in survey_estimates(survey, stats) if q.type in TYPES]


def _without_headlines(value):
    if isinstance(value, dict):
        return {k: _without_headlines(v) for k, v in value.items() if k != "headline"}
    if isinstance(value, list):
        return [_without_headlines(v) for v in value]
    return value


def _units(x, offset, scale):
    return None if not math.isfinite(x) else offset + scale * x


CASES = [(direct, n) for direct in (False, True) for n in (0, 1, 3, 400)]


@pytest.mark.parametrize(("direct", "n"), CASES)
def test_each_record_is_its_results_dict_with_the_questions_context(direct, n):
    for q, r in _estimates(direct, n):
        record = question_json(q, r)
        json.dumps(record, allow_nan=False)
        if q.type == "numeric":
            assert list(record) == (NUMERIC_LAPLACE_KEYS if r.histogram is not None else NUMERIC_GRID_KEYS)
            own = r.to_dict(scale=float(q.step), offset=float(q.minimum))
            context = {"id": q.id, "text": q.text, "type": "numeric", "min": float(q.minimum),
                       "max": float(q.maximum), "step": float(q.step)}
        elif q.type == "multi":
            assert list(record) == MULTI_KEYS
            own = r.to_dict(q.options)
            context = {"id": q.id, "text": q.text, "type": "multi"}
        else:
            assert list(record) == LIST_KEYS
            own = {**r.to_dict(), "items": list(q.options)}
            context = {"id": q.id, "text": q.text, "type": "list", "sensitive": q.sensitive,
                       "protected": q.protected}
        assert _without_headlines(record) == {**own, **context}, q.id
        if direct:
            assert record["epsilon"] is None and record["declared_epsilon"] is None


@pytest.mark.parametrize("n", [0, 2, 500])
def test_a_numeric_result_in_a_questions_units(n):
    (q, r), = [(q, r) for q, r in _estimates(False, n) if q.id == "hours"]  # discrete Laplace, step 0.5
    lo, step = float(q.minimum), float(q.step)
    data = r.to_dict(scale=step, offset=lo)
    assert [b["value"] for b in data["histogram"]] == [lo + step * i for i in range(q.steps + 1)]
    assert [b["estimate"] for b in data["histogram"]] == [_units(x, 0.0, 1.0) for x in r.histogram]
    mean = data["mean"]
    assert list(mean) == MEAN_KEYS
    assert mean["estimate"] == _units(r.mean.estimate, lo, step)
    assert mean["ci_low"] == _units(r.mean.ci_low, lo, step) and mean["ci_high"] == _units(r.mean.ci_high, lo, step)
    se = r.mean.std_error * step
    assert mean["std_error"] == (se if math.isfinite(se) else None)  # a spread: scaled, not moved
    width = (r.mean.ci_high - r.mean.ci_low) / (2 * r.mean.clt_half_width) if r.mean.clt_half_width > 0 else None
    assert mean["width_ratio"] == (pytest.approx(width) if width is not None and math.isfinite(width) else None)

    (q, r), = [(q, r) for q, r in _estimates(False, n) if q.id == "drinks"]  # grid
    data = r.to_dict(scale=2.0, offset=-1.0)
    assert [p["value"] for p in data["distribution"]] == [-1.0 + 2.0 * s for s in r.support]
    d = r.distribution
    for j, point in enumerate(data["distribution"]):
        assert point["noisy_count"] == int(d.noisy_counts[j])
        for name in ("estimate", "consistent", "std_error", "ci_low", "ci_high"):
            x = float(getattr(d, name)[j])
            assert point[name] == (x if math.isfinite(x) else None), name
        assert (point["cdf"], point["cdf_low"], point["cdf_high"]) == (r.cdf[j], r.cdf_low[j], r.cdf_high[j])
    median = data["median"]
    assert median["ci_low"] == -1.0 + 2.0 * r.median_low and median["ci_high"] == -1.0 + 2.0 * r.median_high
    assert median["estimate"] == _units(r.median, -1.0, 2.0)


def test_a_mean_moves_its_estimate_and_interval_and_scales_its_spreads():
    mean = MeanResult(n=10, estimate=2.0, std_error=0.5, ci_low=1.0, ci_high=3.5, method="score",
                      confidence=0.9, clt_half_width=1.0)
    assert mean.to_dict() == {"n": 10, "estimate": 2.0, "std_error": 0.5, "ci_low": 1.0, "ci_high": 3.5,
                              "method": "score", "confidence": 0.9, "clt_half_width": 1.0, "width_ratio": 1.25}
    assert mean.to_dict(scale=10.0, offset=100.0) == {
        "n": 10, "estimate": 120.0, "std_error": 5.0, "ci_low": 110.0, "ci_high": 135.0, "method": "score",
        "confidence": 0.9, "clt_half_width": 10.0, "width_ratio": 1.25}
    empty = MeanResult(n=0, estimate=math.nan, std_error=math.nan, ci_low=0.0, ci_high=4.0, method="score",
                       confidence=0.95, clt_half_width=math.nan)
    assert empty.to_dict(scale=2.0, offset=1.0) == {
        "n": 0, "estimate": None, "std_error": None, "ci_low": 1.0, "ci_high": 9.0, "method": "score",
        "confidence": 0.95, "clt_half_width": None, "width_ratio": None}


def test_a_check_all_result_names_its_options_and_pairs():
    ticks, pairs, ticked = [200, 200, 150], np.array([[0, 60, 40], [0, 0, 100], [0, 0, 0]]), [50, 200, 200, 50]
    r = est.estimate_multi(500, ticks, pairs, ticked, 2.0)
    data = r.to_dict(["a", "b", "c"])
    assert [o["label"] for o in data["options"]] == ["a", "b", "c"]
    assert [o["noisy_count"] for o in data["options"]] == ticks
    assert data["bit_epsilon"] == pytest.approx(r.epsilon / 3)
    assert [p["labels"] for p in data["pairs"]] == [["a", "b"], ["a", "c"], ["b", "c"]]
    assert [p["noisy_count"] for p in data["pairs"]] == [60, 40, 100]
    # each pair is the ticked-ticked cell of the two options' own cross-tab, computed here again
    both = est.crosstab(np.array([[100, 100], [50, 250]]), 2.0 / 3, 2.0 / 3)  # b and c: ticked first
    pair = data["pairs"][2]
    assert pair["estimate"] == pytest.approx(both.joint_estimate[0, 0])
    assert (pair["ci_low"], pair["ci_high"]) == pytest.approx((both.joint_ci_low[0, 0], both.joint_ci_high[0, 0]))
    assert pair["conditional_estimate"] == pytest.approx(both.conditional_estimate[0, 0])
    assert "conditional_std_error" not in pair
    assert list(data["ticked"]) == MEAN_KEYS
    assert data["ticked"]["estimate"] == pytest.approx(r.ticked.estimate)
    assert [o["label"] for o in r.to_dict()["options"]] == ["0", "1", "2"]
    with pytest.raises(ValueError, match="labels must have k=3"):
        r.to_dict(["a", "b"])
    direct = est.estimate_multi(500, ticks, pairs, ticked, None).to_dict()
    assert direct["epsilon"] is None and direct["declared_epsilon"] is None and direct["bit_epsilon"] is None


def test_a_list_result_serializes_itself():
    control, treatment = np.array([10, 30, 40, 20, 0]), np.array([5, 20, 35, 30, 10])
    data = est.estimate_list(control, treatment, 3, None).to_dict()
    assert data["items"] == 3 and data["method"] == "difference in means" and data["n"] == 200
    assert data["epsilon"] is None and data["declared_epsilon"] is None and data["note"] is None
    # the plain difference of the arms' mean counts, computed here again
    mean_t = (treatment * np.arange(5)).sum() / treatment.sum()
    mean_c = (control * np.arange(5)).sum() / control.sum()
    assert data["estimate"] == pytest.approx(mean_t - mean_c)
    assert data["control"]["estimate"] == pytest.approx(mean_c) and data["treatment"]["estimate"] == pytest.approx(mean_t)
    assert data["noisy_control"] == control.tolist() and data["noisy_treatment"] == treatment.tolist()
    small = est.estimate_list([1, 0, 0, 0, 0], [0, 1, 0, 0, 0], 3, 1.0).to_dict()
    assert small["estimate"] is None and small["df"] is None and "at least 2 reports" in small["note"]
    json.dumps(small, allow_nan=False)


def test_a_crosstab_cell_is_its_arrays_at_that_cell():
    r = est.crosstab(np.array([[200, 150, 0], [300, 350, 0]]), 1.0, 2.0)
    for i in range(2):
        for j in range(3):
            cell = r.cell(i, j)
            assert list(cell) == list(r.CELL_FIELDS)
            for name, value in cell.items():
                x = float(getattr(r, name if name.startswith("conditional_") else f"joint_{name}")[i, j])
                assert value == (x if math.isfinite(x) else None), (i, j, name)


def test_a_summary_prints_nested_results():
    r = est.estimate_grid(np.array([300, 200, 500]), 40, 2, 1.0)
    text = r.summary()
    assert "  mean: MeanResult\n      n: 1000\n" in text
    assert "  distribution: n = 1,000" in text and "95% exact intervals" in text


def test_context_is_placed_after_its_key():
    assert list(placed_after({"a": 1, "b": 2, "c": 3}, "b", x=9, y=8)) == ["a", "b", "x", "y", "c"]
    with pytest.raises(KeyError):
        placed_after({"a": 1}, "z", x=1)
