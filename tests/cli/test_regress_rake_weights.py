"""``deniable regress --rake MARGINS.json --weights COLUMN`` (and ``--strata``, ``--cluster``, ``--fpc``,
``--trim``): the respondents raked to the margins starting from the responses file's sampling weights,
the model fitted by pseudo-likelihood under the raked weights, its standard errors the sandwich with
the calibration variance of that design — equal to R's survey package, run for real:
``svyglm(y ~ x1 + x2, design = rake(svydesign(ids = ~c, strata = ~s, weights = ~w, fpc = ~N, nest =
TRUE), …), family = quasibinomial())`` for a question asked directly (tests/support/r_survey.py,
:func:`rake_design_svyglm`).  A randomized outcome is checked against R in
tests/unit/test_raked_design_regression.py; here, the command gives that function's numbers.
Every bad input is one ``Error:`` line naming the option or the field, never a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from deniable.client.mechanism import resolve
from deniable.server.cli import cli
from deniable.server.survey import sampling
from deniable.server.survey.dataset import Dataset
from deniable.server.survey.definition import parse_definition
from support.r_survey import rake_design_svyglm, write_csv

DEFINITION = {"slug": "raked-design", "title": "Raked design", "questions": [
    {"id": "drugs", "text": "Drugs?", "options": ["Yes", "No"], "required": False},
    {"id": "stole", "text": "Stole?", "options": ["Yes", "No"], "epsilon": 1.0},
    {"id": "warner", "text": "Fought?", "options": ["Yes", "No"], "design": {"name": "warner", "p": 0.75}},
    {"id": "year", "text": "Year?", "options": ["First", "Second", "Third"]},
    {"id": "sex", "text": "Sex?", "options": ["f", "m"]},
    {"id": "region", "text": "Region?", "options": ["north", "south", "east"]}]}
MARGINS = {"sex": {"f": 0.5, "m": 0.5}, "region": {"north": 0.2, "south": 0.3, "east": 0.5}}
POPULATION_CLUSTERS = (30, 45, 60)  # N_h: the population's clusters in each stratum (the fpc)


def sample(seed: int = 21, n: int = 600):
    """Codes per question and the design columns: a stratified cluster sample with unequal weights
    (stratum 2 sampled least), over-representing women and the north; ``drugs`` asked directly (some
    skip it), ``stole`` randomized at ε = 1, ``warner`` by Warner's design, all depending on year and sex."""
    rng = np.random.default_rng(seed)
    strata = rng.choice(3, n, p=[0.4, 0.35, 0.25])
    clusters = strata * 10 + rng.integers(0, 6, n)
    w = rng.gamma(2.0, 1.0, n) * (1 + strata) + 0.1
    sex = (rng.random(n) < 0.35 + 0.05 * strata).astype(np.int64)
    region = np.minimum(rng.choice(3, n, p=[0.5, 0.3, 0.2]) + (strata == 2), 2)
    year = rng.integers(0, 3, n)
    cluster_effect = rng.normal(0, 0.4, 60)[clusters]
    logit = -1.0 + 0.5 * year + 0.6 * sex + 0.3 * region + cluster_effect
    truth = rng.random(n) < 1 / (1 + np.exp(-logit))
    drugs = np.where(truth, 0, 1)
    drugs[rng.random(n) < 0.05] = -1
    stolen = rng.random(n) < 0.2 + 0.15 * year + 0.1 * sex
    mech = resolve(2, 1.0)
    stole = np.where(rng.random(n) < mech.p, np.where(stolen, 0, 1), np.where(stolen, 1, 0))
    fought = rng.random(n) < 0.3 + 0.15 * year
    warner = np.where(rng.random(n) < 0.75, np.where(fought, 0, 1), np.where(fought, 1, 0))
    codes = {"drugs": drugs, "stole": stole, "warner": warner, "year": year, "sex": sex, "region": region}
    design = {"w": w.round(6), "s": np.array(["a", "b", "c"])[strata], "c": clusters,
              "N": np.array(POPULATION_CLUSTERS)[strata]}
    return codes, design


def write_files(folder: Path, codes, design, margins=MARGINS, keep=("w", "s", "c", "N")) -> tuple[Path, Path, Path]:
    """The survey, the responses (with the design columns ``keep``: a file has no column it does not
    name) and the margins."""
    survey = parse_definition(DEFINITION)
    definition = folder / "survey.json"
    definition.write_text(json.dumps(DEFINITION), encoding="utf-8")
    responses = write_csv(folder / f"responses-{'-'.join(keep) or 'plain'}.csv", {
        **{q.id: ["" if c < 0 else q.qtype.text_of(q, int(c)) for c in codes[q.id]] for q in survey.questions},
        **{name: design[name] for name in keep}})
    margins_path = folder / "margins.json"
    margins_path.write_text(margins if isinstance(margins, str) else json.dumps(margins), encoding="utf-8")
    return definition, responses, margins_path


def named(options) -> tuple:
    """The design columns that command-line options name."""
    return tuple(value for flag, value in zip(options[::2], options[1::2])
                 if flag in ("--weights", "--strata", "--cluster", "--fpc"))


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def regress_json(*args) -> dict:
    result = run("regress", *args, "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def r_columns(codes, design, weights) -> dict:
    """The columns R's script reads: y (NA when skipped), the year dummies, the raking codes, the design."""
    drugs = codes["drugs"]
    return {"y": np.where(drugs < 0, np.nan, (drugs == 0).astype(float)), "x1": (codes["year"] == 1).astype(int),
            "x2": (codes["year"] == 2).astype(int), "sex": codes["sex"], "region": codes["region"],
            "w": weights, "s": design["s"], "c": design["c"], "N": design["N"]}


def r_totals(weights) -> dict:
    """The margins as population totals of the codes 0, 1, … (raking keeps the weights' total)."""
    survey = parse_definition(DEFINITION)
    return {qid: [shares[o] * float(np.sum(weights)) for o in survey.question(qid).options]
            for qid, shares in MARGINS.items()}


def numbers(document) -> tuple[list, list]:
    return [c["estimate"] for c in document["coefficients"]], [c["std_error"] for c in document["coefficients"]]


@pytest.mark.slow  # R itself
@pytest.mark.parametrize("design_options, r_design", [
    ((), {}),
    (("--strata", "s", "--cluster", "c"), {"strata": "s", "cluster": "c"}),
    (("--strata", "s", "--cluster", "c", "--fpc", "N"), {"strata": "s", "cluster": "c", "fpc": "N"}),
], ids=["weights", "strata-clusters", "strata-clusters-fpc"])
def test_a_question_asked_directly_equals_r_svyglm_on_the_raked_design(tmp_path, design_options, r_design):
    codes, design = sample()
    definition, responses, margins_path = write_files(tmp_path, codes, design, keep=named(("--weights", "w",
                                                                                         *design_options)))
    ours = regress_json(definition, responses, "drugs ~ year", "--rake", margins_path, "--weights", "w",
                        *design_options)
    coef, se, _ = rake_design_svyglm(tmp_path, r_columns(codes, design, design["w"]), r_totals(design["w"]),
                                     "y ~ x1 + x2", **r_design)
    estimate, std_error = numbers(ours)
    assert estimate == pytest.approx(coef, rel=1e-9, abs=1e-12)
    assert std_error == pytest.approx(se, rel=1e-9)
    assert ours["weighted"] is True and ours["raking"]["base_weights"] == "w"
    assert ours["left_out"] == int(np.sum(codes["drugs"] < 0)) > 0
    assert ours["raking"]["achieved"]["region"] == pytest.approx(MARGINS["region"], abs=1e-9)
    assert "calibration" in ours["note"] and ours["lr_test"]["statistic"] is None
    # raking started from the sampling weights: not the fit raked from equal weights, nor the unraked one
    plain = write_files(tmp_path, codes, design, keep=())[1]
    from_equal = regress_json(definition, plain, "drugs ~ year", "--rake", margins_path)
    unraked = regress_json(definition, responses, "drugs ~ year", "--weights", "w", *design_options)
    for other in (from_equal, unraked):
        assert np.max(np.abs(np.array(numbers(other)) / np.array([estimate, std_error]) - 1)) > 1e-3


@pytest.mark.slow  # R itself
def test_trimmed_raking_from_the_design_equals_r_svyglm(tmp_path):
    """``--trim LOW,HIGH``: the trimmed weights meet the margins within the bounds (× the mean sampling
    weight), and the fit and its standard errors are R's ``svyglm`` on the design raked from those
    weights — which R's ``rake()`` leaves as they are (they meet the margins already) while it records
    the margins for the calibration variance."""
    codes, design = sample(seed=22)
    definition, responses, margins_path = write_files(tmp_path, codes, design)
    low, high = 0.4, 2.5
    options = ("--rake", margins_path, "--weights", "w", "--strata", "s", "--cluster", "c", "--fpc", "N",
               "--trim", f"{low},{high}")
    ours = regress_json(definition, responses, "drugs ~ year", *options)
    trim = ours["raking"]["trim"]
    untrimmed = regress_json(definition, responses, "drugs ~ year", *options[:-2])["raking"]
    assert untrimmed["trim"] is None and trim["untrimmed"] == untrimmed["weights"]
    assert untrimmed["weights"]["largest"] > high * 1.05 and trim["trimmed"] > 0  # the bounds had work to do
    survey = parse_definition(DEFINITION)
    base = sampling.design_of(Dataset(survey, {k: np.asarray(v) for k, v in codes.items()},
                                      design={"weights": design["w"], "strata": design["s"].astype(str),
                                              "cluster": design["c"].astype(str), "fpc": design["N"].astype(float)}),
                              None)
    _, _, _, raked = sampling.fit_raked_formula(Dataset(survey, {k: np.asarray(v) for k, v in codes.items()}),
                                                sampling.parse_margins(MARGINS, survey), "drugs ~ year",
                                                trim=(low, high), base=base, base_column="w")
    trimmed = np.asarray(raked.raking.weights)
    mean = design["w"].mean()
    assert low * mean * (1 - 1e-12) <= trimmed.min() and trimmed.max() <= high * mean * (1 + 1e-12)
    assert trim["trimmed"] == int(np.sum(np.isclose(trimmed, low * mean) | np.isclose(trimmed, high * mean)))
    coef, se, r_weights = rake_design_svyglm(tmp_path, r_columns(codes, design, trimmed), r_totals(design["w"]),
                                             "y ~ x1 + x2", cluster="c", strata="s", fpc="N")
    assert r_weights == pytest.approx(trimmed, rel=1e-9)  # rake() kept them: they are calibrated
    estimate, std_error = numbers(ours)
    assert estimate == pytest.approx(coef, rel=1e-9, abs=1e-12)
    assert std_error == pytest.approx(se, rel=1e-9)


def test_a_randomized_outcome_gives_the_raked_design_fit(tmp_path):
    """ε = 1 and Warner's design as the outcome: the command's numbers are
    :func:`sampling.fit_raked_formula`'s with the file's design (checked against R in
    tests/unit/test_raked_design_regression.py), its output names the design, and they differ from
    the fit raked from equal weights."""
    codes, design = sample(seed=23)
    definition, responses, margins_path = write_files(tmp_path, codes, design, keep=("w", "s", "c"))
    plain = write_files(tmp_path, codes, design, keep=())[1]
    survey = parse_definition(DEFINITION)
    dataset = Dataset(survey, {k: np.asarray(v) for k, v in codes.items()},
                      design={"weights": design["w"], "strata": design["s"].astype(str),
                              "cluster": design["c"].astype(str)})
    base = sampling.design_of(dataset, None)
    for formula in ("stole ~ year + sex", "warner ~ year"):
        ours = regress_json(definition, responses, formula, "--rake", margins_path,
                            "--weights", "w", "--strata", "s", "--cluster", "c")
        _, _, expected, _ = sampling.fit_raked_formula(dataset, sampling.parse_margins(MARGINS, survey), formula,
                                                       base=base)
        estimate, std_error = numbers(ours)
        assert estimate == pytest.approx(list(expected.params), rel=1e-10)
        assert std_error == pytest.approx(list(expected.std_error), rel=1e-10)
        assert ours["n"] == len(codes["year"])
        equal = regress_json(definition, plain, formula, "--rake", margins_path)
        assert np.max(np.abs(np.array(numbers(equal)[1]) / np.array(std_error) - 1)) > 1e-3
    table = run("regress", definition, responses, "warner ~ year", "--rake", margins_path, "--weights", "w",
                "--strata", "s", "--cluster", "c")
    assert table.exit_code == 0 and "warner design (its misclassification matrix" in table.stdout, table.output


def test_the_table_names_the_base_weights_and_the_raking(tmp_path):
    codes, design = sample(seed=24, n=300)
    definition, responses, margins_path = write_files(tmp_path, codes, design, keep=("w", "s", "c"))
    result = run("regress", definition, responses, "drugs ~ year", "--rake", margins_path, "--weights", "w",
                 "--strata", "s", "--cluster", "c", "--trim", "0.3,3")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "raked from the sampling weights of column 'w' to the margins of 'sex', 'region'" in out
    assert "Kish effective sample size" in out and "trimmed to 0.3..3 × the mean" in out
    assert "drugs ~ year" in out and "year[Second]" in out and "calibration (raking) variance" in out


@pytest.mark.parametrize("args, margins, cells, expected", [
    (("--weights", "weight"), None, None, ["weight"]),  # no such column
    (("--strata", "s"), None, None, ["--strata goes with --weights"]),
    (("--cluster", "c"), None, None, ["--cluster goes with --weights"]),
    (("--weights", "w", "--strata", "stratum"), None, None, ["stratum"]),
    (("--weights", "w"), "{", None, ["--rake:", "not valid JSON"]),
    (("--weights", "w"), '{"sex": {"f": 0.5, "m": 0.6}}', None, ["margins.sex", "add up to 1.1"]),
    (("--weights", "w"), '{"stole": {"Yes": 0.5, "No": 0.5}}', None, ["margins.stole", "protected"]),
    (("--weights", "w"), '{"sex": {"f": 0.5, "x": 0.5}}', None, ["margins.sex.x", "no option"]),
    (("--weights", "w"), None, {"w": -1.0}, ["'w'", "weights"]),
    (("--weights", "w", "--trim", "0.99,1.01"), None, None, ["trim:"]),
], ids=["no-weights-column", "strata-without-weights", "cluster-without-weights", "no-strata-column",
        "margins-not-json", "margins-not-1", "margins-protected", "margins-unknown-option", "negative-weight",
        "trim-infeasible"])
def test_bad_input_is_one_line_naming_the_option_or_field(tmp_path, args, margins, cells, expected):
    codes, design = sample(seed=25, n=200)
    if cells:
        design = {**design, **{name: np.where(np.arange(200) == 7, value, design[name]) for name, value in cells.items()}}
    definition, responses, margins_path = write_files(tmp_path, codes, design, margins if margins else MARGINS,
                                                      keep=("w",))
    result = run("regress", definition, responses, "drugs ~ year", "--rake", margins_path, *args)
    assert result.exit_code in (1, 2), result.output
    assert isinstance(result.exception, SystemExit) and "Traceback" not in result.output, result.output
    assert result.stdout == ""
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, result.stderr
    for part in expected:
        assert part in errors[0], errors[0]


def test_a_database_has_no_weights_to_rake_from(tmp_path):
    result = run("regress", "--db", tmp_path / "x.db", "raked-design", "drugs ~ year", "--rake", tmp_path / "m.json",
                 "--weights", "w")
    assert result.exit_code == 1 and result.stderr.startswith("Error: --weights: a database has no weight column")
