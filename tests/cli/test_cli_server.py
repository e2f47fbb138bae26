"""``deniable import``, ``export`` and ``serve`` (gunicorn in a subprocess, on a free port)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from deniable.client.submit import submit
from deniable.server.cli import cli
from deniable.server.store.db import connect
from deniable.server.store.demo import DEMO_DEFINITION
from deniable.server.store.responses import store_response
from deniable.server.store.surveys import get_survey

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
    assert "Imported survey 'student-life' (3 questions, draft)" in result.output
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
    csv_path, json_path = out / "student-life-responses.csv", out / "student-life.json"
    assert result.output.strip() == f"Wrote {csv_path} and {json_path}"
    assert csv_path.read_text().splitlines() == ["drug_use,cheating,age_group", "Yes,Never,45 to 64", "No,Often,"]
    assert json.loads(json_path.read_text())["slug"] == "student-life"
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


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_serve_runs_gunicorn_with_the_demo(tmp_path):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("DENIABLE_")}
    env["PYTHONPATH"] = str(ROOT)
    process = subprocess.Popen(DENIABLE + ["serve", "--port", str(port), "--workers", "2", "--demo"],
                               cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{base}/s/demo", timeout=2) as response:
                    assert response.status == 200
                    break
            except OSError:
                assert process.poll() is None, process.communicate()[1]
                assert time.monotonic() < deadline, "gunicorn did not answer within 60 s"
                time.sleep(0.2)
        request = urllib.request.Request(f"{base}/s/demo", headers={"User-Agent": "SecretAgent/1.0"})
        urllib.request.urlopen(request, timeout=5).close()
        response_id = submit(base, "demo", {"drug_use": 1, "cheating": 2})
        assert response_id == 1
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
