"""Make a database written by an earlier deniable, for the upgrade tests (tests/store/test_compat.py).

From this checkout's folder::

    .venv/bin/python scripts/make_compat_db.py --revision 7ad577a tests/data

writes ``tests/data/compat-7ad577a.db`` and ``compat-7ad577a.json`` with the code of that revision:
the script extracts the revision (``git archive``, no worktree, nothing in git changes) into a
temporary folder and runs itself again on it, importing ``deniable`` from there instead of from
this checkout (with this venv's packages, so the revision must run with them).  Without
``--revision`` it writes ``compat.db`` and ``compat.json`` with whatever code ``deniable`` imports
— the earlier way: ``OLD_PYTHON scripts/make_compat_db.py tests/data`` with a worktree of the
earlier revision installed in a venv of its own.  ``--name`` chooses another file name.

It stores the revision's examples/habits.json (numeric on the grid and by discrete Laplace, check
all that apply, a list experiment, a direct choice) and its demo survey, each with simulated
respondents (seeded), and writes the JSON beside the database: every survey's definition, design
fingerprint and estimates document as that revision computed them, and the revision.
tests/store/test_compat.py opens each database with today's code and checks each against it.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[1]
SURVEYS = [("examples/habits.json", "examples/habits-truth.json", 500),
           ("examples/survey.json", "examples/truth.json", 400)]


def main(folder: str, name: str, tree: Path, revision: str) -> None:
    import numpy as np

    from deniable.server.store.db import init_db
    from deniable.server.store.responses import insert_many
    from deniable.server.store.surveys import get_survey, insert_survey, survey_stats
    from deniable.server.survey.definition import design_fingerprint, load_definition
    from deniable.server.survey.estimates import Estimates, survey_estimates
    from deniable.server.survey.simulate import load_truth, simulate_dataset

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.db"
    path.unlink(missing_ok=True)
    db = init_db(str(path))
    golden = {"revision": revision, "surveys": {}}
    for definition, truth_file, n in SURVEYS:
        survey = load_definition(tree / definition)
        stored = insert_survey(db, survey, status="open")
        truth = load_truth(tree / truth_file, survey)
        insert_many(db, stored, simulate_dataset(survey, truth, n, np.random.default_rng(2026)).columns)
        stored = get_survey(db, survey.slug)
        results = survey_estimates(stored.survey, survey_stats(db, stored))
        golden["surveys"][survey.slug] = {
            "definition": stored.survey.to_dict(), "fingerprint": design_fingerprint(stored.survey),
            "estimates": Estimates(stored.survey, n, results).to_dict()}
    db.conn.close()
    (out / f"{name}.json").write_text(json.dumps(golden, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {path} and {out / f'{name}.json'} with revision {golden['revision'][:10]}")


def import_from(tree: Path) -> None:
    """Make ``import deniable…`` load the source tree ``tree`` (``deniable`` from ``tree/deniable``,
    its subpackages from the folders ``pyproject.toml`` maps them to: ``tree/server`` and so on)."""
    spec = importlib.util.spec_from_file_location(
        "deniable", tree / "deniable" / "__init__.py", submodule_search_locations=[str(tree / "deniable"), str(tree)])
    module = importlib.util.module_from_spec(spec)
    sys.modules["deniable"] = module
    spec.loader.exec_module(module)
    from deniable.server.store import db

    assert Path(db.__file__).is_relative_to(tree), f"deniable.server.store.db came from {db.__file__}"


def run_at_revision(script: str, folder: str, revision: str, name: str) -> None:
    """Run ``script`` again with ``--tree`` on ``revision`` of this checkout, extracted with ``git archive``
    into a temporary folder (no worktree, nothing in git changes); ``name`` may hold ``{rev}``, the
    revision's first 7 hex digits."""
    full = subprocess.run(["git", "-C", str(CHECKOUT), "rev-parse", "--verify", f"{revision}^{{commit}}"],
                          capture_output=True, text=True, check=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        archive = Path(tmp) / "tree.tar"
        with archive.open("wb") as sink:
            subprocess.run(["git", "-C", str(CHECKOUT), "archive", "--format=tar", full], stdout=sink, check=True)
        with tarfile.open(archive) as tar:
            tar.extractall(Path(tmp) / "tree", filter="data")
        subprocess.run([sys.executable, script, str(Path(folder).resolve()), "--tree", str(Path(tmp) / "tree"),
                        "--revision", full, "--name", name.format(rev=full[:7])], check=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", default="tests/data")
    parser.add_argument("--revision", help="a git revision of this checkout (default: the code deniable imports)")
    parser.add_argument("--name", help="the files' name without suffix (default: compat, or compat-REV)")
    parser.add_argument("--tree", type=Path, help=argparse.SUPPRESS)  # the second run, inside the extracted revision
    args = parser.parse_args()
    if args.tree:
        import_from(args.tree.resolve())
        main(args.folder, args.name, args.tree.resolve(), args.revision)
    elif args.revision:
        run_at_revision(__file__, args.folder, args.revision, args.name or "compat-{rev}")
    else:
        import deniable

        root = Path(deniable.__file__).parents[1]
        head = subprocess.run(["git", "-C", str(root), "log", "-1", "--format=%H"], capture_output=True, text=True)
        main(args.folder, args.name or "compat", root, head.stdout.strip())
