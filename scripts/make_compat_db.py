"""Make tests/data/compat.db: a database written by an earlier deniable, for the upgrade test.

Run with the *earlier* revision's code (a worktree of it installed in a venv of its own), from this
checkout's folder::

    OLD_PYTHON scripts/make_compat_db.py tests/data

It stores examples/habits.json (numeric on the grid and by discrete Laplace, check all that apply,
a list experiment, a direct choice) and the demo survey, each with simulated respondents (seeded),
and writes ``compat.json`` beside the database: every survey's definition, design fingerprint and
estimates document as that revision computed them.  tests/store/test_compat.py opens the
database with today's code and checks each against it.  The revision used is in compat.json.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from deniable.server.store.db import init_db
from deniable.server.store.responses import insert_many
from deniable.server.store.surveys import get_survey, insert_survey, survey_stats
from deniable.server.survey.definition import design_fingerprint, load_definition
from deniable.server.survey.estimates import estimates_document, survey_estimates
from deniable.server.survey.simulate import load_truth, simulate_dataset

SURVEYS = [("examples/habits.json", "examples/habits-truth.json", 500),
           ("examples/survey.json", "examples/truth.json", 400)]


def main(folder: str) -> None:
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "compat.db"
    path.unlink(missing_ok=True)
    db = init_db(str(path))
    golden = {"revision": subprocess.run(["git", "-C", str(Path(sys.modules["deniable"].__file__).parents[1]),
                                          "log", "-1", "--format=%H"], capture_output=True, text=True).stdout.strip(),
              "surveys": {}}
    for definition, truth_file, n in SURVEYS:
        survey = load_definition(definition)
        stored = insert_survey(db, survey, status="open")
        truth = load_truth(truth_file, survey)
        insert_many(db, stored, simulate_dataset(survey, truth, n, np.random.default_rng(2026)).columns)
        stored = get_survey(db, survey.slug)
        results = survey_estimates(stored.survey, survey_stats(db, stored))
        golden["surveys"][survey.slug] = {
            "definition": stored.survey.to_dict(), "fingerprint": design_fingerprint(stored.survey),
            "estimates": estimates_document(survey.slug, n, results)}
    db.conn.close()
    (out / "compat.json").write_text(json.dumps(golden, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {path} and {out / 'compat.json'} with revision {golden['revision'][:10]}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/data")
