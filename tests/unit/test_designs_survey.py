"""Randomized-response designs in a survey (issue 24): the definition's ``"design"`` of a single
choice, its ε, its fingerprint and codebook, the store, the sampler's shared vectors, the estimates
through ``deniable simulate`` and ``deniable estimate``, and the respondent's sentence."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import stats

from deniable.client.designs import from_definition, sample
from deniable.client.mechanism import TWO_32
from deniable.client.randomizer import randomize_design
from deniable.estimators.designs import estimate_design
from deniable.server.cli import cli
from deniable.server.store.db import init_db
from deniable.server.store.surveys import get_survey, insert_survey
from deniable.server.survey.codebook import codebook_dict, design_line, check_design, parse_design_line
from deniable.server.survey.definition import DefinitionError, design_fingerprint, parse_definition
from deniable.server.survey.explain import explain_survey

ROOT = Path(__file__).resolve().parents[2]
VECTORS = json.loads((ROOT / "tests" / "data" / "design_vectors.json").read_text())
FORCED = {"name": "forced", "p": 0.6, "forced": [0.25, 0.15]}


def survey(design=FORCED, options=("Yes", "No"), **extra):
    return parse_definition({"slug": "s", "title": "S", "questions": [
        {"id": "cheated", "text": "Cheated?", "options": list(options), "design": design, **extra},
        {"id": "drugs", "text": "Drugs?", "options": ["Yes", "No"], "epsilon": 1.0}]})


def refusal(design, options=("Yes", "No"), **extra) -> str:
    with pytest.raises(DefinitionError) as caught:
        survey(design, options, **extra)
    return str(caught.value)


# ---------------------------------------------------------------- the shared vectors


def test_vectors_file_matches_its_generator():
    spec = importlib.util.spec_from_file_location("make_design_vectors", ROOT / "scripts" / "make_design_vectors.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.make_cases() == VECTORS["cases"], "regenerate with: python scripts/make_design_vectors.py"
    assert VECTORS["generated_by"] == "python scripts/make_design_vectors.py"
    names = {c["design"]["name"] for c in VECTORS["cases"]}
    assert names == {"forced", "unrelated", "warner", "kuk", "crosswise", "custom"}
    assert any(c["epsilon"] is None for c in VECTORS["cases"])  # a design that is not ε-LDP


@pytest.mark.parametrize("case", VECTORS["cases"], ids=lambda c: c["design"]["name"])
def test_vectors_reproduce_by_a_loop_over_the_weights(case):
    """The reference sampler and an independent loop (first report whose cumulative weight exceeds u)
    give the file's reports; the definition realizes the file's weights, columns summing to 2^32."""
    design = from_definition(case["design"], case["options"])
    assert [list(r) for r in design.weights] == case["weights"]
    assert all(sum(col) == TWO_32 for col in zip(*case["weights"]))
    assert sample(design, case["values"], case["draws"]).tolist() == case["reports"]
    for value, u, report in zip(case["values"], case["draws"], case["reports"]):
        total, r = 0, 0
        while True:
            total += case["weights"][r][value]
            if u < total:
                break
            r += 1
        assert r == report


def test_the_python_randomizer_follows_the_matrix():
    """randomize_design (simulate's) reports each r with probability W[r, t] / 2^32: chi-square per answer."""
    design = from_definition({"name": "forced", "p": 0.7, "forced": [0.1, 0.05, 0.15]}, ["a", "b", "c"])
    rng = np.random.default_rng(3)
    for t in range(3):
        reports = randomize_design(np.full(60_000, t), design, rng=rng)
        counts = np.bincount(reports, minlength=3)
        assert stats.chisquare(counts, 60_000 * design.matrix[:, t]).pvalue > 1e-4
    with pytest.raises(Exception, match="values"):
        randomize_design([0, 3], design)


# ---------------------------------------------------------------- the definition


def test_a_design_is_parsed_and_written_back():
    s = survey()
    q = s.question("cheated")
    assert q.to_dict() == {"id": "cheated", "text": "Cheated?", "options": ["Yes", "No"], "design": FORCED}
    assert parse_definition(s.to_dict()).question("cheated") == q
    assert "epsilon" not in q.to_dict()


def test_epsilon_is_the_designs_realized_one_and_the_total_counts_it():
    s = survey()
    q = s.question("cheated")
    weights = from_definition(FORCED, ["Yes", "No"]).weights
    realized = max(math.log(max(row) / min(row)) for row in weights)
    assert q.protected and q.epsilon == pytest.approx(realized, abs=0) and q.mechanism.epsilon == q.epsilon
    # report "Yes": 0.85 vs 0.25; report "No": 0.75 vs 0.15 — the larger log-ratio is ln 5
    assert realized == pytest.approx(max(math.log(0.85 / 0.25), math.log(0.75 / 0.15)), rel=1e-8)
    assert s.total_epsilon == pytest.approx(realized + s.question("drugs").mechanism.epsilon)


def test_a_design_with_a_zero_cell_is_accepted_only_as_not_ldp():
    s = survey({"name": "custom", "matrix": [[0.6, 0], [0.4, 1]]})
    q = s.question("cheated")
    assert q.epsilon is None and not q.protected and not q.mechanism.protected
    assert q.mechanism.epsilon == math.inf
    assert s.total_epsilon == s.question("drugs").mechanism.epsilon  # never a finite ε for it
    info = explain_survey(s)["questions"]["cheated"]
    assert info["protected"] is False and info["epsilon"] is None and "Not protected by ε" in info["note"]
    assert "not ε-LDP" in q.qtype.unprotected(q)


@pytest.mark.parametrize("design, options, field", [
    ({"name": "forced", "p": 0.6, "forced": [0.25, "x"]}, ("Yes", "No"), "questions[0].design.forced[1]"),
    ({"name": "forced", "p": 0.6, "forced": [0.25, 0.2]}, ("Yes", "No"), "questions[0].design.forced: p + the forced"),
    ({"name": "forced", "p": 0.6, "forced": [0.4]}, ("Yes", "No"), "questions[0].design.forced"),
    ({"name": "forced", "p": 0.6, "forced": [0.2, 0.2]}, ("a", "b", "c"), "questions[0].design.forced: needs one share per option (3)"),
    ({"name": "warner", "p": 0.5}, ("Yes", "No"), "questions[0].design.p"),
    ({"name": "warner", "p": 0.7}, ("a", "b", "c"), "questions[0].design.name: the warner design is for a question with two"),
    ({"name": "kuk", "theta_1": 0.3}, ("Yes", "No"), "questions[0].design.theta_2: is required"),
    ({"name": "kuk", "theta_1": 0.3, "theta_2": 0.3}, ("Yes", "No"), "questions[0].design.theta_2"),
    ({"name": "unrelated", "p": 0.7, "prevalence": 1.5}, ("Yes", "No"), "questions[0].design.prevalence"),
    ({"name": "crosswise", "prevalence": 0.2, "side": "respondent"}, ("Yes", "No"), "questions[0].design.side"),
    ({"name": "custom", "matrix": [[0.5, 0.5], [0.5, 0.5]]}, ("Yes", "No"), "questions[0].design.matrix: the matrix is singular"),
    ({"name": "custom", "matrix": [[0.5, 0.5, 0.2], [0.5, 0.5, 0.8]]}, ("Yes", "No"), "questions[0].design.matrix"),
    ({"name": "mirror"}, ("Yes", "No"), "questions[0].design.name"),
    ("forced", ("Yes", "No"), "questions[0].design.name: must be an object"),
    ({"name": "forced", "p": 0.5, "forced": [0.5, 0]}, ("Yes", "No"), None),  # not ε-LDP: accepted
    ({"name": "warner", "p": 1 - 1e-12}, ("Yes", "No"), None),  # realized with a zero weight: not ε-LDP
    ({"name": "warner", "p": 1 - 1e-9}, ("Yes", "No"), "questions[0].design: the design's ε is"),  # ln(2^32/4)
])
def test_bad_designs_are_refused_naming_the_field(design, options, field):
    if field is None:
        assert survey(design, options).question("cheated").epsilon is None
        return
    assert refusal(design, options).startswith(field)


def test_epsilon_and_a_design_together_are_refused():
    assert refusal(FORCED, epsilon=1.0).startswith("questions[0].epsilon: leave epsilon out")


# ---------------------------------------------------------------- fingerprint, codebook, design line, store


def test_the_design_is_part_of_the_fingerprint():
    base = design_fingerprint(survey())
    assert design_fingerprint(parse_definition(survey().to_dict())) == base
    assert design_fingerprint(survey({"name": "forced", "p": 0.6, "forced": [0.15, 0.25]})) != base
    plain = parse_definition({"slug": "s", "title": "S", "questions": [
        {"id": "cheated", "text": "Cheated?", "options": ["Yes", "No"], "epsilon": survey().question("cheated").epsilon},
        {"id": "drugs", "text": "Drugs?", "options": ["Yes", "No"], "epsilon": 1.0}]})
    assert design_fingerprint(plain) != base


def test_the_codebook_states_the_design_and_an_edited_one_is_refused():
    s = survey()
    book = codebook_dict(s)
    entry = book["questions"][0]
    assert entry["design"] == FORCED
    assert entry["randomization"]["design"] == "forced"
    assert entry["randomization"]["weights"] == [list(r) for r in from_definition(FORCED, ["Yes", "No"]).weights]
    assert entry["randomization"]["matrix"][0] == pytest.approx([0.85, 0.25])
    assert parse_definition(json.loads(json.dumps(book))) == s
    book["questions"][0]["design"] = {"name": "forced", "p": 0.6, "forced": [0.15, 0.25]}
    with pytest.raises(DefinitionError, match="design_fingerprint|randomization"):
        parse_definition(book)


def test_the_design_line_round_trips_and_tells_designs_apart():
    s = survey()
    line = design_line(s)
    assert "cheated: design=forced k=2 epsilon=" in line
    assert "cheated: design=custom k=2 not-ldp" in design_line(survey({"name": "custom", "matrix": [[0.6, 0], [0.4, 1]]}))
    check_design(s, parse_design_line(line), responses="r.csv", codebook="c.json")
    other = survey({"name": "warner", "p": 0.75})
    with pytest.raises(Exception, match="cheated"):
        check_design(other, parse_design_line(line), responses="r.csv", codebook="c.json")


def test_a_stored_survey_keeps_its_design_and_a_launched_one_cannot_change_it(tmp_path):
    db = init_db(str(tmp_path / "d.db"))
    s = survey()
    insert_survey(db, s, status="open", owner_id=None)
    stored = get_survey(db, "s")
    assert stored.survey == s and design_fingerprint(stored.survey) == design_fingerprint(s)
    with pytest.raises(Exception, match="frozen|only the wording"):
        db.execute("UPDATE questions SET spec = ? WHERE qid = 'cheated'",
                   [json.dumps({"design": {"name": "forced", "p": 0.6, "forced": [0.15, 0.25]}})])
    db.conn.close()


def test_a_survey_of_single_choices_alone_keeps_its_design(tmp_path):
    db = init_db(str(tmp_path / "d.db"))
    s = parse_definition({"slug": "s", "title": "S", "questions": [
        {"id": "cheated", "text": "Cheated?", "options": ["Yes", "No"], "design": FORCED}]})
    insert_survey(db, s, owner_id=None)
    assert get_survey(db, "s").survey == s
    db.conn.close()


# ---------------------------------------------------------------- estimates, the API, the page


def test_the_choice_estimates_a_designed_question_with_exact_intervals():
    s = survey()
    q = s.question("cheated")
    result = q.qtype.estimate(q, np.array([410, 590]), method="exact", confidence=0.95, simultaneous=False)
    direct = estimate_design([410, 590], from_definition(FORCED, ["Yes", "No"]))
    assert result.estimate.tolist() == direct.estimate.tolist()
    # λ_yes = 0.25 + 0.6 π: the unbiased estimate is (0.41 − 0.25) / 0.6
    assert result.estimate[0] == pytest.approx((0.41 - 0.25) / 0.6, abs=1e-8)
    record = q.qtype.record(q, result)
    assert record["design"] == "forced" and record["method"] == "exact" and record["ldp"] is True
    yes = record["options"][0]
    assert yes["ci_low"] < yes["estimate"] < yes["ci_high"] and yes["noisy_count"] == 410
    # the plug-in standard error of a linear estimate: sqrt(λ̂(1 − λ̂)/n) / 0.6
    assert yes["std_error"] == pytest.approx(math.sqrt(0.41 * 0.59 / 1000) / 0.6, rel=1e-8)


def test_the_api_carries_the_integer_weights_the_page_samples():
    q = survey().question("cheated")
    item = q.qtype.api_design(q)
    weights = [list(r) for r in from_definition(FORCED, ["Yes", "No"]).weights]
    assert item["weights"] == weights and item["design"] == FORCED and item["ldp"] is True
    attrs = q.qtype.page_data(q)["attrs"]
    assert attrs["data-column-0"] == f"{weights[0][0]} {TWO_32}"
    assert all(isinstance(v, int) or all(part.isdigit() for part in v.split()) for k, v in attrs.items()
               if k != "data-type")


@pytest.mark.parametrize("design, options, words", [
    (FORCED, ("Yes", "No"), "Your device sends your true answer 60% of the time; otherwise it sends, whatever your answer: Yes (25%"),
    ({"name": "unrelated", "p": 0.7, "prevalence": 0.25}, ("Yes", "No"), "an unrelated question"),
    ({"name": "warner", "p": 0.75}, ("Yes", "No"), "75% of the time and the other answer otherwise"),
    ({"name": "crosswise", "prevalence": 0.25}, ("Yes", "No"), "25% of the time and the other answer otherwise"),
    ({"name": "kuk", "theta_1": 0.8, "theta_2": 0.3}, ("Yes", "No"), "sends Yes 80% of the time if your answer is Yes"),
    ({"name": "custom", "matrix": [[0.7, 0.2, 0.1], [0.2, 0.6, 0.2], [0.1, 0.2, 0.7]]}, ("a", "b", "c"),
     "at least 60% to send your own"),
])
def test_the_respondent_reads_a_sentence_for_each_design(design, options, words):
    info = explain_survey(survey(design, options))["questions"]["cheated"]
    assert words in info["coin"] and info["protected"] is True and info["posterior"]


def test_simulate_and_estimate_through_the_command_line(tmp_path):
    definition = tmp_path / "s.json"
    definition.write_text(json.dumps(survey().to_dict()))
    truth = tmp_path / "truth.json"
    truth.write_text(json.dumps({"cheated": [0.2, 0.8], "drugs": [0.5, 0.5]}))
    runner = CliRunner()
    out = tmp_path / "r.csv"
    made = runner.invoke(cli, ["simulate", str(definition), "--n", "20000", "--truth", str(truth), "--seed", "5",
                               "-o", str(out)])
    assert made.exit_code == 0, made.output
    shown = runner.invoke(cli, ["estimate", str(definition), str(out), "--format", "json"])
    assert shown.exit_code == 0, shown.output
    record = next(q for q in json.loads(shown.output)["questions"] if q["id"] == "cheated")
    yes = record["options"][0]
    assert record["design"] == "forced" and yes["ci_low"] < 0.2 < yes["ci_high"]
    table = runner.invoke(cli, ["estimate", str(definition), str(out)])
    assert table.exit_code == 0 and "forced design" in table.output, table.output


def test_the_python_client_samples_the_published_weights_and_the_server_stores_the_report(app, client):
    """client/submit.py reads a designed question's weights from the JSON API (never k-ary randomized
    response at the design's ε) and its reports follow the design; a not-ε-LDP design randomizes too."""
    from deniable.client.submit import make_reports, published_design

    s = parse_definition({"slug": "s", "title": "S", "questions": [
        {"id": "cheated", "text": "Cheated?", "options": ["Yes", "No"], "design": FORCED},
        {"id": "tri", "text": "Tri?", "options": ["Yes", "No"], "design": {"name": "custom", "matrix": [[0.6, 0], [0.4, 1]]}}]})
    db = init_db(app.config["DATABASE"])
    insert_survey(db, s, status="open", owner_id=None)
    db.conn.close()
    published = {q["id"]: q for q in client.get("/api/v1/surveys/s").get_json()["questions"]}
    assert published["tri"]["protected"] is False and published["tri"]["epsilon"] is None
    mechanisms = {qid: (q["k"], published_design(q)) for qid, q in published.items()}
    design = from_definition(FORCED, ["Yes", "No"])
    assert mechanisms["cheated"][1].weights == design.weights
    yes = sum(make_reports({"cheated": 0, "tri": 0}, mechanisms)["cheated"] == 0 for _ in range(4000))
    assert stats.binomtest(yes, 4000, design.matrix[0, 0]).pvalue > 1e-4
    tri = [make_reports({"tri": 0}, mechanisms)["tri"] for _ in range(400)]
    assert 0 < sum(tri) < 400  # randomized: "Yes" is sent as "No" 40% of the time
    response = client.post("/api/v1/surveys/s/responses", json={"reports": make_reports({"cheated": 1, "tri": 1}, mechanisms)})
    assert response.status_code == 201, response.get_json()


def test_a_not_ldp_design_is_no_question_asked_directly_for_groups_or_covariates():
    """Its ε is None like a direct question's, but its reports are randomized: subgroups and covariates
    (which need true answers) refuse it, saying why; it is a cross-tab's and a regression's outcome."""
    from deniable.server.survey.analysis import AnalysisError, check_by, check_crosstab, grouping_questions
    from deniable.server.survey.regression import FormulaError, parse_formula

    s = parse_definition({"slug": "s", "title": "S", "questions": [
        {"id": "tri", "text": "Tri?", "options": ["Yes", "No"], "design": {"name": "custom", "matrix": [[0.6, 0], [0.4, 1]]}},
        {"id": "cheated", "text": "Cheated?", "options": ["Yes", "No"], "design": FORCED},
        {"id": "drugs", "text": "Drugs?", "options": ["Yes", "No"], "epsilon": 1.0},
        {"id": "year", "text": "Year?", "options": ["1", "2"]}]})
    assert [q.id for q in grouping_questions(s)] == ["year"]
    with pytest.raises(AnalysisError, match="'tri' cannot group respondents: its reports are randomized by a design"):
        check_by(s, "tri")
    with pytest.raises(FormulaError, match="covariate 'tri'.*randomized by a design"):
        parse_formula("drugs ~ tri", s)
    assert parse_formula("cheated ~ year", s).outcome.id == "cheated"  # an outcome: tests/unit/test_design_regression.py
    assert check_crosstab(s, "cheated", "drugs")  # a cross-tab: tests/unit/test_design_crosstab.py


@pytest.mark.parametrize("lang", ["es", "fr"])
def test_the_design_sentences_are_translated(lang):
    from babel.support import Translations

    gettext = Translations.load(str(ROOT / "server" / "translations"), [lang]).gettext
    for design, options in [(FORCED, ("Yes", "No")), ({"name": "unrelated", "p": 0.7, "prevalence": 0.25}, ("Yes", "No")),
                            ({"name": "warner", "p": 0.75}, ("Yes", "No")),
                            ({"name": "kuk", "theta_1": 0.8, "theta_2": 0.3}, ("Yes", "No")),
                            ({"name": "custom", "matrix": [[0.7, 0.3], [0.3, 0.7]]}, ("Yes", "No")),
                            ({"name": "custom", "matrix": [[0.6, 0], [0.4, 1]]}, ("Yes", "No"))]:
        s = survey(design, options)
        english = explain_survey(s)["questions"]["cheated"]["coin"]
        said = explain_survey(s, gettext=gettext, locale=lang)["questions"]["cheated"]["coin"]
        assert said != english and "%(" not in said and "device" not in said and "answer" not in said, said


def test_the_audits_python_twin_passes_a_design_and_catches_one_five_percent_too_weak():
    """``deniable audit``'s design sampler: seeded, 400,000 runs per answer; Warner's design at ε = 2
    passes, one realized at 1.05 × 2 that claims 2 is caught (as tests/cli/test_audit_types.py does
    for the other types)."""
    from dataclasses import dataclass

    from deniable.client.designs import DesignMechanism, warner
    from deniable.estimators.audit import epsilon_lower_bound
    from deniable.server.survey.audit_settings import Setting, python_counts

    @dataclass(frozen=True)
    class Claiming(DesignMechanism):
        claimed: float = 2.0

        @property
        def declared_epsilon(self) -> float:
            return self.claimed

    def keep(epsilon):
        return math.exp(epsilon) / (1 + math.exp(epsilon))

    rng = np.random.default_rng(7)
    honest = Setting("design", DesignMechanism(warner(keep(2.0))))
    weak = Setting("design", Claiming(warner(keep(2.1))))
    assert honest.declared_epsilon == pytest.approx(2.0, abs=1e-8) and weak.declared_epsilon == 2.0
    good = epsilon_lower_bound(honest.cells(python_counts(honest, 400_000, lambda n: None, rng)), 0.999)
    bad = epsilon_lower_bound(weak.cells(python_counts(weak, 400_000, lambda n: None, rng)), 0.999)
    assert good.lower_bound <= 2.0 < bad.lower_bound, (good, bad)


def test_releases_within_groups_need_each_report_affine_in_its_own_answer():
    """Report i's count is Binomial(n, q_i + (p_i − q_i)·π_i) when report i has one probability under
    every other answer: forced response (p_i = p + forced[i], q_i = forced[i]) and binary designs whose
    report is likelier under its own answer; the group estimate is then the design's unbiased one."""
    from deniable.server.survey.questions.base import NotAvailable
    from deniable.server.survey.questions.choice import per_option

    three = {"name": "forced", "p": 0.7, "forced": [0.1, 0.05, 0.15]}
    q = survey(three, ("a", "b", "c")).question("cheated")
    found = np.array(per_option(from_definition(three, ["a", "b", "c"])))
    assert found == pytest.approx(np.array([(0.8, 0.1), (0.75, 0.05), (0.85, 0.15)]), abs=1e-9)
    counts = np.array([300, 200, 500])
    rows = q.qtype.group_estimates(q, counts, counts, 0.5, 0.95)
    unbiased = estimate_design(counts, from_definition(three, ["a", "b", "c"])).estimate
    assert [r["estimate"] for r in rows] == pytest.approx(unbiased.tolist())
    assert all(r["ci_low"] <= r["ci_high"] for r in rows)
    # Warner at p = 0.3: each report likelier under the other answer, so its two reports are swapped
    warner = {"name": "warner", "p": 0.3}
    q = survey(warner, ("Yes", "No")).question("cheated")
    q.qtype.group_columns(q)
    counts = np.array([640, 360])
    rows = q.qtype.group_estimates(q, counts, counts, 0.5, 0.95)
    unbiased = estimate_design(counts, from_definition(warner, ["Yes", "No"])).estimate
    assert [r["estimate"] for r in rows] == pytest.approx(unbiased.tolist())
    assert all(r["ci_low"] <= r["estimate"] <= r["ci_high"] for r in rows)
    custom = {"name": "custom", "matrix": [[0.7, 0.2, 0.1], [0.2, 0.6, 0.2], [0.1, 0.2, 0.7]]}
    q = survey(custom, ("a", "b", "c")).question("cheated")
    with pytest.raises(NotAvailable, match="estimates within groups are not available yet"):
        q.qtype.group_columns(q)
