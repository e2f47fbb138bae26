"""The one protocol every randomizer of a question follows: :class:`Randomizer`.

Seven classes turn a respondent's true answer into what the browser sends — k-ary randomized
response (:class:`~.mechanism.Mechanism`), a design's matrix (:class:`~.designs.DesignMechanism`)
and the same on each tick of a check-all question (:class:`~.designs.TickDesignMechanism`), unary
encoding of the ticks (:class:`~.multi.MultiMechanism`), the discrete Laplace mechanism and grid
randomized response of a number (:class:`~.numeric.LaplaceMechanism`, :class:`~.numeric.GridMechanism`)
and the list experiment's count (:class:`~.listexp.ListMechanism`).  Like OpenDP's *measurement*,
each states what it takes and its privacy map — here the realized ε, computed from the integers the
samplers use — and where the proof of that ε is (:attr:`Randomizer.proof`: the module notes that
prove it, beside the code).  The surfaces (the codebook, the pages, the estimators) ask these
members and nothing else of a randomizer they do not know the class of.

(:class:`deniable.client.Mechanism` is the concrete k-ary class, named before this protocol; hence
the protocol's other name.)
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class Randomizer(Protocol):
    """What every randomizer answers (the seven classes of :data:`RANDOMIZERS`)."""

    proof: str  # where its ε is proved: a module of deniable.client, whose notes hold the proof

    @property
    def k(self) -> int:
        """How many true answers it takes (a number's steps + 1; a list's counts 0..J + 1)."""

    @property
    def threshold(self) -> int | None:
        """The integer threshold of its 32-bit draws (None for a design, whose weights say everything)."""

    @property
    def protected(self) -> bool:
        """Whether it is ε-LDP with a finite ε (False: asked directly, or a design with a zero cell)."""

    @property
    def epsilon(self) -> float:
        """Its privacy map: the realized ε, never above the declared one (infinite when not protected)."""

    @property
    def declared_epsilon(self) -> float:
        """The ε the survey declared for it."""

    @property
    def design(self):
        """The randomized-response design (:class:`~.designs.Design`) it applies, or None."""

    def as_dict(self) -> dict:
        """Its parameters as JSON."""


def randomizers() -> tuple[type, ...]:
    """The seven classes that follow :class:`Randomizer` (imported here, so that this module imports
    nothing at its top)."""
    from .designs import DesignMechanism, TickDesignMechanism
    from .listexp import ListMechanism
    from .mechanism import Mechanism
    from .multi import MultiMechanism
    from .numeric import GridMechanism, LaplaceMechanism

    return (Mechanism, DesignMechanism, TickDesignMechanism, MultiMechanism, LaplaceMechanism, GridMechanism,
            ListMechanism)


__all__ = ["Randomizer", "randomizers"]
