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

from ..definition import parse_epsilon, MAX_OPTIONS, Question, labels_field
from .base import QuestionType, headline, pct
from .registry import register


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


CHOICE = register(Choice())
