"""Shared pieces of the fuzz tests: hypothesis settings profiles, JSON and definition
strategies, and a snapshot of every table (to assert that a refused input changed nothing).

Profiles (pick one with ``DENIABLE_FUZZ_PROFILE``; the default is ``fuzz``):

``fuzz``           100 examples per test, no deadline: the whole fuzz suite in about a minute.
``fuzz-thorough``  2000 examples per test, for a run before a release.
``fuzz-quick``     20 examples per test, for a smoke run.

Each test draws fresh examples every run (hypothesis' example database in ``.hypothesis/``
replays earlier failures first).
"""

from __future__ import annotations

import os
import sqlite3

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from deniable.server.survey.definition import QUESTION_ID_RE, SLUG_RE

_COMMON = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large]}
settings.register_profile("fuzz", max_examples=100, **_COMMON)
settings.register_profile("fuzz-thorough", max_examples=2000, **_COMMON)
settings.register_profile("fuzz-quick", max_examples=20, **_COMMON)
PROFILE = os.environ.get("DENIABLE_FUZZ_PROFILE", "fuzz")
FUZZ = settings(settings.get_profile(PROFILE))
# For tests where each example costs a password hash (about 0.1 s).
FUZZ_SLOW = settings(FUZZ, max_examples=max(10, FUZZ.max_examples // 3))

# JSON as Python's ``json`` produces and accepts it: NaN and ±Infinity included, and integers
# far beyond 64 bits (``10**400`` overflows a float).
json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.sampled_from([2**53 + 1, 2**63, -(2**63) - 1, 10**400]),
    st.floats(), st.text(max_size=10),
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(st.lists(children, max_size=4),
                               st.dictionaries(st.text(max_size=8), children, max_size=4)),
    max_leaves=12,
)


@st.composite
def mostly(draw, good, bad_one_in: int = 20):
    """A value of ``good``, or once in ``bad_one_in`` draws any JSON value instead."""
    if draw(st.integers(0, bad_one_in - 1)) == 0:
        return draw(json_values)
    return draw(good)


@st.composite
def _maybe_drop_key(draw, mapping: dict, one_in: int = 12) -> dict:
    if mapping and draw(st.integers(0, one_in - 1)) == 0:
        mapping = dict(mapping)
        mapping.pop(draw(st.sampled_from(sorted(mapping))))
    return mapping


def near_valid_question():
    label = st.text(min_size=1, max_size=12)
    epsilon = st.one_of(st.floats(min_value=0.01, max_value=20), st.integers(1, 20), st.none(),
                        st.floats(), st.integers())
    question = st.fixed_dictionaries(
        {"id": mostly(st.one_of(st.from_regex(QUESTION_ID_RE, fullmatch=True),
                                st.sampled_from(["q", "q", "csrf_token"]))),
         "text": mostly(st.text(min_size=1, max_size=30)),
         "options": mostly(st.lists(mostly(label), min_size=1, max_size=5))},
        optional={"epsilon": mostly(epsilon), "required": mostly(st.booleans())},
    )
    extra = st.dictionaries(st.sampled_from(["extra", "Epsilon"]), json_values, max_size=1)
    return st.builds(lambda q, e: {**q, **e}, question, st.one_of(st.just({}), st.just({}), extra)).flatmap(
        _maybe_drop_key)


def near_valid_definition():
    """Definitions that are mostly well-formed, so that the fuzzing reaches the inner checks."""
    definition = st.fixed_dictionaries(
        {"slug": mostly(st.from_regex(SLUG_RE, fullmatch=True)),
         "title": mostly(st.text(min_size=1, max_size=30)),
         "questions": mostly(st.lists(mostly(near_valid_question()), min_size=1, max_size=4))},
        optional={"description": mostly(st.text(max_size=30))},
    )
    return definition.flatmap(_maybe_drop_key)


def table_snapshot(conn: sqlite3.Connection) -> dict[str, list[tuple]]:
    """Every row of every table and view (surveys, questions, the view responses, counts, researchers, …)
    but the scrubber's own counter, which its timer moves whatever the requests do."""
    tables = [r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' "
        "AND name != 'scrub' ORDER BY name")]
    return {t: sorted(conn.execute(f'SELECT * FROM "{t}"').fetchall(), key=repr) for t in tables}
