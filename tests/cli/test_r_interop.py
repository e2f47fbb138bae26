"""The README's R snippet, run in R on a real export: the codebook's matrix gives R the estimates
``deniable estimate`` prints (the unbiased ``M⁻¹ · report shares``), for a forced design, a custom
three-answer design and k-ary randomized response."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from deniable.server.cli import cli

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SURVEY = {"slug": "student-life", "title": "Student life", "questions": [
    {"id": "cheated", "text": "Did you cheat?", "options": ["Yes", "No"],
     "design": {"name": "forced", "p": 0.6, "forced": [0.25, 0.15]}},
    {"id": "graded", "text": "How often?", "options": ["Never", "Once", "Often"],
     "design": {"name": "custom", "matrix": [[0.7, 0.2, 0.1], [0.2, 0.6, 0.2], [0.1, 0.2, 0.7]]}},
    {"id": "drugs", "text": "Drugs?", "options": ["Never", "Once", "Often"], "epsilon": 2.0},
    {"id": "year", "text": "Year", "options": ["First", "Second"]},
]}
TRUTH = {"cheated": [0.3, 0.7], "graded": [0.5, 0.3, 0.2], "drugs": [0.6, 0.3, 0.1], "year": [0.5, 0.5]}


def readme_snippet() -> str:
    """The R code block of the README's "In R" section, exactly as shown."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## In R"):]
    return re.search(r"```r\n(.*?)```", section, re.S).group(1)


def run(*args) -> str:
    result = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_the_readme_r_snippet_gives_deniable_estimates_unbiased_numbers(tmp_path):
    if not shutil.which("Rscript"):
        pytest.fail("R is needed (scripts/test.sh installs r-base and r-cran-jsonlite)")
    (tmp_path / "survey.json").write_text(json.dumps(SURVEY), encoding="utf-8")
    (tmp_path / "truth.json").write_text(json.dumps(TRUTH), encoding="utf-8")
    db = tmp_path / "deniable.db"
    run("import", tmp_path / "survey.json", "--db", db, "--open")
    run("simulate", tmp_path / "survey.json", "--n", 800, "--seed", 4, "--truth", tmp_path / "truth.json",
        "--db", db)
    exports = tmp_path / "exports"
    exports.mkdir()
    run("export", "student-life", "--db", db, "-o", exports)
    ours = json.loads(run("estimate", exports / "student-life-codebook.json",
                          exports / "student-life-responses.csv", "--format", "json"))
    snippet = readme_snippet()
    for qid in ("cheated", "graded", "drugs"):
        code = snippet.replace('"cheated"', f'"{qid}"').replace("$cheated", f"${qid}")
        code = code.replace('"exports/', f'"{exports}/') + "\ncat(format(solve(M, as.numeric(shares)), digits = 17))\n"
        done = subprocess.run(["Rscript", "-e", code], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        from_r = [float(v) for v in done.stdout.split()[-len(TRUTH[qid]):]]
        estimates = [o["estimate"] for q in ours["questions"] if q["id"] == qid for o in q["options"]]
        assert from_r == pytest.approx(estimates, abs=1e-9), qid
