"""No module outside the question-type modules names a question type (issue "Question types designed in").

Every surface reaches what differs between types through ``question.qtype``
(:mod:`deniable.server.survey.questions`); a module that compares type names, keys a dict by them
or asks ``is_choice`` brings back the seams that broke each new type on some surface.  Checked:
the server's Python modules (by their syntax tree: string constants that are a type's name, in
code, not in docstrings), the Jinja templates and the browser's JavaScript (by pattern).  The
type modules themselves — ``server/survey/questions/`` and ``client/static/types/`` — are exempt.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
TYPE_NAMES = {"choice", "numeric", "multi", "list"}
TYPE_MODULES = [ROOT / "server" / "survey" / "questions", ROOT / "client" / "static" / "types",
                ROOT / "client" / "static" / "embed" / "types"]  # the embed's own type modules


def _exempt(path: Path) -> bool:
    return any(module in path.parents for module in TYPE_MODULES)


def _python_files():
    return sorted(p for p in (ROOT / "server").rglob("*.py") if not _exempt(p))


def _docstrings(tree) -> set[int]:
    """ids of the Constant nodes that are docstrings."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


MIGRATION_RE = re.compile(r"m[0-9]{2,}_")


def _migrations(tree) -> set[int]:
    """ids of every node inside a migration (``m10_question_types``): migrations are frozen history,
    written once with the names of their day; they must not change when the type modules do."""
    return {id(inner) for node in ast.walk(tree) if isinstance(node, ast.FunctionDef) and MIGRATION_RE.match(node.name)
            for inner in ast.walk(node)}


def python_offences(source: str) -> list[str]:
    """Where a module names a question type: a string constant equal to a type's name (outside
    docstrings, f-string text and migrations), or ``is_choice``."""
    tree = ast.parse(source)
    docstrings = _docstrings(tree) | _migrations(tree)
    joined = {id(v) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for v in node.values}
    out = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in TYPE_NAMES
                and id(node) not in docstrings and id(node) not in joined):
            out.append(f"line {node.lineno}: {node.value!r}")
        if isinstance(node, ast.Attribute) and node.attr == "is_choice":
            out.append(f"line {node.lineno}: .is_choice")
    return out


TEMPLATE_RE = re.compile(r"""is_choice|[!=]=\s*["'](?:choice|numeric|multi|list)["']|["'](?:choice|numeric|multi|list)["']\s*[!=]=""")
JS_RE = re.compile(r"""(?:[!=]==?\s*|case\s+)["'](?:choice|numeric|multi|list)["']|["'](?:choice|numeric|multi|list)["']\s*[!=]==?""")


def pattern_offences(text: str, pattern: re.Pattern) -> list[str]:
    return [f"line {text.count(chr(10), 0, m.start()) + 1}: {m.group(0)!r}" for m in pattern.finditer(text)]


def test_the_checks_find_what_they_look_for():
    """The checks themselves: each catches the kind of branch it is for, and spares docstrings."""
    assert python_offences('def f(q):\n    """A "numeric" question."""\n    return q.type == "numeric"\n') == \
        ["line 3: 'numeric'"]
    assert python_offences('X = {"multi": 1}\n') and python_offences("ok = q.is_choice\n")
    assert python_offences('def f(q):\n    return f"list of {q.id}"\n') == []
    assert python_offences('def m030_types(db):\n    db.add("type", default="choice")\n') == []
    assert pattern_offences('{% if q.type == "list" %}', TEMPLATE_RE)
    assert pattern_offences('{% if f.type == "BooleanField" %}', TEMPLATE_RE) == []
    assert pattern_offences('if (el.dataset.type === "numeric") {', JS_RE)
    assert pattern_offences('switch (t) { case "multi": }', JS_RE)


@pytest.mark.parametrize("path", _python_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_python_module_names_a_question_type(path):
    assert python_offences(path.read_text(encoding="utf-8")) == []


def _template_files():
    return sorted((ROOT / "templates").rglob("*.html"))


@pytest.mark.parametrize("path", _template_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_template_names_a_question_type(path):
    assert pattern_offences(path.read_text(encoding="utf-8"), TEMPLATE_RE) == []


def _js_files():
    files = [*(ROOT / "client" / "static").rglob("*.js"), *(ROOT / "server").rglob("*.js")]
    return sorted(p for p in files if not _exempt(p))


@pytest.mark.parametrize("path", _js_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_script_names_a_question_type(path):
    assert pattern_offences(path.read_text(encoding="utf-8"), JS_RE) == []
