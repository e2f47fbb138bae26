"""The respondent's side: the mechanism's parameters, the randomizer, and the browser files."""

from .mechanism import Mechanism, MechanismError, mechanism
from .randomizer import randomize, randomize_draws

__all__ = ["Mechanism", "MechanismError", "mechanism", "randomize", "randomize_draws"]
