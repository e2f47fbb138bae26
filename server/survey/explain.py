"""What a privacy parameter means, in plain words for respondents (and researchers designing).

Pure functions of ``(ε, k)`` (and, for the other question types, of the question's mechanism:
:func:`explain_question`): the survey page and the dashboard show the same sentences.
Numbers come from the *realized* mechanism (:func:`deniable.client.mechanism.mechanism`), so the
page never promises more than the browser delivers, and bounds are rounded *up* (never "at
most 75%" for 75.04%).

Two facts, for a report ``r`` made by k-ary randomized response that keeps the true answer with
probability ``p`` (and sends each other answer with probability ``q``):

- someone who could only guess the answer before (each of the k equally likely) is, after
  seeing ``r``, exactly ``p`` sure that ``r`` is the true answer, and less sure of any other;
- whatever they believed before, ``r`` multiplies the odds between two answers by at most
  ``e^ε``; so between two answers (or two sets of answers, across questions, whose ε add up)
  that were 50/50 before, they can be at most ``e^ε / (1 + e^ε)`` sure afterwards.

Each protected question also has one ``short`` sentence of at most 25 words, shown beside it; the
sentences above go into a "What does this mean?" disclosure.  It follows the odds-based wording
that people understood best in Nanayakkara et al., "What Are the Chances? Explaining the Epsilon
Parameter in Differential Privacy" (USENIX Security 2023): how often the true answer is sent, and how
sure a guess can become, *from* a stated chance *to* at most a bound (Xiong et al., "Towards
Effective Differential Privacy Communication for Users' Data Sharing Decision and Comprehension",
IEEE S&P 2020: say what the randomization implies for the person, not how it works):

- k-ary randomized response: "Your true answer is sent only 75% of the time, so a 50/50 guess about it
  becomes at most 75% sure."  Both numbers are the realized ``p``: from a uniform prior over the k
  answers (50/50, or 1 in k) the posterior of the report is ``p / (p + (k − 1) q) = p``;
- every other mechanism (the designs, check-all, numeric, list experiment): the two-answer bound of its
  realized ε, ``e^ε / (1 + e^ε)`` (:func:`bounds_sentences`).

Every sentence goes through ``gettext`` (the survey page passes Flask-Babel's, so respondents read
them in their language; ``pybabel extract`` finds them here) and numbers are formatted for
``locale``.
"""

from __future__ import annotations

import math

from babel import Locale
from babel.numbers import format_decimal, format_percent

from deniable.client.mechanism import mechanism

ALMOST_CERTAIN = 0.999  # above this, no percentage is said: "more than 99.9%"
LITTLE = 0.95  # above this, the sentence says the question protects only a little
EXPOSED_POSTERIOR = 0.95  # the builder warns from here on (ε ≥ ln 19 ≈ 2.94)


def _same(text: str) -> str:
    return text


def _up(x: float) -> float:
    """Round a probability up to 0.1 percentage point (a bound must not be understated)."""
    return math.ceil(round(x * 1000, 6)) / 1000


def percent(x: float, locale: str = "en", *, up: bool = True, gettext=_same) -> str:
    """A probability for people: ``0.75 → '75%'``, to 0.1 point, rounded up unless ``up=False``.

    Never "100%" or "0%": 99.95% is ``'more than 99.9%'`` and 0.01% ``'less than 0.1%'``.

    >>> percent(0.75), percent(0.88031), percent(0.88031, up=False), percent(0.99999)
    ('75%', '88.1%', '88%', 'more than 99.9%')
    """
    _ = gettext
    pattern = _percent_pattern(locale)
    if x > ALMOST_CERTAIN:
        return _("more than %(percent)s") % {"percent": format_percent(ALMOST_CERTAIN, pattern, locale=locale)}
    if x < 0.001:
        return _("less than %(percent)s") % {"percent": format_percent(0.001, pattern, locale=locale)}
    value = _up(x) if up else round(x, 3)
    return format_percent(value, pattern, locale=locale)


def _percent_pattern(locale: str) -> str:
    """The locale's own percent pattern ("#,##0 %" in French) with one optional decimal."""
    return Locale.parse(locale).percent_formats[None].pattern.replace("#,##0", "#,##0.#", 1)


def times(x: float, locale: str = "en") -> str:
    """Format an odds ratio: ``3.0000001 → '3'``, ``7.389 → '7.4'``, large values without decimals."""
    if x >= 1000:
        return format_decimal(round(x), "#,##0", locale=locale)
    return format_decimal(x, "#,##0.#", locale=locale)


def two_way_bound(epsilon: float) -> float:
    """How sure someone choosing between two answers (50/50 before) can be: ``e^ε / (1 + e^ε)``."""
    return 1 / (1 + math.exp(-epsilon))


def explain(epsilon, k, *, gettext=_same, locale: str = "en") -> dict:
    """Explain one protected question with ``k`` options and declared ``epsilon`` in plain words.

    Returns the realized numbers (``epsilon``, ``p_true``, ``p_other``, ``odds_bound``,
    ``posterior_bound``: the 50/50 two-answer bound) and the sentences ``coin`` (what the device
    does), ``posterior`` (what someone who sees the report can learn), ``odds`` and ``summary``
    (for researchers).

    >>> explain(math.log(3), 2)["posterior"]
    'So what is sent is never proof: someone who sees it, and could only guess your answer before (50/50), can be at most 75% sure of it.'
    """
    _ = gettext
    mech = mechanism(k, epsilon)
    odds = math.exp(mech.epsilon)
    kept = percent(mech.p, locale, gettext=_)
    others = mech.k - 1
    if others == 1:
        coin = _("Your device sends your true answer %(kept)s of the time; otherwise it sends the other answer.")
    else:
        coin = _("Your device sends your true answer %(kept)s of the time; otherwise it sends one of the "
                 "other %(others)s answers, picked at random (%(each)s each).")
    coin = coin % {"kept": kept, "others": others, "each": percent(mech.q, locale, up=False, gettext=_)}
    chance = _("50/50") if mech.k == 2 else _("a 1 in %(k)s chance") % {"k": mech.k}
    short = short_choice(mech, gettext=_, locale=locale)
    if mech.p > ALMOST_CERTAIN:
        posterior = _("So this question barely protects your answer: someone who sees what was sent can be "
                      "almost certain of it (%(sure)s sure).") % {"sure": kept}
    elif mech.p > LITTLE:
        posterior = _("So this question protects your answer only a little: someone who sees what was sent, and "
                      "could only guess your answer before (%(chance)s), can be up to %(sure)s sure of it."
                      ) % {"chance": chance, "sure": kept}
    else:
        posterior = _("So what is sent is never proof: someone who sees it, and could only guess your answer "
                      "before (%(chance)s), can be at most %(sure)s sure of it.") % {"chance": chance, "sure": kept}
    return {
        "k": mech.k,
        "epsilon": mech.epsilon,
        "declared_epsilon": mech.declared_epsilon,
        "p_true": mech.p,
        "p_other": mech.q,
        "odds_bound": odds,
        "posterior_bound": two_way_bound(mech.epsilon),
        "coin": coin,
        "posterior": posterior,
        "short": short,
        "odds": _("Whatever someone believed before, what is sent makes one answer at most %(odds)s times as "
                  "likely as another.") % {"odds": times(odds, locale)},
        "summary": f"Protected (ε = {mech.epsilon:.2f}): an observer guessing among the {mech.k} answers can be "
                   f"at most {percent(mech.p)} sure; between two answers at 50/50, at most "
                   f"{percent(two_way_bound(mech.epsilon))}.",
        "warning": exposure_warning(mech.declared_epsilon),
    }


MAX_SHORT_WORDS = 25  # the sentence beside each protected question (tests/unit/test_privacy_sentences.py)


def short_choice(mech, *, gettext=_same, locale: str = "en") -> str:
    """One sentence (at most 25 words) for k-ary randomized response with realized keep probability ``p``.

    From a uniform prior over the ``k`` answers, the posterior that the report ``r`` is the true answer
    is ``p / (p + (k − 1) q) = p`` (Warner 1965; ``p + (k − 1) q = 1``), and every other answer is less
    likely; so both numbers are ``p``, rounded up (:func:`percent`).

    >>> short_choice(mechanism(2, math.log(3)))
    'Your true answer is sent only 75% of the time, so a 50/50 guess about it becomes at most 75% sure.'
    >>> short_choice(mechanism(5, 1.0))
    'Your true answer is sent only 40.5% of the time, so a 1-in-5 guess about it becomes at most 40.5% sure.'
    """
    _ = gettext
    if mech.p > ALMOST_CERTAIN:
        return barely(mech.p, gettext=_, locale=locale)
    kept = percent(mech.p, locale, gettext=_)
    if mech.k == 2:
        return _("Your true answer is sent only %(kept)s of the time, so a 50/50 guess about it becomes at most "
                 "%(sure)s sure.") % {"kept": kept, "sure": kept}
    return _("Your true answer is sent only %(kept)s of the time, so a 1-in-%(k)s guess about it becomes at most "
             "%(sure)s sure.") % {"kept": kept, "k": mech.k, "sure": kept}


def short_bound(epsilon: float, *, gettext=_same, locale: str = "en") -> str:
    """One sentence (at most 25 words) for any ε-LDP mechanism, from its realized ``epsilon``: a guess
    between two answers at 50/50 becomes at most ``e^ε / (1 + e^ε)`` sure (:func:`two_way_bound`).

    >>> short_bound(math.log(3))
    'Your device may change your answer at random before sending it, so a 50/50 guess between two answers becomes at most 75% sure.'
    """
    bound = two_way_bound(epsilon)
    if bound > ALMOST_CERTAIN:
        return barely(bound, gettext=gettext, locale=locale)
    return gettext("Your device may change your answer at random before sending it, so a 50/50 guess between two "
                   "answers becomes at most %(sure)s sure.") % {"sure": percent(bound, locale, gettext=gettext)}


def barely(bound: float, *, gettext=_same, locale: str = "en") -> str:
    """The short sentence when a bound is above 99.9%: the answer is hardly protected."""
    return gettext("Your answer is barely protected: whoever sees what was sent can be almost certain of it "
                   "(%(sure)s sure).") % {"sure": percent(bound, locale, gettext=gettext)}


def exposure_warning(epsilon: float) -> str | None:
    """For researchers: a warning when ε is so large that the answer is nearly exposed, else None.

    >>> exposure_warning(1.0) is None, exposure_warning(3.0)[:24]
    (True, 'At ε = 3, someone who se')
    """
    if epsilon is None or two_way_bound(epsilon) < EXPOSED_POSTERIOR:
        return None
    sure = percent(two_way_bound(epsilon))
    if two_way_bound(epsilon) > ALMOST_CERTAIN:
        return (f"At ε = {epsilon:g} the answer is practically exposed: someone who sees what was sent can be "
                f"{sure} sure of it, so respondents are hardly protected. Most surveys use ε between 0.5 and 2.")
    return (f"At ε = {epsilon:g}, someone who sees what was sent can be up to {sure} sure of a yes/no answer: "
            "the answer is nearly exposed. Most surveys use ε between 0.5 and 2.")


def explain_total(epsilon_total: float, n_protected: int, *, gettext=_same, locale: str = "en") -> dict:
    """Explain the privacy of all ``n_protected`` protected answers of one respondent together.

    >>> explain_total(2 * math.log(3), 2)["posterior"]
    'All your protected answers together: someone who sees everything that was sent, and had to choose between two possible sets of answers for you (50/50 before), can be at most 90% sure which is yours.'
    """
    _ = gettext
    if n_protected == 0:
        return {"epsilon": 0.0, "n_protected": 0, "odds_bound": 1.0, "posterior_bound": 0.5,
                "posterior": _("No question of this survey is protected: every answer is sent as given."),
                "odds": "", "summary": "No protected questions."}
    odds = math.exp(epsilon_total)
    bound = two_way_bound(epsilon_total)
    if bound > ALMOST_CERTAIN:
        posterior = _("All your protected answers together: someone who sees everything that was sent could be "
                      "almost certain of them (%(sure)s sure).") % {"sure": percent(bound, locale, gettext=_)}
    elif n_protected == 1:
        posterior = _("Your protected answer: someone who sees what was sent, and had to choose between two "
                      "possible answers for you (50/50 before), can be at most %(sure)s sure which is yours."
                      ) % {"sure": percent(bound, locale, gettext=_)}
    else:
        posterior = _("All your protected answers together: someone who sees everything that was sent, and had "
                      "to choose between two possible sets of answers for you (50/50 before), can be at most "
                      "%(sure)s sure which is yours.") % {"sure": percent(bound, locale, gettext=_)}
    return {
        "epsilon": epsilon_total,
        "n_protected": n_protected,
        "odds_bound": odds,
        "posterior_bound": bound,
        "posterior": posterior,
        "odds": _("Together they make what is sent at most %(odds)s times as likely under one set of true "
                  "answers as under any other.") % {"odds": times(odds, locale)},
        "summary": f"All protected questions together: ε = {epsilon_total:.2f} (the ε of each question add up).",
    }


def uniform_bound(matrix) -> float:
    """How sure someone who sees a report can be of the true answer, having guessed among the k answers
    alike before: by Bayes' rule ``max_{r, t} M[r, t] / Σ_s M[r, s]`` for ``M[r, t] = P(report r | answer t)``.
    Two answers: ``two_way_bound(ε)`` of the matrix's ε.

    >>> from deniable.client.designs import forced
    >>> round(uniform_bound(forced(0.7, [0.1, 0.1, 0.1]).matrix), 6)
    0.8
    """
    rows = [[float(cell) for cell in row] for row in matrix]
    return max(max(row) / sum(row) for row in rows if sum(row) > 0)


def bounds_sentences(epsilon: float, *, gettext=_same, locale: str = "en", matrix=None) -> dict:
    """The bounds of a report made under ``epsilon`` (the types without a k-ary coin).

    ε-local differential privacy bounds the likelihood ratio of any report between two true answers by
    ``e^ε`` (Dwork & Roth 2014, §3.2); from 50/50 prior odds the posterior is then at most
    ``e^ε / (1 + e^ε)`` (:func:`two_way_bound`).  A design with more than two answers (``matrix``, reports
    × answers) is worded as the k-ary coin is: from a 1-in-k guess, at most :func:`uniform_bound` sure.
    """
    _ = gettext
    odds, bound = math.exp(epsilon), two_way_bound(epsilon)
    k = 2 if matrix is None else len(matrix[0])
    if k > 2:
        among = uniform_bound(matrix)
        sure = percent(among, locale, gettext=_)
        return {
            "epsilon": epsilon, "odds_bound": odds, "posterior_bound": bound,
            "posterior": _("So what is sent is never proof: someone who sees it, and could only guess your answer "
                           "before (%(chance)s), can be at most %(sure)s sure of it."
                           ) % {"chance": _("a 1 in %(k)s chance") % {"k": k}, "sure": sure},
            "short": (barely(among, gettext=_, locale=locale) if among > ALMOST_CERTAIN else
                      _("Your device may change your answer at random before sending it, so a 1-in-%(k)s guess "
                        "about it becomes at most %(sure)s sure.") % {"k": k, "sure": sure}),
            "odds": _("Whatever someone believed before, what is sent makes one answer at most %(odds)s times as "
                      "likely as another.") % {"odds": times(odds, locale)},
            "summary": f"Protected (ε = {epsilon:.2f}): an observer guessing among the {k} answers can be at most "
                       f"{percent(among)} sure; between two answers at 50/50, at most {percent(bound)}.",
            "warning": exposure_warning(epsilon),
        }
    return {
        "epsilon": epsilon, "odds_bound": odds, "posterior_bound": bound,
        "posterior": _("Whoever sees what was sent, and could only guess your answer before (50/50), can be at "
                       "most %(sure)s sure of it.") % {"sure": percent(bound, locale, gettext=_)},
        "short": short_bound(epsilon, gettext=_, locale=locale),
        "odds": _("Whatever someone believed before, what is sent makes one answer at most %(odds)s times as "
                  "likely as another.") % {"odds": times(odds, locale)},
        "summary": f"Protected (ε = {epsilon:.2f}): between two answers at 50/50, at most {percent(bound)} sure.",
        "warning": exposure_warning(epsilon),
    }


def explain_question(q, *, gettext=_same, locale: str = "en") -> dict | None:
    """Explain any question in plain words, as its type says
    (:meth:`~.questions.base.QuestionType.explanation`): :func:`explain` for a choice, the mechanism of
    the other types (``coin`` says what the device does, the bounds come from the realized ε); None for
    a question asked directly that needs no more words than "not protected"."""
    return q.qtype.explanation(q, gettext=gettext, locale=locale)


def explain_survey(survey, *, gettext=_same, locale: str = "en") -> dict:
    """Per question id its :func:`explain_question` when there is one (every protected question, and a
    directly asked one whose type has more to say, e.g. a plain list experiment), and ``"total"``:
    :func:`explain_total`."""
    questions = {q.id: info for q in survey.questions
                 if (info := explain_question(q, gettext=gettext, locale=locale)) is not None}
    protected = sum(1 for q in survey.questions if q.protected)
    return {"questions": questions,
            "total": explain_total(survey.total_epsilon, protected, gettext=gettext, locale=locale)}


def design_coin(design, labels, *, gettext=_same, locale: str = "en") -> str:
    """What the respondent's device does under a randomized-response design (:mod:`deniable.client.designs`),
    in one plain sentence per design; the shares are the design's realized ones (its integer weights).

    >>> from deniable.client.designs import forced
    >>> design_coin(forced(0.75, [0.125, 0.125]), ["Yes", "No"])
    'Your device sends your true answer 75% of the time; otherwise it sends, whatever your answer: Yes (12.5% of the time), No (12.5% of the time).'
    """
    _ = gettext
    key, values = design.plain_words(labels)

    def shown(value):
        if isinstance(value, str):  # an answer's label
            return value
        if isinstance(value, list):  # the answers forced response sends, with their shares
            return ", ".join(_("%(option)s (%(share)s of the time)") % {"option": label, "share": shown(share)}
                             for label, share in value)
        return percent(float(value), locale, up=False, gettext=_)

    return COIN_SENTENCES[key](_) % {name: shown(value) for name, value in values.items()}


# what the device does, per design (:meth:`deniable.client.designs.Design.plain_words`'s key), through gettext
COIN_SENTENCES = {
    "forced": lambda _: _("Your device sends your true answer %(kept)s of the time; otherwise it sends, whatever "
                          "your answer: %(forced)s."),
    "unrelated": lambda _: _("Your device sends your true answer %(kept)s of the time; otherwise it sends %(yes)s or "
                             "%(no)s at random, %(yes)s as often as people answer yes to an unrelated question "
                             "(%(share)s)."),
    "mirrored": lambda _: _("Your device sends your true answer %(kept)s of the time and the other answer otherwise."),
    "decks": lambda _: _("Your device sends %(first)s %(share_yes)s of the time if your answer is %(yes)s, and "
                         "%(share_no)s of the time if it is %(no)s; otherwise %(second)s."),
    "matrix": lambda _: _("Your device sends one of the answers at random, with chances that depend on your true "
                          "answer (at least %(kept)s to send your own)."),
}


def respondent_crosswise(design, *, gettext=_same, locale: str = "en") -> dict:
    """The sentences of the respondent-side crosswise model (:func:`deniable.client.designs.crosswise_respondent`):
    the device sends only "same" or "different", which the respondent chose.  Against someone who does not
    know the respondent's answer to the private fact the report is ε-LDP with ε between the ends of
    :attr:`~deniable.client.designs.Design.epsilon_range`, so the two-answer bound ``e^ε/(1 + e^ε)``
    (:func:`two_way_bound`) lies between those of the two ends; against someone who knows it, the report
    is the answer (not ε-LDP).  ``epsilon`` is the high end, which the survey's total counts."""
    _ = gettext
    low, high = design.epsilon_range
    sure_low, sure_high = percent(two_way_bound(low), locale, gettext=_), percent(two_way_bound(high), locale, gettext=_)

    def number(x):
        return format_decimal(round(x, 2), "0.00", locale=locale)

    return {
        "epsilon": high, "epsilon_range": [low, high], "odds_bound": math.exp(high),
        "posterior_bound": two_way_bound(high),
        "short": _("Your device never sees your answer: you only say whether your answers to two questions are "
                   "the same or different."),
        "coin": _("Your device sends only what you choose, “same” or “different”, never your answer to either "
                  "question."),
        "posterior": _("Whoever sees what was sent but does not know your answer to the second question, and could "
                       "only guess your answer before (50/50), can be between %(low)s and %(high)s sure of it."
                       ) % {"low": sure_low, "high": sure_high},
        "odds": _("Someone who knows your answer to the second question can tell your answer: against them it is "
                  "not protected (ε between %(low)s and %(high)s holds only against everyone else)."
                  ) % {"low": number(low), "high": number(high)},
        "summary": f"Protected against an observer who does not know the private fact (ε between {low:.2f} and "
                   f"{high:.2f}); not ε-LDP against one who knows it.",
        "warning": exposure_warning(high),
        "sent": _("“same” or “different”, as you chose"),
    }
