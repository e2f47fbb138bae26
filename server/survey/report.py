"""The methods report: one self-contained HTML file about a survey, for an ethics application or a paper.

What this module holds is the report's words and its accounting, pure functions of the survey and of
the results page's own items (:func:`deniable.server.web.dashboard.results.question_results`, which
the caller computes: no estimator is run here):

- :data:`STORED` and :data:`NOT_STORED`: what the server keeps and what it does not, as plain
  sentences — the one place in code that says it (the facts are docs/security.md's);
- :func:`protection`: how one question is protected — the design in words (:mod:`.explain`), its
  matrix (:func:`.codebook.question_randomization`), its ε — and its estimator and interval method
  with their references;
- :func:`methods_paragraph`: a paragraph for a paper's methods section, with citations;
- :func:`report_context`: everything ``templates/report.html`` shows.

``deniable report`` and ``GET /dashboard/SLUG/report`` render it (:mod:`deniable.server.web.dashboard.report`).
"""

from __future__ import annotations

from deniable.client.mechanism import Mechanism

from .codebook import question_randomization
from .explain import explain_question, explain_total

# What the server keeps and what it does not (docs/security.md, "Security and privacy model"): the report's
# "What the server stores" section says these sentences and nothing else.
STORED = (
    "For each protected question, the randomized report the respondent's browser sent: the true answer with "
    "a known probability and another answer otherwise. The true answer exists only in the respondent's browser.",
    "For each question asked directly, the answer as given.",
    "The day each response came, and no finer time; responses are kept under random keys, in an order that "
    "is not the order in which they were sent.",
    "For a survey by invitation, the hash (SHA-256) of each invitation token not used yet.",
    "The researchers' accounts: their password hashes, and the hashes of the tokens of their live dashboard "
    "sessions.",
)
NOT_STORED = (
    "No true answer to a protected question, in any file, at any moment.",
    "No network address of a respondent, and no hash of one, in the database or the logs.",
    "No time of day of a response: only its day.",
    "Nothing that links a response to a person, or to the invitation token it used.",
    "No log line caused by a respondent's request: there is no access log, and problems are counted and "
    "written at most once a day.",
    "No rate-limit counters on disk.",
)
STORAGE_CAVEAT = ("Not covered: traces the operating system itself may keep (swap, file-system journals, the free "
                  "blocks of an earlier copy of a file); an encrypted disk is advised.")

REFERENCES = {
    "warner": "S. L. Warner, Randomized response: a survey technique for eliminating evasive answer bias, "
              "Journal of the American Statistical Association 60 (1965) 63–69.",
    "kairouz-extremal": "P. Kairouz, S. Oh, P. Viswanath, Extremal mechanisms for local differential privacy, "
                        "Journal of Machine Learning Research 17 (2016).",
    "kairouz-distribution": "P. Kairouz, K. Bonawitz, D. Ramage, Discrete distribution estimation under local "
                            "privacy, ICML 2016.",
    "chaudhuri": "A. Chaudhuri, R. Mukerjee, Randomized Response: Theory and Techniques, Marcel Dekker (1988).",
    "dwork": "C. Dwork, A. Roth, The algorithmic foundations of differential privacy, Foundations and Trends in "
             "Theoretical Computer Science 9 (2014).",
    "feldman": "G. J. Feldman, R. D. Cousins, Unified approach to the classical statistical analysis of small "
               "signals, Physical Review D 57 (1998) 3873–3889.",
    "wilson": "E. B. Wilson, Probable inference, the law of succession, and statistical inference, Journal of the "
              "American Statistical Association 22 (1927) 209–212.",
    "clopper": "C. J. Clopper, E. S. Pearson, The use of confidence or fiducial limits illustrated in the case of "
               "the binomial, Biometrika 26 (1934) 404–413.",
    "brown": "L. D. Brown, T. T. Cai, A. DasGupta, Interval estimation for a binomial proportion, Statistical "
             "Science 16 (2001) 101–133.",
}
CITE = {"warner": "Warner 1965", "kairouz-extremal": "Kairouz, Oh & Viswanath 2016",
        "kairouz-distribution": "Kairouz, Bonawitz & Ramage 2016", "chaudhuri": "Chaudhuri & Mukerjee 1988",
        "dwork": "Dwork & Roth 2014", "feldman": "Feldman & Cousins 1998", "wilson": "Wilson 1927",
        "clopper": "Clopper & Pearson 1934", "brown": "Brown, Cai & DasGupta 2001"}

# each interval method (deniable.estimators.METHODS): its name for a question's section, what the methods
# paragraph says of it, and its references
INTERVALS = {
    "exact": ("exact Feldman–Cousins",
              "exact Feldman–Cousins intervals (a likelihood-ratio-ordered Neyman belt on the binomial count of "
              "reports, mapped to the true share), which cover the true share at least as often as the confidence "
              "level says, at every n", ("feldman",)),
    "likelihood": ("profile likelihood ratio", "profile likelihood-ratio intervals", ("brown",)),
    "wilson": ("Wilson score", "Wilson score intervals on the randomized reports, mapped to the true share",
               ("wilson", "brown")),
    "clopper-pearson": ("Clopper–Pearson", "Clopper–Pearson intervals on the randomized reports, mapped to the "
                        "true share", ("clopper",)),
    "wald": ("normal approximation (Wald)", "normal-approximation (Wald) intervals, which can be too short at "
             "small n", ("brown",)),
}


def cite(keys) -> str:
    """``(Warner 1965; Feldman & Cousins 1998)`` for the references ``keys``."""
    return "(" + "; ".join(CITE[k] for k in keys) + ")" if keys else ""


def _matrix(q, randomization: dict) -> dict | None:
    """The question's randomization matrix (reports × answers) with its row and column labels, if it has one."""
    matrix = randomization.get("matrix")
    if not matrix:
        return None
    options = list(getattr(q, "options", None) or ())
    design = getattr(q.mechanism, "design", None)
    named = list(getattr(design, "reports", None) or ())  # a design's reports ("same", "different", "red" …)
    answers = options if len(matrix[0]) == len(options) else [f"answer {j + 1}" for j in range(len(matrix[0]))]
    if len(named) != len(matrix):
        named = options if len(matrix) == len(options) else [f"report {i + 1}" for i in range(len(matrix))]
    reports = named
    return {"rows": list(zip(reports, matrix)), "answers": answers, "per_tick": bool(randomization.get("per_tick"))}


def protection(q, method: str) -> dict:
    """How question ``q`` is protected and estimated, for the report.

    ``words``: what the respondent's device does and what an observer can learn (:func:`.explain.explain_question`),
    or the type's words for a question asked directly; ``matrix``; ``epsilon`` (the realized ε the survey's
    total counts, None when the question is not protected), ``declared``, ``epsilon_range`` (the
    respondent-side crosswise model); ``estimator`` and ``interval`` in words with their ``references``.
    """
    randomization = question_randomization(q)
    explained = explain_question(q)
    words = [explained[key] for key in ("coin", "posterior", "odds") if explained and explained.get(key)]
    if not q.protected:
        unprotected = q.qtype.unprotected(q)
        words.append(f"{unprotected[:1].upper()}{unprotected[1:]}.")
    mech = q.mechanism
    design = getattr(mech, "design", None)
    refs: list[str] = []
    if q.qtype.categorical and design is not None:
        estimator = ("the unbiased estimate π̂ = M⁺λ̂ from the design's realized matrix M and the shares λ̂ of "
                     "the reports, and the maximum-likelihood estimate on the simplex where that leaves its interval")
        refs += ["warner", "chaudhuri"]
        kind = "design"
    elif q.qtype.categorical and isinstance(mech, Mechanism) and q.protected:
        estimator = ("the unbiased estimate (c/n − q)/(p − q) of k-ary randomized response per option, and the "
                     "maximum-likelihood estimate on the simplex where that leaves its interval")
        refs += ["warner", "kairouz-extremal", "kairouz-distribution"]
        kind = "k-ary"
    elif q.qtype.categorical and not q.protected and design is None:
        estimator = "the share of respondents giving each answer"
        kind = None
    else:
        kind = q.qtype.label
        estimator = (f"the estimators of a {q.qtype.label} question (each row of the table names its method; "
                     "the project's statistics notes derive them)")
    interval, _, interval_refs = INTERVALS.get(method, (method, method, ()))
    if q.qtype.categorical and kind != q.qtype.label:
        refs += [k for k in interval_refs if k not in refs]
    else:
        interval = "the interval method named in each row"
    epsilon = mech.epsilon if q.protected else None
    return {"words": words, "summary": (explained or {}).get("summary"), "matrix": _matrix(q, randomization),
            "epsilon": epsilon, "declared": q.epsilon if q.protected else None,
            "epsilon_range": randomization.get("epsilon_range"), "privacy": randomization.get("privacy"),
            "design": randomization.get("design"), "kind": kind, "estimator": estimator, "interval": interval,
            "references": refs, "cite": cite(refs)}


def methods_paragraph(survey, *, n: int, opened: str | None, closed: str | None, made_on: str, method: str,
                      confidence: float, protections: list[dict], version: str) -> tuple[str, list[str]]:
    """A paragraph for the methods section of a paper, and the references it cites (keys of :data:`REFERENCES`)."""
    protected = [p for p in protections if p["epsilon"] is not None]
    refs: list[str] = []

    def add(*keys):
        refs.extend(k for k in keys if k not in refs)
        return cite(keys)

    period = (f"was fielded online from {opened} to {closed}" if opened and closed
              else f"was fielded online from {opened} (still open on {made_on})" if opened
              else f"had not been opened as of {made_on}")
    text = [f"The survey “{survey.title}” {period}; {n:,} {'person' if n == 1 else 'people'} responded. "
            f"It asked {len(survey.questions)} question{'s' if len(survey.questions) != 1 else ''}, "]
    if not protected:
        text.append("none of them under local differential privacy: every answer was sent as given.")
    else:
        kinds = {p["kind"] for p in protected}
        how = []
        if "k-ary" in kinds:
            how.append(f"k-ary randomized response {add('warner', 'kairouz-extremal')}")
        if "design" in kinds:
            how.append(f"a randomized-response design with a known misclassification matrix {add('warner', 'chaudhuri')}")
        labels = sorted(k for k in kinds if k not in ("k-ary", "design"))
        if labels:
            how.append(f"the ε-locally differentially private mechanism of each {' and '.join(labels)} question "
                       "described with it below")
        low, high = min(p["epsilon"] for p in protected), max(p["epsilon"] for p in protected)
        spread = f"ε = {low:.2f}" if abs(high - low) < 5e-3 else f"ε between {low:.2f} and {high:.2f}"
        text.append(f"{len(protected)} of them under ε-local differential privacy: each respondent's browser "
                    f"randomized the answer before sending it, by {' or '.join(how)}, so that the server never "
                    f"received a true answer to a protected question ({spread} per question). By basic composition "
                    f"{add('dwork')}, all of one respondent's protected answers together satisfy ε-local differential "
                    f"privacy with ε = {survey.total_epsilon:.2f}. ")
    _, interval, interval_refs = INTERVALS.get(method, (method, method, ()))
    others = any(p["kind"] not in ("k-ary", "design", None) for p in protections)
    text.append(f"Shares were estimated without bias from the reports"
                f"{' (the other estimates as each question’s section says)' if others else ''}, with the maximum-likelihood "
                f"estimate on the probability simplex shown where the unbiased one leaves its interval "
                f"{add('kairouz-distribution')}; intervals are {confidence:.0%} {interval} "
                f"{add(*interval_refs)}. Estimates were computed with deniable {version}; the per-question designs, "
                f"ε and estimates are in the report's question sections.")
    return "".join(text), refs


def report_context(stored, survey, *, items: list[dict], n: int, made_on: str, method: str, confidence: float,
                   version: str) -> dict:
    """What ``templates/report.html`` shows: the survey, its dates and n, each question (its results page item
    with its :func:`protection`), the total ε, the storage facts, the methods paragraph and the references."""
    questions = []
    for item in items:
        q = item["question"]
        questions.append({**item, "protection": protection(q, method)})
    protections = [entry["protection"] for entry in questions]
    paragraph, refs = methods_paragraph(survey, n=n, opened=stored.opened_on, closed=stored.closed_on,
                                        made_on=made_on, method=method, confidence=confidence,
                                        protections=protections, version=version)
    for p in protections:
        refs += [k for k in p["references"] if k not in refs]
    protected = sum(1 for q in survey.questions if q.protected)
    return {"survey": survey, "stored": stored, "n": n, "made_on": made_on, "method": method,
            "confidence": confidence, "questions": questions, "total": explain_total(survey.total_epsilon, protected),
            "paragraph": paragraph, "references": [REFERENCES[k] for k in refs], "stored_facts": STORED,
            "not_stored": NOT_STORED, "caveat": STORAGE_CAVEAT, "version": version}
