"""Smoke test of an installed deniable: serve the demo and open every page, as a user of the wheel would.

    /tmp/venv/bin/python scripts/smoke_installed.py --workdir /tmp/smoke    # what scripts/test_wheel.sh runs

Run it with the Python of a venv that has deniable installed from the wheel (not editable); it
refuses a ``deniable`` imported from anywhere but a site-packages folder.  The HTTP side is the
standard library only (urllib, http.cookiejar); the installed package is imported to list the app's
routes (Flask's ``url_map``), the question types and the designs, so that a new page, type or design
is requested the day it is registered.  It

1. starts ``deniable serve --demo`` on a free port and reads the demo login it prints;
2. imports a second survey, ``types``, of every example question of every registered type
   (``deniable import --open``) and stores simulated responses to it, so that every type's card,
   builder fields and results are drawn;
3. logs in as the demo researcher (``POST /auth/login`` with the form's ``csrf_token``), submits to
   the demo (``POST /api/v1/surveys/demo/responses`` → 201, and the survey page's form → 303), and
   publishes a release of both surveys;
4. requests every GET route of the ``url_map`` for both slugs (every value of an ``<any(…)>``: the
   export downloads too), and every route with other parameters through the links the pages give
   (charts, static files, the embed); an admin (``deniable create-researcher --admin``) opens the
   Colleagues page and makes an invitation whose link is opened too.  A route neither requested
   nor in ``SKIPPED`` with a reason is a failure;
5. asks the builder's planner (``/dashboard/plan.json``) for every question type, directly, at ε,
   and with every design the type offers;
6. runs ``deniable export`` (CSV, Parquet, SPSS, Stata) for both surveys.

Any answer but the expected one (200 unless ``EXPECTED`` says otherwise) is a failure: the script
lists every failure, then prints the server's stdout and stderr, and exits 1.
"""

from __future__ import annotations

import argparse
import html
import http.cookiejar
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import deniable

SLUGS = ("demo", "types")
# Routes not requested, and why (every other GET route is requested, or the script fails).
SKIPPED: dict[str, str] = {}
# Endpoints whose GET answers other than 200.
EXPECTED = {"home": 302}
# Endpoints requested with these query strings only (without one they are a 400).
QUERIES = {"dashboard.lifecycle.confirm": ["to=close"]}  # an open survey: closing it is what can be confirmed
# Endpoints only an admin sees (a 404 for anyone else).
ADMIN_ONLY = {"dashboard.colleagues.colleagues"}
# The planner's parameters of a question of each type (what builder.js sends for a new card).
PLAN_BASE = {
    "choice": {"k": 2},
    "numeric": {"min": 0, "max": 40},
    "multi": {"k": 3},
    "list": {"items": 3},
    "two_group": {"model": "CDM", "p1": 0.3, "p2": 0.7},
}
# A design's object (the definition's "design", as builder.js's designOf builds it), by the builder's name.
DESIGNS = {
    "forced": {"name": "forced", "p": 0.6, "forced": [0.25, 0.15]},
    "warner": {"name": "warner", "p": 0.75},
    "unrelated": {"name": "unrelated", "p": 0.7, "prevalence": 0.5},
    "kuk": {"name": "kuk", "theta_1": 0.7, "theta_2": 0.3},
    "crosswise": {"name": "crosswise", "prevalence": 0.25},
    "respondent_crosswise": {"name": "crosswise", "side": "respondent", "prevalence": 0.25,
                             "fact": "Is your mother's birthday in January, February or March?",
                             "prevalence_range": [0.23, 0.27]},
    "custom": {"name": "custom", "matrix": [[0.75, 0.25], [0.25, 0.75]]},  # the builder edits a matrix in place
}
DEMO_REPORTS = {"drug_use": 1, "cheating": 0, "age_group": 2}
ADMIN = "admin@smoke.invalid"
RELEASES = {"demo": {"counts-age_group": "1"}, "types": {"counts-choice_2": "1"}}  # a directly asked question each
VERBOSE = False  # --verbose: print every request
JS_IMPORT = re.compile(r"""(?:\bfrom|^import|\bimport\()\s*["'](\.{1,2}/[^"']+)["']""", re.M)  # static and dynamic
LINK = re.compile(r'(?:href|src|action|data-[\w-]+)="(/[^"]*)"')


def links(page: str, base: str) -> list[str]:
    """The paths a page links to: its attributes', and the server's own absolute addresses in its text (snippets)."""
    own = re.findall(re.escape(base) + r"""(/[^\s"'<>`]*)""", html.unescape(page))
    return [html.unescape(link) for link in LINK.findall(page)] + own


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


class Session:
    """One browser: its own cookies; every answer checked, every failure added to ``failures``."""

    def __init__(self, base: str, failures: list[str], pages: dict[str, str]):
        self.base, self.failures, self.pages = base, failures, pages
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()), NoRedirect)
        self.requests = 0

    def request(self, path: str, *, data: bytes | None = None, headers: dict | None = None,
                method: str | None = None) -> tuple[int, dict, bytes]:
        req = urllib.request.Request(self.base + path, data=data, headers=headers or {}, method=method)
        self.requests += 1
        started = time.monotonic()
        try:
            with self.opener.open(req, timeout=120) as response:
                answer = response.status, dict(response.headers), response.read()
        except urllib.error.HTTPError as exc:
            answer = exc.code, dict(exc.headers), exc.read()
        except OSError as exc:  # the server died, hung up or timed out
            answer = 0, {}, str(exc).encode()
        if VERBOSE:
            print(f"{answer[0]} {req.get_method()} {path}  ({len(answer[2]):,} bytes, "
                  f"{time.monotonic() - started:.2f} s)")
        return answer

    def check(self, what: str, status: int, expected, body: bytes = b"") -> bool:
        if status in (expected if isinstance(expected, tuple) else (expected,)):
            return True
        text = body.decode("utf-8", "replace")
        title = re.search(r"<title>(.*?)</title>", text, re.S)
        said = title.group(1).strip() if title else text[:300]
        self.failures.append(f"{what}: {status}, expected {expected}" + (f": {said}" if said else ""))
        return False

    def get(self, path: str, expected=200) -> str:
        status, headers, body = self.request(path)
        text = body.decode("utf-8", "replace")
        if self.check(f"GET {urllib.parse.unquote_plus(path)}", status, expected, body) \
                and "text/html" in headers.get("Content-Type", ""):
            self.pages[path] = text
        return text

    def post_form(self, path: str, fields: dict, form_page: str, expected=(302, 303)) -> tuple[int, dict, str]:
        """POST ``fields`` to ``path`` with the ``csrf_token`` of the form on ``form_page``."""
        token = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', self.get(form_page))
        if not token:
            self.failures.append(f"GET {form_page}: no csrf_token in the page")
            return 0, {}, ""
        data = urllib.parse.urlencode({"csrf_token": token.group(1), **fields}).encode()
        status, headers, body = self.request(path, data=data, method="POST")
        self.check(f"POST {path}", status, expected, body)
        return status, headers, body.decode("utf-8", "replace")

    def login(self, email: str, password: str) -> None:
        status, headers, _ = self.post_form("/auth/login", {"email": email, "password": password}, "/auth/login")
        if status in (302, 303) and "/auth/login" in headers.get("Location", ""):
            self.failures.append(f"POST /auth/login as {email}: sent back to {headers['Location']}: refused")


class Server:
    """``deniable serve [--demo]`` on a free port, its output in files of ``workdir``; ``env``: more
    environment variables."""

    def __init__(self, deniable_bin: Path, db: Path, workdir: Path, *, demo: bool = True, env: dict | None = None):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.base = f"http://127.0.0.1:{port}"
        self.out, self.err = workdir / "serve.out", workdir / "serve.err"
        with open(self.out, "wb") as out, open(self.err, "wb") as err:
            self.process = subprocess.Popen(
                [str(deniable_bin), "serve", "--port", str(port), "--db", str(db), *(["--demo"] if demo else [])],
                cwd=workdir, stdout=out, stderr=err, stdin=subprocess.DEVNULL, start_new_session=True,
                env={**os.environ, **(env or {})})

    def wait(self, ready=lambda: True) -> None:
        """Wait until the server answers (and ``ready()``), 60 s at most."""
        probe = Session(self.base, [], {})
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and self.process.poll() is None:
            if probe.request("/auth/login")[0] == 200 and ready():
                return
            time.sleep(0.2)
        raise RuntimeError("deniable serve did not answer within 60 s")

    def demo_login(self) -> tuple[str, str]:
        """Wait until the server answers; the demo login it printed."""
        login = lambda: re.search(rb"log in as (\S+) with password (\S+)\)", self.out.read_bytes())  # noqa: E731
        self.wait(login)
        return login().group(1).decode(), login().group(2).decode()

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()

    def output(self) -> str:
        return "\n".join(f"---- deniable serve: {path.name} ----\n{path.read_text('utf-8', 'replace')}"
                         for path in (self.out, self.err))


def types_survey() -> dict:
    """Every example question of every registered type (ids ``<type>_<n>``), as tests/support/battery.py builds it."""
    from deniable.server.survey import questions

    qs = [{"id": f"{t.name}_{n}", **definition} for t in questions.all_types()
          for n, (definition, _) in enumerate(t.examples())]
    return {"slug": "types", "title": "Every question type", "questions": qs}


def store_responses(db: Path, n: int = 300) -> None:
    """``n`` simulated respondents (the real randomizers) to the survey ``types``."""
    import numpy as np

    from deniable.server.store.db import connect
    from deniable.server.store.responses import insert_many
    from deniable.server.store.surveys import get_survey
    from deniable.server.survey import questions
    from deniable.server.survey.simulate import simulate_dataset

    truths = {f"{t.name}_{n}": truth for t in questions.all_types() for n, (_, truth) in enumerate(t.examples())}
    handle = connect(db)
    try:
        stored = get_survey(handle, "types")
        truth = {q.id: q.qtype.truth(q, truths[q.id], q.id) for q in stored.survey.questions}
        insert_many(handle, stored, simulate_dataset(stored.survey, truth, n, np.random.default_rng(1)).columns)
    finally:
        handle.conn.close()


def plan_requests() -> list[dict]:
    """The planner's query of every question type: asked directly, at ε, and with each design it offers."""
    from deniable.server.survey import questions

    out = []
    for t in questions.all_types():
        if t.name not in PLAN_BASE:
            raise RuntimeError(f"no planner request for the question type {t.name!r}: add it to PLAN_BASE")
        base = {"type": t.name, **PLAN_BASE[t.name]}
        out += [base] if getattr(t, "epsilon_from_design", False) else [base, {**base, "epsilon": 1}]
        if t.name == "numeric":
            out += [{**base, "epsilon": 1, "mechanism": m} for m in ("grid", "laplace")]
        if t.name == "two_group":  # every model, CDMsym with its four probabilities and UQTunknown its split
            out += [{**base, "model": "CDMsym", "p1": 0.2, "p2": 0.1, "p3": 0.7, "p4": 0.15},
                    {**base, "model": "SLD", "p1": 0.25, "p2": 0.75},
                    {**base, "model": "UQTunknown", "p1": 0.8, "p2": 0.3, "group_share": 0.4}]
        for name in getattr(t, "randomization_choices", None) or {}:
            if name == "rr":
                continue  # k-ary randomized response at ε: above
            if name not in DESIGNS:
                raise RuntimeError(f"no planner request for the design {name!r}: add it to DESIGNS")
            out.append({**base, "k": 2, "design": json.dumps(DESIGNS[name])})
    return out


class Smoke:
    """The steps, in order (:meth:`all`), against one server; every failure is added to ``failures``."""

    def __init__(self, server: Server, deniable_bin: Path, db: Path, workdir: Path):
        self.started = time.monotonic()
        from deniable.server.survey.recipes import RECIPE_PLATFORMS
        from deniable.server.web.app import create_app

        self.server, self.deniable, self.db, self.workdir = server, deniable_bin, db, workdir
        self.failures: list[str] = []
        self.pages: dict[str, str] = {}  # path → every HTML page fetched
        self.demo, self.admin, self.anonymous = (Session(server.base, self.failures, self.pages) for _ in range(3))
        self.visited = {"auth.login", "auth.logout", "respond.submit", "dashboard.publish.set_budget",
                        "dashboard.publish.release", "dashboard.colleagues.invite", "dashboard.planner.plan_json"}
        self.queries = {**QUERIES, "dashboard.embedding.embed": [f"platform={p}" for p in RECIPE_PLATFORMS]}
        self.url_map = create_app({"DATABASE": str(workdir / "routes.db"), "SECRET_KEY": "routes only"}).url_map
        self.adapter = self.url_map.bind("127.0.0.1")

    def all(self) -> None:
        email, password = self.server.demo_login()
        self.progress("the server answers")
        admin_password = self.surveys_and_admin(email)
        self.progress("the survey of every type imported, with responses; an admin")
        self.demo.login(email, password)
        self.admin.login(ADMIN, admin_password)
        self.respond_and_publish()
        self.progress("logged in, submitted, published")
        later = self.routes()
        self.invitation()
        self.progress("every route without other parameters")
        self.planner()
        self.progress("the planner of every type and design")
        self.linked(later)
        self.progress("the routes the pages link to")
        self.exports()
        self.progress("deniable export")
        for session in (self.demo, self.admin):
            session.post_form("/auth/logout", {}, "/dashboard/")

    @property
    def requests(self) -> int:
        return self.demo.requests + self.admin.requests + self.anonymous.requests

    def progress(self, done: str) -> None:
        print(f"  {time.monotonic() - self.started:5.1f} s  {done}", flush=True)

    def run(self, *args) -> subprocess.CompletedProcess:
        """``deniable ARGS`` in the work folder."""
        return subprocess.run([str(self.deniable), *map(str, args)], cwd=self.workdir, capture_output=True,
                              text=True, timeout=300, stdin=subprocess.DEVNULL)

    def surveys_and_admin(self, owner: str) -> str:
        """The survey of every type, open, with responses; an admin account (its password returned)."""
        (self.workdir / "types.json").write_text(json.dumps(types_survey()), encoding="utf-8")
        result = self.run("import", "types.json", "--db", self.db, "--open", "--owner", owner)
        if result.returncode:
            raise RuntimeError(f"deniable import types.json: exit {result.returncode}: {result.stderr.strip()}")
        store_responses(self.db)
        password = secrets.token_urlsafe(16)
        result = self.run("create-researcher", ADMIN, "--admin", "--password", password, "--db", self.db)
        if result.returncode:
            raise RuntimeError(f"deniable create-researcher --admin: exit {result.returncode}: {result.stderr.strip()}")
        return password

    def respond_and_publish(self) -> None:
        """Responses through the JSON API and the survey page's form; a release of each survey (its public page)."""
        for _ in range(3):
            status, _, body = self.anonymous.request("/api/v1/surveys/demo/responses", method="POST",
                                                     data=json.dumps({"reports": DEMO_REPORTS}).encode(),
                                                     headers={"Content-Type": "application/json"})
            self.anonymous.check("POST /api/v1/surveys/demo/responses", status, 201, body)
        self.anonymous.post_form("/s/demo", {k: str(v) for k, v in DEMO_REPORTS.items()}, "/s/demo", expected=303)
        for slug in SLUGS:
            page = f"/dashboard/{slug}/publish"
            self.demo.post_form(f"{page}/budget", {"budget": "2"}, page, expected=303)
            self.demo.post_form(f"{page}/release", RELEASES[slug], page, expected=303)

    def routes(self) -> list:
        """Request every GET route whose parameters are the slug and ``<any(…)>`` choices; return the others."""
        later = []
        for rule in sorted((r for r in self.url_map.iter_rules() if "GET" in r.methods), key=lambda r: r.rule):
            if rule.endpoint in SKIPPED or rule.endpoint in self.visited:
                continue
            choices = {name: getattr(rule._converters[name], "items", None) for name in set(rule.arguments) - {"slug"}}
            if any(items is None for items in choices.values()):
                later.append(rule)  # its values come from the pages' links
                continue
            values = [{"slug": slug} for slug in SLUGS] if "slug" in rule.arguments else [{}]
            for name, items in choices.items():
                values = [{**v, name: item} for v in values for item in sorted(items)]
            session = self.admin if rule.endpoint in ADMIN_ONLY else self.demo
            for value in values:
                path = self.adapter.build(rule.endpoint, value)
                for query in self.queries.get(rule.endpoint, [""]):
                    session.get(path + (f"?{query}" if query else ""), EXPECTED.get(rule.endpoint, 200))
            self.visited.add(rule.endpoint)
        return later

    def invitation(self) -> None:
        """An admin invites a colleague; the link works."""
        _, _, page = self.admin.post_form("/dashboard/colleagues/invite", {"email": "colleague@smoke.invalid"},
                                          "/dashboard/colleagues/", expected=200)
        link = re.search(r"/auth/join/[\w.~-]+", page)
        if link:
            self.anonymous.get(link.group(0))
            self.visited.add("join.join")

    def planner(self) -> None:
        """The builder's planner: every type, directly, at ε, with every design it offers."""
        for query in plan_requests():
            path = "/dashboard/plan.json?" + urllib.parse.urlencode(query)
            status, headers, body = self.demo.request(path, headers={"Accept": "application/json"})
            shown = f"GET {urllib.parse.unquote_plus(path)}"
            if self.demo.check(shown, status, 200, body) and "json" not in headers.get("Content-Type", ""):
                self.failures.append(f"{shown}: {headers.get('Content-Type')}, not JSON")

    def linked(self, later: list) -> None:
        """The routes with other parameters, through every link the pages give, and the modules each browser
        module imports (as the browser fetches them); each of them must have been requested."""
        wanted = {r.endpoint for r in later} - self.visited
        queue = [link for page in list(self.pages.values()) for link in links(page, self.server.base)]
        seen: set[str] = set()
        while queue:
            link = queue.pop(0)
            if link in seen:
                continue
            seen.add(link)
            path = urllib.parse.urlsplit(link).path
            try:
                endpoint, _ = self.adapter.match(path, method="GET")
            except Exception:  # noqa: BLE001 (werkzeug's NotFound or MethodNotAllowed: a POST action, another page)
                continue
            if endpoint in wanted:
                body = self.demo.get(link, EXPECTED.get(endpoint, 200))
                self.visited.add(endpoint)
                if path.endswith((".js", ".mjs")):
                    queue += [urllib.parse.urljoin(path, module) for module in JS_IMPORT.findall(body)]
        for endpoint in sorted(wanted - self.visited):
            self.failures.append(f"{endpoint}: no page links to it, so it was not requested (give "
                                 "smoke_installed.py a way to it, or put it in SKIPPED with a reason)")

    def exports(self) -> None:
        """``deniable export`` of each survey: CSV, then Parquet with SPSS and Stata files."""
        for slug in SLUGS:
            out = self.workdir / f"export-{slug}"
            for extra in ([], ["--format", "parquet", "--spss", "--stata"]):
                result = self.run("export", slug, "--db", self.db, "-o", out, *extra)
                if result.returncode:
                    self.failures.append(f"deniable export {slug} {' '.join(extra)}: exit {result.returncode}: "
                                         f"{(result.stderr or result.stdout).strip()[-500:]}")
            made = {p.name for p in out.glob("*") if p.stat().st_size} if out.exists() else set()
            want = {f"{slug}-responses.{ext}" for ext in ("csv", "parquet", "sav", "dta")} | {f"{slug}-codebook.json"}
            if not want <= made:
                self.failures.append(f"deniable export {slug}: wrote {sorted(made)}, missing {sorted(want - made)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workdir", type=Path, required=True, help="A fresh folder for the database and exports.")
    parser.add_argument("--verbose", action="store_true", help="Print every request with its status.")
    args = parser.parse_args()
    global VERBOSE
    VERBOSE = args.verbose
    workdir = args.workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    deniable_bin = Path(sys.executable).parent / "deniable"
    where = Path(deniable.__file__).resolve().parent
    if "site-packages" not in where.parts or not deniable_bin.exists():
        print(f"smoke_installed.py: deniable comes from {where}, not from an installed wheel "
              f"(or {deniable_bin} is missing)", file=sys.stderr)
        return 1
    print(f"deniable from {where}")
    started = time.monotonic()
    failures: list[str] = []
    server = Server(deniable_bin, workdir / "smoke.db", workdir)
    try:
        smoke = Smoke(server, deniable_bin, workdir / "smoke.db", workdir)
        failures = smoke.failures
        smoke.all()
        print(f"{smoke.requests} requests to {len(smoke.visited)} endpoints, exports of {len(SLUGS)} surveys: "
              f"{time.monotonic() - started:.1f} s")
    except Exception as exc:  # noqa: BLE001 (reported with the server's output below)
        failures.append(f"{type(exc).__name__}: {exc}")
    finally:
        server.stop()
    if failures:
        print(f"\nFAILED: {len(failures)} problem(s) with the installed package:", file=sys.stderr)
        for failure in failures:
            print(f"  - {failure}", file=sys.stderr)
        print("\n" + server.output(), file=sys.stderr)
        return 1
    print("smoke test of the installed package: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
