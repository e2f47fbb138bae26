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
from .base import AuditSampler, Capabilities, QuestionType, fmt, headline, pct, placed_after
from .audit import Audit
from .builder import Builder
from .exports import Files
from .monitoring import Monitoring
from .presentation import Presentation
from .statistics import Statistics
from .wire import Wire
from .registry import register


class ListExperiment(Wire, Files, Statistics, Monitoring, Presentation, Builder, Audit, QuestionType):
    name = "list"
    label = "list experiment"
    keys = frozenset({"type", "items", "sensitive"})
    needed = ("items", "sensitive")
    capabilities = Capabilities(crosstab=("a cross-tab needs two single-choice questions; a list experiment's answer "
                                          "is a count of items, not a category"))

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
        data = {"id": q.id, "text": q.text, "type": self.name,
                **placed_after(r.to_dict(), "items", sensitive=q.sensitive, protected=q.protected)}
        data["items"] = list(q.options)  # the items' labels where the result has their number
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

    # ------------------------------------------------------------ analysis (results, cross-tab, subgroups pages)

    def shown_rows(self, q, result):
        rows = super().shown_rows(q, result)
        rows[0]["headline"] = self.record(q, result)["headline"]  # the prevalence: a share, in [0, 1]
        return rows

    def unprotected(self, q):
        return "not protected by ε (a plain list experiment)"

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

    # ------------------------------------------------------------ monitoring, releases and the public page

    def arm_scores(self, q):
        """A code is ``arm · k + count``; a count's unbiased score undoes k-ary randomized response of
        the count (:func:`deniable.estimators.scores.rr_score`; the count itself when plain)."""
        from deniable.estimators.scores import rr_score

        rr = q.mechanism.rr
        codes = np.arange(2 * q.k)
        return codes // q.k, rr_score(q.k, rr.p, rr.q)[codes % q.k]

    def group_columns(self, q):
        """One column per cell (arm, reported count): a report counts in its own."""
        labels = [f"{arm}: {count}" for arm in ARMS for count in range(q.k)]
        return labels, np.eye(2 * q.k, dtype=np.int64)

    def group_estimates(self, q, counts, noisy, beta, confidence):
        """The sensitive item's prevalence within the group: the treatment arm's mean count minus
        the control arm's.  Each arm's count is k-ary randomized response (p = 1 when plain), so
        each arm's shares get simultaneous intervals at ``1 − (1 − confidence)/2`` with half the
        noise allowance (:func:`deniable.estimators.release.simultaneous_group_intervals`), their
        mean its smallest and largest value (:func:`deniable.estimators.release.mean_range`), and the
        difference the interval ``[low_T − high_C, high_T − low_C]``: all four ends hold together
        with probability ≥ ``confidence`` (Bonferroni), so it is conservative."""
        from deniable.estimators.release import group_shares, mean_range

        rr = q.mechanism.rr
        each = 1 - (1 - confidence) / 2
        values = np.arange(q.k, dtype=float)
        means, ranges = [], []
        for arm in range(2):
            cells = slice(arm * q.k, (arm + 1) * q.k)
            estimate, low, high = group_shares(counts[cells], noisy[cells], rr.p, rr.q, beta, each,
                                               together=True, delta=0.005)
            means.append(None if estimate is None else float(estimate @ values))
            ranges.append(mean_range(values, low, high))
        (c_low, c_high), (t_low, t_high) = ranges
        estimate = None if None in means else means[1] - means[0]
        return [{"label": q.sensitive, "estimate": estimate, "ci_low": t_low - c_high, "ci_high": t_high - c_low,
                 "lower": 0.0, "upper": 1.0}]

    def release_labels(self, q):
        from .base import NotAvailable

        raise NotAvailable("its answers are counts of items in two arms, meaningful only as the difference "
                           "between the arms: a released histogram, most common answer or grouping is not offered")

    def summary(self, q, record):
        """The prevalence of the sensitive item (in [0, 1])."""
        if not record:
            return []
        return [{"label": q.sensitive, "headline": record["headline"], "ci_low": record["ci_low"],
                 "ci_high": record["ci_high"], "lower": 0.0, "upper": 1.0}]

    # ------------------------------------------------------------ the survey page

    def page_data(self, q):
        return {"attrs": {"data-type": self.name, "data-items": len(q.options),
                          "data-threshold": q.mechanism.threshold if q.protected else TWO_32}}

    card = "cards/list.html"
    script = "types/list.js"

    def coin(self, q, *, gettext, locale):
        from ..explain import percent

        _ = gettext
        mech = q.mechanism
        return _("You only say how many of the items apply to you. Your device sends that count %(kept)s of the "
                 "time and otherwise one of the other %(others)s counts (%(each)s each)."
                 ) % {"kept": percent(mech.rr.p, locale, gettext=_), "others": mech.k - 1,
                      "each": percent(mech.rr.q, locale, up=False, gettext=_)}

    def plain_explanation(self, q, *, gettext):
        """A plain list experiment hides which items apply, not how many: it is not protected by ε, and a
        count of none or all of the items gives every item away (the ceiling and floor effects of
        Blair & Imai 2012, §2.3)."""
        _ = gettext
        plain = _("Not protected by ε: only how many of the items apply to you is sent, exactly as you give it, "
                  "and nobody learns which ones. But if you count none or all of them, your answer to every "
                  "item, the sensitive one included, is known.")
        return {"epsilon": None, "coin": plain, "posterior": "", "odds": "",
                "summary": "Not protected by ε (a plain list experiment).", "protected": False, "warning": None,
                "note": _("Not protected by ε."),
                "sent": _("not protected by ε — how many apply, sent as you answered")}

    def api_design(self, q):
        """``type``, ``items``, ``sensitive`` and, when protected, the count's ``epsilon``, ``k``, ``threshold``,
        ``p``, ``q``, ``realized_epsilon`` (reports ``{"arm": 0|1, "count": c}``)."""
        item = {"type": self.name, "items": list(q.options), "sensitive": q.sensitive}
        if q.protected:
            mech = q.mechanism
            item.update(epsilon=q.epsilon, k=mech.k, threshold=mech.threshold, p=mech.rr.p, q=mech.rr.q,
                        realized_epsilon=mech.epsilon)
        return item

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

    # ------------------------------------------------------------ builder and wording

    def wording_labels(self, q):
        return {"text": ("question text", "text"), "options": ("item", "items"),
                "sensitive": ("sensitive item", "sensitive")}

    slot_fields = ("items", "sensitive")
    direct_words = "plain list experiment (not protected by ε)"
    direct_choice = "plain (not protected by ε)"
    builder_hint = ("Protected: the count is randomized at ε (randomized list experiment). Plain: the count is sent "
                    "as given and is <strong>not protected by ε</strong> (a respondent who counts none or all of the "
                    "items reveals the sensitive one).")

    def builder_dict(self, raw, where, protected):
        from .base import lines

        return {"type": self.name, "items": lines(raw.get("items")), "sensitive": raw.get("sensitive") or ""}

    def builder_entry(self, q):
        return {"items": "\n".join(q.options), "sensitive": q.sensitive}

    # ------------------------------------------------------------ planning

    plan_template = "dashboard/plan/list.html"
    plan_needs = f"items:1:{MAX_ITEMS}"
    plan_missing = f"Enter the control items (1 to {MAX_ITEMS}) to see how precise the estimate will be."
    plan_option = "--list"

    def plan(self, q, target_n, margin, confidence=0.95):
        from ..type_planning import list_plan

        return {**list_plan(q, target_n, margin, confidence), "type": self.name, "template": self.plan_template}

    def plan_query(self, args, number):
        return {"type": self.name, "items": [str(j) for j in range(number("items", int, 1, MAX_ITEMS))],
                "sensitive": "sensitive"}

    def plan_cli(self, value, step, margin, epsilons, confidence):
        """``deniable plan --list J``: a :class:`..type_planning.ListPlan`."""
        from .. import type_planning as tp

        rows = tp.list_plan_rows(value, margin, epsilons, confidence)
        return tp.ListPlan(type=self.name, items=value, margin=margin, confidence=confidence, rows=rows)

    # ------------------------------------------------------------ audit and the codebook

    def audit_samplers(self):
        return (LIST_AUDIT,)

    def audit_sampler(self, q):
        return LIST_AUDIT  # a plain one too: the audit shows that it is not ε-LDP


class ListAudit(AuditSampler):
    """The count randomized under its arm: holds nothing or everything as inputs, every
    (arm, reported count) as an event; a plain list experiment is audited to show it is not ε-LDP."""

    name = "list"
    not_protected = "a plain list experiment"
    js = """async ([holds, items, threshold, n]) => {
  const rr = await import('/static/rr.js');
  const counts = new Array(2 * (items + 2)).fill(0);
  for (let i = 0; i < n; i++) {
    const arm = rr.assignArm();
    const count = holds ? items + arm : 0;
    counts[arm * (items + 2) + rr.randomizeCount(count, items, arm, threshold)] += 1;
  }
  return counts;
}"""

    def label(self, mech):
        return f"J={mech.items}" + ("" if mech.protected else " plain")

    def inputs(self, mech):
        return [0, 1]

    def js_args(self, mech, value):
        return [value, mech.items, mech.threshold]

    def python_row(self, mech, value, samples, rng):
        from deniable.client.listexp import assign_arms, randomize_counts
        from deniable.estimators.audit import list_cells

        arms = assign_arms(samples, rng)
        return list_cells(arms, randomize_counts(value * (mech.items + arms), mech, rng), mech.items)

    def protected(self, mech):
        return mech.protected

    def defaults(self, ks, epsilons):
        """J = 3 control items, and the plain list experiment once."""
        return [*(list_mechanism(3, eps) for eps in epsilons), list_mechanism(3, None)]


LIST_AUDIT = ListAudit()

LIST = register(ListExperiment())
