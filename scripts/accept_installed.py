"""Nothing lost, through the installed package: the acceptance of issue "Nothing lost", as a user walks it.

    /tmp/venv/bin/python scripts/accept_installed.py --workdir /tmp/accept    # what scripts/test_wheel.sh runs

Run it with the Python of a venv that has deniable installed from the wheel (not editable), from
outside the checkout.  With that venv's ``deniable`` command it

1. imports a survey with display logic (a required question asked only of some respondents, an
   optional one behind it, every question type) and opens it;
2. starts ``deniable serve`` and sends ``--responses`` single submissions with diverse answers (each
   answer drawn at random from all its possible reports, following the display logic:
   scripts/loadgen.py) to ``POST /api/v1/surveys/SLUG/responses``, one request each, every one
   expected to answer 201; opens the builder and the survey's results, cross-tab, subgroups and
   regression pages (200);
3. checks that every surface counts exactly what was acknowledged: ``deniable estimate --db``
   (``n_responses``, each question's n, each single choice's reported counts), its ``--crosstab``
   (``n = N answered both``), ``deniable export`` (one row per response) and ``deniable estimate`` of
   that export (the same numbers), and ``deniable check``;
4. fills the survey further with ``deniable simulate --db`` and checks again;
5. on a copy of tests/data/lossy-22e6eeb.db (written by 22e6eeb, whose answer patterns lost most
   single submissions): ``deniable check`` fails, ``--repair`` rebuilds it, and the export then
   holds every response.

Exits 1 with every failure listed (and the server's output) if anything disagrees.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

SCRIPTS = Path(__file__).resolve().parent
sys.path.insert(0, str(SCRIPTS))
from loadgen import LOAD_ENV, make_reports  # noqa: E402
from smoke_installed import Server, Session  # noqa: E402

OWNER, PASSWORD = "owner@accept.invalid", "a-long-passphrase-nobody-guesses-9"
SURVEY = {
    "slug": "branching", "title": "Branching",
    "questions": [
        {"id": "smoke", "text": "Do you smoke?", "options": ["Yes", "No", "Used to"]},
        {"id": "daily", "text": "Every day?", "options": ["Yes", "No"], "epsilon": 1.0,
         "show_if": {"question": "smoke", "in": ["Yes", "Used to"]}},
        {"id": "age", "text": "Age group", "options": ["18-29", "30-49", "50-64", "65+"], "page_break": True},
        {"id": "drugs", "text": "Drugs in the last year?", "options": ["Yes", "No"], "epsilon": 1.0},
        {"id": "cheat", "text": "Cheated?", "options": ["Never", "Once", "More"], "epsilon": 2.0, "required": False},
        {"id": "region", "text": "Region", "options": ["North", "South", "East", "West"]},
        {"id": "again", "text": "Again this year?", "options": ["Yes", "No"], "epsilon": 1.0, "required": False,
         "show_if": {"question": "region", "in": ["North", "East"]}},
        {"id": "used", "text": "Which have you used?", "type": "multi", "options": ["Cannabis", "Cocaine", "Ecstasy"],
         "epsilon": 2.0, "required": False},
        {"id": "drinks", "text": "Drinks last week?", "type": "numeric", "min": 0, "max": 20, "epsilon": 1.0,
         "required": False},
        {"id": "shoplifting", "text": "How many apply?", "type": "list",
         "items": ["I own a bicycle", "I have been abroad", "I read a book"],
         "sensitive": "I took something from a shop without paying", "epsilon": 1.0},
    ],
}
CHOICES = {q["id"] for q in SURVEY["questions"] if "type" not in q}
TRUTH = {"smoke": [0.2, 0.6, 0.2], "daily": [0.5, 0.5], "age": [0.25] * 4, "drugs": [0.2, 0.8],
         "cheat": [0.6, 0.3, 0.1], "region": [0.25] * 4, "again": [0.3, 0.7], "used": [0.3, 0.05, 0.1],
         "drinks": {"values": [0, 2, 5, 10, 20], "probabilities": [0.3, 0.3, 0.2, 0.15, 0.05]},
         "shoplifting": {"control": [0.1, 0.3, 0.4, 0.2], "sensitive": 0.15}}


class Acceptance:
    def __init__(self, deniable_bin: Path, workdir: Path, checkout: Path):
        self.bin, self.work, self.checkout = deniable_bin, workdir, checkout
        self.db = workdir / "accept.db"
        self.failures: list[str] = []

    def run(self, *args, expect: int = 0) -> subprocess.CompletedProcess:
        result = subprocess.run([str(self.bin), *map(str, args)], capture_output=True, text=True, timeout=600,
                                cwd=self.work)
        if result.returncode != expect:
            self.failures.append(f"deniable {' '.join(map(str, args))}: exit {result.returncode}, expected {expect}: "
                                 f"{(result.stderr or result.stdout).strip()[-400:]}")
        return result

    def same(self, what: str, found, expected) -> None:
        if found != expected:
            self.failures.append(f"{what}: {found}, expected {expected}")

    def estimate(self, *source) -> dict:
        result = self.run("estimate", *source, "--format", "json")
        return json.loads(result.stdout) if result.returncode == 0 else {"n_responses": None, "questions": []}

    def surfaces(self, acked: list[dict], where: str) -> None:
        """Every surface against what was acknowledged (``acked``: the reports of each 201)."""
        slug, n = SURVEY["slug"], len(acked)
        document = self.estimate("--db", self.db, slug)
        self.same(f"{where}: estimate --db n_responses", document["n_responses"], n)
        for q in document["questions"]:
            self.same(f"{where}: estimate --db {q['id']} n", q["n"], sum(q["id"] in r for r in acked))
            if q["id"] in CHOICES:  # a single choice: its reported counts
                counts = Counter(r[q["id"]] for r in acked if q["id"] in r)
                self.same(f"{where}: estimate --db {q['id']} reported counts",
                          [o["noisy_count"] for o in q["options"]], [counts[i] for i in range(len(q["options"]))])
        both = sum("age" in r and "daily" in r for r in acked)
        crosstab = self.run("estimate", "--db", self.db, slug, "--crosstab", "age", "daily").stdout
        if f"n = {both} answered both" not in crosstab:
            self.failures.append(f"{where}: the cross-tab of age × daily does not say n = {both}: {crosstab[:300]}")
        out = self.work / f"export-{where}"
        self.run("export", slug, "--db", self.db, "-o", out)
        rows = [line for line in (out / f"{slug}-responses.csv").read_text(encoding="utf-8").splitlines()
                if not line.startswith("#")][1:]
        self.same(f"{where}: rows of the export", len(rows), n)
        back = self.estimate(out / f"{slug}-codebook.json", out / f"{slug}-responses.csv")
        self.same(f"{where}: estimate of the export", _numbers(back), _numbers(document))
        self.run("check", "--db", self.db)

    def all(self) -> None:
        definition = self.work / "branching.json"
        definition.write_text(json.dumps(SURVEY), encoding="utf-8")
        (self.work / "truth.json").write_text(json.dumps(TRUTH), encoding="utf-8")
        self.run("create-researcher", OWNER, "--db", self.db, "--password", PASSWORD)
        self.run("import", definition, "--db", self.db, "--open", "--owner", OWNER)
        from deniable.server.survey.definition import parse_definition

        reports = make_reports(parse_definition(SURVEY), self.responses, seed=int(time.time()))
        server = Server(self.bin, self.db, self.work, env=LOAD_ENV, demo=False)
        acked = []
        try:
            server.wait()
            session = Session(server.base, self.failures, {})
            for body in reports:
                status, _, answer = session.request(f"/api/v1/surveys/{SURVEY['slug']}/responses",
                                                    data=json.dumps({"reports": body}).encode(),
                                                    headers={"Content-Type": "application/json"}, method="POST")
                if session.check("POST a response", status, 201, answer):
                    acked.append(body)
            session.login(OWNER, PASSWORD)
            for page in ("/dashboard/new", *(f"/dashboard/{SURVEY['slug']}/{p}" for p in
                                             ("edit", "results", "crosstab", "subgroups", "regression"))):
                session.get(page)
        finally:
            server.stop()
            self.server_output = server.output()
        print(f"{len(acked)} single submissions acknowledged, {len({json.dumps(r, sort_keys=True) for r in acked})} "
              "distinct answer vectors")
        self.same("acknowledged", len(acked), len(reports))
        self.surfaces(acked, "served")
        self.run("simulate", definition, "--n", 200, "--seed", 1, "--truth", self.work / "truth.json", "--db", self.db)
        if self.estimate("--db", self.db, SURVEY["slug"])["n_responses"] != len(acked) + 200:
            self.failures.append("simulate --db did not add its 200 responses")
        self.run("check", "--db", self.db)
        self.lossy()

    def lossy(self) -> None:
        golden = json.loads((self.checkout / "tests/data/lossy-22e6eeb.json").read_text(encoding="utf-8"))
        db = self.work / "lossy.db"
        shutil.copy(self.checkout / "tests/data/lossy-22e6eeb.db", db)
        self.run("check", "--db", db, expect=1)
        self.run("check", "--db", db, "--repair")
        self.run("check", "--db", db)
        for slug, survey in golden["surveys"].items():
            out = self.work / f"lossy-{slug}"
            self.run("export", slug, "--db", db, "-o", out)
            rows = [line for line in (out / f"{slug}-responses.csv").read_text(encoding="utf-8").splitlines()
                    if not line.startswith("#")][1:]
            self.same(f"lossy-22e6eeb.db repaired: rows of the {slug} export", len(rows), survey["responses"])


def _numbers(document: dict) -> dict:
    """What must agree between two estimate documents: n_responses, each question's n and reported counts."""
    return {"n_responses": document["n_responses"],
            **{q["id"]: (q["n"], [o.get("noisy_count") for o in q.get("options", [])]) for q in document["questions"]}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--responses", type=int, default=400)
    args = parser.parse_args()
    import deniable

    where = Path(deniable.__file__).resolve().parent
    deniable_bin = Path(sys.executable).parent / "deniable"
    if "site-packages" not in where.parts or not deniable_bin.exists():
        print(f"accept_installed.py: deniable comes from {where}, not from an installed wheel", file=sys.stderr)
        return 1
    args.workdir.mkdir(parents=True, exist_ok=True)
    accept = Acceptance(deniable_bin, args.workdir.resolve(), SCRIPTS.parent)
    accept.responses, accept.server_output = args.responses, ""
    started = time.monotonic()
    try:
        accept.all()
    except Exception as exc:  # noqa: BLE001 (listed with the rest)
        accept.failures.append(f"{type(exc).__name__}: {exc}")
    if accept.failures:
        print(f"\nFAILED: {len(accept.failures)} problem(s):", file=sys.stderr)
        for failure in accept.failures:
            print(f"  - {failure}", file=sys.stderr)
        print(accept.server_output, file=sys.stderr)
        return 1
    print(f"nothing lost through the installed package: OK ({time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
