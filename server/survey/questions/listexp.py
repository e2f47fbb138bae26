"""The list experiment: how many of J control items (and, for half the respondents, one sensitive item) apply.

Definition: ``"type": "list"``, ``"items"`` (1–10 control items), ``"sensitive"``; without ε it
is a plain list experiment, "not protected by ε".  Report: ``{"arm": 1, "count": 3}`` on the
wire, ``treatment:3`` / ``control:2`` in a text cell, ``arm · (J + 2) + count`` as code.
Sufficient statistics: counts per (arm, count).  Estimate: the difference in means (Welch t),
headline inside [0, 1] and its interval.  Exports: two columns, ``ID_arm`` (0 control,
1 treatment, labelled) and ``ID_count`` (a number).
"""

from __future__ import annotations

import re

import numpy as np

from deniable.client.listexp import ARMS, MAX_ITEMS, check_list_report, list_mechanism
from deniable.client.mechanism import TWO_32, MechanismError

from ..definition import parse_epsilon, MAX_LABEL, DefinitionError, labels_field, text_field
from .base import QuestionType, fmt, headline, json_number, mean_json, pct
from .registry import register


class ListExperiment(QuestionType):
    name = "list"
    label = "list experiment"
    keys = frozenset({"type", "items", "sensitive"})
    needed = ("items", "sensitive")
    crosstab = ("a cross-tab needs two single-choice questions; a list experiment's answer is a count of "
                "items, not a category")

    def parse(self, data, where, epsilon):
        labels = labels_field(data["items"], (*where, "items"), 1, MAX_ITEMS, "control items")
        sensitive = text_field(data["sensitive"], (*where, "sensitive"), max_len=MAX_LABEL)
        if sensitive in labels:
            raise DefinitionError((*where, "sensitive"), "must differ from every control item")
        if epsilon is not None:
            epsilon = parse_epsilon(epsilon, len(labels) + 2, (*where, "epsilon"))
        return {"options": labels, "sensitive": sensitive, "epsilon": epsilon}

    def to_dict(self, q):
        data = {"type": self.name, "items": list(q.options), "sensitive": q.sensitive}
        if q.protected:
            data["epsilon"] = q.epsilon
        return data

    def k(self, q):
        return len(q.options) + 2

    def mechanism(self, q):
        return list_mechanism(len(q.options), q.epsilon)

    def spec(self, q):
        return {"sensitive": q.sensitive}

    def from_spec(self, spec):
        return {"sensitive": spec["sensitive"]}

    structured_report = True

    def stored_design(self, q):
        return ["list", len(q.options), q.mechanism.threshold if q.protected else None]

    def design(self, q):
        return (self.name, None, None)

    def wording(self, q):
        return {"text": q.text, "options": list(q.options), "sensitive": q.sensitive}

    def reworded(self, q, texts):
        return {"text": texts["text"], "options": tuple(texts["options"]), "sensitive": texts["sensitive"]}

    # ------------------------------------------------------------ reports

    def n_cells(self, q):
        return 2 * q.k

    def check_report(self, q, value):
        arm, count = check_list_report(value, q.mechanism)
        return arm * q.k + count

    def invalid_codes(self, q, column):
        column = np.asarray(column)
        if not q.protected:
            return column == q.k - 1  # arm 0, count J + 1
        return np.zeros(column.shape, dtype=bool)

    def report_of(self, q, code):
        arm, count = divmod(int(code), q.k)
        return {"arm": arm, "count": count}

    def parse_form(self, q, text):
        match = re.fullmatch(r"([01]):([0-9]{1,3})", text)
        if not match:
            raise MechanismError(f"must be ARM:COUNT (arm 0 or 1), got {text[:30]!r}")
        return {"arm": int(match.group(1)), "count": int(match.group(2))}

    def text_of(self, q, code):
        arm, count = divmod(int(code), q.k)
        return f"{ARMS[arm]}:{count}"

    def code_of(self, q, text):
        arm_text, _, count_text = text.partition(":")
        if arm_text not in ARMS or not count_text.isdigit() or len(count_text) > 3:
            return None
        try:
            return self.check_report(q, {"arm": ARMS.index(arm_text), "count": int(count_text)})
        except MechanismError:
            return None

    def expected(self, q):
        return f"control:COUNT or treatment:COUNT (COUNT 0..{q.k - 1})"

    def stats(self, q, codes, counts):
        dense = self.dense(q, codes, counts)
        return {"control": dense[:q.k], "treatment": dense[q.k:]}

    def cell_rows(self, q, stats):
        dense = np.concatenate([stats["control"], stats["treatment"]])
        return [("cell", i, int(c)) for i, c in enumerate(dense) if c]

    def n_of_stats(self, q, stats):
        return int(stats["control"].sum() + stats["treatment"].sum())

    # ------------------------------------------------------------ estimates

    def estimate(self, q, stats, *, method, confidence, simultaneous, monitoring=False, tuned_for=10_000):
        from deniable.estimators.listexp import estimate_list

        return estimate_list(stats["control"], stats["treatment"], len(q.options), q.epsilon, confidence=confidence)

    def n_of(self, result):
        return result.n_control + result.n_treatment

    def record(self, q, r):
        data = {"id": q.id, "text": q.text, "type": self.name, "items": list(q.options), "sensitive": q.sensitive,
                "protected": q.protected, "epsilon": json_number(r.epsilon), "declared_epsilon": q.epsilon,
                "method": "difference in means", "confidence": r.confidence,
                "n": r.n_control + r.n_treatment, "n_control": r.n_control, "n_treatment": r.n_treatment,
                "estimate": json_number(r.estimate), "std_error": json_number(r.std_error),
                "ci_low": json_number(r.ci_low), "ci_high": json_number(r.ci_high), "df": json_number(r.df),
                "note": r.note or None, "control": mean_json(r.control), "treatment": mean_json(r.treatment),
                "noisy_control": [int(c) for c in r.noisy_control],
                "noisy_treatment": [int(c) for c in r.noisy_treatment]}
        data["headline"] = headline(data)
        return data

    def csv_rows(self, q, result):
        data = self.record(q, result)
        yield {"option": "prevalence", "label": q.sensitive,
               **{k: data[k] for k in ("estimate", "std_error", "ci_low", "ci_high", "method")}}
        yield {"option": "control", "label": "control mean count", **data["control"]}
        yield {"option": "treatment", "label": "treatment mean count", **data["treatment"]}

    def table(self, q, result, grid):
        data = self.record(q, result)
        level = f"{100 * data['confidence']:g}%"
        eps = (f"ε = {data['epsilon']:.4f} (declared {q.epsilon:g})" if q.protected
               else "not protected by ε (plain list experiment)")
        return [f"  n = {data['n']:,} ({data['n_control']:,} control, {data['n_treatment']:,} treatment) · {eps}",
                f"  {q.sensitive!r}: {pct(data['estimate'])} ± {pct(data['std_error'])}, {level} interval "
                f"[{pct(data['ci_low'])}, {pct(data['ci_high'])}] (difference in means, Welch t)",
                f"  mean count: control {fmt(data['control']['estimate'], 3)}, "
                f"treatment {fmt(data['treatment']['estimate'], 3)}"]

    def headlines(self, q, record):
        return [(record["headline"], record["ci_low"], record["ci_high"])]

    def chart(self, q, record):
        return {"labels": [q.sensitive], "estimate": [record["headline"]], "ci_low": [record["ci_low"]],
                "ci_high": [record["ci_high"]]}

    def examples(self):
        items = ["I own a bicycle", "I have been abroad this year", "I read a book last month"]
        truth = {"control": [0.1, 0.3, 0.4, 0.2], "sensitive": 0.15}
        return [({"text": "How many of the following apply to you?", "type": self.name, "items": items,
                  "sensitive": "I have taken something from a shop without paying", "epsilon": 1.0}, truth),
                ({"text": "How many of these apply?", "type": self.name, "items": items,
                  "sensitive": "I have driven after drinking"}, truth)]

    # ------------------------------------------------------------ exports

    def stat_columns(self, q, codes):
        answered = codes >= 0
        arm = np.where(answered, codes // q.k, np.nan).astype(float)
        count = np.where(answered, codes % q.k, np.nan).astype(float)
        return [("_arm", arm, {0: "control", 1: "treatment"}, f"{q.text}: arm"),
                ("_count", count, None, f"{q.text}: number of items")]

    # ------------------------------------------------------------ the survey page

    def page_data(self, q):
        return {"attrs": {"data-type": self.name, "data-items": len(q.options),
                          "data-threshold": q.mechanism.threshold if q.protected else TWO_32}}

    # ------------------------------------------------------------ simulation

    def truth(self, q, value, where):
        from ..simulate import TruthError, probabilities, sums_to_one

        if not isinstance(value, dict) or set(value) != {"control", "sensitive"}:
            raise TruthError(f'{where}: must be {{"control": [P(0), ..., P({len(q.options)})], '
                             f'"sensitive": share}}')
        control = probabilities(value["control"], where, len(q.options) + 1,
                                f"the probability that 0..{len(q.options)} control items apply")
        sums_to_one(value["control"], where)
        share = value["sensitive"]
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 <= share <= 1:
            raise TruthError(f"{where}: sensitive must be a share between 0 and 1")
        return {"control": control, "sensitive": float(share)}

    def simulate(self, q, truth, n, rng):
        from deniable.client.listexp import assign_arms, randomize_counts

        arms = assign_arms(n, rng)
        control = rng.choice(len(q.options) + 1, size=n, p=truth["control"] / truth["control"].sum())
        true = control + arms * (rng.random(n) < truth["sensitive"])
        return arms * q.k + randomize_counts(true, q.mechanism, rng)


LIST = register(ListExperiment())
