"""deniable simulate's truth for the two-group designs, non-compliance included: the truth's forms and their
field errors, and reports whose per-group shares of Yes are the model's P(yes | group) (RRreg's
parameterization, written out here) at the simulated prevalence, cheaters and truthful share."""

from __future__ import annotations

import numpy as np
import pytest

from deniable.server.survey.definition import parse_definition
from deniable.server.survey.simulate import TruthError

DEFINITION = {"slug": "s", "title": "S", "questions": [
    {"id": "cdm", "type": "two_group", "model": "CDM", "p": [0.3, 0.7], "text": "A?"},
    {"id": "sym", "type": "two_group", "model": "CDMsym", "p": [0.2, 0.1, 0.7, 0.15], "text": "B?"},
    {"id": "sld", "type": "two_group", "model": "SLD", "p": [0.25, 0.75], "text": "C?"},
    {"id": "uqt", "type": "two_group", "model": "UQTunknown", "p": [0.8, 0.3], "text": "D?", "unrelated": "E?"},
]}
SURVEY = parse_definition(DEFINITION)


def _yes_shares(qid, truth, n=400_000):
    q = SURVEY.question(qid)
    codes = q.qtype.simulate(q, q.qtype.truth(q, truth, qid), n, np.random.default_rng(7))
    group, answer = codes // 2, codes % 2
    return np.array([np.mean(answer[group == g] == 0) for g in (0, 1)]), q


@pytest.mark.parametrize(("qid", "truth", "expected"), [
    ("cdm", {"prevalence": 0.3, "cheaters": 0.2},  # π (honest carriers) = 0.3 · 0.8, γ = 0.2
     lambda p: 0.24 + (1 - 0.24 - 0.2) * p),
    ("cdm", 0.3, lambda p: 0.3 + 0.7 * p),
    ("sym", {"prevalence": 0.4, "cheaters": 0.1},
     lambda p: np.array([0.36 * (1 - p[1]) + (1 - 0.36 - 0.1) * p[0], 0.36 * (1 - p[3]) + (1 - 0.36 - 0.1) * p[2]])),
    ("sld", {"prevalence": 0.3, "truthful": 0.6}, lambda p: 0.3 * 0.6 + 0.7 * (1 - p)),
    ("uqt", {"sensitive": 0.3, "unrelated": 0.5}, lambda p: p * 0.3 + (1 - p) * 0.5),
])
def test_the_simulated_shares_are_the_models(qid, truth, expected):
    shares, _ = _yes_shares(qid, truth)
    q = SURVEY.question(qid)
    p = np.array(q.qtype.to_dict(q)["p"], dtype=float)  # as defined; the realized p are within 2^-32
    assert shares == pytest.approx(np.asarray(expected(p), dtype=float), abs=0.004)


@pytest.mark.parametrize(("qid", "truth", "message"), [
    ("cdm", {"prevalence": 0.3}, 'must be a share or {"prevalence": share, "cheaters": share}'),
    ("cdm", {"prevalence": 0.3, "truthful": 0.5}, '"cheaters": share'),
    ("sld", {"prevalence": 0.3, "cheaters": 0.5}, '"truthful": share'),
    ("sld", {"prevalence": 0.3, "truthful": 1.5}, "truthful must be a share between 0 and 1"),
    ("uqt", 0.3, 'must be {"sensitive": share, "unrelated": share}'),
])
def test_a_bad_truth_says_what_it_must_be(qid, truth, message):
    q = SURVEY.question(qid)
    with pytest.raises(TruthError) as caught:
        q.qtype.truth(q, truth, qid)
    assert message in str(caught.value)
