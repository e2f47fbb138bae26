"""Every randomizer of a question follows one protocol (issue 37, item 4): deniable.client.randomizers.

Each of the seven classes is checked the same way: it is a :class:`Randomizer` (every member present),
its ε is a privacy map that never exceeds the declared ε (infinite exactly when not protected), its
parameters are JSON, and its ``proof`` names a module of deniable.client whose notes state the ε it
computes — so a reader finds the proof beside the code.
"""

from __future__ import annotations

import importlib
import json
import math

import pytest

from deniable.client.designs import DesignMechanism, TickDesignMechanism, from_definition, tick_design
from deniable.client.listexp import list_mechanism
from deniable.client.mechanism import direct, mechanism
from deniable.client.multi import direct_multi, multi_mechanism
from deniable.client.numeric import direct_grid, grid_mechanism, laplace
from deniable.client.randomizers import Randomizer, randomizers

EXAMPLES = {
    "k-ary": mechanism(3, 1.0), "k-ary asked directly": direct(3),
    "warner": DesignMechanism(from_definition({"name": "warner", "p": 0.75}, ["Yes", "No"])),
    "forced, not ε-LDP": DesignMechanism(from_definition({"name": "forced", "p": 0.7, "forced": [0.3, 0]},
                                                         ["Yes", "No"])),
    "design on each tick": TickDesignMechanism(3, tick_design({"name": "warner", "p": 0.8})),
    "unary": multi_mechanism(4, 2.0), "unary asked directly": direct_multi(4),
    "laplace": laplace(20, 1.0), "grid": grid_mechanism(20, 4, 1.0), "grid asked directly": direct_grid(20),
    "list": list_mechanism(3, 1.0), "plain list": list_mechanism(3, None),
}


def test_the_examples_cover_every_randomizer():
    assert {type(example) for example in EXAMPLES.values()} == set(randomizers())


@pytest.mark.parametrize("name", EXAMPLES)
def test_each_randomizer_follows_the_protocol(name):
    r = EXAMPLES[name]
    assert isinstance(r, Randomizer)
    assert isinstance(r.k, int) and r.k >= 2
    assert r.protected == math.isfinite(r.epsilon)
    if r.protected:
        assert 0 < r.epsilon <= r.declared_epsilon + 1e-12
    assert r.threshold is None if r.design is not None else isinstance(r.threshold, int)
    json.dumps(r.as_dict())
    notes = importlib.import_module(r.proof).__doc__ or ""
    assert r.proof.startswith("deniable.client.") and "ε" in notes, r.proof


def test_the_protocol_names_the_members_the_surfaces_ask():
    members = {name for name in vars(Randomizer) if not name.startswith("_")}
    assert {"k", "threshold", "protected", "epsilon", "declared_epsilon", "design", "as_dict"} <= members
