"""Weighted, design-based estimates of a responses file (``deniable estimate --weights COLUMN``).

A responses file may carry design columns beside the questions — sampling weights, strata,
clusters, the population's clusters per stratum — named by a
:class:`~.dataset.DesignColumns` (the file's readers put them in :attr:`.dataset.Dataset.design`).
They are **sampling** weights: each respondent stands for w people of the population, and the
precision comes from the design, never from Σw (frequency weights, ``Dataset.weights``, are
another thing).

Every single-choice question is estimated by :func:`deniable.estimators.weights.weighted_estimate`:
the weighted (Hájek) share of each report, debiased by the mechanism, its variance by Taylor
linearization with the strata and clusters, and Korn–Graubard intervals at the design's effective
sample size with its degrees of freedom.  A question some respondents did not answer is a domain:
the respondents who did not answer it keep their place in the design with weight 0 (as R's
``subset()`` of a design does), so the strata and clusters still say how the sample was drawn.
A type whose headline is a mean of per-respondent unbiased scores (a numeric question's mean:
:meth:`~.questions.base.QuestionType.linear_scores`) gets the weighted mean of its scores — a linear
statistic, so the same linearization gives its variance — and the t interval with the design's
degrees of freedom (R: ``confint(svymean(~score, design), df = degf(design))``).  The other types
are refused, naming the question (their weighted estimators are not written yet).
"""

from __future__ import annotations

import dataclasses
import io
import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import t as student_t

from deniable.client.mechanism import resolve
from deniable.estimators.validate import check_confidence
from deniable.estimators.weights import (DesignError, SurveyDesign, WeightedResult, linearized_variance, survey_design,
                                         weighted_estimate)

from .dataset import NOT_ANSWERED, Dataset, DesignColumns
from .definition import Question, Survey
from .questions.base import fmt, json_number, pct
from .spreadsheet import SafeWriter

ROLES = {"weights": "weights", "strata": "strata", "clusters": "cluster", "population_clusters": "fpc"}
CSV_COLUMNS = ("question", "option", "label", "n", "effective_n", "degrees_of_freedom", "epsilon",
               "declared_epsilon", "p", "q", "method", "confidence", "report_share", "estimate", "std_error",
               "ci_low", "ci_high", "weights", "strata", "cluster", "fpc")


def unweighted_reason(q: Question) -> str | None:
    """Why question ``q`` cannot be estimated with sampling weights yet (None: it can)."""
    if not q.qtype.categorical:
        if q.qtype.linear_scores(q, np.empty(0, dtype=np.int64)) is not None:
            return None
        return (f"a {q.qtype.label} question: weighted estimates cover single-choice and numeric questions so far "
                "(the design-based variance of its estimator is not implemented yet)")
    if q.qtype.mechanism(q) != resolve(q.qtype.n_cells(q), q.epsilon):
        return ("its randomization is not k-ary randomized response: weighted estimates cover single-choice "
                "questions with an ε (or asked directly) so far")
    return None


def check_weighted(survey: Survey) -> None:
    """Refuse, naming the first question, a survey that has a question weighting cannot estimate."""
    for q in survey.questions:
        reason = unweighted_reason(q)
        if reason is not None:
            raise DesignError(f"--weights: question {q.id!r} is {reason}; without --weights every question is "
                              "estimated as a simple random sample", "weights")


def design_of(dataset: Dataset, columns: DesignColumns) -> SurveyDesign:
    """The :class:`~deniable.estimators.weights.SurveyDesign` of the dataset's design columns; a
    DesignError names the column (``field``: its role)."""
    values = dataset.design or {}
    try:
        return survey_design(values["weights"], strata=values.get("strata"), clusters=values.get("cluster"),
                             population_clusters=values.get("fpc"))
    except DesignError as exc:
        role = ROLES.get(exc.field, exc.field)
        problem = str(exc).split(": ", 1)[-1]
        name = getattr(columns, role, None) if role in ROLES.values() else None
        where = f"column {name!r} ({role})" if name else role
        raise DesignError(f"{where}: {problem}", role) from None


@dataclass(frozen=True)
class WeightedMean:
    """The weighted mean of a question's unbiased scores (its units), with the design's t interval."""

    n: int
    effective_n: float
    degrees_of_freedom: int
    confidence: float
    estimate: float
    std_error: float
    ci_low: float
    ci_high: float
    method: str = "t interval with the design's degrees of freedom (linearization)"


def weighted_mean(scores: np.ndarray, design: SurveyDesign, confidence: float) -> WeightedMean:
    """``Σ w s / Σ w``, its linearized standard error, and ``estimate ± t_df · se`` (module notes)."""
    w = design.weights
    estimate = float(w @ scores / w.sum())
    se = math.sqrt(linearized_variance(scores, design))
    df = design.degrees_of_freedom
    half = float(student_t.ppf(0.5 + confidence / 2, df)) * se if df > 0 else math.nan
    return WeightedMean(n=int(np.count_nonzero(w)), effective_n=design.effective_n, degrees_of_freedom=df,
                        confidence=confidence, estimate=estimate, std_error=se, ci_low=estimate - half,
                        ci_high=estimate + half)


@dataclass(frozen=True)
class Weighted:
    """Each question's weighted estimates (``result`` None: nobody answered it) and the design."""

    survey: Survey
    columns: DesignColumns
    design: SurveyDesign
    questions: list  # of (Question, n answered, WeightedResult | None)


def weighted_estimates(dataset: Dataset, columns: DesignColumns, *, confidence: float = 0.95) -> Weighted:
    """Every question's design-based estimates (module notes); DesignError for a question it cannot estimate."""
    survey = dataset.survey
    check_weighted(survey)
    design = design_of(dataset, columns)
    out = []
    for q in survey.questions:
        reports = np.asarray(dataset.columns[q.id], dtype=np.int64)
        answered = reports != NOT_ANSWERED
        n = int(answered.sum())
        if n == 0:
            out.append((q, 0, None))
            continue
        domain = design if answered.all() else dataclasses.replace(design, weights=design.weights * answered)
        if q.qtype.categorical:
            result = weighted_estimate(np.where(answered, reports, 0), q.epsilon, domain, k=q.qtype.n_cells(q),
                                       confidence=confidence)
        else:
            scores = q.qtype.linear_scores(q, np.where(answered, reports, 0))
            result = weighted_mean(np.where(answered, scores, 0.0), domain, check_confidence(confidence))
        out.append((q, n, result))
    return Weighted(survey=survey, columns=columns, design=design, questions=out)


def design_json(w: Weighted) -> dict:
    """What the design is: its columns, respondents, strata, clusters, degrees of freedom and Kish's n."""
    d = w.design
    return {"weights": w.columns.weights, "strata": w.columns.strata, "cluster": w.columns.cluster,
            "fpc": w.columns.fpc, "n": d.n, "n_strata": int(np.unique(d.strata).size),
            "n_clusters": int(np.unique(d.clusters).size), "degrees_of_freedom": d.degrees_of_freedom,
            "effective_n": json_number(d.effective_n)}


def question_json(q: Question, n: int, r: WeightedResult | None) -> dict:
    """One question's weighted record: the estimates format's fields, ``weighted: true``, Kish's n and
    per option the weighted report share beside the debiased estimate."""
    head = {"id": q.id, "text": q.text, "n": n, "weighted": True}
    if r is None:
        return {**head, "empty": True, "options": []}
    if isinstance(r, WeightedMean):
        return {**head, "type": q.type, "effective_n": json_number(r.effective_n),
                "degrees_of_freedom": r.degrees_of_freedom, "epsilon": json_number(q.epsilon) if q.protected else None,
                "declared_epsilon": q.epsilon if q.protected else None, "method": r.method,
                "confidence": json_number(r.confidence),
                "mean": {"estimate": json_number(r.estimate), "std_error": json_number(r.std_error),
                         "ci_low": json_number(r.ci_low), "ci_high": json_number(r.ci_high)}}
    options = [{"label": label, "report_share": json_number(r.report_share[i]),
                "estimate": json_number(r.estimate[i]), "std_error": json_number(r.std_error[i]),
                "ci_low": json_number(r.ci_low[i]), "ci_high": json_number(r.ci_high[i])}
               for i, label in enumerate(q.options)]
    return {**head, "effective_n": json_number(r.effective_n), "degrees_of_freedom": r.degrees_of_freedom,
            "epsilon": json_number(r.epsilon) if q.protected else None,
            "declared_epsilon": q.epsilon if q.protected else None, "p": json_number(r.p), "q": json_number(r.q),
            "method": r.method, "confidence": json_number(r.confidence), "options": options}


def weighted_document(w: Weighted) -> dict:
    """``deniable estimate --weights … --format json``."""
    return {"survey": w.survey.slug, "n_responses": w.design.n, "weighted": True, "design": design_json(w),
            "questions": [question_json(q, n, r) for q, n, r in w.questions]}


def design_text(w: Weighted) -> str:
    """One line naming the design: the columns, strata, clusters, degrees of freedom and Kish's n."""
    d = design_json(w)
    parts = [f"weighted by column {d['weights']!r}"]
    if d["strata"]:
        parts.append(f"{d['n_strata']:,} strata (column {d['strata']!r})")
    if d["cluster"]:
        parts.append(f"{d['n_clusters']:,} clusters (column {d['cluster']!r})")
    if d["fpc"]:
        parts.append(f"finite-population correction (column {d['fpc']!r})")
    parts.append(f"{d['degrees_of_freedom']:,} degrees of freedom")
    parts.append(f"Kish effective sample size {d['effective_n']:,.1f} of {d['n']:,}")
    return "design: " + " · ".join(parts)


def weighted_table(w: Weighted, grid) -> str:
    """The estimates for a terminal, each block saying the estimates are weighted."""
    blocks = []
    for q, n, r in w.questions:
        lines = [f"{q.id}: {q.text}"]
        if r is None:
            blocks.append("\n".join(lines + ["  n = 0: nobody answered"]))
            continue
        if isinstance(r, WeightedMean):
            privacy = f"ε = {q.epsilon:g}" if q.protected else "asked directly (not randomized)"
            lines += [f"  n = {n:,} · weighted · {privacy}",
                      f"  mean {fmt(r.estimate)} ± std.err {fmt(r.std_error)}, {100 * r.confidence:g}% interval "
                      f"[{fmt(r.ci_low)}, {fmt(r.ci_high)}] ({r.method})"]
            blocks.append("\n".join(lines))
            continue
        privacy = (f"ε = {r.epsilon:.4f} (declared {q.epsilon:g}) · p = {r.p:.4f}, q = {r.q:.4f}" if q.protected
                   else "asked directly (not randomized)")
        rows = [[label, pct(r.report_share[i]), pct(r.estimate[i]), pct(r.std_error[i]),
                 f"[{pct(r.ci_low[i])}, {pct(r.ci_high[i])}]"] for i, label in enumerate(q.options)]
        lines += [f"  n = {n:,} · weighted · {privacy}",
                  f"  {100 * r.confidence:g}% intervals, method: {r.method}",
                  *grid(["option", "reported (weighted)", "estimate", "std.err", "interval"], rows)]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


def weighted_csv(w: Weighted) -> str:
    """One row per question × option (columns :data:`CSV_COLUMNS`), the design's columns on each row."""
    out = io.StringIO()
    writer = SafeWriter(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for q, n, r in w.questions:
        record = question_json(q, n, r)
        if "mean" in record:
            writer.writerow(["" if v is None else v for v in (
                {**record, **record["mean"], "question": q.id, "option": "mean", "label": "mean",
                 "weights": w.columns.weights, "strata": w.columns.strata, "cluster": w.columns.cluster,
                 "fpc": w.columns.fpc}.get(c) for c in CSV_COLUMNS)])
            continue
        for i, option in enumerate(record["options"]):
            row = {**record, **option, "question": q.id, "option": i, "weights": w.columns.weights,
                   "strata": w.columns.strata, "cluster": w.columns.cluster, "fpc": w.columns.fpc}
            writer.writerow(["" if row.get(c) is None else row[c] for c in CSV_COLUMNS])
    return out.getvalue()


def fit_weighted_formula(dataset: Dataset, columns: DesignColumns, text: str, *, reference: str | None = None,
                         confidence: float = 0.95):
    """``deniable regress --weights``: the formula's model fitted by pseudo-likelihood under the
    dataset's sampling design, with sandwich standard errors (:func:`deniable.estimators.regress`
    with ``design=``).  Returns ``(formula, built, result)`` as
    :func:`.regression.fit_formula` does.

    The formula's design matrix is built from the answer patterns as for any regression, then
    given back to each respondent (the row of its pattern); a respondent who did not answer the
    outcome or a covariate keeps its place in the design with weight 0 (a domain, as for the
    estimates).  The outcome must be a question :func:`unweighted_reason` accepts as categorical."""
    from deniable import estimators

    from .patterns import collapse, from_dataset
    from .regression import FormulaError, design, parse_formula, reference_index

    survey = dataset.survey
    formula = parse_formula(text, survey)
    outcome = formula.outcome
    reason = unweighted_reason(outcome)
    if reason is not None or not outcome.qtype.categorical:
        raise FormulaError(f"--weights: the outcome {outcome.id!r} is {reason or 'not a single-choice question'}")
    patterns = from_dataset(Dataset(survey, dict(dataset.columns)))
    built = design(patterns, formula)
    if built.weights.sum() == 0:
        raise FormulaError(f"no response answered {outcome.id!r} and every covariate")
    qids = [outcome.id, *(q.id for q in formula.questions)]
    unique, _ = collapse(patterns, qids)  # the rows design() built, in its order (complete ones kept)
    unique = unique[np.all(unique >= 0, axis=1)] if unique.size else unique
    index = {tuple(row): i for i, row in enumerate(unique.tolist())}
    respondents = np.column_stack([np.asarray(dataset.columns[qid], dtype=np.int64) for qid in qids])
    distinct, inverse = np.unique(respondents, axis=0, return_inverse=True)
    row_of = np.array([index.get(tuple(row), -1) for row in distinct.tolist()], dtype=np.int64)[inverse.reshape(-1)]
    complete = row_of >= 0
    full = design_of(dataset, columns)
    sample = dataclasses.replace(full, weights=full.weights * complete)
    at = np.where(complete, row_of, 0)
    result = estimators.regress(
        built.reports[at], built.covariates[at], outcome.epsilon, k=outcome.k, design=sample, names=built.names,
        terms=built.terms, reference=reference_index(outcome, reference), outcome=outcome.id,
        options=outcome.options, confidence=confidence, profile=False)
    return formula, built, result


__all__ = ["Weighted", "fit_weighted_formula", "check_weighted", "design_json", "design_of", "design_text", "question_json",
           "unweighted_reason", "weighted_csv", "weighted_document", "weighted_estimates", "weighted_table"]
