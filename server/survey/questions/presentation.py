"""Presentation: words and numbers for people — the terminal table, the results page, the survey page: the :class:`Presentation` mixin of the question-type protocol.

What a page or a terminal shows of a record (headlines, chart bars, rows), and the survey
page's card and the respondent's words on how an answer is protected.

A type opts in by naming the mixin among its bases (``class Choice(Wire, …, QuestionType)``) and
overrides the members it changes; the defaults below are what a type that overrides nothing does.
The protocol's table of contents is :mod:`.base`'s docstring.
"""

from __future__ import annotations

import math

from ..definition import Question
from .base import headline


class Presentation:
    """Presentation: the defaults of the surface a type opts into (:mod:`.base`, table of contents)."""

    def table(self, q: Question, result, grid) -> list[str]:
        """The lines of a terminal block after the question's title (``grid`` aligns columns)."""
        raise NotImplementedError

    def headlines(self, q: Question, record: dict):
        """Every ``(headline, low, high)`` a page shows from a record: the property test checks that each
        headline lies in its interval."""
        raise NotImplementedError

    def chart(self, q: Question, record: dict) -> dict | None:
        """The estimate bars of the results page: ``{"labels", "estimate", "ci_low", "ci_high"}`` or None."""
        return None

    def shown_rows(self, q: Question, result) -> list[dict]:
        """The rows of :meth:`csv_rows`, each with the ``headline`` a page shows for it: the type's own
        where its record has one, else the unbiased estimate kept inside its own interval
        (:func:`headline` with no range of its own: a mean or a count)."""
        rows = []
        for row in self.csv_rows(q, result):
            row = dict(row)
            if "headline" not in row:
                row["headline"] = headline(row, lower=-math.inf, upper=math.inf)
            rows.append(row)
        return rows

    def unprotected(self, q: Question) -> str:
        """What the results page says of a question that ε does not protect."""
        return "asked directly (no randomization)"

    def page_data(self, q: Question) -> dict | None:
        """The ``data-`` attributes (integers only: docs/design.md, invariant 8) and display strings the
        survey page needs to draw ``q`` with its type's card; None: drawn as radio buttons.  The
        attributes hold ``data-type``: the name :attr:`script` registers its behaviour under."""
        return None

    # The survey page's card of a type drawn by its own card (page_data not None): the template of
    # its inputs (under templates/, included in the shared fieldset of survey_types.html, which says
    # "Question N of M", the note on protection and the error) and the browser module (under
    # client/static/) that registers the card's behaviour with types.js; None for the radio buttons.
    card: str | None = None

    script: str | None = None

    def coin(self, q: Question, *, gettext, locale: str) -> str:
        """What the respondent's device does to a protected answer of ``q``, in words (``gettext``
        translates; :mod:`..explain` has the number formats)."""
        raise NotImplementedError

    def explanation(self, q: Question, *, gettext, locale: str) -> dict | None:
        """How ``q``'s answer is protected, in plain words (:func:`..explain.explain_question`): the
        sentences ``coin``, ``posterior``, ``odds``, ``summary`` and the realized numbers; for a question
        asked directly :meth:`plain_explanation`.  The bounds of a protected answer follow from the
        realized ε alone (:func:`..explain.bounds_sentences`, the e^ε odds bound of ε-local differential
        privacy: Dwork & Roth 2014, §3.2)."""
        from ..explain import bounds_sentences

        if not q.protected:
            return self.plain_explanation(q, gettext=gettext)
        return {**bounds_sentences(q.mechanism.epsilon, gettext=gettext, locale=locale), "declared_epsilon": q.epsilon,
                "coin": self.coin(q, gettext=gettext, locale=locale), "protected": True}

    def plain_explanation(self, q: Question, *, gettext) -> dict | None:
        """What the page says of ``q`` asked directly beyond "not protected — sent as you answer", or None.
        A dict has ``note`` (the card's words in bold), ``coin`` (the sentence after them) and ``sent``
        (the thank-you page's "how it was sent")."""
        return None

    def card_words(self, q: Question, *, gettext) -> dict | None:
        """The words of a card of the type's own on the survey page, in ``gettext``'s language, for the embed
        (:func:`..recipes.card_words`: a two-group design's instructions and its Yes and No), or None for a
        type whose card the embed draws from the design document alone."""
        return None

    def report_words(self, q: Question) -> str | None:
        """What a report means, in words, for the codebook a recipe prints (:func:`..recipes.recipe`), or None
        when the recipe says it from the report's shape."""
        return None
