"""Regression with a randomized outcome: ``regress`` checks its input, fits, and infers.

The model, the likelihood and the fit are in :mod:`.rrlogit`; predicted prevalence and marginal
effects in :mod:`.regression_effects`; the result object in :mod:`.regression_result`.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
from scipy.stats import chi2, norm

from deniable.client.mechanism import MechanismError, check_options, resolve
from deniable.errors import FieldError

from . import point
from .regression_effects import Term, effects
from .regression_result import RegressionResult
from .result import frozen
from .designs import maximum_likelihood
from .rrlogit import Data, fit, log_probabilities, posterior, profile_interval
from .validate import check_confidence
from .weights import SurveyDesign, calibration_residuals, linearized_covariance

SEPARATION_PI = 1e-6  # a fitted probability below this for some observed pattern: no finite maximum
COLLINEAR_EIGEN = 1e-10  # smallest eigenvalue of a leading block of the scaled Gram matrix


class RegressionError(FieldError):
    """A regression that cannot be fitted; ``kind`` says why, the message (one line) where.

    Kinds: ``"input"``, ``"empty cell"``, ``"collinear covariates"``, ``"separation"``,
    ``"no convergence"``.
    """

    def __init__(self, kind: str, message: str):
        self.kind = kind
        super().__init__(f"{kind}: {message}")


@dataclass(frozen=True, eq=False)
class Calibration:
    """Raked (calibrated) sampling weights for :func:`regress`: each row's raked weight (one respondent's
    weight; the row's frequency weight says how many respondents share it), the raking variables'
    category codes per row, and the rows in the fit (``domain``; None: all) — the others keep their
    place in the calibration with a score of 0, as R's ``subset`` of a calibrated design keeps them.
    ``design``: the sampling design raking started from (its weights the starting weights; one row per
    respondent, every frequency weight 1), whose strata, clusters and finite-population correction the
    variance keeps (None: equal starting weights, each respondent its own cluster, with replacement)."""

    weights: np.ndarray
    variables: tuple
    domain: np.ndarray | None = None
    design: SurveyDesign | None = None


def _as_calibration(calibration: Calibration, m: int) -> tuple[np.ndarray, list, np.ndarray]:
    """Check a :class:`Calibration` against m rows: ``(raked weights, variables, domain as 0/1)``."""
    w = np.asarray(calibration.weights, dtype=float)
    if w.shape != (m,) or not np.all(np.isfinite(w)) or np.any(w <= 0):
        raise RegressionError("input", f"calibration weights must be one finite positive weight per report ({m})")
    variables = [np.asarray(v) for v in calibration.variables]
    if not variables or any(v.shape != (m,) or v.dtype.kind not in "iu" or v.min() < 0 for v in variables):
        raise RegressionError("input", f"calibration variables must be category codes 0, 1, … per report ({m})")
    domain = np.ones(m) if calibration.domain is None else np.asarray(calibration.domain, dtype=float)
    if domain.shape != (m,):
        raise RegressionError("input", f"the calibration's domain must have one entry per report ({m})")
    if calibration.design is not None and calibration.design.n != m:
        raise RegressionError("input", f"the calibration's sampling design must have one row per report ({m}), "
                                       f"got {calibration.design.n}")
    return w, variables, domain


def calibrated_meat(scores: np.ndarray, weights: np.ndarray, variables: list, counts: np.ndarray,
                    design: SurveyDesign | None = None) -> np.ndarray:
    """The middle of the sandwich under raked weights: the rows' weighted scores ``scores`` (N × P, each
    row one respondent's ``w_i ∂ℓ_i/∂θ``, shared by ``counts[i]`` respondents) replaced column by column by
    their residuals on the raking variables' indicators (:func:`.weights.calibration_residuals`, R's
    ``svyrecvar`` for a ``rake()``d design), then ``n/(n − 1) Σ_i c_i (e_i − ē)(e_i − ē)ᵀ`` over the
    ``n = Σ c`` respondents (each its own cluster, one stratum, with replacement) — or, raking from a
    sampling ``design`` (one row per respondent), the design's stratified, clustered formula
    ``Σ_h (1 − f_h) n_h/(n_h − 1) Σ_c (E_hc − Ē_h)(E_hc − Ē_h)ᵀ`` of the residuals' cluster totals
    (:func:`.weights.linearized_covariance`): R's ``svyrecvar`` calibrates the influence values first,
    then takes the multistage formula."""
    e = np.column_stack([calibration_residuals(scores[:, j], weights, variables, counts)
                         for j in range(scores.shape[1])])
    if design is not None:
        return linearized_covariance(e, design)
    n = float(counts.sum())
    sums = counts @ e
    return n / (n - 1) * ((e * counts[:, None]).T @ e - np.outer(sums, sums) / n)


def _as_reports(reports, k):
    array = np.asarray(reports)
    if array.ndim != 1 or array.size == 0:
        raise RegressionError("input", f"reports must be a non-empty 1-d array of option indices, "
                                       f"got shape {array.shape}")
    if array.dtype.kind not in "iu":
        raise RegressionError("input", f"reports must be integer option indices, got dtype {array.dtype}")
    if k is None:
        k = max(int(array.max()) + 1, 2)
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 2:
        raise RegressionError("input", f"k must be an integer >= 2, got {k!r}")
    try:
        return check_options(array, int(k)).astype(np.int64), int(k)
    except MechanismError as exc:
        raise RegressionError("input", f"reports {exc}") from None


def _as_covariates(covariates, m: int) -> np.ndarray:
    if covariates is None:
        return np.zeros((m, 0))
    array = np.asarray(covariates, dtype=float) if not isinstance(covariates, np.ndarray) else covariates
    if array.ndim == 1:
        array = array[:, None]
    if array.ndim != 2 or array.shape[0] != m:
        raise RegressionError("input", f"covariates must have one row per report ({m}), got shape {array.shape}")
    if array.dtype.kind not in "iufb":
        raise RegressionError("input", f"covariates must be numbers, got dtype {array.dtype}")
    array = array.astype(float)
    if not np.all(np.isfinite(array)):
        raise RegressionError("input", "covariates must be finite (no NaN or infinity): drop or impute those rows")
    return array


def _as_weights(weights, m: int) -> np.ndarray:
    if weights is None:
        return np.ones(m)
    array = np.asarray(weights, dtype=float)
    if array.shape != (m,):
        raise RegressionError("input", f"weights must have one entry per report ({m}), got shape {array.shape}")
    if not np.all(np.isfinite(array)) or np.any(array < 0):
        raise RegressionError("input", "weights must be finite and non-negative (frequency weights)")
    return array


@dataclass(frozen=True)
class _MatrixChannel:
    """What the result states of a design given by its matrix (p and q belong to k-ary RR only)."""

    epsilon: float
    label: str
    p: float = math.nan
    q: float = math.nan

    @property
    def declared_epsilon(self) -> float:
        return self.epsilon


def _as_matrix(matrix, k, epsilon) -> tuple[np.ndarray, int]:
    """Check a misclassification matrix (reports × answers): probabilities, columns summing to 1, full column rank."""
    if epsilon is not None:
        raise RegressionError("input", "give epsilon=None with a matrix: the design's ε is computed from its matrix")
    m = np.asarray(matrix, dtype=float)
    if m.ndim != 2 or m.shape[1] < 2 or m.shape[0] < 2:
        raise RegressionError("input", f"matrix must be reports × answers with at least 2 of each, got shape {m.shape}")
    if not np.all(np.isfinite(m)) or np.any(m < 0) or np.any(np.abs(m.sum(axis=0) - 1) > 1e-9):
        raise RegressionError("input", "matrix must hold probabilities, each column (a true answer's report "
                                       "distribution) summing to 1")
    if np.linalg.matrix_rank(m) < m.shape[1]:
        raise RegressionError("input", "matrix is singular: two true answers have report distributions no "
                                       "estimator can tell apart")
    if k is not None and k != m.shape[1]:
        raise RegressionError("input", f"k = {k!r} but the matrix has {m.shape[1]} answers (columns)")
    return m, m.shape[1]


def _matrix_epsilon(m: np.ndarray) -> float:
    """``max_r ln(max_t M[r, t] / min_t M[r, t])`` over reports some answer gives; inf with a zero cell."""
    worst = 0.0
    for row in m:
        if row.max() == 0:
            continue
        if row.min() == 0:
            return math.inf
        worst = max(worst, math.log(row.max() / row.min()))
    return worst


def _collapse(X: np.ndarray, r: np.ndarray, w: np.ndarray):
    """Sum the weights of identical ``(x, r)`` rows: the likelihood needs each pattern once.

    A lexicographic sort of the columns, then one pattern per run of equal rows (faster than
    ``np.unique(axis=0)``, which compares whole rows as bytes).
    """
    keep = w > 0
    X, r, w = X[keep], r[keep], w[keep]
    if len(w) == 0:
        return X, r, w
    order = np.lexsort((r, *X.T[::-1]))
    X, r, w = X[order], r[order], w[order]
    change = np.ones(len(w), dtype=bool)
    change[1:] = (r[1:] != r[:-1]) | np.any(X[1:] != X[:-1], axis=1)
    starts = np.flatnonzero(change)
    return X[starts], r[starts], np.add.reduceat(w, starts)


def _describe(row: np.ndarray, names, terms) -> str:
    """The covariate values of a design row, in the terms' words (``year = 4th, age = 31``)."""
    parts = []
    for term in terms:
        if term.categorical:
            on = [g for g, c in enumerate(term.columns) if row[c] == 1]
            parts.append(f"{term.name} = {term.levels[on[0] + 1] if on else term.levels[0]}")
        else:
            parts.append(f"{term.name} = {row[term.columns[0]]:g}")
    return ", ".join(parts) if parts else "every response"


def _check_design(X: np.ndarray, w: np.ndarray, names, terms) -> None:
    """Raise RegressionError for an empty cell or for collinear covariates, naming them."""
    for term in terms:
        for g, c in enumerate(term.columns):
            if not np.any(X[:, c] != 0):
                if term.categorical:
                    raise RegressionError("empty cell", f"no response has {term.name} = {term.levels[g + 1]!r}; "
                                                        "drop that level or merge it with another")
                raise RegressionError("empty cell", f"covariate {names[c]!r} is 0 in every response")
    design = np.column_stack([np.ones(len(w)), X])
    gram = design.T @ (design * w[:, None])
    scale = np.sqrt(np.diag(gram))
    scaled = gram / np.outer(scale, scale)
    labels = ["Intercept", *names]
    for j in range(1, scaled.shape[0]):
        if np.linalg.eigvalsh(scaled[:j + 1, :j + 1]).min() < COLLINEAR_EIGEN:
            coef = np.linalg.lstsq(scaled[:j, :j], scaled[:j, j], rcond=None)[0]
            others = [labels[i] for i in np.flatnonzero(np.abs(coef) > 1e-6)] or labels[:j]
            raise RegressionError("collinear covariates", f"{labels[j]!r} is a linear combination of "
                                  f"{', '.join(map(repr, others))}; drop one of them")


def _shares(data: Data) -> tuple[np.ndarray, np.ndarray]:
    """The report counts and the intercept-only maximum-likelihood shares (the consistent estimate)."""
    if data.matrix is not None:
        counts = np.bincount(data.r, weights=data.w, minlength=data.matrix.shape[0])
        return counts, maximum_likelihood(counts, data.matrix)
    counts = np.bincount(data.r, weights=data.w, minlength=data.k)
    return counts, point.consistent(counts, data.p, data.q)


def _start(data: Data) -> np.ndarray:
    """Intercepts from the intercept-only maximum (the consistent estimate, kept off 0), slopes 0."""
    share = np.clip(_shares(data)[1], 1e-3, None)
    share /= share.sum()
    theta = np.zeros((data.k - 1, data.X.shape[1]))
    theta[:, 0] = np.log(share[data.others]) - np.log(share[data.reference])
    return theta.reshape(-1)


def _null_loglik(data: Data) -> float:
    """The intercept-only maximum: the constrained MLE of the option shares (water filling)."""
    counts, share = _shares(data)
    lam = data.matrix @ share if data.matrix is not None else data.q + (data.p - data.q) * share
    return float(np.sum(counts[counts > 0] * np.log(lam[counts > 0])))


def regress(reports, covariates, epsilon, *, k=None, weights=None, names=None, terms=None, reference=None,
            outcome="y", options=None, confidence=0.95, profile=True, design=None, matrix=None,
            matrix_label="", calibration: Calibration | None = None) -> RegressionResult:
    """Fit a logit (k = 2) or multinomial logit of the *true* answer on covariates from randomized reports.

    Parameters
    ----------
    reports : array_like of int, shape (m,)
        The reported (randomized) option index of each response or pattern, ``0..k−1``.
    covariates : array_like, shape (m, d), or None
        Numeric covariates, without an intercept (one is added first).  Categorical covariates
        come as dummy columns (see ``terms``).
    epsilon : float or None
        The outcome question's declared ε; the realized ``p`` and ``q`` come from
        :func:`deniable.client.mechanism.resolve` (None: asked directly, ``p = 1``).
    k : int, optional
        Number of options; default ``max(reports) + 1``.  Give it when an option may never
        have been reported.
    weights : array_like, shape (m,), optional
        Frequency weights: row i stands for ``weights[i]`` identical responses (distinct patterns
        with their counts; the likelihood is the same as for the expanded data).
    design : deniable.estimators.weights.SurveyDesign, optional
        A sampling design instead (one row per respondent: sampling weights, strata, clusters):
        the fit maximizes the pseudo-likelihood ``Σ_i w_i ℓ_i`` and the covariance is the sandwich
        ``H⁻¹ J H⁻¹`` — H the information of the weighted fit, J the linearized covariance of
        the weighted per-row scores within strata and clusters (:func:`.weights.linearized_covariance`;
        Binder 1983, R's ``svyglm``).  Wald intervals only (no profile intervals, and no
        likelihood-ratio test: the pseudo-likelihood is not a likelihood); ``n`` is the respondents.
    calibration : Calibration, optional
        Weights raked to population margins (:func:`deniable.estimators.weights.rake`), with the
        raking variables: the fit maximizes ``Σ_i c_i d_i g_i ℓ_i`` (``c_i`` the frequency ``weights``,
        ``g_i`` the raked weight, ``d_i`` the domain) and the covariance is the sandwich ``H⁻¹ J H⁻¹``
        with J the calibration variance of the weighted scores (Notes).  Wald intervals only, no
        likelihood-ratio test; ``n`` is the respondents in the fit, ``Σ c_i d_i``.  With
        ``calibration.design``, raking started from that sampling design's weights, and J keeps its
        strata, clusters and finite-population correction (Notes).
    matrix : array_like, shape (k_r, k), optional
        A randomized-response design's misclassification matrix ``M[r, t] = P(report r | true t)``
        (:attr:`deniable.client.designs.Design.matrix`) instead of k-ary randomized response at
        ε: ``reports`` are then report indices ``0..k_r−1``, ``k`` is the matrix's columns, and
        ``epsilon`` must be None (the design's ε is computed from the matrix:
        ``max_r ln(max_t M[r, t] / min_t M[r, t])``, infinite — not ε-LDP — with a zero cell, whose
        likelihood is still well defined).  The matrix must have full column rank.  (Not to be
        confused with ``design``, the sampling design.)
    matrix_label : str, optional
        How the summary names the design (default "misclassification matrix").
    names : sequence of d str, optional
        Column names (default ``x1…xd``).
    terms : sequence of :class:`Term`, optional
        How columns group into covariates (a categorical's dummies and its levels), for the
        predicted prevalence by group and for error messages; default: each column is numeric.
    reference : int, optional
        The option without coefficients (default the last, k − 1).
    outcome, options : str, sequence of k str, optional
        The outcome's name and option labels, for the summary.
    confidence : float, default 0.95
        Level of the Wald, profile and effect intervals.
    profile : bool, default True
        Compute profile-likelihood intervals (a few constrained fits per coefficient).

    Returns
    -------
    RegressionResult

    Raises
    ------
    RegressionError
        With ``kind`` ``"input"`` (bad arrays or arguments), ``"empty cell"`` (a dummy column
        that is 0 everywhere), ``"collinear covariates"`` (naming the column and those it is a
        combination of), ``"separation"`` (the likelihood has no finite maximum: some group's
        fitted share of an option goes to 0 or 1, which with randomized response happens when a
        group's reports of an option are no more frequent than randomization alone makes them)
        or ``"no convergence"``.

    Notes
    -----
    ``P(true = j | x) = softmax(x·β)_j`` with ``β_reference = 0``, and the report of option r has
    probability ``q + (p − q) π_r(x)`` — under a design's ``matrix``, ``Σ_t M[r, t] π_t(x)`` —
    (:mod:`deniable.estimators.rrlogit`).  The fit maximizes
    this likelihood of the reports directly (trust-region Newton with the analytic Hessian; the
    module notes of :mod:`.rrlogit` say why not EM).  Standard errors are the square roots of
    the diagonal of the inverse observed information ``−∇²ℓ(β̂)``; Wald intervals are
    ``β̂ ± z·SE``; profile intervals are ``{b : 2(ℓ̂ − max_{β_t = b} ℓ) ≤ χ²₁(confidence)}``
    (Venzon & Moolgavkar 1988), which follow the likelihood's asymmetry and are the better
    choice at small n or ε.  The likelihood-ratio test compares ``ℓ̂`` with the intercept-only
    maximum (the constrained MLE of the option shares, :func:`deniable.estimators.estimate`'s
    consistent estimate) on ``(k − 1)·d`` degrees of freedom (Wilks 1938).  With p = 1 (asked
    directly) the model and its fit are the ordinary (multinomial) logit.  Coverage of the
    intervals is measured by ``scripts/regression_coverage.py`` (docs/analysis.md).

    **Under raked weights** (``calibration``).  The estimate solves the weighted score equations
    ``U(θ) = Σ_i g_i d_i s_i(θ) = 0`` (``s_i = ∂ℓ_i/∂θ``, :func:`row_scores`); a first-order expansion
    gives ``θ̂ − θ ≈ H⁻¹ U(θ)`` with ``H = −∂U/∂θ`` the information of the weighted fit, so θ̂'s variance
    is that of the weighted total ``U`` of the scores, sandwiched (Binder 1983).  U is a
    calibration estimator of a total: the raked weights ``g_i`` meet the raking variables' population
    totals exactly, and a calibration estimator has, asymptotically, the variance of the regression
    estimator on the calibration variables — that of the total of the residuals ``e_i`` of the
    scores' regression on the raking variables' indicators (Deville & Särndal 1992, result 5;
    Lumley 2010, ch. 7).  So ``J = n/(n − 1) Σ_i (g_i e_i − ḡe)(g_i e_i − ḡe)ᵀ`` over the n respondents
    (:func:`calibrated_meat`), the residuals found as R's ``svyrecvar`` finds them for a ``rake()``d
    design (ten rounds of backfitting over the margins, :func:`.weights.calibration_residuals`), and
    ``Cov θ̂ = H⁻¹ J H⁻¹`` — what R's ``svyglm`` computes on a ``rake()``d ``svydesign(ids = ~1)`` (with
    p = 1, ``family = quasibinomial()``: tests/unit/test_raked_regression.py runs it).  Respondents
    outside the domain keep their place in the calibration with a score of 0, as R's ``subset`` of a
    calibrated design keeps them with weight 0.  Respondents sharing an answer pattern share their
    raked weight and score, so a pattern's contribution is its count times a respondent's.

    **Raked from a sampling design** (``calibration.design``: strata h, clusters c, finite-population
    correction ``f_h = n_h/N_h``).  Raking starts from the sampling weights ``1/π_i`` instead of
    equal ones; the raked weights ``g_i`` still meet the margins exactly, so U is still a calibration
    estimator, and Deville & Särndal's result holds under any design: U has asymptotically the design
    variance of the total of the residuals ``g_i e_i`` — the same residuals on the raking variables
    (now computed with the design's raked weights), but their variance is the design's, not that of
    n independent draws.  Only the last step changes: the residuals are summed within each cluster,
    ``E_hc = Σ_{i ∈ c} g_i e_i``, and ``J = Σ_h (1 − f_h) n_h/(n_h − 1) Σ_c (E_hc − Ē_h)(E_hc − Ē_h)ᵀ``
    (:func:`.weights.linearized_covariance`, Binder 1983's linearization of a total) — what R's
    ``svyrecvar`` does for ``svyglm`` on ``rake(svydesign(ids = ~cluster, strata = ~stratum,
    weights = ~w, fpc = …), …)``: it backfits the margins out of the influence values (the raking's
    ``postStrata``), then applies the multistage formula (Lumley 2010, ch. 7;
    tests/unit/test_raked_design_regression.py runs it).  Without strata and clusters it is the
    formula above (each respondent its own cluster, one stratum), now with unequal starting weights.

    References
    ----------
    .. [1] G. Blair, K. Imai, Y.-Y. Zhou, "Design and analysis of the randomized response
       technique", JASA 110 (2015) 1304–1319.
    .. [2] D. W. Heck, M. Moshagen, "RRreg: an R package for correlation and regression
       analyses of randomized response data", J. Stat. Softw. 85 (2018).
    .. [3] D. M. Venzon, S. H. Moolgavkar, "A method for computing profile-likelihood-based
       confidence intervals", Applied Statistics 37 (1988) 87–94.
    .. [4] S. S. Wilks, "The large-sample distribution of the likelihood ratio for testing
       composite hypotheses", Ann. Math. Statist. 9 (1938) 60–62.
    .. [5] D. A. Binder, "On the variances of asymptotically normal estimators from complex
       surveys", International Statistical Review 51 (1983) 279–292.
    .. [6] J.-C. Deville, C.-E. Särndal, "Calibration estimators in survey sampling", JASA 87
       (1992) 376–382.
    .. [7] T. Lumley, *Complex Surveys: A Guide to Analysis Using R*, Wiley (2010), ch. 7.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.repeat([0.0, 1.0], 4)
    >>> reports = np.array([0, 0, 0, 1, 0, 1, 1, 1])
    >>> r = regress(reports, x, None, weights=np.full(8, 50), names=["group"], profile=False)
    >>> [round(float(b), 4) for b in r.params]
    [1.0986, -2.1972]
    """
    if matrix is not None:
        matrix, k = _as_matrix(matrix, k, epsilon)
        r, _ = _as_reports(reports, max(matrix.shape[0], 2))
        if r.max() >= matrix.shape[0]:
            raise RegressionError("input", f"reports must be report indices 0..{matrix.shape[0] - 1} of the matrix")
    else:
        r, k = _as_reports(reports, k)
    X = _as_covariates(covariates, r.size)
    w = _as_weights(weights, r.size)
    if design is not None:
        if weights is not None:
            raise RegressionError("input", "give frequency weights or a sampling design, not both")
        if design.n != r.size:
            raise RegressionError("input", f"the design must have one row per report ({r.size}), got {design.n}")
        w = np.asarray(design.weights, dtype=float)
        rows = (X, r, w)  # row by row, for the sandwich
        profile = False
    if calibration is not None:
        if design is not None:
            raise RegressionError("input", "give a sampling design or a calibration, not both")
        raked, raking, domain = _as_calibration(calibration, r.size)
        counts = w
        if calibration.design is not None and np.any(counts != 1):
            raise RegressionError("input", "a calibration's sampling design has one row per respondent: no "
                                           "frequency weights")
        w = counts * raked * domain  # the pseudo-likelihood's weight of each row
        rows = (X, r, raked * domain)  # one respondent of each row, for the sandwich
        profile = False
    confidence = check_confidence(confidence)
    d = X.shape[1]
    names = tuple(f"x{i + 1}" for i in range(d)) if names is None else tuple(str(n) for n in names)
    if len(names) != d:
        raise RegressionError("input", f"names must have one entry per covariate column ({d}), got {len(names)}")
    terms = tuple(Term(name, (i,)) for i, name in enumerate(names)) if terms is None else tuple(terms)
    options = tuple(str(o) for o in options) if options is not None else tuple(str(i) for i in range(k))
    if len(options) != k:
        raise RegressionError("input", f"options must have k = {k} labels, got {len(options)}")
    reference = k - 1 if reference is None else reference
    if isinstance(reference, bool) or not isinstance(reference, numbers.Integral) or not 0 <= reference < k:
        raise RegressionError("input", f"reference must be an option index 0..{k - 1}, got {reference!r}")
    if matrix is not None:
        mech = _MatrixChannel(_matrix_epsilon(matrix), matrix_label or "misclassification matrix")
    else:
        try:
            mech = resolve(k, epsilon)
        except MechanismError as exc:
            raise RegressionError("input", str(exc)) from None
    X, r, w = _collapse(X, r, w)
    if matrix is not None and np.any(matrix[r].sum(axis=1) == 0):
        raise RegressionError("input", "a report has probability 0 under every answer in the matrix, yet it was made")
    if w.sum() == 0:
        raise RegressionError("input", "no responses (every weight is 0)")
    _check_design(X, w, names, terms)
    # The fit runs on columns scaled to at most 1 in absolute value, so that the units of a covariate
    # (income in cents or in dollars) change nothing but the coefficients' units: θ_j = s_j β_j is a
    # linear reparametrization, so β̂ = θ̂/s, Cov β̂ = Cov θ̂/(s sᵀ) and each profile interval's ends
    # divide by s_j exactly (the likelihood is the same function of β).
    scale = _column_scales(X, w)
    data = Data(np.column_stack([np.ones(len(w)), X / scale]), r, w, k, mech.p, mech.q, int(reference), matrix)
    unscale = np.tile(np.concatenate([[1.0], scale]), k - 1)  # θ is (intercept, covariates) per option
    best = fit(data, _start(data))
    _check_separation(best, data, names, terms, options, X)  # first: a diverging fit also fails to converge
    if not best.converged:
        raise RegressionError("no convergence", f"the fit stopped after {best.iterations} iterations without "
                              "reaching the maximum; simplify the model")
    information = -best.hessian
    eigen = np.linalg.eigvalsh(information)
    if eigen.min() <= 1e-12 * max(eigen.max(), 1.0):
        raise RegressionError("separation", "the likelihood is flat in some direction at its maximum "
                              "(too few responses for this ε to pin down every coefficient)")
    cov_scaled = np.linalg.inv(information)
    if design is not None or calibration is not None:  # the sandwich H⁻¹ J H⁻¹, in the scaled parametrization
        row_data = Data(np.column_stack([np.ones(len(rows[2])), rows[0] / scale]), rows[1], rows[2], k, mech.p,
                        mech.q, int(reference), matrix)
        scores = rows[2][:, None] * row_scores(best.theta, row_data)
        meat = linearized_covariance(scores, design) if calibration is None else \
            calibrated_meat(scores, raked, raking, counts, calibration.design)
        cov_scaled = cov_scaled @ meat @ cov_scaled
    z = norm.ppf(0.5 + confidence / 2)
    drop = chi2.ppf(confidence, 1) / 2
    note = "" if design is None else ("sampling design: standard errors by linearization (sandwich), Wald intervals "
                                      "only; no likelihood-ratio test")
    if calibration is not None:
        note = ("raked weights: standard errors by linearization (sandwich) with the calibration (raking) variance, "
                "Wald intervals only; no likelihood-ratio test")
    if profile:
        ends = []
        for i in range(data.size):
            try:
                ends.append(profile_interval(data, best, i, drop, cov_scaled))
            except (np.linalg.LinAlgError, FloatingPointError, ValueError):  # a constrained fit broke down
                ends.append((math.nan, math.nan))
                note = "a profile interval could not be computed (a constrained fit failed); use the Wald interval"
        profile_low, profile_high = (np.array(e) / unscale for e in zip(*ends))
    else:
        profile_low = profile_high = np.full(data.size, np.nan)
    theta = best.theta / unscale
    cov = cov_scaled / np.outer(unscale, unscale)
    se = np.sqrt(np.diag(cov))
    ll_null = _null_loglik(data)
    weighted = design is not None or calibration is not None
    lr = max(2 * (best.loglik - ll_null), 0.0) if not weighted else math.nan
    lr_df = (k - 1) * d
    coef_names = tuple(f"{options[j]}: {c}" if k > 2 else c for j in data.others for c in ("Intercept", *names))
    if not note and (np.any(np.isinf(profile_low)) or np.any(np.isinf(profile_high))):
        note = "a profile interval is open on one side: the likelihood is too flat there (few responses for this ε)"
    data = Data(np.column_stack([np.ones(len(w)), X]), r, w, k, mech.p, mech.q, int(reference), matrix)  # effects
    return RegressionResult(
        names=coef_names, outcome=str(outcome), options=options, reference=int(reference), k=k,
        n=float(design.n) if design is not None else float(counts @ domain) if calibration is not None else
        float(w.sum()), patterns=int(len(w)), epsilon=mech.epsilon, declared_epsilon=mech.declared_epsilon,
        p=mech.p, q=mech.q, confidence=confidence,
        params=frozen(theta), std_error=frozen(se), z=frozen(theta / se),
        p_value=frozen(2 * norm.sf(np.abs(theta / se))),
        ci_low=frozen(theta - z * se), ci_high=frozen(theta + z * se),
        profile_low=frozen(profile_low), profile_high=frozen(profile_high), cov=frozen(cov),
        loglik=best.loglik, loglik_null=ll_null, lr_stat=lr, lr_df=lr_df,
        lr_p_value=float(chi2.sf(lr, lr_df)) if lr_df and not weighted else math.nan,
        converged=best.converged, iterations=best.iterations,
        effects=tuple(effects(theta, cov, data, terms, z)), note=note,
        design=mech.label if matrix is not None else "",
    )


def row_scores(theta: np.ndarray, data: Data) -> np.ndarray:
    """Each row's score ``∂ℓ_i/∂θ`` (N × P, unweighted): ``s_i (e_r − π_i) ⊗ x_i`` on the non-reference
    options, ``s_i = (p − q) π_i,r/L_i`` (the rows of :func:`.rrlogit.derivatives`' gradient)."""
    if data.matrix is not None:  # b − π (rrlogit's notes, "Any design")
        log_pi, _, b = posterior(theta, data)
        u = b[:, data.others] - np.exp(log_pi[:, data.others])
        return (u[:, :, None] * data.X[:, None, :]).reshape(len(u), -1)
    rows = np.arange(data.X.shape[0])
    log_pi = log_probabilities(theta, data)
    log_pi_r = log_pi[rows, data.r]
    if data.q == 0:
        s = np.ones(len(rows))
    else:
        s = np.exp(math.log(data.p - data.q) + log_pi_r
                   - np.logaddexp(math.log(data.q), math.log(data.p - data.q) + log_pi_r))
    u = -np.exp(log_pi[:, data.others])
    u += data.r[:, None] == data.others[None, :]
    return ((s[:, None] * u)[:, :, None] * data.X[:, None, :]).reshape(len(rows), -1)


def _column_scales(X: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Each column's largest absolute value over the rows with weight (1 for a column of zeros)."""
    if X.shape[1] == 0:
        return np.ones(0)
    largest = np.abs(X[w > 0]).max(axis=0) if (w > 0).any() else np.zeros(X.shape[1])
    return np.where(largest > 0, largest, 1.0)


def _check_separation(best, data: Data, names, terms, options, X: np.ndarray) -> None:
    """Raise for a fitted share near 0 or 1, naming the covariate values (``X``: in their own units)."""
    from .rrlogit import log_probabilities

    pi = np.exp(log_probabilities(best.theta, data))
    row, option = np.unravel_index(np.argmin(pi), pi.shape)
    if pi[row, option] < SEPARATION_PI:
        where = _describe(X[row], names, terms)
        raise RegressionError("separation", f"the fit drives the share of {options[option]!r} to 0 where {where} "
                              "(its reports there are no more frequent than randomization alone makes them), "
                              "so the likelihood has no maximum; merge groups, drop a covariate or collect "
                              "more responses")
