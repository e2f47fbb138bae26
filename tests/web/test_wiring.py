"""How the web app is wired: one login hook guards every route that is not public on purpose, and
the modules of ``deniable.server.web`` import each other without a cycle."""

from __future__ import annotations

import ast
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from werkzeug.routing import Map, Rule
from werkzeug.routing.converters import AnyConverter

from deniable.server.store.surveys import get_survey
from deniable.server.web.app import LazyRule
from support.dashboard import csrf_token, make_survey, open_db

WEB = Path(__file__).resolve().parents[2] / "server" / "web"

# Everything anyone may ask for without logging in, and why; every other rule must refuse.
PUBLIC = {
    "home": "the bare address: a redirect to the dashboard, which asks for a login",
    "static": "the respondents' browser files",
    "dashboard.static": "the dashboard's stylesheet, which the login page uses too",
    "auth.login": "the login page",
    "auth.logout": "logging out: without a session it ends nothing",
    "join.join": "an invitation link: the link is the credential (it answers 404 unless it works)",
    "respond.survey": "a survey's page",
    "respond.submit": "answering it",
    "respond.thanks": "the thank-you page",
    "respond.favicon": "the icon",
    "api.survey": "a published design, for a client that randomizes",
    "api.submit": "sending a response through the JSON API (answered in front of Flask, by submit_route)",
    "public.results": "a survey's released results",
    "public.chart": "a chart of a survey's released results, as an SVG file",
    "embed.module": "the embeddable randomizer (ES module), for surveys on other platforms",
    "embed.script": "the embeddable randomizer (classic script), for surveys on other platforms",
}


def _path_values(rule) -> dict:
    """A real value of each of the rule's arguments: the open survey's slug, an export's first name."""
    values = {}
    for name in rule.arguments:
        converter = rule._converters[name]
        if name == "slug":
            values[name] = "habits"
        elif name == "version":  # the embed's content hash
            values[name] = "0123456789abcdef"
        elif name == "position":  # a chart's question on the results page
            values[name] = 0
        elif name == "qid":  # a question of the public page's chart
            values[name] = "drugs"
        elif name == "token":  # an invitation link's
            values[name] = "not-a-token"
        elif name == "language":  # a translation's
            values[name] = "fr"
        elif isinstance(converter, AnyConverter):
            values[name] = sorted(converter.items)[0]
        else:
            raise AssertionError(f"{rule.rule}: give {name!r} a real value in this test")
    return values


def test_every_route_that_is_not_public_refuses_a_logged_out_request(app):
    """GET and POST (whichever the rule takes) to every rule of the app, logged out, with a valid CSRF
    token: the login page (the API: a JSON 401), and nothing changes.  A route added without the
    dashboard's hook (a blueprint outside its parent, a hook removed) fails here."""
    make_survey(app, status="open")
    client = app.test_client()
    token = csrf_token(client)  # so that the login check itself is what refuses a POST
    adapter = app.url_map.bind("localhost")
    checked, problems = set(), []
    for rule in app.url_map.iter_rules():
        if rule.endpoint in PUBLIC:
            continue
        for method in sorted(rule.methods & {"GET", "POST"}):
            path = adapter.build(rule.endpoint, _path_values(rule), method=method)
            response = client.open(path, method=method, data={"csrf_token": token} if method == "POST" else None)
            checked.add(rule.endpoint)
            if path.startswith("/api/"):
                if response.status_code != 401 or response.get_json() != {"error": "login required", "field": None}:
                    problems.append(f"{method} {path} ({rule.endpoint}): {response.status_code}, not the JSON 401")
                continue
            location = urlsplit(response.headers.get("Location", ""))
            if response.status_code != 302 or location.path != "/auth/login" or \
                    parse_qs(location.query).get("next") != [path]:
                problems.append(f"{method} {path} ({rule.endpoint}): {response.status_code} "
                                f"{response.headers.get('Location')}, not the login page")
    assert not problems, "\n".join(problems)
    dashboard = {rule.endpoint for rule in app.url_map.iter_rules()
                 if rule.rule.startswith("/dashboard") and rule.endpoint != "dashboard.static"}
    assert dashboard and dashboard <= checked
    assert "dashboard.api.estimates" in checked
    db = open_db(app)
    try:  # nothing was created, changed or deleted
        assert get_survey(db, "habits").status == "open"
        assert db.execute("SELECT count(*) FROM surveys").fetchone()[0] == 1
        assert db.execute("SELECT count(*) FROM release_budgets").fetchone()[0] == 0
    finally:
        db.conn.close()


def test_public_endpoints_are_still_in_the_app(app):
    """A stale entry in PUBLIC would let a new route of the same name through unchecked."""
    assert set(PUBLIC) <= {rule.endpoint for rule in app.url_map.iter_rules()}


# ---------------------------------------------------------------- imports


def module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(["deniable.server.web", *(parts[:-1] if parts[-1] == "__init__" else parts)])


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module → the ``deniable.server.web`` modules it imports, at the top or inside a function.

    ``from .dashboard import charts`` also runs ``dashboard/__init__.py``: an edge to every package on
    the way, but for the importing module's own packages (already running when it is imported)."""
    files = {module_name(p, root): p for p in root.rglob("*.py") if "__pycache__" not in p.parts}
    graph = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        own = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 2)}
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                candidates = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1]) if node.level else ""
                module = ".".join(part for part in (base, node.module or "") if part)
                candidates = [module, *(f"{module}.{alias.name}" for alias in node.names)]
            else:
                continue
            for candidate in candidates:
                parts = candidate.split(".")
                targets |= {".".join(parts[:i]) for i in range(1, len(parts) + 1)} & set(files)
        graph[name] = targets - own
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each strongly connected group of modules (Tarjan's algorithm)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1 or node in graph.get(node, ()):
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_web_modules_import_each_other_without_a_cycle():
    graph = import_graph(WEB)
    assert "deniable.server.web.extensions" in graph["deniable.server.web.respondent.api"]  # the graph sees imports
    assert "deniable.server.web.dashboard.views" in graph["deniable.server.web.app"]  # …inside a function too
    assert not cycles(graph), cycles(graph)


def test_no_module_imports_the_app_factory():
    """Extensions come from .extensions, paths from .paths: the factory imports the blueprints, never
    the other way round (the cycle Flask's tutorial avoids)."""
    importers = sorted(name for name, targets in import_graph(WEB).items() if "deniable.server.web.app" in targets)
    assert importers == []


def test_a_cycle_is_found():
    """The check itself: a cycle of two modules and one of a module with itself are found, a chain is not."""
    assert cycles({"a": {"b"}, "b": {"a"}, "c": set()}) == [["a", "b"]]
    assert cycles({"a": {"a"}}) == [["a"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_every_rule_builds_the_url_werkzeug_itself_builds(app):
    """The app's rules compile their URL builders on first use (``app.LazyRule``): each builds, the first
    time and again, what werkzeug's own rule builds, with and without extra query arguments."""
    rules = list(app.url_map.iter_rules())
    assert all(isinstance(rule, LazyRule) for rule in rules if rule.endpoint != "static")
    plain = Map([Rule(rule.rule, endpoint=rule.endpoint, methods=rule.methods) for rule in rules]).bind("localhost")
    ours = app.url_map.bind("localhost")
    for rule in rules:
        values = {"filename": "a b/c.css"} if "filename" in rule.arguments else _path_values(rule)
        method = sorted(rule.methods - {"HEAD", "OPTIONS"})[0]
        for extra, unknown in (({}, True), ({"next": "/x?y=1", "n": 2}, True), ({"n": 2}, False), ({}, True)):
            args = (rule.endpoint, {**values, **extra})
            assert ours.build(*args, method=method, append_unknown=unknown) == \
                plain.build(*args, method=method, append_unknown=unknown)
