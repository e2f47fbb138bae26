"""What a privacy parameter means, in plain words for respondents (and researchers designing).

Pure functions of ``(ε, k)`` (and, for the other question types, of the question's mechanism:
:func:`explain_question`): the survey page and the dashboard show the same sentences.
Numbers come from the *realized* mechanism (:func:`deniable.client.mechanism.mechanism`), so the page
never promises more than the browser delivers.

The bounds, for a report ``r`` made under ε-LDP and any two true answers ``a``, ``b``:

- odds: ``P(r | a) / P(r | b) ≤ e^ε``;
- posterior: someone who thought ``a`` and ``b`` equally likely before seeing ``r`` can be at
  most ``e^ε / (1 + e^ε)`` sure of either afterwards.

Across questions the ε add up (basic composition), and so do the bounds' exponents.
"""

from __future__ import annotations

import math

from deniable.client.mechanism import mechanism


def percent(x: float) -> str:
    """Format a probability as a percentage for people: ``0.75 → '75%'``, never rounding to 100%."""
    value = 100 * x
    if value > 99.9:
        return "more than 99.9%"
    if value < 0.1:
        return "less than 0.1%"
    text = f"{value:.1f}".removesuffix(".0")
    return f"{text}%"


def times(x: float) -> str:
    """Format an odds ratio: ``3.0000001 → '3'``, ``7.389 → '7.4'``, large values without decimals."""
    if x >= 1000:
        return f"{x:,.0f}"
    return f"{x:.1f}".removesuffix(".0")


def _bounds(epsilon: float) -> tuple[float, float]:
    odds = math.exp(epsilon)
    return odds, odds / (1 + odds)


def explain(epsilon, k) -> dict:
    """Explain one protected question with ``k`` options and declared ``epsilon`` in plain words.

    Returns the realized numbers (``epsilon``, ``p_true``, ``p_other``, ``odds_bound``,
    ``posterior_bound``) and the sentences ``coin``, ``posterior``, ``odds`` and ``summary``.

    >>> explain(math.log(3), 2)["posterior"]
    'Whoever sees your submitted answer can be at most 75% sure of your true answer if they thought it 50/50 before.'
    """
    mech = mechanism(k, epsilon)
    odds, posterior = _bounds(mech.epsilon)
    others = mech.k - 1
    if others == 1:
        coin = (f"Your device flips a weighted coin: {percent(mech.p)} of the time it sends your true "
                f"answer, otherwise it sends the other answer.")
    else:
        coin = (f"Your device flips a weighted coin: {percent(mech.p)} of the time it sends your true "
                f"answer, otherwise it sends one of the {others} other answers, picked at random "
                f"({percent(mech.q)} each).")
    return {
        "k": mech.k,
        "epsilon": mech.epsilon,
        "declared_epsilon": mech.declared_epsilon,
        "p_true": mech.p,
        "p_other": mech.q,
        "odds_bound": odds,
        "posterior_bound": posterior,
        "coin": coin,
        "posterior": (f"Whoever sees your submitted answer can be at most {percent(posterior)} sure of "
                      f"your true answer if they thought it 50/50 before."),
        "odds": (f"Any answer you could give makes what is sent at most {times(odds)} times as likely "
                 f"as any other answer would."),
        "summary": f"Protected (ε = {mech.epsilon:.2f}): at most {percent(posterior)} sure, from 50/50.",
    }


def explain_total(epsilon_total: float, n_protected: int) -> dict:
    """Explain the privacy of all ``n_protected`` protected answers of one respondent together.

    >>> explain_total(2 * math.log(3), 2)["posterior"]
    'Taken together, your 2 protected answers let anyone be at most 90% sure of your true answers if they thought it 50/50 before.'
    """
    if n_protected == 0:
        return {"epsilon": 0.0, "n_protected": 0, "odds_bound": 1.0, "posterior_bound": 0.5,
                "posterior": "No question of this survey is protected: every answer is sent as given.",
                "odds": "", "summary": "No protected questions."}
    odds, posterior = _bounds(epsilon_total)
    your, verb = ("your protected answer", "lets") if n_protected == 1 else \
        (f"your {n_protected} protected answers", "let")
    return {
        "epsilon": epsilon_total,
        "n_protected": n_protected,
        "odds_bound": odds,
        "posterior_bound": posterior,
        "posterior": (f"Taken together, {your} {verb} anyone be at most {percent(posterior)} sure of "
                      f"your true answers if they thought it 50/50 before."),
        "odds": (f"Together they make what is sent at most {times(odds)} times as likely under one set "
                 f"of true answers as under any other."),
        "summary": f"All protected questions together: ε = {epsilon_total:.2f} (the ε of each question add up).",
    }


def _bounds_sentences(epsilon: float) -> dict:
    odds, posterior = _bounds(epsilon)
    return {
        "epsilon": epsilon, "odds_bound": odds, "posterior_bound": posterior,
        "posterior": (f"Whoever sees your submitted answer can be at most {percent(posterior)} sure of "
                      f"your true answer if they thought it 50/50 before."),
        "odds": (f"Any answer you could give makes what is sent at most {times(odds)} times as likely "
                 f"as any other answer would."),
        "summary": f"Protected (ε = {epsilon:.2f}): at most {percent(posterior)} sure, from 50/50.",
    }


PLAIN_LIST = ("Not protected by ε: only how many of the items apply to you is sent, exactly as you give it, "
              "and nobody learns which ones. But if you count none or all of them, your answer to every "
              "item, the sensitive one included, is known.")


def explain_question(q) -> dict:
    """Explain any question in plain words: :func:`explain` for a choice, the mechanism of the other
    types (``coin`` says what the device does, the bounds come from the realized ε)."""
    if q.is_choice:
        return explain(q.epsilon, q.k)
    mech = q.mechanism
    if q.type == "list" and not q.protected:
        return {"epsilon": None, "coin": PLAIN_LIST, "posterior": "", "odds": "",
                "summary": "Not protected by ε (a plain list experiment).", "protected": False}
    if q.type == "numeric" and q.method == "laplace":
        t = mech.t
        same = (1 - t) / (1 + t)
        coin = (f"Your device adds random noise to your number before sending it: {percent(same)} of the time "
                f"it sends your number itself, otherwise a number further away, each step further "
                f"{1 / t:.2f} times less likely, in either direction.")
    elif q.type == "numeric":
        from .cells import decimal_text, grid_of

        g = grid_of(q)
        points = [decimal_text(q.value(j * (q.steps // g))) for j in range(g + 1)]
        if g == 1:
            coin = (f"Your device first rounds your number at random to {points[0]} or {points[1]} (the nearer "
                    f"one is the likelier), then sends that {percent(mech.rr.p)} of the time and otherwise "
                    f"the other one.")
        else:
            shown = ", ".join(points[:6]) + (", …" if len(points) > 6 else "")
            coin = (f"Your device first rounds your number at random to one of the two nearest of the values "
                    f"{shown}, then sends that value {percent(mech.rr.p)} of the time and otherwise one of the "
                    f"other {g} values ({percent(mech.rr.q)} each).")
    elif q.type == "multi":
        coin = (f"For each option on its own, your device sends your tick (or no tick) as it is "
                f"{percent(mech.p)} of the time and otherwise the opposite.")
    else:
        coin = (f"You only say how many of the items apply to you. Your device sends that count "
                f"{percent(mech.rr.p)} of the time and otherwise one of the other {mech.k - 1} counts "
                f"({percent(mech.rr.q)} each).")
    return {**_bounds_sentences(mech.epsilon), "declared_epsilon": q.epsilon, "coin": coin, "protected": True}


def explain_survey(survey) -> dict:
    """Per protected question id its :func:`explain_question` (and a plain list experiment's, which
    says it is not protected by ε), and ``"total"``: :func:`explain_total`."""
    questions = {q.id: explain_question(q) for q in survey.questions
                 if q.protected or q.type == "list"}
    protected = sum(1 for q in survey.questions if q.protected)
    return {"questions": questions, "total": explain_total(survey.total_epsilon, protected)}
