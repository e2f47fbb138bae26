"""Single choice: one answer among 2–64 labelled options (k-ary randomized response).

Definition: ``"options"`` (2–64 labels), optional ``"epsilon"``.  Report: the option index on
the wire, the option's label in a text cell, the option index as code.  Sufficient statistics:
the option counts (an array).  Estimates: :func:`deniable.estimators.estimate` (or
:func:`~deniable.estimators.monitor` for confidence sequences); the headline of each option is
the **consistent** estimate (the constrained maximum-likelihood estimate on the simplex,
:mod:`deniable.estimators.marginal`) whenever the unbiased one leaves [0, 1] — the unbiased
estimate stays in the record's ``estimate``.
"""

from __future__ import annotations

import numpy as np

from deniable.client.mechanism import check_option, resolve

from ..definition import parse_epsilon, MAX_OPTIONS, labels_field
from .base import AuditSampler, QuestionType, headline, pct
from .registry import DEFAULT, register


class Choice(QuestionType):
    name = "choice"
    label = "single choice"
    keys = frozenset({"type", "options"})
    needed = ("options",)
    crosstab = None
    regression = None
    categorical = True
    code_dtype = np.int16

    def parse(self, data, where, epsilon):
        labels = labels_field(data["options"], (*where, "options"), 2, MAX_OPTIONS, "options")
        if epsilon is not None:
            epsilon = parse_epsilon(epsilon, len(labels), (*where, "epsilon"))
        return {"options": labels, "epsilon": epsilon}

    def to_dict(self, q):
        data = {"options": list(q.options)}
        if q.protected:
            data["epsilon"] = q.epsilon
        return data

    def mechanism(self, q):
        return resolve(q.k, q.epsilon)

    def stored_design(self, q):
        return [q.k, q.mechanism.threshold if q.protected else None]

    def design(self, q):
        return ()  # a choice's fingerprint is the one from before there were types

    # ------------------------------------------------------------ reports

    def check_report(self, q, value):
        return check_option(value, q.k)

    def text_of(self, q, code):
        return q.options[int(code)]

    def code_of(self, q, text):
        try:
            return q.options.index(text)
        except ValueError:
            return None

    def expected(self, q):
        return "one of: " + ", ".join(q.options)

    def stats(self, q, codes, counts):
        return self.dense(q, codes, counts)

    def n_of_stats(self, q, stats):
        return int(np.sum(stats))

    # ------------------------------------------------------------ estimates

    def estimate(self, q, stats, *, method, confidence, simultaneous, monitoring=False, tuned_for=10_000):
        from deniable import estimators

        if monitoring:
            return estimators.monitor(np.asarray(stats), q.epsilon, confidence=confidence,
                                      simultaneous=simultaneous, tuned_for=tuned_for)
        return estimators.estimate(np.asarray(stats), q.epsilon, confidence=confidence, method=method,
                                   simultaneous=simultaneous)

    def record(self, q, result):
        data = {"id": q.id, "text": q.text, **result.as_dict(q.options), "note": result.note or None}
        if not q.protected:
            data.update(epsilon=None, declared_epsilon=None)
        return data

    def csv_rows(self, q, result):
        data = self.record(q, result)
        base = {k: v for k, v in data.items() if k not in ("options", "id", "text")}
        for i, option in enumerate(data["options"]):
            yield {"question": q.id, "option": i, **base, **option}

    def table(self, q, result, grid):
        if q.protected:
            design = (f"n = {int(result.n):,} · ε = {result.epsilon:.4f} (declared {q.epsilon:g}) · "
                      f"p = {result.p:.4f}, q = {result.q:.4f}")
        else:
            design = f"n = {int(result.n):,} · asked directly (not randomized)"
        which = "simultaneous (Bonferroni) " if result.simultaneous else ""
        rows = [[label, f"{int(result.noisy_counts[i]):,}", pct(result.estimate[i]), pct(result.consistent[i]),
                 pct(result.std_error[i]), f"[{pct(result.ci_low[i])}, {pct(result.ci_high[i])}]"]
                for i, label in enumerate(q.options)]
        return [f"  {design}", f"  {100 * result.confidence:g}% {which}intervals, method: {result.method}",
                *grid(["option", "reported", "estimate", "consistent", "std.err", "interval"], rows)]

    def headlines(self, q, record):
        return [(headline(o), o["ci_low"], o["ci_high"]) for o in record["options"]]

    def chart(self, q, record):
        rows = record["options"]
        return {"labels": list(q.options), "estimate": [headline(r) for r in rows],
                "ci_low": [r["ci_low"] for r in rows], "ci_high": [r["ci_high"] for r in rows]}

    def examples(self):
        return [({"text": "Have you ever cheated in an exam?", "options": ["Yes", "No"], "epsilon": 1.0}, [0.3, 0.7]),
                ({"text": "Which drug have you used most?", "options": ["None", "Cannabis", "Other"], "epsilon": 2.0},
                 [0.6, 0.3, 0.1]),
                ({"text": "Which year of study are you in?", "options": ["First", "Second", "Third"],
                  "required": False}, [0.4, 0.35, 0.25])]

    # ------------------------------------------------------------ exports

    def stat_columns(self, q, codes):
        values = np.where(codes >= 0, codes + 1, np.nan).astype(float)
        return [("", values, {i + 1: label for i, label in enumerate(q.options)}, q.text)]

    def parquet_array(self, q, codes):
        """The labels, dictionary-encoded over every option (unused ones too), null = not answered."""
        import pyarrow as pa

        indices = np.asarray(codes).astype(np.int16)
        return pa.DictionaryArray.from_arrays(pa.array(indices, mask=indices < 0),
                                              pa.array(list(q.options), pa.string()))

    # ------------------------------------------------------------ monitoring, releases and the public page

    anytime = True

    def release_labels(self, q):
        return list(q.options)

    def group_columns(self, q):
        """One column per option: a report counts in its option's."""
        return list(q.options), np.eye(q.k, dtype=np.int64)

    def group_estimates(self, q, counts, noisy, beta, confidence):
        """Each option's share: k-ary randomized response inverted, each interval alone
        (:func:`deniable.estimators.release.group_shares`)."""
        from deniable.estimators.release import group_shares

        mech = q.mechanism
        estimate, low, high = group_shares(counts, noisy, mech.p, mech.q, beta, confidence)
        return [{"label": option, "estimate": None if estimate is None else float(estimate[j]),
                 "ci_low": float(low[j]), "ci_high": float(high[j]), "lower": 0.0, "upper": 1.0}
                for j, option in enumerate(q.options)]

    def monitor_series(self, q, days, cumulative, *, confidence, tuned_for):
        """Confidence sequences per option (:func:`deniable.estimators.monitor_path`: a beta-binomial
        mixture martingale, time-uniform, Howard et al. 2021), beside the fixed-n exact interval."""
        from deniable import estimators

        cumulative = np.vstack([np.asarray(c, dtype=np.int64) for c in cumulative])
        table = np.diff(np.vstack([np.zeros((1, q.k), dtype=np.int64), cumulative]), axis=0)
        path = estimators.monitor_path(table, q.epsilon, labels=days, confidence=confidence, tuned_for=tuned_for)
        return {"anytime": True, "labels": list(path.labels), "n": [int(n) for n in path.n],
                "epsilon": path.epsilon if q.protected else None,
                "series": [{"label": label, "estimate": path.estimate[:, i].tolist(),
                            "ci_low": path.ci_low[:, i].tolist(), "ci_high": path.ci_high[:, i].tolist(),
                            "fixed_low": path.fixed_low[:, i].tolist(), "fixed_high": path.fixed_high[:, i].tolist(),
                            "lower": 0.0, "upper": 1.0} for i, label in enumerate(q.options)]}

    def summary(self, q, record):
        """Each option's share (the headline inside its interval) with its randomized reports."""
        rows = super().summary(q, record)
        for row, option in zip(rows, record["options"]):
            row["noisy_count"] = option["noisy_count"]
        return rows

    def stats_to_json(self, q, stats):
        return [int(c) for c in stats]  # the option counts, as releases have always stored them

    def stats_from_json(self, q, data):
        return np.asarray(data, dtype=np.int64)

    # ------------------------------------------------------------ the survey page
    # (a choice is drawn as radio buttons by survey.html and survey.js: no card, no script)

    def explanation(self, q, *, gettext, locale):
        """k-ary randomized response in words (:func:`..explain.explain`); nothing more for a direct question."""
        from ..explain import explain

        return explain(q.epsilon, q.k, gettext=gettext, locale=locale) if q.protected else None

    def api_design(self, q):
        """``options``, ``k`` and, when protected, ``epsilon``, ``threshold``, ``p``, ``q`` and ``realized_epsilon``
        (no ``type`` for a plain choice: the API's questions had none before there were types; a type
        built on the choice, such as a rating scale, adds its name)."""
        item = {"options": list(q.options), "k": q.k}
        if self.name != DEFAULT:
            item["type"] = self.name
        if q.protected:
            mech = q.mechanism
            item.update(epsilon=q.epsilon, threshold=mech.threshold, p=mech.p, q=mech.q, realized_epsilon=mech.epsilon)
        return item

    # ------------------------------------------------------------ simulation

    def truth(self, q, value, where):
        from ..simulate import TruthError, probabilities, sums_to_one

        if (not isinstance(value, list)
                or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)):
            raise TruthError(f"{where}: must be a list of {q.k} numbers (one per option)")
        if len(value) != q.k:
            raise TruthError(f"{where}: has {len(value)} probabilities, "
                             f"but the question has {q.k} options ({', '.join(q.options)})")
        probs = probabilities(value, where, q.k, "one per option")
        sums_to_one(value, where)
        return probs

    def simulate(self, q, truth, n, rng):
        from deniable.client import randomize

        true = rng.choice(q.k, size=n, p=truth / truth.sum())
        reported = randomize(true, q.k, q.epsilon, rng=rng) if q.protected else true
        return reported.astype(np.int16)

    # ------------------------------------------------------------ builder and wording (the defaults: options)

    # ------------------------------------------------------------ planning

    plan_region = True  # the panel shows the ε-DP region of a test of one answer
    plan_needs = f"k:2:{MAX_OPTIONS}"
    plan_missing = (f"Enter at least two options (at most {MAX_OPTIONS}) to see how private and how precise this "
                    "question will be.")

    def plan(self, q, target_n, margin, confidence=0.95):
        """Exact: :func:`..planning.question_plan` (Feldman–Cousins intervals summed over the binomial)."""
        from ..planning import question_plan

        return question_plan(q.epsilon, q.k, target_n, margin, confidence)

    def plan_query(self, args, number):
        return {"options": [str(j) for j in range(number("k", int, 2, MAX_OPTIONS))]}

    # ------------------------------------------------------------ audit and the codebook

    def audit_samplers(self):
        return (CHOICE_AUDIT,)

    def design_fields(self, q):
        # a choice's design line is the one from before there were types (like its fingerprint,
        # :meth:`design`); a type built on it that adds to its fingerprint states its name
        return {"type": self.name} if self.design(q) else {}

    # ------------------------------------------------------------ regression

    covariate = None


class ChoiceAudit(AuditSampler):
    """k-ary randomized response: every option is a true input and every report an event."""

    name = "choice"
    js = """async ([value, k, threshold, n]) => {
  const rr = await import('/static/rr.js');
  const counts = new Array(k).fill(0);
  for (let i = 0; i < n; i++) counts[rr.randomize(value, k, threshold)] += 1;
  return counts;
}"""

    def label(self, mech):
        return f"k={mech.k}"

    def inputs(self, mech):
        return list(range(mech.k))

    def js_args(self, mech, value):
        return [value, mech.k, mech.threshold]

    def python_row(self, mech, value, samples, rng):
        from deniable.client import randomize

        return np.bincount(randomize(np.full(samples, value), mech.k, mech.declared_epsilon, rng), minlength=mech.k)

    def k(self, mech):
        return mech.k

    def defaults(self, ks, epsilons):
        from deniable.client.mechanism import mechanism

        return [mechanism(k, eps) for eps in epsilons for k in ks]


CHOICE_AUDIT = ChoiceAudit()

CHOICE = register(Choice())
