"""The respondent's side: the mechanism's parameters, the randomizer, and the browser files.

``mechanism`` is the one definition of k-ary randomized response (``threshold = floor(p·2^32)``);
``randomizer`` is the Python twin of ``static/rr.js``; ``submit`` answers a survey from Python.
"""

from .mechanism import Mechanism, MechanismError, mechanism
from .randomizer import randomize, randomize_draws

__all__ = ["Mechanism", "MechanismError", "mechanism", "randomize", "randomize_draws"]
