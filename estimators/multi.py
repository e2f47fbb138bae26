"""Estimates for check-all-that-apply questions: each option's prevalence, the number ticked, pairs.

Each option's tick is binary randomized response at ``ε/K`` (:mod:`deniable.client.multi`), so

* **per option**, the number of reports that tick option j is exactly Binomial(n, λ_j) with
  ``λ_j = q + (p − q) π_j``: the estimates and the exact Feldman–Cousins intervals of a yes/no
  question (:func:`.marginal.estimate`), one binomial per option (Bonferroni over the K options
  when ``simultaneous``);
* **the number of options ticked** T: a report ticks ``W = Σ_j b'_j`` options, and given the true
  ticks the reported bits are independent with variance ``p(1 − p)`` each (``q = 1 − p``), so
  ``E W = Kq + (p − q) E T`` and ``Var W = K p(1 − p) + (p − q)² Var T``.  The unbiased score
  ``(W − Kq)/(p − q)`` has ``Var = Var T + K p(1 − p)/(p − q)²``: the score interval of
  :mod:`.scores` with T in ``0..K``;
* **pairs**: two options' reported ticks are a 2 × 2 cross-tab of two binary randomized
  responses at ``ε/K`` each, so :func:`.joint.crosstab` gives the share ticking both (with its
  exact conservative interval) and the share of those ticking j who also tick l.  All K(K − 1)/2
  pairs share n and the mechanism, so they are computed at once (:func:`.joint.crosstabs`: the
  maximum-likelihood fit in closed form where it is interior, else the best of the simplex's facets
  and edges, :func:`.joint.fit_joints`), with the same numbers as :func:`.joint.crosstab` pair by pair.

The sufficient statistics are n, the per-option tick counts, the pairwise co-occurrence counts
and the distribution of W (the store keeps exactly these: ``deniable.server.store``).

**A binary design on each tick** (:func:`estimate_multi_design`; :mod:`deniable.client.designs`,
``TickDesignMechanism``): each tick is reported as ticked with probability ``a = M[0, 0]`` when it is
ticked and ``b = M[0, 1]`` when not (``a ≠ b``: the design's matrix has full rank), independently, so

* **per option**, the reported ticks of option j are exactly Binomial(n, ``b + (a − b) π_j``): the
  binary design's affine map, whose exact interval is :func:`.designs.estimate_design`'s (the
  interval for the report's probability on ``[min(a, b), max(a, b)]``, mapped to π_j);
* **the number ticked**: given T = t true ticks, W is a sum of t Bernoulli(a) and K − t Bernoulli(b),
  so ``E[W | T] = Kb + (a − b) T`` and ``Var(W | T) = t a(1 − a) + (K − t) b(1 − b)``; the unbiased
  score ``(W − Kb)/(a − b)`` has ``Var = Var T + [K b(1 − b) + μ (a(1 − a) − b(1 − b))]/(a − b)²``
  (μ = E T): the score model with ``h0 = K b(1 − b)/(a − b)²``, ``h1 = (a(1 − a) − b(1 − b))/(a − b)²``
  (:class:`.scores.ScoreModel`), which is :func:`ticked_model` when ``b = 1 − a``;
* **pairs**: two options' reports are a 2 × 2 cross-tab of two questions randomized by the same
  binary design, :func:`.joint.crosstab` with that design on both sides (its exact intervals need
  report 0 likelier under answer 0: when ``a < b`` the reports are relabelled, which changes nothing
  but their order).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from deniable.client.multi import bit_epsilon, direct_multi, multi_mechanism
from deniable.errors import FieldError

from .intervals import check_method
from .joint import crosstabs
from .marginal import estimate
from .numeric import MeanResult, moments_mean
from .result import CrosstabResult, OptionEstimates, frozen, json_number
from .scores import ScoreModel, moments
from .validate import check_confidence


@dataclass(frozen=True, eq=False)
class MultiResult(OptionEstimates):
    """Per-option prevalence, the mean number ticked and every pair, for one question.

    The per-option fields are :class:`~deniable.estimators.result.OptionEstimates`' (``epsilon``
    is the whole report's, realized; ``noisy_counts`` the reported ticks per option).
    """

    ticked: MeanResult  # the mean number of options ticked
    pairs: dict  # (j, l) → CrosstabResult, j < l, option 0 of each side = "ticked"
    pair_counts: np.ndarray  # reports ticking both j and l (j < l)
    note: str = ""

    def to_dict(self, labels=None) -> dict:
        """The estimates JSON of a check-all question (docs/design.md, "Formats"), JSON-ready.

        Keys: ``n``, ``epsilon``, ``declared_epsilon`` and ``bit_epsilon`` (each option's ε/K;
        all three None when asked directly), ``p``, ``q``, ``method``, ``confidence``,
        ``simultaneous``, ``note`` (None when empty), ``options``
        (:meth:`~.result.OptionEstimates.options`), ``ticked`` (:meth:`MeanResult.to_dict`) and
        ``pairs``: per pair j < l its two ``labels``, the reports ticking both (``noisy_count``),
        the share ticking both (the ticked-ticked cell of the pair's :class:`CrosstabResult`) and
        the share of those ticking j who also tick l (``conditional_*``).  ``labels`` name the
        options (default ``"0"``, ``"1"``, …).
        """
        options = self.options(labels)
        labels = [option["label"] for option in options]
        pairs = [{"labels": [labels[j], labels[l]], "noisy_count": int(self.pair_counts[j, l]),
                  **{name: value for name, value in ct.cell(0, 0).items() if name != "conditional_std_error"}}
                 for (j, l), ct in self.pairs.items()]
        return {"n": self.n, "epsilon": json_number(self.epsilon), "declared_epsilon": json_number(self.declared_epsilon),
                "bit_epsilon": json_number(self.epsilon / self.k), "p": self.p, "q": self.q, "method": self.method,
                "confidence": self.confidence, "simultaneous": self.simultaneous, "note": self.note or None,
                "options": options, "ticked": self.ticked.to_dict(), "pairs": pairs}


def ticked_model(k: int, p: float, q: float) -> ScoreModel:
    """Score model of the number ticked: ``Var = Var T + K p(1 − p)/(p − q)²`` (module notes)."""
    return ScoreModel(span=k, c=1.0, h0=k * p * (1 - p) / (p - q) ** 2)


def ticked_scores(k: int, p: float, q: float) -> np.ndarray:
    """The unbiased score ``(W − Kq)/(p − q)`` of each number of reported ticks W = 0..K."""
    return (np.arange(k + 1) - k * q) / (p - q)


def pair_table(n: int, ticks_j: int, ticks_l: int, both: int) -> np.ndarray:
    """The 2 × 2 table of reports for options j (rows) and l (columns); index 0 = ticked."""
    return np.array([[both, ticks_j - both], [ticks_l - both, n - ticks_j - ticks_l + both]], dtype=np.int64)


def pair_tables(n: int, ticks: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """:func:`pair_table` of every pair j < l, in the order of ``np.triu_indices(K, 1)``: (K(K − 1)/2, 2, 2)."""
    j, l = np.triu_indices(ticks.size, 1)
    both, ticks_j, ticks_l = pairs[j, l], ticks[j], ticks[l]
    return np.stack([np.stack([both, ticks_j - both], axis=-1),
                     np.stack([ticks_l - both, n - ticks_j - ticks_l + both], axis=-1)], axis=1).astype(np.int64)


def _pair_results(n, ticks, pairs, flip=False, **options) -> dict:
    """Every pair's :class:`CrosstabResult`, keyed (j, l), from :func:`.joint.crosstabs` (all pairs at
    once: the same numbers as :func:`.joint.crosstab` pair by pair); ``flip`` reverses each table."""
    if n == 0:
        return {}
    tables = pair_tables(n, ticks, pairs)
    results = crosstabs(tables[:, ::-1, ::-1] if flip else tables, **options)
    return dict(zip(zip(*(index.tolist() for index in np.triu_indices(ticks.size, 1))), results))


def _checked_counts(n, ticks, pairs, ticked):
    """``(n, ticks, pairs, ticked)`` as integers, or FieldError when their shapes or sums do not fit."""
    ticks = np.asarray(ticks, dtype=np.int64)
    k = ticks.size
    pairs = np.asarray(pairs, dtype=np.int64)
    ticked = np.asarray(ticked, dtype=np.int64)
    n = int(n)
    if pairs.shape != (k, k) or ticked.shape != (k + 1,):
        raise FieldError(f"pairs must be {k} × {k} and ticked must have {k + 1} entries", "pairs")
    if (ticks < 0).any() or (ticks > n).any() or (pairs < 0).any() or (ticked < 0).any() or ticked.sum() != n:
        raise FieldError("counts must be non-negative, at most n, and the numbers ticked must add up to n", "counts")
    return n, ticks, pairs, ticked


def estimate_multi(n, ticks, pairs, ticked, epsilon, *, confidence=0.95, method="exact",
                   simultaneous=False) -> MultiResult:
    """Estimate a check-all-that-apply question from its sufficient statistics.

    Parameters
    ----------
    n : int
        Reports (respondents who answered).
    ticks : sequence of int, length K
        Reports that tick each option.
    pairs : array_like, shape (K, K)
        ``pairs[j, l]`` (j < l) reports that tick both j and l.
    ticked : sequence of int, length K + 1
        ``ticked[w]`` reports that tick exactly w options (sums to n).
    epsilon : float or None
        The question's declared ε (each bit gets ε/K); None: asked directly.
    confidence, method, simultaneous
        As for :func:`.marginal.estimate`; ``simultaneous`` is Bonferroni over the K options.

    Returns
    -------
    MultiResult

    Examples
    --------
    >>> r = estimate_multi(100, [60, 30], [[0, 20], [0, 0]], [30, 50, 20], epsilon=2.0)
    >>> r.k, r.ticked.method, len(r.pairs)
    (2, 'score', 1)
    """
    confidence = check_confidence(confidence)
    method = check_method(method)
    n, ticks, pairs, ticked = _checked_counts(n, ticks, pairs, ticked)
    k = ticks.size
    mech = direct_multi(k) if epsilon is None else multi_mechanism(k, epsilon)
    per_bit = None if epsilon is None else bit_epsilon(epsilon, k)
    level = 1 - (1 - confidence) / k if simultaneous else confidence
    results = [estimate([n - c, c], per_bit, confidence=level, method=method) for c in ticks.tolist()]
    pick = lambda name: np.array([getattr(r, name)[1] for r in results])  # noqa: E731  option 1 = ticked
    model = ticked_model(k, mech.p, mech.q)
    mom = moments(ticked, ticked_scores(k, mech.p, mech.q))
    est, se, lo, hi, clt = moments_mean(model, mom, confidence)
    mean = MeanResult(n=n, estimate=float(est), std_error=float(se), ci_low=float(lo), ci_high=float(hi),
                      method="score", confidence=confidence, clt_half_width=float(clt))
    pair_results: dict[tuple[int, int], CrosstabResult] = _pair_results(
        n, ticks, pairs, epsilon_row=per_bit, epsilon_col=per_bit, confidence=confidence)
    notes = sorted({r.note for r in results if r.note})
    return MultiResult(
        n=n, k=k, epsilon=mech.epsilon, declared_epsilon=mech.declared_epsilon, p=mech.p, q=mech.q,
        method=method, confidence=confidence, simultaneous=bool(simultaneous), noisy_counts=frozen(ticks, np.int64),
        estimate=frozen(pick("estimate")), consistent=frozen(pick("consistent")), std_error=frozen(pick("std_error")),
        ci_low=frozen(pick("ci_low")), ci_high=frozen(pick("ci_high")), ticked=mean, pairs=pair_results, pair_counts=frozen(pairs, np.int64),
        note="; ".join(notes),
    )


@dataclass(frozen=True, eq=False)
class MultiDesignResult(MultiResult):
    """:class:`MultiResult` of a check-all question with a binary design on each tick: ``p`` and ``q`` are a
    tick's report probabilities (reported ticked when ticked, when not); ``epsilon`` is the whole
    report's realized ε (K times the design's; infinite when it is not ε-LDP)."""

    design: str = ""
    ldp: bool = True

    def to_dict(self, labels=None) -> dict:
        """:meth:`MultiResult.to_dict` with the ``design``'s name and ``ldp``; no declared ε (a design has
        only its realized one), ``bit_epsilon`` is one tick's."""
        data = super().to_dict(labels)
        data.update(declared_epsilon=None, design=self.design, ldp=self.ldp)
        return data


def design_ticked_model(k: int, a: float, b: float) -> ScoreModel:
    """Score model of the number ticked under a binary design on each tick (module notes)."""
    d2 = (a - b) ** 2
    return ScoreModel(span=k, c=1.0, h0=k * b * (1 - b) / d2, h1=(a * (1 - a) - b * (1 - b)) / d2)


def oriented(design):
    """``(design, flipped)``: the binary design with its two reports in the order that makes report 0
    likelier under answer 0 (``flipped`` when they were swapped), as the exact cross-tab needs."""
    from dataclasses import replace

    if design.weights[0][0] > design.weights[0][1]:
        return design, False
    return replace(design, weights=design.weights[::-1], reports=design.reports[::-1]), True


def _tick_notes(rows) -> str:
    """The ticks' design notes (:func:`.designs.design_notes`) once each, the boundary's naming the options
    (1, 2, …) whose consistent share of ticking sits at 0 or 1."""
    from .designs import BOUNDARY

    notes = sorted({part for r in rows for part in r.notes
                    if not part.startswith("the consistent estimate sits on the boundary")})
    edge = [str(j + 1) for j, r in enumerate(rows) if not (BOUNDARY < r.consistent[0] < 1 - BOUNDARY)]
    if edge:
        notes.append(f"the consistent estimate of option{'s' if len(edge) > 1 else ''} {', '.join(edge)} sits on the "
                     "boundary of [0, 1] (its unbiased estimate on or outside the edge); the intervals show what "
                     "the data allow")
    return "; ".join(notes)


def estimate_multi_design(n, ticks, pairs, ticked, design, *, confidence=0.95, method="exact",
                          simultaneous=False) -> MultiDesignResult:
    """Estimate a check-all question whose every tick is randomized by the binary ``design``.

    Parameters are those of :func:`estimate_multi`, with ``design`` (a
    :class:`deniable.client.designs.Design` with 2 answers, 0 = ticked, and 2 reports, 0 = sent as a
    tick) in place of ε.  Per option: :func:`.designs.estimate_design` of its reported ticks (exact
    intervals, Bonferroni over the K options when ``simultaneous``); the number ticked and the pairs as
    the module notes derive.

    Examples
    --------
    >>> from deniable.client.designs import tick_design
    >>> d = tick_design({"name": "forced", "p": 0.6, "forced": [0.25, 0.15]})
    >>> r = estimate_multi_design(100, [55, 30], [[0, 20], [0, 0]], [30, 55, 15], d)
    >>> round(float(r.estimate[0]), 6), r.design, r.ticked.method
    (0.5, 'forced', 'score')
    """
    from .designs import estimate_design

    confidence = check_confidence(confidence)
    method = check_method(method)
    if design.k != 2 or design.k_reports != 2:
        raise FieldError(f"a tick's design must have 2 answers and 2 reports, got {design.k_reports} × {design.k}", "design")
    n, ticks, pairs, ticked = _checked_counts(n, ticks, pairs, ticked)
    k = ticks.size
    m = design.matrix
    a, b = float(m[0, 0]), float(m[0, 1])
    level = 1 - (1 - confidence) / k if simultaneous else confidence
    rows = [estimate_design(np.array([c, n - c]), design, confidence=level, method=method) for c in ticks.tolist()]

    def pick(name, empty):
        return np.array([empty if getattr(r, name) is None else float(getattr(r, name)[0]) for r in rows])

    model = design_ticked_model(k, a, b)
    mom = moments(ticked, (np.arange(k + 1) - k * b) / (a - b))
    est, se, lo, hi, clt = moments_mean(model, mom, confidence)
    mean = MeanResult(n=n, estimate=float(est), std_error=float(se), ci_low=float(lo), ci_high=float(hi),
                      method="score", confidence=confidence, clt_half_width=float(clt))
    both_sides, flipped = oriented(design)
    pair_results: dict[tuple[int, int], CrosstabResult] = _pair_results(
        n, ticks, pairs, flipped, epsilon_row=None, epsilon_col=None, confidence=confidence,
        row_design=both_sides, col_design=both_sides)
    note = "no reports: estimates are undefined (NaN) and intervals are [0, 1]" if n == 0 else _tick_notes(rows)
    return MultiDesignResult(
        n=n, k=k, epsilon=k * design.epsilon, declared_epsilon=k * design.epsilon, p=a, q=b, method=method,
        confidence=confidence, simultaneous=bool(simultaneous), noisy_counts=frozen(ticks, np.int64),
        estimate=frozen(pick("estimate", np.nan)), consistent=frozen(pick("consistent", np.nan)),
        std_error=frozen(pick("std_error", np.nan)), ci_low=frozen(pick("ci_low", 0.0)),
        ci_high=frozen(pick("ci_high", 1.0)), ticked=mean, pairs=pair_results, pair_counts=frozen(pairs, np.int64),
        note=note, design=design.name, ldp=design.ldp,
    )
