"""Cross-tabs: the joint and conditional shares of two randomized questions under a survey design or
raked weights.

The statistics ("module notes" below) are in the notes of :mod:`deniable.estimators.weights`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from scipy.stats import t

from deniable.client.mechanism import resolve

from .linearization import _variance_of_totals, weights_degrees_of_freedom
from .raked import calibration_residuals
from .result import Result, frozen
from .survey_intervals import _with_floor, exact_at, fieller, kish_respondents, korn_graubard
from .validate import check_confidence
from .weighted_designs import _matrix_floor, _unaffine_interval
from .weights import SamplingDesignError, SurveyDesign, _frequencies, _given_weights


def debiasing_matrix(k: int, epsilon) -> np.ndarray:
    """``M⁻¹`` of k-ary randomized response, ``M = (p − q)I + qJ``: ``(I − qJ)/(p − q)`` (since
    ``p + (k − 1)q = 1``); row a gives each report's weight in the debiased indicator of option a."""
    mech = resolve(k, epsilon)
    return (np.eye(k) - mech.q) / (mech.p - mech.q)


@dataclass(frozen=True, eq=False)
class WeightedCrosstabResult(Result):
    """The joint and conditional shares of two randomized questions under a survey design."""

    n: int  # respondents who answered both
    effective_n: float
    degrees_of_freedom: int
    confidence: float
    report_share: np.ndarray  # k1 × k2 weighted shares of the report pairs
    joint_estimate: np.ndarray  # (M₁⁻¹ ⊗ M₂⁻¹) applied to the report shares
    joint_std_error: np.ndarray
    joint_ci_low: np.ndarray
    joint_ci_high: np.ndarray
    conditional_estimate: np.ndarray  # column given row: joint / row total (a ratio)
    conditional_std_error: np.ndarray
    conditional_ci_low: np.ndarray
    conditional_ci_high: np.ndarray
    method: str
    simultaneous: bool = False  # Bonferroni over the cells (sampling.weighted_crosstab_of)
    note: str | None = None  # which intervals the exact interval at Kish's n widened (module notes)


AFFINE_TOLERANCE = 1.5 / 2**32  # a realized design's column is within one unit of 2^32 of its probabilities


def _channel(k: int, epsilon, matrix, field: str) -> tuple[np.ndarray, list, bool]:
    """One question's side of a cross-tab: ``(M⁻¹, affine, direct)`` — the inverse of its
    misclassification matrix (answers × reports; k-ary randomized response's is
    :func:`debiasing_matrix`), per option j the ``(p_j, q_j)`` with which report j is affine in that
    option's share alone, ``λ_j = q_j + (p_j − q_j) π_j`` (report j has one probability ``q_j`` under
    every other answer: k-ary randomized response, forced response, every binary design), or None,
    and whether the question is asked directly (M = I).  SamplingDesignError names ``field`` for a matrix
    that is not a square, invertible matrix of probabilities whose columns add up to 1."""
    if matrix is None:
        mech = resolve(k, epsilon)
        return debiasing_matrix(k, epsilon), [(mech.p, mech.q)] * k, mech.q == 0
    if epsilon is not None:
        raise SamplingDesignError(f"{field}: give the epsilon None with a matrix (the design's ε is its own)", field)
    m = np.asarray(matrix, dtype=float)
    if m.shape != (k, k) or not np.all(np.isfinite(m)) or np.any(m < 0) or np.any(np.abs(m.sum(axis=0) - 1) > 1e-9):
        raise SamplingDesignError(
            f"{field}: a {k} × {k} matrix of probabilities (reports × answers) whose columns add up "
            "to 1 needed", field)
    if np.linalg.matrix_rank(m) < k:
        raise SamplingDesignError(
            f"{field}: the matrix is singular (two answers have the same report distribution)", field)
    affine = []
    for j in range(k):
        others = np.delete(m[j], j)
        flat = others.max() - others.min() <= AFFINE_TOLERANCE and abs(m[j, j] - others.mean()) > AFFINE_TOLERANCE
        affine.append((float(m[j, j]), float(others.mean())) if flat else None)
    return np.linalg.inv(m), affine, bool(np.array_equal(m, np.eye(k)))


def weighted_crosstab(row_reports, col_reports, row_epsilon, col_epsilon, design: SurveyDesign, *, k_row: int,
                      k_col: int, confidence: float = 0.95, row_matrix=None,
                      col_matrix=None) -> WeightedCrosstabResult:
    """The joint distribution of two randomized questions under a survey design.

    Parameters
    ----------
    row_reports, col_reports : array of int
        Each respondent's report of each question, ``0..k−1``, or −1 when not answered (such a
        respondent keeps its place in the design with weight 0: the estimate is of those who
        answered both, a domain).
    row_epsilon, col_epsilon : float or None
        Each question's declared ε (None: asked directly, or randomized by a design's matrix).
    design : SurveyDesign
    k_row, k_col : int
    confidence : float, default 0.95
    row_matrix, col_matrix : array (k × k), optional
        A question randomized by a randomized-response design (forced response, Warner, Kuk, a
        custom matrix, …): its realized misclassification matrix ``M[r, t] = P(report r | answer t)``
        (:attr:`deniable.client.designs.Design.matrix`; report r stored as option r), in place of
        k-ary randomized response at ε (that question's ε must then be None).

    Notes
    -----
    The two questions are randomized independently, so the channel of a report pair is the
    Kronecker product ``M₁ ⊗ M₂`` and its inverse ``M₁⁻¹ ⊗ M₂⁻¹``.  The joint share of the true
    answers (a, b) is therefore ``π̂_ab = Σ_cd A_ac B_bd λ̂_cd`` with ``λ̂_cd`` the weighted (Hájek)
    share of report pairs (c, d) and ``A = M₁⁻¹``, ``B = M₂⁻¹`` (:func:`debiasing_matrix` for k-ary
    randomized response, the inverse of the design's matrix for a design: any invertible M) —
    the weighted mean of each respondent's debiased indicator ``z_i = A[a, r₁ᵢ] · B[b, r₂ᵢ]``.  Its
    variance is the linearized variance of that mean (module notes; R: ``svymean(~z)``).  The
    conditional share of b given a is the ratio ``π̂_ab / π̂_a·`` with ``π̂_a· = Σ_b π̂_ab``, its
    variance by linearizing the ratio: the linearized variance of the mean of
    ``(z_ab − R̂ z_a·)/π̂_a·`` (Wolter 2007, §6.5; R: ``svyratio(~z_ab, ~z_a, design)``).

    Intervals: with both questions asked directly, a joint cell is a proportion, and its interval
    is Korn & Graubard's (R: ``svyciprop(method = "beta")``).  Otherwise the debiased cell is a
    linear combination of several report shares (no single proportion to map), and the interval
    is ``estimate ± t_df · se`` on the design's degrees of freedom (R: ``confint(svymean(~z), df =
    degf(design))``).  Conditional shares: the t interval on the linearized ratio undercovers when
    the row's share is uncertain (a ratio's sampling distribution is skewed by its denominator), so

    * with the row question asked directly, the shares given row a are a domain's — the weighted
      report shares of the column question among the respondents who answered a, debiased by its
      mechanism — and get Korn & Graubard's interval with the domain's respondents and the degrees
      of freedom :func:`weighted_estimate` gives a subset (:func:`weights_degrees_of_freedom`),
      mapped through the column's mechanism: the ``--by`` estimate of the same group, interval
      included (R: ``svyby(~[r₂ = b], ~r₁, design, svyciprop, method = "beta")`` at those degrees
      of freedom).  A column randomized by a design maps report b's interval through
      ``λ_b = q_b + (p_b − q_b) π_b`` where report b has one probability ``q_b`` under every other
      answer (binary designs, forced response; the ends swap when ``p_b < q_b``), and otherwise
      gets the union of the t interval ``π̂ ± t_ν · se`` on the domain's degrees of freedom and Korn
      and Graubard's at the share's own effective sample size (:func:`_unaffine_interval`) — as
      :func:`weighted_design_estimate` with that ``subset`` does;
    * with the row question randomized, the row's share is itself a debiased estimate, and a
      ratio's distribution is skewed two ways: by its uncertain denominator, which Fieller's
      interval for the ratio of the two debiased weighted shares takes into account
      (:func:`fieller`, with their linearized variances and covariance — R: ``vcov(svymean(~z_ab +
      z_a·, design))`` — and the design's t quantile; [0, 1] when the row's share cannot be told
      from 0), and near 0 or 1 as a small share is, which Korn & Graubard's beta interval takes
      into account (:func:`korn_graubard`, the recipe of ``svyciprop(method = "beta")``, with the
      ratio's linearized variance ``Var(R̂)``), twice: at the ratio's own effective sample size
      ``R̂(1 − R̂)/Var(R̂)``, and on the column question's report scale ``λ = q₂ + (p₂ − q₂)R̂``
      (variance ``(p₂ − q₂)² Var(R̂)``, mapped back: the domain's interval above, with the row's
      randomization in the variance; for a designed column, report b's ``(p_b, q_b)`` when it has
      them), each when its share lies in (0, 1).  The interval is the
      union of the three (from the lowest lower end to the highest upper end): conservative where
      any one approximation fails (the simulation: every cell at or above nominal − 2 MC SE,
      wider than the t interval at small samples).
    Every interval is kept in [0, 1].  Coverage by simulation: ``scripts/weights_coverage.py
    --crosstab`` (docs/statistics.md, "Weighted estimates, by simulation").
    """
    confidence = check_confidence(confidence)
    r1, r2 = np.asarray(row_reports), np.asarray(col_reports)
    for name, r, k in (("row_reports", r1, k_row), ("col_reports", r2, k_col)):
        if r.shape != (design.n,) or r.dtype.kind not in "iu" or r.max(initial=-1) >= k or r.min(initial=0) < -1:
            raise SamplingDesignError(
                f"{name}: one option index 0..{k - 1} (or −1) per respondent ({design.n}) needed", name)
    both = (r1 >= 0) & (r2 >= 0)
    if not both.any():
        raise SamplingDesignError("reports: no respondent answered both questions", "reports")
    df = design.degrees_of_freedom

    def domain(members):  # a row asked directly: its respondents, and the degrees of freedom the --by
        return int(members.sum()), weights_degrees_of_freedom(design, members)  # group's interval takes

    return _crosstab(r1, r2, both, design.weights * both, np.ones(design.n), _variance_of_totals(design),
                     design.n, df, domain, row_epsilon, col_epsilon, k_row, k_col, confidence,
                     row_matrix=row_matrix, col_matrix=col_matrix)


def _crosstab(r1, r2, both, w, c, variance_of, n_all: int, df: int, domain, row_epsilon, col_epsilon,
              k_row: int, k_col: int, confidence: float, *, row_matrix=None,
              col_matrix=None) -> WeightedCrosstabResult:
    """:func:`weighted_crosstab`'s estimates (its notes) from the rows' reports ``r1``, ``r2``, the
    mask ``both``, the weights ``w`` (0 outside ``both``), the respondents ``c`` each row stands for,
    the variance of a linear statistic's influence values ``variance_of`` (per respondent), the
    respondents ``n_all`` and degrees of freedom ``df`` for Korn and Graubard's interval, and
    ``domain(mask) → (n, df)`` of a row asked directly: one computation for a sampling design and
    for raked weights (:func:`raked_crosstab`); ``row_matrix``, ``col_matrix``: a design's matrix
    (:func:`_channel`)."""
    a, b = np.where(both, r1, 0), np.where(both, r2, 0)
    cw = c * w
    inv_a, _, row_direct = _channel(k_row, row_epsilon, row_matrix, "row_matrix")
    inv_b, col_affine, col_direct = _channel(k_col, col_epsilon, col_matrix, "col_matrix")
    notes = []
    direct = row_direct and col_direct
    t_half = float(t.ppf(0.5 + confidence / 2, df)) if df > 0 else math.nan
    total = float(cw.sum())
    shape = (k_row, k_col)
    share, joint, joint_se, joint_low, joint_high = (np.zeros(shape) for _ in range(5))

    def z(i, j):  # each respondent's debiased indicator of cell (i, j), made when needed (memory: one column)
        return inv_a[i, a] * inv_b[j, b]

    for i in range(k_row):
        for j in range(k_col):
            share[i, j] = float(cw @ ((a == i) & (b == j)) / total)
            zij = z(i, j)
            joint[i, j] = float(cw @ zij / total)
            variance = variance_of(w * (zij - joint[i, j]) / total)
            joint_se[i, j] = math.sqrt(variance)
            if direct:
                joint_low[i, j], joint_high[i, j] = korn_graubard(joint[i, j], variance, n_all, df, confidence,
                                                                  float(c[cw > 0].sum()))
            else:
                joint_low[i, j], joint_high[i, j] = joint[i, j] - t_half * joint_se[i, j], \
                    joint[i, j] + t_half * joint_se[i, j]
    kish_both = total**2 / float(c @ w**2)
    if direct:  # a joint cell of two questions asked directly is a proportion: the exact interval at Kish's n
        n_kish = kish_respondents(kish_both)
        floors = [exact_at(float(v), n_kish, 1.0, 0.0, confidence) for v in share.ravel()]
        low, high, floored = _with_floor(joint_low.ravel(), joint_high.ravel(), floors)
        joint_low, joint_high = low.reshape(shape), high.reshape(shape)
        if floored.any():
            notes.append(f"{int(floored.sum())} joint cell interval{'s' if floored.sum() > 1 else ''} widened to "
                         f"contain the exact interval of {n_kish:,} unweighted respondents (Kish's effective "
                         f"sample size {kish_both:,.1f}, rounded down)")
    cond, cond_se = np.full(shape, math.nan), np.full(shape, math.nan)
    cond_low, cond_high = np.zeros(shape), np.ones(shape)
    n_both = int(round(float(c @ both)))
    for i in range(k_row):
        row_total = joint[i].sum()
        if row_total <= 0:
            continue  # no one (estimated) gives answer i: no conditional share
        z_row = inv_a[i, a]  # Σ_b z_ab: a column of M₂⁻¹ adds up to 1, since one of M₂ does
        u_row = w * (z_row - row_total) / total
        v_row = variance_of(u_row)
        if row_direct:  # the conditional shares are a domain's (the respondents who answered i)
            members = both & (a == i)
            n_i, df_i = domain(members)
            positive_i = float(c[(cw > 0) & members].sum())
        for j in range(k_col):
            zij = z(i, j)
            cond[i, j] = joint[i, j] / row_total
            # the ratio's influence values; their weighted mean is 0 (R: svyratio)
            variance = variance_of(w * (zij - cond[i, j] * z_row) / (row_total * total))
            cond_se[i, j] = math.sqrt(variance)
            if row_direct and col_affine[j] is None:  # no report affine in this share: as the domain's --by
                cond_low[i, j], cond_high[i, j] = _unaffine_interval(cond[i, j], variance, n_i, df_i, confidence,
                                                                     positive_i)
            elif row_direct:
                p_j, q_j = col_affine[j]
                lam = float(cw @ (members & (b == j)) / (cw @ members))  # the domain's report share of j
                low, high = korn_graubard(lam, variance * (p_j - q_j) ** 2, n_i, df_i, confidence, positive_i)
                cond_low[i, j], cond_high[i, j] = sorted(((low - q_j) / (p_j - q_j), (high - q_j) / (p_j - q_j)))
            else:
                v_joint = joint_se[i, j] ** 2
                v_both = (variance_of(w * (zij - joint[i, j]) / total + u_row) - v_joint - v_row) / 2
                low, high = fieller(joint[i, j], row_total, v_joint, v_both, v_row, t_half)
                if variance > 0 and df > 0:  # and a small share's skew, on the ratio's scale and the reports'
                    scales = [(0.0, 1.0)]
                    if col_affine[j] is not None:
                        scales.append((col_affine[j][1], col_affine[j][0] - col_affine[j][1]))
                    for floor, span in scales:
                        scaled = floor + span * cond[i, j]
                        if 0 < scaled < 1:
                            kg_low, kg_high = korn_graubard(scaled, variance * span**2, n_both, df, confidence)
                            ends = ((kg_low - floor) / span, (kg_high - floor) / span)
                            low, high = min(low, *ends), max(high, *ends)
                cond_low[i, j], cond_high[i, j] = low, high
        if row_direct:  # the domain's intervals, as --by gives them: never narrower than exact at its Kish n
            wm = w * members
            kish_i = float((c @ wm) ** 2 / (c @ wm**2))
            n_kish = kish_respondents(kish_i)
            lam_i = np.array([float(cw @ (members & (b == j)) / (cw @ members)) for j in range(k_col)])
            if col_matrix is None:
                floors = [exact_at(float(lam_i[j]), n_kish, *col_affine[j], confidence) for j in range(k_col)]
            else:
                floors = _matrix_floor(col_matrix, lam_i, n_kish, confidence, col_affine)
            cond_low[i], cond_high[i], floored = _with_floor(cond_low[i], cond_high[i], floors)
            if floored.any():
                notes.append(f"{int(floored.sum())} conditional interval{'s' if floored.sum() > 1 else ''} given "
                             f"row option {i} widened to contain the exact interval of {n_kish:,} unweighted "
                             f"respondents (the row's Kish effective sample size {kish_i:,.1f}, rounded down)")
    return WeightedCrosstabResult(
        n=n_both, effective_n=float(kish_both), degrees_of_freedom=df, confidence=confidence,
        report_share=frozen(share), joint_estimate=frozen(joint), joint_std_error=frozen(joint_se),
        joint_ci_low=frozen(np.clip(joint_low, 0, 1)), joint_ci_high=frozen(np.clip(joint_high, 0, 1)),
        conditional_estimate=frozen(cond), conditional_std_error=frozen(cond_se),
        conditional_ci_low=frozen(np.clip(cond_low, 0, 1)), conditional_ci_high=frozen(np.clip(cond_high, 0, 1)),
        method=(("Korn-Graubard beta interval (joint)" if direct else
                 "t interval on the design's degrees of freedom (joint, linearization)") + "; "
                + ("Korn-Graubard beta interval of the row's domain (conditional)" if row_direct else
                   "the union of Fieller's and Korn-Graubard's intervals for the ratio (conditional)")
                + ("; the union of the t interval and Korn-Graubard's beta interval at the share's effective sample "
                   "size, on the domain's degrees of freedom, where no report of the column is affine in its share"
                   if row_direct and None in col_affine else "")),
        note=("; ".join(notes) + ": Korn–Graubard's interval from the weighted variance was narrower, more certain "
              "than that many randomized reports can be") if notes else None)


def raked_crosstab(row_reports, col_reports, row_epsilon, col_epsilon, weights, variables=(), *, k_row: int,
                   k_col: int, counts=None, confidence: float = 0.95, row_matrix=None,
                   col_matrix=None, base: SurveyDesign | None = None) -> WeightedCrosstabResult:
    """:func:`weighted_crosstab` under raked ``weights`` (:func:`rake`): the same estimates and
    intervals, each variance the calibration variance of :func:`raked_mean` (the influence values
    less their projection on the raking ``variables``, respondents sampled with replacement: R's
    ``svymean(~z_ab, rake(svydesign(ids = ~1, …), …))`` and ``svyratio`` on it), Korn and
    Graubard's intervals on n − 1 degrees of freedom with n the respondents — and a row asked
    directly, a domain of the calibrated design, with the same n and degrees of freedom (R keeps a
    calibrated design's rows in a subset), as :func:`raked_estimate` with a ``domain`` has them.
    ``counts``: the respondents each row (answer pattern) stands for; reports −1: not answered.
    ``row_matrix``, ``col_matrix``: a question randomized by a randomized-response design (its
    epsilon None), as :func:`weighted_crosstab` takes them.

    ``base``: raking started from a sample's design weights (one row per respondent, no ``counts``),
    whose strata and clusters the variance keeps: each statistic's influence values are calibrated
    as above, then go through the design's stratified, clustered formula (:func:`linearized_variance`'s,
    as :func:`raked_mean` with a ``design``; R: ``svymean(~z_ab, des)`` and ``svyratio(~z_ab, ~z_a, des)``
    with ``des = rake(svydesign(ids = ~cluster, strata = ~stratum, weights = ~w), …)``, whose
    ``svyrecvar`` calibrates the influence values before the multistage formula).  The intervals then
    take the design's degrees of freedom (R's ``degf`` of the raked design), and a row asked directly
    the smaller of those and the raked weights' Satterthwaite ones over its domain
    (:func:`weights_degrees_of_freedom`), as :func:`raked_design_estimate` with that ``domain`` and
    ``sample`` has them — so the conditional shares given a row asked directly are that group's
    ``--rake --weights --by`` estimates, intervals included."""
    confidence = check_confidence(confidence)
    w = _given_weights(weights)
    c = _frequencies(counts, w.size)
    if base is not None and (base.n != w.size or (counts is not None and np.any(c != 1))):
        raise SamplingDesignError(f"weights: raking from a sample's design needs one row per respondent ({base.n})",
                                  "weights")
    r1, r2 = np.asarray(row_reports), np.asarray(col_reports)
    for name, r, k in (("row_reports", r1, k_row), ("col_reports", r2, k_col)):
        if r.shape != w.shape or r.dtype.kind not in "iu" or r.max(initial=-1) >= k or r.min(initial=0) < -1:
            raise SamplingDesignError(f"{name}: one option index 0..{k - 1} (or −1) per row ({w.size}) needed", name)
    both = (r1 >= 0) & (r2 >= 0)
    if not np.any(both & (c > 0)):
        raise SamplingDesignError("reports: no respondent answered both questions", "reports")
    n = float(c.sum())
    raking = list(variables)

    design_variance = None if base is None else _variance_of_totals(base)

    def variance_of(u):
        x = calibration_residuals(u, w, raking, c) if raking else u
        if design_variance is not None:
            return design_variance(x)
        return n / (n - 1) * (float(c @ x**2) - float(c @ x) ** 2 / n)

    n_all = int(round(n))
    if base is None:
        df, domain = n_all - 1, (lambda members: (n_all, n_all - 1))
    else:
        df = base.degrees_of_freedom

        def domain(members):  # as raked_design_estimate's interval with a domain and a sample
            return n_all, weights_degrees_of_freedom(replace(base, weights=w * members))
    return _crosstab(r1, r2, both, w * both, c, variance_of, n_all, df, domain,
                     row_epsilon, col_epsilon, k_row, k_col, confidence, row_matrix=row_matrix,
                     col_matrix=col_matrix)
