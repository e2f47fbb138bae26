"""No import cycle among the modules of ``deniable.server.store`` — counting the imports inside
functions too, which only hide a cycle until the function runs (m007 importing ``aggregates`` made
db → schema → aggregates → surveys → db).  Read from the syntax tree, nothing imported."""

from __future__ import annotations

import ast
from pathlib import Path

STORE = Path(__file__).parents[2] / "server" / "store"
PACKAGE = "deniable.server.store"


def store_imports(source: str, modules: set[str]) -> set[str]:
    """The modules of the store (among ``modules``) that ``source``, a module of the store, imports anywhere."""
    out = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = (f"{PACKAGE}.{node.module}" if node.module else PACKAGE) if node.level == 1 else node.module or ""
            names = [base] + [f"{base}.{a.name}" for a in node.names]
        else:
            continue
        for name in names:
            if name.startswith(PACKAGE + "."):
                first = name[len(PACKAGE) + 1:].split(".")[0]
                if first in modules:
                    out.add(first)
    return out


def import_graph(sources: dict[str, str]) -> dict[str, set[str]]:
    return {name: store_imports(source, set(sources)) - {name} for name, source in sources.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One cycle of ``graph`` as a path that starts and ends at the same module, or []."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return []


def test_the_graph_finds_a_cycle_through_an_import_in_a_function():
    sources = {"db": "from .schema import migrations\n",
               "schema": "def m007(db):\n    from .aggregates import encode\n",
               "aggregates": "from .surveys import StoredSurvey\nimport numpy\n",
               "surveys": "from deniable.server.store.db import write_transaction\nfrom deniable.server.survey import x\n"}
    assert import_graph(sources) == {"db": {"schema"}, "schema": {"aggregates"}, "aggregates": {"surveys"},
                                     "surveys": {"db"}}
    assert find_cycle(import_graph(sources)) == ["aggregates", "surveys", "db", "schema", "aggregates"]
    sources["schema"] = "import json\nimport sqlite_utils\n"
    assert find_cycle(import_graph(sources)) == []
    assert store_imports("from . import aggregates, invitations\n", {"aggregates", "invitations", "db"}) == \
        {"aggregates", "invitations"}


def test_the_store_has_no_import_cycle():
    sources = {p.stem: p.read_text(encoding="utf-8") for p in STORE.glob("*.py") if p.stem != "__init__"}
    graph = import_graph(sources)
    assert graph["responses"] >= {"db", "aggregates"}  # the graph is read (not empty)
    assert find_cycle(graph) == []
