"""The two-group models' p lengths stand in three tables, each kept where its import cost allows: the
browser's twin (client/two_group.py), the estimators (estimators/two_group.py) and the command line's
readers (server/survey/readers.py, import-free for start-up).  They must agree."""

from deniable.client.two_group import INSTRUCTIONS, P_LENGTH
from deniable.estimators.two_group import MODELS
from deniable.server.survey.readers import RRREG_TWO_GROUP


def test_the_three_tables_of_p_lengths_agree():
    assert P_LENGTH == RRREG_TWO_GROUP == {name: model.p_length for name, model in MODELS.items()}
    assert set(INSTRUCTIONS) == set(P_LENGTH)
