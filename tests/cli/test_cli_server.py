"""``deniable import``, ``export`` and ``serve`` (gunicorn in a subprocess, on a free port)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from deniable.client.submit import submit
from deniable.server.cli import cli
from deniable.server.store.db import connect
from deniable.server.store.demo import DEMO_DEFINITION
from support.store import store_response
from deniable.server.store.surveys import get_survey
from support.serving import free_port, wait_until_serving

ROOT = Path(__file__).resolve().parents[2]
DENIABLE = [sys.executable, "-c", "from deniable.server.cli import cli; cli()"]


@pytest.fixture
def survey_file(tmp_path):
    path = tmp_path / "student-life.json"
    path.write_text(json.dumps({**DEMO_DEFINITION, "slug": "student-life"}), encoding="utf-8")
    return path


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_import_draft_then_open(tmp_path, survey_file):
    db_path = tmp_path / "x.db"
    result = run("import", survey_file, "--db", db_path)
    assert result.exit_code == 0, result.output
    assert "Imported survey 'student-life' (3 questions, draft, no owner: admins only" in result.output
    result = run("import", survey_file, "--db", db_path)
    assert result.exit_code == 1
    assert result.output.strip() == f"Error: {db_path}: slug: a survey 'student-life' already exists"
    other = tmp_path / "open.db"
    assert run("import", survey_file, "--db", other, "--open").exit_code == 0
    db = connect(other)
    try:
        assert get_survey(db, "student-life").status == "open"
    finally:
        db.conn.close()


@pytest.mark.parametrize("content, message", [
    ('{"slug": "x"', "line 1: not valid JSON"),
    ('{"slug": "x", "title": "T", "questions": []}', "questions: must be a non-empty list"),
    ('{"slug": "x", "title": "T", "questions": [{"id": "q", "text": "Q", "options": ["a", "b"], "epsilon": -1}]}',
     "questions[0].epsilon"),
    (b"\xff\xfe", "cannot read"),
])
def test_import_bad_files_give_one_line(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    result = run("import", path, "--db", tmp_path / "x.db")
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and message in lines[0]


def test_import_missing_file_and_unusable_database_in_a_real_process(tmp_path, survey_file):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for args, message in ((["import", "nope.json"], "nope.json: cannot read"),
                          (["import", str(survey_file), "--db", str(tmp_path)], "cannot open the database"),
                          (["export", "demo", "--db", "missing.db"], "missing.db: no such database file")):
        done = subprocess.run(DENIABLE + args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode != 0
        assert "Traceback" not in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and message in done.stderr, done.stderr


def test_export_writes_the_pair_estimate_reads(tmp_path, survey_file):
    db_path = tmp_path / "x.db"
    assert run("import", survey_file, "--db", db_path, "--open").exit_code == 0
    db = connect(db_path)
    try:
        stored = get_survey(db, "student-life")
        for reports in ({"drug_use": 1, "cheating": 0, "age_group": 2}, {"drug_use": 0, "cheating": 3}):
            store_response(db, stored, reports)
    finally:
        db.conn.close()
    out = tmp_path / "exports"
    result = run("export", "student-life", "--db", db_path, "-o", out)
    assert result.exit_code == 0, result.output
    csv_path, json_path = out / "student-life-responses.csv", out / "student-life-codebook.json"
    assert result.output.strip() == f"Wrote {csv_path} and {json_path}"
    lines = csv_path.read_text().splitlines()
    assert lines[0].startswith("# deniable responses | survey=student-life | design=sha256:")
    assert lines[1] == "drug_use,cheating,age_group,text-version"
    assert sorted(lines[2:]) == ["No,Often,,1", "Yes,Never,45 to 64,1"]
    assert json.loads(json_path.read_text())["slug"] == "student-life"
    result = run("export", "student-life", "--db", db_path, "-o", out, "--spss", "--stata")
    assert result.exit_code == 0, result.output
    assert {p.name for p in out.iterdir()} == {"student-life-responses.csv", "student-life-codebook.json",
                                               "student-life-responses.sav", "student-life-responses.dta"}
    result = run("export", "nope", "--db", db_path)
    assert result.exit_code == 1 and result.output.strip() == f"Error: {db_path}: no survey 'nope' in the database"


def test_estimate_reads_the_export_and_the_database_alike(tmp_path, survey_file):
    try:
        from deniable.server.cli.analysis import estimate
    except (ImportError, AttributeError) as exc:  # the offline CLI or the estimators are not merged yet
        pytest.skip(f"deniable estimate is not available yet: {exc}")
    db_path = tmp_path / "x.db"
    assert run("import", survey_file, "--db", db_path, "--open").exit_code == 0
    db = connect(db_path)
    try:
        stored = get_survey(db, "student-life")
        for i in range(40):
            store_response(db, stored, {"drug_use": i % 2, "cheating": i % 4, "age_group": i % 3})
    finally:
        db.conn.close()
    assert run("export", "student-life", "--db", db_path, "-o", tmp_path).exit_code == 0
    csv_path, json_path = tmp_path / "student-life-responses.csv", tmp_path / "student-life.json"
    from_files = CliRunner().invoke(estimate, [str(json_path), str(csv_path), "--format", "json"])
    from_db = CliRunner().invoke(estimate, ["--db", str(db_path), "student-life", "--format", "json"])
    assert from_files.exit_code == 0, from_files.output
    assert from_db.exit_code == 0, from_db.output
    assert json.loads(from_files.output) == json.loads(from_db.output)



@pytest.mark.slow  # a real gunicorn: the full suite
def test_serve_runs_gunicorn_with_the_demo(tmp_path):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("DENIABLE_")}
    env["PYTHONPATH"] = str(ROOT)
    process = subprocess.Popen(DENIABLE + ["serve", "--port", str(port), "--workers", "2", "--demo"],
                               cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_until_serving(f"{base}/s/demo", process, why=lambda: process.communicate()[1])
        request = urllib.request.Request(f"{base}/s/demo", headers={"User-Agent": "SecretAgent/1.0"})
        urllib.request.urlopen(request, timeout=5).close()
        response_id = submit(base, "demo", {"drug_use": 1, "cheating": 2})
        assert isinstance(response_id, str) and len(response_id) == 16  # random: it orders nothing
    finally:
        process.terminate()
        out, err = process.communicate(timeout=30)
    assert f"Demo survey: {base}/s/demo" in out
    assert "Booting worker" in err and err.count("Booting worker") >= 2
    assert "SecretAgent" not in err and "127.0.0.1 -" not in err  # no access log
    assert (tmp_path / "deniable.db").exists() and (tmp_path / "deniable.db.secret").exists()


def test_serve_with_a_bad_setting_is_one_line_before_any_worker_starts(tmp_path, monkeypatch):
    monkeypatch.setenv("DENIABLE_RATELIMIT_SUBMIT", "lots")
    monkeypatch.setenv("DENIABLE_DATABASE", str(tmp_path / "x.db"))  # serve sets it; restored after
    result = CliRunner().invoke(cli, ["serve", "--db", str(tmp_path / "x.db"), "--port", "0"])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        "Error: configuration: RATELIMIT_SUBMIT (DENIABLE_RATELIMIT_SUBMIT): 'lots' is not a rate limit; "
        "write e.g. '10 per minute' or '5/second;300/minute'"]


def test_invite_writes_single_use_links_from_the_base_url(tmp_path, survey_file):
    db_path = tmp_path / "x.db"
    assert run("import", survey_file, "--db", db_path, "--open").exit_code == 0
    out = tmp_path / "links.csv"
    result = run("invite", "student-life", "--count", "3", "--db", db_path, "-o", out,
                 "--base-url", "https://survey.example.org/")
    assert result.exit_code == 0, result.output
    assert "Wrote 3 invitation links" in result.output and "invited responses only" in result.output
    assert oct(out.stat().st_mode & 0o777) == "0o600"
    header, *rows = out.read_text().splitlines()
    assert header == "token,url" and len(rows) == 3
    for row in rows:
        token, url = row.split(",")
        token = token.removeprefix("'")  # a token that begins with "-" is neutralized for spreadsheets
        assert url == f"https://survey.example.org/s/student-life?t={token}"
    db = connect(db_path)
    try:
        stored = get_survey(db, "student-life")
        assert stored.invitation_only
        token = rows[0].split(",")[1].split("t=")[1]
        store_response(db, stored, {"drug_use": 1, "cheating": 0}, token)  # the link works once
    finally:
        db.conn.close()
    to_stdout = run("invite", "student-life", "--count", "1", "--db", db_path)
    assert to_stdout.exit_code == 0 and to_stdout.output.startswith("token,url\n")
    for args, message in ((["nope", "--count", "1"], "no survey 'nope'"),
                          (["student-life", "--count", "0"], "--count")):
        bad = run("invite", *args, "--db", db_path)
        assert bad.exit_code != 0 and message in bad.output


def test_import_with_an_owner_and_an_admin_account(tmp_path, survey_file):
    db_path = tmp_path / "x.db"
    missing = run("import", survey_file, "--db", db_path, "--owner", "ada@example.org")
    assert missing.exit_code == 1 and "--owner: no researcher 'ada@example.org'" in missing.output
    assert run("create-researcher", "ada@example.org", "--db", db_path,
               "--password", "correct horse battery").exit_code == 0
    result = run("import", survey_file, "--db", db_path, "--owner", "Ada@Example.org")
    assert result.exit_code == 0 and "owned by ada@example.org" in result.output
    admin = run("create-researcher", "root@example.org", "--admin", "--db", db_path,
                "--password", "another long passphrase")
    assert admin.exit_code == 0 and "(admin)" in admin.output
    db = connect(db_path)
    try:
        owner = db.execute("SELECT owner_id FROM surveys WHERE slug = 'student-life'").fetchone()[0]
        accounts = dict(db.execute("SELECT email, is_admin FROM researchers").fetchall())
        assert owner == db.execute("SELECT id FROM researchers WHERE email = 'ada@example.org'").fetchone()[0]
        assert accounts == {"ada@example.org": 0, "root@example.org": 1}
    finally:
        db.conn.close()


def test_the_demo_password_stays_across_restarts_until_a_reset_which_ends_old_sessions(tmp_path):
    """What `serve --demo` does before gunicorn starts, in-process: the password of the last start
    (kept beside the database, readable by its owner only) is printed again; a reset makes a new one."""
    from deniable.server.store.accounts import authenticate, new_session, session_account
    from deniable.server.store.db import init_db
    from deniable.server.store.demo import demo_login

    path = str(tmp_path / "demo.db")
    db = init_db(path)
    try:
        email, first, account = demo_login(db, path, reset=False)
        kept = tmp_path / "demo.db.demo-password"
        assert kept.read_text().strip() == first and (kept.stat().st_mode & 0o777) == 0o600
        token = new_session(db, account)
        assert demo_login(db, path, reset=False) == (email, first, account)  # a restart: the same login
        assert session_account(db, token)["id"] == account  # and the sessions stay
        _, second, _ = demo_login(db, path, reset=True)
        assert second != first and kept.read_text().strip() == second
        assert authenticate(db, email, second) and not authenticate(db, email, first)
        assert session_account(db, token) is None  # every earlier session ended
        kept.write_text("stale\n")  # someone changed the password meanwhile: a fresh one, not a failure
        assert demo_login(db, path, reset=False)[1] not in ("stale", second)
    finally:
        db.conn.close()


def test_reset_demo_password_goes_with_demo(tmp_path):
    result = CliRunner().invoke(cli, ["serve", "--db", str(tmp_path / "x.db"), "--reset-demo-password"])
    assert result.exit_code == 2 and "--reset-demo-password goes with --demo" in result.output
