"""Randomized-response designs on the ticks of a check-all question (issue 24): the definition's
``"design"`` of a ``"multi"`` question, its ε (K times the design's), the shared vectors of the tick
sampler, the estimates (exact expectation and coverage summed over the binomial, the number ticked's
variance against an exact enumeration), the codebook, the respondent's sentence, the plan, the audit's
Python twin and ``deniable simulate`` / ``deniable estimate``."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import stats
from scipy.stats import binom
from support.plan_cache import assert_decided_design

from deniable.client.designs import randomize_ticks, sample_ticks, tick_design
from deniable.client.mechanism import TWO_32
from deniable.estimators.designs import estimate_design
from deniable.estimators.multi import design_ticked_model, estimate_multi_design, ticked_model
from deniable.server.cli import cli
from deniable.server.survey.codebook import check_design, codebook_dict, design_line, parse_design_line
from deniable.server.survey.definition import DefinitionError, design_fingerprint, parse_definition
from deniable.server.survey.explain import design_coin, explain_survey

ROOT = Path(__file__).resolve().parents[2]
VECTORS = json.loads((ROOT / "tests" / "data" / "design_vectors.json").read_text())
FORCED = {"name": "forced", "p": 0.6, "forced": [0.25, 0.15]}
OPTIONS = ["Cannabis", "Cocaine", "Ecstasy"]


def survey(design=FORCED, options=OPTIONS, **extra):
    return parse_definition({"slug": "s", "title": "S", "questions": [
        {"id": "used", "text": "Used?", "type": "multi", "options": list(options), "design": design, **extra},
        {"id": "drugs", "text": "Drugs?", "options": ["Yes", "No"], "epsilon": 1.0}]})


def refusal(design, options=OPTIONS, **extra) -> str:
    with pytest.raises(DefinitionError) as caught:
        survey(design, options, **extra)
    return str(caught.value)


# ---------------------------------------------------------------- the shared vectors


def test_tick_vectors_match_their_generator():
    spec = importlib.util.spec_from_file_location("make_design_vectors", ROOT / "scripts" / "make_design_vectors.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.make_tick_cases() == VECTORS["tick_cases"], "regenerate with: python scripts/make_design_vectors.py"
    names = {c["design"]["name"] for c in VECTORS["tick_cases"]}
    assert names == {"forced", "unrelated", "warner", "kuk", "crosswise", "custom"}
    assert any(c["tick_epsilon"] is None for c in VECTORS["tick_cases"])  # a design that is not ε-LDP


@pytest.mark.parametrize("case", VECTORS["tick_cases"], ids=lambda c: f"{c['design']['name']}-K{c['k']}")
def test_tick_vectors_reproduce_by_a_loop_over_the_weights(case):
    """Each option j in turn: its true answer is 0 when ticked, its report the first r whose cumulative
    weight exceeds option j's draw, and report 0 is a tick — an independent loop gives the file's reports."""
    design = tick_design(case["design"])
    assert [list(r) for r in design.weights] == case["weights"]
    assert sample_ticks(design, case["masks"], case["draws"], case["k"]).tolist() == case["reports"]
    for mask, draws, reported in zip(case["masks"], case["draws"], case["reports"]):
        out = 0
        for j in range(case["k"]):
            answer = 0 if mask >> j & 1 else 1
            total, r = 0, 0
            while True:
                total += case["weights"][r][answer]
                if draws[j] < total:
                    break
                r += 1
            out |= (r == 0) << j
        assert out == reported
    # the edges of both columns are on every option
    edges = {w for row in np.cumsum(case["weights"], axis=0).tolist() for w in row if w < TWO_32}
    for j in range(case["k"]):
        assert edges <= {draws[j] for draws in case["draws"]}


def test_the_python_tick_randomizer_follows_the_matrix_on_each_tick():
    """randomize_ticks (simulate's) reports option j ticked with probability M[0, answer]: chi-square
    per option, for the full and the empty set; bad masks are refused."""
    design = tick_design({"name": "kuk", "theta_1": 0.8, "theta_2": 0.3})
    rng = np.random.default_rng(5)
    for mask in (0, 0b111):
        reports = randomize_ticks(np.full(40_000, mask), design, 3, rng)
        for j in range(3):
            ticked = int(((reports >> j) & 1).sum())
            expected = design.matrix[0, 0 if mask else 1]
            assert stats.binomtest(ticked, 40_000, expected).pvalue > 1e-4
    with pytest.raises(Exception, match="masks"):
        randomize_ticks([8], design, 3)


# ---------------------------------------------------------------- the definition


def test_a_design_on_the_ticks_is_parsed_written_back_and_costs_k_times_its_epsilon():
    s = survey()
    q = s.question("used")
    assert q.to_dict() == {"id": "used", "text": "Used?", "type": "multi", "options": OPTIONS, "design": FORCED}
    assert parse_definition(s.to_dict()).question("used") == q
    weights = tick_design(FORCED).weights
    per_tick = max(math.log(max(row) / min(row)) for row in weights)
    assert per_tick == pytest.approx(math.log(5), rel=1e-8)  # report "ticked": 0.85 vs 0.25; "not": 0.75 vs 0.15
    assert q.protected and q.epsilon == pytest.approx(3 * per_tick, abs=0) and q.mechanism.epsilon == q.epsilon
    assert s.total_epsilon == pytest.approx(3 * per_tick + s.question("drugs").mechanism.epsilon)


def test_a_zero_cell_design_on_the_ticks_is_accepted_only_as_not_ldp():
    s = survey({"name": "custom", "matrix": [[0.6, 0], [0.4, 1]]})
    q = s.question("used")
    assert q.epsilon is None and not q.protected and q.mechanism.epsilon == math.inf
    assert s.total_epsilon == s.question("drugs").mechanism.epsilon
    info = explain_survey(s)["questions"]["used"]
    assert info["protected"] is False and info["epsilon"] is None and "Not protected by ε" in info["note"]
    assert "not ε-LDP" in q.qtype.unprotected(q)
    assert q.qtype.page_data(q)["attrs"]["data-threshold"] == 0  # still randomized on the device


@pytest.mark.parametrize("design, options, field", [
    ({"name": "forced", "p": 0.6, "forced": [0.25, "x"]}, OPTIONS, "questions[0].design.forced[1]"),
    ({"name": "forced", "p": 0.6, "forced": [0.25, 0.2]}, OPTIONS, "questions[0].design.forced: p + the forced"),
    ({"name": "forced", "p": 0.4, "forced": [0.2, 0.2, 0.2]}, OPTIONS,
     "questions[0].design.forced: needs one share per answer of a tick (2: ticked, not ticked)"),
    ({"name": "warner", "p": 0.5}, OPTIONS, "questions[0].design.p"),
    ({"name": "kuk", "theta_1": 0.3}, OPTIONS, "questions[0].design.theta_2: is required"),
    ({"name": "unrelated", "p": 0.7, "prevalence": 1.5}, OPTIONS, "questions[0].design.prevalence"),
    ({"name": "crosswise", "prevalence": 0.2, "side": "respondent"}, OPTIONS, "questions[0].design.side"),
    ({"name": "custom", "matrix": [[0.5, 0.5], [0.5, 0.5]]}, OPTIONS, "questions[0].design.matrix: the matrix is singular"),
    ({"name": "custom", "matrix": [[0.5, 0.2, 0.1], [0.5, 0.8, 0.9]]}, OPTIONS, "questions[0].design.matrix"),
    ({"name": "mirror"}, OPTIONS, "questions[0].design.name"),
    ("forced", OPTIONS, "questions[0].design.name: must be an object"),
    ({"name": "warner", "p": 0.99}, OPTIONS + ["Heroin", "LSD"], "questions[0].design: the design's ε on each tick"),
    ({"name": "forced", "p": 0.5, "forced": [0.5, 0]}, OPTIONS, None),  # not ε-LDP: accepted
])
def test_bad_designs_on_the_ticks_are_refused_naming_the_field(design, options, field):
    if field is None:
        assert survey(design, options).question("used").epsilon is None
        return
    assert refusal(design, options).startswith(field)


def test_epsilon_and_a_design_together_are_refused():
    assert refusal(FORCED, epsilon=1.0).startswith("questions[0].epsilon: leave epsilon out")


# ---------------------------------------------------------------- fingerprint, codebook, design line


def test_the_codebook_states_each_ticks_matrix_and_an_edited_design_is_refused():
    s = survey()
    base = design_fingerprint(s)
    assert design_fingerprint(survey({"name": "forced", "p": 0.6, "forced": [0.15, 0.25]})) != base
    book = codebook_dict(s)
    entry = book["questions"][0]["randomization"]
    assert entry["design"] == "forced" and entry["per_tick"] is True and entry["k"] == 3
    assert entry["weights"] == [list(r) for r in tick_design(FORCED).weights]
    assert entry["matrix"][0] == pytest.approx([0.85, 0.25]) and entry["matrix"][1] == pytest.approx([0.15, 0.75])
    assert entry["realized_epsilon"] == pytest.approx(3 * entry["tick_epsilon"]) == s.question("used").epsilon
    assert parse_definition(json.loads(json.dumps(book))) == s
    book["questions"][0]["design"] = {"name": "forced", "p": 0.6, "forced": [0.15, 0.25]}
    with pytest.raises(DefinitionError, match="design_fingerprint|randomization"):
        parse_definition(book)


def test_the_design_line_names_the_design_on_the_ticks():
    s = survey()
    line = design_line(s)
    assert "used: type=multi design=forced k=3 epsilon=" in line
    check_design(s, parse_design_line(line), responses="r.csv", codebook="c.json")
    assert "used: type=multi design=custom k=3 not-ldp" in design_line(survey({"name": "custom", "matrix": [[0.6, 0], [0.4, 1]]}))
    with pytest.raises(Exception, match="used"):
        check_design(survey({"name": "warner", "p": 0.75}), parse_design_line(line), responses="r.csv", codebook="c.json")


# ---------------------------------------------------------------- estimates


TICK_DESIGNS = [{"name": "forced", "p": 2 / 3, "forced": [1 / 6, 1 / 6]}, {"name": "forced", "p": 0.6, "forced": [0.25, 0.15]},
                {"name": "unrelated", "p": 0.7, "prevalence": 0.3}, {"name": "warner", "p": 0.2},
                {"name": "kuk", "theta_1": 0.3, "theta_2": 0.8}, {"name": "crosswise", "prevalence": 0.7}]


def _one_option(n: int, x: int) -> tuple:
    """Sufficient statistics of n reports of one option (what each option's estimate reads), ticked x times."""
    return [x], [[0]], [n - x, x]


@pytest.mark.slow
@pytest.mark.parametrize("spec", TICK_DESIGNS, ids=lambda s: s["name"])
def test_each_options_estimate_is_unbiased_and_its_exact_interval_covers(spec):
    """Option j's reported ticks are Binomial(n, b + (a − b)π_j) (a, b: a tick's report probability when
    ticked and when not): summed over that distribution exactly, E π̂_j = π_j and the interval covers
    with probability ≥ 95 % at every π_j on a grid (n = 30)."""
    design = tick_design(spec)
    a, b = design.matrix[0]
    n = 30
    results = [estimate_multi_design(n, *_one_option(n, x), design) for x in range(n + 1)]
    assert all(r.p == a and r.q == b for r in results)
    for pi in np.linspace(0, 1, 31):
        weights = binom.pmf(np.arange(n + 1), n, b + (a - b) * pi)
        assert sum(w * r.estimate[0] for w, r in zip(weights, results)) == pytest.approx(pi, abs=1e-9)
        covered = sum(w for w, r in zip(weights, results) if r.ci_low[0] - 1e-12 <= pi <= r.ci_high[0] + 1e-12)
        assert covered >= 0.95 - 1e-9, (spec, pi, covered)
    # each option's numbers are the binary design's own estimate of its tick count
    single = estimate_design([12, 18], design)
    r = estimate_multi_design(n, *_one_option(n, 12), design)
    assert r.estimate[0] == single.estimate[0] and (r.ci_low[0], r.ci_high[0]) == (single.ci_low[0], single.ci_high[0])


def test_the_number_ticked_has_the_variance_the_score_model_states():
    """The score model's variance (module notes of estimators/multi.py) against an exact enumeration: T
    true ticks among K = 3 with a distribution, W | T a sum of T Bernoulli(a) and K − T Bernoulli(b)."""
    design = tick_design({"name": "forced", "p": 0.6, "forced": [0.25, 0.15]})
    a, b = design.matrix[0]
    k = 3
    p_t = np.array([0.1, 0.4, 0.3, 0.2])
    scores = (np.arange(k + 1) - k * b) / (a - b)
    p_w = np.zeros(k + 1)
    for t, pt in enumerate(p_t):
        p_w += pt * np.convolve(binom.pmf(np.arange(t + 1), t, a), binom.pmf(np.arange(k - t + 1), k - t, b))
    mu = float(p_t @ np.arange(k + 1))
    var_t = float(p_t @ np.arange(k + 1) ** 2) - mu ** 2
    assert float(p_w @ scores) == pytest.approx(mu, abs=1e-12)  # unbiased
    var_s = float(p_w @ scores ** 2) - mu ** 2
    assert float(design_ticked_model(k, a, b).variance(mu, var_t)) == pytest.approx(var_s, rel=1e-12)
    # a symmetric design is randomized response's model
    sym = tick_design({"name": "warner", "p": 0.75}).matrix[0]
    assert design_ticked_model(k, *sym).variance(1.2, 0.5) == pytest.approx(ticked_model(k, *sym).variance(1.2, 0.5))


@pytest.mark.parametrize("spec", [FORCED, {"name": "warner", "p": 0.3}, {"name": "custom", "matrix": [[0.6, 0], [0.4, 1]]}],
                         ids=lambda s: s["name"])
def test_simulated_respondents_are_estimated_per_option_number_ticked_and_pair(spec):
    """Through the survey's own path (simulate → statistics → estimate → record): 20,000 respondents with
    independent ticks; every interval covers its truth (seeded), and the record states the design."""
    s = survey(spec)
    q = s.question("used")
    truth = [0.4, 0.2, 0.3]
    codes = q.qtype.simulate(q, q.qtype.truth(q, truth, "used"), 20_000, np.random.default_rng(8))
    result = q.qtype.estimate(q, q.qtype.column_stats(q, codes), method="exact", confidence=0.95, simultaneous=False)
    record = q.qtype.record(q, result)
    assert record["design"] == spec["name"] and record["ldp"] == q.protected and record["declared_epsilon"] is None
    for option, pi in zip(record["options"], truth):
        assert option["ci_low"] < pi < option["ci_high"], (option, pi)
    assert record["ticked"]["ci_low"] < sum(truth) < record["ticked"]["ci_high"]
    for pair in record["pairs"]:
        j, l = (OPTIONS.index(label) for label in pair["labels"])
        assert pair["ci_low"] <= truth[j] * truth[l] <= pair["ci_high"], pair
    table = "\n".join(q.qtype.table(q, result, lambda head, rows: [" ".join(map(str, r)) for r in [head, *rows]]))
    assert f"{spec['name']} design on each tick" in table


@pytest.mark.parametrize("spec", [FORCED, {"name": "warner", "p": 0.3}], ids=lambda s: s["name"])
def test_estimates_within_groups_use_the_column_that_rises_with_the_share(spec):
    """A group's released row has two columns per option (not ticked, ticked); the estimate is the
    design's unbiased one of the option's ticks, inside an interval that is not reversed — also when a
    tick is reported less often for a ticked option (Warner at p = 0.3)."""
    q = survey(spec).question("used")
    labels, columns = q.qtype.group_columns(q)
    assert labels[:2] == ["Cannabis: not ticked", "Cannabis: ticked"] and columns.shape == (8, 6)
    ticks = np.array([140, 200, 260])  # inside both designs' range of a tick's report share, 400 · [min(a, b), max(a, b)]
    counts = np.ravel(np.column_stack([400 - ticks, ticks]))
    rows = q.qtype.group_estimates(q, counts, counts, 0.5, 0.95)
    for row, c in zip(rows, ticks):
        assert row["estimate"] == pytest.approx(estimate_design([c, 400 - c], tick_design(spec)).estimate[0])
        assert row["ci_low"] < row["ci_high"]
        assert row["ci_low"] <= min(max(row["estimate"], 0), 1) <= row["ci_high"]


# ---------------------------------------------------------------- page, sentence, plan, audit


def test_the_page_and_the_api_carry_the_ticks_integer_weights():
    q = survey().question("used")
    weights = [list(r) for r in tick_design(FORCED).weights]
    attrs = q.qtype.page_data(q)["attrs"]
    assert attrs["data-threshold"] == 0 and attrs["data-column-0"] == f"{weights[0][0]} {TWO_32}"
    assert attrs["data-column-1"] == f"{weights[0][1]} {TWO_32}"
    item = q.qtype.api_design(q)
    assert item["tick_weights"] == weights and item["design"] == FORCED and item["ldp"] is True
    assert item["realized_epsilon"] == pytest.approx(3 * item["tick_epsilon"])


def test_the_respondent_reads_the_designs_sentence_for_each_tick():
    s = survey()
    info = explain_survey(s)["questions"]["used"]
    assert info["coin"] == "For each option on its own: " + design_coin(tick_design(FORCED), ["ticked", "not ticked"])
    assert info["protected"] and info["epsilon"] == pytest.approx(s.question("used").epsilon)


def test_the_plan_is_the_binary_designs_on_each_tick():
    from deniable.estimators.designs import plan_design

    q = survey().question("used")
    plan = q.qtype.plan(q, 1000, 0.05)
    # the decided search (issue 40): the margin met exactly, within 1 % above the exhaustive n
    assert plan["needed"] == plan_design(tick_design(FORCED), 0.05, decided=True).n and plan["needed_exact"]
    assert_decided_design(plan["needed"], tick_design(FORCED), 0.05)
    assert plan["epsilon"] == pytest.approx(q.epsilon) and "on each of the 3 ticks" in plan["design_label"]


def test_the_audits_python_twin_passes_the_design_and_catches_one_that_claims_less():
    """``deniable audit``'s sampler of a design on the ticks (K = 2): the empty and the full set, the number
    of reported ticks as events; seeded, 400,000 runs each; Warner at ε 1 per tick passes at 2, and the
    same mechanism claiming 2 while realized at 2.2 is caught."""
    from dataclasses import dataclass

    from deniable.client.designs import TickDesignMechanism
    from deniable.estimators.audit import epsilon_lower_bound
    from deniable.server.survey.audit_settings import Setting, python_counts

    @dataclass(frozen=True)
    class Claiming(TickDesignMechanism):
        claimed: float = 2.0

        @property
        def declared_epsilon(self) -> float:
            return self.claimed

    def keep(epsilon):
        return math.exp(epsilon) / (1 + math.exp(epsilon))

    rng = np.random.default_rng(7)
    honest = Setting("multi-design", TickDesignMechanism(2, tick_design({"name": "warner", "p": keep(1.0)})))
    weak = Setting("multi-design", Claiming(2, tick_design({"name": "warner", "p": keep(1.1)})))
    assert honest.declared_epsilon == pytest.approx(2.0, abs=1e-8) and weak.declared_epsilon == 2.0
    good = epsilon_lower_bound(honest.cells(python_counts(honest, 400_000, lambda n: None, rng)), 0.999)
    bad = epsilon_lower_bound(weak.cells(python_counts(weak, 400_000, lambda n: None, rng)), 0.999)
    assert good.lower_bound <= 2.0 < bad.lower_bound, (good, bad)


# ---------------------------------------------------------------- the command line


def test_simulate_and_estimate_through_the_command_line(tmp_path):
    definition = tmp_path / "s.json"
    definition.write_text(json.dumps(survey().to_dict()))
    truth = tmp_path / "truth.json"
    truth.write_text(json.dumps({"used": [0.3, 0.05, 0.1], "drugs": [0.5, 0.5]}))
    runner = CliRunner()
    out = tmp_path / "r.csv"
    made = runner.invoke(cli, ["simulate", str(definition), "--n", "20000", "--truth", str(truth), "--seed", "5",
                               "-o", str(out)])
    assert made.exit_code == 0, made.output
    shown = runner.invoke(cli, ["estimate", str(definition), str(out), "--format", "json"])
    assert shown.exit_code == 0, shown.output
    record = next(q for q in json.loads(shown.output)["questions"] if q["id"] == "used")
    assert record["design"] == "forced" and record["ldp"] is True
    for option, pi in zip(record["options"], [0.3, 0.05, 0.1]):
        assert option["ci_low"] < pi < option["ci_high"]
    table = runner.invoke(cli, ["estimate", str(definition), str(out)])
    assert table.exit_code == 0 and "forced design on each tick" in table.output, table.output


@pytest.mark.parametrize("lang", ["es", "fr"])
def test_the_tick_design_sentence_is_translated(lang):
    from babel.support import Translations

    gettext = Translations.load(str(ROOT / "server" / "translations"), [lang]).gettext
    for design in (FORCED, {"name": "kuk", "theta_1": 0.8, "theta_2": 0.3}, {"name": "custom", "matrix": [[0.6, 0], [0.4, 1]]}):
        s = survey(design)
        english = explain_survey(s)["questions"]["used"]["coin"]
        said = explain_survey(s, gettext=gettext, locale=lang)["questions"]["used"]["coin"]
        assert said != english and "%(" not in said and "each option" not in said and "ticked" not in said, said
