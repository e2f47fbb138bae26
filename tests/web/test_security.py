"""Security headers, cookie flags, trusted hosts, body size and rate limits, on the real app."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from deniable.server.web.app import create_app
from deniable.server.store.accounts import set_researcher
from deniable.server.store.db import connect, init_db
from deniable.server.store.demo import ensure_demo
from deniable.server.web.ratelimit_storage import PROBES, LocalFallback, SharedMemoryStorage
from deniable.server.web.security import CSP
from support.dashboard import EMAIL, PASSWORD, csrf_token, login
from support.serving import free_port, wait_until_serving

GOOD = {"reports": {"drug_use": 0, "cheating": 1, "age_group": 2}}


def make_app(db_path, **config):
    return create_app({"TESTING": True, "DATABASE": db_path, "SECRET_KEY": "shared-secret", **config})


@pytest.fixture
def demo_db(db_path):
    db = init_db(db_path)
    try:
        stored = ensure_demo(db)
        set_researcher(db, EMAIL, PASSWORD)
    finally:
        db.conn.close()
    return stored


def assert_security_headers(response):
    assert response.headers["Content-Security-Policy"] == CSP
    assert "unsafe-inline" not in CSP
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"] == "no-referrer"
    assert response.headers["X-Frame-Options"] == "DENY"


@pytest.mark.parametrize("method,url,kwargs,status", [
    ("get", "/s/demo", {}, 200),
    ("get", "/auth/login", {}, 200),
    ("get", "/static/rr.js", {}, 200),
    ("get", "/api/v1/surveys/demo", {}, 200),
    ("get", "/s/no-such-survey", {}, 404),
    ("get", "/dashboard/", {}, 302),
    ("get", "/api/v1/surveys/demo/responses", {}, 405),
    ("post", "/s/demo", {"data": {"drug_use": "0"}}, 400),  # no CSRF token
    ("post", "/api/v1/surveys/demo/responses", {"data": "x" * 70_000, "content_type": "application/json"}, 413),
    ("post", "/api/v1/surveys/demo/responses", {"data": "{", "content_type": "application/json"}, 400),
])
def test_every_kind_of_response_carries_the_headers(app, client, demo_db, method, url, kwargs, status):
    response = getattr(client, method)(url, **kwargs)
    response.close()  # static files are streamed
    assert response.status_code == status
    assert_security_headers(response)
    # Nothing but the static files may be kept by a browser or a shared cache.
    assert (response.headers.get("Cache-Control") != "no-store") if "/static/" in url else \
        response.headers["Cache-Control"] == "no-store"


def test_by_default_the_app_answers_to_localhost_only_and_says_how_to_add_a_name(db_path, demo_db):
    client = make_app(db_path).test_client()
    assert client.get("/s/demo").status_code == 200  # Host: localhost
    assert client.get("/s/demo", headers={"Host": "127.0.0.1:8000"}).status_code == 200
    rebound = client.get("/s/demo", headers={"Host": "attacker.example"})  # DNS rebinding
    assert rebound.status_code == 400
    assert b"deniable serve --public-host attacker.example" in rebound.data and b"localhost" in rebound.data


def test_oversized_body_is_a_clear_413(client, demo_db):
    api = client.post("/api/v1/surveys/demo/responses", data="x" * 70_000, content_type="application/json")
    assert api.status_code == 413 and "larger than the limit" in api.get_json()["error"]
    page = client.post("/s/demo", data={"drug_use": "0" * 70_000})
    assert page.status_code == 413 and b"larger than the limit" in page.data


def session_cookie(response) -> str:
    cookies = [c for c in response.headers.getlist("Set-Cookie") if c.startswith("session=")]
    assert cookies, "no session cookie set"
    return cookies[-1]


def test_session_cookie_is_httponly_lax_and_not_secure_over_http(client, demo_db):
    cookie = session_cookie(login(client))
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Secure" not in cookie


def test_session_cookie_is_secure_over_https(db_path, demo_db):
    client = make_app(db_path, RATELIMIT_ENABLED=False).test_client()
    url = "https://localhost/auth/login"
    token = csrf_token(client, url)
    response = client.post(url, data={"csrf_token": token, "email": EMAIL, "password": PASSWORD},
                           headers={"Referer": url})  # Flask-WTF checks it over HTTPS
    assert response.status_code == 302
    assert "Secure" in session_cookie(response)


def test_behind_a_tls_proxy_the_cookie_is_secure_only_when_trusted(db_path, demo_db):
    forwarded = {"X-Forwarded-Proto": "https"}
    for proxies, secure in ((0, False), (1, True)):
        client = make_app(db_path, RATELIMIT_ENABLED=False, PROXY_FIX_X_PROTO=proxies).test_client()
        response = client.get("/auth/login", headers=forwarded)
        assert ("Secure" in session_cookie(response)) is secure


def test_untrusted_host_is_a_400_with_a_message(db_path, demo_db):
    client = make_app(db_path, TRUSTED_HOSTS=["survey.example.org"]).test_client()
    page = client.get("/s/demo", headers={"Host": "evil.example"})
    assert page.status_code == 400 and b"not trusted" in page.data
    api = client.get("/api/v1/surveys/demo", headers={"Host": "evil.example"})
    assert api.status_code == 400 and api.get_json()["field"] == "Host"
    assert client.get("/s/demo", headers={"Host": "survey.example.org"}).status_code == 200


FORKED_WORKERS = """
import json, multiprocessing, sys
from deniable.server.web.app import create_app

app = create_app({"TESTING": True, "DATABASE": sys.argv[1], "SECRET_KEY": "shared-secret",
                  "RATELIMIT_SUBMIT": "3 per hour"})  # an hour: no window ends mid-test
good = json.loads(sys.argv[2])

def submit(results):
    client = app.test_client()
    results.put([client.post("/api/v1/surveys/demo/responses", json=good).status_code for _ in range(3)])

context = multiprocessing.get_context("fork")
results = context.Queue()
children = [context.Process(target=submit, args=(results,), daemon=True) for _ in range(2)]
for child in children:
    child.start()
codes = sorted(results.get(timeout=60) + results.get(timeout=60))
for child in children:
    child.join(timeout=30)
refused = app.test_client().post("/api/v1/surveys/demo/responses", json=good)
print(json.dumps({"codes": codes, "status": refused.status_code, "error": refused.get_json()["error"],
                  "retry_after": int(refused.headers["Retry-After"])}))
"""


def test_submission_limit_counts_across_forked_workers(db_path, demo_db):
    """Gunicorn forks its workers from the app it preloaded; forked processes share one count.

    The app is made and forked in a fresh process, as gunicorn's master does: forking this test
    worker, whose other threads (earlier tests' scrubbers, the browser driver) may hold SQLite's
    locks at that moment, once left a child stuck in ``sqlite3.connect`` and the run waiting on it.
    """
    done = subprocess.run([sys.executable, "-c", FORKED_WORKERS, str(db_path), json.dumps(GOOD)],
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["codes"] == [201, 201, 201, 429, 429, 429]
    assert seen["status"] == 429 and "Too many requests" in seen["error"]
    assert 1 <= seen["retry_after"] <= 3600  # windows end on whole hours
    db = connect(db_path)
    try:
        assert db["responses"].count == 3  # the refused ones stored nothing
    finally:
        db.conn.close()


def test_login_limit_and_the_html_429(db_path, demo_db):
    client = make_app(db_path, RATELIMIT_LOGIN="2 per hour").test_client()
    codes = [login(client, password="wrong").status_code for _ in range(3)]
    assert codes[:2] == [401, 401] and codes[2] == 429
    assert b"Too many requests" in login(client).data  # even the right password waits


def test_the_limit_counters_hold_no_address_and_no_file(db_path, demo_db, tmp_path):
    """The counters are in memory (never a file), under hashes keyed by a key that is never stored:
    hashing the address with the secret from the disk (as the old design did) finds nothing."""
    import hashlib
    import hmac

    app = make_app(db_path, RATELIMIT_SUBMIT="100 per minute", SECRET_KEY=None)
    client = app.test_client()
    client.post("/api/v1/surveys/demo/responses", json=GOOD, environ_base={"REMOTE_ADDR": "203.0.113.77"})
    files = {p.name for p in Path(db_path).parent.iterdir()}
    assert not [name for name in files if "limit" in name], files
    memory = bytes(app.extensions["deniable.ratelimit"].storage._map)
    assert memory.count(0) < len(memory)  # something was counted
    secret = Path(f"{db_path}.secret").read_bytes().strip()
    for guess in (b"203.0.113.77", hmac.new(secret, b"203.0.113.77", hashlib.sha256).hexdigest()[:24].encode(),
                  hmac.new(secret, b"address:203.0.113.77", hashlib.sha256).digest()[:8]):
        assert guess not in memory


def test_the_survey_page_429_is_the_html_error_page_with_the_headers(db_path, demo_db):
    client = make_app(db_path, RATELIMIT_SUBMIT="1 per minute", WTF_CSRF_ENABLED=False).test_client()
    answers = {"drug_use": "0", "cheating": "1", "age_group": "2"}
    assert client.post("/s/demo", data=answers).status_code == 303  # to the thank-you page
    refused = client.post("/s/demo", data=answers)
    assert refused.status_code == 429 and refused.mimetype == "text/html"
    assert b"Too many requests" in refused.data and b"at most 1 per 1 minute" in refused.data
    assert 1 <= int(refused.headers["Retry-After"]) <= 61
    assert_security_headers(refused)
    assert client.get("/s/demo").status_code == 200  # reading the survey is never limited


def test_the_api_429_and_the_untrusted_host_400_carry_the_headers(db_path, demo_db):
    client = make_app(db_path, RATELIMIT_SUBMIT="1 per minute",
                      TRUSTED_HOSTS=["localhost"]).test_client()
    client.post("/api/v1/surveys/demo/responses", json=GOOD)
    refused = client.post("/api/v1/surveys/demo/responses", json=GOOD)
    assert refused.status_code == 429 and refused.get_json()["field"] is None
    assert_security_headers(refused)
    bad_host = client.get("/s/demo", headers={"Host": "evil.example"})
    assert bad_host.status_code == 400
    assert_security_headers(bad_host)


def test_a_full_counter_table_falls_back_to_counting_in_the_workers_memory(db_path, demo_db):
    """More clients than slots must not turn submissions into 500s, nor switch the limit off."""
    app = make_app(db_path, RATELIMIT_SUBMIT="2 per hour", RATELIMIT_STORAGE_URI="deniable+shared://?slots=2")
    storage = app.extensions["deniable.ratelimit"].storage
    storage.incr("someone", 60), storage.incr("someone else", 60)  # every slot taken
    client = app.test_client()
    codes = [client.post("/api/v1/surveys/demo/responses", json=GOOD).status_code for _ in range(3)]
    assert codes == [201, 201, 429]


def test_storage_counts_in_fixed_windows_aligned_to_the_clock():
    storage = SharedMemoryStorage()
    assert [storage.incr("a", 60), storage.incr("a", 60), storage.incr("b", 60, amount=5)] == [1, 2, 5]
    assert storage.get("a") == 2 and storage.get("never") == 0
    end = storage.get_expiry("a")
    assert time.time() < end <= time.time() + 60 and end % 60 == 0  # a whole minute: not when "a" came
    storage.clear("a")
    assert storage.get("a") == 0 and storage.get("b") == 5
    assert storage.incr("short", 0.2) == 1
    time.sleep(0.25)
    assert storage.get("short") == 0 and storage.incr("short", 0.2) == 1  # a new window
    assert storage.check()
    storage.reset()
    assert storage.get("b") == 0


def test_a_full_table_says_so():
    storage = SharedMemoryStorage("deniable+shared://?slots=3")
    for key in ("x", "y", "z"):
        storage.incr(key, 3600)
    with pytest.raises(LocalFallback):
        storage.incr("w", 3600)
    assert storage.incr("x", 3600) == 2  # live keys still count
    assert PROBES >= 8


def _hit_at_once(storage, barrier, hits, results):
    barrier.wait()  # every process hits the same key at the same moment
    results.put([storage.incr("k", 3600) for _ in range(hits)])


def test_forked_processes_count_every_hit_exactly_once():
    """The table and its lock are shared across fork: concurrent increments are never lost."""
    processes, hits = 4, 200
    storage = SharedMemoryStorage()
    context = multiprocessing.get_context("fork")
    barrier, results = context.Barrier(processes), context.Queue()
    children = [context.Process(target=_hit_at_once, args=(storage, barrier, hits, results),
                                daemon=True)
                for _ in range(processes)]
    for child in children:
        child.start()
    seen = sorted(count for _ in children for count in results.get(timeout=60))
    for child in children:
        child.join(timeout=30)
    assert seen == list(range(1, processes * hits + 1))


@pytest.mark.parametrize("proxies,expected", [
    (0, [201, 429, 429]),  # no trusted proxy: X-Forwarded-For is ignored, a forged one evades nothing
    (1, [201, 201, 429]),  # behind one proxy: each client address has its own count
])
def test_the_limit_counts_per_client_address_only_through_a_trusted_proxy(db_path, demo_db, proxies,
                                                                          expected):
    client = make_app(db_path, RATELIMIT_SUBMIT="1 per day", PROXY_FIX_X_FOR=proxies).test_client()
    codes = [client.post("/api/v1/surveys/demo/responses", json=GOOD,
                         headers={"X-Forwarded-For": address}).status_code
             for address in ("198.51.100.1", "198.51.100.2", "198.51.100.1")]
    assert codes == expected


def test_the_survey_page_and_the_api_share_one_submission_count(db_path, demo_db):
    """Alternating between the form and the JSON API gains a script nothing."""
    # per day: the windows are aligned to the clock, and a minute boundary mid-test would reset the count
    client = make_app(db_path, RATELIMIT_SUBMIT="2 per day", WTF_CSRF_ENABLED=False).test_client()
    answers = {"drug_use": "0", "cheating": "1", "age_group": "2"}
    codes = [client.post("/s/demo", data=answers).status_code,
             client.post("/api/v1/surveys/demo/responses", json=GOOD).status_code,
             client.post("/s/demo", data=answers).status_code,
             client.post("/api/v1/surveys/demo/responses", json=GOOD).status_code]
    assert codes == [303, 201, 429, 429]


def test_the_default_limits(db_path):
    config = make_app(db_path).config
    assert config["RATELIMIT_LOGIN"] == "10 per minute"
    assert config["RATELIMIT_SUBMIT"] == "300 per minute"  # 5 a second; a classroom behind one NAT at once
    assert config["RATELIMIT_ENABLED"] is True
    assert config["RATELIMIT_LOGIN_ACCOUNT"] == "5 per minute;10 per 10 minutes;20 per hour;50 per day"
    assert config["RATELIMIT_STORAGE_URI"] == "deniable+shared://"


def test_settings_come_from_deniable_environment_variables(db_path, demo_db, monkeypatch):
    """``create_app()`` without a test config reads ``DENIABLE_*`` (JSON values where they parse)."""
    for key in [k for k in os.environ if k.startswith("DENIABLE_")]:
        monkeypatch.delenv(key)
    settings = {"DATABASE": db_path, "SECRET_KEY": "from-the-environment",
                "TRUSTED_HOSTS": '["survey.example.org"]', "PROXY_FIX_X_PROTO": "1",
                "MAX_CONTENT_LENGTH": "1000", "RATELIMIT_SUBMIT": "1 per minute"}
    for key, value in settings.items():
        monkeypatch.setenv(f"DENIABLE_{key}", value)
    client = create_app().test_client()
    host = {"Host": "survey.example.org"}
    assert client.get("/s/demo", headers={"Host": "evil.example"}).status_code == 400
    page = client.get("/s/demo", headers={**host, "X-Forwarded-Proto": "https"})
    assert page.status_code == 200 and "Secure" in session_cookie(page)
    big = client.post("/auth/login", headers=host, data={"email": "x" * 2000})
    assert big.status_code == 413 and b"limit of 1000 bytes" in big.data
    url = "/api/v1/surveys/demo/responses"
    assert [client.post(url, json=GOOD, headers=host).status_code for _ in range(2)] == [201, 429]

    monkeypatch.setenv("DENIABLE_RATELIMIT_ENABLED", "false")
    client = create_app().test_client()
    assert [client.post(url, json=GOOD, headers=host).status_code for _ in range(2)] == [201, 201]



def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def _holds_open(pid: int, suffix: str) -> bool:
    try:
        return any(os.readlink(f"/proc/{pid}/fd/{fd}").endswith(suffix) for fd in os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return False


def _post(url: str) -> int:
    request = urllib.request.Request(url, data=json.dumps(GOOD).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        body = json.loads(exc.read())
        assert exc.code != 429 or "Too many requests" in body["error"], body
        return exc.code


def _worker_holding(connection, workers: list[int]) -> int | None:
    """The worker process whose socket is the other end of this client connection (via /proc)."""
    client_port = connection.sock.getsockname()[1]
    inodes = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if int(fields[2].split(":")[1], 16) == client_port:  # the server side: its remote port is ours
            inodes.add(fields[9])
    for pid in workers:
        try:
            fds = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
        except OSError:
            continue
        if any(fd == f"socket:[{inode}]" for fd in fds for inode in inodes):
            return pid
    return None


def _post_on(connection) -> int:
    connection.request("POST", "/api/v1/surveys/demo/responses", body=json.dumps(GOOD),
                       headers={"Content-Type": "application/json"})
    response = connection.getresponse()
    body = json.loads(response.read())
    assert response.status != 429 or "Too many requests" in body["error"], body
    return response.status


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds the workers through /proc")
def test_the_limit_holds_across_the_workers_of_deniable_serve(tmp_path):
    """A real ``deniable serve --workers 2``: two keep-alive connections held by the two different
    workers (found through /proc) take turns; exactly the limit's worth is accepted overall.
    Counting per worker would accept up to twice as many."""
    import http.client

    limit, port = 5, free_port()
    base = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("DENIABLE_")}
    env.update(PYTHONPATH=str(Path(__file__).resolve().parents[2]),
               DENIABLE_RATELIMIT_SUBMIT=f"{limit} per hour")  # no window ends mid-test
    process = subprocess.Popen([sys.executable, "-c", "from deniable.server.cli import cli; cli()", "serve",
                                "--port", str(port), "--workers", "2", "--demo"],
                               cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True)  # gunicorn's few log lines fit the pipe's buffer
    opened = []
    try:
        wait_until_serving(f"{base}/api/v1/surveys/demo", process, why=lambda: process.communicate()[1])
        deadline = time.monotonic() + 60
        while len(workers := _children(process.pid)) < 2:  # the second worker may still be booting
            assert time.monotonic() < deadline, f"gunicorn started {len(workers)} worker(s), not 2"
            time.sleep(0.2)
        by_worker = {}
        while len(by_worker) < 2:  # keep-alive connections until the two workers hold one each
            assert time.monotonic() < deadline and len(opened) < 200, "the connections all went to one worker"
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            connection.request("GET", "/api/v1/surveys/demo")
            connection.getresponse().read()
            opened.append(connection)
            pid = _worker_holding(connection, workers)
            if pid is not None:
                by_worker.setdefault(pid, connection)
        first, second = by_worker.values()
        codes = [_post_on(connection) for _ in range(limit) for connection in (first, second)]
    finally:
        for connection in opened:
            connection.close()
        process.terminate()
        process.communicate(timeout=30)
    assert codes.count(201) == limit and codes.count(429) == limit
    assert set(codes[0::2]) == set(codes[1::2]) == {201, 429}  # each worker accepted some, then refused
    db = connect(str(tmp_path / "deniable.db"))
    try:
        assert db["responses"].count == limit
    finally:
        db.conn.close()


@pytest.mark.parametrize("setting,value", [("RATELIMIT_SUBMIT", "lots"), ("RATELIMIT_LOGIN", 10),
                                           ("RATELIMIT_SUBMIT", "")])
def test_a_limit_that_does_not_parse_stops_the_app_from_starting(db_path, setting, value):
    """A limit that does not parse would otherwise limit nothing."""
    with pytest.raises(ValueError, match=f"{setting} \\(DENIABLE_{setting}\\): .* is not a rate limit"):
        make_app(db_path, **{setting: value})
