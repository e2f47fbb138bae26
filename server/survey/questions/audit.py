"""Audit and simulation: the type's randomizer run offline — ``deniable audit`` and ``deniable simulate``: the :class:`Audit` mixin of the question-type protocol.

The samplers ``deniable audit`` lower-bounds ε with (:class:`~.base.AuditSampler`), and the
truth files and simulated respondents of ``deniable simulate`` (and of the battery of tests).

A type opts in by naming the mixin among its bases (``class Choice(Wire, …, QuestionType)``) and
overrides the members it changes; the defaults below are what a type that overrides nothing does.
The protocol's table of contents is :mod:`.base`'s docstring.
"""

from __future__ import annotations

import numpy as np

from ..definition import Question
from .base import NotAvailable


class Audit:
    """Audit and simulation: the defaults of the surface a type opts into (:mod:`.base`, table of contents)."""

    def audit_samplers(self) -> tuple:
        """The :class:`AuditSampler` of every mechanism a question of this type can have (``deniable
        audit --type`` takes their names, in registration order)."""
        return ()

    def audit_sampler(self, q: Question):
        """The sampler of ``q``'s mechanism, or None when ``q`` randomizes nothing (asked directly);
        NotAvailable, saying so, for a protected question of a type without a sampler (the audit
        lists it as not audited)."""
        samplers = self.audit_samplers()
        if not q.protected:
            return None
        if not samplers:
            raise NotAvailable(f"{self.label} questions have no sampler for deniable audit: their randomizer "
                               "is not checked")
        return samplers[0]

    def truth(self, q: Question, value, where: str):
        """Parse a truth file's entry for ``q`` (raise ValueError with the problem)."""
        raise NotImplementedError

    def simulate(self, q: Question, truth, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` reports (codes) of ``q`` whose true answers follow ``truth``, through the real randomizer."""
        raise NotImplementedError
