"""The list experiment's estimate: the difference in (debiased) means between the arms.

Control respondents count how many of J items apply to them (Y_C in ``0..J``), treatment
respondents how many of the J items and the sensitive one (Y_T in ``0..J + 1``); the arms are
assigned by a fair coin, so ``E Y_T − E Y_C = τ``, the share holding the sensitive item
(Blair & Imai 2012, the difference-in-means estimator of the ``list`` package for R).

With ε the count is reported through k-ary randomized response over ``0..J + 1`` (k = J + 2), so
each report R is debiased by the unbiased score ``(R − q k(k − 1)/2)/(p − q)`` of
:func:`.scores.rr_score` (``E = E Y``); a plain list experiment's score is the count itself.
Then

    τ̂ = s̄_T − s̄_C,     Var τ̂ = V_T/n_T + V_C/n_C,

each arm's variance the larger of its sample variance and the least the randomized response
alone gives (:meth:`.scores.ScoreModel.vmin` at the arm's estimated mean), and the interval
``τ̂ ± t_ν sqrt(Var τ̂)`` with Welch–Satterthwaite degrees of freedom ν, clipped to [0, 1]
(τ is a share).  It is a large-sample interval, like Blair & Imai's; its coverage is checked by
Monte Carlo in ``scripts/types_coverage.py`` (the table is in docs/statistics.md).

A plain list experiment has no variance floor (no randomization): when both arms report one
constant count each — common at small n (a quarter of the intervals at n = 20 with J = 3 and
control items held by 5%) — the sample variances are 0 and the large-sample interval would have
zero width, a false certainty.  The prevalence is then still estimated, but the interval is
[0, 1] and the note says why.  When one arm's counts are constant its variance is estimated as 0
and the interval may be too narrow: the note says that too; and when the whole interval lies
outside [0, 1] (clipped to one point) the note says so.  A plain control arm's count above J is
impossible (J control items) and refused (:class:`~deniable.errors.FieldError`, field ``control``).  Each arm's mean also gets the score
interval of :mod:`.scores`.

The planner's margin (:func:`list_margin`) is ``z sqrt((V_T + V_C)/(n/2))`` with each arm's
variance at its largest (answers on the two ends of the range) or, as the typical case,
with control items independent and each held by half the respondents.

References
----------
.. [1] G. Blair, K. Imai, "Statistical analysis of list experiments", Political Analysis 20
   (2012) 47–77.
.. [2] D. Corstange, "Sensitive questions, truthful answers? Modeling the list experiment with
   LISTIT", Political Analysis 17 (2009) 45–63.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from deniable.client.listexp import list_mechanism
from deniable.errors import FieldError

from .binomial import z
from .numeric import MeanResult, moments_mean
from .result import Result, json_number
from .scores import moments, rr_model, rr_score
from .validate import check_confidence


@dataclass(frozen=True, eq=False)
class ListResult(Result):
    """The sensitive item's prevalence and each arm's mean count."""

    items: int
    n_control: int
    n_treatment: int
    epsilon: float | None  # realized; None for a plain list experiment
    declared_epsilon: float | None
    confidence: float
    estimate: float
    std_error: float
    ci_low: float
    ci_high: float
    df: float
    control: MeanResult
    treatment: MeanResult
    noisy_control: np.ndarray
    noisy_treatment: np.ndarray
    note: str = ""

    METHOD = "difference in means"

    def to_dict(self) -> dict:
        """The estimates JSON of a list experiment (docs/design.md, "Formats"), JSON-ready.

        Keys: ``items`` (J, the control items), ``epsilon`` and ``declared_epsilon`` (None for a
        plain list experiment), ``method``, ``confidence``, ``n`` (both arms), ``n_control``,
        ``n_treatment``, the prevalence's ``estimate``, ``std_error``, ``ci_low``, ``ci_high`` and
        Welch's ``df``, ``note`` (None when empty), each arm's mean count (``control``,
        ``treatment``: :meth:`MeanResult.to_dict`) and report counts (``noisy_control``,
        ``noisy_treatment``).  A question records its items' labels under ``items``.
        """
        return {"items": self.items, "epsilon": json_number(self.epsilon),
                "declared_epsilon": json_number(self.declared_epsilon), "method": self.METHOD,
                "confidence": self.confidence, "n": self.n_control + self.n_treatment, "n_control": self.n_control,
                "n_treatment": self.n_treatment, "estimate": json_number(self.estimate),
                "std_error": json_number(self.std_error), "ci_low": json_number(self.ci_low),
                "ci_high": json_number(self.ci_high), "df": json_number(self.df), "note": self.note or None,
                "control": self.control.to_dict(), "treatment": self.treatment.to_dict(),
                "noisy_control": [int(c) for c in self.noisy_control],
                "noisy_treatment": [int(c) for c in self.noisy_treatment]}


def estimate_list(control, treatment, items: int, epsilon, *, confidence: float = 0.95) -> ListResult:
    """Estimate the share holding the sensitive item from each arm's report counts.

    Parameters
    ----------
    control, treatment : sequence of int, length J + 2
        ``control[c]`` reports of count c in the control arm (likewise treatment).
    items : int
        J, the control items.
    epsilon : float or None
        The declared ε of the count's randomized response; None for a plain list experiment.
    confidence : float
        Level of the intervals.

    Returns
    -------
    ListResult

    Examples
    --------
    >>> r = estimate_list([10, 40, 40, 10, 0], [5, 30, 40, 20, 5], items=3, epsilon=None)
    >>> round(r.estimate, 2)
    0.4
    """
    confidence = check_confidence(confidence)
    mech = list_mechanism(items, epsilon)
    k = mech.k
    control = np.asarray(control, dtype=np.int64)
    treatment = np.asarray(treatment, dtype=np.int64)
    if control.shape != (k,) or treatment.shape != (k,) or (control < 0).any() or (treatment < 0).any():
        raise FieldError(f"each arm needs {k} non-negative report counts (counts 0..{items + 1})")
    if not mech.protected and control[items + 1] > 0:
        raise FieldError(f"control: {int(control[items + 1])} control report(s) of {items + 1} items, but the control "
                         f"arm has only J = {items} items (a plain list experiment's control count is at most J)",
                         "control")
    p, q = mech.rr.p, mech.rr.q
    scores = rr_score(k, p, q)
    model = rr_model(k, p, q)
    arms = {}
    for name, counts in (("control", control), ("treatment", treatment)):
        mom = moments(counts, scores)
        est, se, lo, hi, clt = moments_mean(model, mom, confidence)
        n = int(counts.sum())
        arms[name] = (MeanResult(n=n, estimate=float(est), std_error=float(se), ci_low=float(lo), ci_high=float(hi),
                                 method="score", confidence=confidence, clt_half_width=float(clt)), mom)
    (c_mean, c_mom), (t_mean, t_mom) = arms["control"], arms["treatment"]
    notes = []
    if c_mean.n < 2 or t_mean.n < 2:
        notes.append("each arm needs at least 2 reports: the prevalence is not estimated")
        return ListResult(items=items, n_control=c_mean.n, n_treatment=t_mean.n,
                          epsilon=mech.epsilon if mech.protected else None,
                          declared_epsilon=epsilon, confidence=confidence, estimate=float("nan"),
                          std_error=float("nan"), ci_low=0.0, ci_high=1.0, df=float("nan"),
                          control=c_mean, treatment=t_mean, noisy_control=control, noisy_treatment=treatment,
                          note="; ".join(notes))

    def arm_variance(mom):
        n = float(mom.n)
        floor = float(model.vmin(np.clip(mom.mean, 0, model.span)))
        return max(float(mom.m2) * n / (n - 1), floor) / n

    v_c, v_t = arm_variance(c_mom), arm_variance(t_mom)
    total = v_c + v_t
    df = total**2 / (v_c**2 / (c_mean.n - 1) + v_t**2 / (t_mean.n - 1)) if total > 0 else float(c_mean.n + t_mean.n - 2)
    from scipy.stats import t as student_t  # imported here: scipy.stats takes most of a second

    crit = float(student_t.ppf(1 - (1 - confidence) / 2, max(df, 1.0)))
    tau = t_mean.estimate - c_mean.estimate
    half = crit * np.sqrt(total)
    low, high = float(np.clip(tau - half, 0.0, 1.0)), float(np.clip(tau + half, 0.0, 1.0))
    constant = [f"the {name} arm's counts are all {int(np.flatnonzero(counts)[0])}"
                for name, counts in (("control", control), ("treatment", treatment))
                if np.count_nonzero(counts) == 1]
    if total <= 0:
        low, high = 0.0, 1.0
        notes.append(f"both arms reported one constant count each ({'; '.join(constant)}): the sample variances are 0, so a "
                     "large-sample interval would have zero width; too few respondents for an interval, shown as [0, 1]")
    elif constant and not mech.protected:
        notes.append(f"{constant[0]}: that arm's variance is estimated as 0, so the interval may be too narrow "
                     "(few respondents)")
    if total > 0 and low == high:
        notes.append(f"the interval {tau:.3f} ± {half:.3f} lies outside [0, 1]: the arms' difference is not a share "
                     "(a design effect, or chance at small n)")
    return ListResult(
        items=items, n_control=c_mean.n, n_treatment=t_mean.n, epsilon=mech.epsilon if mech.protected else None,
        declared_epsilon=epsilon, confidence=confidence, estimate=float(tau), std_error=float(np.sqrt(total)),
        ci_low=low, ci_high=high, df=float(df),
        control=c_mean, treatment=t_mean, noisy_control=control, noisy_treatment=treatment, note="; ".join(notes),
    )


def list_variances(items: int, epsilon) -> tuple[float, float]:
    """The two arms' score variances added (``V_T + V_C``, per report): worst and typical case.

    Worst: each arm's answers on the two ends of their range with the largest variance (control
    0 or J, treatment 0 or J + 1, half each).  Typical: control items independent, each held by
    half, and the sensitive item by 10%.  ``epsilon`` None: a plain list experiment.
    """
    mech = list_mechanism(items, epsilon)
    model = rr_model(mech.k, mech.rr.p, mech.rr.q)
    control_mu, treatment_mu = items / 2, (items + 1) / 2
    worst = (float(model.variance(control_mu, items**2 / 4)) + float(model.variance(treatment_mu, (items + 1) ** 2 / 4)))
    typical_c = float(model.variance(items / 2, items / 4))
    typical_t = float(model.variance(items / 2 + 0.1, items / 4 + 0.09))
    return worst, typical_c + typical_t


@dataclass(frozen=True, eq=False)
class ListMargin(Result):
    """The expected half-width of a list experiment's prevalence with n respondents (n/2 per arm)."""

    items: int
    epsilon: float | None  # realized; None for a plain list experiment
    n: int
    confidence: float
    margin_worst: float
    margin_typical: float


def list_margin(items: int, epsilon, n: int, *, confidence: float = 0.95) -> ListMargin:
    """The prevalence's expected half-width with n respondents (n/2 per arm), worst and typical case
    (:func:`list_variances`).

    >>> round(list_margin(3, None, 800).margin_worst, 4)
    0.245
    """
    mech = list_mechanism(items, epsilon)
    worst, typical = list_variances(items, epsilon)
    half = max(n, 2) / 2
    zq = z(check_confidence(confidence))
    return ListMargin(items=items, epsilon=mech.epsilon if mech.protected else None, n=n, confidence=confidence,
                      margin_worst=float(zq * np.sqrt(worst / half)), margin_typical=float(zq * np.sqrt(typical / half)))


def list_sample_size(items: int, epsilon, margin: float, confidence: float = 0.95) -> dict:
    """Respondents (an even number, half per arm) for the prevalence's half-width ``margin``.

    ``n/2 = ceil(z² V / margin²)`` with V from :func:`list_variances`, worst and typical case:
    the large-sample half-width ``z sqrt(V/(n/2))`` of :func:`list_margin` is then at most the margin.

    >>> list_sample_size(3, None, 0.05)["needed_worst"]
    19208
    """
    if isinstance(margin, bool) or not 0 < float(margin) < 1:
        raise FieldError(f"margin must be a number in (0, 1), got {margin!r}", "margin")
    worst, typical = list_variances(items, epsilon)
    zq = z(check_confidence(confidence))
    worst_arm, typical_arm = (int(np.ceil(zq * zq * v / (margin * margin))) for v in (worst, typical))
    return {"needed_worst": 2 * worst_arm, "needed_typical": 2 * typical_arm}
