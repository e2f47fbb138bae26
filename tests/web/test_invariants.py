"""docs/design.md's invariants 1 and 2 on the respondent's side, checked on the real app and files.

(Invariant 3, the memoized report, needs a browser: ``test_browser_survey.py``.)
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
RESPONDENT_TABLES = ("surveys", "questions", "responses", "counts")
# Column-name words that would betray an address, a device or a time finer than the day.
FORBIDDEN = {"ip", "addr", "address", "remote", "host", "agent", "ua", "useragent", "browser", "device",
             "fingerprint", "cookie", "session", "time", "timestamp", "datetime", "hour", "minute", "second", "at"}
SECRET_UA = "SecretAgent/9.9 (fingerprintable)"
SECRET_IP = "203.0.113.77"


def dump(db_path) -> str:
    conn = sqlite3.connect(db_path)
    try:
        return "\n".join(conn.iterdump())
    finally:
        conn.close()


def test_invariant_2_schema_has_no_column_for_address_agent_or_time(app, db_path):
    conn = sqlite3.connect(db_path)
    try:
        for table in RESPONDENT_TABLES:
            columns = conn.execute(f"SELECT name, type FROM pragma_table_info('{table}')").fetchall()
            assert columns, table
            for name, kind in columns:
                assert not set(name.lower().split("_")) & FORBIDDEN, (table, name)
                assert kind.upper() not in ("DATETIME", "TIMESTAMP"), (table, name)
        responses = {name for (name,) in conn.execute("SELECT name FROM pragma_table_info('responses')")}
        assert responses == {"id", "survey_id", "submitted_on", "reports", "design", "text_version"}
    finally:
        conn.close()


def test_invariant_2_nothing_about_the_respondent_is_stored(client, open_demo, db_path):
    environ = {"REMOTE_ADDR": SECRET_IP}
    headers = {"User-Agent": SECRET_UA, "X-Forwarded-For": SECRET_IP}
    page = client.get("/s/demo", headers=headers, environ_base=environ).get_data(as_text=True)
    token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
    assert client.post("/s/demo", data={"csrf_token": token, "drug_use": "1", "cheating": "0"},
                       headers=headers, environ_base=environ).status_code == 303
    assert client.post("/api/v1/surveys/demo/responses", json={"reports": {"drug_use": 0, "cheating": 3}},
                       headers=headers, environ_base=environ).status_code == 201
    text = dump(db_path)
    assert SECRET_IP not in text and SECRET_UA not in text and "SecretAgent" not in text
    conn = sqlite3.connect(db_path)
    try:
        days = [d for (d,) in conn.execute("SELECT submitted_on FROM responses")]
    finally:
        conn.close()
    assert len(days) == 2 and all(re.fullmatch(r"\d{4}-\d{2}-\d{2}", d) for d in days)


def test_invariant_1_protected_inputs_carry_no_name(client, open_demo):
    html = client.get("/s/demo").get_data(as_text=True)
    radios = re.findall(r"<input[^>]*type=\"radio\"[^>]*>", html)
    protected = [r for r in radios if re.search(r'id="(drug_use|cheating)-option-', r)]
    assert len(protected) == 6
    assert not any("name=" in r for r in protected)
    # What the form can submit for a protected question is the hidden report field only.
    assert re.findall(r'<input[^>]*name="(drug_use|cheating)"[^>]*>', html) == ["drug_use", "cheating"]
    for qid in ("drug_use", "cheating"):
        assert re.search(rf'<input data-report="{qid}" id="{qid}-report" name="{qid}" type="hidden" value="">', html)


def test_invariant_1_no_math_random_and_no_inline_script_anywhere():
    client_files = [p for p in (ROOT / "client").rglob("*") if p.is_file() and p.suffix in (".js", ".py", ".html")]
    assert any(p.name == "rr.js" for p in client_files)
    for path in client_files:
        assert "Math.random" not in path.read_text(encoding="utf-8"), path
    for path in (ROOT / "templates").rglob("*.html"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", text), f"inline script in {path}"
        assert not re.search(r"\son[a-z]+\s*=", text), f"inline event handler in {path}"
        # the methods report is a file to keep and attach (deniable report): its one stylesheet is inline, and
        # its Content-Security-Policy admits that stylesheet alone, by its hash (tests/web/test_report_page.py)
        inline_style = re.findall(r"<style|\sstyle\s*=", text)
        assert not inline_style or (path.name == "report.html" and inline_style == ["<style"]), f"inline style in {path}"
        assert not re.search(r"""(src|href)=["']?(https?:)?//""", text), f"external resource in {path}"


def test_survey_js_memoizes_only_the_report():
    source = (ROOT / "client" / "static" / "survey.js").read_text(encoding="utf-8")
    calls = re.findall(r"localStorage\.setItem\((.*?)\);", source)
    # The probe, and the memo of the randomized report: never the checked value.
    assert calls == ['PROBE_KEY, "1"', "key, String(report)"]
    # For the thank-you page, this tab keeps what was sent: the reports and the direct answers.
    assert re.findall(r"sessionStorage\.setItem\((.*?)\);", source) == ["lastSentKey(slug), JSON.stringify(sent)"]
    assert re.findall(r"sent\[[^\]]*\] = ([^;]*);", source) == ["Number(answered.value)", "report.shown", "report"]
    # The other question types, never the answer: the registry (types.js) memoizes every type's
    # report; a type's own module (types/*.js) keeps only what is independent of the answers (the
    # list experiment's arm, a two-group design's group — never its instruction —, a fair coin).
    types = "\n".join(path.read_text(encoding="utf-8") for path in
                      [ROOT / "client" / "static" / "types.js", *sorted((ROOT / "client" / "static" / "types").glob("*.js"))])
    assert re.findall(r"(?:localStorage|\bstorage)\.setItem\((.*?)\);", types) == ["key, text", "key, arm", "key, group"]
    assert re.search(r"if \(randomized\) storage\.setItem\(key, text\);", types)
    assert "sessionStorage" not in types and "console." not in types
    thanks = (ROOT / "client" / "static" / "thanks.js").read_text(encoding="utf-8")
    assert re.findall(r"localStorage\.setItem\((.*?)\);", thanks) == ['sentKey(slug), "1"']
    assert "console." not in source + thanks and "sessionStorage.setItem" not in thanks


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(reports=st.dictionaries(st.sampled_from(["drug_use", "cheating", "age_group", "other"]),
                               st.one_of(st.integers(-3, 6), st.booleans(), st.floats(allow_nan=False),
                                         st.text(max_size=3), st.none())))
def test_api_stores_exactly_a_valid_submission_and_nothing_else(client, open_demo, stored_state, reports):
    before_rows, _ = stored_state()
    response = client.post("/api/v1/surveys/demo/responses", json={"reports": reports})
    rows, counts = stored_state()
    valid = (set(reports) <= {"drug_use", "cheating", "age_group"} and {"drug_use", "cheating"} <= set(reports)
             and all(type(v) is int for v in reports.values())
             and 0 <= reports["drug_use"] < 2 and 0 <= reports["cheating"] < 4
             and 0 <= reports.get("age_group", 0) < 4)
    if valid:
        assert response.status_code == 201
        assert len(rows) == len(before_rows) + 1
        # Response ids are random, so the new row is the one that was not there, not the last one.
        (new,) = [row for row in rows if row not in before_rows]
        assert json.loads(new["reports"]) == reports
    else:
        assert 400 <= response.status_code < 500 and response.json["error"]
        assert len(rows) == len(before_rows)
    # The counts always agree with the rows.
    for c in counts:
        expected = sum(1 for r in rows if json.loads(r["reports"]).get(c["qid"]) == c["option"])
        assert c["count"] == expected
