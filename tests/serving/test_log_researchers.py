"""The log of a real ``deniable serve`` when a researcher's page fails: the traceback is written at
once (a researcher who met a 500 needs it now), without the client's address, the body or the
cookie; a respondent's 500 in the same run is still only counted, for the summary at the stop."""

from __future__ import annotations

import http.cookiejar
import re
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

from support.real_server import DENIABLE, SLUG, Server, summaries

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not sys.platform.startswith("linux"),
                                                   reason="sends from a loopback address other than 127.0.0.1")]

SOURCE = "127.0.4.44"
EMAIL = "ada@example.org"
PASSWORD = "a-password-in-the-body-9Kq2"


class _FromSource(urllib.request.HTTPHandler):
    def http_open(self, req):
        return self.do_open(lambda host, **kw: __import__("http.client").client.HTTPConnection(
            host, source_address=(SOURCE, 0), **kw), req)


def _status(opener, request) -> int:
    try:
        with opener.open(request, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        exc.close()
        return exc.code


def _rename(db, old: str, new: str) -> None:
    broken = sqlite3.connect(db)
    broken.execute(f"ALTER TABLE {old} RENAME TO {new}")
    broken.commit()
    broken.close()


def test_a_researchers_500_is_written_at_once_and_a_respondents_is_not(data):
    made = subprocess.run([*DENIABLE, "create-researcher", EMAIL, "--db", str(data / "deniable.db"), "--password",
                           PASSWORD], capture_output=True, text=True, timeout=120, check=False)
    assert made.returncode == 0, made.stderr
    server = Server(data)
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(_FromSource, urllib.request.HTTPCookieProcessor(jar))
    try:
        with opener.open(f"{server.base}/auth/login", timeout=30) as page:
            token = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page.read().decode()).group(1)
        form = urllib.parse.urlencode({"csrf_token": token, "email": EMAIL, "password": PASSWORD})
        assert _status(opener, urllib.request.Request(f"{server.base}/auth/login", data=form.encode())) == 200
        cookies = [c.value for c in jar]
        time.sleep(1)
        started = server.log.read_text()
        _rename(data / "deniable.db", "counts", "counts_elsewhere")  # the submission path fails
        body = b'{"reports": {"drugs": 1, "cheated": 0, "year": 2}}'
        respondent = urllib.request.Request(f"{server.base}/api/v1/surveys/{SLUG}/responses", data=body,
                                            headers={"Content-Type": "application/json"})
        assert _status(opener, respondent) == 500
        time.sleep(1)
        assert server.log.read_text() == started  # counted, not written
        _rename(data / "deniable.db", "surveys", "surveys_elsewhere")  # the dashboard's list fails
        assert _status(opener, urllib.request.Request(f"{server.base}/dashboard/?the-query=q")) == 500
        deadline = time.monotonic() + 10
        while "unexpected error in GET /dashboard/" not in server.log.read_text():
            assert time.monotonic() < deadline, server.log.read_text()[len(started):]
            time.sleep(0.1)
        written = server.log.read_text()[len(started):]
    finally:
        log = server.stop()
    assert re.match(r"\[\d+\] \[ERROR\] unexpected error in GET /dashboard/ \(answered 500\)\n"
                    r"Traceback \(most recent call last\):\n", written), written
    assert "sqlite3.OperationalError: no such table: surveys" in written
    for secret in (SOURCE, PASSWORD, EMAIL, token, "the-query", *cookies):
        assert secret not in log
    counted = summaries(log)  # the respondent's 500, at the stop
    errors = [kind for kind in counted if kind.startswith("unexpected errors in POST /api/v1/surveys/<slug>/responses")]
    assert len(errors) == 1 and "OperationalError" in errors[0] and counted[errors[0]] == 1, counted
