"""``deniable estimate --rrreg MODEL --p …  DATA.csv`` — data collected for R's RRreg, analysed by the installed
command: RRreg 0.7.5's own fits on the reference data (tests/data/rrreg), and data the reference never saw
(unequal, shuffled groups, covariate columns, moment estimates outside [0, 1]) against the closed forms written
out here and an independent constrained maximization."""

from __future__ import annotations

import csv
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import minimize

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "rrreg"
DENIABLE = str(Path(sys.executable).parent / "deniable")
NUISANCE = {"CDM": "gamma", "CDMsym": "gamma", "SLD": "t", "UQTunknown": "piUQ"}


def run(*args):
    return subprocess.run([DENIABLE, "estimate", *map(str, args)], capture_output=True, text=True, timeout=120)


def _json(*args) -> dict:
    done = run(*args, "--format", "json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


REFERENCE_FILES = sorted(REFERENCE.glob("*_n*.json"))


@pytest.mark.parametrize("ref_path", REFERENCE_FILES, ids=lambda p: p.stem)
def test_the_command_reproduces_rrreg(ref_path):
    ref = json.loads(ref_path.read_text())
    out = _json("--rrreg", ref["design"], "--p", ",".join(repr(v) for v in ref["p"]), REFERENCE / ref["data_file"])
    assert out["n"] == ref["group_sizes"] and out["yes"] == ref["yes_counts"]
    for name, value in ref["rruni_moment"]["estimates"].items():
        assert out["moment"][name] == pytest.approx(value, abs=1e-9)
        se = ref["rruni_moment"]["se"][name]
        if se is not None:
            assert out["moment_se"][name] == pytest.approx(se, rel=1e-9)
    check = ref["constrained_mle_check_base_R"]
    assert out["estimate"]["pi"] == pytest.approx(check["pi"], abs=1e-5)
    assert out["estimate"][check["par2_name"]] == pytest.approx(check["par2"], abs=1e-5)
    assert out["loglik"] == pytest.approx(check["loglik_bernoulli"], abs=1e-6)


def _probabilities(model, p, pi, nu):
    """P(yes | group 1), P(yes | group 2) as RRreg parameterizes each design (tests/data/rrreg/README.md)."""
    p = np.asarray(p)
    if model == "CDM":
        return pi + (1 - pi - nu) * p
    if model == "CDMsym":
        return np.array([pi * (1 - p[1]) + (1 - pi - nu) * p[0], pi * (1 - p[3]) + (1 - pi - nu) * p[2]])
    if model == "SLD":
        return pi * nu + (1 - pi) * (1 - p)
    return p * pi + (1 - p) * nu


def _moments(model, p, lam, n):
    """RRreg's closed-form moment estimates and SEs (README), written out independently of the package."""
    v = lam * (1 - lam) / (n - 1)
    l1, l2 = lam
    if model == "CDM":
        p1, p2 = p
        pi = (p2 * l1 - p1 * l2) / (p2 - p1)
        beta = (l2 - l1) / (p2 - p1)
        return {"pi": pi, "gamma": 1 - pi - beta}, {
            "pi": math.sqrt(p1**2 * v[1] + p2**2 * v[0]) / abs(p1 - p2),
            "gamma": math.sqrt((1 - p2) ** 2 * v[0] + (1 - p1) ** 2 * v[1]) / abs(p1 - p2)}
    if model == "CDMsym":
        p1, p2, p3, p4 = p
        d = p3 * (1 - p2) - p1 * (1 - p4)
        return {"pi": (p3 * l1 - p1 * l2) / d,
                "gamma": -((p1 - l1) * (1 - p3 - p4) - (p3 - l2) * (1 - p1 - p2)) / d}, {
            "pi": math.sqrt(p3**2 * v[0] + p1**2 * v[1]) / abs(d),
            "gamma": math.sqrt((1 - p3 - p4) ** 2 * v[0] + (1 - p1 - p2) ** 2 * v[1]) / abs(d)}
    if model == "SLD":
        p1, p2 = p
        e = p1 - p2 + l1 - l2
        t = (l2 * (1 - p1) - l1 * (1 - p2)) / ((l2 - l1) + (p2 - p1))
        se_t = math.sqrt(v[0] * ((p1 - p2) * (p2 + l2 - 1) / e**2) ** 2 + v[1] * ((p1 - p2) * (p1 + l1 - 1) / e**2) ** 2)
        return {"pi": 1 + (l2 - l1) / (p2 - p1), "t": t}, {"pi": math.sqrt(v[0] + v[1]) / abs(p1 - p2), "t": se_t}
    p1, p2 = p
    return {"pi": (l1 * (1 - p2) - l2 * (1 - p1)) / (p1 - p2), "piUQ": (p2 * l1 - p1 * l2) / (p2 - p1)}, {
        "pi": math.sqrt((1 - p2) ** 2 * v[0] + (1 - p1) ** 2 * v[1]) / abs(p1 - p2),
        "piUQ": math.sqrt(p2**2 * v[0] + p1**2 * v[1]) / abs(p1 - p2)}


def _constrained_mle(model, p, yes, n):
    """Maximize the binomial log-likelihood over the admissible region from many starts (SLQP on the original
    parameters: π, ν in [0, 1], and π + γ ≤ 1 for the CDMs)."""
    yes, n = np.asarray(yes), np.asarray(n)

    def nll(x):
        q = np.clip(_probabilities(model, p, x[0], x[1]), 1e-300, 1 - 1e-16)
        return -np.sum(yes * np.log(q) + (n - yes) * np.log1p(-q))

    cons = [{"type": "ineq", "fun": lambda x: 1 - x[0] - x[1]}] if model.startswith("CDM") else []
    best = None
    for start in [(a, b) for a in (0.1, 0.4, 0.8) for b in (0.05, 0.3, 0.6, 0.9)]:
        if model.startswith("CDM") and sum(start) > 1:
            continue
        fit = minimize(nll, start, method="SLSQP", bounds=[(0, 1), (0, 1)], constraints=cons,
                       options={"ftol": 1e-15, "maxiter": 1000})
        if best is None or fit.fun < best.fun:
            best = fit
    return best.x, -best.fun


DESIGNS = [("CDM", [0.25, 0.65]), ("CDMsym", [0.3, 0.2, 0.6, 0.1]), ("SLD", [0.2, 0.7]), ("UQTunknown", [0.8, 0.35])]


@pytest.mark.parametrize(("model", "p"), DESIGNS)
@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_unseen_data_unequal_groups_and_boundaries(tmp_path, model, p, seed):
    rng = np.random.default_rng(seed * 100 + len(model))
    n = np.array([int(rng.integers(40, 400)), int(rng.integers(40, 400))])
    pi = float(rng.choice([0.0, 0.05, 0.3]))
    nu = {"CDM": 0.0, "CDMsym": 0.0, "SLD": 1.0, "UQTunknown": 0.0}[model] if seed % 2 else float(rng.uniform(0.1, 0.5))
    probs = _probabilities(model, p, pi, nu)
    rows = [(int(rng.random() < probs[g]), g + 1, round(float(rng.normal()), 6)) for g in (0, 1) for _ in range(n[g])]
    order = rng.permutation(len(rows))
    data = tmp_path / "data.csv"
    with data.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["id", "group", "x", "response"])
        for i in order:
            writer.writerow([int(i), rows[i][1], rows[i][2], rows[i][0]])
    yes = [sum(r[0] for r in rows if r[1] == g) for g in (1, 2)]
    out = _json("--rrreg", model, "--p", ",".join(map(str, p)), data)
    assert out["n"] == n.tolist() and out["yes"] == yes
    moments, ses = _moments(model, p, np.array(yes) / n, n)
    for name in moments:
        if math.isfinite(moments[name]):
            assert out["moment"][name] == pytest.approx(moments[name], abs=1e-9)
            assert out["moment_se"][name] == pytest.approx(ses[name], rel=1e-9)
    (pi_hat, nu_hat), loglik = _constrained_mle(model, p, yes, n)
    assert out["loglik"] == pytest.approx(loglik, abs=1e-6)
    assert out["loglik"] >= loglik - 1e-9
    assert out["estimate"]["pi"] == pytest.approx(pi_hat, abs=1e-4)
    if not (model == "SLD" and out["estimate"]["pi"] < 1e-6):  # t is unidentified at π = 0
        assert out["estimate"][NUISANCE[model]] == pytest.approx(nu_hat, abs=1e-4)
    for name in ("pi", NUISANCE[model]):
        if out["estimate"][name] is not None:
            assert out["lower"][name] <= out["estimate"][name] <= out["upper"][name]


@pytest.mark.parametrize(("model", "p", "yes_share"), [
    ("Warner", "0.8", lambda pi: 0.8 * pi + 0.2 * (1 - pi)),
    ("Crosswise", "0.25", lambda pi: 0.25 * pi + 0.75 * (1 - pi)),
    ("UQTknown", "0.7,0.4", lambda pi: 0.7 * pi + 0.3 * 0.4),
    ("Kuk", "0.8,0.3", lambda pi: 0.8 * pi + 0.3 * (1 - pi)),
    ("FR", "0.1,0.2", lambda pi: 0.2 + 0.7 * pi),
])
def test_one_group_models_are_their_closed_forms(tmp_path, model, p, yes_share):
    data = tmp_path / "data.csv"
    data.write_text("response\n" + "1\n" * 130 + "0\n" * 170)
    out = _json("--rrreg", model, "--p", p, data)
    # the unbiased estimate solves P(yes) = λ̂ for π: P is affine in π
    lam, a, b = 130 / 300, yes_share(1.0), yes_share(0.0)
    assert out["moment"]["pi"] == pytest.approx((lam - b) / (a - b), abs=1e-8)
    assert out["lower"]["pi"] <= out["estimate"]["pi"] <= out["upper"]["pi"]
    table = run("--rrreg", model, "--p", p, data)
    assert table.returncode == 0 and table.stdout.startswith(model)


@pytest.mark.parametrize(("body", "args", "message"), [
    ("response,group\n1,1\n2,2\n", ("SLD", "0.2,0.7"), "line 3: response must be 0 or 1, got '2'"),
    ("response,group\n1,1\n0,3\n", ("SLD", "0.2,0.7"), "line 3: group must be 1 or 2, got '3'"),
    ("response\n1\n0\n", ("SLD", "0.2,0.7"), "no column 'group'"),
    ("response,group\n1,1\n0,1\n", ("CDM", "0.2,0.7"), "every response is in group 1"),
    ("answer\n1\n", ("Warner", "0.8"), "no column 'response'"),
    ("response,group\n1,1\n0,2\n", ("CDM", "0.2"), "CDM takes 2 probabilities, got 1"),
    ("response,group\n1,1\n0,2\n", ("UQTunknown", "0.5,0.5"), "p"),
    ("response,group\n1,1\n0,2\n", ("CDM", "0.2,1.5"), "must be probabilities in [0, 1]"),
    ("response,group\n1,1\n0,2\n", ("CDM", "a,b"), "must be numbers separated by commas"),
])
def test_bad_data_is_one_error_line(tmp_path, body, args, message):
    data = tmp_path / "data.csv"
    data.write_text(body)
    done = run("--rrreg", args[0], "--p", args[1], data)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert message in done.stderr and done.stderr.startswith("Error:")


def _command(*args):
    return subprocess.run([DENIABLE, *map(str, args)], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("design", ["SLD", "UQTunknown"])
def test_regress_reproduces_rrlog(design):
    ref = json.loads((REFERENCE / f"{design}_n2000.json").read_text())
    done = _command("regress", "--rrreg", design, "--p", ",".join(map(repr, ref["p"])), REFERENCE / ref["data_file"],
                    "response ~ x", "--format", "json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["names"][:2] == ["(Intercept)", "x"]
    assert out["coefficients"] == pytest.approx(ref["rrlog"]["coefficients"], abs=1e-4)
    assert out["se"] == pytest.approx(ref["rrlog"]["se"], rel=1e-3)
    table = _command("regress", "--rrreg", design, "--p", ",".join(map(repr, ref["p"])), REFERENCE / ref["data_file"],
                     "response ~ x")
    assert table.returncode == 0 and table.stdout.startswith("response ~ x\n" + design)


@pytest.mark.parametrize(("args", "message"), [
    (("--rrreg", "SLD", "--p", "0.25,0.75", REFERENCE / "SLD_n2000.csv", "response ~ age"), "no column 'age'"),
    (("--rrreg", "SLD", "--p", "0.25,0.75", REFERENCE / "SLD_n2000.csv", "answer ~ x"), 'must be "response ~ COLUMN'),
    (("--rrreg", "SLD", "--p", "0.25,0.75", REFERENCE / "SLD_n2000.csv"), "--rrreg MODEL goes with --p"),
])
def test_regress_refuses_in_one_line(args, message):
    done = _command("regress", *args)
    assert done.returncode != 0 and message in done.stderr and "Traceback" not in done.stderr


def test_regress_names_a_row_that_is_not_a_number(tmp_path):
    data = tmp_path / "data.csv"
    data.write_text("response,group,x\n1,1,0.5\n0,2,lots\n")
    done = _command("regress", "--rrreg", "CDM", "--p", "0.3,0.7", data, "response ~ x")
    assert done.returncode == 1 and "line 3: x must be a finite number, got 'lots'" in done.stderr


@pytest.mark.parametrize(("model", "p"), DESIGNS)
def test_plan_is_plan_two_group(model, p):
    from deniable.estimators import plan_two_group

    done = _command("plan", "--rrreg", model, "--p", ",".join(map(str, p)), "--margin", "0.08", "--format", "json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    for interval in ("exact", "wald"):
        plan = plan_two_group(model, p, 0.08, interval=interval)
        assert out[interval]["n"] == plan.n and out[interval]["n_groups"] == list(plan.n_groups)
    table = _command("plan", "--rrreg", model, "--p", ",".join(map(str, p)), "--margin", "0.08")
    assert f"{out['exact']['n']:,}" in table.stdout


def test_plan_refuses_a_one_group_model_and_other_options():
    assert "invalid choice" in _command("plan", "--rrreg", "Warner", "--p", "0.7", "--margin", "0.05").stderr.lower() \
        or "is not one of" in _command("plan", "--rrreg", "Warner", "--p", "0.7", "--margin", "0.05").stderr
    done = _command("plan", "--rrreg", "CDM", "--p", "0.3,0.7", "--margin", "0.05", "--k", "2")
    assert done.returncode == 2 and "--rrreg MODEL goes with --p" in done.stderr
