"""``GET /dashboard/SLUG/report``: the methods report for a researcher who may see the survey's results —
the very file ``deniable report`` writes from the same database — and the same refusal as the results page
for everyone else."""

from __future__ import annotations

import base64
import hashlib
import html
import re
import subprocess
import sys
from pathlib import Path

from support.dashboard import EMAIL, ensure_researcher, login, own, share_survey

ROOT = Path(__file__).resolve().parents[2]
DENIABLE = Path(sys.executable).parent / "deniable"
OTHER = "bob@example.org"
VIEWER = "vera@example.org"


def run(*args, cwd=None) -> subprocess.CompletedProcess:
    result = subprocess.run([str(DENIABLE), *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=300)
    assert result.returncode == 0, result.stderr
    return result


def fill(app):
    """examples/survey.json, open, with simulated responses, owned by the test researcher."""
    db = app.config["DATABASE"]
    run("import", ROOT / "examples" / "survey.json", "--db", db, "--open")
    run("simulate", ROOT / "examples" / "survey.json", "--n", 300, "--truth", ROOT / "examples" / "truth.json",
        "--seed", 5, "--db", db)
    own(app, "student-life", EMAIL)


def logged_in(app, email):
    ensure_researcher(app, email)
    client = app.test_client()
    assert login(client, email=email).status_code == 302
    return client


def test_the_owner_gets_the_file_deniable_report_writes(app, tmp_path):
    fill(app)
    response = logged_in(app, EMAIL).get("/dashboard/student-life/report")
    assert response.status_code == 200
    assert response.mimetype == "text/html"
    body = response.get_data(as_text=True)
    written = run("report", "student-life", "--db", app.config["DATABASE"], "-o", tmp_path / "r.html")
    assert written.stdout.strip() == str(tmp_path / "r.html")
    assert body == (tmp_path / "r.html").read_text(encoding="utf-8")  # the same bytes
    for qid in ("drugs", "cheated", "year"):
        assert f'id="q-{qid}"' in body
    # its own policy: its one inline stylesheet, by hash, and nothing else
    policy = response.headers["Content-Security-Policy"]
    style = re.search(r"<style>(.*?)</style>", body, re.S).group(1)
    digest = base64.b64encode(hashlib.sha256(style.encode("utf-8")).digest()).decode()
    assert f"style-src 'sha256-{digest}'" in policy and "default-src 'none'" in policy
    meta = html.unescape(re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', body).group(1))
    assert policy == f"{meta}; frame-ancestors 'none'"  # the file carries the policy where no server sends it
    assert response.headers["Cache-Control"] == "no-store"


def test_a_viewer_may_read_it_and_someone_without_access_may_not(app):
    fill(app)
    share_survey(app, "student-life", VIEWER, "viewer")
    assert logged_in(app, VIEWER).get("/dashboard/student-life/report").status_code == 200
    refused = logged_in(app, OTHER).get("/dashboard/student-life/report")
    assert refused.status_code == 404  # as the results page: as if there were no such survey
    assert "Student life" not in refused.get_data(as_text=True)
    assert logged_in(app, OTHER).get("/dashboard/student-life/results").status_code == 404
    anonymous = app.test_client().get("/dashboard/student-life/report")
    assert anonymous.status_code in (302, 303) and "/auth/login" in anonymous.headers["Location"]
    assert logged_in(app, EMAIL).get("/dashboard/no-such-survey/report").status_code == 404
