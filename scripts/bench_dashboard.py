"""Time every dashboard page and API answer of a survey with many stored responses; print a table.

    python scripts/bench_dashboard.py               # 1,000,000 responses
    python scripts/bench_dashboard.py --n 10000000 --repeat 5
    python scripts/bench_dashboard.py --n 1000000 --repeat 3 --json   # the figures as JSON
    python scripts/bench_dashboard.py --types       # and a survey of a Laplace and a 9-option check-all question

``--types`` adds a second survey of the same size whose protected questions the answer patterns
leave out (a discrete Laplace number and a check-all question of 9 options, beside two questions
asked directly), and times its results page raked to population margins: read from the raking
cells, never the rows.

Creates a database in a temporary folder with an open three-question survey, stores ``--n``
randomized responses through ``deniable.server.store.responses.insert_many`` (counts and answer
patterns kept current as it goes), logs in with the Flask test client and renders every page of
the survey: the first render (which computes the exact interval endpoints and reads the answer
patterns, both then cached) apart from the median of ``--repeat`` more.  The responses exports
read every row by design (they are the rows): they are timed too, and marked.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from deniable.client.randomizer import randomize  # noqa: E402
from deniable.server.web.app import create_app  # noqa: E402
from deniable.server.store.accounts import set_researcher  # noqa: E402
from deniable.server.store.db import connect  # noqa: E402
from deniable.server.survey.definition import parse_definition  # noqa: E402
from deniable.server.store.responses import insert_many  # noqa: E402
from deniable.server.store.surveys import insert_survey  # noqa: E402

DEFINITION = {
    "slug": "bench", "title": "Benchmark", "description": "",
    "questions": [
        {"id": "drugs", "text": "Used drugs this year?", "options": ["Yes", "No"], "epsilon": 1.0},
        {"id": "cheat", "text": "How often cheated?", "options": ["Never", "Once", "Sometimes", "Often"],
         "epsilon": 2.0},
        {"id": "age", "text": "Age group", "options": ["<30", "30-49", "50+"]},
    ],
}
TYPES = {
    "slug": "types", "title": "Benchmark, types outside the answer patterns", "description": "",
    "questions": [
        {"id": "hours", "text": "Hours?", "type": "numeric", "min": 0, "max": 20, "step": 0.5, "epsilon": 2.0,
         "mechanism": "laplace"},
        {"id": "used", "text": "Which?", "type": "multi", "options": [f"Thing {i}" for i in range(9)], "epsilon": 3.0},
        {"id": "age", "text": "Age group", "options": ["<30", "30-49", "50+"]},
        {"id": "sex", "text": "Sex", "options": ["Female", "Male"]},
    ],
}
RAKE = "rake=" + quote(json.dumps({"age": {"<30": 0.3, "30-49": 0.4, "50+": 0.3}}))
EMAIL, PASSWORD = "bench@example.org", "benchmark password"


def random_codes(survey, n: int, rng) -> dict[str, np.ndarray]:
    """Uniformly random possible reports of every question, as codes."""
    columns = {}
    for q in survey.questions:
        codes = rng.integers(0, q.qtype.n_cells(q), size=n)
        while (bad := q.qtype.invalid_codes(q, codes)).any():
            codes[bad] = rng.integers(0, q.qtype.n_cells(q), size=int(bad.sum()))
        columns[q.id] = codes
    return columns


def timed(client, url: str) -> tuple[float, int]:
    start = time.perf_counter()
    response = client.get(url)
    elapsed = time.perf_counter() - start
    if response.status_code != 200:
        raise SystemExit(f"{url}: HTTP {response.status_code}")
    return elapsed * 1000, len(response.data)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="responses to store (default 10^6)")
    parser.add_argument("--repeat", type=int, default=7, help="renders after the first (default 7)")
    parser.add_argument("--no-row-exports", action="store_true",
                        help="skip the responses exports, the only pages that read every row (O(n))")
    parser.add_argument("--json", action="store_true",
                        help="print the figures as one JSON object instead of the table")
    parser.add_argument("--types", action="store_true",
                        help="also a survey of a Laplace and a 9-option check-all question, raked (see above)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "bench.db")
        app = create_app({"DATABASE": path, "SECRET_KEY": "bench", "TESTING": True})
        db = connect(path)
        owner = set_researcher(db, EMAIL, PASSWORD)
        stored = insert_survey(db, parse_definition(DEFINITION), status="open", target_n=args.n, owner_id=owner)
        rng = np.random.default_rng(2024)
        truth = {"drugs": rng.choice(2, args.n, p=[0.2, 0.8]), "cheat": rng.choice(4, args.n, p=[0.6, 0.2, 0.15, 0.05])}
        columns = {qid: randomize(values, stored.survey.question(qid).k, stored.survey.question(qid).epsilon, rng)
                   for qid, values in truth.items()}
        columns["age"] = rng.choice(3, args.n)
        start = time.perf_counter()
        insert_many(db, stored, columns)
        if args.types:
            types = insert_survey(db, parse_definition(TYPES), status="open", target_n=args.n, owner_id=owner)
            insert_many(db, types, random_codes(types.survey, args.n, rng))
        load_s = time.perf_counter() - start
        db.conn.close()

        client = app.test_client()
        page = client.get("/auth/login").get_data(as_text=True)
        token = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page).group(1)
        assert client.post("/auth/login", data={"csrf_token": token, "email": EMAIL, "password": PASSWORD}).status_code == 302

        rows = []
        for label, url in [
            ("results, exact 95%", "/dashboard/bench/results"),
            ("results, exact 99% simultaneous", "/dashboard/bench/results?confidence=0.99&simultaneous=y"),
            ("results, wilson 95%", "/dashboard/bench/results?method=wilson"),
            ("results, likelihood 95%", "/dashboard/bench/results?method=likelihood"),
            ("estimates API, exact 95%", "/api/v1/surveys/bench/estimates"),
            ("estimates export JSON", "/dashboard/bench/export/estimates.json"),
            ("estimates export CSV", "/dashboard/bench/export/estimates.csv"),
            ("survey list", "/dashboard/"),
            ("design and planning", "/dashboard/bench/edit"),
            ("definition export", "/dashboard/bench/definition.json"),
            ("codebook export", "/dashboard/bench/export/codebook.json"),
            ("cross-tab drugs × cheat", "/dashboard/bench/crosstab?row=drugs&col=cheat"),
            ("subgroups cheat by age", "/dashboard/bench/subgroups?question=cheat&by=age"),
            ("regression (default model)", "/dashboard/bench/regression"),
            ("regression cheat ~ age (multinomial)", "/dashboard/bench/regression?formula=cheat+~+age"),
            ("results over time (monitoring=1)", "/dashboard/bench/results?monitoring=1"),
            ("monitoring page", "/dashboard/bench/monitoring?question=cheat"),
            ("publish page", "/dashboard/bench/publish"),
            ("preview", "/dashboard/bench/preview"),
            ("results raked to age margins", f"/dashboard/bench/results?{RAKE}"),
            ("cross-tab drugs × cheat, raked", f"/dashboard/bench/crosstab?row=drugs&col=cheat&{RAKE}"),
            ("subgroups cheat by age, raked", f"/dashboard/bench/subgroups?question=cheat&by=age&{RAKE}"),
            *([("types: results", "/dashboard/types/results"),
               ("types: results raked to age margins", f"/dashboard/types/results?{RAKE}")] if args.types else []),
            *([] if args.no_row_exports else [
                ("responses export CSV (every row)", "/dashboard/bench/export/responses.csv"),
                ("responses export Parquet (every row)", "/dashboard/bench/export/responses.parquet")]),
        ]:
            first, size = timed(client, url)
            times = [timed(client, url)[0] for _ in range(args.repeat)]
            rows.append((label, first, statistics.median(times), max(times), size))

    if args.json:
        print(json.dumps({
            "n": args.n, "load_s": load_s, "repeat": args.repeat,
            "pages": [{"page": label, "first_ms": first, "median_ms": median, "max_ms": worst, "bytes": size}
                      for label, first, median, worst, size in rows],
        }, indent=1))
        return
    print(f"deniable dashboard benchmark: {args.n:,} stored responses (loaded in {load_s:.1f} s), "
          f"median of {args.repeat} renders after the first")
    print(f"{'page':<38} {'first ms':>9} {'median ms':>10} {'max ms':>8} {'bytes':>12}")
    for label, first, median, worst, size in rows:
        print(f"{label:<38} {first:>9.1f} {median:>10.1f} {worst:>8.1f} {size:>12,}")


if __name__ == "__main__":
    main()
