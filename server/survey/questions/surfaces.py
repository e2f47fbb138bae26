"""The surfaces of the question-type protocol, as data: each surface's name, its mixin and the surfaces
its defaults build on (the table of contents of :mod:`.base` in words).

:func:`surface_of` tells which surface a member belongs to (the core answers a member of a surface a
type refuses with the refusal's reason); :func:`opted_into` which surfaces a type has.  The protocol's
tests and :func:`deniable.testing.check_question_type` read this table.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from .audit import Audit
from .builder import Builder
from .exports import Files
from .monitoring import Monitoring
from .presentation import Presentation
from .statistics import Statistics
from .wire import Wire


@dataclass(frozen=True)
class Surface:
    """One surface: its ``name`` (what :attr:`.base.Capabilities.refused` names), its ``mixin`` and the
    surfaces its defaults call (``needs``: a type that opts into this one opts into those too)."""

    name: str
    mixin: type
    needs: tuple[str, ...] = ()

    @property
    def members(self) -> tuple[str, ...]:
        """The members the mixin declares, in its order."""
        return tuple(name for name in vars(self.mixin) if not name.startswith("__"))


SURFACES = (
    Surface("wire", Wire),
    Surface("files", Files, ("wire",)),
    Surface("statistics", Statistics, ("wire",)),
    Surface("monitoring", Monitoring, ("statistics", "presentation")),
    Surface("presentation", Presentation, ("statistics",)),
    Surface("builder", Builder),
    Surface("audit", Audit),
)


@functools.cache
def _by_member() -> dict[str, Surface]:
    return {member: surface for surface in SURFACES for member in surface.members}


def surface_of(member: str) -> Surface | None:
    """The surface that declares ``member``, or None (a core member, or no member of the protocol)."""
    return _by_member().get(member)


def opted_into(qtype) -> tuple[Surface, ...]:
    """The surfaces ``qtype`` (a type instance or class) opts into, in :data:`SURFACES`' order."""
    cls = qtype if isinstance(qtype, type) else type(qtype)
    return tuple(surface for surface in SURFACES if issubclass(cls, surface.mixin))


__all__ = ["SURFACES", "Surface", "opted_into", "surface_of"]
