"""Make a database written by deniable 22e6eeb from single submissions, for the repair tests
(tests/store/test_repair.py).  From this checkout's folder::

    .venv/bin/python scripts/make_lossy_db.py --revision 22e6eeb tests/data

writes ``tests/data/lossy-22e6eeb.db`` and ``lossy-22e6eeb.json`` with the code of that revision
(extracted as scripts/make_compat_db.py does).  Up to 22e6eeb a single submission whose answer
pattern fell in a full bucket was stored but not counted in the answer patterns; the database holds
two surveys answered one respondent at a time with diverse answers over two days: ``branching``
(eight single choices, two of them asked only of some respondents, 420 responses) and
examples/habits.json (every other question type, 150 responses).  The JSON beside it lists each
survey's number of responses and per-option counts as the stored reports hold them.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from make_compat_db import import_from, run_at_revision  # noqa: E402

BRANCHING = {
    "slug": "branching", "title": "Branching",
    "questions": [
        {"id": "smoke", "text": "Do you smoke?", "options": ["Yes", "No"]},
        {"id": "daily", "text": "Every day?", "options": ["Yes", "No"], "epsilon": 1.0,
         "show_if": {"question": "smoke", "in": ["Yes"]}},
        {"id": "age", "text": "Age group", "options": ["18-29", "30-49", "50-64", "65+"]},
        {"id": "drugs", "text": "Drugs in the last year?", "options": ["Yes", "No"], "epsilon": 1.0},
        {"id": "cheat", "text": "Cheated?", "options": ["Never", "Once", "More"], "epsilon": 2.0, "required": False},
        {"id": "region", "text": "Region", "options": ["North", "South", "East"]},
        {"id": "again", "text": "Again this year?", "options": ["Yes", "No"], "epsilon": 1.0,
         "show_if": {"question": "region", "in": ["North", "East"]}},
        {"id": "tax", "text": "Evaded tax?", "options": ["Yes", "No"], "epsilon": 0.5},
    ],
}
DAYS = ("2026-11-20", "2026-11-21")


def store_one(db, stored, clean: dict, day: str) -> None:
    """One submission as the server stores it at this revision: one transaction, then the slots' growth."""
    from deniable.server.store import slots
    from deniable.server.store.db import write_transaction
    from deniable.server.store.responses import insert_validated

    with write_transaction(db):
        insert_validated(db, stored, clean, None, day)
        due = slots.growth_due(db.conn, stored.id)
    while due:
        with write_transaction(db):
            due = slots.grow_step(db.conn, stored.id)


def main(folder: str, name: str, tree: Path, revision: str) -> None:
    import numpy as np

    from deniable.server.store.db import init_db
    from deniable.server.store.responses import load_db_dataset
    from deniable.server.store.surveys import get_survey, insert_survey
    from deniable.server.survey import logic
    from deniable.server.survey.definition import load_definition, parse_definition
    from deniable.server.survey.simulate import load_truth, simulate_dataset

    out = Path(folder)
    path = out / f"{name}.db"
    path.unlink(missing_ok=True)
    db = init_db(str(path))
    rng = np.random.default_rng(35)
    branching = insert_survey(db, parse_definition(BRANCHING), status="open")
    for i in range(420):
        clean, asked = {}, {}
        for q in branching.survey.questions:
            asked[q.id] = logic.is_shown(branching.survey, q, asked, clean)
            if asked[q.id] and (q.required or rng.random() < 0.8):
                clean[q.id] = int(rng.integers(q.k))
        store_one(db, branching, clean, DAYS[i % 2])
    habits = load_definition(tree / "examples/habits.json")
    stored = insert_survey(db, habits, status="open")
    data = simulate_dataset(habits, load_truth(tree / "examples/habits-truth.json", habits), 150, rng)
    for i in range(150):
        store_one(db, stored, {qid: int(c[i]) for qid, c in data.columns.items() if c[i] >= 0}, DAYS[i % 2])
    golden = {"revision": revision, "surveys": {}}
    for slug in ("branching", habits.slug):
        rows = load_db_dataset(db, slug)
        survey = get_survey(db, slug).survey
        golden["surveys"][slug] = {
            "responses": rows.n_responses,
            "counts": {q.id: rows.counts(q.id).tolist() for q in survey.questions if q.qtype.categorical}}
    db.conn.close()
    (out / f"{name}.json").write_text(json.dumps(golden, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path} and {out / f'{name}.json'} with revision {revision[:10]}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", default="tests/data")
    parser.add_argument("--revision", required=True, help="a git revision of this checkout")
    parser.add_argument("--name", default="lossy-{rev}", help="the files' name without suffix")
    parser.add_argument("--tree", type=Path, help=argparse.SUPPRESS)  # the second run, inside the extracted revision
    args = parser.parse_args()
    if args.tree:
        import_from(args.tree.resolve())
        main(args.folder, args.name, args.tree.resolve(), args.revision)
    else:
        run_at_revision(__file__, args.folder, args.revision, args.name)
