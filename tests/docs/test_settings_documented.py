"""Every setting the code reads is documented in docs/running.md, as Datasette's tests hold its
settings to its docs: a new setting without a line there fails here.

The settings are taken from the code, not from a list kept by hand:

- every ``DENIABLE_…`` name written in a string anywhere in the package's code (``os.environ.get``,
  click's ``envvar=``, messages), read from the syntax trees of client/, estimators/, server/ and deniable/;
- every key of the app's configuration that the code reads, writes or defaults, from the same trees:
  ``config["KEY"]``, ``config.get("KEY")``, ``config.setdefault("KEY", …)`` (on ``app.config``,
  ``current_app.config``, ``self.app.config`` or a name ``config``), the keywords of
  ``config.from_mapping(…)``, and the keys of a ``DEFAULTS`` dict (server/web/ratelimit.py hands its
  own to ``config.setdefault``).  ``create_app`` reads ``DENIABLE_KEY`` from the environment for each;
- every key of a real app's configuration (``create_app``) that neither Flask nor its extensions
  (Flask-WTF's ``WTF_…``, Flask-Babel's ``BABEL_…``) define.

A setting is documented when docs/running.md names it in backticks, as ``DENIABLE_KEY`` or (for one
that only ``instance/config.py`` can give) as ``KEY``.  :data:`NOT_SETTINGS` lists the few keys the
code sets or reads for Flask's own machinery, each with its reason; they must still be in the code.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from flask import Flask

ROOT = Path(__file__).resolve().parents[2]
CODE = ("client", "estimators", "server", "deniable")
RUNNING = ROOT / "docs" / "running.md"
EXTENSIONS = ("WTF_", "BABEL_")  # the settings Flask-WTF and Flask-Babel add to every app they bind
ENV = re.compile(r"\bDENIABLE_[A-Z][A-Z0-9_]*")

# Keys deniable sets or reads for Flask's own machinery: not knobs of deniable's, and why.
NOT_SETTINGS = {
    "SESSION_COOKIE_HTTPONLY": "Flask's own, fixed to true by create_app (running.md says so in words)",
    "SESSION_COOKIE_SAMESITE": "Flask's own, fixed to Lax by create_app (running.md says so in words)",
    "WTF_CSRF_TIME_LIMIT": "Flask-WTF's own, fixed by create_app: the token lives as long as the session",
    "BABEL_TRANSLATION_DIRECTORIES": "Flask-Babel's own, pointed at the catalogs shipped in the package",
    "PROPAGATE_EXCEPTIONS": "Flask's own, read so that the submission route fails as Flask would",
}


def _is_config(node: ast.AST) -> bool:
    """``config`` or ``….config`` (app.config, current_app.config, self.app.config)."""
    return (isinstance(node, ast.Name) and node.id == "config") or \
        (isinstance(node, ast.Attribute) and node.attr == "config")


def settings_in(source: str) -> tuple[set[str], set[str]]:
    """``(environment variables, configuration keys)`` that ``source`` names, as the module docstring says."""
    env, keys = set(), set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            env.update(ENV.findall(node.value))
        elif isinstance(node, ast.Subscript) and _is_config(node.value) and isinstance(node.slice, ast.Constant):
            keys.add(node.slice.value)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _is_config(node.func.value):
            if node.func.attr in ("get", "setdefault", "pop") and node.args and isinstance(node.args[0], ast.Constant):
                keys.add(node.args[0].value)
            elif node.func.attr == "from_mapping":
                keys.update(k.arg for k in node.keywords if k.arg)
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict) and \
                any(isinstance(t, ast.Name) and t.id == "DEFAULTS" for t in node.targets):
            keys.update(k.value for k in node.value.keys if isinstance(k, ast.Constant))
    return env, {k for k in keys if isinstance(k, str)}


def code_settings() -> tuple[set[str], set[str]]:
    env, keys = set(), set()
    for top in CODE:
        for path in sorted((ROOT / top).rglob("*.py")):
            if "__pycache__" not in path.parts:
                found = settings_in(path.read_text(encoding="utf-8"))
                env |= found[0]
                keys |= found[1]
    return env, keys


def app_settings(app) -> set[str]:
    """The keys of a real app's configuration that are deniable's, not Flask's or an extension's."""
    return {k for k in app.config if k not in Flask.default_config and not k.startswith(EXTENSIONS)}


def test_the_scan_finds_each_way_of_naming_a_setting():
    env, keys = settings_in('''
import os
DEFAULTS = {"RATELIMIT_NEW": "1 per day"}
day = os.environ.get("DENIABLE_NEW_DAY")
option = click.option("--n", envvar="DENIABLE_NEW_N")
app.config.from_mapping(NEW_MAPPED=1)
a = current_app.config["NEW_READ"]
b = self.app.config.get("NEW_GOT", 3)
app.config.setdefault("NEW_DEFAULTED", 2)
config["NEW_WRITTEN"] = 4
other["NOT_CONFIG"] = 5
''')
    assert env == {"DENIABLE_NEW_DAY", "DENIABLE_NEW_N"}
    assert keys == {"RATELIMIT_NEW", "NEW_MAPPED", "NEW_READ", "NEW_GOT", "NEW_DEFAULTED", "NEW_WRITTEN"}


def test_the_code_s_settings_are_found():
    """A scan that finds nothing would pass anything."""
    env, keys = code_settings()
    assert {"DENIABLE_TODAY", "DENIABLE_TRUSTED_HOSTS"} <= env
    assert {"DATABASE", "SECRET_KEY", "RATELIMIT_SUBMIT", "SCRUB_SECONDS", "SESSION_IDLE_MINUTES"} <= keys


def test_every_setting_is_documented_in_running_md(app):
    text = RUNNING.read_text(encoding="utf-8")
    env, keys = code_settings()
    keys |= app_settings(app)
    missing = sorted(name for name in env if f"`{name}`" not in text)
    missing += sorted(f"DENIABLE_{key}" for key in keys - set(NOT_SETTINGS)
                      if f"`DENIABLE_{key}`" not in text and f"`{key}`" not in text and f"DENIABLE_{key}" not in missing)
    assert not missing, f"settings the code reads that docs/running.md does not name: {', '.join(missing)}"


def test_the_settings_left_out_are_still_in_the_code(app):
    """A stale entry would let a new setting of the same name go undocumented."""
    _, keys = code_settings()
    assert set(NOT_SETTINGS) <= keys | set(app.config)
