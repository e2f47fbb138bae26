"""Question types: one module per type, each owning everything its questions do (:mod:`.base`).

=============  ==============================  =====================================
type           module                          what a respondent gives
=============  ==============================  =====================================
``choice``     :mod:`.choice`                  one of 2–64 options
``numeric``    :mod:`.numeric`                 a number from min to max in steps
``multi``      :mod:`.multi`                   any subset of 2–20 options
``list``       :mod:`.listexp`                 how many of J items apply (list experiment)
``two_group``  :mod:`.two_group`               Yes or No as a drawn instruction says, in one of two groups
=============  ==============================  =====================================

Surfaces reach a question's type through ``question.qtype``; :func:`all_types` lists them for
whatever must show every type (the builder, the docs, the battery of tests).  Adding a type is
adding one module that subclasses :class:`.base.QuestionType` and registers an instance
(:func:`.registry.register`; the built-in ones load on first use); tests/support/rating.py does exactly that for the battery.
"""

from __future__ import annotations

from .registry import DEFAULT, all_types, get, names, register, unregister

__all__ = ["DEFAULT", "all_types", "get", "names", "register", "unregister"]
